/**
 * Rank-biased precision (Moffat & Zobel, TOIS 2008; trec_eval m_rbp.c, m_rbp_resid.c).
 * Parameter `-m rbp.p=0.95` (persistence, default 0.9); gain parameters as ndcg (`-m rbp.1=0,2=1`).
 */
import { gainsFor, getGain, type ParamPair } from './gains.ts';
import type { ResRels } from './resrels.ts';

function persistence(pairs: readonly ParamPair[]): number {
  let p = 0.9;
  for (const x of pairs) if (x.name === 'p') p = x.value;
  return p;
}

/**
 * rbp: (1 - p) * sum gain(d_i) p^(i-1). Gains outside [0, 1] are first rescaled to
 * (g - min) / (max - min) over the gain table (per email with A. Moffat, says trec_eval).
 */
export function calcRbp(rr: ResRels, pairs: readonly ParamPair[], out: Float64Array, off: number): void {
  const p = persistence(pairs);
  const g0 = gainsFor(pairs, rr);
  const g = { ...g0, gain: g0.gain.slice() };
  let min = Infinity;
  let max = -Infinity;
  for (const x of g.gain) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (min < 0 || max > 1) for (let i = 0; i < g.gain.length; i++) g.gain[i] = (g.gain[i]! - min) / (max - min);
  let sum = 0;
  let cur = 1.0;
  for (let i = 0; i < rr.numRet; i++) {
    const gain = getGain(rr.list[i]!, g);
    if (gain !== 0) sum += gain * cur;
    cur = cur * p;
  }
  out[off] = (1.0 - p) * sum;
}

/**
 * rbp_resid: the most RBP could rise if every unjudged retrieved doc (not in the pool, or in it
 * with a negative grade) had gain 1, plus the tail past the ranking: p^n + (1 - p) * sum over
 * unjudged of p^(i-1). 0 when no retrieved doc is unjudged.
 */
export function calcRbpResid(rr: ResRels, pairs: readonly ParamPair[], out: Float64Array, off: number): void {
  const p = persistence(pairs);
  let unj = 0;
  let sum = 0;
  let cur = 1.0;
  for (let i = 0; i < rr.numRet; i++) {
    if (rr.list[i]! < 0) {
      unj++;
      sum += cur;
    }
    cur = cur * p;
  }
  if (unj) out[off] = cur + (1 - p) * sum;
}
