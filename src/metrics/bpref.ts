/** bpref (Buckley & Voorhees, SIGIR 2004), exactly as trec_eval m_bpref.c computes it. */
import { one } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';
import { INFAP_EPSILON, MIN_GEO_MEAN, RELVALUE_NONPOOL, RELVALUE_UNJUDGED, type ResRels, type TrecContext } from './resrels.ts';

/**
 * bpref = (1/R) * sum over relevant retrieved r of (1 - min(n_r, R) / min(N, R)), where n_r is the
 * number of judged non-relevant documents (0 <= grade < level) ranked above r and N is the number of
 * judged non-relevant documents in the judgments; the term is 1 when n_r = 0. Unjudged documents
 * (absent or negative grade) are skipped. 0 when R = 0. Matches trec_eval `bpref`.
 */
export function bpref(ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  return one(ranking, judgments, opts, (rr, c, o) => calcBpref(rr, c, o, 0));
}

/** bpref over a ResRels (m_bpref.c; definition above). */
function bprefValue(rr: ResRels, lvl: number): number {
  let numNonrel = 0;
  for (let j = 0; j < lvl && j < rr.relLevels.length; j++) numNonrel += rr.relLevels[j]!;
  let nonrelSoFar = 0;
  let b = 0;
  for (let j = 0; j < rr.numRet; j++) {
    const r = rr.list[j]!;
    if (r === RELVALUE_NONPOOL || r === RELVALUE_UNJUDGED) continue;
    if (r >= 0 && r < lvl) nonrelSoFar++;
    else b += nonrelSoFar > 0 ? 1.0 - Math.min(nonrelSoFar, rr.numRel) / Math.min(numNonrel, rr.numRel) : 1.0;
  }
  if (rr.numRel) b /= rr.numRel;
  return b;
}

/** bpref (m_bpref.c): see `bpref` above. */
export function calcBpref(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  out[off] = bprefValue(rr, ctx.relevanceLevel);
}

/** gm_bpref (m_gm_bpref.c): log(max(bpref, MIN_GEO_MEAN)); `all` = exp(mean); not printed per query. */
export function calcGmBpref(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  out[off] = Math.log(Math.max(bprefValue(rr, ctx.relevanceLevel), MIN_GEO_MEAN));
}

/**
 * infAP (m_infap.c; Yilmaz & Aslam, CIKM 2006): inferred AP from a sampled pool. Docs not in the
 * pool are skipped; pool docs with a negative grade are "unjudged" and counted for the inference.
 * For a relevant doc at 0-based j > 0: 1/(j+1) + (j/(j+1)) * ((rel-1 + nonrel + unjudged)/j) *
 * ((rel-1 + eps) / (rel-1 + nonrel + 2 eps)); 1 at j = 0. Sum / R.
 */
export function calcInfAP(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  const lvl = ctx.relevanceLevel;
  let nonrel = 0;
  let rel = 0;
  let unj = 0;
  let ap = 0;
  for (let j = 0; j < rr.numRet; j++) {
    const r = rr.list[j]!;
    if (r === RELVALUE_NONPOOL) continue;
    if (r === RELVALUE_UNJUDGED) {
      unj++;
      continue;
    }
    if (r >= 0 && r < lvl) nonrel++;
    else {
      rel++;
      if (j === 0) ap += 1.0;
      else {
        const fj = j;
        ap +=
          1.0 / (fj + 1.0) +
          (fj / (fj + 1.0)) * ((rel - 1 + nonrel + unj) / fj) * ((rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON));
      }
    }
  }
  if (rr.numRel) ap /= rr.numRel;
  out[off] = ap;
}
