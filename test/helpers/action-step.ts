/**
 * An action/ script run the way the GitHub runner runs a step: bash in `cwd`, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
 * as files, GITHUB_ACTION_PATH this checkout, rankgate on PATH through `cwd`'s node_modules/.bin. Returns the exit
 * code, stdout+stderr, the step's outputs (name=value lines) and its summary.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../harness/helpers.ts';

export interface StepRun {
  code: number | null;
  out: string;
  outputs: Record<string, string>;
  summary: string;
}

export function runActionScript(script: string, cwd: string, env: Record<string, string> = {}): Promise<StepRun> {
  const gh = join(cwd, '.gh');
  mkdirSync(gh, { recursive: true });
  const outFile = join(gh, 'output');
  const sumFile = join(gh, 'summary');
  writeFileSync(outFile, '');
  writeFileSync(sumFile, '');
  return new Promise((resolve) => {
    const child = spawn('bash', [join(ROOT, 'action', script)], {
      cwd,
      env: {
        PATH: `${join(cwd, 'node_modules', '.bin')}:${process.env.PATH}`,
        HOME: process.env.HOME,
        GITHUB_OUTPUT: outFile,
        GITHUB_STEP_SUMMARY: sumFile,
        GITHUB_ACTION_PATH: ROOT,
        PROMPTFOO_CONFIG_DIR: join(cwd, '.pf'),
        NO_COLOR: '1',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => {
      const outputs: Record<string, string> = {};
      for (const l of readFileSync(outFile, 'utf8').split('\n')) if (l.includes('=')) outputs[l.slice(0, l.indexOf('='))] = l.slice(l.indexOf('=') + 1);
      resolve({ code, out, outputs, summary: readFileSync(sumFile, 'utf8') });
    });
  });
}
