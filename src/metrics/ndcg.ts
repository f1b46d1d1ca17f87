/**
 * nDCG family (Järvelin & Kekäläinen 2002). DCG = sum_i gain(d_i) / log2(i + 1) over 1-based rank i.
 * The ideal ranking is built from ALL judged documents of the query (retrieved or not), best grade
 * first. Negative grades and missing judgments give zero gain. Grades are used raw: the relevance
 * level (`-l`) does not apply, as in trec_eval. A query whose ideal DCG is 0 scores 0.
 */
import { cutoff, dedupe } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';

type Gain = (grade: number) => number;
const linear: Gain = (g) => (g > 0 ? g : 0);
const exponential: Gain = (g) => (g > 0 ? 2 ** g - 1 : 0);

function ndcgAt(ranking: Ranking, judgments: Judgments, limit: number, gain: Gain): number {
  const ideal: number[] = [];
  for (const g of judgments.values()) {
    const x = gain(g);
    if (x > 0) ideal.push(x);
  }
  ideal.sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(ideal.length, limit); i++) idcg += ideal[i]! / Math.log2(i + 2);
  if (idcg <= 0) return 0;
  const ids = dedupe(ranking);
  let dcg = 0;
  for (let i = 0; i < Math.min(ids.length, limit); i++) {
    const g = judgments.get(ids[i]!);
    if (g !== undefined) dcg += gain(g) / Math.log2(i + 2);
  }
  return dcg / idcg;
}

/** ndcg: linear gain (gain = grade), no cutoff, ideal over all judged documents. Matches trec_eval `ndcg` (default gains). */
export function ndcg(ranking: Ranking, judgments: Judgments, _k?: number, _opts?: MeasureOptions): number {
  return ndcgAt(ranking, judgments, Infinity, linear);
}

/**
 * ndcg_cut_k: DCG@k / IDCG@k with linear gain (gain = grade), discount 1/log2(rank+1), ideal from
 * all judged documents. Matches trec_eval `ndcg_cut_k` (and ranx `ndcg`, pytrec_eval `ndcg_cut`).
 */
export function ndcg_cut_k(ranking: Ranking, judgments: Judgments, k?: number, _opts?: MeasureOptions): number {
  return ndcgAt(ranking, judgments, cutoff(k, 'ndcg_cut_k'), linear);
}

/**
 * ndcg_exp_cut_k: as ndcg_cut_k but with exponential gain 2^grade - 1 (Burges et al. 2005; ranx
 * `ndcg_burges`). Ours; identical to ndcg_cut_k for binary judgments.
 */
export function ndcg_exp_cut_k(ranking: Ranking, judgments: Judgments, k?: number, _opts?: MeasureOptions): number {
  return ndcgAt(ranking, judgments, cutoff(k, 'ndcg_exp_cut_k'), exponential);
}
