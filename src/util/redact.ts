/**
 * No secret leaves the process: the one redaction of every string rankgate writes where others read it (baselines,
 * results metadata, reports, PR comments, logs, the gate's output).
 *
 * - Credentials in URLs: `postgres://user:PASSWORD@host/db` -> `postgres://user:***@host/db`, and secret query
 *   parameters (`?password=`, `sslpassword`, `token`, `api_key`, ...) -> `***`.
 * - Secret settings: a config key named like a secret (password, secret, token, apiKey, credentials, auth...) keeps
 *   its key, its value becomes `***`.
 * - Known secret values anywhere in free text: the password of DATABASE_URL, PGPASSWORD, AWS secret keys, and every
 *   value redactConfig met under a secret key or in a URL (an error message that quotes one is redacted too).
 */

import { readFileSync } from 'node:fs';
import { writeFileAtomic } from './atomic.ts';

export const REDACTED = '***';

/** Config keys whose string values are secrets: the key's end, case-insensitive, ignoring - and _ (`apiKey`, `x-api-key`,
 *  `dbPassword`, `clientSecret`, `authToken`, `secretAccessKey`; not `passage_substring` or `input_tokens`). */
const SECRET_KEY = /(^(pass|pwd|auth|key)$|password|passwd|passphrase|secret|token|apikey|accesskey|accesskeyid|privatekey|credentials?|authorization|cookie|sessionkey|signature)$/i;
const isSecretKey = (k: string) => SECRET_KEY.test(k.replace(/[-_]/g, ''));
/** Query parameters whose values are secrets. */
const SECRET_PARAM = /^(password|passwd|pass|pwd|sslpassword|secret|token|access_?token|api_?key|apikey|key|auth|signature|sig|x-amz-signature|x-amz-security-token)$/i;
/** Environment variables whose values are secrets. */
const SECRET_ENV = ['PGPASSWORD', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_BEARER_TOKEN_BEDROCK', 'GITHUB_TOKEN', 'GH_TOKEN'];
/** Environment variables holding URLs whose credentials are secrets. */
const URL_ENV = ['DATABASE_URL', 'RANKGATE_TEST_DATABASE_URL'];

/** Shorter values are not replaced in free text (they would garble unrelated words); URLs are still redacted. */
const MIN_SECRET_LENGTH = 4;

const known = new Set<string>();

/** A value to redact wherever it appears in text from now on (and its URL-encoded form). */
export function registerSecret(value: unknown): void {
  if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || value === REDACTED) return;
  known.add(value);
  const json = JSON.stringify(value).slice(1, -1); // as it appears inside a JSON string
  if (json !== value) known.add(json);
  try {
    const decoded = decodeURIComponent(value);
    if (decoded.length >= MIN_SECRET_LENGTH) known.add(decoded);
    const encoded = encodeURIComponent(decoded);
    if (encoded.length >= MIN_SECRET_LENGTH) known.add(encoded);
  } catch {
    /* not percent-encoded */
  }
}

function registerUrlSecrets(text: string): void {
  for (const m of text.matchAll(URL_CREDENTIALS)) if (m[3]) registerSecret(m[3]);
  for (const m of text.matchAll(QUERY_SECRET)) registerSecret(m[3]);
}

let envSeen = '';
/** The secrets of the environment, read again whenever it changed (a test or a provider may set DATABASE_URL late). */
function readEnv(): void {
  const now = [...SECRET_ENV, ...URL_ENV].map((k) => process.env[k] ?? '').join('\0');
  if (now === envSeen) return;
  envSeen = now;
  for (const k of SECRET_ENV) registerSecret(process.env[k]);
  for (const k of URL_ENV) if (process.env[k]) registerUrlSecrets(process.env[k]!);
}

// scheme://user:password@  (the password may hold anything but '@' and '/'; user may be empty)
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/?#"'`<>]*):([^\s@/"'`<>]*)@/gi;
// ?password=x / &sslpassword=x
const QUERY_SECRET = /([?&;])([A-Za-z_-]+)=([^&#\s"'`<>]+)/g;

/** `text` with URL credentials, secret query parameters and every known secret value replaced by ***. */
export function redactText(text: string): string {
  readEnv();
  if (!known.size && !text.includes('://') && !text.includes('=')) return text;
  let out = text.replace(URL_CREDENTIALS, (_m, scheme: string, user: string, pass: string) => {
    registerSecret(pass);
    return `${scheme}${user}:${REDACTED}@`;
  });
  out = out.replace(QUERY_SECRET, (m, sep: string, name: string, value: string) => {
    if (!SECRET_PARAM.test(name)) return m;
    registerSecret(value);
    return `${sep}${name}=${REDACTED}`;
  });
  for (const s of [...known].sort((a, b) => b.length - a.length)) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/** A copy of a config (or any JSON value) with secret keys' values replaced and every string redacted. */
export function redactConfig<T>(value: T): T {
  const walk = (v: unknown, key: string | undefined, depth: number): unknown => {
    if (depth > 64) return v;
    if (key !== undefined && typeof v === 'string' && v !== '' && isSecretKey(key)) return REDACTED;
    if (typeof v === 'string') return redactText(v);
    if (Array.isArray(v)) return v.map((x) => walk(x, undefined, depth + 1));
    if (v && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[k] = walk(x, k, depth + 1);
      return o;
    }
    return v;
  };
  // secret values under secret keys anywhere in the value are registered first, so a URL or message elsewhere in
  // the same value that quotes one is redacted too
  const register = (v: unknown, key: string | undefined, depth: number): void => {
    if (depth > 64) return;
    if (typeof v === 'string') {
      if (key !== undefined && isSecretKey(key)) registerSecret(v);
      else registerUrlSecrets(v);
    } else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) register(x, Array.isArray(v) ? undefined : k, depth + 1);
  };
  register(value, undefined, 0);
  return walk(value, undefined, 0) as T;
}

/** JSON text of `value` with every secret redacted (for files: baselines, reports, results). */
export function redactJson(value: unknown, space: number | undefined = 2): string {
  return JSON.stringify(redactConfig(value), null, space);
}

/** Redact a text file in place (atomically), when it holds anything to redact: promptfoo's results file, which
 *  carries the config as promptfoo loaded it. */
export function redactFile(path: string): void {
  const text = readFileSync(path, 'utf8');
  const out = redactText(text);
  if (out !== text) writeFileAtomic(path, out);
}

/**
 * Redact every string the process writes to stdout and stderr until the returned function is called: the logs and
 * the gate's output of a command (console.log/error end there). Buffers pass unchanged.
 */
export function redactStandardStreams(): () => void {
  const undo: (() => void)[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write;
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      return (write as (...a: unknown[]) => boolean).call(this, typeof chunk === 'string' ? redactText(chunk) : chunk, ...rest);
    } as typeof stream.write;
    undo.push(() => (stream.write = write));
  }
  return () => undo.forEach((u) => u());
}
