/**
 * `createEmbedder(id, opts?)`: the one way to get an Embedder. Ids are promptfoo's (catalog.ts):
 *
 * - `use-lite`                       Universal Sentence Encoder Lite, 512-d, offline (default)
 * - `openai:embedding:MODEL[@N]`     OpenAI and OpenAI-compatible servers (TEI, vLLM, Infinity, LiteLLM: BGE-M3 ...)
 * - `voyage:MODEL[@N]`               Voyage
 * - `cohere:embedding:MODEL[@N]`     Cohere v2
 * - `ollama:embeddings:MODEL`        Ollama
 * - `bedrock:embeddings:MODEL[@N]`   Bedrock: Titan Text Embeddings V2, Cohere Embed v3 (aliases titan-v2[-256|-512|-1024],
 *                                    cohere-v3[-english|-multilingual])
 *
 * HTTP embedders (remote.ts) read keys and base URLs from the environment under promptfoo's names; Bedrock takes
 * region and credentials from the standard AWS configuration, the endpoint from `opts.endpoint` or
 * AWS_ENDPOINT_URL_BEDROCK_RUNTIME.
 */
import type { Embedder, EmbedInputType } from './types.ts';
import { createUseLiteEmbedder, USE_LITE_DIMENSION, USE_LITE_ID } from './use-lite.ts';
import { EmbedPool } from './pool.ts';
import type { BedrockEmbedderOptions } from './bedrock.ts';
import { EMBEDDER_ALIASES, EMBEDDER_EXAMPLES, parseEmbedderId } from './catalog.ts';
import type { HttpEmbedderOptions } from './remote.ts';

export type { Embedder, EmbedInputType } from './types.ts';
export { cosine, l2normalize } from './vector.ts';
export { EMBEDDER_ALIASES, embedderLabel, parseEmbedderId, type EmbedderSpec } from './catalog.ts';
export { EmbedderCallError } from './http.ts';
export { EmbedPool, EmbedWorkerError, embedWorkerCount } from './pool.ts';

export interface EmbedderOptions extends BedrockEmbedderOptions, Omit<HttpEmbedderOptions, 'timeoutMs' | 'callTimeoutMs' | 'concurrency'> {
  /** USE-lite: texts per model call (default 64). HTTP: inputs per request (default: the vendor's limit). */
  batchSize?: number;
  /**
   * USE-lite: worker threads embedding documents, each with its own model (~300 MB); 1 or absent: in this process.
   * A pool is the caller's to close(). Queries are embedded the same either way. (embedWorkerCount reads the knob.)
   */
  workers?: number;
}

/** Example ids (one per family, the DES-058 models) for messages; any well-formed family id is accepted. */
export const EMBEDDER_IDS: readonly string[] = EMBEDDER_EXAMPLES;

/** Map an id or alias to its canonical id; throws UserError naming what is expected. */
export function resolveEmbedderId(id: string): string {
  return parseEmbedderId(id).id;
}

/** Is this an id or alias rankgate can build an embedder for? (No I/O, no credentials checked.) */
export function isEmbedderId(id: unknown): boolean {
  if (typeof id !== 'string') return false;
  try {
    parseEmbedderId(id);
    return true;
  } catch {
    return false;
  }
}

/** Dimension of an embedder id without constructing it; undefined for a model known only from its answers. */
export function embedderDimension(id: string): number | undefined {
  return parseEmbedderId(id).dimension;
}

/** The vendors' own endpoints (hosts), where a model name names one model: OpenAI, Voyage, Cohere, Ollama's local
 *  default, Bedrock's regional endpoints. */
const VENDOR_HOST = /^(api\.openai\.com|api\.voyageai\.com|api\.cohere\.(com|ai)|127\.0\.0\.1:11434|localhost:11434|bedrock-runtime(-fips)?\.[a-z0-9-]+\.amazonaws\.com)$/i;

/**
 * The embedding-cache key of an embedder for one input type: what produced a vector. The embedder id (which names the
 * model and any dimension asked for), dimension and input type, e.g. `voyage:voyage-3-large|1024|document`; and the
 * endpoint's host when it is not the vendor's own (`openai:embedding:BAAI/bge-m3|1024|document|tei.internal:8080`): a
 * self-hosted or proxied server under the same model name is another producer, whose vectors are never reused for
 * this one. With the text's sha256 it identifies a vector.
 */
export function embeddingCacheKey(embedder: Pick<Embedder, 'id' | 'dimension' | 'endpoint'>, inputType: EmbedInputType = 'document'): string {
  const host = atVendor(embedder) ? '' : `|${embedder.endpoint}`;
  return `${embedder.id}|${embedder.dimension}|${inputType}${host}`;
}

/** Is the embedder offline or at its vendor's own endpoint (its cache key then names no host, and older keys apply)? */
export function atVendor(embedder: Pick<Embedder, 'endpoint'>): boolean {
  return !embedder.endpoint || VENDOR_HOST.test(embedder.endpoint);
}

/** Keys an older rankgate cached the same document vectors under (`use-lite`, `titan-v2-512`, ...): read, never written. */
export function legacyCacheKeys(id: string): string[] {
  const canon = resolveEmbedderId(id);
  return [...(canon === 'use-lite' ? ['use-lite'] : []), ...Object.entries(EMBEDDER_ALIASES).filter(([, c]) => c === canon).map(([a]) => a)];
}

const useLiteMemo = new Map<number, Embedder>();

export async function createEmbedder(id: string = 'use-lite', opts: EmbedderOptions = {}): Promise<Embedder> {
  const spec = parseEmbedderId(id);
  switch (spec.family) {
    case 'use-lite': {
      const bs = opts.batchSize ?? 64;
      if (opts.workers !== undefined && opts.workers > 1) {
        return new EmbedPool({ workers: opts.workers, id: USE_LITE_ID, dimension: USE_LITE_DIMENSION, batchSize: bs, family: 'use-lite', model: spec.model });
      }
      let e = useLiteMemo.get(bs);
      if (!e) {
        e = { ...createUseLiteEmbedder({ batchSize: bs }), family: 'use-lite', model: spec.model, endpoint: '' };
        useLiteMemo.set(bs, e);
      }
      return e;
    }
    case 'bedrock': {
      const bedrock = await import('./bedrock.ts');
      if (spec.model.startsWith('amazon.titan-embed-text-v2')) {
        return bedrock.createTitanEmbedder((spec.dimension ?? 1024) as 256 | 512 | 1024, opts);
      }
      return bedrock.createCohereEmbedder(spec.model === 'cohere.embed-english-v3' ? 'english' : 'multilingual', opts);
    }
    default: {
      const { createHttpEmbedder } = await import('./remote.ts');
      const { timeoutMs, callTimeoutMs, concurrency, batchSize, workers: _workers, ...rest } = opts;
      return createHttpEmbedder(spec, { ...rest, timeoutMs, callTimeoutMs, concurrency, maxBatch: batchSize ?? opts.maxBatch });
    }
  }
}
