/**
 * On-disk rerank score cache, like the embedding cache: a passage's score is kept with what produced it, so a re-run
 * of an unchanged eval sends nothing and nothing else's score is ever reused.
 *
 * One file a (producer, query): `<dir>/<kk>/<key>.json` holding `{v: 2, producer, query, scores: {<passage sha256>:
 * score}}`, default dir `.rankgate/cache/rerank/` (RANKGATE_RERANK_CACHE_DIR). The producer is the reranker id (which
 * names the configured model), the endpoint (scheme://host/path, no credentials), the model as the server reports it
 * when it says so before a call (TEI's `GET /info` model_id and sha), and the settings that change a score
 * (instructions, max tokens per passage, an LLM prompt's hash); the key is their sha256 with the query's, so another
 * reranker, endpoint, served model, prompt or passage text is a miss. A model named in a vendor's answer (`model`) is
 * kept in the file too: once this process has seen the server answer with another model, the file is a miss.
 *
 * Read as src/util/cache-files.ts says (regular files under the size cap, never files tracked by git) and checked:
 * a file of another producer or query is a miss; a score outside the API's documented range (RerankScoreRange:
 * [0, 1] for Cohere, Bedrock and TEI's normalised scores, the grades 0-3 for `llm:`) refuses the whole file (a LOUD
 * note, every passage a miss, scored live). Writes merge with what is on disk and are atomic (temp file + rename).
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../util/atomic.ts';
import { noteCache, readCacheFile, trackedCacheFiles } from '../util/cache-files.ts';

export const DEFAULT_RERANK_CACHE_DIR = join('.rankgate', 'cache', 'rerank');

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The scores an API documents: within [min, max], and whole numbers when `integer`. */
export interface RerankScoreRange {
  min: number;
  max: number;
  integer?: boolean;
}

export const inRange = (s: number, r: RerankScoreRange | undefined): boolean =>
  Number.isFinite(s) && (!r || (s >= r.min && s <= r.max && (!r.integer || Number.isInteger(s))));

export const rangeText = (r: RerankScoreRange) => (r.integer ? `a whole number from ${r.min} to ${r.max}` : `a number from ${r.min} to ${r.max}`);

export interface RerankCacheScope {
  reranker: string;
  endpoint: string;
  /** The model as the server reports it before a call (TEI /info), when it does. Part of the key. */
  served?: string;
  /** The model the server's last answer in this process named (a vendor's `model` field): a file naming another is a miss. */
  answered?: string;
  /** Anything else that changes a score (instructions, maxTokensPerDoc, prompt hash). */
  settings: readonly unknown[];
  /** The API's documented score range (none: any finite score). */
  range?: RerankScoreRange;
}

interface Producer {
  reranker: string;
  endpoint: string;
  served: string | null;
  settings: string;
  /** The model a vendor's answer named when the scores were written. */
  answered?: string | null;
}

interface CacheFile {
  v: 2;
  producer: Producer;
  query: string;
  scores: Record<string, number>;
}

const producerOf = (s: RerankCacheScope): Producer => ({ reranker: s.reranker, endpoint: s.endpoint, served: s.served ?? null, settings: JSON.stringify(s.settings) });

export class RerankCache {
  readonly dir: string;
  /** Files of the folder tracked by git (ignored outside CI; refused in CI at construction). */
  private readonly ignored: Set<string>;
  constructor(dir: string = DEFAULT_RERANK_CACHE_DIR) {
    this.dir = dir;
    this.ignored = trackedCacheFiles(dir, 'rerank');
  }

  private file(scope: RerankCacheScope, query: string): string {
    const p = producerOf(scope);
    const key = sha256(JSON.stringify(['v2', p.reranker, p.endpoint, p.served, p.settings, query]));
    return join(this.dir, key.slice(0, 2), `${key}.json`);
  }

  private read(path: string, scope: RerankCacheScope, query: string, quiet = false): { scores: Record<string, number>; answered: string | null } {
    const none = { scores: {}, answered: null };
    const text = readCacheFile(path, this.dir, this.ignored, undefined, quiet);
    if (text === undefined) return none;
    let j: CacheFile;
    try {
      j = JSON.parse(text) as CacheFile;
    } catch {
      return none;
    }
    const want = producerOf(scope);
    const p = j?.producer;
    if (j?.v !== 2 || !p || p.reranker !== want.reranker || p.endpoint !== want.endpoint || p.served !== want.served || p.settings !== want.settings || j.query !== query) return none;
    if (!j.scores || typeof j.scores !== 'object' || Array.isArray(j.scores)) return none;
    if (scope.answered !== undefined && typeof p.answered === 'string' && p.answered !== scope.answered) return none;
    const scores: Record<string, number> = {};
    for (const [h, s] of Object.entries(j.scores)) {
      if (typeof s !== 'number' || !inRange(s, scope.range)) {
        if (!quiet)
          noteCache(this.dir, `a score outside ${scope.reranker}'s documented range${scope.range ? ` (${rangeText(scope.range)})` : ''}`, `${resolve(path)}: ${JSON.stringify(s)}`);
        return none;
      }
      scores[h] = s;
    }
    return { scores, answered: typeof p.answered === 'string' ? p.answered : null };
  }

  /** Cached scores of these passages (undefined where none), in order. */
  get(scope: RerankCacheScope, query: string, passages: readonly string[]): (number | undefined)[] {
    const have = this.read(this.file(scope, query), scope, query).scores;
    return passages.map((p) => have[sha256(p)]);
  }

  /** Keep these passages' scores (merged with what is already there), and the model the answer named. */
  put(scope: RerankCacheScope, query: string, passages: readonly string[], scores: readonly number[]): void {
    const path = this.file(scope, query);
    const old = this.read(path, scope, query, true); // a refused file was noted when read; it is replaced
    const merged = old.scores;
    passages.forEach((p, i) => (merged[sha256(p)] = scores[i]!));
    const out: CacheFile = { v: 2, producer: { ...producerOf(scope), answered: scope.answered ?? old.answered }, query, scores: merged };
    writeFileAtomic(path, JSON.stringify(out));
  }
}
