/**
 * Recording fakes of four embedding HTTP APIs on 127.0.0.1, built from the vendors' public API references:
 *
 * - OpenAI `POST /v1/embeddings` (https://platform.openai.com/docs/api-reference/embeddings/create): body
 *   `{model, input: string | string[], encoding_format?, dimensions?}`; `input` at most 2,048 items, none empty;
 *   `dimensions` only for text-embedding-3 models; `Authorization: Bearer KEY`; answer
 *   `{object: "list", data: [{object: "embedding", index, embedding}], model, usage: {prompt_tokens, total_tokens}}`.
 *   The same shape is served by OpenAI-compatible servers (TEI, vLLM, Infinity, LiteLLM) for models such as BAAI/bge-m3.
 * - Voyage `POST /v1/embeddings` (https://docs.voyageai.com/reference/embeddings-api): body
 *   `{model, input, input_type: null | "query" | "document", truncation?, output_dimension?}`; at most 1,000 inputs;
 *   `Authorization: Bearer KEY`; answer `{object: "list", data: [{object, embedding, index}], model, usage: {total_tokens}}`.
 * - Cohere v2 `POST /v2/embed` (https://docs.cohere.com/reference/embed): body `{model, texts, input_type
 *   (search_document | search_query | classification | clustering), embedding_types: ["float"], truncate?,
 *   output_dimension?}`; at most 96 texts; `Authorization: Bearer KEY`; answer `{id, embeddings: {float: [[...]]},
 *   texts, meta: {billed_units: {input_tokens}}, response_type: "embeddings_by_type"}`.
 * - Ollama `POST /api/embed` (https://docs.ollama.com/api/embed, github.com/ollama/ollama docs/api.md "Generate
 *   Embeddings"): body `{model, input: string | string[], truncate?, dimensions?}`; no key; answer
 *   `{model, embeddings: [[...]], total_duration, load_duration, prompt_eval_count}`; an unknown model is a 404
 *   `{"error": "model \"x\" not found, try pulling it first"}`.
 *
 * Vectors are feature-hashed bags of words (lower-cased words, each to one signed coordinate), so texts that share
 * words are close and a semantic search through the fake finds the chunks that hold the query's words. The OpenAI and
 * Voyage fakes return `data` in reverse order (clients must use `index`). Requests over a vendor's limits, without the
 * key or with a wrong body are refused as the vendor does (400/401/404/422).
 *
 * One-shot replies queued with `enqueue` come first: `rateLimited(s)`, `serverError(503)`, `malformed()`,
 * `wrongDimension(n)`, `emptyData()`, `stall(ms)`, `{transform}` (the normal answer rewritten), or any {status, headers,
 * body, delayMs}.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';

export type Vendor = 'openai' | 'voyage' | 'cohere' | 'ollama';

export const FAKE_KEYS: Record<Vendor, string> = {
  openai: 'sk-fake-openai-0123456789abcdef',
  voyage: 'pa-fake-voyage-0123456789abcdef',
  cohere: 'co-fake-cohere-0123456789abcdef',
  ollama: 'ol-fake-ollama-0123456789abcdef',
};

/** Models each fake serves, with their default dimension. */
export const FAKE_MODELS: Record<Vendor, Record<string, number>> = {
  openai: { 'text-embedding-3-small': 1536, 'text-embedding-3-large': 3072, 'text-embedding-ada-002': 1536, 'BAAI/bge-m3': 1024 },
  voyage: { 'voyage-3-large': 1024, 'voyage-3.5': 1024, 'voyage-3-lite': 512 },
  cohere: { 'embed-english-v3.0': 1024, 'embed-multilingual-v3.0': 1024, 'embed-v4.0': 1536 },
  ollama: { 'bge-m3': 1024, 'nomic-embed-text': 768, 'my-own-embedder': 640 },
};

export interface EmbedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: any;
  /** The texts of the request, whatever the vendor calls the field. */
  texts: string[];
  status?: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** Object -> JSON; string -> sent verbatim. */
  body?: unknown;
  delayMs?: number;
  /** Answer normally but with vectors of this dimension. */
  dimension?: number;
  /** Answer normally but with no vectors. */
  empty?: boolean;
  /** Answer normally, then rewrite the answer body (a hostile API: drop or repeat `index`, zero or huge vectors). */
  transform?: (body: any, req: EmbedRequest) => unknown;
}

export interface FakeEmbeddingApi {
  readonly vendor: Vendor;
  /** The base URL the client is given (OPENAI_BASE_URL, VOYAGE_API_BASE_URL, COHERE_BASE_URL, OLLAMA_BASE_URL). */
  readonly baseUrl: string;
  readonly key: string;
  readonly requests: EmbedRequest[];
  enqueue(...replies: Reply[]): void;
  clear(): void;
  close(): Promise<void>;
}

export const rateLimited = (retryAfterSec = 0): Reply => ({
  status: 429,
  headers: { 'retry-after': String(retryAfterSec) },
  body: { error: { message: 'Rate limit reached, please retry', type: 'requests' } },
});
export const serverError = (status = 503): Reply => ({ status, body: { message: `fake ${status}` } });
export const malformed = (): Reply => ({ status: 200, body: '{"data": [{"embedding": [0.1, 0.2' });
export const wrongDimension = (dimension = 7): Reply => ({ dimension });
export const emptyData = (): Reply => ({ empty: true });
export const stall = (ms: number): Reply => ({ delayMs: ms, body: {} });

const WORD = /[\p{L}\p{N}]+/gu;

const wordHashes = new Map<string, number>();
/** First 32 bits of the word's sha256 (remembered: a corpus repeats its words). */
function wordHash(w: string): number {
  let h = wordHashes.get(w);
  if (h === undefined) {
    h = createHash('sha256').update(w).digest().readUInt32BE(0);
    if (wordHashes.size < 100_000) wordHashes.set(w, h);
  }
  return h;
}

/** Feature-hashed bag of words: each word adds ±1 to one coordinate (sha256 of the word). Never the zero vector. */
export function bagOfWordsVector(text: string, dim: number): number[] {
  const v = new Array<number>(dim).fill(0);
  for (const w of text.toLowerCase().match(WORD) ?? []) {
    const h = wordHash(w);
    v[h % dim]! += h & 0x80000000 ? 1 : -1;
  }
  v[0]! += 0.01;
  return v;
}

const words = (texts: string[]) => texts.reduce((s, t) => s + (t.match(WORD)?.length ?? 0), 0);

function vendorError(vendor: Vendor, status: number, message: string): Reply {
  if (vendor === 'ollama') return { status, body: { error: message } };
  if (vendor === 'cohere') return { status, body: { message } };
  if (vendor === 'voyage') return { status, body: { detail: message } };
  return { status, body: { error: { message, type: 'invalid_request_error' } } };
}

function answer(vendor: Vendor, req: EmbedRequest, model: string, dim: number, vecs: number[][]): unknown {
  const data = vecs.map((embedding, index) => ({ object: 'embedding', index, embedding })).reverse();
  switch (vendor) {
    case 'openai':
      return { object: 'list', data, model, usage: { prompt_tokens: words(req.texts), total_tokens: words(req.texts) } };
    case 'voyage':
      return { object: 'list', data, model, usage: { total_tokens: words(req.texts) } };
    case 'cohere':
      return { id: 'fake', embeddings: { float: vecs }, texts: req.texts, meta: { api_version: { version: '2' }, billed_units: { input_tokens: words(req.texts) } }, response_type: 'embeddings_by_type' };
    case 'ollama':
      return { model, embeddings: vecs, total_duration: 1, load_duration: 0, prompt_eval_count: words(req.texts), dimension: dim };
  }
}

/** The vendor's own reply to a request (validation as documented, then vectors). */
function defaultReply(vendor: Vendor, key: string, models: Record<string, number>, req: EmbedRequest, override?: Reply): Reply {
  const path = { openai: '/v1/embeddings', voyage: '/v1/embeddings', cohere: '/v2/embed', ollama: '/api/embed' }[vendor];
  if (req.path !== path) return vendorError(vendor, 404, `no route ${req.path}`);
  if (vendor !== 'ollama' && req.headers.authorization !== `Bearer ${key}`) return vendorError(vendor, 401, 'Incorrect API key provided');
  const b = req.body;
  if (!b || typeof b !== 'object') return vendorError(vendor, 400, 'body is not JSON');
  const model = String(b.model ?? '');
  if (!(model in models)) return vendorError(vendor, 404, vendor === 'ollama' ? `model "${model}" not found, try pulling it first` : `model ${model} does not exist`);
  const texts = req.texts;
  const max = { openai: 2048, voyage: 1000, cohere: 96, ollama: 100_000 }[vendor];
  if (!texts.length || texts.length > max) return vendorError(vendor, 400, `between 1 and ${max} inputs, got ${texts.length}`);
  if (vendor === 'openai' && texts.some((t) => t === '')) return vendorError(vendor, 400, "'$.input' is invalid: an input cannot be an empty string");
  if (vendor === 'voyage' && ![undefined, null, 'query', 'document'].includes(b.input_type)) return vendorError(vendor, 400, `input_type ${b.input_type}`);
  if (vendor === 'cohere') {
    if (!['search_document', 'search_query', 'classification', 'clustering'].includes(b.input_type)) return vendorError(vendor, 400, 'input_type is required');
    if (!Array.isArray(b.embedding_types) || !b.embedding_types.includes('float')) return vendorError(vendor, 400, 'this fake answers embedding_types [float]');
  }
  let dim = models[model]!;
  const asked = b.dimensions ?? b.output_dimension;
  if (asked !== undefined) {
    if (vendor === 'openai' && !model.startsWith('text-embedding-3')) return vendorError(vendor, 400, 'This model does not support specifying dimensions.');
    if (!Number.isInteger(asked) || asked < 1 || asked > dim) return vendorError(vendor, 400, `dimensions ${asked}`);
    dim = asked;
  }
  if (override?.empty) return { body: answer(vendor, req, model, dim, []) };
  const d = override?.dimension ?? dim;
  const body = answer(vendor, req, model, d, texts.map((t) => bagOfWordsVector(t, d)));
  return { body: override?.transform ? override.transform(body, req) : body };
}

function textsOf(vendor: Vendor, body: any): string[] {
  const raw = vendor === 'cohere' ? body?.texts : body?.input;
  return typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw.map(String) : [];
}

export async function startFakeEmbeddingApi(vendor: Vendor, opts: { key?: string; models?: Record<string, number> } = {}): Promise<FakeEmbeddingApi> {
  const key = opts.key ?? FAKE_KEYS[vendor];
  const models = { ...FAKE_MODELS[vendor], ...(opts.models ?? {}) };
  const requests: EmbedRequest[] = [];
  const queue: Reply[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const rec: EmbedRequest = { path: new URL(req.url ?? '/', 'http://127.0.0.1').pathname, headers: req.headers, rawBody, body, texts: textsOf(vendor, body) };
      requests.push(rec);
      const q = queue.shift();
      const reply = q && (q.status !== undefined || q.body !== undefined) ? q : defaultReply(vendor, key, models, rec, q);
      const send = () => {
        if (res.destroyed) return;
        rec.status = reply.status ?? 200;
        res.writeHead(rec.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
        res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {}));
      };
      const delay = q?.delayMs ?? 0;
      if (delay) {
        const t = setTimeout(() => {
          timers.delete(t);
          send();
        }, delay);
        timers.add(t);
      } else send();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const root = `http://127.0.0.1:${port}`;
  return {
    vendor,
    baseUrl: vendor === 'openai' || vendor === 'voyage' ? `${root}/v1` : root,
    key,
    requests,
    enqueue: (...r) => void queue.push(...r),
    clear: () => {
      requests.length = 0;
      queue.length = 0;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const t of timers) clearTimeout(t);
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** The environment variables that point rankgate's embedders at a fake (key and base URL). */
export function fakeEnv(f: FakeEmbeddingApi): Record<string, string> {
  switch (f.vendor) {
    case 'openai':
      return { OPENAI_API_KEY: f.key, OPENAI_BASE_URL: f.baseUrl };
    case 'voyage':
      return { VOYAGE_API_KEY: f.key, VOYAGE_API_BASE_URL: f.baseUrl };
    case 'cohere':
      return { COHERE_API_KEY: f.key, COHERE_BASE_URL: f.baseUrl };
    case 'ollama':
      return { OLLAMA_BASE_URL: f.baseUrl };
  }
}

/** A base URL where nothing listens (connection refused). */
export async function refusedUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}
