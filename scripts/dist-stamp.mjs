// Is dist/ current? Kept apart from scripts/build.mjs so bin/rankgate.js can check without loading esbuild.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TREES = ['src', 'providers', 'assertions'];
const SINGLE = ['datasets/tests.ts'];

/** Source files of the build, repo-relative, sorted. */
export function sourceFiles(root = ROOT) {
  const out = [];
  const walk = (dir) => {
    let names;
    try {
      names = readdirSync(root + '/' + dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of names) {
      const p = `${dir}/${d.name}`;
      if (d.isDirectory()) walk(p);
      else if (d.isFile()) out.push(p);
    }
  };
  for (const t of TREES) walk(t);
  for (const f of SINGLE) {
    try {
      if (statSync(join(root, f)).isFile()) out.push(f);
    } catch {
      /* absent */
    }
  }
  return out.sort();
}

/** Fingerprint of the sources: file count and newest mtime (a new, deleted or edited file changes it). */
export function sourceStamp(root = ROOT) {
  const files = sourceFiles(root);
  let newest = 0;
  const base = root.endsWith('/') ? root : root + '/';
  for (const f of files) newest = Math.max(newest, statSync(base + f).mtimeMs);
  return { count: files.length, newest };
}

/** True when dist exists and was built from the current sources. */
export function isCurrent(root = ROOT) {
  try {
    const stamp = JSON.parse(readFileSync(join(root, 'dist', '.stamp.json'), 'utf8'));
    const now = sourceStamp(root);
    return stamp.count === now.count && stamp.newest >= now.newest;
  } catch {
    return false;
  }
}

