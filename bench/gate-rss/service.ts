/**
 * The fast fake search service of bench/gate-rss.ts --promptfoo, as a promptfoo `module:`: no index, no database.
 * A query names its answer document ("... d000123 ..."); the service ranks it at a position drawn from a hash of the
 * query text and the column's `seed` (1..12, so some queries miss the top 10), around `topK` filler documents, with
 * 160-character contents. Deterministic, so two runs of one column score the same; microseconds a query, so the
 * figures measure promptfoo, the harness and the gate, not a search engine.
 */
import { createHash } from 'node:crypto';
import type { SearchHit, SearchParams, SearchResponse, SearchServiceLike } from '../../src/search/types.ts';

const TEXT = 'Calm is a lamp that burns steadily when the mind is still and the breath is slow; grief is a river that runs to the sea. ';

export async function createSearchService(config: Record<string, unknown> = {}): Promise<SearchServiceLike> {
  const seed = String(config.seed ?? '0');
  const docs = Number(config.docs ?? 100_000);
  return {
    async search(query: string, params: Partial<SearchParams> = {}): Promise<SearchResponse> {
      const topK = params.topK ?? 10;
      const h = createHash('md5').update(seed).update(query).digest();
      const answer = /\bd\d{6}\b/.exec(query)?.[0];
      const at = 1 + (h[0]! % 12); // 1..12: ranks 11 and 12 fall outside the top 10
      const hits: SearchHit[] = [];
      for (let r = 1, f = 0; r <= topK; r++) {
        const doc = answer && r === at ? answer : `d${String((h.readUInt32LE(4) + 7919 * f++) % docs).padStart(6, '0')}`;
        hits.push({ chunkId: `${doc}#c300-0`, documentId: doc, rank: r, score: 1 / (60 + r), content: `${doc}: ${TEXT}`.slice(0, 160), channels: { keyword: { rank: r, score: 1 / r } } });
      }
      return { hits, routing: { route: 'search', safety: false, reasons: [] }, diagnostics: { variant: 'c300:fake', keywordCandidates: [], vectorCandidates: [], timings: {} }, serviceMs: 0 };
    },
    async close() {},
  };
}
