/** Helpers shared by the measure files (not exported from the package index). */
import type { Judgments, MeasureOptions, Ranking } from './types.ts';
import { resRelsOf, type ResRels, type TrecContext } from './resrels.ts';

/** Drop later copies of an id: a duplicate keeps its first (best-ranked) occurrence. */
export function dedupe(ranking: Ranking): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const id of ranking) {
    if (!seen.has(id)) {
      seen.add(id);
      out.push(id);
    }
  }
  return out;
}

export function level(opts?: MeasureOptions): number {
  const l = opts?.relevanceLevel ?? 1;
  if (!Number.isFinite(l)) throw new RangeError(`relevanceLevel must be a finite number, got ${l}`);
  return l;
}

/** trec_eval: relevant iff the document is judged with a grade >= 0 and >= the relevance level. */
export function isRel(grade: number | undefined, lvl: number): boolean {
  return grade !== undefined && grade >= 0 && grade >= lvl;
}

/** R: number of relevant documents in the judgments (trec_eval num_rel). */
export function countRel(judgments: Judgments, lvl: number): number {
  let r = 0;
  for (const g of judgments.values()) if (isRel(g, lvl)) r++;
  return r;
}

/** Validate a cutoff: a positive integer. Cut measures need one. */
export function cutoff(k: number | undefined, measure: string): number {
  if (k === undefined || !Number.isInteger(k) || k <= 0) {
    throw new RangeError(`${measure} needs a cutoff k that is a positive integer, got ${String(k)}`);
  }
  return k;
}

/** Relevance flags of the deduplicated ranking, truncated at `limit` when given. */
export function relFlags(ranking: Ranking, judgments: Judgments, lvl: number, limit = Infinity): boolean[] {
  const ids = dedupe(ranking);
  const n = Math.min(ids.length, limit);
  const out = new Array<boolean>(n);
  for (let i = 0; i < n; i++) out[i] = isRel(judgments.get(ids[i]!), lvl);
  return out;
}

/** Compare like C strcmp on UTF-8 bytes (= Unicode code point order), which trec_eval uses. */
export function compareStrcmp(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

/**
 * Run one trec_eval calculation (the `calc*` functions of the family files) on an id ranking:
 * the per-ranking API (P_k, map, ndcg_cut_k, ...) and trec-eval share the same code this way.
 */
export function one(
  ranking: Ranking,
  judgments: Judgments,
  opts: MeasureOptions | undefined,
  f: (rr: ResRels, ctx: TrecContext, out: Float64Array) => void,
): number {
  const lvl = level(opts);
  const out = new Float64Array(1);
  f(resRelsOf(ranking, judgments, lvl), { relevanceLevel: lvl, numDocsInColl: 0 }, out);
  return out[0]!;
}
