/** Helpers of the harness tests: run the real promptfoo CLI and the rankgate CLI as child processes. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURE = join(ROOT, 'test', 'fixtures', 'harness');
export const PROMPTFOO_BIN = join(ROOT, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');
/** The installed promptfoo's version (tests assert the behaviour of the release at hand: src/results/nowrite.ts). */
export const PROMPTFOO_VERSION: string = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'promptfoo', 'package.json'), 'utf8')).version;

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `rankgate-${prefix}-`));
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  timeoutMs?: number;
}

/** `node ARGS...` (this Node) with NO_COLOR, killed after timeoutMs (default 180 s). */
export function runNode(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return run(process.execPath, args, opts);
}

/** Run a command (no shell) with NO_COLOR; stdout and stderr collected; killed after timeoutMs (default 180 s). */
export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...opts.env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const t = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/**
 * `promptfoo eval -c CONFIG --output OUT --no-cache` with a private PROMPTFOO_CONFIG_DIR: the caller's (env), or a
 * temporary one removed when the run ends.
 */
export async function promptfooEval(config: string, out: string, env: Record<string, string | undefined> = {}, extra: string[] = []): Promise<RunResult> {
  const own = env.PROMPTFOO_CONFIG_DIR ? undefined : tempDir('pfcfg');
  try {
    return await runNode([PROMPTFOO_BIN, 'eval', '-c', config, '--output', out, '--no-cache', '--no-table', '--no-progress-bar', ...extra], {
      env: {
        ...(own ? { PROMPTFOO_CONFIG_DIR: own } : {}),
        PROMPTFOO_DISABLE_TELEMETRY: '1',
        PROMPTFOO_DISABLE_UPDATE: '1',
        PROMPTFOO_DISABLE_SHARING: '1',
        PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
        PROMPTFOO_DISABLE_DEBUG_LOG: '1',
        ...env,
      },
    });
  } finally {
    if (own) rmSync(own, { recursive: true, force: true });
  }
}

export function rankgate(args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  return runNode([join(ROOT, 'bin', 'rankgate.js'), ...args], { env });
}

export const close = (a: number, b: number, eps = 1e-4) => Math.abs(a - b) <= eps;

export interface DefaultEvalRun {
  /** exit code of the bare `promptfoo eval` */
  code: number;
  /** its stdout and stderr as one stream, in the order a terminal shows them */
  output: string;
  /** the --output results file */
  results: string;
  /** the PGlite directory its first use built: the demo corpus as the default variant c300:use-lite */
  db: string;
  /** the temp copy of the repository root it ran in, and its HOME */
  work: string;
  home: string;
  /** the repository's own .promptfoo, listed before and after the run (null: none) */
  historyBefore: string | null;
  historyAfter: string | null;
}

let ownRunDir: string | undefined;

/**
 * A fixture built ONCE per `npm test` and shared by the test files that read it: RANKGATE_TEST_RUN_DIR/NAME
 * (scripts/run-tests.mjs names the run directory, removed when the run ends; a file run on its own gets a temp dir
 * of its process). `build(dir)` fills a private directory and writes its meta.json LAST; the directory is then renamed
 * into place, so a reader never sees half a fixture. Test files running side by side take turns under a lock
 * directory: the first builds, the others wait (a lock older than 10 minutes is stale); a build that throws leaves
 * NAME.failed, and every later caller in the run fails with its message instead of building again. Never kept
 * between runs, never in the repository.
 */
export async function oncePerRun(name: string, build: (dir: string) => Promise<void>): Promise<string> {
  const { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } = await import('node:fs');
  let base = process.env.RANKGATE_TEST_RUN_DIR;
  if (!base) {
    if (!ownRunDir) {
      ownRunDir = tempDir('test-run');
      const dir = ownRunDir;
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    }
    base = ownRunDir;
  }
  const dir = join(base, name);
  const lock = `${dir}.lock`;
  const failed = `${dir}.failed`;
  const deadline = Date.now() + 15 * 60_000;
  while (!existsSync(join(dir, 'meta.json'))) {
    if (existsSync(failed)) throw new Error(readFileSync(failed, 'utf8'));
    let mine = false;
    try {
      mkdirSync(lock);
      mine = true;
    } catch {
      // another test file is building it (or died doing so: a lock older than 10 minutes is stale)
      try {
        if (Date.now() - statSync(lock).mtimeMs > 10 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        /* gone meanwhile */
      }
      if (Date.now() > deadline) throw new Error(`waited 15 min for the ${name} fixture at ${dir}`);
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    try {
      if (existsSync(join(dir, 'meta.json'))) break;
      const building = `${dir}.building-${process.pid}`;
      rmSync(building, { recursive: true, force: true });
      mkdirSync(building, { recursive: true });
      await build(building);
      if (!existsSync(join(building, 'meta.json'))) throw new Error(`the ${name} fixture wrote no meta.json`);
      renameSync(building, dir);
    } catch (e) {
      writeFileSync(failed, `the ${name} fixture could not be built: ${(e as Error).stack ?? String(e)}`);
      throw e;
    } finally {
      if (mine) rmSync(lock, { recursive: true, force: true });
    }
  }
  return dir;
}

/**
 * The README's first command as a newcomer runs it, ONCE per `npm test` (oncePerRun): a bare `promptfoo eval` in a
 * temp copy of the repository root (promptfooconfig.yaml and .env copied, everything else linked, so its promptfoo
 * history lands in that copy's .promptfoo), no PROMPTFOO_* or AWS_* variables (the committed .env supplies them),
 * HOME a temp dir, an empty RANKGATE_DATA_DIR: the demo corpus is ingested on first use (USE-lite embedding is the
 * slowest thing the suite does). The default-config test checks this run; the demo gate test and the view test start
 * from its results and a copy of the index it built, instead of embedding the corpus again.
 */
export async function defaultEvalRun(): Promise<DefaultEvalRun> {
  const { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync, copyFileSync, symlinkSync } = await import('node:fs');
  const dir = await oncePerRun('default-eval', async (building) => {
    const home = join(building, 'home');
    const work = join(building, 'repo');
    mkdirSync(home, { recursive: true });
    mkdirSync(work);
    for (const name of readdirSync(ROOT)) {
      if (name === '.promptfoo' || name === '.rankgate' || name === '.git' || name === 'test-output' || name === '.dist-builds') continue;
      if (name === 'promptfooconfig.yaml' || name === '.env') copyFileSync(join(ROOT, name), join(work, name));
      else symlinkSync(join(ROOT, name), join(work, name));
    }
    const env: Record<string, string | undefined> = { HOME: home, RANKGATE_DATA_DIR: join(building, 'db'), DATABASE_URL: undefined, RANKGATE_JUDGE: 'off' };
    for (const k of Object.keys(process.env)) if (k.startsWith('PROMPTFOO_') || k.startsWith('AWS_')) env[k] = undefined;
    const history = () => (existsSync(join(ROOT, '.promptfoo')) ? readdirSync(join(ROOT, '.promptfoo')).join(',') : null);
    const historyBefore = history();
    // stdout and stderr into one pipe, as a terminal shows them (what is printed last matters)
    const cmd = [process.execPath, PROMPTFOO_BIN, 'eval', '--output', join(building, 'results.json'), '--no-table', '--no-progress-bar'].map((a) => `'${a}'`).join(' ');
    const r = await run('sh', ['-c', `${cmd} 2>&1`], { env, cwd: work, timeoutMs: 600_000 });
    writeFileSync(join(building, 'meta.json'), JSON.stringify({ code: r.code, output: r.stdout, historyBefore, historyAfter: history() }));
  });
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as Omit<DefaultEvalRun, 'results' | 'db' | 'work' | 'home'>;
  return { ...meta, results: join(dir, 'results.json'), db: join(dir, 'db'), work: join(dir, 'repo'), home: join(dir, 'home') };
}

/** The harness fixture's plain eval (fixtureEvalRun): promptfoo's exit code and output, and where its files are. */
export interface FixtureEvalRun extends RunResult {
  /** the --output results file (results.json) and the afterAll hook's re-gate record beside it (results.json.rankgate.jsonl) */
  results: string;
  record: string;
}

/**
 * `promptfooEval(test/fixtures/harness/promptfooconfig.yaml, results.json)` with nothing else set (the default floors
 * fail it: exit 1), ONCE per `npm test` (oncePerRun): test/harness/eval.test.ts checks the run and its results, and
 * test/reliability/signals.test.ts interrupts `rankgate gate --update-baseline` on them. Read-only: a test that writes
 * beside the results (reports, baselines) takes a copy first (fixtureEvalInto).
 */
export async function fixtureEvalRun(): Promise<FixtureEvalRun> {
  const { readFileSync, writeFileSync } = await import('node:fs');
  const dir = await oncePerRun('fixture-eval', async (building) => {
    const r = await promptfooEval(join(FIXTURE, 'promptfooconfig.yaml'), join(building, 'results.json'));
    writeFileSync(join(building, 'meta.json'), JSON.stringify(r));
  });
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as RunResult;
  return { ...meta, results: join(dir, 'results.json'), record: join(dir, 'results.json.rankgate.jsonl') };
}

/**
 * The fixture eval's results file and its re-gate record copied into `destDir` (as results.json and
 * results.json.rankgate.jsonl: the record is found beside the results by name); returns the eval with the copies' paths.
 */
export async function fixtureEvalInto(destDir: string): Promise<FixtureEvalRun> {
  const { copyFileSync, existsSync } = await import('node:fs');
  const run = await fixtureEvalRun();
  const results = join(destDir, 'results.json');
  const record = join(destDir, 'results.json.rankgate.jsonl');
  if (existsSync(run.results)) copyFileSync(run.results, results);
  if (existsSync(run.record)) copyFileSync(run.record, record);
  return { ...run, results, record };
}

/** A copy of the index the default eval's first use built (defaultEvalRun) in `dest`, without its lock files. */
export async function demoIndexInto(dest: string): Promise<void> {
  const { cpSync } = await import('node:fs');
  const { db } = await defaultEvalRun();
  cpSync(db, dest, { recursive: true, filter: (p) => !/\.rankgate\.lock/.test(p) });
}
