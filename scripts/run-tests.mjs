#!/usr/bin/env node
// Runs every test/**/*.test.ts with Node's own test runner through tsx (Node 20 has no --test globs).
import { readdirSync, statSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv.slice(2);
function walk(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}
let files = walk(join(root, 'test'), []);
if (only.length) files = files.filter((f) => only.some((o) => f.includes(o)));
const env = {
  ...process.env,
  PROMPTFOO_CONFIG_DIR: process.env.PROMPTFOO_CONFIG_DIR ?? join(root, '.promptfoo'),
  PROMPTFOO_DISABLE_TELEMETRY: '1',
  PROMPTFOO_DISABLE_UPDATE: '1',
  PROMPTFOO_DISABLE_SHARING: '1',
  PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
  PROMPTFOO_DISABLE_DEBUG_LOG: '1',
};
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=1', ...files], {
  stdio: 'inherit',
  cwd: root,
  env,
});
process.exit(r.status ?? 1);
