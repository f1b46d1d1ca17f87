/**
 * No secret leaves the process: the one redaction of every string rankgate writes where others read it (baselines,
 * results metadata, reports, PR comments, logs, the gate's output).
 *
 * - Credentials in URLs: `postgres://user:PASSWORD@host/db` -> `postgres://user:***@host/db`, and secret query
 *   parameters (`?password=`, `sslpassword`, `token`, `api_key`, ...) -> `***`.
 * - Secret settings: a config key named like a secret (password, secret, token, apiKey, credentials, auth...) keeps
 *   its key, its value becomes `***`.
 * - libpq's keyword form: `host=h password=x` (and `sslpassword=`) -> `password=***`.
 * - HTTP credentials a service echoes: `Authorization: Basic …` / `Bearer …` -> `Basic ***`; and the Basic value a
 *   url: with `user:pass@` sends (base64 of user:pass) wherever it appears, once that url was seen.
 * - Known secret values anywhere in free text: the password of DATABASE_URL (URL or keyword form), PGPASSWORD, AWS
 *   secret and session keys, every `*_API_KEY` variable of the environment (the judge's, the embedders', promptfoo's
 *   providers'), RANKGATE_URL_PASSWORD and RANKGATE_URL_HEADERS' values, and every value redactConfig met under a
 *   secret key or in a URL (an error message that quotes one is redacted too). With each, the forms a model or a
 *   service may echo it in: JSON-escaped, URL-encoded, base64 (standard and URL-safe, padded or not, and inside a
 *   longer base64 blob at any byte alignment) and reversed (registerSecret).
 */

import { readFileSync } from 'node:fs';
import { writeFileAtomic } from './atomic.ts';

export const REDACTED = '***';

/** Config keys whose string values are secrets: the key's end, case-insensitive, ignoring - and _ (`apiKey`, `x-api-key`,
 *  `dbPassword`, `clientSecret`, `authToken`, `secretAccessKey`; not `passage_substring` or `input_tokens`). */
const SECRET_KEY = /(^(pass|pwd|auth|key)$|password|passwd|passphrase|secret|token|apikey|accesskey|accesskeyid|privatekey|credentials?|authorization|cookie|sessionkey|signature)$/i;
export const isSecretKey = (k: string) => SECRET_KEY.test(k.replace(/[-_]/g, ''));
/** Query parameters whose values are secrets. */
export const SECRET_PARAM = /^(password|passwd|pass|pwd|sslpassword|secret|token|access_?token|api_?key|apikey|key|auth|signature|sig|x-amz-signature|x-amz-security-token)$/i;
/** Environment variables whose values are secrets. */
const SECRET_ENV = ['PGPASSWORD', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_BEARER_TOKEN_BEDROCK', 'GITHUB_TOKEN', 'GH_TOKEN', 'RANKGATE_URL_PASSWORD'];
/** Environment variables holding a JSON object of HTTP headers whose values are secrets (a url: service's). */
const HEADER_ENV = ['RANKGATE_URL_HEADERS'];
/** And every variable named like the API keys rankgate's embedders and judge and promptfoo's providers read
 *  (OPENAI_API_KEY, ANTHROPIC_API_KEY, VOYAGE_API_KEY, COHERE_API_KEY, RANKGATE_EMBED_API_KEY, …) or like an AWS secret. */
const SECRET_ENV_NAME = /(_API_KEY|_APIKEY|^AWS_SECRET_ACCESS_KEY|^AWS_SESSION_TOKEN|_SECRET_ACCESS_KEY|_SESSION_TOKEN|_AUTH_TOKEN)$/i;
/** Environment variables holding URLs whose credentials are secrets. */
const URL_ENV = ['DATABASE_URL', 'RANKGATE_TEST_DATABASE_URL'];

/** Shorter values are not replaced in free text (they would garble unrelated words); URLs are still redacted. */
const MIN_SECRET_LENGTH = 4;
/** Encoded and reversed forms are registered only for values at least this long (a short one's forms are common words). */
const MIN_ENCODED_LENGTH = 8;

const known = new Set<string>();
let sorted: string[] | null = null;
const add = (s: string) => {
  if (s.length >= MIN_SECRET_LENGTH && !known.has(s)) {
    known.add(s);
    sorted = null;
  }
};

/**
 * The base64 text that encodes `value`'s bytes wherever they sit in a longer blob: for each of the 3 byte alignments
 * (the value starting at a byte offset of 0, 1 or 2 mod 3 in the encoded data), the characters determined by the
 * value's bytes alone (the first and last characters of a group shared with neighbouring bytes are left out); and the
 * value encoded on its own, with and without `=` padding. Standard and URL-safe alphabets.
 */
export function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out = new Set<string>();
  for (let r = 0; r < 3; r++) {
    const enc = Buffer.concat([Buffer.alloc(r), bytes]).toString('base64');
    const total = r + bytes.length;
    const full = Math.floor(total / 3);
    const rem = total % 3;
    const stableEnd = 4 * full + (rem === 1 ? 1 : rem === 2 ? 2 : 0);
    const stableStart = r === 0 ? 0 : r === 1 ? 2 : 3;
    const core = enc.slice(stableStart, stableEnd);
    if (core.length >= MIN_ENCODED_LENGTH) out.add(core);
  }
  const alone = bytes.toString('base64');
  out.add(alone);
  out.add(alone.replace(/=+$/, ''));
  for (const f of [...out]) out.add(f.replace(/\+/g, '-').replace(/\//g, '_'));
  return [...out];
}

/** A value to redact wherever it appears in text from now on, with its encodings: JSON-escaped, URL-encoded (as
 *  encodeURIComponent and every byte as %XX), base64 (base64Forms) and reversed. */
export function registerSecret(value: unknown): void {
  if (typeof value !== 'string' || value.length < MIN_SECRET_LENGTH || value === REDACTED || known.has(value)) return;
  add(value);
  const json = JSON.stringify(value).slice(1, -1); // as it appears inside a JSON string
  if (json !== value) add(json);
  try {
    const decoded = decodeURIComponent(value);
    add(decoded);
    add(encodeURIComponent(decoded));
  } catch {
    /* not percent-encoded */
  }
  if (value.length < MIN_ENCODED_LENGTH) return;
  const hex = [...Buffer.from(value, 'utf8')].map((b) => b.toString(16).padStart(2, '0'));
  add(hex.map((h) => `%${h.toUpperCase()}`).join(''));
  add(hex.map((h) => `%${h}`).join(''));
  for (const f of base64Forms(value)) add(f);
  add([...value].reverse().join(''));
}

/** The password of URL credentials, and the HTTP Basic header value they become (src/search/url.ts sends
 *  `Authorization: Basic base64(user:password)`; a service that echoes its request headers quotes it). */
function registerCredentials(user: string, pass: string): void {
  registerSecret(pass);
  const dec = (x: string) => {
    try {
      return decodeURIComponent(x);
    } catch {
      return x;
    }
  };
  for (const [u, p] of [[user, pass], [dec(user), dec(pass)]] as const) if (p) registerSecret(Buffer.from(`${u}:${p}`).toString('base64'));
}

function registerUrlSecrets(text: string): void {
  for (const m of text.matchAll(URL_CREDENTIALS)) if (m[3]) registerCredentials(m[2] ?? '', m[3]);
  for (const m of text.matchAll(QUERY_SECRET)) if (SECRET_PARAM.test(m[2]!)) registerSecret(m[3]);
  // libpq's keyword form: `host=db user=app password=secret` or `password='se cret'`
  for (const m of text.matchAll(KEYWORD_SECRET)) registerSecret(unquote(m[3]!));
}

const unquote = (v: string) => (v.startsWith("'") && v.endsWith("'") && v.length >= 2 ? v.slice(1, -1).replace(/\\(.)/g, '$1') : v);

let envSeen = '';
/** The secrets of the environment, read again whenever it changed (a test or a provider may set DATABASE_URL late). */
function readEnv(): void {
  const keys = [...SECRET_ENV, ...URL_ENV, ...HEADER_ENV];
  for (const k of Object.keys(process.env)) if (SECRET_ENV_NAME.test(k) && !keys.includes(k)) keys.push(k);
  const now = keys.map((k) => `${k}=${process.env[k] ?? ''}`).join('\0');
  if (now === envSeen) return;
  envSeen = now;
  for (const k of keys) if (!URL_ENV.includes(k) && !HEADER_ENV.includes(k)) registerSecret(process.env[k]);
  for (const k of URL_ENV) if (process.env[k]) registerUrlSecrets(process.env[k]!);
  for (const k of HEADER_ENV) for (const v of headerValues(process.env[k])) registerSecret(v);
}

/** The values of a JSON object of headers (`{"Authorization": "Bearer x"}`), and the credentials after a scheme word. */
export function headerValues(raw: string | undefined): string[] {
  if (!raw) return [];
  let o: unknown;
  try {
    o = JSON.parse(raw);
  } catch {
    return [];
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) return [];
  const out: string[] = [];
  for (const v of Object.values(o as Record<string, unknown>)) {
    if (typeof v !== 'string') continue;
    out.push(v);
    const m = /^\s*(?:basic|bearer|token|digest)\s+(\S+)/i.exec(v);
    if (m) out.push(m[1]!);
  }
  return out;
}

// scheme://user:password@  (the password may hold anything but '@' and '/'; user may be empty)
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/?#"'`<>]*):([^\s@/"'`<>]*)@/gi;
// ?password=x / &sslpassword=x
const QUERY_SECRET = /([?&;])([A-Za-z_-]+)=([^&#\s"'`<>]+)/g;
// libpq keyword form: password=x / sslpassword='x y' (after a start, a space, or a separator)
const KEYWORD_SECRET = /(^|[\s,(])((?:ssl)?password)\s*=\s*('(?:\\.|[^'\\])*'|[^\s'"`,)]+)/gi;
// an HTTP Authorization header's credentials, as a service may echo them: `Authorization: Basic dXNlcjpwYXNz`,
// `"authorization":"Bearer abc"`
const AUTH_HEADER = /(authorization["']?\s*[:=]\s*["']?\s*)(basic|bearer|token|digest)\s+([^\s"',}]+)/gi;

// a word (no white space or quotes) with at least one %XX escape
const PERCENT_RUN = /[^\s"'<>`%]*(?:%[0-9A-Fa-f]{2}[^\s"'<>`%]*)+/g;

/** `text` with URL credentials, secret query parameters and every known secret value replaced by ***. */
export function redactText(text: string): string {
  readEnv();
  if (!known.size && !text.includes('://') && !text.includes('=') && !/authorization/i.test(text)) return text;
  let out = text.replace(URL_CREDENTIALS, (_m, scheme: string, user: string, pass: string) => {
    registerCredentials(user, pass);
    return `${scheme}${user}:${REDACTED}@`;
  });
  out = out.replace(KEYWORD_SECRET, (_m, pre: string, name: string, value: string) => {
    registerSecret(unquote(value));
    return `${pre}${name}=${REDACTED}`;
  });
  out = out.replace(AUTH_HEADER, (_m, pre: string, scheme: string, value: string) => {
    registerSecret(value);
    return `${pre}${scheme} ${REDACTED}`;
  });
  out = out.replace(QUERY_SECRET, (m, sep: string, name: string, value: string) => {
    if (!SECRET_PARAM.test(name)) return m;
    registerSecret(value);
    return `${sep}${name}=${REDACTED}`;
  });
  sorted ??= [...known].sort((a, b) => b.length - a.length);
  for (const s of sorted) if (out.includes(s)) out = out.split(s).join(REDACTED);
  // a key percent-encoded in part (`sk%2Dlive…`): a run holding %XX escapes is read decoded, and when a known secret is
  // in it, it is given back decoded with the secret redacted
  if (out.includes('%') && known.size) {
    out = out.replace(PERCENT_RUN, (tok) => {
      let d: string;
      try {
        d = decodeURIComponent(tok);
      } catch {
        return tok;
      }
      let hit = false;
      for (const s of sorted!) {
        if (d.includes(s)) {
          d = d.split(s).join(REDACTED);
          hit = true;
        }
      }
      return hit ? d : tok;
    });
  }
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
