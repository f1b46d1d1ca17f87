#!/usr/bin/env node
/**
 * npm test: every test/**\/*.test.ts through Node's test runner with tsx (Node 20 has no --test globs).
 *
 *   node scripts/run-tests.mjs [FILTER...] [--jobs N] [--reporter dot|spec|tap] [--root DIR]
 *
 * FILTER: keep test files whose path contains one of these substrings.
 * --jobs N (or RANKGATE_TEST_JOBS): test files run in N processes at once (default: cores + 1, at most 4).
 *   Every test isolates its state (temp dirs, port 0, its own Postgres schema or database, shared fixtures built
 *   under a per-process name and renamed into place), so files can run side by side; --jobs 1 runs them one by one.
 * --reporter: what is printed while the tests run (default dot: one character per test, failures in full at the end).
 * --root DIR: the folder searched for *.test.ts (default test/).
 *
 * The run never writes into the repository's own state: promptfoo's history and caches go to a temporary
 * PROMPTFOO_CONFIG_DIR removed at the end (whatever the environment says), and the tests keep their files in temp dirs.
 * Fixtures shared by several test files (the default eval's first use) are built once per run in RANKGATE_TEST_RUN_DIR,
 * a temp dir removed at the end.
 * At the end: every failed test with its file, every skipped test with its reason (each test of a skipped describe
 * block too, read from its file: scripts/skipped-blocks.mjs), and as the LAST line
 * `N passed, N failed, N skipped`. Exit 0 when nothing failed, 1 otherwise.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, dirname, relative, resolve } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { testsInSkippedBlock } from './skipped-blocks.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function usage(msg) {
  console.error(`run-tests: ${msg}\nusage: node scripts/run-tests.mjs [FILTER...] [--jobs N] [--reporter dot|spec|tap] [--root DIR]`);
  process.exit(2);
}

const filters = [];
// One more job than cores (at most 4): a file waiting on a timeout, a child's start or the server leaves its core to
// the extra job. On the 2-core CI machine, 3 jobs: 349 s against 372 s with 2 (same machine, back to back).
let jobs = Number(process.env.RANKGATE_TEST_JOBS ?? Math.min(availableParallelism() + 1, 4));
let reporter = 'dot';
let testRoot = join(root, 'test');
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const [flag, inline] = a.startsWith('--') ? a.split(/=(.*)/s) : [a];
  const value = () => inline ?? args[++i] ?? usage(`${flag} needs a value`);
  if (flag === '--jobs' || flag === '-j') jobs = Number(value());
  else if (flag === '--reporter') reporter = value();
  else if (flag === '--root') testRoot = resolve(value());
  else if (flag === '--help' || flag === '-h') {
    console.log('usage: node scripts/run-tests.mjs [FILTER...] [--jobs N] [--reporter dot|spec|tap] [--root DIR]');
    process.exit(0);
  } else if (a.startsWith('-')) usage(`unknown option '${flag}' (options: --jobs N, --reporter dot|spec|tap, --root DIR)`);
  else filters.push(a);
}
if (!Number.isInteger(jobs) || jobs < 1) usage(`--jobs ${jobs}: expected a whole number >= 1`);
if (!['dot', 'spec', 'tap'].includes(reporter)) usage(`--reporter ${reporter}: expected dot, spec or tap`);

function walk(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (name === 'fixtures' || name === 'node_modules') continue;
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}
let files = walk(testRoot, []);
if (filters.length) files = files.filter((f) => filters.some((o) => f.includes(o)));
if (!files.length) usage(`no test file matches ${filters.join(', ')}`);

// Longest files first (durations of the previous run, kept outside the repository): with several jobs the slow
// files then overlap each other instead of one starting last. Files never timed anywhere go first.
const durationsFile = join(tmpdir(), `rankgate-test-durations-${createHash('sha256').update(root).digest('hex').slice(0, 12)}.json`);
let durations = {};
try {
  durations = JSON.parse(readFileSync(durationsFile, 'utf8'));
} catch {
  /* first run */
}
// A new clone has no previous run: the durations measured on the CI machine kind (seconds, committed; an ordering
// hint only, refreshed by hand from a run's file above) order it, so the longest files do not start last.
let hint = {};
try {
  hint = JSON.parse(readFileSync(join(root, 'scripts', 'test-durations.json'), 'utf8'));
} catch {
  /* none */
}
const known = (f) => durations[relative(root, f)] ?? (hint[relative(root, f)] === undefined ? undefined : hint[relative(root, f)] * 1000);
files.sort((a, b) => (known(b) ?? Infinity) - (known(a) ?? Infinity) || a.localeCompare(b));

// Always a fresh one, even when the caller's environment names one (.ci/run, a user's own promptfoo setup):
// test evals must never land in a history someone opens with `promptfoo view`.
const ownConfigDir = mkdtempSync(join(tmpdir(), 'rankgate-test-promptfoo-'));
const work = mkdtempSync(join(tmpdir(), 'rankgate-test-run-'));
const eventsFile = join(work, 'events.jsonl');
const env = {
  ...process.env,
  PROMPTFOO_CONFIG_DIR: ownConfigDir,
  PROMPTFOO_DISABLE_TELEMETRY: '1',
  PROMPTFOO_DISABLE_UPDATE: '1',
  PROMPTFOO_DISABLE_SHARING: '1',
  PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
  PROMPTFOO_DISABLE_DEBUG_LOG: '1',
  // fixtures built once per run and shared by the test files (test/harness/helpers.ts: defaultEvalRun), removed at the end
  RANKGATE_TEST_RUN_DIR: work,
  // Node 22.1+: every process of the run (test files, promptfoo, rankgate, workers) keeps V8's compiled code of the
  // modules it loads here and reuses what an earlier process of the run compiled (promptfoo alone loads ~400 files at
  // each start). Node 20 does not read the variable. Removed with the run's directory at the end.
  NODE_COMPILE_CACHE: join(work, 'compile-cache'),
  // promptfoo's start-up telemetry call builds an undici agent whose experimental interceptor warns on every eval
  NODE_OPTIONS: [process.env.NODE_OPTIONS, '--disable-warning=ExperimentalWarning'].filter(Boolean).join(' '),
};

// a fresh run even when started from inside another node:test run (which marks its children with this variable)
delete env.NODE_TEST_CONTEXT;
// the tests set what they test: a pull request of the CI running them (GitHub's pull_request event names a base ref the
// gate would judge every test eval against), a base ref or a seal key of the caller's shell never leaks into them
for (const k of ['GITHUB_EVENT_NAME', 'GITHUB_BASE_REF', 'GITHUB_HEAD_REF', 'RANKGATE_BASE_REF', 'RANKGATE_SEAL_KEY']) delete env[k];

const t0 = Date.now();
const child = spawn(
  process.execPath,
  // node:test's run() in scripts/test-pool.mjs, not `node --test FILE...`: Node 20's CLI sorts the files by name,
  // which undid the longest-first order above
  ['--import', 'tsx', join(root, 'scripts', 'test-pool.mjs'), '--jobs', String(jobs), '--reporter', reporter, '--events', eventsFile, '--', ...files],
  { stdio: 'inherit', cwd: root, env },
);
const code = await new Promise((res) => child.on('close', (c, sig) => res(c ?? (sig ? 1 : 1))));

// ------------------------------------------------------------------------------------------------- summary
let events = [];
try {
  events = readFileSync(eventsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
} catch {
  /* no events: the runner itself failed */
}
const rel = (f) => (f ? relative(root, f) : '?');
const passed = [];
const failed = [];
const skipped = [];
// A test with subtests is counted through its subtests: events arrive children first, so a test or block at nesting n
// that follows unclaimed events at nesting n+1 (same file) is their parent. A skipped block (`describe(…, { skip })`)
// never runs its body, so its tests send no event: they are read from the file (scripts/skipped-blocks.mjs) and each
// counted as skipped with the block's reason.
const pendingChildren = new Map(); // `${file}\0${nesting}` -> { count, failed }
for (const e of events) {
  const key = (n) => `${e.file}\0${n}`;
  const kids = pendingChildren.get(key(e.nesting + 1));
  pendingChildren.delete(key(e.nesting + 1));
  const mine = pendingChildren.get(key(e.nesting)) ?? { count: 0, failed: 0 };
  mine.count++;
  if (e.type === 'fail') mine.failed++;
  pendingChildren.set(key(e.nesting), mine);
  const reason = e.todo !== undefined ? `todo: ${e.todo === true ? '' : e.todo}` : e.skip === true ? '(no reason given)' : e.skip;
  const rec = { name: e.name, file: rel(e.file), reason, error: e.error };
  if (e.suite && e.skip !== undefined) {
    const inside = testsInSkippedBlock(e.file, e.name, e.nesting);
    if (inside?.length) for (const t of inside) skipped.push({ ...rec, name: `${e.name} › ${t.name}${t.repeated ? ' (in a loop: one or more tests)' : ''}` });
    else skipped.push({ ...rec, name: `${e.name} (a whole block${inside ? ' without tests' : '; its tests could not be read from the file'})` });
    continue;
  }
  if (kids && kids.count) {
    if (e.type === 'fail' && !kids.failed) failed.push(rec); // failed after its subtests passed (a hook, a leak)
    continue;
  }
  if (e.suite) {
    if (e.type === 'fail') failed.push(rec); // a block that failed before any test of it ran (its body threw)
    continue;
  }
  if (e.skip !== undefined || e.todo !== undefined) skipped.push(rec);
  else if (e.type === 'fail') failed.push(rec);
  else passed.push(rec);
}
const lines = [''];
if (failed.length) {
  lines.push(`failed (${failed.length}):`);
  for (const f of failed) lines.push(`  ✖ ${f.file}: ${f.name}${f.error ? ` — ${f.error}` : ''}`);
}
if (skipped.length) {
  lines.push(`skipped (${skipped.length}):`);
  for (const s of skipped) lines.push(`  - ${s.file}: ${s.name} — ${s.reason}`);
}
if (code !== 0 && !failed.length) lines.push(`the test runner exited with code ${code} without a failed test (a file that did not load, or a crash): see above`);
lines.push(`${files.length} test files in ${((Date.now() - t0) / 1000).toFixed(1)} s with ${jobs} job${jobs === 1 ? '' : 's'}`);
lines.push(`${passed.length} passed, ${failed.length + (code !== 0 && !failed.length ? 1 : 0)} failed, ${skipped.length} skipped`);
console.log(lines.join('\n'));

// top-level tests' durations per file, for the order of the next run
const perFile = {};
for (const e of events) if (e.nesting === 0 && typeof e.ms === 'number') perFile[rel(e.file)] = (perFile[rel(e.file)] ?? 0) + e.ms;
try {
  if (testRoot === join(root, 'test')) writeFileSync(durationsFile, JSON.stringify({ ...durations, ...perFile }));
} catch {
  /* best effort */
}
// RANKGATE_TEST_EVENTS=FILE keeps the run's events (one JSON line per finished test, with its file and duration) for
// bench/test-times.ts, which prints the slowest files and tests from them
if (process.env.RANKGATE_TEST_EVENTS) {
  try {
    writeFileSync(process.env.RANKGATE_TEST_EVENTS, readFileSync(eventsFile, 'utf8') + JSON.stringify({ type: 'run', wallMs: Date.now() - t0, jobs, files: files.length }) + '\n');
  } catch (e) {
    console.error(`run-tests: could not keep the events in ${process.env.RANKGATE_TEST_EVENTS}: ${e.message}`);
  }
}
rmSync(work, { recursive: true, force: true });
rmSync(ownConfigDir, { recursive: true, force: true });
process.exit(code === 0 && !failed.length ? 0 : 1);
