/**
 * Sending texts to an embedder for indexing: slices of `maxBatch` texts (one request, or one model call), up to
 * `parallel` slices in flight (an embedding pool's threads, src/embeddings/pool.ts), every vector checked, results in
 * input order. The slices depend only on the texts and maxBatch, never on the number of threads, so the vectors are
 * the same as a one-thread run's. Used by the ingest (pipeline.ts) and by `rankgate embed-cache build` (embed-shard.ts).
 */
import type { Embedder } from '../embeddings/types.ts';
import { UserError } from '../errors.ts';
import { mapLimit } from '../util/map-limit.ts';

export interface EmbedSlicesOptions {
  /** Told as each slice's vectors arrive (in completion order): its first text's index and its vectors. */
  onSlice?: (start: number, vectors: number[][]) => void | Promise<void>;
  /** Names the text at an index in an error (`chunk X of document Y`). */
  describe?: (index: number) => string;
  /** What the caller has not written when it fails (the end of the error line). */
  notWritten?: string;
  /** false: onSlice keeps what it needs and nothing is returned (a large corpus's vectors are not held twice). */
  keep?: boolean;
}

export async function embedSlices(embedder: Embedder, texts: readonly string[], opts: EmbedSlicesOptions = {}): Promise<number[][]> {
  const batch = Math.max(1, embedder.maxBatch || 1);
  const starts: number[] = [];
  for (let i = 0; i < texts.length; i += batch) starts.push(i);
  const parts = await mapLimit(starts, Math.max(1, Math.trunc(embedder.parallel ?? 1)), async (start) => {
    const slice = texts.slice(start, start + batch);
    let embs: number[][];
    try {
      embs = await embedder.embedDocuments(slice as string[]);
    } catch (e) {
      const err = e as Error & { code?: string; textIndex?: number };
      const describe = (i: number) => (opts.describe ? opts.describe(i) : `text ${i + 1}`);
      const notWritten = opts.notWritten ? `; ${opts.notWritten}` : '';
      // an embedding API's wrong answer (bad vector, index, size): name the text it was for; nothing of it is kept
      if ((err?.name === 'EmbedderCallError' || err?.name === 'BedrockCallError') && err.code === 'MalformedResponse') {
        const i = err.textIndex;
        const what = i !== undefined && i >= 0 && i < slice.length ? describe(start + i) : `${describe(start)}${slice.length > 1 ? ` (or one of the ${slice.length - 1} texts batched with it)` : ''}`;
        const who = err.name === 'BedrockCallError' ? `${embedder.id}${embedder.endpoint ? ` at ${embedder.endpoint}` : ''}: ` : '';
        throw new UserError(`embedder ${who}${err.message.replace(/\s+/g, ' ')}; answer for ${what}${notWritten}`);
      }
      // a thread of an embedding pool died or failed: say which texts; the caller fails closed
      if (err?.name !== 'EmbedWorkerError') throw e;
      throw new UserError(
        `embedder ${embedder.id}: ${err.message} while embedding ${describe(start)}${slice.length > 1 ? ` (or one of the ${slice.length - 1} texts batched with it)` : ''}` + notWritten,
      );
    }
    if (embs.length !== slice.length) throw new UserError(`embedder ${embedder.id}: returned ${embs.length} vectors for ${slice.length} texts`);
    for (const e of embs) {
      if (e.length !== embedder.dimension) throw new UserError(`embedder ${embedder.id}: returned a ${e.length}-d vector, expected ${embedder.dimension}`);
      if (!e.every(Number.isFinite)) throw new UserError(`embedder ${embedder.id}: returned a non-finite value`);
    }
    await opts.onSlice?.(start, embs);
    return opts.keep === false ? [] : embs;
  });
  return parts.flat();
}
