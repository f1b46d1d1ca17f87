/** Cutoff-based binary measures: P_k, recall_k, success_k (trec_eval m_P.c, m_recall.c, m_success.c). */
import { cutoff, one } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';
import { RELVALUE_NONPOOL, RELVALUE_UNJUDGED, type ResRels, type TrecContext } from './resrels.ts';

/**
 * P_k = |relevant in top k| / k. Always divides by k, even when fewer than k documents were
 * retrieved (the missing positions count as non-relevant). Matches trec_eval `P_k`.
 */
export function P_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  const kk = cutoff(k, 'P_k');
  return one(ranking, judgments, opts, (rr, c, o) => calcP(rr, c, [kk], o, 0));
}

/** recall_k = |relevant in top k| / R; 0 when R = 0. Matches trec_eval `recall_k`. */
export function recall_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  const kk = cutoff(k, 'recall_k');
  return one(ranking, judgments, opts, (rr, c, o) => calcRecall(rr, c, [kk], o, 0));
}

/** success_k = 1 if any relevant document is in the top k, else 0. Matches trec_eval `success_k`. */
export function success_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  const kk = cutoff(k, 'success_k');
  return one(ranking, judgments, opts, (rr, c, o) => calcSuccess(rr, c, [kk], o, 0));
}

/**
 * judged_k = |top-k documents with a judgment (grade >= 0)| / k. Ours (trec_eval has no such name);
 * it equals trec_eval `P_k` computed with `-l 0`, i.e. a negative grade counts as unjudged as in
 * trec_eval, and positions past the end of a short ranking count as unjudged.
 */
export function judged_k(ranking: Ranking, judgments: Judgments, k?: number, _opts?: MeasureOptions): number {
  const kk = cutoff(k, 'judged_k');
  return one(ranking, judgments, _opts, (rr, _c, o) => calcJudged(rr, [kk], o, 0));
}

/**
 * The cutoff walk shared by P, recall, relative_P, success and unj: `count` is a running count of
 * the docs `hit` accepts; at each cutoff k (ascending) `value(count, k)` is stored; cutoffs past
 * the end of the ranking see the final count.
 */
function cutWalk(
  rr: ResRels,
  cutoffs: readonly number[],
  hit: (rel: number) => boolean,
  value: (count: number, k: number) => number,
  out: Float64Array,
  off: number,
): void {
  let ci = 0;
  let n = 0;
  const l = rr.list;
  for (let i = 0; i < rr.numRet; i++) {
    if (i === cutoffs[ci]) {
      out[off + ci] = value(n, i);
      if (++ci === cutoffs.length) break;
    }
    if (hit(l[i]!)) n++;
  }
  while (ci < cutoffs.length) {
    out[off + ci] = value(n, cutoffs[ci]!);
    ci++;
  }
}

/** P_k (m_P.c): relevant in the top k / k; missing positions count as non-relevant. */
export function calcP(rr: ResRels, ctx: TrecContext, cutoffs: readonly number[], out: Float64Array, off: number): void {
  const lvl = ctx.relevanceLevel;
  cutWalk(rr, cutoffs, (r) => r >= lvl, (n, k) => n / k, out, off);
}

/** recall_k (m_recall.c): relevant in the top k / R; 0 when R = 0. */
export function calcRecall(rr: ResRels, ctx: TrecContext, cutoffs: readonly number[], out: Float64Array, off: number): void {
  if (rr.numRel === 0) return;
  const lvl = ctx.relevanceLevel;
  cutWalk(rr, cutoffs, (r) => r >= lvl, (n) => n / rr.numRel, out, off);
}

/** relative_P_k (m_rel_P.c): relevant in the top k / min(k, R); 0 when R = 0. */
export function calcRelativeP(rr: ResRels, ctx: TrecContext, cutoffs: readonly number[], out: Float64Array, off: number): void {
  if (rr.numRel === 0) return;
  const lvl = ctx.relevanceLevel;
  cutWalk(rr, cutoffs, (r) => r >= lvl, (n, k) => n / (k > rr.numRel ? rr.numRel : k), out, off);
}

/** success_k (m_success.c): 1 if a relevant doc is in the top k, else 0. */
export function calcSuccess(rr: ResRels, ctx: TrecContext, cutoffs: readonly number[], out: Float64Array, off: number): void {
  const lvl = ctx.relevanceLevel;
  cutWalk(rr, cutoffs, (r) => r >= lvl, (n) => (n ? 1 : 0), out, off);
}

/** unj_k (m_unjudged.c): documents in the top k not in the pool or unjudged in the pool, / k. */
export function calcUnj(rr: ResRels, cutoffs: readonly number[], out: Float64Array, off: number): void {
  cutWalk(rr, cutoffs, (r) => r === RELVALUE_NONPOOL || r === RELVALUE_UNJUDGED, (n, k) => n / k, out, off);
}

/** set_P (m_set_P.c): num_rel_ret / num_ret over the whole retrieved set. */
export function calcSetP(rr: ResRels, out: Float64Array, off: number): void {
  if (rr.numRet) out[off] = rr.numRelRet / rr.numRet;
}

/** set_recall (m_set_recall.c): num_rel_ret / R. */
export function calcSetRecall(rr: ResRels, out: Float64Array, off: number): void {
  if (rr.numRel) out[off] = rr.numRelRet / rr.numRel;
}

/** set_relative_P (m_set_rel_P.c): num_rel_ret / min(num_ret, R). */
export function calcSetRelativeP(rr: ResRels, out: Float64Array, off: number): void {
  if (rr.numRet && rr.numRel) out[off] = rr.numRelRet / Math.min(rr.numRet, rr.numRel);
}

/** set_F (m_set_F.c, param beta default 1.0): (beta+1) P R / (beta P + R) over the retrieved set. */
export function calcSetF(rr: ResRels, params: readonly number[], out: Float64Array, off: number): void {
  if (!rr.numRelRet) return;
  const P = rr.numRelRet / rr.numRet;
  const R = rr.numRelRet / rr.numRel;
  const x = params[0]!;
  out[off] = ((x + 1.0) * P * R) / (x * P + R);
}

/**
 * utility (m_utility.c, params a,b,c,d default 1,-1,0,0): a*rel_ret + b*nonrel_ret +
 * c*rel_not_ret + d*nonrel_not_ret, the last using -N (number of docs in the collection).
 * trec_eval fails ("improper number of coefficients") unless exactly 4 params are given.
 */
export function calcUtility(rr: ResRels, ctx: TrecContext, params: readonly number[], out: Float64Array, off: number): void {
  out[off] =
    params[0]! * rr.numRelRet +
    params[1]! * (rr.numRet - rr.numRelRet) +
    params[2]! * (rr.numRel - rr.numRelRet) +
    params[3]! * (ctx.numDocsInColl + rr.numRelRet - rr.numRet - rr.numRel);
}

/** judged_k (rankgate's): docs in the top k judged with a grade >= 0, / k (P_k at -l 0 without nonpool docs). */
export function calcJudged(rr: ResRels, cutoffs: readonly number[], out: Float64Array, off: number): void {
  cutWalk(rr, cutoffs, (r) => r >= 0, (n, k) => n / k, out, off);
}
