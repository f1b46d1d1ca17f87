/**
 * `npm test` (scripts/run-tests.mjs) on a folder of small test files: the final summary lists every failed test
 * and every skipped one with its reason, the last line is `N passed, N failed, N skipped`, the exit code says
 * whether anything failed, and promptfoo's state goes to a temporary folder outside the repository that is
 * removed afterwards. Tests inside a skipped `describe` block (whose body Node never runs) are counted one by one,
 * with the block's reason.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { removeDir, run, tempDir, ROOT } from './helpers.ts';

const RUNNER = join(ROOT, 'scripts', 'run-tests.mjs');

test('summary: failures, skips with their reasons, and the plain count line last', async () => {
  const dir = tempDir('runner');
  try {
    const tests = join(dir, 'tests');
    mkdirSync(join(tests, 'sub'), { recursive: true });
    const seen = join(dir, 'config-dir.txt');
    writeFileSync(
      join(tests, 'a.test.ts'),
      `import { test } from 'node:test';
import { writeFileSync } from 'node:fs';
test('passes', () => { writeFileSync(${JSON.stringify(seen)}, process.env.PROMPTFOO_CONFIG_DIR ?? ''); });
test('skips', { skip: 'no Postgres: set RANKGATE_TEST_DATABASE_URL' }, () => {});
test('parent', async (t) => {
  await t.test('child passes', () => {});
  await t.test('child skips', (c) => c.skip('no Chromium at RANKGATE_CHROMIUM'));
});
`,
    );
    writeFileSync(join(tests, 'sub', 'b.test.ts'), `import { test } from 'node:test';\ntest('fails', () => { throw new Error('expected 2, got 1'); });\n`);
    // a config dir inside the repository in the caller's environment (as .ci/run exports) is not used
    const env = { PROMPTFOO_CONFIG_DIR: join(ROOT, '.promptfoo'), RANKGATE_TEST_JOBS: undefined };
    const r = await run(process.execPath, [RUNNER, '--root', tests, '--jobs', '2'], { env, timeoutMs: 120_000 });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.at(-1), '2 passed, 1 failed, 2 skipped');
    assert.match(r.stdout, /failed \(1\):\n {2}✖ .*sub\/b\.test\.ts: fails — .*expected 2, got 1/);
    assert.match(r.stdout, /skipped \(2\):\n {2}- .*a\.test\.ts: skips — no Postgres: set RANKGATE_TEST_DATABASE_URL\n {2}- .*a\.test\.ts: child skips — no Chromium at RANKGATE_CHROMIUM/);
    // promptfoo's state: a temporary folder outside the repository, gone after the run
    const { readFileSync } = await import('node:fs');
    const cfg = readFileSync(seen, 'utf8');
    assert.ok(cfg.startsWith(tmpdir()), `PROMPTFOO_CONFIG_DIR ${cfg} is a temp dir`);
    assert.ok(!cfg.startsWith(ROOT), 'not inside the repository');
    assert.ok(!existsSync(cfg), 'removed after the run');

    // all green: exit 0, and a filter keeps only matching files
    const ok = await run(process.execPath, [RUNNER, '--root', tests, 'a.test'], { env, timeoutMs: 120_000 });
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.equal(ok.stdout.trimEnd().split('\n').at(-1), '2 passed, 0 failed, 2 skipped');

    const bad = await run(process.execPath, [RUNNER, '--jbos', '2'], { env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown option '--jbos'/);
  } finally {
    removeDir(dir);
  }
});

test('a skipped describe block counts each of its tests as skipped, with the reason of the block', async () => {
  const dir = tempDir('runner-blocks');
  try {
    writeFileSync(
      join(dir, 'blocks.test.ts'),
      `import { after, describe, it, test } from 'node:test';
import { writeFileSync } from 'node:fs';
describe('in Chromium', { skip: 'needs /usr/bin/chromium' }, () => {
  writeFileSync(${JSON.stringify(join(dir, 'body-ran'))}, '');
  it('report', () => {});
  it('view', () => {});
  describe('deeper', () => { it('cell', () => {}); });
  after(() => {});
});
describe.skip('no reason', () => { it('lonely', () => {}); });
describe('live', () => {
  it('runs', () => {});
  describe('on a server', { skip: 'no Postgres' }, () => {
    for (const engine of ['pglite', 'postgres']) it(\`search on \${engine}\`, () => {});
  });
});
test('after the blocks', () => {});
`,
    );
    const r = await run(process.execPath, [RUNNER, '--root', dir, '--jobs', '1'], { env: { RANKGATE_TEST_JOBS: undefined }, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    // 2 passed: 'runs' and the top-level test after the blocks (once miscounted as the blocks' parent)
    assert.equal(r.stdout.trimEnd().split('\n').at(-1), '2 passed, 0 failed, 5 skipped');
    assert.match(r.stdout, /blocks\.test\.ts: in Chromium › report — needs \/usr\/bin\/chromium\n/);
    assert.match(r.stdout, /blocks\.test\.ts: in Chromium › view — needs \/usr\/bin\/chromium\n/);
    assert.match(r.stdout, /blocks\.test\.ts: in Chromium › deeper › cell — needs \/usr\/bin\/chromium\n/);
    assert.match(r.stdout, /blocks\.test\.ts: no reason › lonely — \(no reason given\)\n/);
    assert.match(r.stdout, /blocks\.test\.ts: on a server › search on \$\{engine\} \(in a loop: one or more tests\) — no Postgres\n/);
    assert.ok(!existsSync(join(dir, 'body-ran')), 'the skipped block body is read, never run');
  } finally {
    removeDir(dir);
  }
});
