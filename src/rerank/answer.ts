/**
 * A reranker's answer normalised to one score per passage, in input order — and checked as strictly as rankgate's own
 * files: the list is there, has exactly one entry per passage sent, every index is an integer in range and appears
 * once, every score is a finite number within the API's documented range (types.ts). Anything else is a RerankerCallError (code 'MalformedResponse') naming the
 * reranker and what was wrong; it is never retried and never turned into a ranking.
 */
import { RerankerCallError } from './types.ts';
import { inRange, rangeText, type RerankScoreRange } from './cache.ts';

export function malformed(reranker: string, where: string, why: string): never {
  throw new RerankerCallError(`${reranker} at ${where}: malformed answer: ${why}`, { reranker, code: 'MalformedResponse' });
}

/**
 * `rows` as the API returned them (`[{index, relevance_score}]` or TEI's `[{index, score}]`), for `n` passages.
 * `field` names the list in messages (`"results"`, `"data"`).
 */
export function scoresFromRows(reranker: string, where: string, rows: unknown, n: number, field: string, scoreKey: 'relevance_score' | 'score', range?: RerankScoreRange): number[] {
  if (!Array.isArray(rows)) malformed(reranker, where, `no ${field} list`);
  const list = rows as unknown[];
  if (list.length !== n) malformed(reranker, where, `${list.length} score${list.length === 1 ? '' : 's'} for ${n} passage${n === 1 ? '' : 's'}`);
  const scores = new Array<number>(n).fill(NaN);
  const seen = new Set<number>();
  for (const [i, r] of list.entries()) {
    const row = (r && typeof r === 'object' ? r : {}) as Record<string, unknown>;
    const index = row.index;
    if (typeof index !== 'number' || !Number.isInteger(index)) malformed(reranker, where, `${field}[${i}].index is ${JSON.stringify(index) ?? 'missing'}, expected an integer`);
    if (index < 0 || index >= n) malformed(reranker, where, `${field}[${i}].index ${index} is out of range (0..${n - 1})`);
    if (seen.has(index)) malformed(reranker, where, `${field}[${i}].index ${index} is repeated`);
    seen.add(index);
    const score = row[scoreKey];
    if (typeof score !== 'number' || !Number.isFinite(score)) malformed(reranker, where, `${field}[${i}].${scoreKey} is ${JSON.stringify(score) ?? 'missing'}${typeof score === 'number' ? '' : ''}, expected a finite number`);
    if (range && !inRange(score, range)) malformed(reranker, where, `${field}[${i}].${scoreKey} is ${score}, outside the API's documented range (${rangeText(range)})`);
    scores[index] = score;
  }
  return scores;
}
