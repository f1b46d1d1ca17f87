/**
 * Judged@k, exactly as ir_measures defines it (terrierteam/ir_measures, measures/judged.py and
 * providers/judged_provider.py since its "Recalculate cutoff for Judged measure" fix, PR #48, December 2022):
 *
 *   Judged@k = |top-min(k, n) documents that have a judgment| / min(k, n)
 *
 * where n is the length of the (deduplicated) ranking and "has a judgment" means the document appears in the query's
 * judgments with ANY grade: 0 (judged non-relevant) and negative grades count (ir_measures tests `did in qid_qrels`).
 * A short ranking is divided by its own length, not by k ("the cutoff should be recalculated if it is less than the size
 * of the run"). A query without judgments, or with an empty ranking, has no value (ir_measures yields none for it):
 * NaN here, and callers leave such a query out of the mean and say how many they averaged over.
 *
 * Not trec_eval's measure: trec_eval has no Judged; rankgate's `judged_k` (src/metrics/precision.ts, `rankgate
 * trec-eval -m judged`) divides by k and counts a negative grade as unjudged, as trec_eval's P_k with -l 0 would.
 * Both names stay, each with its own definition (a variant gets its own name).
 */
import { cutoff, dedupe } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';

/** ir_measures `Judged@k` (definition above); NaN when the query has no judgments or the ranking is empty. */
export function Judged_k(ranking: Ranking, judgments: Judgments, k?: number, _opts?: MeasureOptions): number {
  const kk = cutoff(k, 'Judged_k');
  if (judgments.size === 0) return NaN;
  const top = dedupe(ranking).slice(0, kk);
  if (top.length === 0) return NaN;
  let judged = 0;
  for (const id of top) if (judgments.has(id)) judged++;
  return judged / top.length;
}
