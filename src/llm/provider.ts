/**
 * A call to a chat model through promptfoo's own provider loader (`loadApiProvider`), shared by the judges
 * (src/judge), LLM query expansion (src/search/expand.ts) and an LLM reranker: anthropic:messages,
 * openai:chat (OpenAI and every OpenAI-compatible server through OPENAI_BASE_URL), azure:chat, ollama:chat and the
 * rest of promptfoo's chat providers, each with its own credentials and endpoint variables (ANTHROPIC_API_KEY /
 * ANTHROPIC_BASE_URL, OPENAI_API_KEY / OPENAI_BASE_URL, OLLAMA_BASE_URL, …). rankgate writes no client of its own.
 *
 * What rankgate adds around promptfoo's client: temperature 0 and a bounded number of output tokens; the system and user
 * prompt as promptfoo's JSON chat messages; one deadline per call (the judge's callTimeoutMs: promptfoo's own retries of 429 and
 * connection errors happen inside it, then the call is abandoned); a TCP probe of the endpoint before the first call,
 * so an endpoint nothing listens on ends the judging at once instead of after promptfoo's retries; and the endpoint
 * the calls go to, resolved the way the provider resolves it, for a cache key (verdicts, rewrites).
 *
 * Every answer's text and error is redacted of every known secret (src/util/redact.ts) before any caller sees it.
 *
 * `chatCall(id, prompt, {deadlineMs, maxTokens})` is the one-call form: the provider loaded once per (id, config),
 * the text, tokens and promptfoo's cost estimate back, a call with no answer a NoAnswerError.
 */
import { connect } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { redactText } from '../util/redact.ts';
import { trackedCacheFiles } from '../util/cache-files.ts';

/** A chat prompt: the system and the user message. */
export interface ChatPrompt {
  system: string;
  user: string;
}

export interface ModelAnswer {
  text: string | undefined;
  inputTokens: number;
  outputTokens: number;
  /** promptfoo's cost estimate of the call (USD) when it knows the model's price; null otherwise. */
  costUsd: number | null;
}

/** A call that got no answer at all: nothing listening, connection reset, host unknown, or the deadline. */
export class NoAnswerError extends Error {
  override name = 'NoAnswerError';
}

export interface ChatProvider {
  callApi(prompt: string, context?: unknown, options?: { abortSignal?: AbortSignal }): Promise<{
    output?: unknown;
    error?: string;
    tokenUsage?: { prompt?: number; completion?: number };
    cost?: number;
  }>;
}

/** The base URL a provider family sends to, as promptfoo resolves it from the environment (or null when unknown). */
export function providerEndpoint(family: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const strip = (u: string) => u.replace(/\/+$/, '');
  switch (family) {
    case 'anthropic:messages':
      return strip(env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com');
    case 'openai:chat':
      return strip(env.OPENAI_BASE_URL || env.OPENAI_API_BASE_URL || (env.OPENAI_API_HOST ? `https://${env.OPENAI_API_HOST}/v1` : 'https://api.openai.com/v1'));
    case 'azure:chat':
    case 'azureopenai:chat': {
      const host = env.AZURE_API_BASE_URL || env.AZURE_OPENAI_API_BASE_URL || (env.AZURE_API_HOST || env.AZURE_OPENAI_API_HOST ? `https://${env.AZURE_API_HOST || env.AZURE_OPENAI_API_HOST}` : '');
      return host ? strip(host) : null;
    }
    case 'ollama:chat':
      return strip(env.OLLAMA_BASE_URL || 'http://localhost:11434');
    default:
      return null;
  }
}

/** Provider config that asks for a deterministic answer of at most `maxTokens`, in the family's own key names. */
export function chatProviderConfig(family: string, maxTokens: number): Record<string, unknown> {
  if (family === 'ollama:chat') return { temperature: 0, num_predict: maxTokens };
  if (family === 'google' || family === 'vertex') return { temperature: 0, maxOutputTokens: maxTokens, generationConfig: { temperature: 0, maxOutputTokens: maxTokens } };
  return { temperature: 0, max_tokens: maxTokens };
}

/** Connection failures as promptfoo's clients word them (undici, the vendors' SDKs). */
const NO_ANSWER = /ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|socket hang up|fetch failed|Connection error|other side closed|UND_ERR_SOCKET/i;

/**
 * Why the endpoint cannot be reached (nothing listening, unknown host, no route), or undefined when a TCP
 * connection opens within `timeoutMs`. Only the connection is opened: nothing is sent.
 */
export function probeEndpoint(url: string, timeoutMs = 3000): Promise<string | undefined> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Promise.resolve(`not a URL: ${url}`);
  }
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const s = connect({ host, port });
    const done = (why: string | undefined) => {
      clearTimeout(t);
      s.destroy();
      resolve(why);
    };
    const t = setTimeout(() => done(`no TCP connection to ${host}:${port} within ${timeoutMs} ms`), timeoutMs);
    s.once('connect', () => done(undefined));
    s.once('error', (e: NodeJS.ErrnoException) => done(`${e.code ?? e.message} connecting to ${host}:${port}`));
  });
}

/** promptfoo's own response cache folder (PROMPTFOO_CACHE_PATH, else `cache` in PROMPTFOO_CONFIG_DIR or ~/.promptfoo). */
export function promptfooCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.PROMPTFOO_CACHE_PATH || join(env.PROMPTFOO_CONFIG_DIR || join(homedir(), '.promptfoo'), 'cache');
}

/**
 * Loads promptfoo's provider once (the eval has promptfoo loaded already; the CLI loads it on first use). promptfoo keeps
 * model answers in its own disk cache and answers a repeated request from it: a cache folder holding files git tracks
 * (a committed `.promptfoo/cache`) could answer for the model, so it is refused in CI (exit 2, src/util/cache-files.ts)
 * and, elsewhere, promptfoo's cache is turned off for this process after a LOUD warning.
 */
export async function loadChatProvider(providerId: string, config: Record<string, unknown>): Promise<ChatProvider> {
  const pf = (await import('promptfoo')) as unknown as {
    loadApiProvider: (id: string, ctx?: { options?: { config?: Record<string, unknown> } }) => Promise<ChatProvider>;
    cache?: { disableCache?: () => void };
  };
  if (trackedCacheFiles(promptfooCacheDir(), "promptfoo's model-answer").size) pf.cache?.disableCache?.();
  return pf.loadApiProvider(providerId, { options: { config } });
}

/**
 * RANKGATE_LLM_TIMEOUT_MS: an upper bound (ms) on every model call's deadline, whoever makes it (judges, expansion,
 * the llm: reranker, review judge); unset: each caller's own deadline. A value that is not a number >= 1 is refused.
 */
export function llmDeadlineCap(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.RANKGATE_LLM_TIMEOUT_MS?.trim();
  if (!raw) return Infinity;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1) throw new Error(`RANKGATE_LLM_TIMEOUT_MS="${raw}": expected a number of milliseconds >= 1`);
  return n;
}

/** One model call: the prompt as chat messages, bounded by `deadlineMs` (and RANKGATE_LLM_TIMEOUT_MS) and `signal`. */
export async function callChatProvider(provider: ChatProvider, providerId: string, prompt: ChatPrompt, deadlineMs: number, signal?: AbortSignal): Promise<ModelAnswer> {
  deadlineMs = Math.min(deadlineMs, llmDeadlineCap());
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // rejected before the abort, so the deadline is what the judgement says, not "abandoned by the caller"
      reject(new NoAnswerError(`${providerId}: no answer within ${deadlineMs} ms (the caller's deadline)`));
      ac.abort();
    }, deadlineMs);
    ac.signal.addEventListener('abort', () => reject(new NoAnswerError(`${providerId}: call abandoned by the caller`)), { once: true });
  });
  const messages = JSON.stringify([
    { role: 'system', content: prompt.system },
    { role: 'user', content: prompt.user },
  ]);
  try {
    const res = await Promise.race([provider.callApi(messages, undefined, { abortSignal: ac.signal }), deadline]);
    if (res.error) {
      const msg = redactText(String(res.error).split('\n')[0]!.slice(0, 300));
      if (NO_ANSWER.test(msg)) throw new NoAnswerError(`${providerId}: ${msg}`);
      throw new Error(`${providerId}: ${msg}`);
    }
    const out = res.output;
    // a model that echoes a key (its own API key, a password it was shown) never hands it on: every caller (judges,
    // expansion, the llm: reranker) gets, parses, caches and writes the redacted text (src/util/redact.ts)
    const raw = typeof out === 'string' ? out : out === undefined || out === null ? undefined : JSON.stringify(out);
    return {
      text: raw === undefined ? undefined : redactText(raw),
      inputTokens: Number(res.tokenUsage?.prompt ?? 0) || 0,
      outputTokens: Number(res.tokenUsage?.completion ?? 0) || 0,
      costUsd: typeof res.cost === 'number' && Number.isFinite(res.cost) ? res.cost : null,
    };
  } catch (e) {
    if (e instanceof NoAnswerError) throw e;
    const msg = e instanceof Error ? e.message : String(e);
    if (NO_ANSWER.test(msg) || (e as Error)?.name === 'AbortError') throw new NoAnswerError(`${providerId}: ${msg.split('\n')[0]}`);
    throw e;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** "openai:chat" of "openai:chat:gpt-4.1-mini" (the first two parts of a promptfoo provider id). */
export function providerFamily(providerId: string): string {
  return providerId.split(':').slice(0, 2).join(':');
}

const loaded = new Map<string, Promise<ChatProvider>>();

/**
 * One call of the chat provider `providerId` (any promptfoo chat provider id): loaded once per (id, config) in this
 * process, temperature 0, at most `maxTokens` output tokens, abandoned after `deadlineMs` (a NoAnswerError; an
 * answer with an error is an Error naming the provider).
 */
export async function chatCall(
  providerId: string,
  prompt: ChatPrompt,
  opts: { deadlineMs: number; maxTokens: number; config?: Record<string, unknown>; signal?: AbortSignal },
): Promise<ModelAnswer> {
  const config = { ...chatProviderConfig(providerFamily(providerId), opts.maxTokens), ...(opts.config ?? {}) };
  const key = JSON.stringify([providerId, config]);
  let p = loaded.get(key);
  if (!p) {
    p = loadChatProvider(providerId, config);
    p.catch(() => loaded.delete(key));
    loaded.set(key, p);
  }
  return callChatProvider(await p, providerId, prompt, opts.deadlineMs, opts.signal);
}
