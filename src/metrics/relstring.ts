/**
 * relstring (trec_eval m_relstring.c): the relevance values of the first N (default 10) retrieved
 * docs as one character each: the grade if 0-9, '>' above 9, '-' not in the pool, '.' in the pool
 * but unjudged, '<' any other negative. Printed per query only, quoted.
 */
import { RELVALUE_NONPOOL, RELVALUE_UNJUDGED, type ResRels } from './resrels.ts';

export function relstring(rr: ResRels, n: number): string {
  let len = Math.min(Math.trunc(n), rr.numRet);
  if (len < 0) len = 0;
  let s = '';
  for (let i = 0; i < len; i++) {
    const rel = rr.list[i]!;
    s += rel > 9 ? '>' : rel >= 0 ? String(rel) : rel === RELVALUE_NONPOOL ? '-' : rel === RELVALUE_UNJUDGED ? '.' : '<';
  }
  return s;
}
