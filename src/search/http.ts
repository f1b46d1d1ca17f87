/**
 * HTTP front of any SearchServiceLike (node:http, no framework), for teams whose evaluators speak HTTP.
 *
 *   POST /api/v1/search                     {query, language?, limit?, mode?}
 *        -> {query, language, results: [...], practice_bridge, safety, routing}
 *        (results are empty when the route is practice_bridge or no_results, as the portal does)
 *   POST /search/v1/{semantic|keyword|hybrid} {query, limit?}
 *        -> {result: [{chunk_id, document_id, content, score, rank}]}   (routing off: raw ranking)
 *   GET  /health                            -> {status: "ok"}
 *
 * Hostile input: bodies over maxBodyBytes -> 413; a content type other than application/json -> 415;
 * malformed JSON or invalid UTF-8 -> 400; empty, over-long, NUL-containing or ill-formed queries -> 400;
 * bad limit/language -> 400; unknown path -> 404; wrong method -> 405; a body not received within
 * bodyTimeoutMs -> 408; a search slower than searchTimeoutMs -> 504. Every error is JSON `{error, code}`.
 *
 * Load shedding: at most maxConcurrent searches run at once; the next maxQueue requests wait in a FIFO queue. Whether
 * a request waits is decided once, when it arrives (and again, as cheaply, once its body is read): if the queue is
 * full, or its expected wait ((queued + 1) x the mean time a search holds its slot / maxConcurrent) is over
 * maxQueueWaitMs, it gets 503 `{code: "overloaded"}` with `Retry-After: 1` at once, before its body is even
 * parsed; otherwise it keeps its place until it is served. No request is shed after it waited. The search
 * timer (searchTimeoutMs) starts when the search starts, and every answer says how long it queued
 * (`x-rankgate-queue-ms`) and searched (`x-rankgate-search-ms`). GET /health reports running and queued. Header-phase timeouts are Node's own
 * (headersTimeout, requestTimeout), which answer 408 and close the socket. The server keeps serving.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isUserError } from '../errors.ts';
import type { SearchHit, SearchMode, SearchParams, SearchResponse, SearchServiceLike } from './types.ts';

export interface SearchHttpOptions {
  service: SearchServiceLike;
  /** Largest accepted request body (bytes). Default 64 KiB. */
  maxBodyBytes?: number;
  /** Longest accepted query (characters, after trimming). Default 2,000. */
  maxQueryChars?: number;
  /** Largest `limit`. Default 100. */
  maxLimit?: number;
  defaultLimit?: number;
  /** Time allowed to receive the whole body once headers arrived (ms). Default 10,000. */
  bodyTimeoutMs?: number;
  /** Time allowed for one search (ms). Default 30,000. */
  searchTimeoutMs?: number;
  /** Searches handed to the service at once. Default 4. */
  maxConcurrent?: number;
  /** Requests waiting for a search slot before 503. Default 16. */
  maxQueue?: number;
  /** Longest expected wait for a search slot (ms): a request expected to wait longer ((queued + 1) x mean slot time
   * / maxConcurrent) gets 503 at once, on arrival; one admitted is served. Default 500. */
  maxQueueWaitMs?: number;
  /** Defaults passed to every search (chunk size, embedder, ...). */
  defaults?: Partial<SearchParams>;
  /** Logger for server-side failures (5xx). Default console.error. */
  log?: (line: string) => void;
}

export interface ServerTimeouts {
  /** Node's headersTimeout (ms): headers must arrive within this. Default 10,000. */
  headersTimeoutMs?: number;
  /** Node's requestTimeout (ms): the whole request. Default 30,000. */
  requestTimeoutMs?: number;
  /** Idle keep-alive sockets are closed after this (ms). Default 5,000. */
  keepAliveTimeoutMs?: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const MODES: Record<string, SearchMode> = { semantic: 'semantic', keyword: 'keyword', hybrid: 'hybrid' };

function sendJson(res: ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...extraHeaders,
  });
  res.end(text);
}

function sendError(res: ServerResponse, e: HttpError, close = false): void {
  sendJson(res, e.status, { error: e.message, code: e.code }, { ...e.headers, ...(close ? { connection: 'close' } : {}) });
}

function readBody(req: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBytes) {
      reject(new HttpError(413, 'payload_too_large', `request body of ${declared} bytes is over the ${maxBytes}-byte limit`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: HttpError, body?: Buffer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      if (err) reject(err);
      else resolve(body!);
    };
    const timer = setTimeout(
      () => finish(new HttpError(408, 'request_timeout', `request body not received within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) finish(new HttpError(413, 'payload_too_large', `request body is over the ${maxBytes}-byte limit`));
      else chunks.push(c);
    };
    const onEnd = () => finish(undefined, Buffer.concat(chunks, size));
    const onError = () => finish(new HttpError(400, 'bad_request', 'request body could not be read'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function parseJsonBody(req: IncomingMessage, raw: Buffer): Record<string, unknown> {
  const ct = String(req.headers['content-type'] ?? '');
  const [type, ...params] = ct.split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json') {
    throw new HttpError(415, 'unsupported_media_type', `content-type must be application/json, got ${JSON.stringify(ct || '(none)')}`);
  }
  const charset = params.find((p) => p.startsWith('charset='))?.slice(8).replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new HttpError(415, 'unsupported_media_type', `charset must be utf-8, got ${JSON.stringify(charset)}`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new HttpError(400, 'invalid_utf8', 'request body is not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, 'malformed_json', `request body is not valid JSON: ${(e as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HttpError(400, 'bad_request', 'request body must be a JSON object such as {"query": "...", "limit": 10}');
  }
  return value as Record<string, unknown>;
}

function validateQuery(body: Record<string, unknown>, maxChars: number): string {
  const q = body.query;
  if (typeof q !== 'string') throw new HttpError(400, 'invalid_query', `field 'query': expected a string, got ${q === undefined ? 'nothing' : typeof q}`);
  const trimmed = q.trim();
  if (!trimmed) throw new HttpError(400, 'invalid_query', "field 'query': expected a non-empty string (got an empty or whitespace-only query)");
  if (trimmed.length > maxChars) throw new HttpError(400, 'invalid_query', `field 'query': ${trimmed.length} characters is over the ${maxChars}-character limit`);
  if (trimmed.includes('\u0000')) throw new HttpError(400, 'invalid_query', "field 'query': contains a NUL character");
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(trimmed)) throw new HttpError(400, 'invalid_query', "field 'query': contains unpaired surrogates (not valid Unicode)");
  return trimmed;
}

function validateLimit(body: Record<string, unknown>, def: number, max: number): number {
  const l = body.limit ?? body.top_k;
  if (l === undefined || l === null) return def;
  if (typeof l !== 'number' || !Number.isInteger(l) || l < 1 || l > max) {
    throw new HttpError(400, 'invalid_limit', `field 'limit': expected an integer from 1 to ${max}, got ${JSON.stringify(l)}`);
  }
  return l;
}

function validateLanguage(body: Record<string, unknown>): string | undefined {
  const l = body.language;
  if (l === undefined || l === null || l === '') return undefined;
  if (typeof l !== 'string' || !/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(l)) {
    throw new HttpError(400, 'invalid_language', `field 'language': expected an ISO 639-1 code such as en, es, hi, got ${JSON.stringify(l)}`);
  }
  return l.toLowerCase();
}

/** A reranked search's `diagnostics.rerank` (ids only), so a url: eval of this server gets the rerank buckets (docs/search.md#a-reranked-service). */
function rerankBlock(r: SearchResponse): { diagnostics?: { rerank: NonNullable<SearchResponse['diagnostics']['rerank']> } } {
  const rr = r.diagnostics?.rerank;
  // the candidates the reranker saw: a first stage shorter than the configured budget gave it only that many
  return rr ? { diagnostics: { rerank: { ...rr, budget: Math.min(rr.budget, rr.firstStage.length) } } } : {};
}

function portalResult(h: SearchHit) {
  return {
    chunk_id: h.chunkId,
    document_id: h.documentId,
    content: h.content,
    score: h.score,
    rank: h.rank,
    ...(h.bookSlug !== undefined ? { book_slug: h.bookSlug } : {}),
    ...(h.chapterNumber !== undefined ? { chapter_number: h.chapterNumber } : {}),
    ...(h.path !== undefined ? { path: h.path } : {}),
    ...(h.language !== undefined ? { language: h.language } : {}),
    channels: h.channels,
  };
}

/** The request handler, usable with any node:http server. */
export function createSearchHandler(opts: SearchHttpOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const maxBody = opts.maxBodyBytes ?? 64 * 1024;
  const maxQuery = opts.maxQueryChars ?? 2000;
  const maxLimit = opts.maxLimit ?? 100;
  const defLimit = opts.defaultLimit ?? 10;
  const bodyTimeout = opts.bodyTimeoutMs ?? 10_000;
  const searchTimeout = opts.searchTimeoutMs ?? 30_000;
  const maxConcurrent = Math.max(1, opts.maxConcurrent ?? 4);
  const maxQueue = Math.max(0, opts.maxQueue ?? 16);
  const maxQueueWait = Math.max(1, opts.maxQueueWaitMs ?? 500);
  const log = opts.log ?? ((l: string) => console.error(l));
  let running = 0;
  interface Waiter {
    since: number;
    res: ServerResponse;
    grant: () => void;
  }
  const waiting: Waiter[] = [];
  /** Moving average of the time a search holds its slot (ms), for the expected queue wait. It rises faster than
   * it falls, so a slowdown sheds at once instead of admitting requests that would then wait past the limit. */
  let searchMsAvg = 0;
  const observe = (ms: number) => {
    searchMsAvg = searchMsAvg === 0 ? ms : searchMsAvg + (ms > searchMsAvg ? 0.5 : 0.2) * (ms - searchMsAvg);
  };
  const overloaded = (why: string) =>
    new HttpError(503, 'overloaded', `server busy: ${why}; retry in a second`, { 'retry-after': '1' });

  /**
   * Why a request arriving now could not start its search within maxQueueWait (queue full, or the expected wait:
   * (queued + 1) x mean slot time / slots), or undefined when it can. Decided once, on arrival: a request is either
   * shed at once or kept until it is served, never shed after it waited.
   */
  const shedReason = (): string | undefined => {
    if (running < maxConcurrent) return undefined;
    if (waiting.length >= maxQueue) return `${running} searches running and ${waiting.length} waiting (queue limit ${maxQueue})`;
    const expected = ((waiting.length + 1) * searchMsAvg) / maxConcurrent;
    if (searchMsAvg > 0 && expected > maxQueueWait) {
      return `${waiting.length} searches waiting, about ${Math.round(expected)} ms before this one could start (queue wait limit ${maxQueueWait} ms)`;
    }
    return undefined;
  };

  /** A search slot: at once when one is free, else after the wait shedReason() judged short enough; resolves the ms queued. */
  const acquire = (res: ServerResponse): Promise<number> => {
    const why = shedReason();
    if (why) return Promise.reject(overloaded(why));
    if (running < maxConcurrent) {
      running++;
      return Promise.resolve(0);
    }
    return new Promise<number>((resolve) => {
      const since = performance.now();
      const w: Waiter = { since, res, grant: () => resolve(performance.now() - since) };
      waiting.push(w);
      // a client that hung up leaves the queue now, so the next arrival's expected wait does not count it
      res.once('close', () => {
        const i = waiting.indexOf(w);
        if (i >= 0) waiting.splice(i, 1);
      });
    });
  };
  /** Hand the slot to the next waiter whose client is still there, or free it. */
  const release = () => {
    for (;;) {
      const w = waiting.shift();
      if (!w) {
        running--;
        return;
      }
      if (w.res.destroyed) continue;
      w.grant();
      return;
    }
  };

  const search = async (query: string, params: Partial<SearchParams>) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HttpError(504, 'search_timeout', `search took longer than ${searchTimeout} ms`)), searchTimeout);
    });
    try {
      // a service that takes a timeout (the search worker) gets it too, so a hung search frees its thread
      const search = opts.service.search as (q: string, p: Partial<SearchParams>, o?: { timeoutMs?: number }) => Promise<SearchResponse>;
      return await Promise.race([search.call(opts.service, query, { ...opts.defaults, ...params }, { timeoutMs: searchTimeout }), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    if (path === '/health') {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'method_not_allowed', 'use GET /health');
      sendJson(res, 200, { status: 'ok', running, queued: waiting.length, maxConcurrent, maxQueue });
      return;
    }
    const typed = /^\/search\/v1\/([a-z]+)$/.exec(path);
    const isPortal = path === '/api/v1/search';
    if (!isPortal && !(typed && MODES[typed[1]!])) {
      throw new HttpError(404, 'not_found', `no endpoint ${path}; use POST /api/v1/search or POST /search/v1/{semantic,keyword,hybrid}`);
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed on ${path}; use POST with a JSON body`);
    }
    const ct = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (ct !== 'application/json') {
      throw new HttpError(415, 'unsupported_media_type', `content-type must be application/json, got ${JSON.stringify(req.headers['content-type'] ?? '(none)')}`);
    }
    // shed before reading and parsing the body: under a storm of retries each 503 costs as little as possible
    const early = shedReason();
    if (early) throw overloaded(early);
    const raw = await readBody(req, maxBody, bodyTimeout);
    const body = parseJsonBody(req, raw);
    const query = validateQuery(body, maxQuery);
    const limit = validateLimit(body, defLimit, maxLimit);
    const queueMs = await acquire(res);
    const started = performance.now();
    // the service's own time when it measures it (the search worker), else the wall time since the slot was granted
    const timing = (r: SearchResponse) => ({
      'x-rankgate-queue-ms': queueMs.toFixed(1),
      'x-rankgate-search-ms': (typeof r.serviceMs === 'number' ? r.serviceMs : performance.now() - started).toFixed(1),
    });
    try {
      if (isPortal) {
        const language = validateLanguage(body);
        const mode = body.mode === undefined ? undefined : MODES[String(body.mode)];
        if (body.mode !== undefined && !mode) throw new HttpError(400, 'invalid_mode', `field 'mode': expected semantic, keyword or hybrid, got ${JSON.stringify(body.mode)}`);
        const r = await search(query, {
          topK: limit,
          ...(mode ? { mode } : {}),
          ...(language ? { language, filters: { ...opts.defaults?.filters, language } } : {}),
        });
        const showResults = r.routing.route === 'search';
        sendJson(
          res,
          200,
          {
            query,
            language: language ?? null,
            results: showResults ? r.hits.slice(0, limit).map(portalResult) : [],
            practice_bridge: r.routing.route === 'practice_bridge',
            safety: r.routing.safety,
            routing: r.routing,
            ...rerankBlock(r),
          },
          timing(r),
        );
      } else {
        const r = await search(query, { mode: MODES[typed![1]!]!, topK: limit, routing: false });
        sendJson(
          res,
          200,
          { result: r.hits.slice(0, limit).map((h) => ({ chunk_id: h.chunkId, document_id: h.documentId, content: h.content, score: h.score, rank: h.rank })), ...rerankBlock(r) },
          timing(r),
        );
      }
    } finally {
      observe(performance.now() - started);
      release();
    }
  }

  return (req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (e instanceof HttpError) {
        // after 413/408 the rest of the body is not read: close the connection instead of draining it
        const close = e.status === 413 || e.status === 408;
        sendError(res, e, close);
        if (close) res.once('finish', () => req.socket.destroySoon?.());
        return;
      }
      if (isUserError(e)) {
        sendError(res, new HttpError(400, 'bad_request', e.message));
        return;
      }
      log(`rankgate serve: search failed: ${(e as Error)?.stack ?? String(e)}`);
      sendError(res, new HttpError(500, 'internal_error', 'search failed; see the server log'));
    });
  };
}

export interface RunningServer {
  server: Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Start the HTTP server (port 0 picks a free port). Does not close the service. */
export async function startSearchServer(
  opts: SearchHttpOptions & ServerTimeouts & { port?: number; host?: string },
): Promise<RunningServer> {
  const server = createServer(
    {
      headersTimeout: opts.headersTimeoutMs ?? 10_000,
      requestTimeout: opts.requestTimeoutMs ?? 30_000,
      keepAliveTimeout: opts.keepAliveTimeoutMs ?? 5_000,
      // how often Node checks headersTimeout/requestTimeout (default 30 s is too coarse for slow clients)
      connectionsCheckingInterval: Math.min(1000, opts.headersTimeoutMs ?? 1000),
    },
    createSearchHandler(opts),
  );
  server.maxHeadersCount = 64;
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const body = JSON.stringify({ error: status === 408 ? 'request not received in time' : 'malformed HTTP request', code: status === 408 ? 'request_timeout' : 'bad_request' });
    socket.end(
      `HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    server,
    port: addr.port,
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
