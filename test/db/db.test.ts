import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createPglite, migrate, openDatabase, readerSharedBuffersMb, textConfigFor, availableTextConfigs, type Db } from '../../src/db/index.ts';
import { isUserError } from '../../src/errors.ts';
import { ENGINES, SERVER_URL, SERVER_SKIP, openServerFixture } from '../search/fixture.ts';

test('textConfigFor maps languages and falls back to simple when a config is missing', () => {
  const all = new Set(['english', 'spanish', 'hindi', 'simple']);
  assert.equal(textConfigFor('en', all), 'english');
  assert.equal(textConfigFor('es-MX', all), 'spanish');
  assert.equal(textConfigFor('hi', all), 'hindi');
  assert.equal(textConfigFor('fr', all), 'simple');
  assert.equal(textConfigFor('spanish', all), 'spanish');
  assert.equal(textConfigFor(undefined, all), 'english');
  const noHindi = new Set(['english', 'spanish', 'simple']);
  assert.equal(textConfigFor('hi', noHindi), 'simple');
  assert.equal(textConfigFor('hindi', noHindi), 'simple');
});

test('an unreachable server is a UserError naming the database (no credentials)', async () => {
  await assert.rejects(openDatabase({ url: 'postgres://someone:secret@127.0.0.1:1/nowhere' }), (e: unknown) => {
    assert.ok(isUserError(e));
    assert.match((e as Error).message, /postgres:\/\/127\.0\.0\.1:1\/nowhere is unreachable/);
    assert.doesNotMatch((e as Error).message, /secret/);
    return true;
  });
});

test('PGlite without the pgvector extension: UserError naming the missing extension', async () => {
  const { PGlite } = await import('@electric-sql/pglite');
  const bare = new PGlite('memory://');
  await assert.rejects(openDatabase({ pglite: bare }), (e: unknown) => {
    assert.ok(isUserError(e));
    assert.match((e as Error).message, /pgvector extension \("vector"\) is not installed/);
    return true;
  });
  assert.ok(bare.closed, 'a failed open closes what it opened');
});

async function checkSchema(db: Db) {
  const tables = await db.pool.query<{ t: string }>(
    `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1`,
  );
  assert.deepEqual(
    tables.rows.map((r) => r.t),
    ['bm25_postings', 'bm25_stats', 'bm25_terms', 'book_chunks', 'documents', 'embedding_cache', 'index_variants', 'rankgate_migrations'],
  );
  const applied = await db.pool.query<{ name: string }>('SELECT name FROM rankgate_migrations ORDER BY name');
  assert.deepEqual(applied.rows.map((r) => r.name), ['001_init.sql', '002_variant_gin.sql', '003_corpus_identity.sql']);
  assert.deepEqual(await migrate(db), [], 'migrations are applied once');
  const cfgs = await availableTextConfigs(db);
  for (const c of ['english', 'spanish', 'simple']) assert.ok(cfgs.has(c), c);
  const v = await db.pool.query(`SELECT '[1,2,3]'::vector <=> '[2,4,6]'::vector AS d`);
  assert.ok(Math.abs(Number(v.rows[0].d)) < 1e-6);
}

test('PGlite: migrations create the schema once, in a data directory that reopens', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-db-'));
  try {
    const pglite = await createPglite(join(dir, 'db'));
    const db = await openDatabase({ pglite });
    assert.equal(db.kind, 'pglite');
    await checkSchema(db);
    await db.pool.query(`INSERT INTO documents (id, title) VALUES ('keep', 'Kept')`);
    await db.close();
    const again = await openDatabase({ dataDir: join(dir, 'db') });
    assert.match(again.describe, /^PGlite /);
    const r = await again.pool.query(`SELECT title FROM documents WHERE id = 'keep'`);
    assert.equal(r.rows[0].title, 'Kept');
    const shared = async (d: Db) => (await d.pool.query<{ shared_buffers: string }>('SHOW shared_buffers')).rows[0]!.shared_buffers;
    assert.equal(await shared(again), '128MB', 'a writer keeps the default buffer pool');
    await again.close();
    // a reader of this small database (~23 MB of tables and catalogs) gets a pool its size, not 128 MB
    assert.equal(readerSharedBuffersMb(join(dir, 'db')), 32);
    const reader = await openDatabase({ dataDir: join(dir, 'db'), access: 'read' });
    assert.equal(await shared(reader), '32MB');
    assert.equal((await reader.pool.query(`SELECT title FROM documents WHERE id = 'keep'`)).rows[0].title, 'Kept');
    await reader.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('server: migrations in a private schema, pgvector present, jit off, schema dropped on close', async (t) => {
  if (!SERVER_URL) return t.skip(SERVER_SKIP);
  const db = await openServerFixture(false);
  const schema = db.schema!;
  try {
    assert.equal(db.kind, 'postgres');
    await checkSchema(db);
    const jit = await db.pool.query(`SELECT current_setting('jit') AS jit`);
    assert.equal(jit.rows[0].jit, 'off');
  } finally {
    await db.close();
  }
  // a plain connection: opening rankgate's default schema on the shared test database is not this test's business
  const probe = new pg.Client({ connectionString: SERVER_URL });
  await probe.connect();
  try {
    const r = await probe.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    assert.equal(r.rowCount, 0);
  } finally {
    await probe.end();
  }
});

test('both engines map every language to the same text-search config', async (t) => {
  if (!SERVER_URL) return t.skip(SERVER_SKIP);
  const dbs = await Promise.all(ENGINES.map((e) => e.open()));
  try {
    const sets = await Promise.all(dbs.map((d) => availableTextConfigs(d)));
    for (const lang of ['en', 'es', 'hi', 'fr']) {
      assert.equal(textConfigFor(lang, sets[0]), textConfigFor(lang, sets[1]), lang);
    }
  } finally {
    for (const d of dbs) await d.close();
  }
});
