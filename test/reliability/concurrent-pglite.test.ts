/**
 * Two processes on one embedded (PGlite) data directory: PGlite keeps the whole database in one process's
 * memory, so a second writer would silently fork it. The second process must get a clear "in use" error
 * naming the directory and the holder's PID (exit 2, no stack) while the first keeps working; after the
 * first stops, the lock is gone and the index is queryable; a lock left by a dead process is taken over.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { BIN, CORPUS, assertNoStack, copyIndexFixture, killChildren, rankgate, spawnNode } from './helpers.ts';
import { lockHolder, processStartTime } from '../../src/db/lock.ts';

after(killChildren);

const NO_SERVER = { DATABASE_URL: undefined };

async function post(url: string, query: string): Promise<{ status: number; body: { results?: unknown[] } }> {
  const r = await fetch(`${url}/api/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
  return { status: r.status, body: (await r.json()) as { results?: unknown[] } };
}

describe('one PGlite data directory, two processes', () => {
  it('serve holds it: ingest and search elsewhere get "in use" (exit 2); serve keeps answering; free after', async () => {
    const db = await copyIndexFixture('two-procs');
    try {
      const serve = spawnNode([BIN, 'serve', '--port', '0', '--db', db], { env: NO_SERVER });
      await serve.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 90_000);
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(serve.output())![1]!;
      const first = await post(url, 'still water');
      assert.equal(first.status, 200);
      assert.ok(first.body.results!.length > 0);

      for (const args of [
        ['ingest', '--db', db, '--corpus', CORPUS, '--chunk-size', '40'],
        ['search', '--db', db, 'still water'],
      ]) {
        const r = await rankgate(args, NO_SERVER);
        assert.equal(r.code, 2, `${args[0]}: ${r.stdout}\n${r.stderr}`);
        assert.match(r.stderr, /in use/);
        assert.ok(r.stderr.includes(db), r.stderr);
        assert.ok(r.stderr.includes(String(serve.child.pid)), `names the holder's PID ${serve.child.pid}: ${r.stderr}`);
        assertNoStack(r.stderr);
      }
      const still = await post(url, 'still water');
      assert.equal(still.status, 200);
      assert.deepEqual(still.body.results, first.body.results, 'the served index is unchanged');

      serve.child.kill('SIGTERM');
      const s = await serve.result;
      assert.equal(s.code, 0, s.stderr);
      assert.equal(lockHolder(db), undefined, 'the lock is released on shutdown');
      const ing = await rankgate(['ingest', '--db', db, '--corpus', CORPUS, '--chunk-size', '40', '--json'], NO_SERVER);
      assert.equal(ing.code, 0, ing.stderr);
      const q = await rankgate(['search', '--db', db, '--chunk-size', '300', '--json', 'still water'], NO_SERVER);
      assert.equal(q.code, 0, q.stderr);
      assert.ok(JSON.parse(q.stdout).hits.length > 0, 'the index stays queryable');
    } finally {
      rmSync(join(db, '..'), { recursive: true, force: true });
    }
  });

  it('a lock record left by a killed process (pid gone, or pid reused by another process) is taken over', async () => {
    const db = await copyIndexFixture('stale-gen-lock');
    try {
      const dead = spawnSync(process.execPath, ['-e', 'process.pid']).pid!;
      // the newest generation says: held by a process that is gone
      writeFileSync(join(db, '.rankgate.lock.7'), JSON.stringify({ pid: dead, start: '123', command: 'rankgate ingest', since: new Date().toISOString() }));
      let r = await rankgate(['search', '--db', db, '--json', 'still water'], NO_SERVER);
      assert.equal(r.code, 0, r.stderr);
      // pid reuse: the pid of a live process (this test) with another start time is not that process
      const gens = readdirSync(db).filter((n) => /^\.rankgate\.lock\.\d+$/.test(n)).map((n) => Number(n.split('.').pop()));
      const next = Math.max(...gens) + 1;
      writeFileSync(join(db, `.rankgate.lock.${next}`), JSON.stringify({ pid: process.pid, start: '1', command: 'rankgate serve', since: new Date().toISOString() }));
      r = await rankgate(['search', '--db', db, '--json', 'still water'], NO_SERVER);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(lockHolder(db), undefined, 'released after use');
      // and a live holder (same pid, same start time) is respected
      const start = processStartTime(process.pid);
      const gens2 = readdirSync(db).filter((n) => /^\.rankgate\.lock\.\d+$/.test(n)).map((n) => Number(n.split('.').pop()));
      writeFileSync(join(db, `.rankgate.lock.${Math.max(...gens2) + 1}`), JSON.stringify({ pid: process.pid, start, command: 'rankgate serve', since: 'now' }));
      r = await rankgate(['search', '--db', db, 'still water'], NO_SERVER);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`in use by process ${process.pid} \\(rankgate serve`));
      assertNoStack(r.stderr);
    } finally {
      rmSync(join(db, '..'), { recursive: true, force: true });
    }
  });

  it('a lock left by a dead process is taken over', async () => {
    const db = await copyIndexFixture('stale-lock');
    try {
      const dead = spawnSync(process.execPath, ['-e', 'process.pid']).pid!;
      writeFileSync(join(db, '.rankgate.lock'), JSON.stringify({ pid: dead, command: 'rankgate ingest', started: new Date().toISOString() }));
      const r = await rankgate(['search', '--db', db, '--json', 'still water'], NO_SERVER);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(JSON.parse(r.stdout).hits.length > 0);
      assert.ok(!existsSync(join(db, '.rankgate.lock')), 'released after use');
    } finally {
      rmSync(join(db, '..'), { recursive: true, force: true });
    }
  });

  it('a garbled lock file is treated as stale, not as a crash', async () => {
    const db = await copyIndexFixture('garbled-lock');
    try {
      writeFileSync(join(db, '.rankgate.lock'), '\u0000\u0001 not json');
      const r = await rankgate(['search', '--db', db, '--json', 'still water'], NO_SERVER);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(!existsSync(join(db, '.rankgate.lock')));
    } finally {
      rmSync(join(db, '..'), { recursive: true, force: true });
    }
  });
});
