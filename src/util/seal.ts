/**
 * Seals of evidence files (the baseline, the eval record, the review result), and what they can and cannot prove.
 *
 * - **Keyed** (`RANKGATE_SEAL_KEY` set): HMAC-SHA256 with a secret the CI holds (a repository or organisation secret,
 *   never in the repository). A file sealed this way was written by a process that held the key: a pull request's
 *   author who edits the file and recomputes the seal cannot produce a valid one. On pull requests from forks GitHub
 *   passes no secrets: the verdict then says the seal could not be verified.
 * - **Unkeyed** (no key): SHA-256 of the same canonical text. This is an **accident check** (a file edited by hand
 *   without re-deriving everything, a block copied from another file), never proof: anyone can recompute it.
 *
 * A seal is written as `hmac-sha256:<64 hex>` or `sha256:<64 hex>`; bare 64 hex digits (files written before the
 * prefix existed) read as `sha256:`. Every purpose has its own label in the MAC input, so a seal of one kind of file
 * never verifies another.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { UserError } from '../errors.ts';

export const SEAL_KEY_ENV = 'RANKGATE_SEAL_KEY';
/** The shortest key accepted: 32 characters (e.g. `openssl rand -hex 32` gives 64). */
export const MIN_SEAL_KEY = 32;

/** JSON with object keys sorted at every level and undefined values left out: the input of every digest and seal. */
export function canonicalJson(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonicalJson).join(',')}]`;
  if (x && typeof x === 'object') {
    const o = x as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(x) ?? 'null';
}

export const sha256Hex = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

/** The CI's seal key from the environment; null when unset or empty. A key that is too short is a setup error. */
export function sealKey(env: NodeJS.ProcessEnv = process.env): Buffer | null {
  const v = env[SEAL_KEY_ENV];
  if (v === undefined || v === '') return null;
  if (v.trim().length < MIN_SEAL_KEY)
    throw new UserError(`${SEAL_KEY_ENV}: expected a secret of at least ${MIN_SEAL_KEY} characters (e.g. \`openssl rand -hex 32\`), got ${v.trim().length}`);
  return Buffer.from(v.trim(), 'utf8');
}

export type SealKind = 'keyed' | 'unkeyed';

/** The seal of `text` for one purpose: keyed when a key is given, else the unkeyed accident check. */
export function sealText(purpose: string, text: string, key: Buffer | null): string {
  if (key) return `hmac-sha256:${createHmac('sha256', key).update(`rankgate-seal\n${purpose}\n`).update(text).digest('hex')}`;
  return `sha256:${sha256Hex(`rankgate-seal\n${purpose}\n${text}`)}`;
}

export type SealCheck =
  /** keyed and verified with the key */
  | { status: 'verified'; kind: 'keyed' }
  /** unkeyed and consistent: an accident check passed, nothing more */
  | { status: 'consistent'; kind: 'unkeyed' }
  /** a keyed seal, but no key here to verify it (a fork's pull request, a laptop) */
  | { status: 'unverifiable'; kind: 'keyed' }
  /** the seal does not match: the file was edited after it was sealed (or sealed with another key) */
  | { status: 'mismatch'; kind: SealKind }
  /** a key is configured but the file carries only an unkeyed seal: anyone could have written it */
  | { status: 'unkeyed-under-key'; kind: 'unkeyed' }
  | { status: 'missing' };

/**
 * Check a seal. `legacy` is the pre-prefix unkeyed digest of files written before this module (bare 64 hex over their
 * own canonical form): pass it when the purpose had one, so those files still read as `consistent`.
 */
export function checkSeal(purpose: string, text: string, seal: unknown, key: Buffer | null, legacy?: () => string): SealCheck {
  if (typeof seal !== 'string' || !seal) return { status: 'missing' };
  const eq = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
  if (seal.startsWith('hmac-sha256:')) {
    if (!key) return { status: 'unverifiable', kind: 'keyed' };
    return eq(seal, sealText(purpose, text, key)) ? { status: 'verified', kind: 'keyed' } : { status: 'mismatch', kind: 'keyed' };
  }
  const ok = seal.startsWith('sha256:') ? eq(seal, sealText(purpose, text, null)) : /^[0-9a-f]{64}$/.test(seal) && !!legacy && eq(seal, legacy());
  if (!ok) return { status: 'mismatch', kind: 'unkeyed' };
  return key ? { status: 'unkeyed-under-key', kind: 'unkeyed' } : { status: 'consistent', kind: 'unkeyed' };
}

/** One phrase for a seal check, for verdict notes: what it proves. */
export function sealPhrase(c: SealCheck): string {
  switch (c.status) {
    case 'verified':
      return `sealed with ${SEAL_KEY_ENV} (verified)`;
    case 'consistent':
      return `unkeyed seal consistent (an accident check, not proof: set ${SEAL_KEY_ENV} in CI for keyed seals)`;
    case 'unverifiable':
      return `keyed seal NOT VERIFIED: ${SEAL_KEY_ENV} is not set here (a fork's pull request gets no secrets)`;
    case 'mismatch':
      return c.kind === 'keyed' ? `keyed seal does NOT match (edited after it was sealed, or sealed with another ${SEAL_KEY_ENV})` : 'seal does NOT match (edited after it was sealed)';
    case 'unkeyed-under-key':
      return `only an unkeyed seal while ${SEAL_KEY_ENV} is set: anyone could have written it`;
    case 'missing':
      return 'no seal';
  }
}
