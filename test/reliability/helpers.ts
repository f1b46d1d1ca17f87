/**
 * Helpers of the reliability tests: real `rankgate` / `promptfoo` child processes (killed when a test ends),
 * a PGlite index of test/fixtures/corpus/markdown (use-lite, c300) built once per machine and copied per
 * test, and throwaway databases on the test Postgres server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'rankgate.js');
export const PROMPTFOO_BIN = join(ROOT, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');
export const FIXTURES = join(ROOT, 'test', 'fixtures', 'reliability');
export const CORPUS = join(ROOT, 'test', 'fixtures', 'corpus', 'markdown');
export const SERVER_URL = process.env.RANKGATE_TEST_DATABASE_URL;
export const SERVER_SKIP = 'needs RANKGATE_TEST_DATABASE_URL (a Postgres server with pgvector; .ci/setup-postgres.sh starts one)';

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

const children = new Set<ChildProcess>();

/** Kill every child still running (call from `after`). */
export function killChildren(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `rankgate-rel-${prefix}-`));
}

export interface Spawned {
  child: ChildProcess;
  result: Promise<RunResult>;
  /** Resolves when stdout+stderr so far match `re` (rejects when the process ends first). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<void>;
  output(): string;
}

export function spawnNode(args: string[], opts: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {}): Spawned {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    PROMPTFOO_DISABLE_TELEMETRY: '1',
    PROMPTFOO_DISABLE_UPDATE: '1',
    PROMPTFOO_DISABLE_SHARING: '1',
    PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
    ...opts.env,
  };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const child = spawn(process.execPath, args, { cwd: opts.cwd ?? ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) if (w.re.test(stdout + stderr)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  child.stdout!.on('data', (d) => {
    stdout += d;
    check();
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
    check();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
  const result = new Promise<RunResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    result,
    output: () => stdout + stderr,
    waitFor(re, timeoutMs = 60_000) {
      return new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${re}; output so far:\n${(stdout + stderr).slice(-2000)}`)), timeoutMs);
        waiters.push({ re, resolve: () => (clearTimeout(t), resolve()) });
        check();
        void result.then((r) => {
          clearTimeout(t);
          if (!re.test(r.stdout + r.stderr)) reject(new Error(`process ended (code ${r.code}, signal ${r.signal}) before ${re}:\n${(r.stdout + r.stderr).slice(-2000)}`));
        });
      });
    },
  };
}

export function rankgate(args: string[], env: Record<string, string | undefined> = {}, timeoutMs?: number): Promise<RunResult> {
  return spawnNode([BIN, ...args], { env, timeoutMs }).result;
}

/** `promptfoo eval -c CONFIG --output OUT` with a private PROMPTFOO_CONFIG_DIR. */
export function promptfooEval(config: string, out: string, env: Record<string, string | undefined> = {}, extra: string[] = []): Spawned {
  const cfg = tempDir('pfcfg');
  const s = spawnNode([PROMPTFOO_BIN, 'eval', '-c', config, '--output', out, '--no-cache', '--no-table', '--no-progress-bar', ...extra], {
    env: { PROMPTFOO_CONFIG_DIR: cfg, ...env },
    timeoutMs: 180_000,
  });
  void s.result.then(
    () => rmSync(cfg, { recursive: true, force: true }),
    () => rmSync(cfg, { recursive: true, force: true }),
  );
  return s;
}

/** A stack trace printed by Node (`    at fn (file:line:col)`): user-facing errors must not have one. */
export const STACK = /^\s+at .+[:(].*\d+:\d+\)?$/m;

export function assertNoStack(text: string): void {
  if (STACK.test(text)) throw new Error(`expected no stack trace, got:\n${text.slice(-3000)}`);
}

/**
 * Path of a PGlite data directory holding the use-lite c300 index of test/fixtures/corpus/markdown, built once
 * (keyed by the corpus, migrations and pipeline sources) under the system temp dir (never in the repository). Copy it before use.
 */
export async function pgliteIndexFixture(): Promise<string> {
  const h = createHash('sha256');
  for (const dir of [CORPUS, join(ROOT, 'src', 'db', 'migrations')]) {
    for (const f of readdirSync(dir).sort()) h.update(f).update(readFileSync(join(dir, f)));
  }
  for (const f of ['src/ingest/pipeline.ts', 'src/ingest/chunker.ts', 'src/db/index.ts']) h.update(readFileSync(join(ROOT, f)));
  const base = join(tmpdir(), 'rankgate-test-reliability');
  const dir = join(base, `index-${h.digest('hex').slice(0, 12)}`);
  if (existsSync(join(dir, 'PG_VERSION'))) return dir;
  mkdirSync(base, { recursive: true });
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  const r = await rankgate(['ingest', '--db', building, '--corpus', CORPUS, '--chunk-size', '300'], {}, 170_000);
  if (r.code !== 0) throw new Error(`building the PGlite fixture failed (${r.code}):\n${r.stderr}`);
  try {
    renameSync(building, dir);
  } catch {
    rmSync(building, { recursive: true, force: true }); // another process won the race
  }
  return dir;
}

/** A private copy of the PGlite index fixture in a temp dir. */
export async function copyIndexFixture(prefix: string): Promise<string> {
  const src = await pgliteIndexFixture();
  const dst = join(tempDir(prefix), 'db');
  cpSync(src, dst, { recursive: true });
  return dst;
}

/** Create a throwaway database on the test server; returns its URL and a drop() function. */
export async function serverDatabase(name: string): Promise<{ url: string; admin: import('pg').Client; drop(): Promise<void> }> {
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  const db = `${name}_${process.pid}_${Date.now() % 100000}`;
  await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  await admin.query(`CREATE DATABASE ${db}`);
  const u = new URL(SERVER_URL!);
  u.pathname = `/${db}`;
  return {
    url: u.toString(),
    admin,
    async drop() {
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [db]).catch(() => {});
      await admin.query(`DROP DATABASE IF EXISTS ${db}`).catch(() => {});
      await admin.end().catch(() => {});
    },
  };
}

/** sha256 over a directory tree: every relative path (files, directories, symlinks) and every file's bytes. */
export function hashTree(dir: string): string {
  const h = createHash('sha256');
  const walk = (rel: string) => {
    const abs = join(dir, rel);
    for (const name of readdirSync(abs).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(dir, r));
      h.update(`${r}\0${st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : 'f'}\0`);
      if (st.isDirectory()) walk(r);
      else if (st.isFile()) h.update(readFileSync(join(dir, r)));
    }
  };
  walk('');
  return h.digest('hex');
}
