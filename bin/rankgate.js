#!/usr/bin/env node
// Entry point of the `rankgate` command. Runs the compiled JavaScript in dist/ (no TypeScript
// transpiling at start-up); when dist is missing or older than any source file it is rebuilt first
// (scripts/build.mjs: a few hundred ms, atomic). If the build fails, the sources run through tsx so
// the error shows where it is.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Node 22.1+: V8 keeps the compiled code of rankgate's modules between runs (in NODE_COMPILE_CACHE, else the system
// temp dir), so each command starts faster; NODE_DISABLE_COMPILE_CACHE=1 turns it off. Node 20 has no such cache.
module.enableCompileCache?.();

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let entry = join(root, 'dist', 'src', 'cli', 'index.js');
const stampCheck = join(root, 'scripts', 'dist-stamp.mjs');
if (existsSync(stampCheck)) {
  const { isCurrent } = await import(pathToFileURL(stampCheck).href);
  if (!isCurrent(root)) {
    try {
      const { build } = await import(pathToFileURL(join(root, 'scripts', 'build.mjs')).href);
      await build(root);
    } catch (e) {
      process.stderr.write(`rankgate: could not build dist (${String(e?.message ?? e).split('\n')[0]}); running the TypeScript sources\n`);
      entry = '';
    }
  }
}
let main;
if (entry && existsSync(entry)) {
  ({ main } = await import(pathToFileURL(entry).href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/index.ts'));
}
process.exitCode = await main(process.argv.slice(2));
