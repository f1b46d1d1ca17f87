/**
 * Embedder ids in promptfoo's own vocabulary, and what rankgate knows about each model.
 *
 *   use-lite                         Universal Sentence Encoder Lite, offline (the default)
 *   openai:embedding:MODEL           OpenAI /v1/embeddings and every OpenAI-compatible server (TEI, vLLM, Infinity, LiteLLM, ...)
 *   voyage:MODEL                     Voyage /v1/embeddings
 *   cohere:embedding:MODEL           Cohere v2 /v2/embed
 *   ollama:embeddings:MODEL          Ollama /api/embed
 *   bedrock:embeddings:MODEL         Amazon Bedrock InvokeModel (Titan Text Embeddings V2, Cohere Embed v3)
 *
 * `ID@N` asks for N dimensions (OpenAI text-embedding-3 `dimensions`, Voyage `output_dimension`, Cohere embed-v4
 * `output_dimension`, Titan v2 `dimensions`); for a model rankgate has no entry for, `@N` states the dimension the
 * server answers with. Without `@N` a known model has its default dimension and an unknown one is learned from the
 * first answer. The canonical id (what index variants and the embedding cache record) is the family prefix, the model
 * and `@N` when a dimension was asked for. Today's short names (`titan-v2-512`, `cohere-v3-english`, ...) are aliases.
 *
 * Limits and list prices (USD per million input tokens) are the vendors' published figures as of November 2026; a
 * price is only used for the estimate printed before a paid ingest. Pure: no I/O.
 */
import { UserError } from '../errors.ts';
import { didYouMean } from '../util/suggest.ts';

export type EmbedderFamily = 'use-lite' | 'openai' | 'voyage' | 'cohere' | 'ollama' | 'bedrock';

export interface ModelInfo {
  /** Default output dimension. */
  dimension: number;
  /** Dimensions the API can be asked for (absent: only the default). */
  dimensions?: readonly number[];
  /** USD per million input tokens (list price), when the vendor charges per token. */
  pricePerMTok?: number;
  /** Tokens one input may hold (longer inputs are truncated by the API or refused). */
  maxInputTokens?: number;
  /** Tokens summed over one request's inputs. */
  maxRequestTokens?: number;
}

export interface FamilyInfo {
  prefix: string;
  /** Inputs per request (the vendor's documented maximum). */
  maxBatch: number;
  /** Tokens summed over one request when the model has no figure of its own. */
  maxRequestTokens?: number;
  models: Record<string, ModelInfo>;
}

const OPENAI_DIMS_SMALL = [256, 512, 1024, 1536];
const OPENAI_DIMS_LARGE = [256, 512, 1024, 1536, 2048, 3072];
const VOYAGE_DIMS = [256, 512, 1024, 2048];

export const FAMILIES: Record<Exclude<EmbedderFamily, 'use-lite'>, FamilyInfo> = {
  // https://platform.openai.com/docs/api-reference/embeddings/create: <= 2048 inputs, <= 8192 tokens each,
  // <= 300,000 tokens summed per request; `dimensions` only for text-embedding-3 and later.
  openai: {
    prefix: 'openai:embedding:',
    maxBatch: 2048,
    maxRequestTokens: 300_000,
    models: {
      'text-embedding-3-small': { dimension: 1536, dimensions: OPENAI_DIMS_SMALL, pricePerMTok: 0.02, maxInputTokens: 8192 },
      'text-embedding-3-large': { dimension: 3072, dimensions: OPENAI_DIMS_LARGE, pricePerMTok: 0.13, maxInputTokens: 8192 },
      'text-embedding-ada-002': { dimension: 1536, pricePerMTok: 0.1, maxInputTokens: 8192 },
      // BGE-M3 behind an OpenAI-compatible server (TEI, vLLM, Infinity, LiteLLM, LM Studio): self-hosted, no list price
      'BAAI/bge-m3': { dimension: 1024, maxInputTokens: 8192 },
      'bge-m3': { dimension: 1024, maxInputTokens: 8192 },
    },
  },
  // https://docs.voyageai.com/reference/embeddings-api: <= 1,000 inputs; tokens summed per request 120K (voyage-3-large,
  // voyage-code-3, finance, law), 320K (voyage-3.5, voyage-3), 1M (the lite models); 32K tokens an input.
  voyage: {
    prefix: 'voyage:',
    maxBatch: 1000,
    maxRequestTokens: 120_000,
    models: {
      'voyage-3-large': { dimension: 1024, dimensions: VOYAGE_DIMS, pricePerMTok: 0.18, maxInputTokens: 32_000, maxRequestTokens: 120_000 },
      'voyage-3.5': { dimension: 1024, dimensions: VOYAGE_DIMS, pricePerMTok: 0.06, maxInputTokens: 32_000, maxRequestTokens: 320_000 },
      'voyage-3.5-lite': { dimension: 1024, dimensions: VOYAGE_DIMS, pricePerMTok: 0.02, maxInputTokens: 32_000, maxRequestTokens: 1_000_000 },
      'voyage-3': { dimension: 1024, pricePerMTok: 0.06, maxInputTokens: 32_000, maxRequestTokens: 320_000 },
      'voyage-3-lite': { dimension: 512, pricePerMTok: 0.02, maxInputTokens: 32_000, maxRequestTokens: 1_000_000 },
      'voyage-code-3': { dimension: 1024, dimensions: VOYAGE_DIMS, pricePerMTok: 0.18, maxInputTokens: 32_000, maxRequestTokens: 120_000 },
      'voyage-multilingual-2': { dimension: 1024, pricePerMTok: 0.12, maxInputTokens: 32_000, maxRequestTokens: 120_000 },
      'voyage-law-2': { dimension: 1024, pricePerMTok: 0.12, maxInputTokens: 16_000, maxRequestTokens: 120_000 },
      'voyage-finance-2': { dimension: 1024, pricePerMTok: 0.12, maxInputTokens: 32_000, maxRequestTokens: 120_000 },
    },
  },
  // https://docs.cohere.com/reference/embed (v2): <= 96 texts per call; v3 models embed 512 tokens a text (truncate END).
  cohere: {
    prefix: 'cohere:embedding:',
    maxBatch: 96,
    models: {
      'embed-english-v3.0': { dimension: 1024, pricePerMTok: 0.1, maxInputTokens: 512 },
      'embed-multilingual-v3.0': { dimension: 1024, pricePerMTok: 0.1, maxInputTokens: 512 },
      'embed-english-light-v3.0': { dimension: 384, pricePerMTok: 0.1, maxInputTokens: 512 },
      'embed-multilingual-light-v3.0': { dimension: 384, pricePerMTok: 0.1, maxInputTokens: 512 },
      'embed-v4.0': { dimension: 1536, dimensions: [256, 512, 1024, 1536], pricePerMTok: 0.12, maxInputTokens: 128_000 },
    },
  },
  // https://docs.ollama.com/api/embed: `input` takes a list; no documented cap, rankgate sends 64 a request.
  ollama: {
    prefix: 'ollama:embeddings:',
    maxBatch: 64,
    models: {
      'bge-m3': { dimension: 1024, maxInputTokens: 8192 },
      'nomic-embed-text': { dimension: 768, maxInputTokens: 8192 },
      'mxbai-embed-large': { dimension: 1024, maxInputTokens: 512 },
      'all-minilm': { dimension: 384, maxInputTokens: 256 },
      'snowflake-arctic-embed': { dimension: 1024, maxInputTokens: 512 },
      embeddinggemma: { dimension: 768, maxInputTokens: 2048 },
    },
  },
  // Bedrock: src/embeddings/bedrock.ts (Titan one text a call; Cohere v3 <= 96 texts, 2,048 characters each).
  bedrock: {
    prefix: 'bedrock:embeddings:',
    maxBatch: 96,
    models: {
      'amazon.titan-embed-text-v2:0': { dimension: 1024, dimensions: [256, 512, 1024], pricePerMTok: 0.02, maxInputTokens: 8192 },
      'cohere.embed-english-v3': { dimension: 1024, pricePerMTok: 0.1, maxInputTokens: 512 },
      'cohere.embed-multilingual-v3': { dimension: 1024, pricePerMTok: 0.1, maxInputTokens: 512 },
    },
  },
};

/** Today's short names, kept as aliases of the promptfoo-style ids. */
export const EMBEDDER_ALIASES: Readonly<Record<string, string>> = {
  'titan-v2': 'bedrock:embeddings:amazon.titan-embed-text-v2:0',
  'titan-v2-1024': 'bedrock:embeddings:amazon.titan-embed-text-v2:0',
  'titan-v2-512': 'bedrock:embeddings:amazon.titan-embed-text-v2:0@512',
  'titan-v2-256': 'bedrock:embeddings:amazon.titan-embed-text-v2:0@256',
  'cohere-v3': 'bedrock:embeddings:cohere.embed-english-v3',
  'cohere-v3-english': 'bedrock:embeddings:cohere.embed-english-v3',
  'cohere-v3-multilingual': 'bedrock:embeddings:cohere.embed-multilingual-v3',
};

/** Examples shown in messages: the offline default, one id per family and the aliases. */
export const EMBEDDER_EXAMPLES = [
  'use-lite',
  'openai:embedding:text-embedding-3-small',
  'openai:embedding:text-embedding-3-large',
  'openai:embedding:BAAI/bge-m3',
  'voyage:voyage-3-large',
  'voyage:voyage-3.5',
  'cohere:embedding:embed-english-v3.0',
  'cohere:embedding:embed-multilingual-v3.0',
  'ollama:embeddings:bge-m3',
  'bedrock:embeddings:amazon.titan-embed-text-v2:0',
  'bedrock:embeddings:cohere.embed-english-v3',
] as const;

export interface EmbedderSpec {
  /** Canonical id: what variants and the cache record (`voyage:voyage-3-large`, `openai:embedding:text-embedding-3-large@1024`). */
  id: string;
  family: EmbedderFamily;
  model: string;
  /** Dimension asked for with `@N` (undefined: the model's default). */
  requestedDimension?: number;
  /** Known dimension (requested or the model's default); undefined: learned from the first answer. */
  dimension?: number;
  /** What rankgate knows of the model (undefined: an unknown model, e.g. on an OpenAI-compatible server). */
  info?: ModelInfo;
}

function bad(id: string, why: string): never {
  const all = [...EMBEDDER_EXAMPLES, ...Object.keys(EMBEDDER_ALIASES)];
  throw new UserError(
    `unknown embedder "${id}": ${why}${didYouMean(id, all, '"')} (expected use-lite, openai:embedding:MODEL, voyage:MODEL, ` +
      `cohere:embedding:MODEL, ollama:embeddings:MODEL or bedrock:embeddings:MODEL, optionally ID@DIMENSIONS; ` +
      `aliases: ${Object.keys(EMBEDDER_ALIASES).join(', ')})`,
  );
}

/**
 * Parse an embedder id or alias into its spec; throws a UserError naming what was expected. The canonical id of the
 * result is stable: parseEmbedderId(spec.id).id === spec.id.
 */
export function parseEmbedderId(raw: string): EmbedderSpec {
  if (typeof raw !== 'string' || !raw.trim()) bad(String(raw), 'an embedder id is a non-empty string');
  const input = raw.trim();
  if (input === 'use-lite') return { id: 'use-lite', family: 'use-lite', model: 'universal-sentence-encoder-lite', dimension: 512, info: { dimension: 512 } };
  const id = EMBEDDER_ALIASES[input] ?? input;
  const family = (Object.keys(FAMILIES) as (keyof typeof FAMILIES)[]).find((f) => id.startsWith(FAMILIES[f].prefix));
  if (!family) bad(input, 'no such id or family prefix');
  const fam = FAMILIES[family];
  let model = id.slice(fam.prefix.length);
  let requestedDimension: number | undefined;
  const at = /@(\d+)$/.exec(model);
  if (at) {
    requestedDimension = Number(at[1]);
    model = model.slice(0, at.index);
    if (!(requestedDimension >= 1 && requestedDimension <= 16_000)) bad(input, `@${at[1]}: a dimension from 1 to 16000 (pgvector's limit)`);
  }
  if (!model) bad(input, `${fam.prefix} needs a model name after it`);
  const info = fam.models[model] ?? fam.models[model.replace(/:latest$/, '')];
  if (family === 'bedrock' && !info) {
    bad(input, `Bedrock models rankgate embeds with: ${Object.keys(fam.models).join(', ')}`);
  }
  if (info && requestedDimension !== undefined && requestedDimension !== info.dimension) {
    if (!info.dimensions) bad(input, `${model} gives ${info.dimension} dimensions only`);
    if (!info.dimensions.includes(requestedDimension)) bad(input, `${model} gives ${info.dimensions.join(', ')} dimensions, not ${requestedDimension}`);
  }
  // the model's default dimension asked for explicitly is the same embedder: one canonical id
  const explicit = requestedDimension !== undefined && !(info && requestedDimension === info.dimension);
  return {
    id: `${fam.prefix}${model}${explicit ? `@${requestedDimension}` : ''}`,
    family,
    model,
    requestedDimension: explicit ? requestedDimension : undefined,
    dimension: requestedDimension ?? info?.dimension,
    info,
  };
}

/** A column label for an embedder: model and dimension (`voyage-3-large 1024-d`; Ollama's models end in ` ollama`). */
export function embedderLabel(id: string, dimension?: number): string {
  const s = parseEmbedderId(id);
  const dim = dimension ?? s.dimension;
  return `${s.family === 'use-lite' ? 'use-lite' : s.model} ${dim ? `${dim}-d` : 'dim ?'}${s.family === 'ollama' ? ' ollama' : ''}`;
}
