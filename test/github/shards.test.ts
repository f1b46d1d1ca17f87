/**
 * The sharded workflow replayed on this machine: the `run:` scripts of .github/workflows/search-eval.yml, taken
 * from the file itself (not copies), executed with bash the way the runner would, with the step's own env block
 * (matrix.shard and the shard count substituted) and the workflow's env:
 *
 *   job `shard`, step `eval`   x N, in parallel (real `npx promptfoo eval` with RANKGATE_SHARD=i/N)
 *   job `merge`, steps `merge`, `gate`, `summary`   on the N results files (as download-artifact merge-multiple leaves them)
 *   job `eval`,  steps `eval`, `gate`               the single-process run of the same queries, for comparison
 *
 * The eval config is test/fixtures/shards/promptfooconfig.yaml (RANKGATE_EVAL_CONFIG, the workflow's own knob): the
 * repository's tests loader over ten golden queries, two columns of a canned-rankings module service, so the
 * rankings are deterministic and the comparison can be bit for bit. `npx` is a shim that runs this checkout's
 * promptfoo and rankgate (no network). Everything is written in temp dirs.
 *
 * Equal, bit for bit, merged vs single process (JSONL, the workflow's --output): every row's namedScores, pass and
 * assertion scores per query and column; the rows and passes per column; the gate's report JSON (its re-scoring of
 * every row); compare's table. (JSONL has no column sums; the JSON merge's arithmetic is test/results/merge.test.ts.) Only latency differs between runs
 * (it is measured), so the latency keys are left out; a row's promptfoo score (the mean of its assertions' scores,
 * added in the order they finish) is equal to 1e-12.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { ResultsDoc } from '../../src/results/merge.ts';
import { ROOT, tempDir } from '../harness/helpers.ts';

type Step = { id?: string; run?: string; env?: Record<string, string> };
type Job = { steps: Step[]; strategy?: { matrix?: Record<string, unknown> }; needs?: string | string[] };
const wf = yaml.load(readFileSync(join(ROOT, '.github/workflows/search-eval.yml'), 'utf8')) as { env: Record<string, string>; jobs: Record<string, Job> };

function step(job: string, id: string): Step {
  const s = wf.jobs[job]?.steps.find((x) => x.id === id);
  assert.ok(s?.run, `job ${job} has a run step with id ${id}`);
  return s!;
}

/** The values of the few expressions the replayed steps use. */
/** The pull request's base ref as the workflow spells it: a manual run (what the replay is) has none. */
const BASE_REF_EXPR = "${{ github.event.pull_request.base.sha || 'none' }}";

function expand(v: string, ctx: Record<string, string>): string {
  return v.split(BASE_REF_EXPR).join('none').replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => {
    if (expr in ctx) return ctx[expr]!;
    throw new Error(`replay: no value for \${{ ${expr} }} in ${v}`);
  });
}

// two shards: the merge of several files is the same code for 2 or more (test/report/merge covers more), and each
// shard is a promptfoo eval of ~5 CPU-s
const N = 2;
const CONFIG = join(ROOT, 'test', 'fixtures', 'shards', 'promptfooconfig.yaml');
const GOLDEN = join(ROOT, 'test', 'fixtures', 'shards', 'golden-set.json');
const LATENCY = /latency/;

function bash(script: string, cwd: string, env: Record<string, string | undefined>): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-c', script], { cwd, env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const t = setTimeout(() => child.kill('SIGKILL'), 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code: code ?? -1, out });
    });
  });
}

describe('the sharded workflow, replayed: N shard processes in parallel, merged, gated', () => {
  const dir = tempDir('shards');
  const shim = join(dir, 'bin');
  const baseEnv: Record<string, string | undefined> = {};
  let shardRuns: { code: number; out: string }[] = [];
  let merge: { code: number; out: string };
  let gateMerged: { code: number; out: string };
  let summary: { code: number; out: string };
  let single: { code: number; out: string };
  let gateSingle: { code: number; out: string };
  const mergeDir = join(dir, 'merge');
  const singleDir = join(dir, 'single');

  before(async () => {
    mkdirSync(shim);
    writeFileSync(
      join(shim, 'npx'),
      `#!/bin/sh\ncmd="$1"; shift\ncase "$cmd" in\n  promptfoo) exec "${process.execPath}" "${join(ROOT, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js')}" "$@" ;;\n` +
        `  rankgate) exec "${process.execPath}" "${join(ROOT, 'bin', 'rankgate.js')}" "$@" ;;\n  *) echo "npx shim: $cmd is not available offline" >&2; exit 127 ;;\nesac\n`,
    );
    chmodSync(join(shim, 'npx'), 0o755);
    Object.assign(baseEnv, process.env, wf.env, {
      PATH: `${shim}:${process.env.PATH}`,
      RANKGATE_EVAL_CONFIG: CONFIG,
      RANKGATE_GOLDEN: GOLDEN,
      DATABASE_URL: undefined,
      NO_COLOR: '1',
      FORCE_COLOR: '0',
    });
    delete baseEnv.RANKGATE_SHARD;
    // The floors of the replay: config/gate.yaml of the directory the gate runs in (lenient: the fixture's Recall@3 is 0.5).
    for (const d of [mergeDir, singleDir]) {
      mkdirSync(join(d, 'config'), { recursive: true });
      writeFileSync(join(d, 'config', 'gate.yaml'), 'overall:\n  recall_at_3: 0.4\n');
    }

    // Job `shard` x N in parallel, each in its own workspace, and the single-process job `eval` at the same time.
    const evalStep = step('shard', 'eval');
    const runs = Array.from({ length: N }, (_, k) => {
      const i = k + 1;
      const ws = join(dir, `shard-${i}`);
      mkdirSync(ws);
      const env = { ...baseEnv, PROMPTFOO_CONFIG_DIR: join(ws, '.promptfoo') } as Record<string, string | undefined>;
      for (const [k2, v] of Object.entries(evalStep.env ?? {})) env[k2] = expand(String(v), { 'matrix.shard': String(i), 'needs.plan.outputs.count': String(N) });
      return bash(evalStep.run!, ws, env);
    });
    const singleRun = bash(step('eval', 'eval').run!, singleDir, { ...baseEnv, PROMPTFOO_CONFIG_DIR: join(singleDir, '.promptfoo') });
    shardRuns = await Promise.all(runs);
    single = await singleRun;

    // Job `merge`: download-artifact (merge-multiple) puts every shard's results-<i>.json in shard-results/.
    mkdirSync(join(mergeDir, 'shard-results'), { recursive: true });
    for (let i = 1; i <= N; i++) {
      for (const f of readdirSync(join(dir, `shard-${i}`, 'shard-results'))) copyFileSync(join(dir, `shard-${i}`, 'shard-results', f), join(mergeDir, 'shard-results', f));
    }
    merge = await bash(step('merge', 'merge').run!, mergeDir, baseEnv);
    const gateEnv = (job: string) => {
      const env = { ...baseEnv };
      for (const [k, v] of Object.entries(step(job, 'gate').env ?? {})) env[k] = expand(String(v), { 'steps.baseline.outputs.path': '' });
      return env;
    };
    gateMerged = await bash(step('merge', 'gate').run!, mergeDir, gateEnv('merge'));
    summary = await bash(step('merge', 'summary').run!, mergeDir, { ...baseEnv, GITHUB_STEP_SUMMARY: join(mergeDir, 'summary.md') });
    gateSingle = await bash(step('eval', 'gate').run!, singleDir, gateEnv('eval'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  // promptfoo's --output results.jsonl: one row a line, no summary (the workflow's default)
  type Row = ResultsDoc['results']['results'][number];
  const read = (p: string) => ({ results: { results: readFileSync(p, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Row) } });

  it('every shard process ran its own part of the golden set (exit 0), and the shards partition it', () => {
    const ids: string[] = [];
    shardRuns.forEach((r, k) => {
      assert.equal(r.code, 0, `shard ${k + 1}: ${r.out.slice(-2000)}`);
      const d = read(join(dir, `shard-${k + 1}`, 'shard-results', `results-${k + 1}.jsonl`));
      const sel = d.results.results[0]!.testCase!.metadata!.selection as { id: string; size: number; shard: { index: number; count: number }; shardSize: number };
      assert.deepEqual(sel.shard, { index: k + 1, count: N });
      assert.equal(sel.size, 10);
      assert.equal(d.results.results.length, 2 * sel.shardSize, 'two columns');
      assert.ok(sel.shardSize < 10, `shard ${k + 1} holds part of the set`);
      for (const r of d.results.results) if (r.promptIdx === 0) ids.push((r.testCase!.metadata as { id: string }).id);
    });
    assert.equal(ids.length, 10);
    assert.equal(new Set(ids).size, 10, 'no query in two shards');
    assert.equal(single.code, 0, single.out.slice(-2000));
  });

  it('merges (exit 0), gates the merged file like the single run, and writes the job summary', () => {
    assert.equal(merge.code, 0, merge.out);
    assert.match(merge.out, /10 queries x 2 columns \(20 rows\) .* merged from 2 files/);
    assert.equal(gateMerged.code, 0, gateMerged.out.slice(-2000));
    assert.equal(gateSingle.code, gateMerged.code);
    assert.equal(summary.code, 0, summary.out);
    assert.equal(readFileSync(join(mergeDir, 'summary.md'), 'utf8'), readFileSync(join(mergeDir, 'comment.md'), 'utf8'), 'the job summary carries the comment table');
  });

  it('merged == single process, per query and per column, bit for bit (latency aside)', async () => {
    const merged = read(join(mergeDir, 'results.jsonl'));
    const raw = read(join(singleDir, 'results.jsonl'));
    const key = (r: ResultsDoc['results']['results'][number]) => `${r.promptIdx}\t${(r.testCase!.metadata as { id: string }).id}`;
    const strip = (o: Record<string, unknown> | undefined) => Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => !LATENCY.test(k)));
    const singleRows = new Map(raw.results.results.map((r) => [key(r), r]));
    assert.equal(merged.results.results.length, 20);
    for (const r of merged.results.results) {
      const s = singleRows.get(key(r));
      assert.ok(s, key(r));
      assert.deepEqual(strip(r.namedScores), strip(s!.namedScores), key(r));
      assert.equal(r.success, s!.success, key(r));
      // A row's score is promptfoo's mean of its assertions' scores, added in the order the assertions finish (they run
      // concurrently), so it can differ in the last bit between two runs of the same row: the component scores are exact.
      assert.ok(Math.abs(r.score! - s!.score!) <= 1e-12, `${key(r)}: ${r.score} vs ${s!.score}`);
      const comps = (x: typeof r) => ((x.gradingResult as { componentResults?: { score: number; pass: boolean }[] })?.componentResults ?? []).map((c) => `${c.pass}:${c.score}`).sort();
      assert.deepEqual(comps(r), comps(s!), key(r));
      assert.deepEqual((r.response!.output as { ids?: unknown })?.ids ?? r.response!.output, (s!.response!.output as { ids?: unknown })?.ids ?? s!.response!.output);
    }
    // JSONL carries no column sums: the columns are compared as the gate re-scores them (next test). The JSON merge's
    // column arithmetic is test/results/merge.test.ts.
    for (let p = 0; p < 2; p++) {
      const col = (d: typeof merged) => d.results.results.filter((r) => (r.promptIdx ?? 0) === p);
      assert.equal(col(merged).length, col(raw).length);
      assert.equal(col(merged).filter((r) => r.success).length, col(raw).filter((r) => r.success).length, `column ${p}: passes`);
    }
  });

  it("the gate's report of the merged file equals the single run's (every metric the gate, report and compare read)", async () => {
    const rg = (args: string[], cwd: string) => bash(`npx rankgate ${args.map((a) => `'${a}'`).join(' ')}`, cwd, baseEnv);
    for (const col of ['0', '1']) {
      const a = await rg(['gate', 'results.jsonl', '--column', col, '--report', `report-${col}.json`], mergeDir);
      const b = await rg(['gate', 'results.jsonl', '--column', col, '--report', `report-${col}.json`], singleDir);
      assert.equal(a.code, b.code);
      // toolchain: the single run's JSONL has the hook's record beside it (Node and promptfoo versions); a merged JSONL
      // has rows only, so its report knows no versions (null, never other ones)
      const clean = (p: string) =>
        JSON.stringify(JSON.parse(readFileSync(p, 'utf8')), (k, v) => (LATENCY.test(k) || k === 'eval_id' || k === 'evalId' || k === 'timestamp' || k === 'generated_at' || k === 'toolchain' ? undefined : v));
      assert.equal(clean(join(mergeDir, `report-${col}.json`)), clean(join(singleDir, `report-${col}.json`)), `column ${col}`);
      const tc = (d: string) => (JSON.parse(readFileSync(join(d, `report-${col}.json`), 'utf8')) as { toolchain?: unknown }).toolchain ?? null;
      assert.ok(tc(mergeDir) === null || JSON.stringify(tc(mergeDir)) === JSON.stringify(tc(singleDir)), `merged toolchain ${JSON.stringify(tc(mergeDir))}`);
    }
    for (const m of ['ndcg_at_10', 'routing_ok']) {
      const a = await rg(['compare', '--results', 'results.jsonl', '-m', m], mergeDir);
      const b = await rg(['compare', '--results', 'results.jsonl', '-m', m], singleDir);
      assert.equal(a.code, 0, a.out.slice(-1500));
      const table = (o: string) => o.split('\n\n')[0]!; // the table (what follows names the files and the eval)
      assert.match(table(a.out), /over \d+ queries/);
      assert.equal(table(a.out), table(b.out), `compare -m ${m}: same table`);
    }
  });
});
