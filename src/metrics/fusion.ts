/**
 * Rank fusion. Every function returns `{ id, score }[]` sorted by score descending, ties broken by id
 * ascending (code point order), so fused rankings are deterministic. Within one input run a duplicate
 * id keeps its first (best) occurrence.
 */
import { compareStrcmp } from './common.ts';

export interface Fused {
  id: string;
  score: number;
}

function finish(scores: Map<string, number>): Fused[] {
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || compareStrcmp(a.id, b.id));
}

function weightOf(w: number | undefined, i: number): number {
  const x = w ?? 1;
  if (!Number.isFinite(x) || x < 0) throw new RangeError(`run ${i}: weight must be a finite number >= 0, got ${x}`);
  return x;
}

/**
 * Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009):
 * score(d) = sum over runs r containing d of w_r / (k + rank_r(d)), rank 1-based, k = 60 by default,
 * w_r = 1 unless given. Matches ranx `rrf` and the RRF of Elasticsearch / OpenSearch.
 */
export function rrf(runs: readonly { ids: readonly string[]; weight?: number }[], k = 60): Fused[] {
  if (!Number.isFinite(k) || k < 0) throw new RangeError(`rrf k must be a finite number >= 0, got ${k}`);
  const scores = new Map<string, number>();
  runs.forEach((run, i) => {
    const w = weightOf(run.weight, i);
    const seen = new Set<string>();
    let rank = 0;
    for (const id of run.ids) {
      if (seen.has(id)) continue;
      seen.add(id);
      rank++;
      scores.set(id, (scores.get(id) ?? 0) + w / (k + rank));
    }
  });
  return finish(scores);
}

export interface ScoredRun {
  hits: readonly { id: string; score: number }[];
  weight?: number;
}

/**
 * Min-max normalisation of one run: (s - min) / (max - min) over the run's own hits. When every hit
 * has the same score (including a single hit) each gets 1, i.e. all tie for the top.
 */
export function minMaxNormalise(hits: readonly { id: string; score: number }[]): Map<string, number> {
  const first = new Map<string, number>();
  for (const h of hits) {
    if (!Number.isFinite(h.score)) throw new RangeError(`score of '${h.id}' is not finite: ${h.score}`);
    if (!first.has(h.id)) first.set(h.id, h.score);
  }
  const vals = [...first.values()];
  const min = Math.min(...vals);
  const max = Math.max(...vals);
  const out = new Map<string, number>();
  for (const [id, s] of first) out.set(id, max > min ? (s - min) / (max - min) : 1);
  return out;
}

function comb(runs: readonly ScoredRun[], mnz: boolean): Fused[] {
  const sum = new Map<string, number>();
  const hits = new Map<string, number>();
  runs.forEach((run, i) => {
    const w = weightOf(run.weight, i);
    for (const [id, s] of minMaxNormalise(run.hits)) {
      sum.set(id, (sum.get(id) ?? 0) + w * s);
      hits.set(id, (hits.get(id) ?? 0) + 1);
    }
  });
  if (mnz) for (const [id, s] of sum) sum.set(id, s * hits.get(id)!);
  return finish(sum);
}

/** CombSUM (Fox & Shaw, TREC-2 1994): score(d) = sum over runs of w_r * minmax_r(d); absent = 0.. */
export function combSum(runs: readonly ScoredRun[]): Fused[] {
  return comb(runs, false);
}

/**
 * CombMNZ (Fox & Shaw 1994): CombSUM(d) * |{runs that retrieved d}|. A document retrieved by a run
 * counts as a hit even when its normalised score is 0 (it was the run's lowest).
 */
export function combMnz(runs: readonly ScoredRun[]): Fused[] {
  return comb(runs, true);
}
