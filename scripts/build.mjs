#!/usr/bin/env node
// Compiles the TypeScript of src/, providers/, assertions/ and datasets/tests.ts to JavaScript in
// dist/ (same relative layout; .sql, .mjs and other non-TS files next to them are copied), so the
// `rankgate` binary starts without transpiling at run time. Runs in npm's `prepare` (npm ci) and,
// from bin/rankgate.js, whenever a source file is newer than the build.
//
// Safe when several processes build at once: each build goes to its own directory under .dist-builds/
// and is then renamed into place as dist/ (the previous dist is moved aside first and deleted).
import { transform } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
      const r = await transform(code, { loader: 'ts', format: 'esm', target: 'node20', sourcefile: relative(dirname(dest), src), sourcemap: false });
      writeFileSync(dest, r.code.replace(TS_SPEC, '$1$2.js$1'));
    } else if (f.endsWith('.mjs')) {
      writeFileSync(dest, readFileSync(src, 'utf8').replace(TS_SPEC, '$1$2.js$1'));
    } else copyFileSync(src, dest);
  }
  writeFileSync(join(out, '.stamp.json'), JSON.stringify(stamp));
  // install: move the current dist aside and this build in its place (two renames; a real directory,
  // so npm pack includes it). If another process installed its build in between, keep that one.
  const dist = join(root, 'dist');
  const old = join(buildsDir, `old-${id}`);
  try {
    renameSync(dist, old);
  } catch (e) {
    if (e.code !== 'ENOENT') throw e;
  }
  try {
    renameSync(out, dist);
  } catch (e) {
    if (e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e;
    rmSync(out, { recursive: true, force: true });
  }
  // clean up: the old build and any stale builds (processes import from dist/, never from here)
  for (const d of readdirSync(buildsDir)) {
    const p = join(buildsDir, d);
    if (p === out) continue;
    try {
      if (d.startsWith('old-') || Date.now() - statSync(p).mtimeMs > 10 * 60_000) rmSync(p, { recursive: true, force: true });
    } catch {
      /* another process cleaned it */
    }
  }
  if (!existsSync(join(dist, '.stamp.json'))) throw new Error('dist was not installed');
  return dist;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t = Date.now();
  const out = await build();
  console.error(`rankgate: built ${relative(ROOT, out)} in ${Date.now() - t} ms`);
}
