/**
 * The promptfoo side of the BEIR benchmark: one generated config (a column per search configuration),
 * run by the installed promptfoo CLI in a child process, and the per-column summary read back from its
 * `--output` JSON.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SearchParams } from '../../src/search/types.ts';
import type { GoldenTestCase } from '../../src/golden/testcases.ts';
import { UserError } from '../../src/errors.ts';
import { resultRows } from '../../src/results/stream.ts';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PROMPTFOO_BIN = join(REPO, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');

export interface ColumnSpec {
  label: string;
  /** keyword | semantic | hybrid | sweep */
  kind: 'keyword' | 'semantic' | 'hybrid' | 'sweep';
  params: Partial<SearchParams>;
}

export const SWEEP_K = [20, 60, 100] as const;
/** keyword / vector RRF weights: equal, 60-40 each way */
export const SWEEP_WEIGHTS = [
  { keyword: 1, vector: 1 },
  { keyword: 0.6, vector: 0.4 },
  { keyword: 0.4, vector: 0.6 },
] as const;

const wLabel = (w: { keyword: number; vector: number }) => (w.keyword === w.vector ? 'w1:1' : `w${w.keyword}/${w.vector}`);

/**
 * keyword (BM25 with the service defaults k1=1.2 b=0.75, and with Anserini's k1=0.9 b=0.4), semantic, hybrid
 * (RRF defaults k=60, equal weights), and the small sweep grid minus the default cell.
 */
export function columnsFor(sweep: 'none' | 'small'): ColumnSpec[] {
  const cols: ColumnSpec[] = [
    { label: 'keyword (BM25)', kind: 'keyword', params: { mode: 'keyword' } },
    // the published BM25 anchor's parameters (Anserini/Pyserini flat), so the comparison is like for like
    { label: 'keyword (BM25 k1=0.9 b=0.4)', kind: 'keyword', params: { mode: 'keyword', bm25K1: 0.9, bm25B: 0.4 } },
    { label: 'semantic (use-lite)', kind: 'semantic', params: { mode: 'semantic' } },
    { label: 'hybrid (RRF k60 w1:1)', kind: 'hybrid', params: { mode: 'hybrid', rrfK: 60, weights: { keyword: 1, vector: 1 } } },
  ];
  if (sweep === 'small') {
    for (const k of SWEEP_K) {
      for (const w of SWEEP_WEIGHTS) {
        if (k === 60 && w.keyword === w.vector) continue; // = the hybrid column
        cols.push({ label: `sweep RRF k${k} ${wLabel(w)}`, kind: 'sweep', params: { mode: 'hybrid', rrfK: k, weights: { ...w } } });
      }
    }
  }
  return cols;
}

export interface ConfigOptions {
  name: string;
  tests: GoldenTestCase[];
  columns: ColumnSpec[];
  dataDir: string;
  chunkSize: number;
  embedder: string;
  /** chunks returned (topK) and per-channel candidates; >= 100 so Recall@100 is measurable */
  depth: number;
}

/** The promptfoo config (JSON is YAML) with absolute file:// paths, so it runs from any directory. */
export function buildConfig(o: ConfigOptions): Record<string, unknown> {
  const f = (p: string) => `file://${join(REPO, p)}`;
  const common: Partial<SearchParams> & Record<string, unknown> = {
    chunkSize: o.chunkSize,
    embedder: o.embedder,
    keywordScorer: 'bm25',
    vectorSearch: 'hnsw',
    efSearch: Math.max(100, o.depth),
    topK: o.depth,
    candidates: o.depth,
    routing: false,
    language: 'en',
    dataDir: o.dataDir,
    routingConfig: false,
    autoIngest: false,
  };
  return {
    description: `rankgate BEIR benchmark: ${o.name}`,
    prompts: ['{{query}}'],
    providers: o.columns.map((c) => ({
      id: f('bench/beir/provider.ts'),
      label: c.label,
      config: { ...common, ...c.params, benchRows: o.columns.length * o.tests.length },
    })),
    defaultTest: {
      assert: [
        { type: 'javascript', value: `${f('assertions/rank.ts')}:rank`, config: { passAt: 10 } },
        { type: 'javascript', value: `${f('bench/beir/assert.ts')}:recall100` },
      ],
    },
    tests: o.tests,
    // each row's metadata once (promptfoo copies response.metadata into the row's own metadata)
    extensions: [f('assertions/gate.ts:afterEach')],
    derivedMetrics: [
      { name: 'ndcg_at_10_mean', value: 'ndcg_at_10 / n_beir' },
      { name: 'mrr_at_10_mean', value: 'mrr / n_beir' },
      { name: 'recall_at_100_mean', value: 'recall_at_100 / n_beir' },
    ],
  };
}

export interface RunOptions {
  config: Record<string, unknown>;
  concurrency: number;
  /** where the promptfoo results JSON ends up (renamed into place after a complete run) */
  resultsFile: string;
  /** columns x queries: a file with fewer rows is an eval that stopped early (refused, not summarised as errors) */
  expectedRows?: number;
  log?: (s: string) => void;
}

/** `promptfoo eval` on the generated config; resolves to the parsed results JSON. */
export async function runPromptfoo(o: RunOptions): Promise<PfOutput> {
  const tmp = mkdtempSync(join(tmpdir(), 'rankgate-beir-'));
  try {
    const cfg = join(tmp, 'promptfooconfig.yaml');
    writeFileSync(cfg, JSON.stringify(o.config));
    // JSONL: promptfoo streams the rows (a 9,708-row JSON passes V8's longest string); without --no-write, with which
    // promptfoo 0.121 writes no rows to JSONL
    const out = join(tmp, 'results.jsonl');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // promptfoo's database of this benchmark only: two promptfoo processes writing one SQLite database lose rows
      // (a SciFact train run beside a fixture run ended with 190 of 9,708 rows in its JSONL)
      PROMPTFOO_CONFIG_DIR: process.env.PROMPTFOO_CONFIG_DIR ?? join(dirname(o.resultsFile), 'promptfoo'),
      PROMPTFOO_DISABLE_TELEMETRY: '1',
      PROMPTFOO_DISABLE_UPDATE: '1',
      PROMPTFOO_DISABLE_SHARING: '1',
      PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
      PROMPTFOO_PASS_RATE_THRESHOLD: '0',
      PROMPTFOO_DISABLE_DEBUG_LOG: '1', // as the repository's .env and init's set it for users
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    };
    delete env.DATABASE_URL; // the benchmark's own PGlite data dir, never a server named by the environment
    const args = [PROMPTFOO_BIN, 'eval', '-c', cfg, '--output', out, '--no-cache', '--no-table', '--no-progress-bar', '-j', String(o.concurrency)];
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((res, rej) => {
      const child = spawn(process.execPath, args, { cwd: tmp, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => {
        stderr += d;
        // promptfoo's own log only with RANKGATE_BENCH_VERBOSE; the provider's progress lines always
        if (process.env.RANKGATE_BENCH_VERBOSE) process.stderr.write(d);
        else for (const line of String(d).split('\n')) if (line.startsWith('bench:beir ')) process.stderr.write(line + '\n');
      });
      child.on('error', rej);
      child.on('close', (code) => res({ code: code ?? -1, stdout, stderr }));
    });
    let parsed: PfOutput;
    try {
      parsed = readPfRows(out);
      if (!parsed.results.results.length) throw new Error('no rows');
    } catch {
      const tail = (r.stderr + '\n' + r.stdout).trim().split('\n').slice(-25).join('\n');
      throw new UserError(`promptfoo eval exited with code ${r.code} and wrote no results:\n${tail}`);
    }
    renameOrCopy(out, o.resultsFile);
    const n = parsed.results.results.length;
    if (o.expectedRows !== undefined && n < o.expectedRows) {
      const tail = (r.stderr + '\n' + r.stdout).trim().split('\n').slice(-25).join('\n');
      throw new UserError(`promptfoo eval exited with code ${r.code} after ${n} of ${o.expectedRows} rows (columns x queries; kept in ${o.resultsFile}): the eval stopped early, nothing is summarised:\n${tail}`);
    }
    return parsed;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export interface PfRow {
  testIdx?: number;
  provider?: { id?: string; label?: string };
  namedScores?: Record<string, number>;
  gradingResult?: { namedScores?: Record<string, number> } | null;
  response?: { output?: unknown; error?: string; metadata?: { harness?: { latencyMs?: unknown } } } | null;
  error?: string | null;
  latencyMs?: number;
}
/** The rows of a results file (JSON or JSONL), one at a time, each reduced to what summarize() reads. */
export function readPfRows(file: string): PfOutput {
  const rows: PfRow[] = [];
  for (const r of resultRows(file) as Iterable<PfRow & { response?: { metadata?: { harness?: { latencyMs?: unknown } } } | null }>) {
    const lat = r.response?.metadata?.harness?.latencyMs;
    rows.push({
      testIdx: r.testIdx,
      provider: r.provider,
      namedScores: r.namedScores,
      gradingResult: r.gradingResult ? { namedScores: r.gradingResult.namedScores } : r.gradingResult,
      response: r.response ? { error: r.response.error, metadata: { harness: { latencyMs: lat } } } : r.response,
      error: r.error,
      latencyMs: r.latencyMs,
    });
  }
  return { results: { results: rows } };
}

/**
 * `rankgate gate` on the results file in its own process (the command a user runs on a sweep's results), with a
 * zero overall Recall@3 floor: the benchmark measures, it does not judge quality, so the gate's verdict is about the
 * evidence (every row readable, every query of the selection present, no errored rows). Peak RSS from GNU time.
 */
export function gateResults(resultsFile: string): { code: number | null; secs: number; peakMb: number | null; verdict: string } {
  const tmp = mkdtempSync(join(tmpdir(), 'rankgate-beir-gate-'));
  try {
    const floors = join(tmp, 'floors.yaml');
    writeFileSync(floors, 'overall:\n  recall_at_3: 0\n');
    const args = [join(REPO, 'bin', 'rankgate.js'), 'gate', resultsFile, '--floors', floors];
    const time = existsSync('/usr/bin/time');
    const t0 = performance.now();
    const r = time
      ? spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], { encoding: 'utf8', cwd: tmp, maxBuffer: 1 << 28 })
      : spawnSync(process.execPath, args, { encoding: 'utf8', cwd: tmp, maxBuffer: 1 << 28 });
    const secs = (performance.now() - t0) / 1000;
    const peak = time ? Number(r.stderr.trim().split('\n').pop()) : NaN;
    const verdict = (r.stdout + r.stderr).split('\n').find((l) => /^rankgate gate (PASSED|FAILED|ERROR)/.test(l)) ?? (r.stdout + r.stderr).trim().split('\n').slice(-3).join(' | ');
    return { code: r.status, secs, peakMb: Number.isFinite(peak) ? peak / 1024 : null, verdict };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Move the results into place (a rename; a copy across file systems), atomically either way. */
function renameOrCopy(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  try {
    renameSync(from, to);
  } catch {
    const tmp = `${to}.tmp-${process.pid}`;
    copyFileSync(from, tmp);
    renameSync(tmp, to);
  }
}

export interface PfOutput {
  evalId?: string;
  results: { results: PfRow[]; prompts?: { provider?: string; label?: string }[] };
}

export interface ColumnSummary {
  label: string;
  kind: ColumnSpec['kind'];
  params: Partial<SearchParams>;
  queries: number;
  errors: number;
  ndcg10: number;
  recall100: number;
  mrr10: number;
  /** queries whose ranking held fewer than min(100, corpus size) distinct documents */
  short: number;
  latencyP50: number;
  latencyP95: number;
  /** per query (test order): nDCG@10 */
  perQuery: { ndcg10: number[]; recall100: number[]; mrr10: number[]; latencyMs: number[] };
}

/** Percentile with linear interpolation between closest ranks (numpy's default), p in [0, 100]. */
export function percentile(values: readonly number[], p: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const pos = ((s.length - 1) * p) / 100;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

function outputLatency(row: PfRow): number | undefined {
  const h = row.response?.metadata?.harness?.latencyMs; // readable-text output: the structure is in metadata.harness
  if (typeof h === 'number') return h;
  let o = row.response?.output;
  if (typeof o === 'string') {
    try {
      o = JSON.parse(o);
    } catch {
      return undefined;
    }
  }
  const l = (o as { latencyMs?: unknown } | undefined)?.latencyMs;
  return typeof l === 'number' ? l : undefined;
}

/** Means per column over all tests (an errored row counts 0 for every measure, like a missing run in trec_eval -c). */
export function summarize(pf: PfOutput, columns: ColumnSpec[], nTests: number, corpusDocuments = Infinity): ColumnSummary[] {
  const full = Math.min(100, corpusDocuments);
  const rows = pf.results?.results;
  if (!Array.isArray(rows)) throw new UserError('promptfoo results JSON has no results.results[]');
  return columns.map((c) => {
    const mine = rows.filter((r) => r.provider?.label === c.label);
    const byTest = new Map<number, PfRow>();
    for (const r of mine) if (typeof r.testIdx === 'number') byTest.set(r.testIdx, r);
    const ndcg: number[] = [];
    const rec: number[] = [];
    const mrr: number[] = [];
    const lat: number[] = [];
    let errors = 0;
    let short = 0;
    for (let t = 0; t < nTests; t++) {
      const r = byTest.get(t);
      const ns = r?.namedScores ?? r?.gradingResult?.namedScores ?? {};
      // A row whose assertions ran has the measures; promptfoo also sets `error` on a row that merely FAILED an
      // assertion (no relevant document in the top 10), which is a score of 0, not an error. Only a provider
      // error (or a missing row) counts as one.
      const ok = r !== undefined && !r.response?.error && typeof ns.recall_at_100 === 'number';
      if (!ok) errors++;
      ndcg.push(ok ? (ns.ndcg_at_10 ?? 0) : 0);
      rec.push(ok ? ns.recall_at_100! : 0);
      mrr.push(ok ? (ns.mrr ?? 0) : 0);
      if (ok && (ns.docs_returned ?? 0) < full) short++;
      const l = r ? outputLatency(r) : undefined;
      if (l !== undefined) lat.push(l);
    }
    const mean = (a: number[]) => (a.length ? a.reduce((x, y) => x + y, 0) / a.length : 0);
    return {
      label: c.label,
      kind: c.kind,
      params: c.params,
      queries: nTests,
      errors,
      ndcg10: mean(ndcg),
      recall100: mean(rec),
      mrr10: mean(mrr),
      short,
      latencyP50: percentile(lat, 50),
      latencyP95: percentile(lat, 95),
      perQuery: { ndcg10: ndcg, recall100: rec, mrr10: mrr, latencyMs: lat },
    };
  });
}

/** The best hybrid configuration by mean nDCG@10 (ties: the earlier column, i.e. the default first). */
export function bestHybrid(cols: ColumnSummary[]): ColumnSummary | undefined {
  let best: ColumnSummary | undefined;
  for (const c of cols) if ((c.kind === 'hybrid' || c.kind === 'sweep') && (!best || c.ndcg10 > best.ndcg10 + 1e-12)) best = c;
  return best;
}
