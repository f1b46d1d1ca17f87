/**
 * New embedded databases start from the machine's copy of a just-initialised cluster (src/db/pglite-template.ts):
 * the first creation makes the copy, later ones load it; a damaged copy is replaced, never trusted; `off` keeps
 * nothing. Each case points RANKGATE_PGLITE_TEMPLATE at a private path, so the shared copy is never touched.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { openDatabase } from '../../src/db/index.ts';
import { templatePath } from '../../src/db/pglite-template.ts';

const tmp = mkdtempSync(join(tmpdir(), 'rankgate-template-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Open a new database in `dir` with the copy at `template`, prove it is a complete, migrated rankgate database. */
async function createAndUse(dir: string, template: string): Promise<void> {
  const prev = process.env.RANKGATE_PGLITE_TEMPLATE;
  process.env.RANKGATE_PGLITE_TEMPLATE = template;
  try {
    const db = await openDatabase({ dataDir: dir });
    try {
      const ext = await db.pool.query<{ extname: string }>("SELECT extname FROM pg_extension WHERE extname IN ('vector') ORDER BY 1");
      assert.deepEqual(ext.rows.map((r) => r.extname), ['vector']);
      await db.pool.query("INSERT INTO documents (id, title) VALUES ('d1', 'a title')");
      assert.equal((await db.pool.query('SELECT count(*)::int AS n FROM documents')).rows[0].n, 1);
    } finally {
      await db.close();
    }
  } finally {
    if (prev === undefined) delete process.env.RANKGATE_PGLITE_TEMPLATE;
    else process.env.RANKGATE_PGLITE_TEMPLATE = prev;
  }
}

const isGzip = (p: string) => {
  const b = readFileSync(p);
  return b[0] === 0x1f && b[1] === 0x8b && b.length > 100_000;
};

describe('the PGlite template', () => {
  it('the first new database writes the copy; the next one loads it and is a complete database; reopening works', async () => {
    const template = join(tmp, 'a', 'template.tar.gz');
    await createAndUse(join(tmp, 'db1'), template);
    assert.ok(existsSync(template) && isGzip(template), 'the copy was written (gzipped tar)');
    const before = statSync(template).mtimeMs;
    await createAndUse(join(tmp, 'db2'), template);
    assert.equal(statSync(template).mtimeMs, before, 'loaded, not rewritten');
    // the database made from the copy reopens as a complete rankgate database, its row still there
    const db = await openDatabase({ dataDir: join(tmp, 'db2'), access: 'read' });
    try {
      assert.equal((await db.pool.query('SELECT count(*)::int AS n FROM documents')).rows[0].n, 1);
    } finally {
      await db.close();
    }
    assert.ok(existsSync(join(tmp, 'db2', 'PG_VERSION')));
  });

  it('a damaged copy is not trusted: the database is made by initdb, and the copy is replaced by a good one', async () => {
    const template = join(tmp, 'b', 'template.tar.gz');
    mkdirSync(join(tmp, 'b'), { mode: 0o700 });
    writeFileSync(template, Buffer.alloc(4096, 7), { mode: 0o600 }); // garbage where the copy should be
    await createAndUse(join(tmp, 'db3'), template);
    assert.ok(isGzip(template), 'the garbage was replaced by a fresh copy');
    // a valid gzip holding no data directory: PGlite cannot load it; initdb makes the database and a new copy
    writeFileSync(template, gzipSync(Buffer.alloc(200_000, 1)));
    await createAndUse(join(tmp, 'db4'), template);
    assert.ok(isGzip(template) && gunzipSync(readFileSync(template)).length > 1_000_000, 'replaced by a real copy');
    // a copy others may rewrite is never loaded (nor deleted): the database is made by initdb
    chmodSync(template, 0o666);
    const before = readFileSync(template);
    await createAndUse(join(tmp, 'db5'), template);
    assert.ok(readFileSync(template).equals(before) && (statSync(template).mode & 0o777) === 0o666, 'left as it was');
    // an in-memory database runs initdb and makes the copy when there is none
    rmSync(template);
    await createAndUse('memory://', template);
    assert.ok(isGzip(template));
  });

  it('RANKGATE_PGLITE_TEMPLATE=off: initdb every time, nothing kept; the default copy lives in the system temp dir', async () => {
    const prev = process.env.RANKGATE_PGLITE_TEMPLATE;
    try {
      process.env.RANKGATE_PGLITE_TEMPLATE = 'off';
      assert.equal(templatePath(), null);
      delete process.env.RANKGATE_PGLITE_TEMPLATE;
      const p = templatePath()!;
      assert.ok(p.startsWith(join(tmpdir(), `rankgate-pglite-template-${process.getuid!()}`)) && p.endsWith('.tar.gz'), p);
    } finally {
      if (prev === undefined) delete process.env.RANKGATE_PGLITE_TEMPLATE;
      else process.env.RANKGATE_PGLITE_TEMPLATE = prev;
    }
    const dir = join(tmp, 'db-off');
    await createAndUse(dir, 'off');
    assert.ok(existsSync(join(dir, 'PG_VERSION')));
    // a setting naming a directory: the copy can be neither read nor written; the database is still made
    const notAFile = join(tmp, 'a-directory');
    mkdirSync(notAFile);
    await createAndUse(join(tmp, 'db-dir-setting'), notAFile);
    assert.ok(existsSync(join(tmp, 'db-dir-setting', 'PG_VERSION')) && statSync(notAFile).isDirectory());
  });
});
