/** Reciprocal rank: recip_rank (trec_eval m_recip_rank.c) and our mrr_cut_k. */
import { cutoff, level, relFlags } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';

function rrAt(ranking: Ranking, judgments: Judgments, limit: number, opts?: MeasureOptions): number {
  const i = relFlags(ranking, judgments, level(opts), limit).indexOf(true);
  return i < 0 ? 0 : 1 / (i + 1);
}

/** recip_rank = 1 / rank of the first relevant document, over the whole ranking (no cutoff); 0 if none. Matches trec_eval `recip_rank`. */
export function recip_rank(ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  return rrAt(ranking, judgments, Infinity, opts);
}

/**
 * mrr_cut_k = 1 / rank of the first relevant document if it is within the top k, else 0 (MRR@k as
 * used by MS MARCO's official script and ranx `mrr@k`). Ours; trec_eval has no cutoff variant.
 */
export function mrr_cut_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  return rrAt(ranking, judgments, cutoff(k, 'mrr_cut_k'), opts);
}

// ---- trec_eval's per-query calculation over a ResRels (used by evaluate.ts) ----
import type { ResRels, TrecContext } from './resrels.ts';

/** recip_rank (m_recip_rank.c): 1 / rank of the first relevant retrieved doc, 0 if none. */
export function calcRecipRank(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  for (let i = 0; i < rr.numRet; i++) {
    if (rr.list[i]! >= ctx.relevanceLevel) {
      out[off] = 1 / (i + 1);
      return;
    }
  }
}
