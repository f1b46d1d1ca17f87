/** Helpers of the harness tests: run the real promptfoo CLI and the rankgate CLI as child processes. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURE = join(ROOT, 'test', 'fixtures', 'harness');
export const PROMPTFOO_BIN = join(ROOT, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');

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

/**
 * A PGlite database holding the demo corpus (datasets/corpus) as the default eval's variant c300:use-lite, built ONCE
 * per machine (USE-lite embedding is the slowest thing the suite does) and copied into `dest` for each test that runs
 * the demo eval. Kept in the system temp dir, never in the repository, keyed by everything that changes the index
 * (corpus, migrations, ingest and embedder sources). Test files running side by side take turns: the first builds
 * under a lock directory, the others wait for it. Tests of the first-use ingest itself (default-config) do not use it.
 */
export async function demoIndexInto(dest: string): Promise<void> {
  const { createHash } = await import('node:crypto');
  const { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync } = await import('node:fs');
  const h = createHash('sha256');
  const hashDir = (d: string): void => {
    for (const f of readdirSync(d).sort()) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) hashDir(p);
      else h.update(p.slice(ROOT.length)).update(readFileSync(p));
    }
  };
  for (const d of ['datasets/corpus', 'src/db', 'src/ingest', 'src/embeddings']) hashDir(join(ROOT, d));
  const base = join(tmpdir(), 'rankgate-test-demo-index');
  const dir = join(base, `c300-use-lite-${h.digest('hex').slice(0, 12)}`);
  const lock = `${dir}.lock`;
  mkdirSync(base, { recursive: true });
  const deadline = Date.now() + 15 * 60_000;
  while (!existsSync(join(dir, 'PG_VERSION'))) {
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
      if (Date.now() > deadline) throw new Error(`waited 15 min for the demo index fixture at ${dir}`);
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    try {
      if (existsSync(join(dir, 'PG_VERSION'))) break;
      const building = `${dir}.building-${process.pid}`;
      rmSync(building, { recursive: true, force: true });
      const r = await runNode([join(ROOT, 'bin', 'rankgate.js'), 'ingest', '--db', building, '--corpus', join(ROOT, 'datasets', 'corpus'), '--chunk-size', '300', '--embedder', 'use-lite'], {
        env: { DATABASE_URL: undefined, RANKGATE_DATA_DIR: undefined },
        timeoutMs: 600_000,
      });
      if (r.code !== 0) throw new Error(`building the demo index fixture failed (exit ${r.code}):\n${r.stderr.slice(-2000)}`);
      renameSync(building, dir);
    } finally {
      if (mine) rmSync(lock, { recursive: true, force: true });
    }
  }
  cpSync(dir, dest, { recursive: true, filter: (p) => !/\.rankgate\.lock/.test(p) });
}
