/**
 * The PGlite data-directory lock's generation files (src/db/lock.ts): a stale file with a number no rankgate writes
 * (leading zeros, past 2^53, 21 digits) is not read as the highest generation, so it cannot make every command fail
 * "too much contention"; the next holder removes it. (The race itself: test/reliability/lock-race.test.ts.)
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockDataDir, lockHolder, parseGeneration } from '../../src/db/lock.ts';

const base = mkdtempSync(join(tmpdir(), 'rankgate-lock-'));
after(() => rmSync(base, { recursive: true, force: true }));

test('parseGeneration: canonical decimals below 2^53 - 1 only', () => {
  assert.equal(parseGeneration('.rankgate.lock.1'), 1);
  assert.equal(parseGeneration('.rankgate.lock.0'), 0);
  assert.equal(parseGeneration('.rankgate.lock.9007199254740990'), 9007199254740990);
  for (const bad of ['00000000000000000000001', '01', '9007199254740991', '9007199254740993', '100000000000000000000', '1e3', '', '-1', '1.5']) {
    assert.equal(parseGeneration(`.rankgate.lock.${bad}`), undefined, bad);
  }
  assert.equal(parseGeneration('.rankgate.lock'), undefined);
  assert.equal(parseGeneration('.rankgate.lock.tmp-1-abcd'), undefined);
});

test('a stale lock file with a huge or non-canonical generation is stale: the lock is taken, the junk removed', () => {
  for (const junk of ['100000000000000000000', '9007199254740993', '00000000000000000000001']) {
    const dir = join(base, `d-${junk.length}-${junk.slice(-3)}`);
    mkdirSync(dir);
    // a record of a live process (this one, under another start time would be stale anyway): it must not count at all
    writeFileSync(join(dir, `.rankgate.lock.${junk}`), JSON.stringify({ pid: process.pid, start: 'x', command: 'junk' }));
    const release = lockDataDir(dir);
    assert.equal(lockHolder(dir)?.pid, process.pid, junk);
    assert.equal(existsSync(join(dir, `.rankgate.lock.${junk}`)), false, `${junk} removed by the new holder`);
    release();
    assert.equal(lockHolder(dir), undefined);
    assert.deepEqual(readdirSync(dir).filter((n) => n.startsWith('.rankgate.lock')), ['.rankgate.lock.2'], 'one generation left: the free record');
    const again = lockDataDir(dir);
    again();
  }
});
