/**
 * Ingest throughput and hybrid query latency on synthetic chunks, on PGlite and on Postgres.
 *
 *   node --import tsx bench/search.ts [--sizes 1000,10000,100000] [--engines pglite,postgres]
 *        [--queries 200] [--dim 384] [--use-lite 256] [--pglite-dir /tmp/rankgate-bench] [--no-reingest]
 *
 * Corpus: deterministic synthetic documents (seeded PRNG), ~110 words each from a Zipf-distributed
 * vocabulary of 30,000 pseudo-words, one ~300-token chunk per document. Queries: 3-5 words of rank
 * 100..10,000 (skewed to frequent ones). Vectors: a hashing bag-of-words
 * embedder (`--dim` dims, free to compute), so the figures are the storage/index/query cost alone.
 * Reported per size and engine:
 *   ingest        chunks/s for a first ingest (chunk + embed (hash) + write + postings + HNSW + ANALYZE)
 *   re-ingest     chunks/s when every vector comes from the embedding cache (no embedding work)
 *   hybrid query  p50/p95 ms of SearchService.search (BM25 + HNSW, candidates 50, topK 10, RRF) over
 *                 `--queries` 3-5 word queries after 20 warm-up queries
 *   keyword/vector p50: each channel's own query time (from when it holds a connection; on PGlite the two run
 *                 one after the other on its one connection, on a server side by side)
 *   equality      for every timed query: the keyword candidates equal those of the previous SQL BM25
 *                 (bench/keyword_bm25_reference.sql: same ids in the same order, scores equal to 1e-9) and the hybrid
 *                 top 10 equals RRF over those reference candidates and this query's vector candidates; with both
 *                 engines, the keyword candidates of PGlite and Postgres are compared query by query too.
 * The load average (/proc/loadavg) is printed before and after each row: the figures move with other work on the cores.
 * `--use-lite N` also times USE-lite embedding of N chunks (the "with embedding" cost per chunk).
 * `--pglite-dir DIR` keeps each size's PGlite index on disk (DIR/n<size>, figures of its build in DIR/n<size>.json)
 * and reuses it when it holds the same corpus (same corpus id): query latency can then be iterated on in minutes
 * at 100k instead of re-ingesting for ~25 minutes; the ingest columns then repeat the build's figures (marked *).
 * Without it PGlite runs in memory (memory://) and ingests every time. `--no-reingest` skips the re-ingest run.
 * Postgres: $RANKGATE_BENCH_DATABASE_URL or $RANKGATE_TEST_DATABASE_URL (a private schema, dropped after).
 * Targets (Postgres): hybrid p95 <= 25 ms at 10k chunks, <= 60 ms at 100k.
 */
import { parseArgs } from 'node:util';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openDatabase, type Db } from '../src/db/index.ts';
import { ingestCorpus } from '../src/ingest/pipeline.ts';
import { corpusIdentity } from '../src/ingest/identity.ts';
import { createSearchService, fuseRrf } from '../src/search/service.ts';
import { HashEmbedder, corpus } from './synthetic.ts';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
};

/** Figures of an index build, kept beside a reused PGlite directory. */
interface BuildFigures {
  corpusId: string;
  chunks: number;
  firstMs: number;
  secondMs: number | null;
  embedMs: number;
  writeMs: number;
  buildMs: number;
}

const REFERENCE_BM25 = readFileSync(new URL('./keyword_bm25_reference.sql', import.meta.url), 'utf8');
const loadavg = () => (existsSync('/proc/loadavg') ? readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ') : 'n/a');

async function openEngine(engine: string, pgliteDir?: string): Promise<Db> {
  if (engine === 'pglite') return openDatabase({ dataDir: pgliteDir ?? 'memory://' });
  const url = process.env.RANKGATE_BENCH_DATABASE_URL ?? process.env.RANKGATE_TEST_DATABASE_URL;
  if (!url) throw new Error('postgres: set RANKGATE_BENCH_DATABASE_URL or RANKGATE_TEST_DATABASE_URL');
  return openDatabase({ url, schema: `rgbench_${process.pid}`, dropSchemaOnClose: true });
}

async function main() {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '1000,10000,100000' },
      engines: { type: 'string', default: 'pglite,postgres' },
      queries: { type: 'string', default: '200' },
      dim: { type: 'string', default: '384' },
      'use-lite': { type: 'string' },
      'pglite-dir': { type: 'string' },
      'no-reingest': { type: 'boolean', default: false },
    },
  });
  const sizes = values.sizes!.split(',').map(Number);
  const nq = Number(values.queries);
  const dim = Number(values.dim);
  console.log(`bench/search: synthetic chunks (~300 tokens), ${dim}-d hash vectors, hybrid = BM25 + HNSW (ef_search 100), candidates 50, topK 10`);
  console.log('engine    chunks   ingest ch/s  (embed/write/index s)  re-ingest ch/s  hybrid p50 ms  p95 ms  keyword p50  vector p50');
  const equality: string[] = [];
  const keywordLists = new Map<number, Map<string, string[][]>>(); // size -> engine -> per query ids
  for (const engine of values.engines!.split(',')) {
    for (const size of sizes) {
      const load0 = loadavg();
      const { docs, queries } = corpus(size);
      const emb = new HashEmbedder(dim);
      const keep = engine === 'pglite' && values['pglite-dir'] ? resolve(values['pglite-dir'], `n${size}`) : undefined;
      const corpusId = corpusIdentity(docs).id;
      let fig: BuildFigures | undefined;
      if (keep && existsSync(keep + '.json') && existsSync(keep)) {
        const f = JSON.parse(readFileSync(keep + '.json', 'utf8')) as BuildFigures;
        if (f.corpusId === corpusId) fig = f;
      }
      const reused = Boolean(fig);
      if (keep && !reused) {
        rmSync(keep, { recursive: true, force: true });
        rmSync(keep + '.json', { force: true });
        mkdirSync(resolve(keep, '..'), { recursive: true });
      }
      const db = await openEngine(engine, keep);
      try {
        if (reused) {
          // the directory must still hold that corpus's variant (an interrupted build leaves no .json)
          const r = await db.pool.query<{ corpus_id: string | null; chunk_count: number }>(
            'SELECT corpus_id, chunk_count FROM index_variants WHERE chunk_size = 300 AND embedder = $1',
            [emb.id],
          );
          if (r.rows[0]?.corpus_id !== corpusId || r.rows[0]?.chunk_count !== fig!.chunks) {
            throw new Error(`${keep}: does not hold the n${size} corpus; remove ${keep} and ${keep}.json`);
          }
        } else {
          const t0 = performance.now();
          const s1 = await ingestCorpus({ db, documents: docs, chunkSizes: [300], embedder: emb });
          const firstMs = performance.now() - t0;
          let secondMs: number | null = null;
          if (!values['no-reingest']) {
            const t1 = performance.now();
            await ingestCorpus({ db, documents: docs, chunkSizes: [300], embedder: emb });
            secondMs = performance.now() - t1;
          }
          const v = s1.variants[0];
          fig = { corpusId, chunks: v.chunks, firstMs, secondMs, embedMs: v.embedMs, writeMs: v.writeMs, buildMs: v.buildMs };
          if (keep) writeFileSync(keep + '.json', JSON.stringify(fig, null, 2) + '\n');
        }
        const f = fig!;
        const svc = await createSearchService({ db, embedder: emb, routing: false, defaults: { chunkSize: 300, embedder: emb.id } });
        const lat: number[] = [];
        const kw: number[] = [];
        const vec: number[] = [];
        const responses: { q: string; kwIds: string[]; vecCands: { id: string; score: number }[]; top: string[]; kwScores: number[] }[] = [];
        for (let i = 0; i < 20 + nq; i++) {
          const q = queries[i % queries.length];
          const t = performance.now();
          const r = await svc.search(q, { mode: 'hybrid', vectorSearch: 'hnsw', candidates: 50, topK: 10 });
          if (i >= 20) {
            lat.push(performance.now() - t);
            kw.push(r.diagnostics.timings.keyword ?? 0);
            vec.push(r.diagnostics.timings.vector ?? 0);
            const vecCands = r.diagnostics.vectorCandidates.map((id) => ({ id, score: 0 }));
            const kwScores = new Map<string, number>();
            for (const h of r.hits) if (h.channels.keyword) kwScores.set(h.chunkId, h.channels.keyword.score);
            responses.push({ q, kwIds: r.diagnostics.keywordCandidates, vecCands, top: r.hits.map((h) => h.chunkId), kwScores: r.hits.map((h) => kwScores.get(h.chunkId) ?? NaN) });
          }
        }
        await svc.close();
        // equality against the previous SQL BM25 (untimed)
        const vid = (await db.pool.query<{ id: number }>('SELECT id FROM index_variants WHERE chunk_size = 300 AND embedder = $1', [emb.id])).rows[0].id;
        let kwSame = 0;
        let hySame = 0;
        let maxDiff = 0;
        for (const x of responses) {
          const ref = (await db.pool.query<{ id: string; score: number }>(REFERENCE_BM25, [vid, 'english', x.q, 1.2, 0.75, 50, null, null, null, null])).rows;
          const refIds = ref.map((row) => row.id);
          if (JSON.stringify(refIds) === JSON.stringify(x.kwIds)) kwSame++;
          const refScore = new Map(ref.map((row) => [row.id, Number(row.score)]));
          x.top.forEach((id, j) => {
            if (!Number.isNaN(x.kwScores[j])) maxDiff = Math.max(maxDiff, Math.abs(x.kwScores[j] - (refScore.get(id) ?? Infinity)));
          });
          const fused = fuseRrf(ref.map((row) => ({ id: row.id, score: Number(row.score) })), x.vecCands, 60, { keyword: 1, vector: 1 }).slice(0, 10);
          if (JSON.stringify(fused.map((h) => h.id)) === JSON.stringify(x.top)) hySame++;
        }
        equality.push(
          `${engine} ${f.chunks}: keyword top-50 identical to the previous SQL BM25 in ${kwSame}/${responses.length} queries ` +
            `(max |score diff| of hits ${maxDiff.toExponential(1)}), hybrid top-10 identical in ${hySame}/${responses.length}`,
        );
        if (!keywordLists.has(size)) keywordLists.set(size, new Map());
        keywordLists.get(size)!.set(engine, responses.map((x) => x.kwIds));
        const mark = reused ? '*' : ' ';
        console.log(
          `${engine.padEnd(9)} ${String(f.chunks).padStart(6)}   ${(f.chunks / (f.firstMs / 1000)).toFixed(0).padStart(9)}${mark}  ` +
            `(${(f.embedMs / 1000).toFixed(1)}/${(f.writeMs / 1000).toFixed(1)}/${(f.buildMs / 1000).toFixed(1)})`.padEnd(22) +
            ` ${(f.secondMs === null ? '-' : (f.chunks / (f.secondMs / 1000)).toFixed(0) + mark).padStart(12)}   ${pct(lat, 0.5).toFixed(1).padStart(12)}  ${pct(lat, 0.95)
              .toFixed(1)
              .padStart(6)}  ${pct(kw, 0.5).toFixed(1).padStart(11)}  ${pct(vec, 0.5).toFixed(1).padStart(10)}` +
            `   load ${load0} -> ${loadavg()}`,
        );
      } finally {
        await db.close();
      }
    }
  }
  for (const line of equality) console.log('equality: ' + line);
  for (const [size, byEngine] of keywordLists) {
    const lists = [...byEngine.values()];
    if (lists.length < 2) continue;
    const same = lists[0].filter((ids, i) => lists.slice(1).every((l) => JSON.stringify(l[i]) === JSON.stringify(ids))).length;
    console.log(`equality: ${[...byEngine.keys()].join(' vs ')} at ${size}: keyword top-50 identical in ${same}/${lists[0].length} queries`);
  }
  if (values['use-lite']) {
    const n = Number(values['use-lite']);
    const { createEmbedder } = await import('../src/embeddings/index.ts');
    const e = await createEmbedder('use-lite');
    const texts = corpus(n).docs.map((d) => d.sections[0].text);
    const t = performance.now();
    for (let i = 0; i < texts.length; i += e.maxBatch) await e.embedDocuments(texts.slice(i, i + e.maxBatch));
    const ms = performance.now() - t;
    console.log(`use-lite embedding: ${n} chunks in ${(ms / 1000).toFixed(1)} s = ${(n / (ms / 1000)).toFixed(1)} chunks/s (the "with embedding" cost)`);
    await e.close?.();
  }
}

await main();
