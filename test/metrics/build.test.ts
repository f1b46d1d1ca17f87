// The compiled build (scripts/build.mjs -> dist/) that bin/rankgate.js runs: current after a build,
// stale when a source changes, same layout with non-TS assets copied, and the real CLI prints the
// same bytes from dist as the TypeScript sources compute in-process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { evaluateArgs } from '../../src/cli/trec-eval.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const builder = (await import(pathToFileURL(join(ROOT, 'scripts', 'build.mjs')).href)) as {
  build: (root?: string) => Promise<string>;
  isCurrent: (root?: string) => boolean;
  sourceFiles: (root?: string) => string[];
};

test('build: dist is current after a build, stale after a source edit, and mirrors the layout', async () => {
  const root = mkdtempSync(join(tmpdir(), 'rankgate-build-'));
  try {
    writeFileSync(join(root, 'package.json'), '{"name":"rankgate","type":"module"}');
    mkdirSync(join(root, 'src', 'x'), { recursive: true });
    writeFileSync(join(root, 'src', 'x', 'a.ts'), "import { b } from './b.ts';\nexport const a: number = b + 1;\nexport const m = './b.ts';\n");
    writeFileSync(join(root, 'src', 'x', 'b.ts'), 'export const b: number = 41;\n');
    writeFileSync(join(root, 'src', 'x', 'q.sql'), 'select 1;\n');
    assert.equal(builder.isCurrent(root), false, 'no dist yet');
    await builder.build(root);
    assert.equal(builder.isCurrent(root), true);
    assert.ok(existsSync(join(root, 'dist', 'src', 'x', 'q.sql')), 'the .sql asset is copied');
    const mod = (await import(pathToFileURL(join(root, 'dist', 'src', 'x', 'a.js')).href)) as { a: number; m: string };
    assert.equal(mod.a, 42);
    assert.equal(mod.m, './b.js', 'relative .ts specifiers become .js');
    const later = new Date(Date.now() + 5000);
    utimesSync(join(root, 'src', 'x', 'b.ts'), later, later);
    assert.equal(builder.isCurrent(root), false, 'an edited source makes dist stale');
    writeFileSync(join(root, 'src', 'x', 'c.ts'), 'export {};\n');
    await builder.build(root);
    assert.equal(builder.isCurrent(root), true);
    rmSync(join(root, 'src', 'x', 'c.ts'));
    assert.equal(builder.isCurrent(root), false, 'a deleted source makes dist stale');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('build: the repo builds, dist is current afterwards, and bin/rankgate.js (dist) prints what the sources compute', async () => {
  await builder.build(ROOT);
  assert.equal(builder.isCurrent(ROOT), true);
  for (const f of builder.sourceFiles(ROOT).filter((f) => f.endsWith('.ts'))) {
    assert.ok(existsSync(join(ROOT, 'dist', f.replace(/\.ts$/, '.js'))), `dist has ${f}`);
  }
  const up = join(ROOT, 'test', 'fixtures', 'trec_eval', 'upstream');
  const args = ['-q', '-m', 'all_trec', join(up, 'qrels.test'), join(up, 'results.test')];
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'trec-eval', ...args], { encoding: 'latin1' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, (evaluateArgs(args) as Buffer).toString('latin1'));
  assert.equal(r.stdout, readFileSync(join(up, 'out.test.aq'), 'latin1'));
});
