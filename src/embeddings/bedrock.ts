/**
 * Bedrock embedders through the AWS SDK's InvokeModel:
 *
 * - Titan Text Embeddings V2 (`amazon.titan-embed-text-v2:0`): ONE text per call, `dimensions`
 *   256 | 512 | 1024, `normalize: true`. Calls run `concurrency` at a time (default 4), order kept.
 *   Titan accepts up to 50,000 characters; longer texts are cut there (counted in `stats.truncated`).
 * - Cohere Embed v3 (`cohere.embed-english-v3`, `cohere.embed-multilingual-v3`): 1024-d, up to 96
 *   texts per call, each at most 2,048 characters. rankgate cuts longer texts to 2,048 characters
 *   itself (never splitting a surrogate pair), counts them in `stats.truncated` and reports them once
 *   per call through `onWarning`; `truncate: "END"` additionally lets Cohere drop tokens past its
 *   512-token limit. `input_type` is `search_document` for embedDocuments and `search_query` for
 *   embedQuery.
 *
 * Every returned vector is checked (finite, the model's dimension, not all zeros) and L2-normalised in a scaled way.
 * The body is read as a stream and given up once over embedAnswerCap (vector.ts) for the texts asked. Retries,
 * timeouts and errors: see bedrock-client.ts. A body that is not JSON, too large, lacks the vectors, or has the wrong
 * count, dimension or values is a BedrockCallError naming the model, what was wrong and (`textIndex`) the text.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import type { Embedder } from './types.ts';
import { embedAnswerCap, l2normalize, vectorProblem } from './vector.ts';
import { FAMILIES } from './catalog.ts';
import {
  BedrockCallError,
  bedrockEndpoint,
  bedrockSdk,
  createBedrockClient,
  mapLimit,
  parseJsonBody,
  withRetries,
  type BedrockClientOptions,
  type RetryInfo,
} from './bedrock-client.ts';

export interface BedrockEmbedderOptions extends BedrockClientOptions {
  /** Titan: calls in flight at once (default 4). */
  concurrency?: number;
  /** Notices such as "3 texts cut to 2,048 characters" (default: none; counts are in stats). */
  onWarning?: (message: string) => void;
}

export interface BedrockEmbedderStats extends RetryInfo {
  /** Successful InvokeModel calls. */
  calls: number;
  texts: number;
  /** Texts cut to the model's character limit before sending. */
  truncated: number;
  /** Input tokens as reported by the model (Titan reports them; Cohere does not). */
  inputTokens: number;
}

export interface BedrockEmbedder extends Embedder {
  readonly modelId: string;
  readonly stats: BedrockEmbedderStats;
}

export const TITAN_V2_MODEL_ID = 'amazon.titan-embed-text-v2:0';
export const TITAN_V2_MAX_CHARS = 50_000;
export const COHERE_V3_MODEL_IDS = {
  english: 'cohere.embed-english-v3',
  multilingual: 'cohere.embed-multilingual-v3',
} as const;
export const COHERE_MAX_TEXTS = 96;
export const COHERE_MAX_CHARS = 2048;

/** Cut to at most `max` UTF-16 units without splitting a surrogate pair. */
export function truncateChars(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const c = text.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** family, model, endpoint host and list price of a Bedrock embedder (recorded with its index variant). */
function bedrockIdentity(modelId: string, opts: BedrockClientOptions) {
  const endpoint = bedrockEndpoint(opts);
  const region = opts.region ?? process.env.AWS_BEDROCK_REGION ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION;
  let host = region ? `bedrock-runtime.${region}.amazonaws.com` : 'bedrock-runtime';
  try {
    if (endpoint) host = new URL(endpoint).host;
  } catch {
    /* the SDK reports a bad endpoint itself */
  }
  return { family: 'bedrock', model: modelId, endpoint: host, pricePerMTok: FAMILIES.bedrock.models[modelId]?.pricePerMTok };
}

function newStats(): BedrockEmbedderStats {
  return { calls: 0, texts: 0, truncated: 0, inputTokens: 0, attempts: 0, retries: 0, throttled: 0 };
}

function checkVector(modelId: string, v: unknown, dim: number, where: string, textIndex: number): number[] {
  const problem = vectorProblem(v, dim);
  if (problem) {
    const got = Array.isArray(v) ? `${v.length} values${v.every((x) => typeof x === 'number') ? '' : ' (not all numbers)'}` : typeof v;
    const why = problem.startsWith('is all zeros') ? `${where} ${problem}` : `${where} should be ${dim} finite numbers, got ${got}`;
    throw new BedrockCallError(`malformed response body from ${modelId}: ${why}`, { modelId, attempts: 1, code: 'MalformedResponse', textIndex });
  }
  return l2normalize(v as number[]);
}

/** A malformed answer for the text at `textIndex` (a one-text call): the error says which text. */
function forText<T>(p: Promise<T>, modelId: string, textIndex: number): Promise<T> {
  return p.catch((e: unknown) => {
    if (e instanceof BedrockCallError && e.code === 'MalformedResponse' && e.textIndex === undefined) {
      throw new BedrockCallError(e.message.replace('malformed response body:', `malformed response body from ${modelId}:`), { modelId, attempts: e.attempts, code: e.code, textIndex });
    }
    throw e;
  });
}

async function invoke(client: BedrockRuntimeClient, modelId: string, body: unknown, abortSignal: AbortSignal): Promise<Uint8Array | undefined> {
  const res = await client.send(
    new (bedrockSdk().InvokeModelCommand)({
      modelId,
      contentType: 'application/json',
      accept: 'application/json',
      body: new TextEncoder().encode(JSON.stringify(body)),
    }),
    { abortSignal },
  );
  return res.body;
}

export function createTitanEmbedder(dimension: 256 | 512 | 1024, opts: BedrockEmbedderOptions = {}): BedrockEmbedder {
  if (![256, 512, 1024].includes(dimension)) {
    throw new BedrockCallError(`Titan Text Embeddings V2 supports dimensions 256, 512 or 1024, not ${dimension}`, {
      modelId: TITAN_V2_MODEL_ID,
      attempts: 0,
      code: 'BadOption',
    });
  }
  const client = createBedrockClient({ maxResponseBytes: embedAnswerCap(1, dimension), ...opts });
  const stats = newStats();
  const modelId = TITAN_V2_MODEL_ID;
  const embedOne = async (text: string, textIndex = 0): Promise<number[]> => {
    const inputText = truncateChars(text, TITAN_V2_MAX_CHARS);
    if (inputText !== text) {
      stats.truncated += 1;
      opts.onWarning?.(`${modelId}: a ${text.length}-character text was cut to ${TITAN_V2_MAX_CHARS} characters`);
    }
    const body = await forText(withRetries(modelId, opts, (signal) => invoke(client, modelId, { inputText, dimensions: dimension, normalize: true }, signal), stats), modelId, textIndex);
    const json = (await forText(Promise.resolve().then(() => parseJsonBody(modelId, body)), modelId, textIndex)) as { embedding?: unknown; inputTextTokenCount?: unknown };
    const v = checkVector(modelId, json?.embedding, dimension, '"embedding"', textIndex);
    stats.calls += 1;
    stats.texts += 1;
    if (typeof json.inputTextTokenCount === 'number') stats.inputTokens += json.inputTextTokenCount;
    return v;
  };
  return {
    id: `bedrock:embeddings:${modelId}${dimension === 1024 ? '' : `@${dimension}`}`,
    ...bedrockIdentity(modelId, opts),
    modelId,
    dimension,
    maxBatch: 1,
    stats,
    embedDocuments: (texts) => mapLimit(texts, opts.concurrency ?? 4, (t, i) => embedOne(t, i)),
    embedQuery: (text) => embedOne(text),
  };
}

export function createCohereEmbedder(variant: 'english' | 'multilingual', opts: BedrockEmbedderOptions = {}): BedrockEmbedder {
  const dimension = 1024;
  const client = createBedrockClient({ maxResponseBytes: embedAnswerCap(COHERE_MAX_TEXTS, dimension), ...opts });
  const stats = newStats();
  const modelId = COHERE_V3_MODEL_IDS[variant];
  const embedBatch = async (texts: readonly string[], inputType: 'search_document' | 'search_query', offset = 0): Promise<number[][]> => {
    let cut = 0;
    const sent = texts.map((t) => {
      const s = truncateChars(t, COHERE_MAX_CHARS);
      if (s !== t) cut += 1;
      return s;
    });
    if (cut) {
      stats.truncated += cut;
      opts.onWarning?.(`${modelId}: ${cut} text${cut === 1 ? '' : 's'} cut to ${COHERE_MAX_CHARS} characters (Cohere Embed v3 limit)`);
    }
    const call = withRetries(modelId, opts, (signal) => invoke(client, modelId, { texts: sent, input_type: inputType, truncate: 'END' }, signal), stats);
    const body = await (sent.length === 1 ? forText(call, modelId, offset) : call);
    const json = (await (sent.length === 1 ? forText(Promise.resolve().then(() => parseJsonBody(modelId, body)), modelId, offset) : parseJsonBody(modelId, body))) as { embeddings?: unknown };
    // embeddings_floats: { embeddings: number[][] }; embeddings_by_type: { embeddings: { float: number[][] } }
    let vecs = json?.embeddings as unknown;
    if (vecs && !Array.isArray(vecs) && typeof vecs === 'object') vecs = (vecs as { float?: unknown }).float;
    if (!Array.isArray(vecs) || vecs.length !== sent.length) {
      throw new BedrockCallError(
        `malformed response body from ${modelId}: expected "embeddings" with ${sent.length} vectors, got ${Array.isArray(vecs) ? vecs.length : typeof vecs}`,
        { modelId, attempts: 1, code: 'MalformedResponse' },
      );
    }
    stats.calls += 1;
    stats.texts += sent.length;
    return vecs.map((v, i) => checkVector(modelId, v, dimension, `embeddings[${i}]`, offset + i));
  };
  return {
    id: `bedrock:embeddings:${modelId}`,
    ...bedrockIdentity(modelId, opts),
    modelId,
    dimension,
    maxBatch: COHERE_MAX_TEXTS,
    stats,
    async embedDocuments(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += COHERE_MAX_TEXTS) {
        out.push(...(await embedBatch(texts.slice(i, i + COHERE_MAX_TEXTS), 'search_document', i)));
      }
      return out;
    },
    async embedQuery(text) {
      return (await embedBatch([text], 'search_query'))[0]!;
    },
  };
}
