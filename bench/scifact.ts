/**
 * BEIR SciFact (test split) through rankgate's own search service: prints nDCG@10 and Recall@100 for
 * keyword BM25 (SQL over postings), semantic (USE-lite, exact cosine) and hybrid (RRF) retrieval.
 *
 *   node --import tsx bench/scifact.ts [--modes keyword,semantic,hybrid] [--embedder use-lite]
 *        [--chunk-size 500] [--k1 0.9] [--b 0.4] [--weights 1,1] [--rrf-k 60] [--db URL|DIR] [--queries N]
 *
 * Documents are indexed as title + text (the BEIR reader's convention) and ranked by their best chunk:
 * the first 100 chunks of a query are reduced to documents in order of first appearance.
 * Data: ../shared/benchmarks/scifact (corpus.jsonl, queries.jsonl, qrels/test.tsv); never copied into the repo.
 * Default database: a PGlite dir under .rankgate/bench/ (kept, so re-runs reuse the index and embeddings).
 * Published anchors: BM25 0.665 (BEIR paper) .. 0.679 (Anserini flat, k1=0.9 b=0.4).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/index.ts';
import { readCorpus } from '../src/ingest/readers.ts';
import { ingestCorpus, createProgressReporter } from '../src/ingest/pipeline.ts';
import { createSearchService } from '../src/search/service.ts';
import { ndcg_cut_k, recall_k } from '../src/metrics/index.ts';
import type { Embedder } from '../src/embeddings/types.ts';
import type { SearchParams } from '../src/search/types.ts';

const DATA = join('..', 'shared', 'benchmarks', 'scifact');

/** Keyword-only runs still need a variant embedder: a 1-d constant one costs nothing. */
const NO_EMBEDDER: Embedder = {
  id: 'none',
  dimension: 1,
  maxBatch: 4096,
  embedDocuments: async (t) => t.map(() => [1]),
  embedQuery: async () => [1],
};

async function main() {
  const { values } = parseArgs({
    options: {
      modes: { type: 'string', default: 'keyword,semantic,hybrid' },
      embedder: { type: 'string', default: 'use-lite' },
      'chunk-size': { type: 'string', default: '500' },
      k1: { type: 'string', default: '0.9' },
      b: { type: 'string', default: '0.4' },
      db: { type: 'string' },
      queries: { type: 'string' },
      weights: { type: 'string', default: '1,1' },
      'rrf-k': { type: 'string', default: '60' },
    },
  });
  if (!existsSync(join(DATA, 'corpus.jsonl'))) {
    console.log(`skipped: needs ${DATA}/corpus.jsonl (BEIR SciFact)`);
    return;
  }
  const modes = values.modes!.split(',') as SearchParams['mode'][];
  const chunkSize = Number(values['chunk-size']);
  const k1 = Number(values.k1);
  const b = Number(values.b);
  const [wk, wv] = values.weights!.split(',').map(Number);
  const rrfK = Number(values['rrf-k']);
  const needVectors = modes.some((m) => m !== 'keyword');

  // qrels + queries
  const qrels = new Map<string, Map<string, number>>();
  for (const line of readFileSync(join(DATA, 'qrels', 'test.tsv'), 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.trim().split('\t');
    if (!q) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q)!.set(d, Number(s));
  }
  let queries = readFileSync(join(DATA, 'queries.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { _id: string; text: string })
    .filter((q) => qrels.has(q._id));
  if (values.queries) queries = queries.slice(0, Number(values.queries));

  const dbFlag = values.db ?? process.env.DATABASE_URL;
  const db = await openDatabase(
    dbFlag && /^postgres(ql)?:\/\//.test(dbFlag) ? { url: dbFlag } : { dataDir: dbFlag ?? '.rankgate/bench/scifact-pglite' },
  );
  console.log(`SciFact test: ${queries.length} queries, ${db.describe}, chunk size ${chunkSize}, BM25 k1=${k1} b=${b}`);

  let embedder: Embedder = NO_EMBEDDER;
  if (needVectors) {
    const { createEmbedder } = await import('../src/embeddings/index.ts');
    embedder = await createEmbedder(values.embedder!);
  }
  const have = await db.pool.query('SELECT 1 FROM index_variants WHERE chunk_size = $1 AND embedder = $2', [chunkSize, embedder.id]);
  if (!have.rowCount) {
    const t0 = performance.now();
    const docs = await readCorpus(DATA, 'beir');
    const s = await ingestCorpus({ db, documents: docs, chunkSizes: [chunkSize], embedder, onProgress: createProgressReporter() });
    const v = s.variants[0];
    console.log(
      `ingested ${v.documents} docs -> ${v.chunks} chunks in ${((performance.now() - t0) / 1000).toFixed(1)} s ` +
        `(embed ${(v.embedMs / 1000).toFixed(1)} s, write ${(v.writeMs / 1000).toFixed(1)} s, postings+HNSW ${(v.buildMs / 1000).toFixed(1)} s)`,
    );
  }
  const svc = await createSearchService({ db, embedder, routing: false });
  const results: string[] = [];
  for (const mode of modes) {
    const p: Partial<SearchParams> = {
      mode,
      chunkSize,
      embedder: embedder.id,
      bm25K1: k1,
      bm25B: b,
      vectorSearch: 'exact',
      candidates: 100,
      topK: 100,
      language: 'en',
      weights: { keyword: wk, vector: wv },
      rrfK,
    };
    let nd = 0;
    let rec = 0;
    const lat: number[] = [];
    for (const q of queries) {
      const t = performance.now();
      const r = await svc.search(q.text, p);
      lat.push(performance.now() - t);
      const docs: string[] = [];
      for (const h of r.hits) if (!docs.includes(h.documentId)) docs.push(h.documentId);
      const j = qrels.get(q._id)!;
      nd += ndcg_cut_k(docs, j, 10);
      rec += recall_k(docs, j, 100);
    }
    lat.sort((x, y) => x - y);
    const line =
      `${mode.padEnd(8)} nDCG@10 ${(nd / queries.length).toFixed(4)}  Recall@100 ${(rec / queries.length).toFixed(4)}  ` +
      `latency p50 ${lat[Math.floor(lat.length * 0.5)].toFixed(1)} ms p95 ${lat[Math.floor(lat.length * 0.95)].toFixed(1)} ms` +
      (mode === 'keyword' ? '' : `  (${embedder.id}, exact${mode === 'hybrid' ? `, weights ${wk}/${wv}, k ${rrfK}` : ''})`);
    console.log(line);
    results.push(line);
  }
  await svc.close();
  await embedder.close?.();
  await db.close();
}

await main();
