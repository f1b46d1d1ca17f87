/**
 * One JSON POST to an embedding API with plain `fetch`, under the same contract as the Bedrock client
 * (bedrock-client.ts): bounded attempts, a deadline per attempt and per call, and one clear error at the end.
 *
 * - 429 and 5xx are retried: after `Retry-After` (seconds or an HTTP date) or `retry-after-ms` when the server sends
 *   one (capped at `maxRetryAfterMs`), else after `retryBaseMs * 2^n` plus up to 25% jitter; at most `attempts`
 *   requests in all, and never a wait that would pass the call deadline.
 * - A refused, reset or timed-out connection is retried the same way; a call whose every attempt got no HTTP answer
 *   fails with code 'NoAnswer'.
 * - Any other 4xx (bad key, unknown model, bad request) fails at once with the vendor's message.
 * - A 2xx body that is not JSON fails at once (code 'MalformedResponse').
 * - A body is read as a stream and given up once over `maxResponseBytes` (the caller's cap, sized to the vectors it
 *   asked for; an error body: 1 MB), so a huge answer is never held in memory (code 'MalformedResponse').
 *
 * Errors name the embedder, the model and the endpoint (scheme, host, port and path only: never userinfo or a query
 * string), and every secret passed in (the API key) is replaced by `***` in anything the error carries.
 *
 * Deadlines: `timeoutMs` one attempt (default RANKGATE_EMBED_TIMEOUT_MS, else 60,000); `callTimeoutMs` the whole call
 * with its retries and waits (default RANKGATE_EMBED_CALL_TIMEOUT_MS, else 3 x timeoutMs).
 */
import { envMs, sleep } from './bedrock-client.ts';
import { readCappedText, sizeText } from '../util/capped-body.ts';

/** Largest error body (non-2xx) read for the vendor's message. */
const MAX_ERROR_BODY_BYTES = 1024 * 1024;
class BodyTooLarge extends Error {}

export interface HttpCallOptions {
  /** Requests per call at most (first try included). Default 4. */
  attempts?: number;
  /** Base of the exponential backoff when the server names no wait, ms. Default 500. */
  retryBaseMs?: number;
  /** Longest Retry-After honoured, ms (a longer one ends the call). Default 60,000. */
  maxRetryAfterMs?: number;
  /** One HTTP attempt, ms. Default RANKGATE_EMBED_TIMEOUT_MS or 60,000. */
  timeoutMs?: number;
  /** The whole call, ms. Default RANKGATE_EMBED_CALL_TIMEOUT_MS or 3 x timeoutMs. */
  callTimeoutMs?: number;
  /** fetch to use (tests); default globalThis.fetch. */
  fetch?: typeof fetch;
}

export interface HttpCallStats {
  /** HTTP requests sent (every attempt). */
  attempts: number;
  /** Retries after a 429/5xx/no answer. */
  retries: number;
  /** 429 answers. */
  throttled: number;
}

/** An embedding API call that failed for good, or answered with something rankgate cannot use. */
export class EmbedderCallError extends Error {
  readonly embedder: string;
  readonly endpoint: string;
  readonly attempts: number;
  /** 'NoAnswer' | 'HttpError' | 'MalformedResponse' | 'Config' */
  readonly code: string;
  readonly status?: number;
  /** The text (its position in the embedDocuments call) whose vector was wrong, when one was. */
  readonly textIndex?: number;
  constructor(message: string, info: { embedder: string; endpoint: string; attempts: number; code: string; status?: number; textIndex?: number }) {
    super(message);
    this.name = 'EmbedderCallError';
    this.embedder = info.embedder;
    this.endpoint = info.endpoint;
    this.attempts = info.attempts;
    this.code = info.code;
    this.status = info.status;
    this.textIndex = info.textIndex;
  }
}

/** scheme://host[:port]/path of a URL: no userinfo, query or fragment (they may carry credentials). */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/** Host (and port) of a URL, for the index variant's record. */
export function urlHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** Replace every secret (4+ characters) by *** in a text. */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('***');
  return out;
}

export function embedAttemptTimeoutMs(opts: { timeoutMs?: number }): number {
  return opts.timeoutMs ?? envMs('RANKGATE_EMBED_TIMEOUT_MS') ?? 60_000;
}

export function embedCallTimeoutMs(opts: { timeoutMs?: number; callTimeoutMs?: number }): number {
  return opts.callTimeoutMs ?? envMs('RANKGATE_EMBED_CALL_TIMEOUT_MS') ?? 3 * embedAttemptTimeoutMs(opts);
}

/** The wait a 429/503 asks for, ms: `retry-after-ms`, `Retry-After` in seconds or as an HTTP date; undefined if none. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const ra = headers.get('retry-after');
  if (!ra) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra) * 1000;
  const t = Date.parse(ra);
  return Number.isFinite(t) ? Math.max(0, t - now) : undefined;
}

/** The vendor's error message out of an error body (OpenAI `error.message`, Cohere `message`, Ollama `error`, TEI `error`, FastAPI `detail`). */
function vendorMessage(text: string): string {
  let msg = text;
  try {
    const j = JSON.parse(text) as Record<string, unknown>;
    const e = j.error;
    const m = (e && typeof e === 'object' ? (e as { message?: unknown }).message : e) ?? j.message ?? j.detail;
    if (m !== undefined) msg = typeof m === 'string' ? m : JSON.stringify(m);
  } catch {
    /* not JSON: the text itself */
  }
  msg = msg.replace(/\s+/g, ' ').trim();
  return msg.length > 200 ? `${msg.slice(0, 200)}…` : msg;
}

function networkReason(e: unknown): string {
  const err = e as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError' || err?.name === 'AbortError') return 'timed out';
  return err?.cause?.code ?? err?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}

export interface JsonPost {
  /** Canonical embedder id (named in errors). */
  embedder: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Values never to appear in an error (the API key). */
  secrets: readonly (string | undefined)[];
  /** Largest 2xx body read (bytes); default no cap. */
  maxResponseBytes?: number;
}

/** POST `body` as JSON and return the parsed JSON answer; see the module comment for retries and errors. */
export async function postJson(req: JsonPost, opts: HttpCallOptions = {}, stats?: HttpCallStats): Promise<unknown> {
  const attempts = Math.max(1, opts.attempts ?? 4);
  const base = Math.max(0, opts.retryBaseMs ?? 500);
  const maxRetryAfter = opts.maxRetryAfterMs ?? 60_000;
  const attemptMs = embedAttemptTimeoutMs(opts);
  const deadlineMs = embedCallTimeoutMs(opts);
  const end = Date.now() + deadlineMs;
  const doFetch = opts.fetch ?? globalThis.fetch;
  const where = `${req.embedder} at ${displayUrl(req.url)}`;
  const payload = JSON.stringify(req.body);
  let answered = false;
  let n = 0;
  const fail = (why: string, code: string, status?: number): never => {
    throw new EmbedderCallError(redact(`${where}: ${why}`, req.secrets), { embedder: req.embedder, endpoint: displayUrl(req.url), attempts: n, code, status });
  };
  for (;;) {
    n++;
    if (stats) stats.attempts++;
    const left = end - Date.now();
    const signal = AbortSignal.timeout(Math.max(1, Math.min(attemptMs, left)));
    let retryWhy: string;
    let wait: number | undefined;
    let status: number | undefined;
    try {
      const res = await doFetch(req.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', ...req.headers }, body: payload, signal });
      answered = true;
      status = res.status;
      const cap = res.ok ? req.maxResponseBytes ?? Infinity : MAX_ERROR_BODY_BYTES;
      let text: string;
      try {
        text = await readCappedText(res, cap, (declared) => new BodyTooLarge(declared === undefined ? '' : ` (Content-Length ${declared})`));
      } catch (e) {
        if (!(e instanceof BodyTooLarge)) throw e;
        if (res.ok) fail(`malformed answer (HTTP ${res.status}): body over the ${sizeText(cap)} limit for this request${e.message}; not read further`, 'MalformedResponse', res.status);
        text = `(error body over ${sizeText(cap)})`;
      }
      if (res.ok) {
        try {
          return JSON.parse(text);
        } catch {
          const shown = text.length > 120 ? `${text.slice(0, 120)}…` : text;
          fail(`malformed answer (HTTP ${res.status}): not JSON (${JSON.stringify(shown)})`, 'MalformedResponse', res.status);
        }
      }
      const msg = vendorMessage(text);
      if (res.status !== 429 && res.status < 500) {
        const hint = res.status === 401 || res.status === 403 ? ' (check the API key)' : res.status === 404 ? ' (check the base URL and the model name)' : '';
        fail(`HTTP ${res.status}${msg ? `: ${msg}` : ''}${hint}`, 'HttpError', res.status);
      }
      if (res.status === 429 && stats) stats.throttled++;
      retryWhy = `HTTP ${res.status}${msg ? `: ${msg}` : ''}`;
      wait = retryAfterMs(res.headers);
      if (wait !== undefined && wait > maxRetryAfter) fail(`${retryWhy}; the server asks to wait ${Math.round(wait / 1000)} s (Retry-After), more than ${Math.round(maxRetryAfter / 1000)} s`, 'HttpError', res.status);
    } catch (e) {
      if (e instanceof EmbedderCallError) throw e;
      retryWhy = `no answer (${networkReason(e)})`;
      if (Date.now() >= end) fail(`got no answer within ${deadlineMs} ms (call timeout; ${n} attempt${n === 1 ? '' : 's'})`, answered ? 'HttpError' : 'NoAnswer');
    }
    const plural = `${n} attempt${n === 1 ? '' : 's'}`;
    const code = answered ? 'HttpError' : 'NoAnswer';
    if (n >= attempts) fail(`failed after ${plural}: ${retryWhy}`, code, status);
    const backoff = base * 2 ** (n - 1);
    const delay = wait ?? backoff + Math.floor(Math.random() * backoff * 0.25);
    if (Date.now() + delay >= end) fail(`failed after ${plural}: ${retryWhy} (no time left for a retry within the ${deadlineMs} ms call timeout)`, code, status);
    if (stats) stats.retries++;
    await sleep(delay);
  }
}
