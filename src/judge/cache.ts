/**
 * On-disk judgement cache: `<dir>/<model>/<prompt version>/<kk>/<key>.json`, default dir
 * `.rankgate/cache/judge/`. The key is the sha256 of everything that can change a verdict: the model id,
 * the endpoint the calls go to (endpoint option, AWS_ENDPOINT_URL_BEDROCK_RUNTIME, or the region's Bedrock
 * endpoint), the prompt version and the hash of the prompt template, the inputs (query, expected passages,
 * sha256 of the result, rank) and the sha256 of the exact prompt sent. So a rerun of an unchanged eval makes
 * no model calls, and another model, endpoint, prompt or input never reuses old verdicts. Only successful, strictly parsed verdicts are
 * stored (judge errors are retried next run), with the model's raw answer redacted. Writes are atomic (temp file +
 * rename); a corrupt or foreign entry (another producer: model, endpoint, prompt version) is ignored (treated as a
 * miss) and overwritten. Files are read as src/util/cache-files.ts says (regular files under the size cap, never files
 * tracked by git), and the caller parses a cached verdict as strictly as a fresh answer (`refuse` notes one that fails).
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../util/atomic.ts';
import { noteCache, readCacheFile, trackedCacheFiles } from '../util/cache-files.ts';
import { redactText } from '../util/redact.ts';

export const DEFAULT_JUDGE_CACHE_DIR = join('.rankgate', 'cache', 'judge');

export const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export interface CacheKeyParts {
  model: string;
  /** Resolved endpoint URL of the calls. */
  endpoint?: string;
  promptVersion: string;
  /** Hash of the prompt template (src/judge/judge.ts TEMPLATE_HASHES). */
  template?: string;
  /** sha256 of the exact system + user prompt sent. */
  promptSha256?: string;
  query: string;
  /** Anything else in the prompt besides the passage (expected passages). */
  context?: readonly string[];
  passage: string;
  /** 1-based rank of the result (it is in the prompt). */
  rank?: number;
}

export interface CacheEntry {
  key: string;
  model: string;
  endpoint?: string;
  promptVersion: string;
  query: string;
  rank?: number;
  passageSha256: string;
  verdict: string;
  raw: string;
  inputTokens: number;
  outputTokens: number;
  at: string;
}

export class JudgeCache {
  private readonly ignored: Set<string>;
  constructor(readonly dir: string = DEFAULT_JUDGE_CACHE_DIR) {
    this.ignored = trackedCacheFiles(dir, 'judge');
  }

  key(p: CacheKeyParts): string {
    return sha256(
      JSON.stringify(['v2', p.model, p.endpoint ?? null, p.promptVersion, p.template ?? null, p.promptSha256 ?? null, p.query, p.context ?? [], sha256(p.passage), p.rank ?? null]),
    );
  }

  private path(model: string, promptVersion: string, key: string): string {
    const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '_');
    return join(this.dir, safe(model), safe(promptVersion), key.slice(0, 2), `${key}.json`);
  }

  get(p: CacheKeyParts): CacheEntry | undefined {
    const key = this.key(p);
    const text = readCacheFile(this.path(p.model, p.promptVersion, key), this.dir, this.ignored);
    if (text === undefined) return undefined;
    try {
      const e = JSON.parse(text) as CacheEntry;
      const same = e && e.key === key && e.model === p.model && (e.endpoint ?? null) === (p.endpoint ?? null) && e.promptVersion === p.promptVersion;
      return same && typeof e.verdict === 'string' ? e : undefined;
    } catch {
      return undefined;
    }
  }

  /** Note a cached verdict that does not parse as a fresh answer must (a LOUD note; the caller asks the model). */
  refuse(p: CacheKeyParts, verdict: string): void {
    noteCache(this.dir, 'a verdict no fresh answer could be', `${resolve(this.path(p.model, p.promptVersion, this.key(p)))}: ${JSON.stringify(verdict.slice(0, 40))}`);
  }

  set(p: CacheKeyParts, v: { verdict: string; raw: string; inputTokens: number; outputTokens: number }): void {
    const key = this.key(p);
    const entry: CacheEntry = {
      key,
      model: p.model,
      ...(p.endpoint ? { endpoint: p.endpoint } : {}),
      promptVersion: p.promptVersion,
      query: p.query,
      ...(p.rank !== undefined ? { rank: p.rank } : {}),
      passageSha256: sha256(p.passage),
      ...v,
      raw: redactText(v.raw),
      at: new Date().toISOString(),
    };
    writeFileAtomic(this.path(p.model, p.promptVersion, key), JSON.stringify(entry, null, 1) + '\n');
  }
}
