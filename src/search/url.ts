/**
 * The `url:` transport: a team's search service over HTTP, beside the in-process ones (module.ts, worker.ts).
 *   portal shape (the DES-058 spec's `/api/v1/search`): POST {query, limit, language?, mode?} -> {results: [...]}
 *   NQ shape (the NQ evaluation spec's `/search/v1/{semantic,keyword,hybrid}`): POST {query, limit} -> {result: [...]}
 * Each result needs chunk_id (or chunkId / id); document_id, rank, score, content, path, book_slug, chapter_number,
 * title, heading and channels are read when present. Routing comes from `routing`, or `practice_bridge` / `safety`.
 * After `unreachableAfter` queries in a row got no answer at all, the rest fail at once.
 *
 * What a query's answer must be, else that query is an error row (never a silently different ranking):
 * - From the configured origin. A redirect to another origin (scheme, host or port) is not followed: the error names
 *   both URLs. A same-origin 307/308 (method and body kept, e.g. a framework adding a trailing slash) is followed, at
 *   most 5 hops; a 301/302/303 is not even within the origin, because fetch would resend the POST as a GET without
 *   its query and the answer would not be this query's.
 * - At most `maxResponseBytes` (default 16 MB), read as a stream and abandoned as soon as it is over, so a huge body
 *   is never held in memory (a declared Content-Length over the cap is refused before reading).
 * - In list order: a result's `rank`, when given, must be its 1-based position in the list (scoring sorts by rank,
 *   so a contradicting rank would silently reorder what is scored).
 * - An optional `diagnostics.rerank` block ({firstStage, budget, reranked?, reranker?, ...}: a service that reranks) is
 *   validated by src/search/service-rerank.ts; a wrong field errors the query naming it.
 */
import { parseServiceRerank } from './service-rerank.ts';
import type { SearchParams, SearchResponse, SearchServiceLike } from './types.ts';
import { readCappedText, sizeText } from '../util/capped-body.ts';
import { registerSecret } from '../util/redact.ts';
import { UserError } from '../errors.ts';

/** undici's "fetch failed" names nothing: say what the connection error was (refused, unknown host, reset...). */
function fetchFailure(e: Error): string {
  const cause = (e as Error & { cause?: NodeJS.ErrnoException & { hostname?: string } }).cause;
  const code = cause?.code;
  const where = cause && 'address' in cause ? `${(cause as { address?: string }).address}:${(cause as { port?: number }).port}` : cause?.hostname ?? '';
  if (code === 'ECONNREFUSED') return `connection refused (nothing listening at ${where || 'that address'}; is the service running?)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `host not found (${cause?.hostname ?? where})`;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'the service closed the connection without an answer';
  if (code) return `${code}${cause?.message ? `: ${cause.message}` : ''}`;
  return cause?.message ? `${e.message} (${cause.message})` : e.message;
}

/** Default cap on one response body (bytes): the provider config's `maxResponseBytes`. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const MAX_SAME_ORIGIN_REDIRECTS = 5;

/** A response body as text, read chunk by chunk and given up (stream cancelled) once over `max` bytes. */
function readCapped(res: Response, max: number, what: string): Promise<string> {
  const over = `${what}: response body over the ${sizeText(max)} limit (maxResponseBytes: ${max}); not read further`;
  return readCappedText(res, max, (declared) => new Error(declared === undefined ? over : `${over} (Content-Length ${declared})`));
}

/**
 * The credentials a url: service gets, from the environment only (a provider config holding one is refused:
 * src/search/provider-config.ts): RANKGATE_URL_PASSWORD (HTTP Basic with the url's user name, `http://user@host/…`),
 * RANKGATE_URL_API_KEY (`Authorization: Bearer KEY`), RANKGATE_URL_HEADERS (a JSON object of headers, e.g.
 * `{"x-api-key": "…"}`). Every value is a secret (src/util/redact.ts). Sent to the configured origin only.
 */
export function urlCredentialHeaders(url: URL, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  const raw = env.RANKGATE_URL_HEADERS?.trim();
  if (raw) {
    let o: unknown;
    try {
      o = JSON.parse(raw);
    } catch {
      o = undefined;
    }
    if (!o || typeof o !== 'object' || Array.isArray(o) || !Object.values(o).every((v) => typeof v === 'string')) {
      throw new UserError('RANKGATE_URL_HEADERS: expected a JSON object of header names and string values, e.g. {"x-api-key": "…"} (its values are never printed)');
    }
    for (const [k, v] of Object.entries(o as Record<string, string>)) {
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k)) throw new UserError(`RANKGATE_URL_HEADERS: ${JSON.stringify(k.slice(0, 60))} is not an HTTP header name`);
      out[k.toLowerCase()] = v;
      registerSecret(v);
    }
  }
  const key = env.RANKGATE_URL_API_KEY;
  if (key) {
    registerSecret(key);
    out.authorization = `Bearer ${key}`;
  }
  const pass = env.RANKGATE_URL_PASSWORD;
  if (pass) {
    const user = decodeURIComponent(url.username);
    const basic = Buffer.from(`${user}:${pass}`).toString('base64');
    registerSecret(pass);
    registerSecret(basic);
    out.authorization = `Basic ${basic}`;
  }
  return out;
}

/** A search service over HTTP, in the portal's shape or the NQ evaluation spec's. */
export class HttpSearchService implements SearchServiceLike {
  /** Queries in a row that got no answer at all (timeout, refused, reset, unknown host). */
  private noAnswerRun = 0;
  private unreachable?: string;

  constructor(
    private readonly url: string,
    private readonly shape: 'portal' | 'nq',
    private readonly timeoutMs: number,
    /** After this many queries in a row got no answer, the rest fail at once (0: never). */
    private readonly unreachableAfter = 3,
    /** Largest response body read (bytes). */
    private readonly maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES,
  ) {}

  async search(query: string, params: Partial<SearchParams> = {}): Promise<SearchResponse> {
    if (this.unreachable) throw new Error(this.unreachable);
    try {
      const r = await this.post(query, params);
      this.noAnswerRun = 0;
      return r;
    } catch (e) {
      const err = e as Error & { noAnswer?: boolean };
      if (!err.noAnswer) {
        this.noAnswerRun = 0;
        throw e;
      }
      this.noAnswerRun++;
      if (this.unreachableAfter > 0 && this.noAnswerRun >= this.unreachableAfter) {
        this.unreachable ??= `${this.url} unreachable: ${this.noAnswerRun} ${this.noAnswerRun === 1 ? "query" : "queries"} in a row got no answer (last: ${err.message}); not queried (unreachableAfter)`;
      }
      throw e;
    }
  }

  private async post(query: string, params: Partial<SearchParams>): Promise<SearchResponse> {
    const limit = params.topK ?? 10;
    let target = this.url.replace(/\/+$/, '');
    let body: Record<string, unknown>;
    if (this.shape === 'nq') {
      if (!/\/(semantic|keyword|hybrid)$/.test(target)) target += `/${params.mode ?? 'hybrid'}`;
      body = { query, limit };
    } else {
      body = { query, limit, ...(params.language ? { language: params.language } : {}), ...(params.mode ? { mode: params.mode } : {}) };
    }
    const signal = AbortSignal.timeout(this.timeoutMs);
    const noAnswer = (e: Error, url: string) =>
      Object.assign(
        new Error(e.name === 'TimeoutError' ? `POST ${url} timed out after ${this.timeoutMs} ms (timeoutMs)` : `POST ${url} failed: ${fetchFailure(e)}`),
        { noAnswer: true },
      );
    // Credentials from the environment (urlCredentialHeaders); credentials in the url itself (http://user:pass@host/...,
    // refused in a provider config, accepted from code) go as HTTP Basic auth: fetch refuses a URL that holds them.
    let auth: string | undefined;
    const u = new URL(target);
    const fromEnv = urlCredentialHeaders(u);
    const urlPassword = u.password !== '';
    if (u.username || u.password) {
      const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
      // a service that echoes its request headers (a 500 page, a debug field) quotes this value: redacted everywhere
      registerSecret(basic);
      auth = `Basic ${basic}`;
      u.username = '';
      u.password = '';
      target = u.href.replace(/\/+$/, '');
    }
    let url = target;
    let res: Response;
    for (let hop = 0; ; hop++) {
      res = await fetch(url, {
        method: 'POST',
        // to the configured origin only: the environment's headers, and the url's own Basic credentials (which win
        // when the url holds a password, else give way to RANKGATE_URL_PASSWORD / RANKGATE_URL_API_KEY)
        headers: {
          'content-type': 'application/json',
          ...(new URL(url).origin === u.origin ? { ...(auth ? { authorization: auth } : {}), ...fromEnv, ...(urlPassword && auth ? { authorization: auth } : {}) } : {}),
        },
        body: JSON.stringify(body),
        signal,
        redirect: 'manual',
      }).catch((e: Error) => {
        throw noAnswer(e, url);
      });
      if (res.status < 300 || res.status > 399 || res.status === 304) break;
      await res.body?.cancel().catch(() => {});
      const location = res.headers.get('location');
      if (!location) throw new Error(`POST ${url} -> HTTP ${res.status} without a Location header`);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new Error(`POST ${url} -> HTTP ${res.status} redirect to an unreadable Location ${JSON.stringify(location.slice(0, 200))}`);
      }
      const from = new URL(url);
      if (next.origin !== from.origin) {
        throw new Error(`POST ${url} -> HTTP ${res.status} redirect to ${next.href}: another origin (${next.origin}, not ${from.origin}); not followed, so no other host's answers are scored (set url to the address that should answer)`);
      }
      if (res.status !== 307 && res.status !== 308) {
        throw new Error(`POST ${url} -> HTTP ${res.status} redirect to ${next.href}: not followed, since a ${res.status} turns the POST into a GET without the query (only 307/308 keep it; set url to ${next.href})`);
      }
      if (hop + 1 > MAX_SAME_ORIGIN_REDIRECTS) throw new Error(`POST ${target}: more than ${MAX_SAME_ORIGIN_REDIRECTS} redirects (last to ${next.href}); not followed`);
      url = next.href;
    }
    let text: string;
    try {
      text = await readCapped(res, this.maxResponseBytes, `POST ${url}`);
    } catch (e) {
      const err = e as Error;
      if (err.name === 'TimeoutError' || err.name === 'AbortError' || (err as { cause?: unknown }).cause) throw noAnswer(err, url);
      throw err;
    }
    target = url;
    if (res.status === 429) {
      throw new Error(`POST ${target} -> HTTP 429: the service is rate limiting the eval (lower its concurrency: -j, evaluateOptions.maxConcurrency); not retried: ${text.slice(0, 200)}`);
    }
    if (!res.ok) throw new Error(`POST ${target} -> HTTP ${res.status}: ${text.slice(0, 200)}`);
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new Error(`POST ${target} returned malformed JSON: ${text.slice(0, 120)}`);
    }
    const list = this.shape === 'nq' ? doc.result : doc.results;
    if (!Array.isArray(list)) throw new Error(`POST ${target}: response has no ${this.shape === 'nq' ? 'result' : 'results'}[] array`);
    const hits = list.map((r: Record<string, unknown>, i: number) => {
      const id = r.chunk_id ?? r.chunkId ?? r.id;
      if (typeof id !== 'string' && typeof id !== 'number') throw new Error(`POST ${target}: result ${i} has no chunk_id`);
      if (r.rank !== undefined && r.rank !== null && r.rank !== i + 1) {
        throw new Error(
          `POST ${target}: result ${i} (chunk_id ${JSON.stringify(String(id))}) has rank ${JSON.stringify(r.rank)} but is number ${i + 1} in the list; ` +
            'rank must match list order (or be left out): which order is the ranking?',
        );
      }
      return {
        chunkId: String(id),
        documentId: String(r.document_id ?? r.documentId ?? id),
        rank: i + 1,
        score: typeof r.score === 'number' ? r.score : 0,
        content: typeof r.content === 'string' ? r.content : '',
        ...(typeof r.path === 'string' ? { path: r.path } : {}),
        ...(typeof r.book_slug === 'string' ? { bookSlug: r.book_slug } : {}),
        ...(typeof r.chapter_number === 'number' ? { chapterNumber: r.chapter_number } : {}),
        ...(typeof r.title === 'string' ? { title: r.title } : {}),
        ...(typeof r.heading === 'string' ? { heading: r.heading } : {}),
        channels: (r.channels as SearchResponse['hits'][number]['channels']) ?? {},
      };
    });
    const routing = (doc.routing as SearchResponse['routing'] | undefined) ?? {
      route: doc.practice_bridge === true ? 'practice_bridge' : hits.length ? 'search' : 'no_results',
      safety: doc.safety === true,
      reasons: [],
    };
    if (doc.safety === true) routing.safety = true;
    // a service that reranks may report its first stage and budget (docs/search.md#a-reranked-service), checked here
    const diag = doc.diagnostics;
    if (diag !== undefined && diag !== null && (typeof diag !== 'object' || Array.isArray(diag))) {
      throw new Error(`POST ${target}: diagnostics: expected an object such as {"rerank": {...}}, got ${JSON.stringify(diag).slice(0, 80)} (docs/search.md#a-reranked-service)`);
    }
    const rerank = parseServiceRerank((diag as Record<string, unknown> | null | undefined)?.rerank, `POST ${target}: diagnostics.rerank`, { hits, maxMs: this.timeoutMs });
    const diagnostics = rerank ? { variant: '', keywordCandidates: [], vectorCandidates: [], timings: {}, rerank } : null;
    return { hits, routing, diagnostics: diagnostics as unknown as SearchResponse['diagnostics'], ...(typeof doc.answer === 'string' ? { answer: doc.answer } : {}) };
  }

  async close(): Promise<void> {}
}

/** The request shape of a url: the NQ spec's `/search/v1[/{mode}]`, else the portal's. */
export function shapeOf(url: string, given?: string): 'portal' | 'nq' {
  if (given === 'portal' || given === 'nq') return given;
  return /\/search\/v1(\/(semantic|keyword|hybrid))?\/?$/.test(new URL(url).pathname) ? 'nq' : 'portal';
}
