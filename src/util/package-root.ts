/**
 * The repository root (the directory holding rankgate's package.json), found by walking up from a
 * module's URL. Unlike a fixed `'..', '..'` it gives the same answer whether the module runs from
 * src/ through tsx or compiled from dist/ (dist/src/..., see scripts/build.mjs).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(moduleUrl: string): string {
  return packageDirNamed(dirname(fileURLToPath(moduleUrl)), 'rankgate') ?? join(dirname(fileURLToPath(moduleUrl)), '..', '..');
}

/**
 * The nearest folder at or above `from` whose package.json is package `name`'s, null when none; `orPath` also accepts
 * a folder whose path matches it when its package.json cannot be read (for a broken install to be named, not skipped).
 */
export function packageDirNamed(from: string, name: string, orPath?: RegExp): string | null {
  let dir = from;
  for (;;) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        if ((JSON.parse(readFileSync(pj, 'utf8')) as { name?: unknown }).name === name) return dir;
      } catch {
        if (orPath?.test(dir)) return dir;
      }
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}
