/**
 * On-disk cache of text a chat model generated (query rewrites, HyDE passages): `<dir>/<kind>/<kk>/<key>.json`. The key
 * is the sha256 of everything that can change the text: the provider id, the endpoint the calls go to, the sha256 of
 * the prompt template, and the input (the query, the number asked for). So a re-run of an unchanged eval sends nothing,
 * and another model, endpoint, prompt or query never reuses old text. Only successful, parsed answers are stored; a
 * corrupt or foreign entry is a miss. Writes are atomic (temp file + rename). The judges' verdict cache
 * (src/judge/cache.ts) has the same shape with verdict-specific parts.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic.ts';

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
  constructor(
    readonly dir: string,
    /** A folder per use (expansion-rewrites, expansion-hyde, ...). */
    readonly kind: string,
  ) {}

  key(k: GeneratedKey): string {
    return sha256(JSON.stringify(['v1', this.kind, k.provider, k.endpoint, k.promptSha256, k.input]));
  }

  private path(key: string): string {
    return join(this.dir, this.kind.replace(/[^A-Za-z0-9._-]+/g, '_'), key.slice(0, 2), `${key}.json`);
  }

  get(k: GeneratedKey): GeneratedEntry | undefined {
    const key = this.key(k);
    try {
      const e = JSON.parse(readFileSync(this.path(key), 'utf8')) as GeneratedEntry;
      return e && e.key === key && Array.isArray(e.texts) && e.texts.every((t) => typeof t === 'string') ? e : undefined;
    } catch {
      return undefined;
    }
  }

  set(k: GeneratedKey, v: { texts: string[]; inputTokens: number; outputTokens: number; costUsd: number | null }): void {
    const key = this.key(k);
    const entry: GeneratedEntry = { key, ...k, ...v, at: new Date().toISOString() };
    writeFileAtomic(this.path(key), JSON.stringify(entry, null, 1) + '\n');
  }
}
