/** Average-precision family: map, map_cut_k, Rprec (trec_eval m_map.c, m_map_cut.c, m_Rprec.c). */
import { cutoff, one } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';
import { MIN_GEO_MEAN, type ResRels, type TrecContext } from './resrels.ts';

/**
 * map (average precision of one query) = (1/R) * sum over relevant retrieved d of P@rank(d);
 * 0 when R = 0. Unretrieved relevant documents contribute 0. Matches trec_eval `map`.
 */
export function map(ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  return one(ranking, judgments, opts, (rr, c, o) => calcMap(rr, c, o, 0));
}

/**
 * map_cut_k = (1/R) * sum over relevant d with rank(d) <= k of P@rank(d). Divides by ALL relevant
 * documents R, not min(R, k). Matches trec_eval `map_cut_k`.
 */
export function map_cut_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  const kk = cutoff(k, 'map_cut_k');
  return one(ranking, judgments, opts, (rr, c, o) => calcMapCut(rr, c, [kk], o, 0));
}

/** Rprec = |relevant in top R| / R; 0 when R = 0. Matches trec_eval `Rprec`. */
export function Rprec(ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  return one(ranking, judgments, opts, (rr, c, o) => calcRprec(rr, c, o, 0));
}

function apSum(rr: ResRels, lvl: number): [number, number] {
  let relSoFar = 0;
  let sum = 0;
  const l = rr.list;
  for (let i = 0; i < rr.numRet; i++) {
    if (l[i]! >= lvl) {
      relSoFar++;
      sum += relSoFar / (i + 1);
    }
  }
  return [sum, relSoFar];
}

/** map (m_map.c): sum over relevant retrieved docs of precision at their rank, / num_rel; 0 when nothing relevant retrieved. */
export function calcMap(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  const [sum, relSoFar] = apSum(rr, ctx.relevanceLevel);
  if (relSoFar) out[off] = sum / rr.numRel;
}

/** gm_map (m_gm_map.c): log(max(AP, MIN_GEO_MEAN)) per query; the `all` value is exp(mean of logs). Not printed per query. */
export function calcGmMap(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  let [sum, relSoFar] = apSum(rr, ctx.relevanceLevel);
  if (relSoFar) sum = sum / rr.numRel;
  out[off] = Math.log(Math.max(sum, MIN_GEO_MEAN));
}

/** Rprec (m_Rprec.c): relevant docs among the first min(num_ret, R) retrieved, / R. */
export function calcRprec(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  const n = Math.min(rr.numRet, rr.numRel);
  if (n === 0) return;
  let relSoFar = 0;
  for (let i = 0; i < n; i++) if (rr.list[i]! >= ctx.relevanceLevel) relSoFar++;
  out[off] = relSoFar / rr.numRel;
}

/** map_cut_k (m_map_cut.c): AP truncated at rank k, still divided by all R. */
export function calcMapCut(rr: ResRels, ctx: TrecContext, cutoffs: readonly number[], out: Float64Array, off: number): void {
  if (rr.numRel === 0) return;
  let ci = 0;
  let relSoFar = 0;
  let sum = 0;
  const lvl = ctx.relevanceLevel;
  for (let i = 0; i < rr.numRet; i++) {
    if (i === cutoffs[ci]) {
      out[off + ci] = sum / rr.numRel;
      if (++ci === cutoffs.length) break;
    }
    if (rr.list[i]! >= lvl) {
      relSoFar++;
      sum += relSoFar / (i + 1);
    }
  }
  while (ci < cutoffs.length) out[off + ci++] = sum / rr.numRel;
}

/**
 * Rprec_mult_x (m_Rprec_mult.c): precision after (long)(x*R + 0.9) documents; cutoffs beyond
 * num_ret give num_rel_ret / cutoff. Walked backwards from the end exactly as trec_eval does (a
 * cutoff reached only after the last relevant doc was passed keeps 0).
 */
export function calcRprecMult(rr: ResRels, ctx: TrecContext, percents: readonly number[], out: Float64Array, off: number): void {
  const cut = percents.map((p) => Math.trunc(p * rr.numRel + 0.9));
  let cc = cut.length - 1;
  while (cc >= 0 && cut[cc]! > rr.numRet) {
    out[off + cc] = rr.numRelRet / cut[cc]!;
    cc--;
  }
  let relSoFar = rr.numRelRet;
  for (let i = rr.numRet; i > 0 && relSoFar > 0; i--) {
    const precis = relSoFar / i;
    while (cc >= 0 && i === cut[cc]) {
      out[off + cc] = precis;
      cc--;
    }
    if (rr.list[i - 1]! >= ctx.relevanceLevel) relSoFar--;
  }
}

/** set_map (m_set_map.c): set_P * set_recall = num_rel_ret^2 / (num_ret * R). */
export function calcSetMap(rr: ResRels, out: Float64Array, off: number): void {
  if (rr.numRet && rr.numRel) out[off] = (rr.numRelRet * rr.numRelRet) / (rr.numRet * rr.numRel);
}

/**
 * yaap (m_yaap.c; Robertson, "On Smoothing Average Precision", ECIR 2012): with s = the sum over
 * relevant retrieved docs of precision at their rank, log((1 + s) / (1 + R - s)). By name only
 * (not in all_trec).
 */
export function calcYaap(rr: ResRels, ctx: TrecContext, out: Float64Array, off: number): void {
  const [sum] = apSum(rr, ctx.relevanceLevel);
  out[off] = Math.log((1.0 + sum) / (1.0 + rr.numRel - sum));
}
