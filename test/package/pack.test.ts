/** The published tarball holds exactly what runs, within its budget (scripts/pack-report.mjs); --version is package.json's. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
// @ts-expect-error plain JavaScript module without types
import { BUDGET, ROOT, budgetProblems, packReport } from '../../scripts/pack-report.mjs';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;

test('npm pack: what runs, no tests, fixtures, benches or CI scripts, within the budget', () => {
  const rep = packReport();
  console.log(`# npm pack: ${rep.filename} ${rep.packedBytes} bytes packed, ${rep.unpackedBytes} unpacked, ${rep.fileCount} files (budget ${BUDGET.packedBytes} / ${BUDGET.unpackedBytes} / ${BUDGET.files})`);
  assert.deepEqual(budgetProblems(rep), []);
  // the budget check itself can fail
  assert.ok(budgetProblems({ ...rep, files: [...rep.files, { path: 'test/x.test.ts', size: 1 }] }).includes('test/x.test.ts must not be in the tarball'));
});

test('package.json is publishable: no private flag, repository, provenance, engines, the bin', () => {
  assert.equal(pkg.private, undefined);
  for (const k of ['repository', 'homepage', 'bugs', 'keywords', 'license', 'files', 'engines', 'bin', 'peerDependencies']) assert.ok(pkg[k], `package.json has ${k}`);
  assert.deepEqual(pkg.publishConfig, { access: 'public', provenance: true });
  assert.equal(pkg.license, 'Apache-2.0');
});

test('CHANGELOG.md has a section for this version (Keep a Changelog)', () => {
  const log = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
  assert.match(log, new RegExp(`^## \\[${String(pkg.version).replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm'));
});
