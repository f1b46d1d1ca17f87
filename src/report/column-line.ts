/**
 * A column's summary for a terminal, one line and its failure buckets: what the afterAll hook prints for every column
 * of an eval (assertions/gate.ts) and `rankgate gate` prints for the gated one. Renderings only (the numbers are
 * src/results/summary.ts's, over the measured queries). Pure.
 *
 *   [hybrid + tei@50] 12 queries, 3 errored (left out) · Success@3 0.8889 · MRR@10 0.7407 · routing 1.0000 ·
 *     p95 263.0 ms over 9 measured queries; 3 errored left out · rerank budget 50: first-stage Success@budget 1.0000,
 *     gain nDCG@10 -0.0213, stage p95 0.3 ms (cache: 9 of 9), cost – (uncached cost n/a …) · judge: off
 *     failure buckets: rank-1 hit 6, top-10 ordering gap 2, reranker-ordering miss 1
 */
import { measuredNote, rerankCacheNote, rerankUncachedNote, type Des058Report, type RerankReport } from '../results/summary.ts';
import { bucketLabel } from '../results/types.ts';

const n4 = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : x.toFixed(4));

/** "12 queries" or "12 queries, 3 errored (left out of every figure)". */
export function queriesPart(report: Des058Report): string {
  return `${report.total_queries} queries${report.errors ? `, ${report.errors} errored (left out of every figure)` : ''}`;
}

/** "p95 263.0 ms" or "p95 263.0 ms over 9 measured queries; 3 errored left out". */
export function latencyPart(report: Des058Report): string {
  const p = report.latency_ms.p95;
  const over = measuredNote(report.measured_queries, report.errors);
  return `p95 ${p === null ? 'n/a' : `${p.toFixed(1)} ms`}${over ? ` ${over}` : ''}`;
}

/** " · rerank budget B: first-stage Success@budget X, gain nDCG@10 ±Y, stage p95 Z ms (cache: …), cost …" or ''. */
export function rerankPart(r: RerankReport | null | undefined): string {
  if (!r) return '';
  const g = r.rerank_gain_ndcg_at_10;
  const cache = rerankCacheNote(r);
  const uncached = rerankUncachedNote(r);
  const cost = r.cost_per_query_usd === null ? '–' : `$${r.cost_per_query_usd.toFixed(6)} per query`;
  return (
    ` · rerank${r.budget !== null ? ` budget ${r.budget}` : ''}: first-stage Success@budget ${n4(r.first_stage_recall_at_budget)}, gain nDCG@10 ${g === null ? 'n/a' : `${g >= 0 ? '+' : ''}${g.toFixed(4)}`}` +
    `, stage p95 ${r.latency_ms.p95 === null ? 'n/a' : `${r.latency_ms.p95} ms`}${cache ? ` (${cache})` : ''}, cost ${cost}${uncached ? ` (${cache}; ${uncached})` : ''}`
  );
}

/** "failure buckets: rank-1 hit 6, rerank-budget miss 2" (the buckets with a query), or null when none has one. */
export function bucketsPart(report: Des058Report): string | null {
  const used = Object.entries(report.failure_buckets).filter(([, n]) => n > 0);
  return used.length ? `failure buckets: ${used.map(([b, n]) => `${bucketLabel(b)} ${n}`).join(', ')}` : null;
}

/**
 * " · Judged@10 0.62, Judged@3 0.81" (ir_measures Judged@k: the share of the top k with a label), and for a column the
 * gate found well below its reference: " (LOWER BOUND: 31.0 pts below 'base'; condensed nDCG@10 0.6120, bpref 0.5800)"; ''
 * when the report has none (older results).
 */
export function judgedAtPart(report: Des058Report): string {
  const j = report.share_judged;
  if (!j || j.at_10 === null) return '';
  const g = report.judged_gap;
  return (
    ` · Judged@10 ${j.at_10.toFixed(2)}, Judged@3 ${j.at_3 === null ? 'n/a' : j.at_3.toFixed(2)}` +
    (g ? ` (LOWER BOUND: ${g.gap_pts.toFixed(1)} pts below '${g.reference}'; condensed nDCG@10 ${n4(report.metrics.condensed_ndcg_at_10)}, bpref ${n4(report.metrics.bpref)})` : '')
  );
}
