/**
 * Counting measures, trec_eval m_num_ret.c / m_num_rel.c / m_num_rel_ret.c.
 * In a summary (`all`) trec_eval SUMS these over queries instead of averaging them.
 */
import { dedupe, one } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';
import type { ResRels } from './resrels.ts';

/** num_ret = |ranking| after dropping duplicates. trec_eval `num_ret`. */
export function num_ret(ranking: Ranking, _judgments?: Judgments, _k?: number, _opts?: MeasureOptions): number {
  return dedupe(ranking).length;
}

/** num_rel = R = |{d : grade(d) >= level}| over the judgments, retrieved or not. trec_eval `num_rel`. */
export function num_rel(_ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  return one([], judgments, opts, (rr, _c, o) => calcNumRel(rr, o, 0));
}

/** num_rel_ret = |{d in ranking : grade(d) >= level}|. trec_eval `num_rel_ret`. */
export function num_rel_ret(ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  return one(ranking, judgments, opts, (rr, _c, o) => calcNumRelRet(rr, o, 0));
}

/** num_ret (m_num_ret.c): documents retrieved (after -M and -J). Summed in the `all` line. */
export function calcNumRet(rr: ResRels, out: Float64Array, off: number): void {
  out[off] = rr.numRet;
}
/** num_rel (m_num_rel.c): judged documents with grade >= -l. Summed; with -c the `all` line recounts (see evaluate.ts). */
export function calcNumRel(rr: ResRels, out: Float64Array, off: number): void {
  out[off] = rr.numRel;
}
/** num_rel_ret (m_num_rel_ret.c): retrieved documents with grade >= -l. Summed. */
export function calcNumRelRet(rr: ResRels, out: Float64Array, off: number): void {
  out[off] = rr.numRelRet;
}
/** num_nonrel_judged_ret (m_num_nonrel_judged_ret.c): num_ret - not-in-pool - unjudged-in-pool - num_rel_ret. Summed. */
export function calcNumNonrelJudgedRet(rr: ResRels, out: Float64Array, off: number): void {
  out[off] = rr.numRet - rr.numNonpool - rr.numUnjudged - rr.numRelRet;
}
