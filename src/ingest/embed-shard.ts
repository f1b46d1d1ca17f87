/**
 * Sharded embedding for a large corpus: N machines each embed 1/N of the distinct chunk texts, write them as an
 * embedding-cache file, and the files merge (keyed by embedder x sha256 of the text, the same key as the
 * database's embedding_cache) and load into the database; `rankgate ingest` then finds every vector in the cache
 * and embeds nothing. The chunks are the ingest's own (chunkDocument with the same chunk sizes and overlap), so
 * the keys match exactly.
 *
 * A text belongs to shard 1 + (first 8 bytes of its sha256, big-endian) mod N (shards numbered from 1, like the
 * golden-set shards): adding documents never moves the other texts' shard, so cached shard files stay valid.
 *
 * Cache file: JSON Lines, one `{"embedder": KEY, "sha256": HEX, "embedding": [floats]}` per text, KEY the cache key
 * `ID|DIMENSION|INPUT_TYPE` (embeddingCacheKey; files of an older rankgate carry the bare id and still load).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chunkDocument } from './chunker.ts';
import type { CorpusDocument } from './types.ts';
import type { Embedder } from '../embeddings/types.ts';
import { embeddingCacheKey } from '../embeddings/index.ts';
import type { Db } from '../db/index.ts';
import { UserError } from '../errors.ts';
import { embedSlices } from './embed-slices.ts';

export interface CacheEntry {
  embedder: string;
  sha256: string;
  embedding: number[];
}

export const sha256Hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** 1-based shard of a sha256 hex among `count`. */
export function hashShard(hex: string, count: number): number {
  return Number(BigInt('0x' + hex.slice(0, 16)) % BigInt(count)) + 1;
}

/** Distinct chunk texts of the corpus at these chunk sizes (sha256 -> text), in first-seen order. */
export function chunkTexts(documents: CorpusDocument[], chunkSizes: number[], overlap = 0): Map<string, string> {
  const out = new Map<string, string>();
  for (const chunkSize of chunkSizes) {
    for (const d of documents) for (const c of chunkDocument(d, { chunkSize, overlap })) out.set(sha256Hex(c.content), c.content);
  }
  return out;
}

/** Embed the texts of one shard; `known` (earlier cache entries) are reused, not re-embedded. */
export async function embedShard(
  texts: Map<string, string>,
  embedder: Embedder,
  shard: { index: number; count: number },
  known: Map<string, number[]> = new Map(),
  onProgress?: (done: number, total: number) => void,
): Promise<{ entries: CacheEntry[]; embedded: number; reused: number }> {
  const mine = [...texts.keys()].filter((h) => hashShard(h, shard.count) === shard.index);
  await embedder.init?.();
  const key = embeddingCacheKey(embedder, 'document');
  const entries: CacheEntry[] = [];
  const missing: string[] = [];
  for (const h of mine) {
    const v = known.get(h);
    if (v) entries.push({ embedder: key, sha256: h, embedding: v });
    else missing.push(h);
  }
  const reused = entries.length;
  let done = 0;
  const embs = await embedSlices(embedder, missing.map((h) => texts.get(h)!), {
    describe: (i) => `chunk text ${missing[i]}`,
    onSlice: (_start, vs) => onProgress?.((done += vs.length), missing.length),
  });
  // The numbers the ingest itself would send to pgvector (src/ingest/pipeline.ts vecText), so the database holds the same float4s.
  embs.forEach((e, k) => entries.push({ embedder: key, sha256: missing[k]!, embedding: Array.from(e) }));
  return { entries, embedded: missing.length, reused };
}

export function serializeCache(entries: Iterable<CacheEntry>): string {
  let s = '';
  for (const e of entries) s += JSON.stringify({ embedder: e.embedder, sha256: e.sha256, embedding: e.embedding }) + '\n';
  return s;
}

/** Read cache files into one map keyed by `embedder\tsha256`; a key with two different vectors is refused. */
export function readCacheFiles(files: string[], into: Map<string, CacheEntry> = new Map()): Map<string, CacheEntry> {
  const from = new Map<string, string>();
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new UserError(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      let e: CacheEntry;
      try {
        e = JSON.parse(line) as CacheEntry;
      } catch {
        throw new UserError(`${file}:${i + 1}: not JSON, expected {"embedder", "sha256", "embedding"} (an embedding-cache file from rankgate embed-cache)`);
      }
      if (typeof e?.embedder !== 'string' || typeof e.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(e.sha256)) {
        throw new UserError(`${file}:${i + 1}: embedder (string) and sha256 (64 hex digits) expected`);
      }
      if (!Array.isArray(e.embedding) || e.embedding.length === 0 || !e.embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw new UserError(`${file}:${i + 1}: embedding: expected an array of finite numbers`);
      }
      const key = `${e.embedder}\t${e.sha256}`;
      const prev = into.get(key);
      if (prev) {
        if (prev.embedding.length !== e.embedding.length || prev.embedding.some((x, k) => x !== e.embedding[k])) {
          throw new UserError(`${file}:${i + 1}: text ${e.sha256} (${e.embedder}) has a different vector in ${from.get(key) ?? 'an earlier file'}: caches from different embedders or models cannot merge`);
        }
        return;
      }
      const dim = [...into.values()].find((x) => x.embedder === e.embedder)?.embedding.length;
      if (dim !== undefined && dim !== e.embedding.length) throw new UserError(`${file}:${i + 1}: embedding: ${e.embedding.length} dimensions, but ${e.embedder} vectors elsewhere have ${dim}`);
      into.set(key, e);
      from.set(key, `${file}:${i + 1}`);
    });
  }
  return into;
}

/** Load entries into the database's embedding_cache (existing keys kept). Returns the rows inserted. */
export async function importCache(db: Db, entries: Iterable<CacheEntry>): Promise<number> {
  const all = [...entries];
  let inserted = 0;
  for (let i = 0; i < all.length; i += 1000) {
    const part = all.slice(i, i + 1000);
    const r = await db.pool.query(
      `INSERT INTO embedding_cache (embedder, sha256, embedding)
       SELECT t.e, t.h, t.v::vector FROM unnest($1::text[], $2::text[], $3::text[]) AS t(e, h, v)
       ON CONFLICT (embedder, sha256) DO NOTHING`,
      [part.map((e) => e.embedder), part.map((e) => e.sha256), part.map((e) => '[' + e.embedding.join(',') + ']')],
    );
    inserted += r.rowCount ?? 0;
  }
  return inserted;
}

/**
 * The database's embedding cache (optionally of one embedder: its keys `ID|...` and the keys in `alsoKeys`), for a CI
 * cache between runs whose database is thrown away.
 */
export async function exportCache(db: Db, embedder?: string, alsoKeys: readonly string[] = []): Promise<CacheEntry[]> {
  const r = await db.pool.query<{ embedder: string; sha256: string; v: string }>(
    `SELECT embedder, sha256, embedding::text AS v FROM embedding_cache
     ${embedder ? `WHERE left(embedder, length($1) + 1) = $1 || '|' OR embedder = ANY($2::text[])` : ''} ORDER BY embedder, sha256`,
    embedder ? [embedder, [...alsoKeys]] : [],
  );
  return r.rows.map((x) => ({ embedder: x.embedder, sha256: x.sha256, embedding: JSON.parse(x.v) as number[] }));
}
