/**
 * The `url:` transport: a team's search service over HTTP, beside the in-process ones (module.ts, worker.ts).
 *   portal shape (the DES-058 spec's `/api/v1/search`): POST {query, limit, language?, mode?} -> {results: [...]}
 *   NQ shape (the NQ evaluation spec's `/search/v1/{semantic,keyword,hybrid}`): POST {query, limit} -> {result: [...]}
 * Each result needs chunk_id (or chunkId / id); document_id, rank, score, content, path, book_slug, chapter_number,
 * title, heading and channels are read when present. Routing comes from `routing`, or `practice_bridge` / `safety`.
 * After `unreachableAfter` queries in a row got no answer at all, the rest fail at once.
 */
import type { SearchParams, SearchResponse, SearchServiceLike } from './types.ts';

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
    const res = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    }).catch((e: Error) => {
      throw Object.assign(
        new Error(e.name === 'TimeoutError' ? `POST ${target} timed out after ${this.timeoutMs} ms (timeoutMs)` : `POST ${target} failed: ${fetchFailure(e)}`),
        { noAnswer: true },
      );
    });
    const text = await res.text();
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
      return {
        chunkId: String(id),
        documentId: String(r.document_id ?? r.documentId ?? id),
        rank: typeof r.rank === 'number' ? r.rank : i + 1,
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
    return { hits, routing, diagnostics: null as unknown as SearchResponse['diagnostics'], ...(typeof doc.answer === 'string' ? { answer: doc.answer } : {}) };
  }

  async close(): Promise<void> {}
}

/** The request shape of a url: the NQ spec's `/search/v1[/{mode}]`, else the portal's. */
export function shapeOf(url: string, given?: string): 'portal' | 'nq' {
  if (given === 'portal' || given === 'nq') return given;
  return /\/search\/v1(\/(semantic|keyword|hybrid))?\/?$/.test(new URL(url).pathname) ? 'nq' : 'portal';
}
