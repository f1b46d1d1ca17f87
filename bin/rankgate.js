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
const code = await main(process.argv.slice(2));
process.exitCode = code;
// The command is done: its output is written (stdout and stderr are synchronous for files and pipes on POSIX) and its
// exit code is known. What can still hold the event loop is work abandoned at a deadline: promptfoo 0.121's chat
// providers never pass the caller's abort signal to their fetch, so a call to an endpoint that accepts and never
// answers keeps its socket and promptfoo's own request timer (REQUEST_TIMEOUT_MS, 300 s, then retries) alive long
// after rankgate gave up on it (issue 43 H1). Nothing can close that from outside; nothing of the command is left to
// wait for. So: exit normally when the loop drains, and at the latest half a second after the command returned.
const linger = setTimeout(() => {
  if (process.env.RANKGATE_DEBUG) {
    const open = process.getActiveResourcesInfo?.().filter((r) => r !== 'TTYWrap') ?? [];
    process.stderr.write(`rankgate: exiting with work still pending after the command ended (${open.join(', ') || 'none listed'})\n`);
  }
  process.exit(code);
}, 500);
linger.unref();
