/**
 * Harness overhead benchmark: 1,000 generated NQ-style queries over a 10,000-chunk index, run
 *   (a) directly against SearchService.search (a sequential loop in this process), and
 *   (b) through `promptfoo eval` with providers/search.ts and the default eval's harness (the rank, routing,
 *       integrity and judge assertions, derived means, beforeAll/afterAll hooks),
 * and print total time and the harness overhead per query: medians over --repeat runs, interleaved.
 *
 *   node --import tsx bench/eval.ts [--queries 1000] [--chunks 10000] [--concurrency 4,1,1:thread] [--repeat 3]
 *
 * -j 4 is the default config's setting (maxConcurrency 4): the search runs in the provider's worker thread and
 * overlaps promptfoo's per-row work on the second core. -j 1 runs one row at a time, as the direct loop does; with
 * `:thread` the provider runs with worker: false, the search in promptfoo's own thread (the setup before the worker).
 *
 * The corpus is synthetic NQ prepared JSON (chunk ids nq_XXXXXX, one answer chunk per question) built with a
 * fixed seed; the index lives in .rankgate/bench/db (built once, reused). Embeddings come from a 64-d
 * feature-hashing embedder defined here: the benchmark measures the harness, not the embedding model, and
 * USE-lite would need ~30 min to embed 10k passages on this machine. The same embedder serves both (a) and (b).
 *
 * Overhead per query = (promptfoo wall time for N queries - promptfoo wall time for 1 query) / (N - 1)
 *                      - mean time of the direct loop in the same run (at -j 1 also against the mean search
 *                      time measured inside the provider, which is robust to machine load).
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
import { mulberry32 } from '../src/metrics/significance.ts';

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

/**
 * The bench config is the default eval's harness (promptfooconfig.yaml) around the bench index: the same four
 * assertions (rank, routing, integrity, and the judge, off as it is without AWS), the same derived means and the
 * same beforeAll/afterAll hooks (per-category means, gate summary; the gate in report-only mode, since these
 * synthetic queries have no floors to meet).
 */
function writeConfig(name: string, tests: unknown[], worker = true): string {
  const testsFile = join(BENCH_DIR, `${name}.tests.json`);
  writeFileSync(testsFile, JSON.stringify(tests));
  const cfg = join(BENCH_DIR, `${name}.yaml`);
  const a = (file: string, fn: string, config?: string) =>
    `    - { type: javascript, value: ${JSON.stringify('file://' + join(ROOT, 'assertions', file) + ':' + fn)}${config ? `, config: ${config}` : ''} }`;
  const hook = (fn: string) => `  - ${JSON.stringify('file://' + join(ROOT, 'assertions', 'gate.ts') + ':' + fn)}`;
  writeFileSync(
    cfg,
    [
      `description: rankgate harness benchmark (${tests.length} queries)`,
      `prompts: ['{{query}}']`,
      `providers:`,
      `  - id: ${JSON.stringify('file://' + join(ROOT, 'providers', 'search.ts'))}`,
      `    label: bench hybrid rrf60 c300 ${EMBEDDER_ID}`,
      `    config: { module: ${JSON.stringify(join(ROOT, 'bench', 'eval.ts'))}, mode: hybrid, chunkSize: 300, embedder: ${EMBEDDER_ID}, topK: 10, routing: false${worker ? '' : ', worker: false'} }`,
      `defaultTest:`,
      `  assert:`,
      a('rank.ts', 'rank', '{ passAt: 3 }'),
      a('routing.ts', 'routing'),
      a('integrity.ts', 'integrity'),
      a('judge.ts', 'judged', '{ mode: off }'),
      `tests: ${JSON.stringify('file://' + testsFile)}`,
      `extensions:`,
      hook('beforeAll'),
      hook('afterAll'),
      `env: { RANKGATE_GATE: 'off' }`,
    ].join('\n') + '\n',
  );
  return cfg;
}

const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
};
const range = (xs: number[], d = 2) => (xs.length > 1 ? ` (runs: ${xs.map((x) => x.toFixed(d)).join(', ')})` : '');

interface Rep {
  directMean: number;
  oneMs: number;
  allMs: number;
  perQuery: number;
  provMean: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      queries: { type: 'string', default: '1000' },
      chunks: { type: 'string', default: '10000' },
      // each entry: promptfoo's -j, and ':thread' for the provider's worker: false (the search in promptfoo's thread)
      concurrency: { type: 'string', default: '4,1,1:thread' },
      repeat: { type: 'string', default: '3' },
    },
  });
  const nQ = Number(values.queries);
  const nC = Number(values.chunks);
  const concs = String(values.concurrency).split(',');
  const jOf = (c: string) => Number(c.split(':')[0]);
  const labelOf = (c: string) => `-j ${jOf(c)}${c.endsWith(':thread') ? ', worker: false' : ''}`;
  const reps = Number(values.repeat);
  console.log(`rankgate harness benchmark: ${nQ} NQ-style queries, ${nC}-chunk index, runs ${concs.map(labelOf).join(' / ')}, ${reps} run(s) each, medians; ${process.version}`);
  const gen = generate(nC);
  await ensureIndex(gen);
  const rnd = mulberry32(7);
  const picked = Array.from({ length: nQ }, () => gen.chunks[Math.floor(rnd() * gen.chunks.length)]!);
  const tests = picked.map((c, i) => {
    const golden = { id: `nq-${i}`, query: c.question, language: 'en', category: 'nq', tags: [], slices: {}, expected: [{ chunk_id: c.id, grade: 1, relevant: true }], expected_routing: 'search' };
    return { description: `nq-${i}: ${c.question}`, vars: { query: c.question, category: 'nq', language: 'en', id: `nq-${i}` }, metadata: { id: `nq-${i}`, category: 'nq', language: 'en', tags: '', golden } };
  });
  const cfg = (c: string) => {
    const thread = c.endsWith(':thread');
    return { one: writeConfig(`bench-1${thread ? '-thread' : ''}`, tests.slice(0, 1), !thread), all: writeConfig(`bench-${nQ}${thread ? '-thread' : ''}`, tests, !thread) };
  };
  const outN = join(BENCH_DIR, `bench-${nQ}.json`);
  const params = { mode: 'hybrid' as const, chunkSize: 300, embedder: EMBEDDER_ID, topK: 10, routing: false, language: 'en' };

  /** (a) SearchService.search in a sequential loop, in this process. */
  const direct = async (): Promise<{ mean: number; p50: number; p95: number; recall1: number }> => {
    const svc = await createSearchService();
    await svc.search('warm up', params);
    const lat: number[] = [];
    let hits1 = 0;
    const t0 = performance.now();
    for (const t of tests) {
      const q0 = performance.now();
      const r = await svc.search(t.vars.query, params);
      lat.push(performance.now() - q0);
      if (r.hits[0]?.chunkId === t.metadata.golden.expected[0]!.chunk_id) hits1++;
    }
    const ms = performance.now() - t0;
    await svc.close();
    return { mean: ms / nQ, p50: pct(lat, 50), p95: pct(lat, 95), recall1: hits1 / nQ };
  };

  const results = new Map<string, Rep[]>();
  let lastNs: Record<string, number> = {};
  let directRecall = 0;
  // Interleaved (direct, then each concurrency, per run) so a slow spell on a shared machine hits every figure alike.
  for (let r = 0; r < reps; r++) {
    const d = await direct();
    directRecall = d.recall1;
    console.log(`run ${r + 1}: direct SearchService.search mean ${d.mean.toFixed(2)} ms (p50 ${d.p50.toFixed(2)}, p95 ${d.p95.toFixed(2)})`);
    for (const conc of concs) {
      const { one, all } = cfg(conc);
      const oneMs = promptfooRun(one, join(BENCH_DIR, 'bench-1.json'), jOf(conc));
      const allMs = promptfooRun(all, outN, jOf(conc));
      const doc = JSON.parse(readFileSync(outN, 'utf8'));
      lastNs = doc.results.prompts[0].metrics.namedScores;
      const rows: { response?: { output?: unknown; metadata?: { harness?: { latencyMs?: number } } } }[] = doc.results.results;
      const provLat = rows.map((x) => x.response?.metadata?.harness?.latencyMs ?? NaN).filter(Number.isFinite);
      const provMean = provLat.reduce((a, b) => a + b, 0) / Math.max(1, provLat.length);
      const perQuery = (allMs - oneMs) / Math.max(1, nQ - 1);
      const rep = { directMean: d.mean, oneMs, allMs, perQuery, provMean };
      results.set(conc, [...(results.get(conc) ?? []), rep]);
      console.log(`run ${r + 1}: promptfoo ${labelOf(conc)}: ${nQ} queries ${(allMs / 1000).toFixed(2)} s, 1 query ${(oneMs / 1000).toFixed(2)} s; ${perQuery.toFixed(2)} ms per query; overhead ${(perQuery - d.mean).toFixed(2)} ms`);
    }
  }

  console.log('');
  console.log(`Recall@1 direct ${directRecall.toFixed(3)}; through promptfoo avg_recall_at_1 ${lastNs.avg_recall_at_1?.toFixed(3)}, avg_mrr ${lastNs.avg_mrr?.toFixed(3)} (the same rankings)`);
  console.log('| concurrency | total (N queries) | fixed cost (1 query) | per query through promptfoo | per query direct | overhead per query |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const conc of concs) {
    const xs = results.get(conc)!;
    const over = xs.map((x) => x.perQuery - x.directMean);
    console.log(
      `| ${labelOf(conc)} | ${(median(xs.map((x) => x.allMs)) / 1000).toFixed(1)} s | ${(median(xs.map((x) => x.oneMs)) / 1000).toFixed(1)} s | ${median(xs.map((x) => x.perQuery)).toFixed(1)} ms | ${median(xs.map((x) => x.directMean)).toFixed(1)} ms | ${median(over).toFixed(1)} ms${range(over, 1)} |`,
    );
  }
  for (const conc of concs.filter((c) => jOf(c) === 1)) {
    const same = results.get(conc)!.map((x) => x.perQuery - x.provMean);
    console.log(`${labelOf(conc)}: overhead against the search time measured in the same run (latencyMs; robust to load): median ${median(same).toFixed(1)} ms${range(same, 1)}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
