#!/usr/bin/env node
// Compiles the TypeScript of src/, providers/, assertions/ and datasets/tests.ts to JavaScript in
// dist/ (same relative layout; .sql, .mjs and other non-TS files next to them are copied), so the
// `rankgate` binary starts without transpiling at run time. Runs in npm's `prepare` (npm ci) and,
// from bin/rankgate.js, whenever a source file is newer than the build.
//
// Atomic and safe when several processes build at once: each build goes to its own directory under
// .dist-builds/, then the `dist` symlink is swapped to it with one rename(2). Old builds are removed
// after 10 minutes (a process still running from one may lazily import from it).
import { transform } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync, copyFileSync, lstatSync, readlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { ROOT, sourceFiles, sourceStamp } from './dist-stamp.mjs';
export { ROOT, isCurrent, sourceFiles, sourceStamp } from './dist-stamp.mjs';

// './x.ts' / "../y/z.ts" string literals (static and dynamic imports, new URL(...), module maps) -> .js
const TS_SPEC = /(['"])(\.{1,2}\/[^'"\n]*?)\.ts\1/g;

export async function build(root = ROOT) {
  const stamp = sourceStamp(root);
  const buildsDir = join(root, '.dist-builds');
  mkdirSync(buildsDir, { recursive: true });
  const id = `${Date.now()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const out = join(buildsDir, id);
  for (const f of sourceFiles(root)) {
    const src = join(root, f);
    const isTs = f.endsWith('.ts') && !f.endsWith('.d.ts');
    const dest = join(out, isTs ? f.slice(0, -3) + '.js' : f);
    mkdirSync(dirname(dest), { recursive: true });
    if (isTs) {
      const code = readFileSync(src, 'utf8');
      const r = await transform(code, { loader: 'ts', format: 'esm', target: 'node20', sourcefile: src, sourcemap: 'inline' });
      writeFileSync(dest, r.code.replace(TS_SPEC, '$1$2.js$1'));
    } else if (f.endsWith('.mjs')) {
      writeFileSync(dest, readFileSync(src, 'utf8').replace(TS_SPEC, '$1$2.js$1'));
    } else copyFileSync(src, dest);
  }
  writeFileSync(join(out, '.stamp.json'), JSON.stringify(stamp));
  // swap the dist symlink atomically
  const link = join(root, 'dist');
  try {
    if (!lstatSync(link).isSymbolicLink()) rmSync(link, { recursive: true, force: true });
  } catch {
    /* no dist yet */
  }
  const tmpLink = join(root, `dist.link-${id}`);
  symlinkSync(relative(root, out), tmpLink);
  renameSync(tmpLink, link);
  // clean old builds
  let current = '';
  try {
    current = readlinkSync(link);
  } catch {
    /* raced */
  }
  for (const d of readdirSync(buildsDir)) {
    const p = join(buildsDir, d);
    if (relative(root, p) === current || p === out) continue;
    try {
      if (Date.now() - statSync(p).mtimeMs > 10 * 60_000) rmSync(p, { recursive: true, force: true });
    } catch {
      /* another process cleaned it */
    }
  }
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t = Date.now();
  const out = await build();
  console.error(`rankgate: built ${relative(ROOT, out)} -> dist in ${Date.now() - t} ms`);
}
