/**
 * nDCG family (Järvelin & Kekäläinen 2002). DCG = sum_i gain(d_i) / log2(i + 1) over 1-based rank i.
 * The ideal ranking is built from ALL judged documents of the query (retrieved or not), best grade
 * first. Negative grades and missing judgments give zero gain. Grades are used raw: the relevance
 * level (`-l`) does not apply, as in trec_eval. A query whose ideal DCG is 0 scores 0.
 */
import { cutoff, one } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';
import { IdealWalk, gainsFor, getGain, type ParamPair } from './gains.ts';
import type { ResRels, TrecContext } from './resrels.ts';

/** ndcg: linear gain (gain = grade), no cutoff, ideal over all judged documents. Matches trec_eval `ndcg` (default gains). */
export function ndcg(ranking: Ranking, judgments: Judgments, _k?: number, _opts?: MeasureOptions): number {
  return one(ranking, judgments, _opts, (rr, _c, o) => calcNdcg('ndcg', rr, [], o, 0));
}

/**
 * ndcg_cut_k: DCG@k / IDCG@k with linear gain (gain = grade), discount 1/log2(rank+1), ideal from
 * all judged documents. Matches trec_eval `ndcg_cut_k` (and ranx `ndcg`, pytrec_eval `ndcg_cut`).
 */
export function ndcg_cut_k(ranking: Ranking, judgments: Judgments, k?: number, _opts?: MeasureOptions): number {
  const kk = cutoff(k, 'ndcg_cut_k');
  return one(ranking, judgments, _opts, (rr, _c, o) => calcNdcgCut(rr, [kk], o, 0));
}

/**
 * ndcg_exp_cut_k: as ndcg_cut_k but with exponential gain 2^grade - 1 (Burges et al. 2005; ranx
 * `ndcg_burges`). Ours; identical to ndcg_cut_k for binary judgments.
 */
export function ndcg_exp_cut_k(ranking: Ranking, judgments: Judgments, k?: number, _opts?: MeasureOptions): number {
  const kk = cutoff(k, 'ndcg_exp_cut_k');
  return one(ranking, judgments, _opts, (rr, _c, o) => calcNdcgExpCut(rr, [kk], o, 0));
}

/**
 * ndcg / dcg / ideal_dcg (m_ndcg.c): DCG = sum gain(rel_i) / log2(i + 1) over the whole ranking,
 * ideal DCG over the judged docs sorted by gain (gains from `-m ndcg.1=0,2=3`, default gain =
 * grade). ndcg = DCG / ideal DCG (0 when the ideal is 0). The relevance level does not apply.
 */
export function calcNdcg(which: 'ndcg' | 'dcg' | 'ideal_dcg', rr: ResRels, pairs: readonly ParamPair[], out: Float64Array, off: number): void {
  const g = gainsFor(pairs, rr);
  const w = new IdealWalk(g);
  let dcg = 0;
  let idcg = 0;
  let i = 0;
  for (; i < rr.numRet && w.gain > 0.0; i++) {
    const rg = getGain(rr.list[i]!, g);
    if (rg !== 0) dcg += rg / Math.log2(i + 2);
    const ig = w.next();
    if (ig > 0.0) idcg += ig / Math.log2(i + 2);
  }
  for (; i < rr.numRet; i++) {
    const rg = getGain(rr.list[i]!, g);
    if (rg !== 0) dcg += rg / Math.log2(i + 2);
  }
  while (w.gain > 0.0) {
    const ig = w.next();
    if (ig > 0.0) idcg += ig / Math.log2(i + 2);
    i++;
  }
  if (which === 'ndcg') {
    if (idcg > 0.0) out[off] = dcg / idcg;
  } else out[off] = which === 'dcg' ? dcg : idcg;
}

/**
 * ndcg_cut_k (m_ndcg_cut.c): nDCG over the top k with gain = grade (no gain parameters), ideal
 * from the grade histogram (highest grade first); 0 when the ideal is 0.
 */
export function calcNdcgCut(rr: ResRels, cutoffs: readonly number[], out: Float64Array, off: number): void {
  let ci = 0;
  let sum = 0;
  for (let i = 0; i < rr.numRet; i++) {
    if (i === cutoffs[ci]) {
      out[off + ci] = sum;
      if (++ci === cutoffs.length) break;
    }
    const gain = rr.list[i]!;
    if (gain > 0) sum += gain / Math.log2(i + 2);
  }
  while (ci < cutoffs.length) out[off + ci++] = sum;
  ci = 0;
  let lvl = rr.numRelLevels - 1;
  let cnt = 0;
  let ideal = 0;
  for (let i = 0; ; i++) {
    cnt++;
    while (lvl > 0 && cnt > (rr.relLevels[lvl] ?? 0)) {
      lvl--;
      cnt = 1;
    }
    if (lvl <= 0) break;
    if (i === cutoffs[ci]) {
      if (ideal > 0.0) out[off + ci] /= ideal;
      if (++ci === cutoffs.length) break;
    }
    ideal += lvl / Math.log2(i + 2);
  }
  while (ci < cutoffs.length) {
    if (ideal > 0.0) out[off + ci] /= ideal;
    ci++;
  }
}

/**
 * ndcg_rel (m_ndcg_rel.c): nDCG averaged over the positions of the relevant (gain > 0) retrieved
 * docs, the unretrieved relevant docs each contributing the final nDCG; / number of ideal positions.
 */
export function calcNdcgRel(rr: ResRels, pairs: readonly ParamPair[], out: Float64Array, off: number): void {
  const g = gainsFor(pairs, rr);
  const w = new IdealWalk(g);
  let dcg = 0;
  let idcg = 0;
  let sum = 0;
  let numRelRet = 0;
  let numRel = 0;
  let i = 0;
  for (; i < rr.numRet && w.gain > 0.0; i++) {
    const rg = getGain(rr.list[i]!, g);
    if (rg !== 0) dcg += rg / Math.log2(i + 2);
    const ig = w.next();
    if (ig > 0.0) {
      numRel++;
      idcg += ig / Math.log2(i + 2);
    }
    if (rg > 0) {
      sum += dcg / idcg;
      numRelRet++;
    }
  }
  for (; i < rr.numRet; i++) {
    const rg = getGain(rr.list[i]!, g);
    if (rg !== 0) dcg += rg / Math.log2(i + 2);
    if (rg > 0) {
      sum += dcg / idcg;
      numRelRet++;
    }
  }
  while (w.gain > 0.0) {
    const ig = w.next();
    if (ig > 0.0) {
      numRel++;
      idcg += ig / Math.log2(i + 2);
    }
    i++;
  }
  sum += ((numRel - numRelRet) * dcg) / idcg;
  if (sum > 0.0) out[off] = sum / numRel;
}

/**
 * Rndcg (m_Rndcg.c): nDCG averaged over the rank positions where the ideal gain changes (the
 * boundaries between grade levels of the ideal ranking) and at the end of the ranking.
 */
export function calcRndcg(rr: ResRels, pairs: readonly ParamPair[], out: Float64Array, off: number): void {
  const g = gainsFor(pairs, rr);
  if (rr.numRel === 0) return;
  const w = new IdealWalk(g);
  let dcg = 0;
  let idcg = 0;
  let oldIdeal = w.gain;
  let sum = 0;
  let changed = 0;
  let i = 0;
  for (; i < rr.numRet && w.gain > 0.0; i++) {
    const rg = getGain(rr.list[i]!, g);
    const ig = w.next();
    if (oldIdeal !== ig) {
      if (idcg > 0.0) {
        sum += dcg / idcg;
        changed++;
      }
      oldIdeal = ig;
    }
    if (rg !== 0) dcg += rg / Math.log2(i + 2);
    if (ig > 0.0) idcg += ig / Math.log2(i + 2);
  }
  if (i < rr.numRet) {
    for (; i < rr.numRet; i++) {
      const rg = getGain(rr.list[i]!, g);
      if (rg !== 0) dcg += rg / Math.log2(i + 2);
    }
    if (idcg > 0.0) {
      sum += dcg / idcg;
      changed++;
    }
  }
  while (w.gain > 0.0) {
    const ig = w.next();
    if (oldIdeal !== ig) {
      if (idcg > 0.0) {
        sum += dcg / idcg;
        changed++;
      }
      oldIdeal = ig;
    }
    if (ig > 0.0) idcg += ig / Math.log2(i + 2);
    i++;
  }
  out[off] = sum / changed;
}

/**
 * ndcg_exp_cut_k (rankgate's): as ndcg_cut_k with exponential gain 2^grade - 1 (Burges et al.
 * 2005), ideal from the grade histogram; 0 when the ideal is 0.
 */
export function calcNdcgExpCut(rr: ResRels, cutoffs: readonly number[], out: Float64Array, off: number): void {
  const gain = (g: number) => (g > 0 ? 2 ** g - 1 : 0);
  const ideal: number[] = [];
  for (let lvl = rr.numRelLevels - 1; lvl > 0; lvl--) for (let c = 0; c < (rr.relLevels[lvl] ?? 0); c++) ideal.push(gain(lvl));
  cutoffs.forEach((k, c) => {
    let idcg = 0;
    for (let i = 0; i < Math.min(ideal.length, k); i++) idcg += ideal[i]! / Math.log2(i + 2);
    let dcg = 0;
    for (let i = 0; i < Math.min(rr.numRet, k); i++) dcg += gain(rr.list[i]!) / Math.log2(i + 2);
    out[off + c] = idcg > 0 ? dcg / idcg : 0;
  });
}
