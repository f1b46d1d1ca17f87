/**
 * New embedded databases start from the machine's copy of a just-initialised cluster (src/db/pglite-template.ts):
 * the first creation makes the copy, later ones load it; a damaged copy is replaced, never trusted; `off` keeps
 * nothing. Each case points RANKGATE_PGLITE_TEMPLATE at a private path, so the shared copy is never touched.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { openDatabase } from '../../src/db/index.ts';
import { extractTemplate, readTemplate, saveTemplate, templatePath } from '../../src/db/pglite-template.ts';

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

/** One ustar entry (header with its checksum, then the body padded to 512 bytes). */
function tarEntry(name: string, body: string, type = '0'): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 'latin1');
  h.write('0000644\0', 100, 'latin1');
  h.write(`${Buffer.byteLength(body).toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  h.write(type, 156, 'latin1');
  h.write('ustar\u000000', 257, 'latin1');
  h.fill(32, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  const b = Buffer.from(body, 'latin1');
  return Buffer.concat([h, b, Buffer.alloc((512 - (b.length % 512)) % 512)]);
}
const tarOf = (...entries: Buffer[]) => Buffer.concat([...entries, Buffer.alloc(1024)]);

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
    // the copy was dumped while its maker held db1's lock: its lock file and postmaster.pid are not unpacked into a
    // new directory (they would claim that directory for the maker)
    const tar = gunzipSync(readFileSync(template));
    assert.ok(tar.includes('.rankgate.lock.'), 'the copy holds its maker\'s lock file');
    const unpacked = join(tmp, 'unpacked');
    mkdirSync(unpacked);
    extractTemplate(tar, unpacked);
    assert.ok(existsSync(join(unpacked, 'PG_VERSION')) && existsSync(join(unpacked, 'base')));
    assert.deepEqual(readdirSync(unpacked).filter((n) => n.startsWith('.rankgate.lock') || n === 'postmaster.pid'), []);
  });

  it('unpacking refuses an entry outside the directory, a bad checksum, a link, or no PG_VERSION', () => {
    const dir = join(tmp, 'hostile');
    const cases: [string, Buffer, RegExp][] = [
      ['escapes', tarOf(tarEntry('PG_VERSION', '18\n'), tarEntry('../escaped', 'x')), /entry path/],
      ['absolute and escapes', tarOf(tarEntry('/base/../../escaped', 'x')), /entry path/],
      ['bad checksum', (() => { const t = tarOf(tarEntry('PG_VERSION', '18\n')); t[0] = 0x51; return t; })(), /checksum/],
      ['symlink', tarOf(tarEntry('PG_VERSION', '18\n'), tarEntry('link', '', '2')), /entry type "2"/],
      ['no PG_VERSION', tarOf(tarEntry('base/1/1', 'x')), /no PG_VERSION/],
      ['no end marker', tarEntry('PG_VERSION', '18\n'), /end marker/],
    ];
    for (const [what, tar, re] of cases) {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      assert.throws(() => extractTemplate(tar, dir), re, what);
    }
    assert.ok(!existsSync(join(tmp, 'escaped')), 'nothing written outside the directory');
    // a well-formed one unpacks, with a leading '/' stripped as PGlite's dump writes it
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    extractTemplate(tarOf(tarEntry('/PG_VERSION', '18\n'), tarEntry('/base', '', '5'), tarEntry('/base/1/112', 'page')), dir);
    assert.equal(readFileSync(join(dir, 'base', '1', '112'), 'utf8'), 'page');
  });

  it('a damaged copy is not trusted: the database is made by initdb, and the copy is replaced by a good one', async () => {
    const template = join(tmp, 'b', 'template.tar.gz');
    mkdirSync(join(tmp, 'b'), { mode: 0o700 });
    writeFileSync(template, Buffer.alloc(4096, 7), { mode: 0o600 }); // garbage where the copy should be
    await createAndUse(join(tmp, 'db3'), template);
    assert.ok(isGzip(template), 'the garbage was replaced by a fresh copy');
    // a copy that looks whole (gzip, a ustar archive with PG_VERSION) but is damaged half-way: what it unpacked is
    // cleared, initdb makes the database, and the copy is replaced by a good one
    const good = gunzipSync(readFileSync(template));
    const damaged = Buffer.from(good);
    let off = 0;
    for (let n = 0; n < 40; n++) off += 512 + Math.ceil(parseInt(damaged.toString('latin1', off + 124, off + 135), 8) / 512) * 512;
    damaged[off] ^= 0x20; // the 41st entry's name: its header checksum no longer matches
    writeFileSync(template, gzipSync(damaged), { mode: 0o600 });
    process.env.RANKGATE_PGLITE_TEMPLATE = template;
    const accepted = readTemplate();
    delete process.env.RANKGATE_PGLITE_TEMPLATE;
    assert.ok(accepted?.equals(damaged), 'it passes the whole-file checks');
    mkdirSync(join(tmp, 'half'));
    assert.throws(() => extractTemplate(damaged, join(tmp, 'half')), /bad header checksum/);
    assert.ok(readdirSync(join(tmp, 'half')).length > 0, 'the first entries were written before the damage');
    await createAndUse(join(tmp, 'db4'), template);
    assert.ok(gunzipSync(readFileSync(template)).length > 1_000_000 && !gunzipSync(readFileSync(template)).equals(damaged), 'replaced by a real copy');
    // a copy others may rewrite is never read (nor deleted): a new database then runs initdb, as without a copy
    chmodSync(template, 0o666);
    const before = readFileSync(template);
    const prev = process.env.RANKGATE_PGLITE_TEMPLATE;
    process.env.RANKGATE_PGLITE_TEMPLATE = template;
    try {
      assert.equal(readTemplate(), undefined);
    } finally {
      if (prev === undefined) delete process.env.RANKGATE_PGLITE_TEMPLATE;
      else process.env.RANKGATE_PGLITE_TEMPLATE = prev;
    }
    assert.ok(readFileSync(template).equals(before) && (statSync(template).mode & 0o777) === 0o666, 'left as it was');
    // an in-memory database runs initdb and makes the copy when there is none
    rmSync(template);
    await createAndUse('memory://', template);
    assert.ok(isGzip(template));
  });

  it('RANKGATE_PGLITE_TEMPLATE=off or naming a directory: no copy read or written; the default copy lives in the system temp dir', async () => {
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
    // off: no copy is read or written (a new database then runs initdb, as on a machine without a copy)
    process.env.RANKGATE_PGLITE_TEMPLATE = 'off';
    try {
      assert.equal(readTemplate(), undefined);
      let dumped = false;
      await saveTemplate({ dumpDataDir: async () => ((dumped = true), new Blob([Buffer.alloc(2_000_000, 1)])) });
      assert.equal(dumped, false, 'nothing dumped');
    } finally {
      if (prev === undefined) delete process.env.RANKGATE_PGLITE_TEMPLATE;
      else process.env.RANKGATE_PGLITE_TEMPLATE = prev;
    }
    // a setting naming a directory: the copy can be neither read nor written, and neither throws (a new database
    // then runs initdb and keeps no copy, as with off)
    const notAFile = join(tmp, 'a-directory');
    mkdirSync(notAFile);
    process.env.RANKGATE_PGLITE_TEMPLATE = notAFile;
    try {
      assert.equal(readTemplate(), undefined);
      await saveTemplate({ dumpDataDir: async () => new Blob([Buffer.alloc(2_000_000, 1)]) });
    } finally {
      if (prev === undefined) delete process.env.RANKGATE_PGLITE_TEMPLATE;
      else process.env.RANKGATE_PGLITE_TEMPLATE = prev;
    }
    assert.ok(statSync(notAFile).isDirectory() && readdirSync(notAFile).length === 0, 'the directory is left as it was');
    assert.deepEqual(readdirSync(tmp).filter((n) => n.startsWith('a-directory.')), [], 'no temp file left beside it');
  });
});
