/**
 * `npm test` (scripts/run-tests.mjs) on a folder of small test files: the final summary lists every failed test
 * and every skipped one with its reason, the last line is `N passed, N failed, N skipped`, the exit code says
 * whether anything failed, and promptfoo's state goes to a temporary folder outside the repository that is
 * removed afterwards.
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
