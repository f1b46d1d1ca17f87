/** Average-precision family: map, map_cut_k, Rprec (trec_eval m_map.c, m_map_cut.c, m_Rprec.c). */
import { countRel, cutoff, level, relFlags } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';

function apAt(ranking: Ranking, judgments: Judgments, limit: number, opts?: MeasureOptions): number {
  const lvl = level(opts);
  const R = countRel(judgments, lvl);
  if (R === 0) return 0;
  let relSoFar = 0;
  let sum = 0;
  relFlags(ranking, judgments, lvl, limit).forEach((rel, i) => {
    if (rel) {
      relSoFar++;
      sum += relSoFar / (i + 1);
    }
  });
  return sum / R;
}

/**
 * map (average precision of one query) = (1/R) * sum over relevant retrieved d of P@rank(d);
 * 0 when R = 0. Unretrieved relevant documents contribute 0. Matches trec_eval `map`.
 */
export function map(ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  return apAt(ranking, judgments, Infinity, opts);
}

/**
 * map_cut_k = (1/R) * sum over relevant d with rank(d) <= k of P@rank(d). Divides by ALL relevant
 * documents R, not min(R, k). Matches trec_eval `map_cut_k`.
 */
export function map_cut_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  return apAt(ranking, judgments, cutoff(k, 'map_cut_k'), opts);
}

/** Rprec = |relevant in top R| / R; 0 when R = 0. Matches trec_eval `Rprec`. */
export function Rprec(ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  const lvl = level(opts);
  const R = countRel(judgments, lvl);
  if (R === 0) return 0;
  let n = 0;
  for (const r of relFlags(ranking, judgments, lvl, R)) if (r) n++;
  return n / R;
}
