/**
 * Cumulated-gain measures without a log discount on rank (trec_eval m_G.c, m_binG.c).
 */
import { IdealWalk, gainsFor, getGain, type ParamPair } from './gains.ts';
import type { ResRels, TrecContext } from './resrels.ts';

/**
 * binG (m_binG.c): binary G; each relevant retrieved doc adds 1 / log2(2 + nonrel docs above it),
 * i.e. 1/log2(3 + i - rel_so_far) at 0-based rank i; / R.
 */
export function calcBinG(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  let relSoFar = 0;
  let sum = 0;
  for (let i = 0; i < rr.numRet; i++) {
    if (rr.list[i]! >= ctx.relevanceLevel) {
      relSoFar++;
      sum += 1.0 / Math.log2(3 + i - relSoFar);
    }
  }
  if (relSoFar) out[off] = sum / rr.numRel;
}

/**
 * G (m_G.c): each retrieved doc with gain g adds g / log2(2 + cost - gain so far), where the cost
 * of a position is the ideal gain there (at least 1); normalised by the ideal total gain. Gains
 * from `-m G.1=0,2=3`, default gain = grade.
 */
export function calcG(rr: ResRels, pairs: readonly ParamPair[], out: Float64Array, off: number): void {
  const g = gainsFor(pairs, rr);
  const w = new IdealWalk(g);
  let resultsG = 0;
  let sumResults = 0;
  let sumIdeal = 0;
  let sumCost = 0;
  const minCost = 1.0;
  let i = 0;
  for (; i < rr.numRet && w.gain > 0.0; i++) {
    const rg = getGain(rr.list[i]!, g);
    sumResults += rg;
    const ig = w.next();
    if (ig > 0.0) sumIdeal += ig;
    sumCost += ig >= minCost ? ig : minCost;
    if (rg !== 0) resultsG += rg / Math.log2(2 + sumCost - sumResults);
  }
  for (; i < rr.numRet; i++) {
    const rg = getGain(rr.list[i]!, g);
    sumResults += rg;
    sumCost += minCost;
    if (rg !== 0) resultsG += rg / Math.log2(2 + sumCost - sumResults);
  }
  while (w.gain > 0.0) {
    const ig = w.next();
    if (ig > 0.0) sumIdeal += ig;
    i++;
  }
  if (sumIdeal > 0.0) out[off] = resultsG / sumIdeal;
}
