/** Reciprocal rank: recip_rank (trec_eval m_recip_rank.c) and our mrr_cut_k. */
import { cutoff, one } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';
import type { ResRels, TrecContext } from './resrels.ts';

/** recip_rank = 1 / rank of the first relevant document, over the whole ranking (no cutoff); 0 if none. Matches trec_eval `recip_rank`. */
export function recip_rank(ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  return one(ranking, judgments, opts, (rr, c, o) => calcRecipRank(rr, c, o, 0));
}

/**
 * mrr_cut_k = 1 / rank of the first relevant document if it is within the top k, else 0 (MRR@k as
 * used by MS MARCO's official script and ranx `mrr@k`). Ours; trec_eval has no cutoff variant.
 */
export function mrr_cut_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  const kk = cutoff(k, 'mrr_cut_k');
  return one(ranking, judgments, opts, (rr, c, o) => calcMrrCut(rr, c, [kk], o, 0));
}

/** recip_rank (m_recip_rank.c): 1 / rank of the first relevant retrieved doc, 0 if none. */
export function calcRecipRank(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  for (let i = 0; i < rr.numRet; i++) {
    if (rr.list[i]! >= ctx.relevanceLevel) {
      out[off] = 1 / (i + 1);
      return;
    }
  }
}

/** mrr_cut_k (rankgate's, not trec_eval's): 1 / rank of the first relevant doc if within the top k, else 0. */
export function calcMrrCut(rr: ResRels, ctx: TrecContext, cutoffs: readonly number[], out: Float64Array, off: number): void {
  let first = 0;
  for (let i = 0; i < rr.numRet; i++) {
    if (rr.list[i]! >= ctx.relevanceLevel) {
      first = i + 1;
      break;
    }
  }
  cutoffs.forEach((k, c) => {
    out[off + c] = first && first <= k ? 1 / first : 0;
  });
}
