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

export function runNode(args: string[], opts: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
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
