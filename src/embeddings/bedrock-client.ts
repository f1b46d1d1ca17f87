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
 */
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';

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
  /** Whole-request timeout, ms (connection timeout is a fifth of it, at most 5 s). Default 60000. */
  timeoutMs?: number;
}

export function bedrockEndpoint(opts: { endpoint?: string }): string | undefined {
  return opts.endpoint ?? (process.env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME || undefined);
}

export function createBedrockClient(opts: BedrockClientOptions = {}): BedrockRuntimeClient {
  if (opts.client) return opts.client;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const endpoint = bedrockEndpoint(opts);
  return new BedrockRuntimeClient({
    ...(opts.region ? { region: opts.region } : {}),
    ...(endpoint ? { endpoint } : {}),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
    maxAttempts: opts.maxAttempts ?? 3,
    // Plain HTTP/1.1 (works with real Bedrock and with a node:http fake), with real timeouts.
    requestHandler: new NodeHttpHandler({
      requestTimeout: timeoutMs,
      throwOnRequestTimeout: true,
      connectionTimeout: Math.min(5_000, Math.max(1, Math.floor(timeoutMs / 5))),
    }),
  });
}

/** A Bedrock call that failed for good (after retries) or returned a body we cannot use. */
export class BedrockCallError extends Error {
  readonly modelId: string;
  readonly attempts: number;
  readonly code: string;
  readonly status?: number;
  constructor(message: string, info: { modelId: string; attempts: number; code: string; status?: number; cause?: unknown }) {
    super(message, info.cause !== undefined ? { cause: info.cause } : undefined);
    this.name = 'BedrockCallError';
    this.modelId = info.modelId;
    this.attempts = info.attempts;
    this.code = info.code;
    this.status = info.status;
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
 * Run `fn` with our bounded outer retry loop (see the module comment). On final failure throws a
 * BedrockCallError naming the model, the number of attempts and the last error.
 */
export async function withRetries<T>(
  modelId: string,
  opts: Pick<BedrockClientOptions, 'retries' | 'retryBaseMs'>,
  fn: () => Promise<T>,
  info?: RetryInfo,
): Promise<T> {
  const retries = Math.max(0, opts.retries ?? 2);
  const base = Math.max(0, opts.retryBaseMs ?? 1000);
  let attempts = 0;
  for (let n = 0; ; n++) {
    try {
      return await fn();
    } catch (e) {
      const sdkAttempts = (e as SdkErrorLike)?.$metadata?.attempts ?? 1;
      attempts += sdkAttempts;
      if (info) {
        info.attempts += sdkAttempts;
        if (isThrottling(e)) info.throttled += 1;
      }
      if (e instanceof BedrockCallError) throw e;
      if (!isRetryable(e) || n >= retries) {
        throw new BedrockCallError(
          `Bedrock call to ${modelId} failed after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${describeError(e)}`,
          { modelId, attempts, code: (e as SdkErrorLike)?.name ?? 'Error', status: errorStatus(e), cause: e },
        );
      }
      if (info) info.retries += 1;
      const delay = base * 2 ** n;
      await sleep(delay + Math.floor(Math.random() * delay * 0.25));
    }
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

/** Map items through `fn` with at most `limit` in flight, keeping input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (failed === undefined) {
      const i = next++;
      if (i >= items.length) return;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (e) {
        failed ??= e;
        throw e;
      }
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker);
  const results = await Promise.allSettled(workers);
  const rejected = results.find((r) => r.status === 'rejected');
  if (rejected) throw failed ?? (rejected as PromiseRejectedResult).reason;
  return out;
}
