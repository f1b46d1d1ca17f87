/**
 * Where the test suite's CPU goes: `npm test` is CPU-bound on a 2-core machine (its processes keep both cores ~95%
 * busy), so its wall time is its CPU time over the cores, and a faster suite means less CPU, not more parallelism.
 *
 *   node --import tsx bench/test-cpu.ts [--top 25] [-- RUN-TESTS ARGS...]
 *
 * Runs `node scripts/run-tests.mjs` (the README's `npm test`) with a small module preloaded into every Node process
 * of the run (NODE_OPTIONS=--import): at exit each process writes its own CPU time (user + system, all its threads:
 * process.cpuUsage) with its command line and its ancestors' process ids. Prints
 * - the run's wall time, the CPU time of all its processes (Linux: the runner's children's, from /proc) and the
 *   cores it kept busy;
 * - CPU by kind of process: test files, `promptfoo eval`, each `rankgate` command, other Node programs, with counts
 *   and the mean per process;
 * - CPU by test file, each file's child processes counted to it (found through the ancestors).
 * Processes that are not Node (Chromium, npm's shell) and Node processes whose tests clear NODE_OPTIONS (the npx runs
 * of test/cli/init and team-pr) are not recorded: they are the "not recorded" line. A server started before the run
 * (CI's Postgres) is not the run's child and is in neither figure.
 * Prints figures; asserts nothing. The preload changes nothing but writing one small file per process at exit.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseRunArgs } from './run-args.ts';

const ROOT = join(import.meta.dirname, '..');
const { top, pass } = parseRunArgs(process.argv.slice(2), 'test-cpu', 'bench/test-cpu.ts [--top N] [-- RUN-TESTS ARGS]', 25);

const tmp = mkdtempSync(join(tmpdir(), 'rankgate-test-cpu-'));
const records = join(tmp, 'records');
const hook = join(tmp, 'cpu-hook.mjs');
writeFileSync(
  hook,
  `import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
if (isMainThread) {
  const anc = [];
  try {
    let p = process.ppid;
    for (let i = 0; i < 16 && p > 1; i++) {
      anc.push(p);
      const st = readFileSync('/proc/' + p + '/stat', 'utf8');
      p = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
    }
  } catch {}
  process.on('exit', () => {
    const u = process.cpuUsage();
    try {
      mkdirSync(${JSON.stringify(records)}, { recursive: true });
      writeFileSync(${JSON.stringify(records)} + '/' + process.pid + '-' + Date.now() + '.json',
        JSON.stringify({ argv: process.argv.slice(1, 4), pid: process.pid, anc, cpu: (u.user + u.system) / 1e6 }));
    } catch {}
  });
}
`,
);

/** CPU seconds of this process's waited-for children (Linux /proc; undefined elsewhere). */
function childrenCpu(): number | undefined {
  try {
    const st = readFileSync('/proc/self/stat', 'utf8');
    const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
    // fields 16 and 17 (cutime, cstime) are the 14th and 15th after the state field; clock ticks of 1/100 s
    return (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return undefined;
  }
}

const t0 = Date.now();
const code = await new Promise<number>((res) => {
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'run-tests.mjs'), ...pass], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${hook}`].filter(Boolean).join(' ') },
  });
  child.on('close', (c) => res(c ?? 1));
});
const wall = (Date.now() - t0) / 1000;
const all = childrenCpu();

interface Rec {
  argv: string[];
  pid: number;
  anc: number[];
  cpu: number;
}
const recs: Rec[] = [];
try {
  for (const f of readdirSync(records)) {
    try {
      recs.push(JSON.parse(readFileSync(join(records, f), 'utf8')) as Rec);
    } catch {
      /* a process that died while writing */
    }
  }
} catch {
  /* none */
}
rmSync(tmp, { recursive: true, force: true });

const testFile = (r: Rec): string | undefined => {
  const a = r.argv.join(' ');
  if (a.includes('scripts/run-tests') || a.includes('scripts/test-pool')) return undefined;
  const m = /(\S+\.test\.ts)\b/.exec(a);
  return m ? relative(ROOT, m[1]!) : undefined;
};
const kind = (r: Rec): string => {
  const [script = '', cmd = ''] = r.argv;
  if (/promptfoo[/\\]dist[/\\]src[/\\](main|entrypoint)\.js$/.test(script)) return `promptfoo ${cmd}`;
  if (/bin[/\\]rankgate\.js$/.test(script)) return `rankgate ${/^[a-z-]+$/.test(cmd) ? cmd : '(other)'}`;
  if (testFile(r)) return 'test file (its own process)';
  if (/scripts[/\\](run-tests|test-pool)\.mjs$/.test(script)) return 'the runner';
  return `other: ${script.split(/[/\\]/).pop() || '?'}`;
};
const byPid = new Map(recs.map((r) => [r.pid, r]));
const ownerOf = (r: Rec): string | undefined => testFile(r) ?? r.anc.map((p) => byPid.get(p)).map((x) => (x ? testFile(x) : undefined)).find(Boolean);

const recorded = recs.reduce((a, r) => a + r.cpu, 0);
const s1 = (x: number) => x.toFixed(1);
console.log(`\n(run-tests exit ${code})`);
console.log(`\nwall ${s1(wall)} s; CPU of all its processes ${all === undefined ? '(not readable here)' : `${s1(all)} s, ${((100 * all) / wall).toFixed(0)}% of one core`}; recorded in ${recs.length} Node processes: ${s1(recorded)} s`);
if (all !== undefined) console.log(`not recorded (Chromium, npm and shells, Node run without NODE_OPTIONS; a server started before the run, such as CI's Postgres, is in neither figure): ${s1(all - recorded)} s`);

const kinds = new Map<string, { cpu: number; n: number }>();
for (const r of recs) {
  const k = kinds.get(kind(r)) ?? { cpu: 0, n: 0 };
  k.cpu += r.cpu;
  k.n++;
  kinds.set(kind(r), k);
}
console.log(`\nCPU by kind of process:\n`);
console.log('| process | count | CPU s | mean s | share of recorded |');
console.log('|---|---:|---:|---:|---:|');
for (const [k, v] of [...kinds.entries()].sort((a, b) => b[1].cpu - a[1].cpu).slice(0, top)) {
  console.log(`| ${k} | ${v.n} | ${s1(v.cpu)} | ${(v.cpu / v.n).toFixed(2)} | ${((100 * v.cpu) / (recorded || 1)).toFixed(1)}% |`);
}

const files = new Map<string, { cpu: number; parts: Map<string, number> }>();
for (const r of recs) {
  const f = ownerOf(r);
  if (!f) continue;
  const slot = files.get(f) ?? { cpu: 0, parts: new Map<string, number>() };
  slot.cpu += r.cpu;
  slot.parts.set(kind(r), (slot.parts.get(kind(r)) ?? 0) + r.cpu);
  files.set(f, slot);
}
console.log(`\nCPU by test file (with its child processes), the ${Math.min(top, files.size)} costliest of ${files.size}:\n`);
console.log('| file | CPU s | where |');
console.log('|---|---:|---|');
for (const [f, v] of [...files.entries()].sort((a, b) => b[1].cpu - a[1].cpu).slice(0, top)) {
  const where = [...v.parts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, x]) => `${k} ${s1(x)}`).join(', ');
  console.log(`| ${f} | ${s1(v.cpu)} | ${where} |`);
}
process.exitCode = code === 0 ? 0 : 1;
