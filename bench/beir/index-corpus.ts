/**
 * Index a BEIR corpus (corpus.jsonl: title + text per document) into a database once, and reuse it.
 *
 * The index variant (chunk size, embedder) lives in the database; `ingest.json` beside the PGlite data
 * dir records what was indexed (corpus size + mtime + document count) and how long it took, so a rerun
 * on the same corpus skips ingestion and still reports the original ingest time. A changed corpus is
 * re-ingested (cheap: the pipeline's embedding cache keeps the vectors of unchanged text).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readCorpus } from '../../src/ingest/readers.ts';
import { createProgressReporter, ingestCorpus } from '../../src/ingest/pipeline.ts';
import { createEmbedder, embedWorkerCount } from '../../src/embeddings/index.ts';
import type { Db } from '../../src/db/index.ts';
import { writeFileAtomic } from '../../src/util/atomic.ts';

export interface IngestRecord {
  corpus: string;
  corpusBytes: number;
  corpusMtimeMs: number;
  chunkSize: number;
  embedder: string;
  documents: number;
  chunks: number;
  embedded: number;
  cached: number;
  /** Wall time of readCorpus + ingestCorpus (chunk, embed, write, BM25 postings, HNSW), ms. */
  ingestMs: number;
  embedMs: number;
  readMs: number;
  at: string;
}

export interface EnsureIndexResult {
  record: IngestRecord;
  /** true when this run ingested; false when an existing index was reused. */
  ingested: boolean;
}

function sameCorpus(r: IngestRecord | undefined, corpus: string, chunkSize: number, embedder: string): boolean {
  if (!r) return false;
  const st = statSync(corpus);
  return r.corpusBytes === st.size && r.corpusMtimeMs === Math.trunc(st.mtimeMs) && r.chunkSize === chunkSize && r.embedder === embedder;
}

export function readIngestRecord(file: string): IngestRecord | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as IngestRecord;
  } catch {
    return undefined;
  }
}

export async function ensureIndex(opts: {
  db: Db;
  corpus: string;
  recordFile: string;
  chunkSize: number;
  embedder: string;
  force?: boolean;
  log?: (s: string) => void;
  /** no ingest progress lines on stderr */
  quiet?: boolean;
}): Promise<EnsureIndexResult> {
  const { db, corpus, chunkSize } = opts;
  const log = opts.log ?? ((s: string) => process.stderr.write(s + '\n'));
  const prev = readIngestRecord(opts.recordFile);
  if (!opts.force && sameCorpus(prev, corpus, chunkSize, opts.embedder)) {
    const v = await db.pool.query<{ document_count: number; chunk_count: number }>(
      'SELECT document_count, chunk_count FROM index_variants WHERE chunk_size = $1 AND embedder = $2',
      [chunkSize, opts.embedder],
    );
    const row = v.rows[0];
    if (row && row.document_count === prev!.documents && row.chunk_count === prev!.chunks) {
      log(`index c${chunkSize}:${opts.embedder} reused (${row.document_count} documents, ${row.chunk_count} chunks; ingested ${prev!.at} in ${(prev!.ingestMs / 1000).toFixed(1)} s)`);
      return { record: prev!, ingested: false };
    }
  }
  const t0 = performance.now();
  const documents = await readCorpus(corpus, 'beir');
  const readMs = performance.now() - t0;
  log(`ingesting ${documents.length} documents from ${corpus} (chunk size ${chunkSize}, ${opts.embedder}) into ${db.describe}`);
  // USE-lite embeds on every core (RANKGATE_EMBED_WORKERS to choose), like `rankgate ingest`
  const embedder = await createEmbedder(opts.embedder, opts.embedder === 'use-lite' ? { workers: embedWorkerCount() } : {});
  try {
    const stats = await ingestCorpus({ db, documents, chunkSizes: [chunkSize], embedder, onProgress: opts.quiet ? undefined : createProgressReporter() });
    const s = stats.variants[0]!;
    const st = statSync(corpus);
    const record: IngestRecord = {
      corpus,
      corpusBytes: st.size,
      corpusMtimeMs: Math.trunc(st.mtimeMs),
      chunkSize,
      embedder: opts.embedder,
      documents: s.documents,
      chunks: s.chunks,
      embedded: s.embedded,
      cached: s.cached,
      ingestMs: Math.round(performance.now() - t0),
      embedMs: Math.round(s.embedMs),
      readMs: Math.round(readMs),
      at: new Date().toISOString(),
    };
    writeFileAtomic(opts.recordFile, JSON.stringify(record, null, 2) + '\n');
    log(`ingested ${s.documents} documents, ${s.chunks} chunks (${s.embedded} embedded, ${s.cached} cached) in ${(record.ingestMs / 1000).toFixed(1)} s`);
    return { record, ingested: true };
  } finally {
    await embedder.close?.().catch(() => {});
  }
}

export function benchPaths(root: string, name: string): { dir: string; dataDir: string; recordFile: string } {
  const dir = join(root, '.rankgate', 'bench', name);
  return { dir, dataDir: join(dir, 'db'), recordFile: join(dir, 'ingest.json') };
}
