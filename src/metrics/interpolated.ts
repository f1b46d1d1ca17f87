/**
 * Interpolated precision family (trec_eval m_iprec_at_recall.c, m_11pt_avg.c): precision at
 * recall levels with interpolation Int_Prec(rank X) = max Prec(rank Y) over Y >= X. Recall level
 * r becomes a count of relevant docs with lround(r * R) (trec_eval 10; v9 added 0.9 and truncated).
 */
import type { ResRels, TrecContext } from './resrels.ts';

/** C lround: round half away from zero. */
function lround(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** Walks the ranking backwards; calls `store(cutIndex, intPrecis)` for each recall cutoff (descending). */
function walk(rr: ResRels, ctx: TrecContext, percents: readonly number[], store: (c: number, v: number) => void): void {
  const cut = percents.map((p) => lround(p * rr.numRel));
  let cc = cut.length - 1;
  while (cc >= 0 && cut[cc]! > rr.numRelRet) cc--;
  let precis = rr.numRelRet / rr.numRet;
  let intPrecis = precis;
  let relSoFar = rr.numRelRet;
  for (let i = rr.numRet; i > 0 && relSoFar > 0; i--) {
    precis = relSoFar / i;
    if (intPrecis < precis) intPrecis = precis;
    if (rr.list[i - 1]! >= ctx.relevanceLevel) {
      while (cc >= 0 && relSoFar === cut[cc]) store(cc--, intPrecis);
      relSoFar--;
    }
  }
  while (cc >= 0) store(cc--, intPrecis);
}

/** iprec_at_recall_r (m_iprec_at_recall.c): interpolated precision at recall r (default 0.0, 0.1 ... 1.0). */
export function calcIprecAtRecall(rr: ResRels, ctx: TrecContext, percents: readonly number[], out: Float64Array, off: number): void {
  walk(rr, ctx, percents, (c, v) => {
    out[off + c] = v;
  });
}

/** 11pt_avg (m_11pt_avg.c): mean of the interpolated precisions at the recall levels (default the 11 points 0.0 ... 1.0). */
export function calc11ptAvg(rr: ResRels, ctx: TrecContext, percents: readonly number[], out: Float64Array, off: number): void {
  let sum = 0;
  walk(rr, ctx, percents, (_c, v) => {
    sum += v;
  });
  out[off] = sum / percents.length;
}
