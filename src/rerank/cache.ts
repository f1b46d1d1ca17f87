/**
 * On-disk rerank score cache, like the embedding cache: a passage's score is kept by (reranker id, endpoint, the
 * settings that change a score — instructions, max tokens per passage, the LLM prompt's hash —, query, sha256 of the
 * passage), so a re-run of an unchanged eval sends nothing, and another reranker, endpoint, prompt or passage text
 * never reuses an old score. One file a (reranker settings, query): `<dir>/<kk>/<key>.json` holding
 * `{reranker, query, scores: {<passage sha256>: score}}`, default dir `.rankgate/cache/rerank/`. Writes merge with what
 * is on disk and are atomic (temp file + rename); a corrupt or foreign file is a miss and is rewritten.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/atomic.ts';

export const DEFAULT_RERANK_CACHE_DIR = join('.rankgate', 'cache', 'rerank');

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export interface RerankCacheScope {
  reranker: string;
  endpoint: string;
  /** Anything else that changes a score (instructions, maxTokensPerDoc, prompt hash). */
  settings: readonly unknown[];
}

interface CacheFile {
  v: 1;
  reranker: string;
  query: string;
  scores: Record<string, number>;
}

export class RerankCache {
  constructor(readonly dir: string = DEFAULT_RERANK_CACHE_DIR) {}

  private file(scope: RerankCacheScope, query: string): string {
    const key = sha256(JSON.stringify(['v1', scope.reranker, scope.endpoint, scope.settings, query]));
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  private read(path: string, scope: RerankCacheScope, query: string): Record<string, number> {
    try {
      const j = JSON.parse(readFileSync(path, 'utf8')) as CacheFile;
      if (j?.v !== 1 || j.reranker !== scope.reranker || j.query !== query || !j.scores || typeof j.scores !== 'object') return {};
      return Object.fromEntries(Object.entries(j.scores).filter(([, s]) => typeof s === 'number' && Number.isFinite(s)));
    } catch {
      return {};
    }
  }

  /** Cached scores of these passages (undefined where none), in order. */
  get(scope: RerankCacheScope, query: string, passages: readonly string[]): (number | undefined)[] {
    const have = this.read(this.file(scope, query), scope, query);
    return passages.map((p) => have[sha256(p)]);
  }

  /** Keep these passages' scores (merged with what is already there). */
  put(scope: RerankCacheScope, query: string, passages: readonly string[], scores: readonly number[]): void {
    const path = this.file(scope, query);
    const merged = this.read(path, scope, query);
    passages.forEach((p, i) => (merged[sha256(p)] = scores[i]!));
    const out: CacheFile = { v: 1, reranker: scope.reranker, query, scores: merged };
    writeFileAtomic(path, JSON.stringify(out));
  }
}
