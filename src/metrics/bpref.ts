/** bpref (Buckley & Voorhees, SIGIR 2004), exactly as trec_eval m_bpref.c computes it. */
import { countRel, dedupe, level } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';

/**
 * bpref = (1/R) * sum over relevant retrieved r of (1 - min(n_r, R) / min(N, R)), where n_r is the
 * number of judged non-relevant documents (0 <= grade < level) ranked above r and N is the number of
 * judged non-relevant documents in the judgments; the term is 1 when n_r = 0. Unjudged documents
 * (absent or negative grade) are skipped. 0 when R = 0. Matches trec_eval `bpref`.
 */
export function bpref(ranking: Ranking, judgments: Judgments, _k?: number, opts?: MeasureOptions): number {
  const lvl = level(opts);
  const R = countRel(judgments, lvl);
  if (R === 0) return 0;
  let N = 0;
  for (const g of judgments.values()) if (g >= 0 && g < lvl) N++;
  let nonrelSoFar = 0;
  let sum = 0;
  for (const id of dedupe(ranking)) {
    const g = judgments.get(id);
    if (g === undefined || g < 0) continue;
    if (g < lvl) nonrelSoFar++;
    else sum += nonrelSoFar > 0 ? 1 - Math.min(nonrelSoFar, R) / Math.min(N, R) : 1;
  }
  return sum / R;
}
