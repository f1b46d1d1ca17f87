/**
 * `rankgate compare --results RESULTS.json [-m METRIC] [--json] [--markdown]`: significance of each
 * promptfoo results column against the first (the baseline), over per-query metric vectors re-scored from
 * the results (src/report/results.ts), with compareVectors/holm from src/metrics, plus the blind-test shipping
 * criteria for each candidate column. Metrics: the rank measures (recall_at_1/3/5/10, trec_recall_at_10, mrr,
 * ndcg_at_10, precision_at_5, ap_at_10, found; over queries with a relevant reference) and routing_ok
 * (over every query).
 */
import { UserError } from '../errors.ts';
import { CompareInputError, compareVectors, type CompareVectorsResult, type NamedVector } from '../metrics/index.ts';
import { crossValidatedSelection, type SelectionResult } from '../metrics/selection.ts';
import { shippingSection } from './markdown.ts';
import type { ParsedResults } from './results.ts';
import { RANK_KEYS } from './score.ts';
import { shippingCriteria, type ShippingVerdict } from './shipping.ts';

export const RESULT_METRICS = [...RANK_KEYS, 'routing_ok'] as const;

export interface ResultsComparison {
  metric: string;
  significance: CompareVectorsResult;
  shipping: ShippingVerdict[];
  /** Cross-validated pick-the-best estimate over the same per-query vectors (src/metrics/selection.ts). */
  selection: SelectionResult | null;
}

/** Per-query vectors of one metric per column (rank measures over queries with a relevant reference, routing_ok over checked queries). */
export function metricVectors(parsed: ParsedResults, metric: string): NamedVector[] {
  return parsed.columns.map((c) => {
    const perQuery = new Map<string, number>();
    for (const q of c.queries) {
      if (metric === 'routing_ok') {
        if (q.routing) perQuery.set(q.id, q.routing.ok ? 1 : 0);
      } else if (q.retrieval) perQuery.set(q.id, q.retrieval[metric as (typeof RANK_KEYS)[number]]);
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

const pctOf = (x: number) => `${(100 * x).toFixed(0)}%`;

/** The selection estimate in a few lines (text and Markdown alike). */
export function selectionLines(metric: string, s: SelectionResult): string[] {
  const top = s.wins.slice(0, 3).map((w) => `${w.name} ${pctOf(w.share)}`).join(', ');
  return [
    `Pick-the-best, cross-validated (${s.folds}-fold x ${s.repeats} seeded repeats, seed ${s.seed}, ${s.queries} queries, ${s.columns} columns), ${metric}:`,
    `  held-out mean of the column chosen on the other folds: ${s.heldOutMean.toFixed(4)} (sd over repeats ${s.heldOutSd.toFixed(4)})`,
    `  in-sample best: ${s.inSampleBest} ${s.inSampleMean.toFixed(4)} -> optimism of picking it on these queries: ${s.optimism >= 0 ? '+' : ''}${s.optimism.toFixed(4)}`,
    `  first column (baseline): ${s.baselineMean.toFixed(4)}; the in-sample best wins ${pctOf(s.stability)} of the folds; chosen: ${top}`,
  ];
}

export function compareResultColumns(parsed: ParsedResults, metric = 'ndcg_at_10', opts: { seed?: number; folds?: number; repeats?: number } = {}): ResultsComparison {
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
  return { metric, significance, shipping: parsed.columns.slice(1).map((c) => shippingCriteria(base, c)), selection: selectionEstimate(vectors, { seed, ...(opts.folds ? { folds: opts.folds } : {}), ...(opts.repeats ? { repeats: opts.repeats } : {}) }) };
}

const f4 = (x: number, signed = false) => (signed && x >= 0 ? '+' : '') + x.toFixed(4);

export function comparisonMarkdown(r: ResultsComparison): string {
  const s = r.significance;
  const lines = [
    `## ${r.metric}: each column against \`${s.baseline}\` (${s.queries.length} queries)`,
    '',
    '| column | mean | diff | 95% CI | p (t-test) | p (randomization) | p (Holm) | W/T/L |',
    '|---|---:|---:|---|---:|---:|---:|---|',
    `| ${s.baseline} (baseline) | ${f4(s.comparisons[0]?.baseline_mean ?? 0)} | | | | | | |`,
  ];
  for (const c of s.comparisons) {
    lines.push(
      `| ${c.run} | ${f4(c.mean)} | ${f4(c.diff, true)} | [${f4(c.ci_low, true)}, ${f4(c.ci_high, true)}] | ${f4(c.p_ttest)} | ${f4(c.p_randomization)} | ${f4(c.p_holm)} | ${c.wins}/${c.ties}/${c.losses} |`,
    );
  }
  if (r.selection) lines.push('', ...selectionLines(r.metric, r.selection).map((l, i) => (i === 0 ? `**${l}**` : `- ${l.trim()}`)));
  for (const v of r.shipping) lines.push('', shippingSection(v));
  return lines.join('\n') + '\n';
}

/** The `--results` mode of `rankgate compare` (src/cli/compare.ts passes its table formatter). */
export async function resultsCompare(
  file: string,
  opts: { metric?: string; seed?: number; folds?: number; repeats?: number; json?: boolean; markdown?: boolean; format: (measure: string, res: CompareVectorsResult) => string },
): Promise<number> {
  const { readResultsFile } = await import('./results.ts');
  const r = compareResultColumns(readResultsFile(file), opts.metric ?? 'ndcg_at_10', { seed: opts.seed, folds: opts.folds, repeats: opts.repeats });
  if (opts.json) {
    process.stdout.write(
      JSON.stringify(
        { measure: r.metric, queries: r.significance.queries.length, baseline: r.significance.baseline, comparisons: r.significance.comparisons, selection: r.selection, shipping: r.shipping },
        null,
        2,
      ) + '\n',
    );
  } else if (opts.markdown) {
    process.stdout.write(comparisonMarkdown(r));
  } else {
    process.stdout.write(opts.format(r.metric, r.significance));
    if (r.selection) process.stdout.write('\n' + selectionLines(r.metric, r.selection).join('\n') + '\n');
    for (const v of r.shipping) {
      process.stdout.write(`\nblind-test shipping criteria: ${v.candidate} vs ${v.baseline}: ship ${v.ship ? 'yes' : 'no'}\n`);
      for (const c of v.criteria) process.stdout.write(`  ${c.passed === null ? '-' : c.passed ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}\n`);
    }
  }
  return 0;
}
