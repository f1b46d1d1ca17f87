/**
 * `rankgate trec-eval` against trec_eval itself: CPU time and peak RSS, side by side in one run.
 *
 *   TREC_EVAL_BIN=/path/to/trec_eval node --import tsx bench/trec-eval.ts [--queries 5000] [--docs 1000]
 *        [--judged 50] [--repeat 3] [--keep DIR]
 *
 * Data: deterministic synthetic qrels (`--judged` judgments per query, grades 0..3, ~30% relevant)
 * and a run of `--queries` x `--docs` lines (scores descending with ~5% ties, some judged docs
 * retrieved), written to a temp dir. Both programs run `-q -m all_trec QRELS RUN` `--repeat` times,
 * alternating; reported are the medians of CPU time (user+sys) and peak RSS (GNU time's %M), their
 * ratios (target <= 1.5x) and whether the outputs are byte-identical. A small case (300 x 100) is
 * timed wall-clock for rankgate alone (target < 0.25 s): the `rankgate` binary runs compiled
 * JavaScript from dist/ (scripts/build.mjs), so start-up does not transpile TypeScript.
 * trec_eval is built from usnistgov/trec_eval with `make` (never committed); without TREC_EVAL_BIN
 * the bench says so and reports rankgate's own figures only.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { mulberry32 as rng } from '../src/metrics/significance.ts';

const { values } = parseArgs({
  options: {
    queries: { type: 'string', default: '5000' },
    docs: { type: 'string', default: '1000' },
    judged: { type: 'string', default: '50' },
    repeat: { type: 'string', default: '3' },
    keep: { type: 'string' },
  },
});
const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'rankgate.js');
const TREC = process.env.TREC_EVAL_BIN;
const GNU_TIME = '/usr/bin/time';

async function write(path: string, gen: (push: (s: string) => void) => void): Promise<void> {
  const ws = createWriteStream(path);
  let buf = '';
  gen((s) => {
    buf += s;
    if (buf.length > 1 << 20) {
      ws.write(buf);
      buf = '';
    }
  });
  ws.end(buf);
  await new Promise<void>((res, rej) => ws.on('finish', res).on('error', rej));
}

async function makeData(dir: string, nq: number, nd: number, nj: number, seed: number): Promise<{ qrels: string; run: string }> {
  const r = rng(seed);
  const qrels = join(dir, `qrels.${nq}x${nd}`);
  const run = join(dir, `run.${nq}x${nd}`);
  await write(qrels, (push) => {
    for (let q = 0; q < nq; q++) {
      for (let j = 0; j < nj; j++) {
        const doc = Math.floor(r() * nd * 2);
        const g = r() < 0.7 ? 0 : 1 + Math.floor(r() * 3);
        push(`${1000 + q} 0 DOC-${String(doc).padStart(7, '0')}-${j} ${g}\n`);
      }
    }
  });
  const r2 = rng(seed + 1);
  await write(run, (push) => {
    for (let q = 0; q < nq; q++) {
      let score = 50;
      for (let d = 0; d < nd; d++) {
        // a judged doc now and then (same naming as the qrels), else an unjudged one
        const doc = r2() < 0.03 ? `DOC-${String(Math.floor(r2() * nd * 2)).padStart(7, '0')}-${Math.floor(r2() * nj)}` : `DOC-${String(d).padStart(7, '0')}-x`;
        if (r2() > 0.05) score -= r2() * 0.05;
        push(`${1000 + q} Q0 ${doc}-${d} ${d + 1} ${score.toFixed(5)} bench\n`);
      }
    }
  });
  return { qrels, run };
}

interface Measure {
  cpu: number;
  rssMb: number;
  wall: number;
  out: string;
  ok: boolean;
}

function timed(cmd: string[]): Measure {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(GNU_TIME, ['-f', '%U %S %M', ...cmd], { encoding: 'latin1', maxBuffer: 1 << 30 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  const last = r.stderr.trim().split('\n').pop() ?? '';
  const [u, s, m] = last.split(' ').map(Number) as [number, number, number];
  return { cpu: u + s, rssMb: m / 1024, wall, out: r.stdout, ok: r.status === 0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  if (!existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} (GNU time) is needed to read peak RSS`);
  const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'rankgate-bench-trec-'));
  const nq = Number(values.queries);
  const nd = Number(values.docs);
  const nj = Number(values.judged);
  const rep = Number(values.repeat);
  try {
    // make sure dist is current before timing (bin rebuilds it otherwise, once)
    spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'ignore' });
    const small = await makeData(dir, 300, 100, 20, 7);
    const smallRuns = Array.from({ length: 5 }, () => timed([process.execPath, BIN, 'trec-eval', '-q', '-m', 'all_trec', small.qrels, small.run]));
    console.log(`small case 300 x 100, -q -m all_trec: rankgate wall median ${median(smallRuns.map((m) => m.wall)).toFixed(3)} s (target < 0.25 s), CPU ${median(smallRuns.map((m) => m.cpu)).toFixed(2)} s`);
    if (TREC) {
      const t = timed([TREC, '-q', '-m', 'all_trec', small.qrels, small.run]);
      console.log(`  trec_eval wall ${t.wall.toFixed(3)} s; outputs identical: ${t.out === smallRuns[0]!.out}`);
    }
    const big = await makeData(dir, nq, nd, nj, 11);
    const rg: Measure[] = [];
    const te: Measure[] = [];
    for (let i = 0; i < rep; i++) {
      if (TREC) te.push(timed([TREC, '-q', '-m', 'all_trec', big.qrels, big.run]));
      rg.push(timed([process.execPath, BIN, 'trec-eval', '-q', '-m', 'all_trec', big.qrels, big.run]));
      console.log(`  round ${i + 1}: rankgate ${rg[i]!.cpu.toFixed(2)} s CPU, ${rg[i]!.rssMb.toFixed(0)} MB` + (TREC ? `; trec_eval ${te[i]!.cpu.toFixed(2)} s CPU, ${te[i]!.rssMb.toFixed(0)} MB` : ''));
    }
    const rc = median(rg.map((m) => m.cpu));
    const rm = median(rg.map((m) => m.rssMb));
    console.log(`big case ${nq} x ${nd}, ${nj} judged/query, -q -m all_trec (medians of ${rep}):`);
    console.log(`  rankgate  CPU ${rc.toFixed(2)} s, peak RSS ${rm.toFixed(0)} MB`);
    if (!TREC) {
      console.log('  trec_eval: TREC_EVAL_BIN is not set, so no side-by-side ratios (build usnistgov/trec_eval with make and point TREC_EVAL_BIN at it)');
      return;
    }
    const tc = median(te.map((m) => m.cpu));
    const tm = median(te.map((m) => m.rssMb));
    console.log(`  trec_eval CPU ${tc.toFixed(2)} s, peak RSS ${tm.toFixed(0)} MB`);
    console.log(`  ratio CPU ${(rc / tc).toFixed(2)}x, RSS ${(rm / tm).toFixed(2)}x (targets <= 1.5x)`);
    console.log(`  outputs identical: ${rg.every((m) => m.ok && m.out === te[0]!.out)}`);
  } finally {
    if (!values.keep) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
