/**
 * On-disk cache of text a chat model generated (query rewrites, HyDE passages): `<dir>/<kind>/<kk>/<key>.json`. Each
 * entry carries what produced it: the provider id (which names the model as configured: promptfoo's chat answers do
 * not say which model served them), the endpoint the calls go to (no credentials), the sha256 of the prompt template,
 * and the input (the query, the number asked for). The key is the sha256 of all of them, and an entry whose recorded
 * producer or input differs from the lookup's is a miss: another model, endpoint, prompt or query never reuses old
 * text. Only successful, parsed, redacted answers are stored.
 *
 * Read as src/util/cache-files.ts says (regular files under the size cap, never files tracked by git) and checked
 * again by the caller as a fresh answer is (`check`: the caps on count and length, no secret in the text): an entry
 * that fails is refused (a LOUD note, a miss, asked live). Writes are atomic (temp file + rename). The judges' verdict
 * cache (src/judge/cache.ts) has the same shape with verdict-specific parts.
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../util/atomic.ts';
import { noteCache, readCacheFile, trackedCacheFiles } from '../util/cache-files.ts';

export const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export interface GeneratedEntry {
  key: string;
  provider: string;
  endpoint: string | null;
  promptSha256: string;
  input: string;
  texts: string[];
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  at: string;
}

export interface GeneratedKey {
  provider: string;
  endpoint: string | null;
  /** sha256 of the prompt template (the file's text). */
  promptSha256: string;
  /** What was asked: the query and whatever else the prompt is filled with (e.g. the number of rewrites). */
  input: string;
}

export class GeneratedTextCache {
  private readonly ignored: Set<string>;
  constructor(
    readonly dir: string,
    /** A folder per use (expansion-rewrites, expansion-hyde, ...). */
    readonly kind: string,
  ) {
    this.ignored = trackedCacheFiles(dir, kind.replace(/-.*/, ''));
  }

  key(k: GeneratedKey): string {
    return sha256(JSON.stringify(['v1', this.kind, k.provider, k.endpoint, k.promptSha256, k.input]));
  }

  private path(key: string): string {
    return join(this.dir, this.kind.replace(/[^A-Za-z0-9._-]+/g, '_'), key.slice(0, 2), `${key}.json`);
  }

  /**
   * The entry of `k`, or undefined (absent, unreadable, another producer's or input's, or refused by `check`: why
   * the texts are not what a fresh answer may be, noted LOUD).
   */
  get(k: GeneratedKey, check?: (texts: string[]) => string | undefined): GeneratedEntry | undefined {
    const key = this.key(k);
    const path = this.path(key);
    const text = readCacheFile(path, this.dir, this.ignored);
    if (text === undefined) return undefined;
    let e: GeneratedEntry;
    try {
      e = JSON.parse(text) as GeneratedEntry;
    } catch {
      return undefined;
    }
    if (!e || e.key !== key || e.provider !== k.provider || (e.endpoint ?? null) !== (k.endpoint ?? null) || e.promptSha256 !== k.promptSha256 || e.input !== k.input) return undefined;
    if (!Array.isArray(e.texts) || !e.texts.every((t) => typeof t === 'string')) return undefined;
    const why = check?.(e.texts);
    if (why) {
      noteCache(this.dir, `an entry a fresh answer could not be: ${why}`, resolve(path));
      return undefined;
    }
    return e;
  }

  set(k: GeneratedKey, v: { texts: string[]; inputTokens: number; outputTokens: number; costUsd: number | null }): void {
    const key = this.key(k);
    const entry: GeneratedEntry = { key, ...k, ...v, at: new Date().toISOString() };
    writeFileAtomic(this.path(key), JSON.stringify(entry, null, 1) + '\n');
  }
}
