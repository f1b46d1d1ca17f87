/**
 * Rerankers over HTTP APIs with plain `fetch`, through the embedders' call contract (src/embeddings/http.ts: bounded
 * attempts, 429/5xx retried after Retry-After, a deadline per attempt and per call, secrets never in messages):
 *
 * | family | request | answer | key and base URL |
 * |---|---|---|---|
 * | cohere | POST {base}/v2/rerank `{model, query, documents, top_n, max_tokens_per_doc?}` | `{results: [{index, relevance_score}], meta.billed_units.search_units}` | COHERE_API_KEY; COHERE_BASE_URL |
 * | voyage | POST {base}/rerank `{model, query, documents, truncation: true}` | `{data: [{index, relevance_score}], usage.total_tokens}` | VOYAGE_API_KEY; VOYAGE_API_BASE_URL |
 * | jina, openai, vllm, infinity | POST {base}/rerank `{model, query, documents, top_n, return_documents: false}` | `{results: [{index, relevance_score}], usage?.total_tokens}` | JINA_API_KEY / OPENAI_API_KEY / VLLM_API_KEY / INFINITY_API_KEY; the matching *_BASE_URL |
 * | tei | POST {base}/rerank `{query, texts, truncate: true, raw_scores: false}` | `[{index, score}]` | TEI_API_KEY if the server wants one; TEI_BASE_URL |
 *
 * Passages go in batches within the vendor's documented limits (catalog.ts; Voyage also within 3/4 of its 600K
 * tokens a request by o200k estimate), two requests in flight at once; each batch's scores come back in input order.
 * Timeouts: RANKGATE_RERANK_TIMEOUT_MS (one attempt, default 30,000) and RANKGATE_RERANK_CALL_TIMEOUT_MS (the call with
 * its retries, default 3 x the attempt). An answer is read as a capped stream (rerankAnswerCap: 64 KB + 1 KB a passage
 * sent, far above the ~60 bytes a scored passage takes) and given up once over it, never read whole. Scores outside the
 * API's documented range (types.ts) are a malformed answer. TEI serves one model whatever the id names: its
 * `GET {base}/info` (model_id, model_sha) is read once per process and is part of the score cache's key, so a model
 * changed behind the same URL never reuses the old model's scores; a vendor's answer's `model` is kept with the scores.
 */
import { batchByTokens, countTokens, decode, encode } from '../util/tokens.ts';
import { EmbedderCallError, displayUrl, postJson, type HttpCallOptions } from '../embeddings/http.ts';
import { envMs, mapLimit } from '../embeddings/bedrock-client.ts';
import { scoresFromRows } from './answer.ts';
import type { RerankerSpec } from './catalog.ts';
import { RerankerCallError, type RerankAnswer, type Reranker, type RerankUsage } from './types.ts';
import type { RerankScoreRange } from './cache.ts';
import { readCappedText } from '../util/capped-body.ts';

export interface HttpRerankerOptions extends HttpCallOptions {
  env?: NodeJS.ProcessEnv;
  /** Cohere `max_tokens_per_doc`; other APIs: each passage cut to this many tokens (o200k estimate) before sending. */
  maxTokensPerDoc?: number;
  /** Natural-language instructions, sent before the query text (Voyage rerank-2.5 and Cohere v4 follow them). */
  instructions?: string;
  /** Requests in flight at once (default 2). */
  concurrency?: number;
  /** Passages per request at most (default: the family's limit). */
  maxBatch?: number;
}

const VOYAGE_REQUEST_TOKENS = 600_000;

/** TEI `GET /info` answers of this process, by base URL. */
const TEI_INFO = new Map<string, Promise<string | undefined>>();

/** Largest answer read for a request of `n` passages (bytes): 64 KB + 1 KB a passage. */
export const rerankAnswerCap = (n: number) => 64 * 1024 + 1024 * n;

/** The documented score range of each family (types.ts); absent: any finite number. */
export const FAMILY_RANGES: Partial<Record<string, RerankScoreRange>> = {
  cohere: { min: 0, max: 1 },
  tei: { min: 0, max: 1 },
  bedrock: { min: 0, max: 1 },
  llm: { min: 0, max: 3, integer: true },
};

/** `text` cut to at most `n` o200k tokens (unchanged when shorter). */
export function cutTokens(text: string, n: number): string {
  const t = encode(text);
  return t.length <= n ? text : decode(t.slice(0, n));
}

/** The query text sent: instructions first when there are some. */
export function withInstructions(query: string, instructions?: string): string {
  return instructions && instructions.trim() ? `${instructions.trim()}\n\n${query}` : query;
}

export function createHttpReranker(spec: RerankerSpec, opts: HttpRerankerOptions = {}): Reranker {
  const env = opts.env ?? process.env;
  const info = spec.info;
  const pick = (names: readonly string[]) => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');
  let base = (pick(info.baseEnv ?? []) ?? info.defaultBase!).replace(/\/+$/, '');
  if (spec.family === 'cohere') base = base.replace(/\/v[12]$/, '');
  const url = base + info.path!;
  const shown = displayUrl(url);
  const config = (why: string): never => {
    throw new RerankerCallError(`${spec.id}: ${why}`, { reranker: spec.id, code: 'Config' });
  };
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    config(`${info.baseEnv?.[0]} is not an http(s) URL`);
  }
  const key = info.keyEnv ? env[info.keyEnv] || undefined : undefined;
  if (info.keyRequired && !key) config(`${info.keyEnv} is not set (the API key ${spec.id} sends)`);
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const maxBatch = Math.max(1, Math.min(opts.maxBatch ?? info.maxBatch, info.maxBatch));
  const timeoutMs = opts.timeoutMs ?? envMs('RANKGATE_RERANK_TIMEOUT_MS', 1, env) ?? 30_000;
  const callOpts: HttpCallOptions = { ...opts, timeoutMs, callTimeoutMs: opts.callTimeoutMs ?? envMs('RANKGATE_RERANK_CALL_TIMEOUT_MS', 1, env) ?? 3 * timeoutMs };
  const cut = spec.family !== 'cohere' && opts.maxTokensPerDoc ? (t: string) => cutTokens(t, opts.maxTokensPerDoc!) : (t: string) => t;

  const body = (query: string, docs: string[]): unknown => {
    switch (info.shape) {
      case 'cohere':
        return spec.family === 'cohere'
          ? { model: spec.model, query, documents: docs, top_n: docs.length, ...(opts.maxTokensPerDoc ? { max_tokens_per_doc: opts.maxTokensPerDoc } : {}) }
          : { model: spec.model, query, documents: docs, top_n: docs.length, return_documents: false };
      case 'voyage':
        return { model: spec.model, query, documents: docs, truncation: true };
      case 'tei':
        return { query, texts: docs, truncate: true, raw_scores: false };
    }
    return config('no request shape');
  };

  const one = async (query: string, docs: string[]): Promise<RerankAnswer> => {
    let json: unknown;
    try {
      json = await postJson({ embedder: spec.id, url, headers, body: body(query, docs), secrets: [key], maxResponseBytes: rerankAnswerCap(docs.length) }, callOpts);
    } catch (e) {
      if (e instanceof EmbedderCallError) throw new RerankerCallError(e.message, { reranker: spec.id, code: e.code, status: e.status });
      throw e;
    }
    const j = (json && typeof json === 'object' ? json : {}) as Record<string, any>;
    const usage: RerankUsage = { requests: 1, documents: docs.length };
    let scores: number[];
    const range = FAMILY_RANGES[spec.family];
    if (info.shape === 'tei') scores = scoresFromRows(spec.id, shown, json, docs.length, 'the answer', 'score', range);
    else if (info.shape === 'voyage') scores = scoresFromRows(spec.id, shown, j.data, docs.length, '"data"', 'relevance_score', range);
    else scores = scoresFromRows(spec.id, shown, j.results, docs.length, '"results"', 'relevance_score', range);
    const model = typeof j.model === 'string' && j.model.trim() ? j.model.trim().slice(0, 200) : undefined;
    const units = j.meta?.billed_units?.search_units;
    if (typeof units === 'number' && Number.isFinite(units) && units >= 0) usage.searchUnits = units;
    const tokens = j.usage?.total_tokens ?? j.meta?.billed_units?.input_tokens;
    if (typeof tokens === 'number' && Number.isFinite(tokens) && tokens >= 0) usage.tokens = tokens;
    return { scores, usage, ...(model ? { model } : {}) };
  };

  // TEI's own account of the model it serves, once per process and base URL (the score cache's producer); undefined
  // when it does not answer /info (then the configured label stands, and the rerank call itself says what is wrong)
  const servedModel = (): Promise<string | undefined> => {
    const known = TEI_INFO.get(base);
    if (known) return known;
    const p = (async () => {
      const infoUrl = base + '/info';
      try {
        const res = await fetch(infoUrl, { headers: { accept: 'application/json', ...headers }, signal: AbortSignal.timeout(timeoutMs) });
        const text = await readCappedText(res, 64 * 1024, () => new Error('too large'));
        if (!res.ok) return undefined;
        const j = JSON.parse(text) as { model_id?: unknown; model_sha?: unknown };
        if (typeof j.model_id !== 'string' || !j.model_id) return undefined;
        return `${j.model_id.slice(0, 200)}${typeof j.model_sha === 'string' && j.model_sha ? `@${j.model_sha.slice(0, 64)}` : ''}`;
      } catch {
        return undefined;
      }
    })();
    TEI_INFO.set(base, p);
    return p;
  };

  /** Batches within the passage count (and Voyage's token budget: the query counts with every passage), in input order. */
  const batches = (query: string, docs: readonly string[]): string[][] => {
    const budget = spec.family === 'voyage' ? 0.75 * VOYAGE_REQUEST_TOKENS : Infinity;
    return batchByTokens(docs, maxBatch, budget, Number.isFinite(budget) ? countTokens(query) : 0);
  };

  return {
    id: spec.id,
    family: spec.family,
    model: spec.model,
    endpoint: shown,
    maxBatch,
    ...(FAMILY_RANGES[spec.family] ? { range: FAMILY_RANGES[spec.family] } : {}),
    ...(spec.family === 'tei' ? { servedModel } : {}),
    async score(query, passages) {
      if (!passages.length) return { scores: [], usage: { requests: 0, documents: 0 } };
      const q = withInstructions(query, opts.instructions);
      // an empty passage is refused by some servers: send a space (it scores as irrelevant)
      const docs = passages.map((p) => cut(p.trim() ? p : ' '));
      const parts = await mapLimit(batches(q, docs), opts.concurrency ?? 2, (b) => one(q, b));
      const answer = mergeAnswers(parts, spec.price);
      const named = parts.map((p) => p.model).find((m) => m);
      return named ? { ...answer, model: named } : answer;
    },
  };
}

/** Batches' answers as one: scores concatenated in order, usage summed, cost from the list price when known. */
export function mergeAnswers(parts: readonly RerankAnswer[], price?: { perThousandSearchUnits?: number; perMTok?: number }): RerankAnswer {
  const usage: RerankUsage = { requests: 0, documents: 0 };
  for (const p of parts) {
    usage.requests += p.usage.requests;
    usage.documents += p.usage.documents;
    if (p.usage.searchUnits !== undefined) usage.searchUnits = (usage.searchUnits ?? 0) + p.usage.searchUnits;
    if (p.usage.tokens !== undefined) usage.tokens = (usage.tokens ?? 0) + p.usage.tokens;
    if (p.usage.costUsd !== undefined) usage.costUsd = (usage.costUsd ?? 0) + p.usage.costUsd;
  }
  if (usage.costUsd === undefined && price) {
    if (price.perThousandSearchUnits !== undefined && usage.searchUnits !== undefined) usage.costUsd = (usage.searchUnits * price.perThousandSearchUnits) / 1000;
    else if (price.perMTok !== undefined && usage.tokens !== undefined) usage.costUsd = (usage.tokens * price.perMTok) / 1e6;
  }
  return { scores: parts.flatMap((p) => p.scores), usage };
}
