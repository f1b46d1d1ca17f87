/**
 * `createEmbedder(id, opts?)`: the one way to get an Embedder.
 *
 * ids:
 * - `use-lite`                    Universal Sentence Encoder Lite, 512-d, offline (default)
 * - `titan-v2-256|512|1024`       Amazon Titan Text Embeddings V2 on Bedrock (`titan-v2` = 1024)
 * - `cohere-v3-english`           Cohere Embed v3 English on Bedrock, 1024-d (`cohere-v3` = english)
 * - `cohere-v3-multilingual`      Cohere Embed v3 Multilingual on Bedrock, 1024-d
 *
 * Bedrock embedders take region and credentials from the standard AWS configuration
 * (AWS_REGION / AWS_PROFILE / ~/.aws), the endpoint from `opts.endpoint` or AWS_ENDPOINT_URL_BEDROCK_RUNTIME.
 */
import { UserError } from '../errors.ts';
import { didYouMean } from '../util/suggest.ts';
import type { Embedder } from './types.ts';
import { createUseLiteEmbedder } from './use-lite.ts';
import type { BedrockEmbedderOptions } from './bedrock.ts';

export type { Embedder } from './types.ts';
export { cosine, l2normalize } from './vector.ts';

export interface EmbedderOptions extends BedrockEmbedderOptions {
  /** USE-lite: texts per model call (default 64). */
  batchSize?: number;
}

export const EMBEDDER_IDS = [
  'use-lite',
  'titan-v2-256',
  'titan-v2-512',
  'titan-v2-1024',
  'cohere-v3-english',
  'cohere-v3-multilingual',
] as const;
export type EmbedderId = (typeof EMBEDDER_IDS)[number];

const ALIASES: Record<string, EmbedderId> = {
  'titan-v2': 'titan-v2-1024',
  'cohere-v3': 'cohere-v3-english',
};

/** Map an id or alias to its canonical id; throws UserError naming the known ids. */
export function resolveEmbedderId(id: string): EmbedderId {
  const canon = ALIASES[id] ?? id;
  if ((EMBEDDER_IDS as readonly string[]).includes(canon)) return canon as EmbedderId;
  throw new UserError(
    `unknown embedder "${id}"${didYouMean(id, [...EMBEDDER_IDS, ...Object.keys(ALIASES)], '"')} (expected one of ${EMBEDDER_IDS.join(', ')}; aliases: titan-v2 = titan-v2-1024, cohere-v3 = cohere-v3-english)`,
  );
}

/** Dimension of an embedder id without constructing it. */
export function embedderDimension(id: string): number {
  const canon = resolveEmbedderId(id);
  if (canon === 'use-lite') return 512;
  if (canon.startsWith('titan-v2-')) return Number(canon.slice('titan-v2-'.length));
  return 1024;
}

const useLiteMemo = new Map<number, Embedder>();

export async function createEmbedder(id: string = 'use-lite', opts: EmbedderOptions = {}): Promise<Embedder> {
  const canon = resolveEmbedderId(id);
  if (canon === 'use-lite') {
    const bs = opts.batchSize ?? 64;
    let e = useLiteMemo.get(bs);
    if (!e) {
      e = createUseLiteEmbedder({ batchSize: bs });
      useLiteMemo.set(bs, e);
    }
    return e;
  }
  const bedrock = await import('./bedrock.ts');
  if (canon.startsWith('titan-v2-')) {
    return bedrock.createTitanEmbedder(Number(canon.slice('titan-v2-'.length)) as 256 | 512 | 1024, opts);
  }
  return bedrock.createCohereEmbedder(canon === 'cohere-v3-english' ? 'english' : 'multilingual', opts);
}
