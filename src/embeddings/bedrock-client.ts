/**
 * Shared Bedrock Runtime plumbing for the embedders and the judge: client construction,
 * error classification and a bounded retry loop.
 *
 * Layering of retries (both bounded):
 * 1. the SDK's own standard retry strategy, `maxAttempts` attempts per call (default 3): it retries
 *    429 ThrottlingException, 5xx and timeouts with its own jittered backoff;
 * 2. `withRetries` around that: when the SDK gives up on a retryable failure (throttling, 5xx,
 *    timeout, connection reset), wait `retryBaseMs * 2^n` (+ up to 25% jitter) and try again,
 *    at most `retries` more times (default 2). Non-retryable errors (validation, access denied,
 *    malformed bodies) fail at once.
 *
 * Deadlines (a Bedrock endpoint that accepts connections and never answers must not hold anything for long):
 * - `timeoutMs`: one HTTP attempt (the SDK's request timeout; connection timeout a fifth of it, at most 5 s).
 *   Default RANKGATE_BEDROCK_TIMEOUT_MS, else 60,000 (the judge: RANKGATE_JUDGE_TIMEOUT_MS, else 15,000).
 * - `callTimeoutMs`: the whole call, every SDK attempt, our retries and their backoff together; the request in
 *   flight is aborted when it passes. Default RANKGATE_BEDROCK_CALL_TIMEOUT_MS, else 3 x timeoutMs (the judge:
 *   RANKGATE_JUDGE_CALL_TIMEOUT_MS, else 30,000). A call that ran out of time, or whose every attempt failed
 *   without any HTTP answer (timeouts, refused or reset connections), fails with code 'NoAnswer'.
 */
import { createRequire } from 'node:module';
import { Transform, type Readable } from 'node:stream';
import { mapLimit } from '../util/map-limit.ts';
import { sizeText } from '../util/capped-body.ts';
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';

type BedrockSdk = typeof import('@aws-sdk/client-bedrock-runtime') & Pick<typeof import('@smithy/node-http-handler'), 'NodeHttpHandler'>;
let sdk: BedrockSdk | undefined;

/**
 * The AWS SDK (its Bedrock client, commands and HTTP handler, ~45 modules), loaded on the first Bedrock call instead
 * of at import: the judge and embedder modules are imported by every promptfoo eval (through the gate hook) and most
 * never call Bedrock. Both packages are CommonJS (no `exports`, `main` is dist-cjs), so this is the same copy an
 * `import` loads.
 */
export function bedrockSdk(): BedrockSdk {
  if (!sdk) {
    const req = createRequire(import.meta.url);
    const { NodeHttpHandler } = req('@smithy/node-http-handler') as typeof import('@smithy/node-http-handler');
    sdk = { ...(req('@aws-sdk/client-bedrock-runtime') as typeof import('@aws-sdk/client-bedrock-runtime')), NodeHttpHandler };
  }
  return sdk;
}

export type BedrockCredentials = ConstructorParameters<typeof BedrockRuntimeClient>[0] extends infer C
  ? C extends { credentials?: infer K }
    ? K
    : never
  : never;

export interface BedrockClientOptions {
  /** AWS region; default from the standard AWS configuration (AWS_REGION, AWS_PROFILE, ~/.aws/config). */
  region?: string;
  /** Endpoint URL; default AWS_ENDPOINT_URL_BEDROCK_RUNTIME, else the regional Bedrock endpoint. */
  endpoint?: string;
  /** Credentials; default the standard AWS provider chain. */
  credentials?: BedrockCredentials;
  /** Use this client instead of building one (its own retry/timeout settings then apply). */
  client?: BedrockRuntimeClient;
  /** SDK attempts per call (throttling, 5xx, timeouts are retried by the SDK). Default 3. */
  maxAttempts?: number;
  /** Extra retries of our own after the SDK gives up on a retryable error. Default 2. */
  retries?: number;
  /** Base delay of our own backoff, ms. Default 1000. */
  retryBaseMs?: number;
  /** One HTTP attempt, ms (connection timeout is a fifth of it, at most 5 s). Default RANKGATE_BEDROCK_TIMEOUT_MS or 60000. */
  timeoutMs?: number;
  /** The whole call (all attempts, retries and backoff), ms. Default RANKGATE_BEDROCK_CALL_TIMEOUT_MS or 3 x timeoutMs. */
  callTimeoutMs?: number;
  /**
   * Largest response body read, bytes: the body is read as a stream and given up once over it (a declared
   * Content-Length over it is refused before reading); a BedrockCallError 'MalformedResponse', not retried.
   * Default: no cap (the embedders set one sized to the vectors they ask for). Not applied to a given `client`.
   */
  maxResponseBytes?: number;
}

/** A positive number of ms from an environment variable, or undefined; a bad value is a UserError-like message. */
export function envMs(name: string, scale = 1, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new BedrockCallError(`${name}="${raw}": expected a positive number`, { modelId: '-', attempts: 0, code: 'BadOption' });
  return n * scale;
}

export function attemptTimeoutMs(opts: { timeoutMs?: number }): number {
  return opts.timeoutMs ?? envMs('RANKGATE_BEDROCK_TIMEOUT_MS') ?? 60_000;
}

export function callTimeoutMs(opts: { timeoutMs?: number; callTimeoutMs?: number }): number {
  return opts.callTimeoutMs ?? envMs('RANKGATE_BEDROCK_CALL_TIMEOUT_MS') ?? 3 * attemptTimeoutMs(opts);
}

export function bedrockEndpoint(opts: { endpoint?: string }): string | undefined {
  return opts.endpoint ?? (process.env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME || undefined);
}

export function createBedrockClient(opts: BedrockClientOptions = {}): BedrockRuntimeClient {
  if (opts.client) return opts.client;
  const timeoutMs = attemptTimeoutMs(opts);
  const endpoint = bedrockEndpoint(opts);
  const { BedrockRuntimeClient, NodeHttpHandler } = bedrockSdk();
  // Plain HTTP/1.1 (works with real Bedrock and with a node:http fake), with real timeouts.
  const requestHandler = new NodeHttpHandler({
    requestTimeout: timeoutMs,
    throwOnRequestTimeout: true,
    connectionTimeout: Math.min(5_000, Math.max(1, Math.floor(timeoutMs / 5))),
  });
  if (opts.maxResponseBytes !== undefined) capResponses(requestHandler, opts.maxResponseBytes);
  return new BedrockRuntimeClient({
    ...(opts.region ? { region: opts.region } : {}),
    ...(endpoint ? { endpoint } : {}),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
    maxAttempts: opts.maxAttempts ?? 3,
    requestHandler,
  });
}

/** Make `handler` give up on any response body over `max` bytes (see BedrockClientOptions.maxResponseBytes). */
function capResponses(handler: InstanceType<BedrockSdk['NodeHttpHandler']>, max: number): void {
  const inner = handler.handle.bind(handler);
  const tooLarge = (declared?: number) =>
    new BedrockCallError(
      `malformed response body: over the ${sizeText(max)} limit for this request${declared === undefined ? '' : ` (Content-Length ${declared})`}; not read further`,
      { modelId: '-', attempts: 1, code: 'MalformedResponse' },
    );
  handler.handle = async (request, options) => {
    const out = await inner(request, options);
    const body = out.response.body as Readable | undefined;
    const declared = Number(out.response.headers['content-length'] ?? out.response.headers['Content-Length']);
    if (Number.isFinite(declared) && declared > max) {
      body?.destroy();
      throw tooLarge(declared);
    }
    if (body && typeof body.pipe === 'function') {
      let size = 0;
      const counted = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          if (size > max) {
            body.destroy();
            done(tooLarge());
          } else done(null, chunk);
        },
      });
      body.on('error', (e) => counted.destroy(e));
      out.response.body = body.pipe(counted);
    }
    return out;
  };
}

/** A Bedrock call that failed for good (after retries) or returned a body we cannot use. */
export class BedrockCallError extends Error {
  readonly modelId: string;
  readonly attempts: number;
  readonly code: string;
  readonly status?: number;
  /** The text (its position in the embedDocuments call) whose vector was wrong, when one was. */
  readonly textIndex?: number;
  constructor(message: string, info: { modelId: string; attempts: number; code: string; status?: number; cause?: unknown; textIndex?: number }) {
    super(message, info.cause !== undefined ? { cause: info.cause } : undefined);
    this.name = 'BedrockCallError';
    this.modelId = info.modelId;
    this.attempts = info.attempts;
    this.code = info.code;
    this.status = info.status;
    this.textIndex = info.textIndex;
  }
}

interface SdkErrorLike {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number; attempts?: number };
  $retryable?: unknown;
}

export function errorStatus(e: unknown): number | undefined {
  return (e as SdkErrorLike)?.$metadata?.httpStatusCode;
}

const RETRYABLE_NAMES = new Set([
  'ThrottlingException',
  'TooManyRequestsException',
  'ServiceUnavailableException',
  'ServiceUnavailable',
  'InternalServerException',
  'ModelNotReadyException',
  'ModelTimeoutException',
  'TimeoutError',
  'RequestTimeout',
]);
const RETRYABLE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']);

export function isRetryable(e: unknown): boolean {
  if (e instanceof BedrockCallError) return false;
  const err = e as SdkErrorLike;
  if (!err || typeof err !== 'object') return false;
  if (err.name && RETRYABLE_NAMES.has(err.name)) return true;
  if (err.code && RETRYABLE_CODES.has(err.code)) return true;
  const s = err.$metadata?.httpStatusCode;
  return s === 429 || (s !== undefined && s >= 500 && s <= 599);
}

export function isThrottling(e: unknown): boolean {
  const err = e as SdkErrorLike;
  return err?.name === 'ThrottlingException' || err?.name === 'TooManyRequestsException' || err?.$metadata?.httpStatusCode === 429;
}

export function describeError(e: unknown): string {
  const err = e as SdkErrorLike;
  if (!err || typeof err !== 'object') return String(e);
  const status = err.$metadata?.httpStatusCode;
  const name = err.name && err.name !== 'Error' ? err.name : err.code ?? 'Error';
  let hint = '';
  if (/Region is missing/i.test(err.message ?? '')) hint = ' (set AWS_REGION or AWS_PROFILE, or pass a region)';
  if (err.name === 'CredentialsProviderError') hint = ' (configure AWS credentials: AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or an instance role)';
  return `${name}${status ? ` (HTTP ${status})` : ''}: ${err.message ?? ''}${hint}`.trim();
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface RetryInfo {
  /** SDK attempts summed over our retries. */
  attempts: number;
  /** Our own retries performed. */
  retries: number;
  throttled: number;
}

/**
 * Run `fn` with our bounded outer retry loop (see the module comment), within the call deadline: `fn` gets an
 * AbortSignal to pass to `client.send` and the loop never sleeps past the deadline. On final failure throws a
 * BedrockCallError naming the model, the number of attempts and the last error (code 'NoAnswer' when the
 * endpoint never answered at all).
 */
export async function withRetries<T>(
  modelId: string,
  opts: Pick<BedrockClientOptions, 'retries' | 'retryBaseMs' | 'timeoutMs' | 'callTimeoutMs'> & { signal?: AbortSignal },
  fn: (signal: AbortSignal) => Promise<T>,
  info?: RetryInfo,
): Promise<T> {
  const retries = Math.max(0, opts.retries ?? 2);
  const base = Math.max(0, opts.retryBaseMs ?? 1000);
  const deadlineMs = callTimeoutMs(opts);
  const end = Date.now() + deadlineMs;
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), deadlineMs);
  // the caller may give up on the call too (the judge, once it knows the endpoint is dead)
  const onCallerAbort = () => ac.abort();
  opts.signal?.addEventListener('abort', onCallerAbort, { once: true });
  if (opts.signal?.aborted) ac.abort();
  let attempts = 0;
  let answered = false;
  const fail = (e: unknown, why: string): never => {
    const noAnswer = !answered && (ac.signal.aborted || isRetryable(e));
    throw new BedrockCallError(`Bedrock call to ${modelId} ${why}: ${describeError(e)}`, {
      modelId,
      attempts,
      code: noAnswer ? 'NoAnswer' : (e as SdkErrorLike)?.name ?? 'Error',
      status: errorStatus(e),
      cause: e,
    });
  };
  try {
    for (let n = 0; ; n++) {
      try {
        return await fn(ac.signal);
      } catch (e) {
        const sdkAttempts = (e as SdkErrorLike)?.$metadata?.attempts ?? 1;
        attempts += sdkAttempts;
        if (errorStatus(e) !== undefined) answered = true;
        if (info) {
          info.attempts += sdkAttempts;
          if (isThrottling(e)) info.throttled += 1;
        }
        if (e instanceof BedrockCallError) throw e;
        const plural = `${attempts} attempt${attempts === 1 ? '' : 's'}`;
        if (opts.signal?.aborted) fail(e, `abandoned by the caller (${plural})`);
        if (ac.signal.aborted) fail(e, `got no answer within ${deadlineMs} ms (call timeout; ${plural})`);
        if (!isRetryable(e) || n >= retries) fail(e, `failed after ${plural}`);
        const delay = base * 2 ** n;
        const wait = delay + Math.floor(Math.random() * delay * 0.25);
        if (Date.now() + wait >= end) fail(e, `failed after ${plural} (no time left for a retry within the ${deadlineMs} ms call timeout)`);
        if (info) info.retries += 1;
        await sleep(wait);
      }
    }
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/** Decode and JSON-parse a Bedrock InvokeModel body; a non-JSON body is a BedrockCallError. */
export function parseJsonBody(modelId: string, body: Uint8Array | undefined): unknown {
  const text = body ? new TextDecoder().decode(body) : '';
  try {
    return JSON.parse(text);
  } catch {
    const shown = text.length > 120 ? `${text.slice(0, 120)}…` : text;
    throw new BedrockCallError(`malformed response body from ${modelId}: not JSON (${JSON.stringify(shown)})`, {
      modelId,
      attempts: 1,
      code: 'MalformedResponse',
    });
  }
}

/** Map items through `fn` with at most `limit` in flight, keeping input order (src/util/map-limit.ts). */
export { mapLimit };
