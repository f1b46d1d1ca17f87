/**
 * Gain tables for the graded measures (trec_eval gain_init.c): `-m ndcg.1=0,2=3` maps grade 1 to
 * gain 0 and grade 2 to gain 3; a grade without a parameter gains its own value. Levels are
 * sorted by gain ascending with trec_eval's integer comparator ((int)(g1 - g2): gains closer than
 * 1 compare equal and keep their order).
 */
import type { ResRels } from './resrels.ts';

export interface ParamPair {
  name: string;
  value: number;
}

export interface Gains {
  level: number[];
  gain: number[];
  numAt: number[];
}

const VALID_INT = /^[+-]?[0-9]+$/;

const cache = new WeakMap<ResRels, Map<readonly ParamPair[], Gains>>();

/** setupGains, computed once per (query, parameter list); callers must not modify the result. */
export function gainsFor(pairs: readonly ParamPair[], rr: ResRels): Gains {
  let m = cache.get(rr);
  if (!m) cache.set(rr, (m = new Map()));
  let g = m.get(pairs);
  if (!g) m.set(pairs, (g = setupGains(pairs, rr)));
  return g;
}

export function setupGains(pairs: readonly ParamPair[], rr: ResRels): Gains {
  if (pairs.length === 0) {
    // no parameters: one row per grade 0..max, gain = grade, already in gain order
    const level: number[] = [];
    const numAt: number[] = [];
    for (let i = 0; i < rr.numRelLevels; i++) {
      level.push(i);
      numAt.push(rr.relLevels[i] ?? 0);
    }
    return { level, gain: level.slice(), numAt };
  }
  const rows: { level: number; gain: number; numAt: number }[] = [];
  for (const p of pairs) {
    if (!VALID_INT.test(p.name)) continue;
    rows.push({ level: Number.parseInt(p.name, 10), gain: p.value, numAt: 0 });
  }
  const nParams = rows.length;
  for (let i = 0; i < rr.numRelLevels; i++) {
    let j = 0;
    while (j < nParams && rows[j]!.level !== i) j++;
    if (j < nParams) rows[j]!.numAt = rr.relLevels[i] ?? 0;
    else rows.push({ level: i, gain: i, numAt: rr.relLevels[i] ?? 0 });
  }
  rows.sort((a, b) => Math.trunc(a.gain - b.gain));
  return { level: rows.map((r) => r.level), gain: rows.map((r) => r.gain), numAt: rows.map((r) => r.numAt) };
}

/** get_gain: the gain of the first row with this level, 0 when none. */
export function getGain(rel: number, g: Gains): number {
  const n = g.level.length;
  for (let i = 0; i < n; i++) if (g.level[i] === rel) return g.gain[i]!;
  return 0;
}

/**
 * Iterator over the ideal ranking's gains (the levels walked from the highest gain down, each as
 * many times as it has judged documents), exactly as the ndcg/G/Rndcg loops of trec_eval do it.
 */
export class IdealWalk {
  cur: number;
  numAt = 0;
  gain: number;
  constructor(private g: Gains) {
    this.cur = g.level.length - 1;
    this.gain = this.cur >= 0 ? g.gain[this.cur]! : 0.0;
  }
  /** advance one position; returns the ideal gain at it */
  next(): number {
    this.numAt++;
    while (this.cur >= 0 && this.numAt > this.g.numAt[this.cur]!) {
      this.numAt = 1;
      this.cur--;
      this.gain = this.cur >= 0 ? this.g.gain[this.cur]! : 0.0;
    }
    return this.gain;
  }
}
