/**
 * The decision between promptfoo results columns (`rankgate compare --results`): significance of each
 * column against the first (the baseline), over per-query metric vectors re-scored from
 * the results (src/results/read.ts), with compareVectors/holm from src/metrics, plus the blind-test shipping
 * criteria for each candidate column. Metrics: the rank measures (recall_at_1/3/5/10, trec_recall_at_10, mrr,
 * ndcg_at_10, precision_at_5, ap_at_10, found; over queries with a relevant reference) and routing_ok
 * (over every query). Renderings of a comparison: src/report/compare.ts; the command: src/cli/compare.ts.
 */
import { UserError } from '../errors.ts';
import { CompareInputError, compareVectors, type CompareVectorsResult, type NamedVector } from '../metrics/index.ts';
import { crossValidatedSelection, type SelectionResult } from '../metrics/selection.ts';
import type { ParsedResults } from '../results/read.ts';
import { RANK_KEYS } from '../results/score.ts';
import { shippingCriteria, type ShippingVerdict } from './shipping.ts';
import type { LoadedReview } from '../review/evidence.ts';

export const RESULT_METRICS = [...RANK_KEYS, 'routing_ok'] as const;

export interface ResultsComparison {
  metric: string;
  significance: CompareVectorsResult;
  shipping: ShippingVerdict[];
  /** Cross-validated pick-the-best estimate over the same per-query vectors (src/metrics/selection.ts). */
  selection: SelectionResult | null;
}

/** Per-query vectors of one metric per column (rank measures over queries with a relevant reference, routing_ok over checked queries; errored queries left out). */
export function metricVectors(parsed: ParsedResults, metric: string): NamedVector[] {
  return parsed.columns.map((c) => {
    const perQuery = new Map<string, number>();
    for (const q of c.queries) {
      // an errored query measured nothing: left out of every comparison (never a drop to 0)
      if (q.error !== null) continue;
      if (metric === 'routing_ok') {
        if (q.routing) perQuery.set(q.id, q.routing.ok ? 1 : 0);
      } else if (q.retrieval) {
        const v = q.retrieval[metric as (typeof RANK_KEYS)[number]];
        if (typeof v === 'number') perQuery.set(q.id, v); // a committed baseline may not store every measure
      }
    }
    return { name: c.label, perQuery };
  });
}

/**
 * "Pick the best column", cross-validated: choose on k-1 folds of queries, score on the held-out fold (queries every
 * column measured). null when there are fewer than two columns or queries.
 */
export function selectionEstimate(vectors: NamedVector[], opts: { seed?: number; folds?: number; repeats?: number } = {}): SelectionResult | null {
  if (vectors.length < 2) return null;
  const ids = [...vectors[0]!.perQuery.keys()].filter((id) => vectors.every((v) => v.perQuery.has(id))).sort();
  if (ids.length < 2) return null;
  return crossValidatedSelection({ names: vectors.map((v) => v.name), values: vectors.map((v) => ids.map((id) => v.perQuery.get(id)!)) }, opts);
}

export function compareResultColumns(parsed: ParsedResults, metric = 'ndcg_at_10', opts: { seed?: number; folds?: number; repeats?: number; reviews?: readonly LoadedReview[]; resultsPath?: string } = {}): ResultsComparison {
  if (!(RESULT_METRICS as readonly string[]).includes(metric)) {
    throw new UserError(`-m: unknown results metric '${metric}'; one of ${RESULT_METRICS.join(', ')}`);
  }
  if (parsed.columns.length < 2) throw new UserError(`the results have ${parsed.columns.length} column(s); compare needs at least two (a sweep)`);
  const vectors = metricVectors(parsed, metric);
  const seed = opts.seed ?? 42;
  let significance: CompareVectorsResult;
  try {
    significance = compareVectors(vectors, { missing: 'intersect', randomization: { seed }, bootstrap: { seed } });
  } catch (e) {
    if (e instanceof CompareInputError) throw new UserError(e.message);
    throw e;
  }
  const base = parsed.columns[0]!;
  return { metric, significance, shipping: parsed.columns.slice(1).map((c) => shippingCriteria(base, c, { reviews: opts.reviews ?? [], resultsPath: opts.resultsPath })), selection: selectionEstimate(vectors, { seed, ...(opts.folds ? { folds: opts.folds } : {}), ...(opts.repeats ? { repeats: opts.repeats } : {}) }) };
}
