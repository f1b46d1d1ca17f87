/**
 * Embedders over HTTP APIs with plain `fetch` (http.ts), batched within each vendor's documented limits and with
 * the document/query input types retrieval needs:
 *
 * | family | request | input types | credentials and endpoint |
 * |---|---|---|---|
 * | openai | POST {base}/embeddings `{model, input: [..], encoding_format: float, dimensions?}` | none (the models have none) | OPENAI_API_KEY; OPENAI_BASE_URL or OPENAI_API_BASE_URL (default https://api.openai.com/v1) |
 * | voyage | POST {base}/embeddings `{model, input: [..], input_type, output_dimension?, truncation: true}` | document / query | VOYAGE_API_KEY; VOYAGE_API_BASE_URL (default https://api.voyageai.com/v1) |
 * | cohere | POST {base}/v2/embed `{model, texts: [..], input_type, embedding_types: [float], truncate: END, output_dimension?}` | search_document / search_query | COHERE_API_KEY; COHERE_BASE_URL (default https://api.cohere.com) |
 * | ollama | POST {base}/api/embed `{model, input: [..], truncate: true, dimensions?}` | none | OLLAMA_BASE_URL (default http://127.0.0.1:11434); OLLAMA_API_KEY if the server wants one |
 *
 * A batch holds at most the family's input count and, by o200k token estimate, 3/4 of the model's tokens per request
 * (the vendors' own tokenizers count differently). Batches run `concurrency` at a time (default 2), order kept.
 * Every vector is checked (count, finite numbers, dimension, not all zeros) and L2-normalised in a scaled way (values
 * of 1e200 normalise like any other). OpenAI's and Voyage's `data[].index` must be present, distinct and in range.
 * The answer is read as a stream and given up once over `embedAnswerCap` (1 MB plus 96 bytes per value asked for).
 * An answer with the wrong number of vectors, an empty `data`, a bad `index`, a vector of another dimension, all zeros
 * or not finite, an oversized body or a body without the vectors is an EmbedderCallError (code 'MalformedResponse')
 * naming the embedder, the endpoint, what was wrong and (`textIndex`) the text; it is not retried.
 */
import { batchByTokens } from '../util/tokens.ts';
import type { Embedder, EmbedInputType } from './types.ts';
import { embedAnswerCap, l2normalize, vectorProblem } from './vector.ts';
import { mapLimit } from './bedrock-client.ts';
import { FAMILIES, type EmbedderSpec } from './catalog.ts';
import { EmbedderCallError, displayUrl, postJson, urlHost, type HttpCallOptions, type HttpCallStats } from './http.ts';

export interface HttpEmbedderOptions extends HttpCallOptions {
  /** Environment to read keys and base URLs from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Base URL (overrides the environment). */
  baseUrl?: string;
  /** API key (overrides the environment). */
  apiKey?: string;
  /** Requests in flight at once (default 2). */
  concurrency?: number;
  /** Inputs per request at most (default: the vendor's limit; 1 = one text per request). */
  maxBatch?: number;
  /** Largest answer read per request, bytes (default embedAnswerCap: 1 MB plus 96 bytes per value asked for). */
  maxResponseBytes?: number;
}

export interface HttpEmbedderStats extends HttpCallStats {
  /** Successful requests. */
  requests: number;
  texts: number;
  /** Input tokens as the API reported them (0 when it does not). */
  inputTokens: number;
}

export interface HttpEmbedder extends Embedder {
  readonly stats: HttpEmbedderStats;
  /** Full URL the embedder posts to. */
  readonly url: string;
}

type Family = 'openai' | 'voyage' | 'cohere' | 'ollama';

interface Endpoint {
  base: string;
  key?: string;
  keyName?: string;
  baseName: string;
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/** Where each family reads its base URL and key (promptfoo's names), and its default base. */
const ENV_NAMES: Record<Family, { bases: string[]; default: string; key: string }> = {
  openai: { bases: ['OPENAI_BASE_URL', 'OPENAI_API_BASE_URL'], default: 'https://api.openai.com/v1', key: 'OPENAI_API_KEY' },
  voyage: { bases: ['VOYAGE_API_BASE_URL'], default: 'https://api.voyageai.com/v1', key: 'VOYAGE_API_KEY' },
  cohere: { bases: ['COHERE_BASE_URL'], default: 'https://api.cohere.com', key: 'COHERE_API_KEY' },
  ollama: { bases: ['OLLAMA_BASE_URL'], default: 'http://127.0.0.1:11434', key: 'OLLAMA_API_KEY' },
};

function endpointFor(family: Family, env: NodeJS.ProcessEnv, opts: HttpEmbedderOptions): Endpoint {
  const pick = (...names: string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');
  const names = ENV_NAMES[family];
  let base = trimSlash(opts.baseUrl ?? pick(...names.bases) ?? names.default);
  if (family === 'cohere') base = base.replace(/\/v[12]$/, ''); // the base, without the API version
  return { base, key: opts.apiKey ?? pick(names.key), keyName: names.key, baseName: names.bases[0]! };
}

const PATH: Record<Family, string> = { openai: '/embeddings', voyage: '/embeddings', cohere: '/v2/embed', ollama: '/api/embed' };

/** The request body for a batch. */
function requestBody(family: Family, spec: EmbedderSpec, texts: string[], inputType: EmbedInputType): Record<string, unknown> {
  const dim = spec.requestedDimension;
  switch (family) {
    case 'openai':
      return { model: spec.model, input: texts, encoding_format: 'float', ...(dim !== undefined && spec.info ? { dimensions: dim } : {}) };
    case 'voyage':
      return { model: spec.model, input: texts, input_type: inputType, truncation: true, ...(dim !== undefined ? { output_dimension: dim } : {}) };
    case 'cohere':
      return {
        model: spec.model,
        texts,
        input_type: inputType === 'query' ? 'search_query' : 'search_document',
        embedding_types: ['float'],
        truncate: 'END',
        ...(dim !== undefined ? { output_dimension: dim } : {}),
      };
    case 'ollama':
      return { model: spec.model, input: texts, truncate: true, ...(dim !== undefined && spec.info ? { dimensions: dim } : {}) };
  }
}

/**
 * The vectors (in input order) and reported tokens out of an answer; undefined vectors = the field is missing.
 * OpenAI and Voyage document `data[].index` (the input each vector belongs to, rows in any order): every row must
 * carry an integer index, all distinct and below the number of texts, else the answer is refused (a string: why),
 * never matched to texts by position.
 */
function readAnswer(family: Family, json: unknown, count: number): { vectors: unknown; tokens?: number; bad?: { why: string; row: number } } {
  const j = (json && typeof json === 'object' ? json : {}) as Record<string, any>;
  switch (family) {
    case 'openai':
    case 'voyage': {
      if (!Array.isArray(j.data)) return { vectors: undefined };
      const rows = j.data as { embedding?: unknown; index?: unknown }[];
      const tokens = j.usage?.total_tokens ?? j.usage?.prompt_tokens;
      const vectors = new Array<unknown>(rows.length);
      const seen = new Map<number, number>();
      for (let r = 0; r < rows.length; r++) {
        const idx = rows[r]?.index;
        if (typeof idx !== 'number' || !Number.isInteger(idx)) return { vectors, tokens, bad: { why: `data[${r}].index is missing or not an integer (${JSON.stringify(idx ?? null)})`, row: r } };
        if (idx < 0 || idx >= count) return { vectors, tokens, bad: { why: `data[${r}].index ${idx} is out of range (${count} text${count === 1 ? '' : 's'} sent)`, row: r } };
        if (seen.has(idx)) return { vectors, tokens, bad: { why: `data[${r}].index ${idx} repeats data[${seen.get(idx)}].index`, row: idx } };
        seen.set(idx, r);
        vectors[idx] = rows[r]!.embedding;
      }
      return { vectors, tokens };
    }
    case 'cohere': {
      const e = j.embeddings;
      const v = Array.isArray(e) ? e : e && typeof e === 'object' ? e.float : undefined;
      return { vectors: v, tokens: j.meta?.billed_units?.input_tokens };
    }
    case 'ollama':
      return { vectors: j.embeddings, tokens: j.prompt_eval_count };
  }
}

const FIELD: Record<Family, string> = { openai: '"data"', voyage: '"data"', cohere: '"embeddings.float"', ollama: '"embeddings"' };

export function createHttpEmbedder(spec: EmbedderSpec, opts: HttpEmbedderOptions = {}): HttpEmbedder {
  const family = spec.family as Family;
  if (!(family in PATH)) throw new Error(`createHttpEmbedder: not an HTTP family: ${spec.family}`);
  const env = opts.env ?? process.env;
  const ep = endpointFor(family, env, opts);
  const url = ep.base + PATH[family];
  const config = (why: string): never => {
    throw new EmbedderCallError(`${spec.id} at ${displayUrl(url)}: ${why}`, { embedder: spec.id, endpoint: displayUrl(url), attempts: 0, code: 'Config' });
  };
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new EmbedderCallError(`${spec.id}: ${ep.baseName} is not an http(s) URL`, { embedder: spec.id, endpoint: '', attempts: 0, code: 'Config' });
  }
  // a key is needed by the vendors' own services; an OpenAI-compatible or Ollama server may need none
  const keyRequired = family === 'voyage' || family === 'cohere' || (family === 'openai' && urlHost(url) === 'api.openai.com');
  if (keyRequired && !ep.key) config(`${ep.keyName} is not set`);
  const headers: Record<string, string> = ep.key ? { authorization: `Bearer ${ep.key}` } : {};
  const fam = FAMILIES[family];
  const maxBatch = Math.max(1, Math.min(opts.maxBatch ?? fam.maxBatch, fam.maxBatch));
  const tokenBudget = Math.floor(0.75 * (spec.info?.maxRequestTokens ?? fam.maxRequestTokens ?? Infinity));
  const stats: HttpEmbedderStats = { requests: 0, texts: 0, inputTokens: 0, attempts: 0, retries: 0, throttled: 0 };
  let dimension = spec.dimension ?? 0;

  const malformed = (why: string, textIndex?: number): never => {
    throw new EmbedderCallError(`${spec.id} at ${displayUrl(url)}: malformed answer: ${why}`, {
      embedder: spec.id,
      endpoint: displayUrl(url),
      attempts: 1,
      code: 'MalformedResponse',
      textIndex,
    });
  };

  /** One request's vectors, checked and normalised; `offset`: the first text's position in the caller's call. */
  const embedBatch = async (texts: string[], inputType: EmbedInputType, offset = 0): Promise<number[][]> => {
    const maxResponseBytes = opts.maxResponseBytes ?? embedAnswerCap(texts.length, dimension);
    const json = await postJson({ embedder: spec.id, url, headers, body: requestBody(family, spec, texts, inputType), secrets: [ep.key], maxResponseBytes }, opts, stats).catch(
      (e: unknown) => {
        // a wrong answer for a one-text request is that text's
        if (e instanceof EmbedderCallError && e.code === 'MalformedResponse' && texts.length === 1 && e.textIndex === undefined) {
          throw new EmbedderCallError(e.message, { embedder: e.embedder, endpoint: e.endpoint, attempts: e.attempts, code: e.code, status: e.status, textIndex: offset });
        }
        throw e;
      },
    );
    const answer = readAnswer(family, json, texts.length);
    const tokens = answer.tokens;
    if (answer.bad) malformed(answer.bad.why, offset + answer.bad.row);
    if (!Array.isArray(answer.vectors)) malformed(`no ${FIELD[family]} list of vectors`);
    const vectors = answer.vectors as unknown[];
    if (vectors.length === 0) malformed(`${FIELD[family]} is empty, expected ${texts.length} vector${texts.length === 1 ? '' : 's'}`);
    if (vectors.length !== texts.length) malformed(`${vectors.length} vectors for ${texts.length} texts`);
    const out = vectors.map((v: unknown, i: number) => {
      const first = vectorProblem(v);
      if (first) malformed(`vector ${i} ${first}`, offset + i);
      const vec = v as number[];
      if (!dimension) dimension = vec.length; // an unknown model: its first answer sets the dimension
      if (vec.length !== dimension) {
        malformed(
          `vector ${i} has ${vec.length} dimensions, expected ${dimension} (${spec.requestedDimension !== undefined ? `asked for @${spec.requestedDimension}` : spec.info ? `${spec.model}'s dimension` : 'the dimension of its earlier answers'})`,
          offset + i,
        );
      }
      return l2normalize(vec);
    });
    stats.requests += 1;
    stats.texts += texts.length;
    if (typeof tokens === 'number' && Number.isFinite(tokens)) stats.inputTokens += tokens;
    return out;
  };

  /** Batches within the input count and the token budget (by o200k estimate), in input order. */
  const batches = (texts: readonly string[]): string[][] => batchByTokens(texts, maxBatch, tokenBudget);

  // Empty inputs are refused by OpenAI ("cannot be an empty string") and give no vector on some servers: send a space.
  const prepare = (t: string) => (t.trim() ? t : ' ');

  return {
    id: spec.id,
    get dimension() {
      return dimension;
    },
    maxBatch,
    family: spec.family,
    model: spec.model,
    endpoint: urlHost(url),
    url,
    pricePerMTok: spec.info?.pricePerMTok,
    stats,
    async init() {
      if (!dimension) await embedBatch(['dimension probe'], 'query');
    },
    async embedDocuments(texts) {
      if (!texts.length) return [];
      let at = 0;
      const withOffsets = batches(texts.map(prepare)).map((b) => ({ b, offset: (at += b.length) - b.length }));
      const parts = await mapLimit(withOffsets, opts.concurrency ?? 2, ({ b, offset }) => embedBatch(b, 'document', offset));
      return parts.flat();
    },
    async embedQuery(text) {
      return (await embedBatch([prepare(text)], 'query'))[0]!;
    },
  };
}
