/** Cutoff-based binary measures: P_k, recall_k, success_k (trec_eval m_P.c, m_recall.c, m_success.c). */
import { countRel, cutoff, level, relFlags } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';

function relInTop(ranking: Ranking, judgments: Judgments, k: number, lvl: number): number {
  let n = 0;
  for (const r of relFlags(ranking, judgments, lvl, k)) if (r) n++;
  return n;
}

/**
 * P_k = |relevant in top k| / k. Always divides by k, even when fewer than k documents were
 * retrieved (the missing positions count as non-relevant). Matches trec_eval `P_k`.
 */
export function P_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  const kk = cutoff(k, 'P_k');
  return relInTop(ranking, judgments, kk, level(opts)) / kk;
}

/** recall_k = |relevant in top k| / R; 0 when R = 0. Matches trec_eval `recall_k`. */
export function recall_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  const kk = cutoff(k, 'recall_k');
  const lvl = level(opts);
  const R = countRel(judgments, lvl);
  return R === 0 ? 0 : relInTop(ranking, judgments, kk, lvl) / R;
}

/** success_k = 1 if any relevant document is in the top k, else 0. Matches trec_eval `success_k`. */
export function success_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  const kk = cutoff(k, 'success_k');
  return relInTop(ranking, judgments, kk, level(opts)) > 0 ? 1 : 0;
}

/**
 * judged_k = |top-k documents with a judgment (grade >= 0)| / k. Ours (trec_eval has no such name);
 * it equals trec_eval `P_k` computed with `-l 0`, i.e. a negative grade counts as unjudged as in
 * trec_eval, and positions past the end of a short ranking count as unjudged.
 */
export function judged_k(ranking: Ranking, judgments: Judgments, k?: number, _opts?: MeasureOptions): number {
  const kk = cutoff(k, 'judged_k');
  return relInTop(ranking, judgments, kk, 0) / kk;
}
