/**
 * Harness overhead benchmark: 1,000 generated NQ-style queries over a 10,000-chunk index, run
 *   (a) directly against SearchService.search (sequential), and
 *   (b) through `promptfoo eval` with providers/search.ts and the rank + routing assertions,
 * and print total time and the harness overhead per query.
 *
 *   node --import tsx bench/eval.ts [--queries 1000] [--chunks 10000] [--concurrency 1]
 *
 * Concurrency 1 (default) compares like with like: the direct loop is sequential, and the embedded PGlite
 * database serves one query at a time anyway. With --concurrency 4 promptfoo overlaps query embedding and
 * fusion with the database, which can make the per-query figure lower than the direct one.
 *
 * The corpus is synthetic NQ prepared JSON (chunk ids nq_XXXXXX, one answer chunk per question) built with a
 * fixed seed; the index lives in .rankgate/bench/db (built once, reused). Embeddings come from a 64-d
 * feature-hashing embedder defined here: the benchmark measures the harness, not the embedding model, and
 * USE-lite would need ~30 min to embed 10k passages on this machine. The same embedder serves both (a) and (b).
 *
 * Overhead per query = (promptfoo wall time for N queries - promptfoo wall time for 1 query) / (N - 1)
 *                      - mean search time, measured two ways: inside the provider in the same promptfoo run
 *                      (robust to machine load) and by the direct loop (a separate run).
 * This file is also the `module:` the bench config points the provider at (it exports createSearchService).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Embedder } from '../src/embeddings/types.ts';
import type { SearchServiceLike } from '../src/search/types.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BENCH_DIR = join(ROOT, '.rankgate', 'bench');
const DB_DIR = join(BENCH_DIR, 'db');
const EMBEDDER_ID = 'bench-hash-64';
const DIM = 64;

/** Feature hashing: each lower-cased token adds +-1 to one of 64 dimensions; L2-normalised. Deterministic. */
export function hashEmbedder(): Embedder {
  const embed = (text: string): number[] => {
    const v = new Array<number>(DIM).fill(0);
    for (const tok of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
      const h = createHash('md5').update(tok).digest();
      v[h[0]! % DIM]! += h[1]! & 1 ? 1 : -1;
    }
    const n = Math.hypot(...v) || 1;
    return v.map((x) => x / n);
  };
  return {
    id: EMBEDDER_ID,
    dimension: DIM,
    maxBatch: 512,
    embedDocuments: async (texts) => texts.map(embed),
    embedQuery: async (text) => embed(text),
  };
}

/** module: entry point for the provider: the bench index with the hashing embedder, routing off. */
export async function createSearchService(config: Record<string, unknown> = {}): Promise<SearchServiceLike> {
  const { createSearchService: create } = await import('../src/search/index.ts');
  return create({ dataDir: String(config.benchDataDir ?? DB_DIR), embedder: hashEmbedder(), routing: false });
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Generated {
  chunks: { id: string; content: string; question: string }[];
}

/** Synthetic NQ-style data: a 6,000-word vocabulary of syllable words, 40-word passages, 7-word questions. */
function generate(nChunks: number, seed = 42): Generated {
  const rnd = mulberry32(seed);
  const syl = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'qui', 'dor', 'fen', 'gal', 'hum', 'jas'];
  const vocab = new Set<string>();
  while (vocab.size < 6000) {
    const n = 2 + Math.floor(rnd() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += syl[Math.floor(rnd() * syl.length)];
    vocab.add(w);
  }
  const words = [...vocab];
  // Zipf-ish: common words are drawn more often, so BM25 has real work to do.
  const pick = () => words[Math.floor(words.length * Math.pow(rnd(), 2.2))]!;
  const chunks: Generated['chunks'] = [];
  for (let i = 0; i < nChunks; i++) {
    const w = Array.from({ length: 40 }, pick);
    const content = w.join(' ').replace(/^./, (c) => c.toUpperCase()) + '.';
    const qw = Array.from({ length: 6 }, () => w[Math.floor(rnd() * w.length)]!);
    chunks.push({ id: `nq_${String(i).padStart(6, '0')}`, content, question: `which ${qw.join(' ')}` });
  }
  return { chunks };
}

async function ensureIndex(gen: Generated): Promise<void> {
  const marker = join(BENCH_DIR, `built-${gen.chunks.length}.json`);
  if (existsSync(marker) && existsSync(DB_DIR)) return;
  const { openDatabase } = await import('../src/db/index.ts');
  const { ingestCorpus } = await import('../src/ingest/pipeline.ts');
  const docs = [];
  const perDoc = 100;
  for (let d = 0; d * perDoc < gen.chunks.length; d++) {
    const part = gen.chunks.slice(d * perDoc, (d + 1) * perDoc);
    docs.push({
      id: `natural_questions_${d}`,
      title: `NQ part ${d}`,
      language: 'en',
      tags: [],
      metadata: {},
      sections: [{ text: part.map((c) => c.content).join('\n\n') }],
      prechunked: part.map((c) => ({ id: c.id, content: c.content })),
    });
  }
  mkdirSync(BENCH_DIR, { recursive: true });
  const t0 = performance.now();
  const db = await openDatabase({ dataDir: DB_DIR });
  try {
    await ingestCorpus({ db, documents: docs, chunkSizes: [300], embedder: hashEmbedder() });
  } finally {
    await db.close();
  }
  console.log(`index: ${gen.chunks.length} chunks ingested into ${DB_DIR} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  writeFileSync(marker, JSON.stringify({ chunks: gen.chunks.length, built: new Date().toISOString() }));
}

const pct = (xs: number[], p: number) => {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1))]!;
};

function promptfooRun(config: string, out: string, concurrency: number): number {
  const bin = join(ROOT, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [bin, 'eval', '-c', config, '--output', out, '--no-cache', '--no-table', '--no-progress-bar', '-j', String(concurrency)], {
    cwd: ROOT,
    env: {
      ...process.env,
      PROMPTFOO_CONFIG_DIR: join(BENCH_DIR, 'promptfoo'),
      PROMPTFOO_DISABLE_TELEMETRY: '1',
      PROMPTFOO_DISABLE_UPDATE: '1',
      PROMPTFOO_DISABLE_SHARING: '1',
      PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
      PROMPTFOO_DISABLE_DEBUG_LOG: '1',
      PROMPTFOO_PASS_RATE_THRESHOLD: '0',
    },
    encoding: 'utf8',
  });
  const ms = performance.now() - t0;
  if (r.status !== 0 || !existsSync(out)) throw new Error(`promptfoo eval failed (exit ${r.status}):\n${(r.stderr ?? '').slice(-2000)}`);
  return ms;
}

function writeConfig(name: string, tests: unknown[]): string {
  const testsFile = join(BENCH_DIR, `${name}.tests.json`);
  writeFileSync(testsFile, JSON.stringify(tests));
  const cfg = join(BENCH_DIR, `${name}.yaml`);
  writeFileSync(
    cfg,
    [
      `description: rankgate harness benchmark (${tests.length} queries)`,
      `prompts: ['{{query}}']`,
      `providers:`,
      `  - id: ${JSON.stringify('file://' + join(ROOT, 'providers', 'search.ts'))}`,
      `    label: bench hybrid rrf60 c300 ${EMBEDDER_ID}`,
      `    config: { module: ${JSON.stringify(join(ROOT, 'bench', 'eval.ts'))}, mode: hybrid, chunkSize: 300, embedder: ${EMBEDDER_ID}, topK: 10, routing: false }`,
      `defaultTest:`,
      `  assert:`,
      `    - { type: javascript, value: ${JSON.stringify('file://' + join(ROOT, 'assertions', 'rank.ts') + ':rank')} }`,
      `    - { type: javascript, value: ${JSON.stringify('file://' + join(ROOT, 'assertions', 'routing.ts') + ':routing')} }`,
      `tests: ${JSON.stringify('file://' + testsFile)}`,
      `derivedMetrics:`,
      `  - { name: avg_recall_at_1, value: recall_at_1 / n_ranked }`,
      `  - { name: avg_recall_at_5, value: recall_at_5 / n_ranked }`,
      `  - { name: avg_mrr, value: mrr / n_ranked }`,
    ].join('\n') + '\n',
  );
  return cfg;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { queries: { type: 'string', default: '1000' }, chunks: { type: 'string', default: '10000' }, concurrency: { type: 'string', default: '1' } },
  });
  const nQ = Number(values.queries);
  const nC = Number(values.chunks);
  const conc = Number(values.concurrency);
  console.log(`rankgate harness benchmark: ${nQ} NQ-style queries, ${nC}-chunk index, promptfoo concurrency ${conc}, ${process.version}`);
  const gen = generate(nC);
  await ensureIndex(gen);
  const rnd = mulberry32(7);
  const picked = Array.from({ length: nQ }, () => gen.chunks[Math.floor(rnd() * gen.chunks.length)]!);
  const tests = picked.map((c, i) => {
    const golden = { id: `nq-${i}`, query: c.question, language: 'en', category: 'nq', tags: [], slices: {}, expected: [{ chunk_id: c.id, grade: 1, relevant: true }], expected_routing: 'search' };
    return { description: `nq-${i}: ${c.question}`, vars: { query: c.question, category: 'nq', language: 'en', id: `nq-${i}` }, metadata: { id: `nq-${i}`, category: 'nq', language: 'en', tags: '', golden } };
  });

  // (a) direct
  const tOpen = performance.now();
  const svc = await createSearchService();
  const params = { mode: 'hybrid' as const, chunkSize: 300, embedder: EMBEDDER_ID, topK: 10, routing: false, language: 'en' };
  await svc.search('warm up', params);
  const openMs = performance.now() - tOpen;
  const lat: number[] = [];
  let hits1 = 0;
  const tDirect = performance.now();
  for (const t of tests) {
    const t0 = performance.now();
    const r = await svc.search(t.vars.query, params);
    lat.push(performance.now() - t0);
    if (r.hits[0]?.chunkId === t.metadata.golden.expected[0]!.chunk_id) hits1++;
  }
  const directMs = performance.now() - tDirect;
  await svc.close();
  const directMean = directMs / nQ;
  console.log(`direct: open the index + first query ${(openMs / 1000).toFixed(2)} s`);
  console.log(`direct SearchService.search: ${(directMs / 1000).toFixed(2)} s total, mean ${directMean.toFixed(2)} ms, p50 ${pct(lat, 50).toFixed(2)} ms, p95 ${pct(lat, 95).toFixed(2)} ms, Recall@1 ${(hits1 / nQ).toFixed(3)}`);

  // (b) promptfoo: 1 query (fixed cost) and N queries
  const one = promptfooRun(writeConfig('bench-1', tests.slice(0, 1)), join(BENCH_DIR, 'bench-1.json'), conc);
  const outN = join(BENCH_DIR, `bench-${nQ}.json`);
  const all = promptfooRun(writeConfig(`bench-${nQ}`, tests), outN, conc);
  const doc = JSON.parse(readFileSync(outN, 'utf8'));
  const ns = doc.results.prompts[0].metrics.namedScores;
  const rows: { latencyMs?: number; response?: { output?: { latencyMs?: number } } }[] = doc.results.results;
  const provLat = rows.map((r) => r.response?.output?.latencyMs ?? NaN).filter(Number.isFinite);
  const perQuery = (all - one) / Math.max(1, nQ - 1);
  console.log(`promptfoo eval, 1 query: ${(one / 1000).toFixed(2)} s (process start, config, provider and DB open: fixed cost; promptfoo's own share ~${((one - openMs) / 1000).toFixed(2)} s)`);
  console.log(`promptfoo eval, ${nQ} queries: ${(all / 1000).toFixed(2)} s total; ${perQuery.toFixed(2)} ms per query beyond the fixed cost`);
  console.log(`  search latency inside the provider: p50 ${pct(provLat, 50).toFixed(2)} ms, p95 ${pct(provLat, 95).toFixed(2)} ms; avg_recall_at_1 ${ns.avg_recall_at_1?.toFixed(3)}, avg_mrr ${ns.avg_mrr?.toFixed(3)}`);
  const provMean = provLat.reduce((a, b) => a + b, 0) / Math.max(1, provLat.length);
  console.log(`harness overhead per query, same run: ${(perQuery - provMean).toFixed(2)} ms (promptfoo per query ${perQuery.toFixed(2)} ms - mean search time inside the provider ${provMean.toFixed(2)} ms)`);
  console.log(`harness overhead per query vs the direct loop: ${(perQuery - directMean).toFixed(2)} ms (promptfoo per query ${perQuery.toFixed(2)} ms - direct ${directMean.toFixed(2)} ms; sensitive to load on a shared machine)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
