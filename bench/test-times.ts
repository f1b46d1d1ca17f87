/**
 * Where the test suite's time goes: the slowest test files and tests, with their share of the run.
 *
 *   node --import tsx bench/test-times.ts [--top 20] [-- RUN-TESTS ARGS...]   runs `node scripts/run-tests.mjs` (the
 *                                                                            README's `npm test`) and reads its events
 *   node --import tsx bench/test-times.ts --events FILE [--top 20]           reads a run kept with RANKGATE_TEST_EVENTS=FILE
 *
 * A file's time is the sum of its top-level tests' and blocks' durations as node:test reports them (a block's duration
 * includes its before/after hooks); a test file's process start and module loading (~1 s with tsx) are not in it.
 * "share" is the file's part of the sum over all files (what running it costs the run in core-seconds); "of wall" is
 * that time over the run's wall time × jobs (the files run side by side). Prints figures; asserts nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseRunArgs } from './run-args.ts';

const ROOT = join(import.meta.dirname, '..');
const { top, flags, pass } = parseRunArgs(process.argv.slice(2), 'test-times', 'bench/test-times.ts [--top N] [--events FILE] [-- RUN-TESTS ARGS]', 20, ['events']);
let eventsFile = flags.events;

let tmp: string | undefined;
if (!eventsFile) {
  tmp = mkdtempSync(join(tmpdir(), 'rankgate-test-times-'));
  eventsFile = join(tmp, 'events.jsonl');
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'run-tests.mjs'), ...pass], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, RANKGATE_TEST_EVENTS: eventsFile },
  });
  console.log(`\n(run-tests exit ${r.status})`);
}

interface Ev {
  type: string;
  name?: string;
  file?: string;
  nesting?: number;
  ms?: number;
  suite?: boolean;
  wallMs?: number;
  jobs?: number;
  files?: number;
}
let events: Ev[];
try {
  events = readFileSync(eventsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Ev);
} catch (e) {
  console.error(`test-times: cannot read the events in ${eventsFile}: ${(e as Error).message}`);
  process.exit(2);
}
if (tmp) rmSync(tmp, { recursive: true, force: true });

const run = events.find((e) => e.type === 'run');
// a run kept in another checkout (a clean clone) names its files from its own root: shown from test/ as here
const rel = (f?: string) => {
  if (!f) return '?';
  const r = relative(ROOT, f);
  const i = r.startsWith('..') ? r.lastIndexOf('/test/') : -1;
  return i >= 0 ? r.slice(i + 1) : r;
};
const perFile = new Map<string, { ms: number; tests: number }>();
const tests: { file: string; name: string; ms: number }[] = [];
for (const e of events) {
  if (e.type === 'run' || typeof e.ms !== 'number') continue;
  const f = rel(e.file);
  const slot = perFile.get(f) ?? { ms: 0, tests: 0 };
  if (e.nesting === 0) slot.ms += e.ms;
  if (!e.suite) {
    slot.tests++;
    tests.push({ file: f, name: e.name ?? '?', ms: e.ms });
  }
  perFile.set(f, slot);
}
const total = [...perFile.values()].reduce((a, s) => a + s.ms, 0);
const wallCores = run?.wallMs && run.jobs ? run.wallMs * run.jobs : undefined;
const s = (ms: number) => (ms / 1000).toFixed(1);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

console.log(
  `\n${perFile.size} files, ${tests.length} tests, ${s(total)} s of test time` +
    (run?.wallMs ? ` in ${s(run.wallMs)} s wall with ${run.jobs} job${run.jobs === 1 ? '' : 's'}` : ' (wall time not recorded)'),
);
console.log(`\nslowest ${Math.min(top, perFile.size)} files:\n`);
console.log(`| file | tests | seconds | share | of wall |`);
console.log(`|---|---:|---:|---:|---:|`);
const files = [...perFile.entries()].sort((a, b) => b[1].ms - a[1].ms);
for (const [f, v] of files.slice(0, top)) {
  console.log(`| ${f} | ${v.tests} | ${s(v.ms)} | ${pct(v.ms / (total || 1))} | ${wallCores ? pct(v.ms / wallCores) : '–'} |`);
}
const topShare = files.slice(0, top).reduce((a, [, v]) => a + v.ms, 0) / (total || 1);
console.log(`\nthe ${Math.min(top, files.length)} slowest files: ${pct(topShare)} of the test time`);
console.log(`\nslowest ${Math.min(top, tests.length)} tests:\n`);
console.log(`| test | file | seconds |`);
console.log(`|---|---|---:|`);
for (const t of tests.sort((a, b) => b.ms - a.ms).slice(0, top)) console.log(`| ${t.name.replaceAll('|', '\\|').slice(0, 110)} | ${t.file} | ${s(t.ms)} |`);
