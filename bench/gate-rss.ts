/**
 * Peak RSS of `rankgate gate` on a large JSONL results file (issue: evals of any size), two ways:
 *
 *   node --import tsx bench/gate-rss.ts [ROWS...]     (default 10000 100000)
 *     A synthetic file of N rows shaped like promptfoo's (golden metadata, a 10-hit ranking with the top 3 snippets,
 *     the rank assertion's named scores, a padding field standing for promptfoo's own per-row fields), gated in a
 *     child process. No promptfoo run: the reading and re-scoring only.
 *
 *   node --import tsx bench/gate-rss.ts --promptfoo QUERIESxCOLUMNS [--jobs 8] [--keep DIR]   (e.g. 10000x10)
 *     A real `promptfoo eval --output results.jsonl` of QUERIES NQ-style golden queries (a BEIR folder through
 *     datasets/tests.ts) x COLUMNS providers (rankgate's providers/search.ts over the fast fake `module:` service
 *     bench/gate-rss/service.ts: no index, microseconds a query), the rank assertion, the derived means and the
 *     gate hooks (RANKGATE_GATE=off: the verdict is the gate's below), writing promptfoo's database (with --no-write
 *     promptfoo 0.121 writes no JSONL rows); then `rankgate gate results.jsonl` in one process. Prints promptfoo's
 *     wall time and peak RSS, the file's size and bytes a row, and the gate's wall time and peak RSS.
 *
 * Peak RSS is GNU time's maximum resident set (%M) of the child process; the load average is printed beside it
 * (a shared machine).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { writeLinesAtomic } from '../src/util/atomic.ts';
import { selectionIdentity } from '../src/golden/testcases.ts';
import { harnessConfigYaml } from './synthetic.ts';

const ROOT = join(import.meta.dirname, '..');
const PROMPTFOO = join(ROOT, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');
const text = 'Calm is a lamp that burns steadily when the mind is still and the breath is slow, and grief is a river. ';

function* rows(n: number): Generator<string> {
  const ids = Array.from({ length: n }, (_, i) => ({ id: `q${i}` }));
  const sel = { ...selectionIdentity(ids), files: ['synthetic.json'] };
  const pad = 'p'.repeat(8000); // promptfoo's own per-row fields (gradingResult, tokenUsage, prompt...) at the demo's size
  for (let i = 0; i < n; i++) {
    const id = `q${i}`;
    const hits = Array.from({ length: 10 }, (_, r) => ({ rank: r + 1, chunkId: `d${(i + r) % 5000}#c300-${r}`, documentId: `d${(i + r) % 5000}`, score: 1 - r / 10, content: r < 3 ? text.repeat(2).slice(0, 200) : '' }));
    const golden = { id, query: `synthetic query ${i}`, language: 'en', category: ['direct', 'practice', 'concept'][i % 3], tags: [], expected: [{ doc_id: `d${(i + (i % 4)) % 5000}`, grade: 2, relevant: true }], expected_routing: 'search' };
    yield JSON.stringify({
      promptIdx: 0,
      testIdx: i,
      success: true,
      latencyMs: 5,
      provider: { id: 'file://providers/search.ts', label: 'synthetic' },
      namedScores: { n_ranked: 1, routing_ok: 1 },
      testCase: { vars: { query: golden.query }, metadata: { id, golden, selection: sel } },
      response: { output: 'readable list', metadata: { harness: { ids: hits.map((h) => h.chunkId), hits, routing: { route: 'search', safety: false, reasons: [] }, practice_bridge: false, safety: false, latencyMs: 5, integrity: [] } } },
      padding: pad,
    });
  }
}

const load = () => `load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} (2 cores, shared)`;

/** Run `node ARGS` under GNU time: exit code, wall seconds, peak RSS in MB, stdout + stderr. */
function timed(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], { encoding: 'utf8', cwd, env, maxBuffer: 1 << 28 });
  const secs = (performance.now() - t0) / 1000;
  const peakMb = Number(r.stderr.trim().split('\n').pop()) / 1024;
  return { status: r.status, secs, peakMb, out: r.stdout + r.stderr };
}
const verdictOf = (out: string) => out.split('\n').find((l) => /^rankgate gate (PASSED|FAILED|ERROR)/.test(l)) ?? '(no verdict line)';

function syntheticFiles(sizes: number[]): void {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-gate-rss-'));
  try {
    for (const n of sizes.length ? sizes : [10_000, 100_000]) {
      const file = join(dir, `results-${n}.jsonl`);
      writeLinesAtomic(file, rows(n));
      const mb = statSync(file).size / 1e6;
      const g = timed([join(ROOT, 'bin', 'rankgate.js'), 'gate', file, '--allow-partial'], dir);
      console.log(`${n} rows (${mb.toFixed(0)} MB JSONL): rankgate gate exit ${g.status} in ${g.secs.toFixed(1)} s, peak RSS ${g.peakMb.toFixed(0)} MB · ${verdictOf(g.out)}; ${load()}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** QUERIES x COLUMNS rows through a real promptfoo eval, then `rankgate gate` on its JSONL. */
function throughPromptfoo(queries: number, columns: number, jobs: number, keep?: string): void {
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'rankgate-gate-rss-pf-'));
  mkdirSync(join(dir, 'golden', 'qrels'), { recursive: true });
  try {
    const ids = Array.from({ length: queries }, (_, i) => `q${String(i).padStart(6, '0')}`);
    const doc = (i: number) => `d${String((i * 7) % 100_000).padStart(6, '0')}`;
    writeLinesAtomic(join(dir, 'golden', 'queries.jsonl'), (function* () {
      for (let i = 0; i < queries; i++) yield JSON.stringify({ _id: ids[i], text: `what does ${doc(i)} say about calm ${i}` });
    })());
    writeLinesAtomic(join(dir, 'golden', 'qrels', 'test.tsv'), (function* () {
      yield 'query-id\tcorpus-id\tscore';
      for (let i = 0; i < queries; i++) yield `${ids[i]}\t${doc(i)}\t1`;
    })());
    const providers = Array.from({ length: columns }, (_, c) =>
      `  - id: file://${ROOT}/providers/search.ts\n    label: fake ${c + 1}\n    config: { module: ${ROOT}/bench/gate-rss/service.ts, seed: ${c + 1}, mode: hybrid, topK: 10, chunkSize: 300, routing: false }`,
    ).join('\n');
    writeFileSync(
      join(dir, 'promptfooconfig.yaml'),
      harnessConfigYaml(ROOT, `bench/gate-rss ${queries}x${columns}`, providers, jobs),
    );
    writeFileSync(join(dir, 'floors.yaml'), 'overall:\n  recall_at_3: 0.5\n');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NO_COLOR: '1',
      PROMPTFOO_CONFIG_DIR: join(dir, 'pf'),
      PROMPTFOO_DISABLE_TELEMETRY: '1',
      PROMPTFOO_DISABLE_UPDATE: '1',
      PROMPTFOO_DISABLE_SHARING: '1',
      PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
      PROMPTFOO_DISABLE_DEBUG_LOG: '1', // as the repository's .env and init's set it for users
      RANKGATE_GOLDEN: join(dir, 'golden'),
    };
    delete env.RANKGATE_SHARD;
    delete env.DATABASE_URL;
    const out = join(dir, 'results.jsonl');
    console.log(`${queries} queries x ${columns} columns = ${queries * columns} rows, promptfoo -j ${jobs}; ${load()}`);
    const pf = timed([PROMPTFOO, 'eval', '-c', join(dir, 'promptfooconfig.yaml'), '--output', out, '--no-cache', '--no-table', '--no-progress-bar'], dir, env);
    writeFileSync(join(dir, 'promptfoo.log'), pf.out);
    const size = statSync(out, { throwIfNoEntry: false })?.size ?? 0;
    console.log(`promptfoo eval: exit ${pf.status} in ${pf.secs.toFixed(0)} s (${((queries * columns) / pf.secs).toFixed(0)} rows/s), peak RSS ${pf.peakMb.toFixed(0)} MB; results.jsonl ${(size / 1e6).toFixed(0)} MB = ${(size / (queries * columns)).toFixed(0)} bytes a row (compact JSON); ${load()}`);
    const g = timed([join(ROOT, 'bin', 'rankgate.js'), 'gate', out, '--floors', join(dir, 'floors.yaml')], dir);
    writeFileSync(join(dir, 'gate.log'), g.out);
    console.log(`rankgate gate: exit ${g.status} in ${g.secs.toFixed(1)} s, peak RSS ${g.peakMb.toFixed(0)} MB · ${verdictOf(g.out)}; ${load()}`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

const { values: opt, positionals } = parseArgs({ allowPositionals: true, options: { promptfoo: { type: 'string' }, jobs: { type: 'string', default: '8' }, keep: { type: 'string' } } });
if (opt.promptfoo) {
  const m = /^(\d+)x(\d+)$/.exec(opt.promptfoo);
  if (!m) throw new Error(`--promptfoo: got '${opt.promptfoo}', expected QUERIESxCOLUMNS, e.g. 10000x10`);
  throughPromptfoo(Number(m[1]), Number(m[2]), Number(opt.jobs), opt.keep);
} else syntheticFiles(positionals.map(Number).filter((n) => n > 0));
