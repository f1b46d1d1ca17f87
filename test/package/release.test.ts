/** The release check (scripts/release-check.mjs): a tag that does not name the version, or no changelog section, stops a release before it publishes. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT, tempDir } from '../harness/helpers.ts';
// @ts-expect-error plain JavaScript module without types
import { changelogSection, releaseProblems } from '../../scripts/release-check.mjs';

const LOG = '# Changelog\n\n## [Unreleased]\n\n## [1.2.0] - 2026-12-01\n\n### Added\n- x\n\n## [1.1.0] - 2026-11-01\n\n- y\n\n[1.2.0]: https://example/compare\n';

test('release-check: the tag names the version, the changelog has its section', () => {
  assert.equal(changelogSection(LOG, '1.2.0'), '### Added\n- x');
  assert.equal(changelogSection(LOG, '1.1.0'), '- y');
  assert.equal(changelogSection(LOG, '1.3.0'), null);
  assert.deepEqual(releaseProblems('v1.2.0', { version: '1.2.0' }, LOG), []);
  assert.deepEqual(releaseProblems('v1.2.1', { version: '1.2.0' }, LOG), ['tag v1.2.1 does not name package.json\'s version 1.2.0: bump the version (npm version 1.2.1 --no-git-tag-version) or tag v1.2.0']);
  assert.match(releaseProblems('v1.3.0', { version: '1.3.0' }, LOG)[0], /CHANGELOG\.md: no section "## \[1\.3\.0\] - YYYY-MM-DD"/);
  assert.match(releaseProblems('release-1', { version: '1.2.0' }, LOG)[0], /expected v<major>\.<minor>\.<patch>/);
  assert.match(releaseProblems('v1.2.0', { version: '1.2.0', private: true }, LOG)[0], /"private": true/);
});

test('release-check on this checkout: its own tag passes and writes the notes; another tag exits 2 in one line', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const dir = tempDir('release-check');
  try {
    const ok = spawnSync(process.execPath, [join(ROOT, 'scripts', 'release-check.mjs'), `v${pkg.version}`, '--notes', join(dir, 'notes.md')], { encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    assert.ok(readFileSync(join(dir, 'notes.md'), 'utf8').trim().length > 20);
    const bad = spawnSync(process.execPath, [join(ROOT, 'scripts', 'release-check.mjs'), 'v99.0.0'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    assert.match(bad.stderr, /^release-check: tag v99\.0\.0 does not name package\.json's version/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
