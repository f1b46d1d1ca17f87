/**
 * Damaged disks and damaged indexes through the real CLI (src/db/faults.ts, src/db/datadir.ts): each ends in ONE
 * line, exit 2, naming the path and the cause in plain words, no stack, and nothing already there lost.
 *   - bytes overwritten in a table file, then `rankgate search`                 -> file damaged (names the file)
 *   - a damaged global/pg_control                                                -> file damaged, refused before opening
 *   - ingest of a new database onto a full 20 MB tmpfs                           -> disk full, nothing half-made left
 *   - the disk filling up in the middle of an ingest                             -> disk full; the old variant answers as before
 *   - less than 16 MB free for a read-only search                                -> disk full, nothing touched
 * The tmpfs cases mount one (root only here); without the permission they skip saying so.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, openSync, closeSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, CORPUS, assertNoStack, copyIndexFixture, hashTree, killChildren, pgliteIndexFixture, rankgate, spawnNode, tempDir } from './helpers.ts';

after(killChildren);

const NO_ENV = { DATABASE_URL: undefined, RANKGATE_DATA_DIR: undefined };
const lines = (s: string) => s.trim().split('\n').filter((l) => l && !/^ingest c\d+:/.test(l));

/** Search the copy and return the chunk ids, to compare before/after. */
async function ids(db: string): Promise<string[]> {
  const r = await rankgate(['search', 'still water', '--json', '--db', db], NO_ENV);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).hits.map((h: { chunkId: string }) => h.chunkId);
}

/** The file of a relation, asked of a private copy of the fixture. */
async function relationFile(db: string, rel: string): Promise<string> {
  const { openDatabase } = await import('../../src/db/index.ts');
  const d = await openDatabase({ dataDir: db, access: 'read' });
  try {
    return (await d.pool.query<{ p: string }>(`SELECT pg_relation_filepath($1::regclass) AS p`, [rel])).rows[0]!.p;
  } finally {
    await d.close();
  }
}

function overwrite(file: string, at: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    closeSync(fd);
  }
}

describe('a damaged index', () => {
  it('bytes overwritten in a table file: search exits 2 naming the directory, the file and "file damaged"', async () => {
    const db = await copyIndexFixture('damaged-table');
    try {
      const file = await relationFile(db, 'book_chunks');
      overwrite(join(db, file), 0, Buffer.alloc(64, 0xde));
      const r = await rankgate(['search', 'still water', '--db', db], NO_ENV);
      assert.equal(r.code, 2, r.stderr);
      const out = lines(r.stderr);
      assert.equal(out.length, 1, r.stderr);
      assert.match(out[0]!, new RegExp(`^rankgate search: ${db}: file damaged \\(${file}\\): the database cannot be read`));
      assertNoStack(r.stderr);
    } finally {
      rmSync(join(db, '..'), { recursive: true, force: true });
    }
  });

  it('a damaged pg_control: refused before PGlite starts (no "Aborted()"), the directory untouched', async () => {
    const db = await copyIndexFixture('damaged-control');
    try {
      overwrite(join(db, 'global', 'pg_control'), 16, Buffer.alloc(32, 0xff));
      const before = hashTree(db);
      for (const args of [['search', 'still water', '--db', db], ['ingest', '--db', db, '--corpus', CORPUS]]) {
        const r = await rankgate(args, NO_ENV);
        assert.equal(r.code, 2, r.stderr);
        assert.deepEqual(lines(r.stderr), [
          `rankgate ${args[0]}: ${db}: file damaged: global/pg_control (its checksum does not match its contents); the database cannot be opened: restore the directory from a copy or rebuild the index with rankgate ingest into a new directory`,
        ]);
        assert.doesNotMatch(r.stderr, /Aborted|ASSERTIONS/);
      }
      assert.equal(hashTree(db), before);
    } finally {
      rmSync(join(db, '..'), { recursive: true, force: true });
    }
  });
});

describe('a full disk (tmpfs)', () => {
  const base = tempDir('diskfull');
  const mounts: string[] = [];
  after(() => {
    for (const m of mounts) spawnSync('umount', [m]);
    rmSync(base, { recursive: true, force: true });
  });
  /** Mount a tmpfs of `mb` MB; undefined (with the reason) when this machine does not allow it. */
  function tmpfs(name: string, mb: number): { dir: string } | { skip: string } {
    const dir = join(base, name);
    mkdirSync(dir);
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', dir], { encoding: 'utf8' });
    if (r.status !== 0) return { skip: `needs permission to mount a tmpfs (mount -t tmpfs, as root): ${(r.stderr || r.error?.message || '').trim()}` };
    mounts.push(dir);
    return { dir };
  }
  const fill = (dir: string) => {
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${join(dir, 'filler')}`, 'bs=1M'], { stdio: 'ignore' });
    } catch {
      // dd ends with "No space left on device": that is the point
    }
  };

  it('ingest creating a database on a full 20 MB tmpfs: "disk full", no [object Object], nothing half-made left', async (t) => {
    const m = tmpfs('t20', 20);
    if ('skip' in m) return t.skip(m.skip);
    const db = join(m.dir, 'db');
    const r = await rankgate(['ingest', '--db', db, '--corpus', CORPUS], NO_ENV);
    assert.equal(r.code, 2, r.stderr);
    assert.deepEqual(lines(r.stderr), [
      `rankgate ingest: ${db}: disk full: no space left on the file system holding it (while trying to create the embedded database (PGlite)); free some space and run it again`,
    ]);
    assert.doesNotMatch(r.stderr, /object Object/);
    assertNoStack(r.stderr);
    // only lock records may remain: the half-initialised database was removed
    assert.deepEqual(readdirSync(db).filter((n) => !n.startsWith('.rankgate.lock')), []);
  });

  it('the disk filling up during an ingest: one line "disk full", no PANIC; the old variant answers as before', async (t) => {
    const fixture = await pgliteIndexFixture();
    const m = tmpfs('tfill', 63);
    if ('skip' in m) return t.skip(m.skip);
    const db = join(m.dir, 'db');
    cpSync(fixture, db, { recursive: true });
    const before = await ids(db);
    const ingest = spawnNode([BIN, 'ingest', '--db', db, '--corpus', CORPUS, '--chunk-size', '40'], { env: NO_ENV, timeoutMs: 180_000 });
    await ingest.waitFor(/c40:use-lite/, 120_000); // the first progress line: the database is open, the variant not written
    fill(m.dir);
    const r = await ingest.result;
    assert.equal(r.code, 2, r.stdout + r.stderr);
    const out = lines(r.stderr);
    assert.equal(out.length, 1, r.stderr);
    assert.match(out[0]!, new RegExp(`^rankgate ingest: ${db}: disk full`));
    assert.doesNotMatch(r.stderr, /PANIC|object Object/);
    assertNoStack(r.stderr);
    rmSync(join(m.dir, 'filler'));
    assert.deepEqual(await ids(db), before, 'the old variant survives, unchanged');
    const v = await rankgate(['search', 'still water', '--db', db, '--chunk-size', '40'], NO_ENV);
    assert.equal(v.code, 2, 'the interrupted variant was not committed');
    assert.match(v.stderr, /index variant c40:use-lite not found/);
  });

  it('less than 16 MB free: a read-only search says "disk full" and touches nothing', async (t) => {
    const fixture = await pgliteIndexFixture();
    const m = tmpfs('tlow', 63);
    if ('skip' in m) return t.skip(m.skip);
    const db = join(m.dir, 'db');
    cpSync(fixture, db, { recursive: true });
    fill(m.dir);
    const before = hashTree(db);
    const r = await rankgate(['search', 'still water', '--db', db], NO_ENV);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^rankgate search: ${db}: disk full: \\d+\\.\\d MB free on its file system, the embedded database needs at least 16 MB to start; free some space`));
    assert.doesNotMatch(r.stderr, /failed to initialize/);
    assert.equal(hashTree(db), before);
    assert.ok(existsSync(join(db, 'PG_VERSION')));
  });
});
