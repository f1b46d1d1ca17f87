/**
 * Ingestion pipeline: documents -> chunks (per chunk size) -> embeddings (cached in the DB by
 * (embedder id, sha256 of the text)) -> one index variant per (chunk size, embedder):
 * book_chunks rows with a per-language tsvector and the embedding, BM25 postings/terms/stats built from
 * the stored tsvector, a partial HNSW index on the variant's vectors, then ANALYZE.
 *
 * Re-ingesting a variant is one transaction: readers see the old variant or the complete new one, never
 * half of it. Embedding happens before the transaction (and is cached), so a failed write re-embeds nothing.
 */
import { createHash } from 'node:crypto';
import { chunkDocument } from './chunker.ts';
import type { Chunk, CorpusDocument } from './types.ts';
import type { Embedder } from '../embeddings/types.ts';
import { atVendor, embeddingCacheKey, legacyCacheKeys } from '../embeddings/index.ts';
import { embedSlices } from './embed-slices.ts';
import { availableTextConfigs, ident, textConfigFor, type Db } from '../db/index.ts';
import { UserError } from '../errors.ts';
import { corpusIdentity, shortCorpusId, type CorpusIdentity } from './identity.ts';

export interface IngestProgress {
  phase: 'chunk' | 'embed' | 'write' | 'index' | 'done';
  variant: string;
  done: number;
  total: number;
}

/** What an ingest is about to send to its embedder, told before anything is sent. */
export interface IngestPlan {
  variant: string;
  embedder: string;
  model?: string;
  dimension: number;
  /** Host of the endpoint ('' offline). */
  endpoint?: string;
  chunks: number;
  /** Distinct chunk texts. */
  texts: number;
  /** Texts whose vector is in the cache. */
  cached: number;
  /** Texts to embed now. */
  toEmbed: number;
  /** o200k tokens of the texts to embed (the vendor's tokenizer counts somewhat differently). */
  tokens: number;
  /** List price in USD per million tokens, when known. */
  pricePerMTok?: number;
  /** tokens x price, when the price is known. */
  costUsd?: number;
  family?: string;
}

export interface IngestOptions {
  db: Db;
  documents: CorpusDocument[];
  chunkSizes: number[];
  embedder: Embedder;
  /** Overlap in tokens (default 0). */
  overlap?: number;
  onProgress?: (p: IngestProgress) => void;
  /** Told per variant before its texts are sent to the embedder: chunk count, tokens and cost estimate. */
  onPlan?: (p: IngestPlan) => void;
  /** HNSW build parameters (pgvector defaults m=16, ef_construction=64). */
  hnsw?: { m?: number; efConstruction?: number };
  /** Where the documents were read from (recorded on the variant with the corpus identity). */
  corpusPath?: string;
  /** Replace index variants built from another corpus (default false: refuse). */
  replace?: boolean;
}

export interface VariantStats {
  variant: string;
  variantId: number;
  chunkSize: number;
  embedder: string;
  dimension: number;
  documents: number;
  chunks: number;
  /** Texts embedded now (cache misses). */
  embedded: number;
  /** Texts whose vector came from the cache. */
  cached: number;
  embedMs: number;
  writeMs: number;
  buildMs: number;
}

export interface IngestStats {
  variants: VariantStats[];
  totalMs: number;
  corpus: CorpusIdentity;
  /** Documents that left the corpus and were removed with their chunks. */
  removedDocuments: number;
  /** Variants of another corpus dropped by `replace`. */
  replaced: string[];
  /** Things a person should know (variants built from an earlier state of this corpus, …). */
  notes: string[];
}

interface ExistingVariant {
  id: number;
  name: string;
  corpus_id: string | null;
  corpus: string | null;
}

/**
 * The rule for index variants and their corpus (documented in docs/faults.md): a variant is never replaced by
 * one built from another corpus without being asked. For each variant this ingest would rebuild (same chunk size
 * and embedder): built from the same documents (same corpus id), or from the same place whose files changed
 * since (an earlier state of this corpus) -> rebuilt; built from another corpus, or of unknown origin (before
 * corpus ids were recorded) -> a conflict: the ingest refuses unless `replace` is set. Variants of other chunk
 * sizes / embedders are left alone (they keep their own corpus id; a database may hold variants of several
 * corpora side by side); those that are an earlier state of this corpus get a note.
 */
export function classifyVariants(
  existing: readonly ExistingVariant[],
  corpus: CorpusIdentity,
  rebuilding: ReadonlySet<string>,
): { conflicts: ExistingVariant[]; stale: ExistingVariant[] } {
  const conflicts: ExistingVariant[] = [];
  const stale: ExistingVariant[] = [];
  for (const v of existing) {
    if (v.corpus_id === corpus.id) continue;
    const samePlace = Boolean(v.corpus_id) && corpus.path !== null && v.corpus === corpus.path;
    if (rebuilding.has(v.name)) {
      if (!samePlace) conflicts.push(v);
    } else if (samePlace) {
      stale.push(v);
    }
  }
  return { conflicts, stale };
}

export function describeVariantCorpus(v: { corpus_id: string | null; corpus: string | null }): string {
  return v.corpus_id ? `${v.corpus ?? 'an unnamed corpus'} (corpus ${shortCorpusId(v.corpus_id)})` : 'an unknown corpus (built before rankgate recorded corpus ids)';
}

export function conflictMessage(db: Db, conflicts: readonly ExistingVariant[], corpus: CorpusIdentity): string {
  const byCorpus = new Map<string, string[]>();
  for (const v of conflicts) {
    const k = describeVariantCorpus(v);
    byCorpus.set(k, [...(byCorpus.get(k) ?? []), v.name]);
  }
  const held = [...byCorpus].map(([c, names]) => `${names.join(', ')} built from ${c}`).join('; ');
  return (
    `${db.dataDir ?? db.describe} holds index variant${conflicts.length > 1 ? 's' : ''} ${held}, not from ${corpus.path ?? 'this corpus'} (corpus ${shortCorpusId(corpus.id)}): ` +
    `ingesting here would replace ${conflicts.length > 1 ? 'them' : 'it'}; pass --replace to do that, or give another database (--db DIR, RANKGATE_DATA_DIR)`
  );
}

export function variantName(chunkSize: number, embedder: string): string {
  return `c${chunkSize}:${embedder}`;
}

/** What a variant records of the embedder that made its vectors (index_variants.params.embedder). */
export interface VariantEmbedderRecord {
  id: string;
  family?: string;
  model?: string;
  dimension: number;
  /** Endpoint host ('' offline): never a URL with credentials, never a key. */
  endpoint?: string;
}

export function embedderRecord(e: Embedder): VariantEmbedderRecord {
  return { id: e.id, family: e.family, model: e.model, dimension: e.dimension, endpoint: e.endpoint ?? '' };
}

const describeRecord = (r: { model?: string; dimension: number; endpoint?: string }) =>
  `${r.model ?? 'an unrecorded model'}, ${r.dimension}-d${r.endpoint ? ` from ${r.endpoint}` : ''}`;

/**
 * An existing variant of the same name built by the same embedder id but another model behind it (another dimension,
 * or another endpoint host): its vectors and the new ones must not be confused. Returns the refusal, or undefined.
 */
export function embedderMismatch(name: string, old: { dimension: number; params: unknown }, now: VariantEmbedderRecord): string | undefined {
  const rec = (old.params as { embedder?: Partial<VariantEmbedderRecord> } | null)?.embedder;
  const was = { model: rec?.model, dimension: old.dimension, endpoint: rec?.endpoint };
  const hostChanged = rec?.endpoint !== undefined && rec.endpoint !== (now.endpoint ?? '');
  if (old.dimension === now.dimension && !hostChanged) return undefined;
  return (
    `index variant ${name} holds vectors of ${describeRecord(was)}, but this embedder gives ${describeRecord(now)}: ` +
    `vectors of two models never share a variant; pass --replace to rebuild it with the new one, or give the other model its own id (ID@DIMENSIONS)`
  );
}

/**
 * The approximate index a variant's vectors get: pgvector's HNSW takes `vector` up to 2,000 dimensions and `halfvec`
 * (16-bit floats) up to 4,000; above that there is none and the vector channel is an exact scan.
 */
export function vectorIndexKind(dimension: number): 'vector' | 'halfvec' | 'none' {
  return dimension <= 2000 ? 'vector' : dimension <= 4000 ? 'halfvec' : 'none';
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const vecText = (v: ArrayLike<number>) => '[' + Array.from(v).join(',') + ']';
const WRITE_BATCH = 500;
const CACHE_BATCH = 2000;

/** Look up / fill the embedding cache; returns a vector (pgvector text) per distinct text hash. */
export async function embedWithCache(
  db: Db,
  embedder: Embedder,
  texts: Map<string, string>, // sha256 -> text
  onProgress?: (done: number, total: number) => void,
  /** Called after the cache lookup, before anything is sent: the hashes to embed and how many were cached. */
  beforeEmbed?: (missing: readonly string[], cached: number) => void,
  /** Names a text in an error (`chunk X of document Y`). */
  describe?: (sha256: string) => string,
): Promise<{ vectors: Map<string, string>; embedded: number; cached: number }> {
  const vectors = new Map<string, string>();
  const hashes = [...texts.keys()];
  const key = embeddingCacheKey(embedder, 'document');
  // the current key first, then the keys an older rankgate wrote the same vectors under
  // (older keys named no endpoint: read only for an embedder at its vendor's own, never for another server's vectors)
  const keys = [key, ...(embedder.family && atVendor(embedder) ? legacyCacheKeys(embedder.id) : [])];
  for (const k of keys) {
    const wanted = hashes.filter((h) => !vectors.has(h));
    for (let i = 0; i < wanted.length; i += CACHE_BATCH) {
      const r = await db.pool.query<{ sha256: string; v: string }>(
        'SELECT sha256, embedding::text AS v FROM embedding_cache WHERE embedder = $1 AND sha256 = ANY($2::text[]) AND vector_dims(embedding) = $3',
        [k, wanted.slice(i, i + CACHE_BATCH), embedder.dimension],
      );
      for (const row of r.rows) vectors.set(row.sha256, row.v);
    }
  }
  const cached = vectors.size;
  const missing = hashes.filter((h) => !vectors.has(h));
  beforeEmbed?.(missing, cached);
  // The embedder batches within its API's limits itself: embedSlices hands it one request's worth at a time, as many
  // at once as it can use (an embedding pool's threads). The cache is filled in groups of whole slices, as each group
  // completes, so an interrupted run keeps what it paid for.
  const batch = Math.max(1, embedder.maxBatch || 1);
  const group = batch * Math.max(1, Math.ceil(256 / batch));
  const strings = missing.map((h) => texts.get(h)!);
  const out: string[] = new Array(missing.length);
  const left = new Map<number, number>();
  let done = 0;
  onProgress?.(0, missing.length);
  await embedSlices(embedder, strings, {
    keep: false,
    describe: (i) => (describe ? describe(missing[i]!) : `text ${missing[i]}`),
    notWritten: 'the index variant being built was not written (vectors already computed are cached): run the ingest again',
    onSlice: async (start, embs) => {
      embs.forEach((e, k) => (out[start + k] = vecText(e)));
      done += embs.length;
      onProgress?.(done, missing.length);
      const g = Math.floor(start / group);
      const first = g * group;
      const size = Math.min(group, missing.length - first);
      const remaining = (left.get(g) ?? size) - embs.length;
      left.set(g, remaining);
      if (remaining > 0) return;
      // the group's last slice is in: its vectors go to the cache
      const ids = missing.slice(first, first + size);
      const vs = out.slice(first, first + size);
      await db.pool.query(
        `INSERT INTO embedding_cache (embedder, sha256, embedding)
         SELECT $1, t.h, t.v::vector FROM unnest($2::text[], $3::text[]) AS t(h, v)
         ON CONFLICT (embedder, sha256) DO NOTHING`,
        [key, ids, vs],
      );
      ids.forEach((h, k) => vectors.set(h, vs[k]!));
    },
  });
  return { vectors, embedded: missing.length, cached };
}

const UPSERT_DOCUMENTS = `
INSERT INTO documents (id, slug, title, language, path, tags, metadata)
SELECT t.id, t.slug, t.title, t.language, t.path, ARRAY(SELECT jsonb_array_elements_text(t.tags::jsonb)), t.metadata::jsonb
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
  AS t(id, slug, title, language, path, tags, metadata)
ON CONFLICT (id) DO UPDATE SET slug = EXCLUDED.slug, title = EXCLUDED.title, language = EXCLUDED.language,
  path = EXCLUDED.path, tags = EXCLUDED.tags, metadata = EXCLUDED.metadata`;

const INSERT_CHUNKS = `
INSERT INTO book_chunks (variant, id, document, chunk_index, content, language, text_config, token_count,
                         tsv, doc_len, embedding, book_slug, chapter, path, metadata)
SELECT $1, x.id, x.document, x.chunk_index, x.content, x.language, x.cfg, x.token_count,
       x.tsv, (SELECT coalesce(sum(coalesce(cardinality(u.positions), 1)), 0) FROM unnest(x.tsv) u)::int,
       x.embedding::vector, x.book_slug, x.chapter, x.path, x.metadata::jsonb
FROM (
  SELECT t.*, to_tsvector(t.cfg::regconfig, t.content) AS tsv
  FROM unnest($2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::int[], $9::text[],
              $10::text[], $11::int[], $12::text[], $13::text[])
    AS t(id, document, chunk_index, content, language, cfg, token_count, embedding, book_slug, chapter, path, metadata)
) x`;

const BUILD_POSTINGS = `
INSERT INTO bm25_postings (variant, term, chunk, tf, doc_len)
SELECT c.variant, u.lexeme, c.key, coalesce(cardinality(u.positions), 1), c.doc_len
FROM book_chunks c, unnest(c.tsv) u
WHERE c.variant = $1
ORDER BY u.lexeme, c.key`; // physically grouped by term: a query term's postings sit on few pages
const BUILD_TERMS = `
INSERT INTO bm25_terms (variant, term, df)
SELECT variant, term, count(*) FROM bm25_postings WHERE variant = $1 GROUP BY variant, term`;
const BUILD_STATS = `
INSERT INTO bm25_stats (variant, n, avgdl)
SELECT $1, count(*), coalesce(avg(doc_len), 0) FROM book_chunks WHERE variant = $1`;

export function ginIndexName(variantId: number): string {
  return `book_chunks_tsv_v${variantId}`;
}

export function hnswIndexName(variantId: number): string {
  return `book_chunks_hnsw_v${variantId}`;
}

/**
 * Vectors kept inside their book_chunks row instead of the TOAST table. pgvector's type is stored EXTERNAL
 * (out of line, uncompressed), so every vector-channel hit paid a TOAST index probe and page read to compute its
 * score: about half of an HNSW query's time on PGlite at 100k chunks. STORAGE MAIN keeps a vector in the row
 * unless the row cannot fit otherwise, and toast_tuple_target 4096 lets a row of up to 4 kB (a 300-token chunk,
 * its tsvector and a vector of up to ~1000 dims) stay whole; larger rows still move content and tsvector out first.
 * Both settings apply to rows written from now on: rows of an index built earlier keep working as they are and
 * become inline when their variant is re-ingested. Set once per database, in its own short statement (ALTER
 * TABLE locks the table; never inside the long ingest transaction).
 */
export async function ensureInlineVectors(db: Db): Promise<void> {
  const r = await db.pool.query<{ attstorage: string; reloptions: string[] | null }>(
    `SELECT a.attstorage, c.reloptions FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     WHERE a.attrelid = 'book_chunks'::regclass AND a.attname = 'embedding'`,
  );
  const row = r.rows[0];
  if (!row || (row.attstorage === 'm' && (row.reloptions ?? []).includes(`toast_tuple_target=${INLINE_TUPLE_TARGET}`))) return;
  await db.pool.query(
    `ALTER TABLE book_chunks ALTER COLUMN embedding SET STORAGE MAIN, SET (toast_tuple_target = ${INLINE_TUPLE_TARGET})`,
  );
}
const INLINE_TUPLE_TARGET = 4096;

function checkDocuments(documents: CorpusDocument[]): void {
  const seen = new Set<string>();
  documents.forEach((d, i) => {
    if (typeof d.id !== 'string' || !d.id) throw new UserError(`corpus document ${i}: field "id" must be a non-empty string`);
    if (seen.has(d.id)) throw new UserError(`corpus document ${i}: duplicate id "${d.id}"`);
    seen.add(d.id);
  });
}

export async function ingestCorpus(opts: IngestOptions): Promise<IngestStats> {
  const { db, documents, embedder } = opts;
  const overlap = opts.overlap ?? 0;
  const t0 = performance.now();
  if (!opts.chunkSizes.length) throw new UserError('ingest: at least one chunk size is required');
  checkDocuments(documents);
  const corpus = corpusIdentity(documents, opts.corpusPath);
  await ensureInlineVectors(db);
  // an embedder whose dimension is learned from its answers learns it now (one short request), before any variant is touched
  await embedder.init?.();
  if (!(Number.isInteger(embedder.dimension) && embedder.dimension > 0)) {
    throw new UserError(`embedder ${embedder.id}: no dimension known (got ${JSON.stringify(embedder.dimension)})`);
  }
  const record = embedderRecord(embedder);
  const rebuilding = new Set(opts.chunkSizes.map((c) => variantName(c, embedder.id)));
  const existing = (
    await db.pool.query<ExistingVariant & { dimension: number; params: unknown }>(
      'SELECT id, name, corpus_id, corpus, dimension, params FROM index_variants ORDER BY chunk_size, embedder',
    )
  ).rows;
  const { conflicts, stale } = classifyVariants(existing, corpus, rebuilding);
  if (conflicts.length && !opts.replace) throw new UserError(conflictMessage(db, conflicts, corpus));
  if (!opts.replace) {
    for (const v of existing) {
      const why = rebuilding.has(v.name) ? embedderMismatch(v.name, v, record) : undefined;
      if (why) throw new UserError(`${db.dataDir ?? db.describe}: ${why}`);
    }
  }
  const notes = stale.map(
    (v) => `${v.name} was built from an earlier state of ${v.corpus} (corpus ${shortCorpusId(v.corpus_id)}); rebuild it too to search the current documents`,
  );
  const replaced: string[] = [];
  let removedDocuments = 0;
  const available = await availableTextConfigs(db);
  const docById = new Map(documents.map((d) => [d.id, d]));
  const variants: VariantStats[] = [];

  for (const chunkSize of opts.chunkSizes) {
    const name = variantName(chunkSize, embedder.id);
    const progress = (phase: IngestProgress['phase'], done: number, total: number) =>
      opts.onProgress?.({ phase, variant: name, done, total });

    // 1. chunk
    const chunks: Chunk[] = [];
    documents.forEach((d, i) => {
      chunks.push(...chunkDocument(d, { chunkSize, overlap }));
      progress('chunk', i + 1, documents.length);
    });
    const ids = new Set<string>();
    for (const c of chunks) {
      if (ids.has(c.id)) throw new UserError(`ingest ${name}: duplicate chunk id "${c.id}" (document ${c.documentId})`);
      ids.add(c.id);
    }

    // 2. embed (cache first)
    const tEmbed = performance.now();
    const byHash = new Map<string, string>();
    const hashes = chunks.map((c) => {
      const h = sha256(c.content);
      byHash.set(h, c.content);
      return h;
    });
    const tokensByHash = new Map<string, number>();
    chunks.forEach((c, i) => tokensByHash.set(hashes[i]!, c.tokenCount));
    const { vectors, embedded, cached } = await embedWithCache(db, embedder, byHash, (d, t) => progress('embed', d, t), (missing, cachedNow) => {
      const tokens = missing.reduce((s, h) => s + (tokensByHash.get(h) ?? 0), 0);
      const price = embedder.pricePerMTok;
      opts.onPlan?.({
        variant: name,
        embedder: embedder.id,
        family: embedder.family,
        model: embedder.model,
        dimension: embedder.dimension,
        endpoint: embedder.endpoint,
        chunks: chunks.length,
        texts: byHash.size,
        cached: cachedNow,
        toEmbed: missing.length,
        tokens,
        pricePerMTok: price,
        costUsd: price === undefined ? undefined : (tokens / 1e6) * price,
      });
    }, (h) => {
      const c = chunks[hashes.indexOf(h)];
      return c ? `chunk ${c.id} of document ${c.documentId}` : `text ${h}`;
    });
    const embedMs = performance.now() - tEmbed;

    // 3. write the variant in one transaction
    const tWrite = performance.now();
    const client = await db.pool.connect();
    let variantId = 0;
    let buildMs = 0;
    let writeMs = 0;
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext(current_schema() || $1))', ['rankgate_ingest:' + name]);
      for (let i = 0; i < documents.length; i += WRITE_BATCH) {
        const b = documents.slice(i, i + WRITE_BATCH);
        await client.query(UPSERT_DOCUMENTS, [
          b.map((d) => d.id),
          b.map((d) => d.slug ?? null),
          b.map((d) => d.title ?? ''),
          b.map((d) => d.language || 'en'),
          b.map((d) => d.path ?? null),
          b.map((d) => JSON.stringify(d.tags ?? [])),
          b.map((d) => JSON.stringify(d.metadata ?? {})),
        ]);
      }
      const old = await client.query<{ id: number; name: string }>(
        'SELECT id, name FROM index_variants WHERE chunk_size = $1 AND embedder = $2',
        [chunkSize, embedder.id],
      );
      // variants of another corpus go with the first variant written (replace was asked for; checked above)
      const drop = [...old.rows];
      if (opts.replace && !replaced.length) {
        for (const c of conflicts) if (!drop.some((r) => r.id === c.id)) drop.push({ id: c.id, name: c.name });
      }
      for (const row of drop) {
        if (conflicts.some((c) => c.id === row.id)) replaced.push(row.name);
        await client.query(`DROP INDEX IF EXISTS ${ident(db.schema)}.${hnswIndexName(row.id)}`);
        await client.query(`DROP INDEX IF EXISTS ${ident(db.schema)}.${ginIndexName(row.id)}`);
        await client.query('DELETE FROM index_variants WHERE id = $1', [row.id]);
      }
      const params = {
        overlap,
        textConfigs: Object.fromEntries(
          [...new Set(chunks.map((c) => c.language))].sort().map((l) => [l, textConfigFor(l, available)]),
        ),
        hnsw: { m: opts.hnsw?.m ?? 16, efConstruction: opts.hnsw?.efConstruction ?? 64 },
        vectorIndex: vectorIndexKind(embedder.dimension),
        embedder: record,
        distance: 'cosine',
        bm25: { tf: 'positions in tsvector', docLen: 'sum of tf' },
      };
      const ins = await client.query<{ id: number }>(
        `INSERT INTO index_variants (name, chunk_size, embedder, dimension, overlap, params, corpus_id, corpus)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
        [name, chunkSize, embedder.id, embedder.dimension, overlap, JSON.stringify(params), corpus.id, corpus.path],
      );
      variantId = ins.rows[0].id;
      for (let i = 0; i < chunks.length; i += WRITE_BATCH) {
        const b = chunks.slice(i, i + WRITE_BATCH);
        const hb = hashes.slice(i, i + WRITE_BATCH);
        await client.query(INSERT_CHUNKS, [
          variantId,
          b.map((c) => c.id),
          b.map((c) => c.documentId),
          b.map((c) => c.chunkIndex),
          b.map((c) => c.content),
          b.map((c) => c.language),
          b.map((c) => textConfigFor(c.language, available)),
          b.map((c) => c.tokenCount),
          hb.map((h) => vectors.get(h)!),
          b.map((c) => c.metadata.bookSlug ?? docById.get(c.documentId)?.slug ?? null),
          b.map((c) => (typeof c.metadata.chapterNumber === 'number' ? c.metadata.chapterNumber : null)),
          b.map((c) => c.metadata.path ?? docById.get(c.documentId)?.path ?? null),
          b.map((c) => JSON.stringify(c.metadata ?? {})),
        ]);
        progress('write', Math.min(i + WRITE_BATCH, chunks.length), chunks.length);
      }
      writeMs = performance.now() - tWrite;
      const tBuild = performance.now();
      progress('index', 0, 4);
      await client.query(BUILD_POSTINGS, [variantId]);
      progress('index', 1, 4);
      await client.query(BUILD_TERMS, [variantId]);
      await client.query(BUILD_STATS, [variantId]);
      await client.query(`CREATE INDEX ${ginIndexName(variantId)} ON book_chunks USING gin (tsv) WHERE variant = ${variantId}`);
      progress('index', 2, 4);
      const kind = vectorIndexKind(embedder.dimension);
      if (chunks.length && kind !== 'none') {
        // an HNSW graph that fits in maintenance_work_mem builds several times faster
        await client.query(`SELECT set_config('maintenance_work_mem', $1, true)`, [db.kind === 'pglite' ? '256MB' : '512MB']);
        const m = Math.trunc(opts.hnsw?.m ?? 16);
        const efc = Math.trunc(opts.hnsw?.efConstruction ?? 64);
        await client.query(
          `CREATE INDEX ${hnswIndexName(variantId)} ON book_chunks
           USING hnsw ((embedding::${kind}(${embedder.dimension})) ${kind}_cosine_ops)
           WITH (m = ${m}, ef_construction = ${efc}) WHERE variant = ${variantId}`,
        );
      }
      progress('index', 3, 4);
      buildMs = performance.now() - tBuild;
      const docCount = new Set(chunks.map((c) => c.documentId)).size;
      await client.query(
        `UPDATE index_variants SET document_count = $2, chunk_count = $3, embedded_count = $4, build_ms = $5,
           built_at = now() WHERE id = $1`,
        [variantId, docCount, chunks.length, embedded, Math.round(embedMs + (performance.now() - tWrite))],
      );
      // documents that left the corpus: gone with their chunks, unless a variant not rebuilt now (an earlier state
      // of this corpus) still holds chunks of them
      const removed = await client.query(
        `DELETE FROM documents d WHERE d.id <> ALL($1::text[])
           AND NOT EXISTS (SELECT 1 FROM book_chunks c WHERE c.document = d.id)`,
        [documents.map((d) => d.id)],
      );
      removedDocuments += removed.rowCount ?? 0;
      await client.query('COMMIT');
      await client.query('ANALYZE documents, index_variants, book_chunks, bm25_postings, bm25_terms, bm25_stats');
      progress('index', 4, 4);
      variants.push({
        variant: name,
        variantId,
        chunkSize,
        embedder: embedder.id,
        dimension: embedder.dimension,
        documents: docCount,
        chunks: chunks.length,
        embedded,
        cached,
        embedMs,
        writeMs,
        buildMs,
      });
      progress('done', chunks.length, chunks.length);
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {});
      throw e;
    } finally {
      client.release();
    }
  }
  return { variants, totalMs: performance.now() - t0, corpus, removedDocuments, replaced, notes };
}

/** Seconds as people read them: 42 s, 3 min 5 s, 1 h 2 min. */
function duration(sec: number): string {
  if (!Number.isFinite(sec)) return '?';
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** The one line told before an ingest sends anything to its embedder. */
export function formatPlan(p: IngestPlan): string {
  const where = p.endpoint ? ` at ${p.endpoint}` : '';
  const what = `${p.embedder} (${p.model ?? p.embedder}, ${p.dimension}-d${where})`;
  if (!p.toEmbed) return `ingest ${p.variant}: ${p.chunks} chunks, all ${p.texts} texts in the embedding cache: nothing to send to ${what}`;
  const cost =
    p.costUsd !== undefined
      ? `, about $${p.costUsd < 0.01 ? Number(p.costUsd.toPrecision(2)) : p.costUsd.toFixed(2)} at $${p.pricePerMTok}/M tokens list price`
      : p.family === 'use-lite' || !p.endpoint
        ? ''
        : ' (no list price known for this model)';
  return (
    `ingest ${p.variant}: ${p.chunks} chunks, ${p.toEmbed} texts to embed with ${what} (${p.cached} cached), ` +
    `~${p.tokens.toLocaleString('en-US')} tokens (o200k estimate)${cost}`
  );
}

/**
 * A progress reporter on stderr: a redrawn bar on a TTY; otherwise one line per finished phase, plus a line at most
 * every 10 s while embedding (quiet in CI logs). Embedding shows chunks/s and the time left (ETA).
 */
export function createProgressReporter(stream: NodeJS.WriteStream = process.stderr, opts: { intervalMs?: number; now?: () => number } = {}): (p: IngestProgress) => void {
  const tty = Boolean(stream.isTTY) && !process.env.CI;
  const now = opts.now ?? Date.now;
  const interval = opts.intervalMs ?? 10_000;
  let last = '';
  let lastDraw = 0;
  let lastLine = 0;
  let embedStart = 0;
  let embedKey = '';
  const rate = (p: IngestProgress) => {
    const sec = (now() - embedStart) / 1000;
    const perSec = sec > 0 ? p.done / sec : 0;
    const eta = perSec > 0 ? (p.total - p.done) / perSec : Infinity;
    return { perSec, sec, text: `${perSec.toFixed(1)} chunks/s, ${p.done < p.total ? `ETA ${duration(eta)}` : `${duration(sec)}`}` };
  };
  return (p) => {
    const key = `${p.variant} ${p.phase}`;
    if (p.phase === 'embed' && key !== embedKey) {
      embedKey = key;
      embedStart = now();
      lastLine = embedStart;
    }
    const embedding = p.phase === 'embed' && p.total > 0;
    if (tty) {
      const t = now();
      if (p.done < p.total && t - lastDraw < 80 && key === last) return;
      lastDraw = t;
      const width = 24;
      const frac = p.total ? p.done / p.total : 1;
      const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, '.');
      stream.write(`\r${p.variant} ${p.phase.padEnd(5)} [${bar}] ${p.done}/${p.total}${embedding && p.done ? `  ${rate(p).text}` : ''}   `);
      if (p.phase === 'done') stream.write('\n');
      last = key;
    } else if (embedding && p.done < p.total && p.done > 0 && now() - lastLine >= interval) {
      lastLine = now();
      stream.write(`ingest ${p.variant}: embedded ${p.done}/${p.total} texts, ${rate(p).text}\n`);
    } else if (p.done === p.total && key !== last) {
      last = key;
      if (p.phase === 'done') stream.write(`ingest ${p.variant}: ${p.total} chunks written\n`);
      else if (embedding) stream.write(`ingest ${p.variant}: embedded ${p.total} new texts, ${rate(p).text}\n`);
    }
  };
}
