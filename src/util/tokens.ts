/**
 * o200k token counting (gpt-tokenizer), loaded on first use.
 *
 * Building the o200k encoder (200k byte-pair ranks) costs ~0.2 s of CPU at import. Most rankgate processes never
 * count a token (`rankgate gate`, `report`, a promptfoo eval over an index that already exists), so the encoder is
 * loaded synchronously (the package's CommonJS build, through createRequire) the first time a count, encode or decode
 * is asked for, once per process. Same package, same encoding, same numbers as a static import.
 */
import { createRequire } from 'node:module';

interface O200k {
  countTokens(text: string): number;
  encode(text: string): number[];
  decode(tokens: number[]): string;
}

let encoding: O200k | undefined;

function o200k(): O200k {
  encoding ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as O200k;
  return encoding;
}

/** o200k tokens in `text`. */
export const countTokens = (text: string): number => o200k().countTokens(text);
/** o200k token ids of `text`. */
export const encode = (text: string): number[] => o200k().encode(text);
/** The text of o200k token ids. */
export const decode = (tokens: number[]): string => o200k().decode(tokens);

/**
 * Split `texts` into batches, in input order, of at most `maxBatch` texts and at most `budget` o200k tokens each, a
 * text counting `perText` tokens more than its own (a reranker sends the query with every passage). A text over the
 * budget alone still gets a batch of its own. With an infinite budget nothing is tokenised.
 */
export function batchByTokens(texts: readonly string[], maxBatch: number, budget = Infinity, perText = 0): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  let tok = 0;
  for (const t of texts) {
    const n = Number.isFinite(budget) ? perText + countTokens(t) : 0;
    if (cur.length && (cur.length >= maxBatch || tok + n > budget)) {
      out.push(cur);
      cur = [];
      tok = 0;
    }
    cur.push(t);
    tok += n;
  }
  if (cur.length) out.push(cur);
  return out;
}
