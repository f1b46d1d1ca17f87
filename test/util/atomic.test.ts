import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../src/util/atomic.ts';

test('writeFileAtomic replaces the content and leaves no temp file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-atomic-'));
  const p = join(dir, 'sub', 'report.json');
  writeFileAtomic(p, '{"a":1}');
  writeFileAtomic(p, '{"a":2}');
  assert.equal(readFileSync(p, 'utf8'), '{"a":2}');
  assert.deepEqual(readdirSync(join(dir, 'sub')), ['report.json']);
});

test('writeFileAtomic with a mode sets it exactly, whatever the umask and the file it replaces (a secret: 0600)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-atomic-'));
  const p = join(dir, 'review.key.json');
  writeFileSync(p, 'old', { mode: 0o666 });
  const old = process.umask(0);
  try {
    writeFileAtomic(p, 'secret', { mode: 0o600 });
    assert.equal(statSync(p).mode & 0o777, 0o600);
    process.umask(0o077);
    const page = join(dir, 'review.html');
    writeFileAtomic(page, 'page', { mode: 0o644 });
    assert.equal(statSync(page).mode & 0o777, 0o644, 'a stricter umask does not narrow an explicit mode');
  } finally {
    process.umask(old);
  }
  assert.deepEqual(readdirSync(dir).sort(), ['review.html', 'review.key.json']);
});

test('writeFileAtomic keeps the old file when the write fails', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-atomic-'));
  const p = join(dir, 'baseline.json');
  writeFileSync(p, 'old');
  // A directory where the parent should be makes the temp write fail.
  assert.throws(() => writeFileAtomic(join(p, 'x.json'), 'new'));
  assert.equal(readFileSync(p, 'utf8'), 'old');
});

test('writeLinesAtomic writes the lines in chunks, and keeps the old file when producing a line throws', async () => {
  const { writeLinesAtomic } = await import('../../src/util/atomic.ts');
  const dir = mkdtempSync(join(tmpdir(), 'rg-atomic-'));
  const p = join(dir, 'rows.jsonl');
  const big = 'x'.repeat(300_000);
  writeLinesAtomic(p, ['a', big, 'c', big, big, big]); // past the 1 MB write buffer
  assert.equal(readFileSync(p, 'utf8'), ['a', big, 'c', big, big, big].join('\n') + '\n');
  const failing = (function* () {
    yield 'new';
    throw new Error('row 2 cannot be produced');
  })();
  assert.throws(() => writeLinesAtomic(p, failing), /row 2 cannot be produced/);
  assert.equal(readFileSync(p, 'utf8').slice(0, 2), 'a\n', 'the old file stays');
  assert.deepEqual(readdirSync(dir), ['rows.jsonl'], 'no temp file left');
});
