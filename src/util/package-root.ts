/**
 * The repository root (the directory holding rankgate's package.json), found by walking up from a
 * module's URL. Unlike a fixed `'..', '..'` it gives the same answer whether the module runs from
 * src/ through tsx or compiled from dist/ (dist/src/..., see scripts/build.mjs).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        if ((JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === 'rankgate') return dir;
      } catch {
        /* not ours */
      }
    }
    const up = dirname(dir);
    if (up === dir) return join(dirname(fileURLToPath(moduleUrl)), '..', '..');
    dir = up;
  }
}
