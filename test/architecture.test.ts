/**
 * The house's one rule, checked: imports run down the floors of docs/architecture.md, never up, and no file imports
 * itself through others (no circle). Static and dynamic imports alike.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

/** The floors, top to bottom (docs/architecture.md). A room may import rooms on lower floors only. */
const FLOORS: readonly (readonly string[])[] = [
  ['cli'],
  ['report'],
  ['history'],
  ['gate'],
  ['review'],
  ['results', 'judge'],
  ['judgments'],
  ['golden', 'search'],
  ['ingest', 'rerank'],
  ['metrics', 'db', 'embeddings', 'llm'],
  ['util', 'errors', 'version'],
];
const floorOf = new Map(FLOORS.flatMap((rooms, i) => rooms.map((r) => [r, FLOORS.length - i] as const)));
/** The bottom floor's small files (errors, version, util) may use each other. */
const BOTTOM = 1;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => resolve(dirname(file), m[1]!));
}
const roomOf = (file: string) => relative(src, file).split(sep)[0]!.replace(/\.(ts|mts|mjs)$/, '');

const files = walk(src);

test('every room of src/ is on a floor', () => {
  const rooms = new Set(files.map(roomOf));
  const unknown = [...rooms].filter((r) => !floorOf.has(r));
  assert.deepEqual(unknown, [], `rooms without a floor in test/architecture.test.ts and docs/architecture.md: ${unknown.join(', ')}`);
});

test('imports in src/ run down the floors, never up or sideways', () => {
  const bad: string[] = [];
  for (const f of files) {
    const a = roomOf(f);
    for (const t of importsOf(f)) {
      if (!t.startsWith(src + sep)) {
        bad.push(`${relative(root, f)} imports ${relative(root, t)}, outside src/`);
        continue;
      }
      const b = roomOf(t);
      if (a === b) continue;
      const fa = floorOf.get(a)!;
      const fb = floorOf.get(b)!;
      if (fb < fa || (fa === BOTTOM && fb === BOTTOM)) continue;
      bad.push(`${relative(root, f)} (${a}) imports ${relative(root, t)} (${b})`);
    }
  }
  assert.deepEqual(bad, []);
});

test('no circle of imports between files of src/', () => {
  const graph = new Map(files.map((f) => [f, importsOf(f).filter((t) => t.startsWith(src + sep))]));
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const circles: string[] = [];
  const visit = (f: string) => {
    state.set(f, 1);
    stack.push(f);
    for (const t of graph.get(f) ?? []) {
      if (!graph.has(t)) continue;
      if (state.get(t) === 1) circles.push([...stack.slice(stack.indexOf(t)), t].map((x) => relative(root, x)).join(' -> '));
      else if (!state.get(t)) visit(t);
    }
    stack.pop();
    state.set(f, 2);
  };
  for (const f of files) if (!state.get(f)) visit(f);
  assert.deepEqual(circles, []);
});

test('src/metrics stays pure: no file system, network or process access', () => {
  const io = /from ['"]node:(fs|fs\/promises|net|http|https|child_process|worker_threads)['"]|\bprocess\.(env|argv|exit|stdout|stderr)/;
  const bad = files.filter((f) => roomOf(f) === 'metrics' && io.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
  assert.deepEqual(bad, []);
});

test('the promptfoo-facing adapters import src/, and src/ never imports them', () => {
  const adapters = ['providers', 'assertions', 'datasets'];
  const bad = files.filter((f) => importsOf(f).some((t) => adapters.some((a) => t.startsWith(join(root, a) + sep)))).map((f) => relative(root, f));
  assert.deepEqual(bad, []);
});
