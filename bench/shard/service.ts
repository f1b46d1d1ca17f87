/**
 * The search service of bench/shard.ts, as a promptfoo `module:`: rankgate's own SearchService over the benchmark's
 * Postgres schema, with the hashing embedder the index was built with (queries embed for free). Hit content is cut
 * to 160 characters so a 10,000-query results file stays small (the cost measured is the harness, not JSON size).
 */
import { openDatabase } from '../../src/db/index.ts';
import { createSearchService as create } from '../../src/search/service.ts';
import type { SearchParams, SearchResponse, SearchServiceLike } from '../../src/search/types.ts';
import { HashEmbedder } from '../synthetic.ts';

export async function createSearchService(config: Record<string, unknown> = {}): Promise<SearchServiceLike> {
  const db = await openDatabase({ url: String(config.databaseUrl), schema: String(config.schema) });
  const emb = new HashEmbedder(Number(config.dim ?? 384));
  const svc = await create({ db, embedder: emb, routing: false, defaults: { chunkSize: 300, embedder: emb.id } });
  return {
    async search(query: string, params: Partial<SearchParams> = {}): Promise<SearchResponse> {
      const r = await svc.search(query, params);
      return { ...r, hits: r.hits.map((h) => ({ ...h, content: h.content.slice(0, 160) })) };
    },
    async close() {
      await svc.close();
      await db.close();
    },
  } as SearchServiceLike;
}
