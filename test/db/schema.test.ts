/**
 * rankgate's own schema: a database's `public` (a team's production tables of the same names) is untouched byte for
 * byte by an ingest and an eval; a read-only role evaluates an existing index and cannot be made to write; a database
 * of an earlier rankgate (tables in public) is refused on a server and moved on an embedded one. Each server test
 * makes its own database on the CI server (RANKGATE_TEST_DATABASE_URL) and drops it.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createPglite, openDatabase, resolveSchema, writePrivilegeProblem } from '../../src/db/index.ts';
import { preflightTarget } from '../../src/search/preflight.ts';
import { ingestCorpus } from '../../src/ingest/pipeline.ts';
import { createSearchService } from '../../src/search/service.ts';
import { isUserError } from '../../src/errors.ts';
import { FIXTURE_DOCS, FIXTURE_QUERIES, HashEmbedder, SERVER_URL, SERVER_SKIP } from '../search/fixture.ts';

const emb = new HashEmbedder(64);
const defaults = { chunkSize: 48, embedder: emb.id, routing: false };
let seq = 0;

async function onServer<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function urlOf(database: string, user?: string): string {
  const u = new URL(SERVER_URL!);
  u.pathname = '/' + database;
  if (user) u.username = user;
  return u.toString();
}

/** A database of its own on the test server, dropped (with the roles made for it) when the test ends. */
async function freshDatabase(t: TestContext, setupSql = ''): Promise<{ name: string; url: string; role: (r: string) => string }> {
  const name = `rg_schema_${process.pid}_${Date.now().toString(36)}_${seq++}`;
  const roles: string[] = [];
  await onServer(SERVER_URL!, (c) => c.query(`CREATE DATABASE ${name}`));
  t.after(async () => {
    await onServer(SERVER_URL!, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      for (const r of roles) await c.query(`DROP ROLE IF EXISTS ${r}`);
    });
  });
  const url = urlOf(name);
  if (setupSql) await onServer(url, (c) => c.query(setupSql));
  return { name, url, role: (r) => (roles.push(`${name}_${r}`), `${name}_${r}`) };
}

/** A team's own tables in public, named like rankgate's, with rows, an index, a sequence and a function. */
const TEAM_PUBLIC = `
CREATE EXTENSION vector;
CREATE TABLE documents (id serial PRIMARY KEY, body text NOT NULL, owner text);
CREATE INDEX documents_owner_idx ON documents (owner);
CREATE TABLE book_chunks (id int PRIMARY KEY, content text);
CREATE TABLE bm25_postings (term text, n int);
CREATE TABLE bm25_terms (term text PRIMARY KEY);
CREATE TABLE bm25_stats (n int);
CREATE TABLE index_variants (name text);
CREATE TABLE embedding_cache (k text PRIMARY KEY, v vector(3));
CREATE FUNCTION team_total() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM documents';
INSERT INTO documents (body, owner) SELECT 'invoice ' || g, 'team' || (g % 3) FROM generate_series(1, 50) g;
INSERT INTO book_chunks VALUES (1, 'the team''s own chunk'), (2, 'another');
INSERT INTO bm25_postings VALUES ('sleep', 3);
INSERT INTO bm25_terms VALUES ('sleep');
INSERT INTO bm25_stats VALUES (7);
INSERT INTO index_variants VALUES ('prod');
INSERT INTO embedding_cache VALUES ('a', '[1,2,3]');
`;

/**
 * Every table of `schema` with the checksum of its rows (each row's xmin, so an UPDATE that rewrites the same values
 * shows too) and its file node (TRUNCATE, VACUUM FULL, ALTER … TYPE), and every relation, function and type in it.
 */
async function snapshot(url: string, schema: string): Promise<Record<string, string>> {
  return onServer(url, async (c) => {
    const out: Record<string, string> = {};
    const tables = await c.query<{ t: string; node: string }>(
      `SELECT relname AS t, relfilenode::text AS node FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r' ORDER BY 1`,
      [schema],
    );
    for (const { t, node } of tables.rows) {
      const r = await c.query<{ h: string; n: string }>(
        `SELECT md5(coalesce(string_agg(x.xmin::text || ':' || x::text, E'\\n' ORDER BY x::text), '')) AS h, count(*)::text AS n FROM ${schema}.${t} x`,
      );
      out[`table ${t}`] = `${r.rows[0]!.n} rows md5 ${r.rows[0]!.h} file ${node}`;
    }
    const objects = await c.query<{ o: string }>(
      `SELECT string_agg(o, ', ' ORDER BY o) AS o FROM (
         SELECT relkind::text || ':' || relname AS o FROM pg_class WHERE relnamespace = $1::regnamespace
         UNION ALL SELECT 'f:' || proname || '(' || oidvectortypes(proargtypes) || ')' FROM pg_proc WHERE pronamespace = $1::regnamespace
         UNION ALL SELECT 't:' || typname FROM pg_type WHERE typnamespace = $1::regnamespace) s`,
      [schema],
    );
    out.objects = objects.rows[0]!.o ?? '';
    return out;
  });
}

/** Schemas of the database other than the system's. */
async function schemas(url: string): Promise<string[]> {
  return onServer(url, async (c) =>
    (await c.query<{ n: string }>(`SELECT nspname AS n FROM pg_namespace WHERE nspname !~ '^pg_' AND nspname <> 'information_schema' ORDER BY 1`)).rows.map((r) => r.n),
  );
}

async function rankings(databaseUrl: string): Promise<string[][]> {
  const svc = await createSearchService({ databaseUrl, embedder: emb, routing: false, defaults });
  try {
    const out: string[][] = [];
    for (const q of FIXTURE_QUERIES) out.push((await svc.search(q)).hits.map((h) => h.chunkId));
    return out;
  } finally {
    await svc.close();
  }
}

const userError = (re: RegExp) => (e: unknown) => {
  assert.ok(isUserError(e), String(e));
  assert.equal((e as { exitCode: number }).exitCode, 2);
  assert.match((e as Error).message, re);
  assert.doesNotMatch((e as Error).message, /\n/, 'one line');
  return true;
};

test('RANKGATE_DB_SCHEMA: default rankgate, checked', () => {
  assert.equal(resolveSchema(undefined, {}), 'rankgate');
  assert.equal(resolveSchema(undefined, { RANKGATE_DB_SCHEMA: 'search_eval' }), 'search_eval');
  assert.equal(resolveSchema('given', { RANKGATE_DB_SCHEMA: 'search_eval' }), 'given');
  assert.throws(() => resolveSchema(undefined, { RANKGATE_DB_SCHEMA: 'Prod; DROP' }), userError(/RANKGATE_DB_SCHEMA "Prod; DROP": expected lowercase/));
  assert.throws(() => resolveSchema(undefined, { RANKGATE_DB_SCHEMA: 'pg_catalog' }), userError(/not a system schema \(pg_…/));
});

test('server: a team public schema with tables of the same names is untouched byte for byte by an ingest and an eval', async (t) => {
  if (!SERVER_URL) return t.skip(SERVER_SKIP);
  const { url } = await freshDatabase(t, TEAM_PUBLIC);
  const before = await snapshot(url, 'public');
  assert.match(before['table documents']!, /^50 rows/);

  const db = await openDatabase({ url });
  assert.equal(db.schema, 'rankgate');
  try {
    await ingestCorpus({ db, documents: FIXTURE_DOCS, chunkSizes: [48], embedder: emb });
  } finally {
    await db.close();
  }
  const ranked = await rankings(url);
  assert.ok(ranked.every((r) => r.length > 0), 'the eval found rankgate’s own index');
  assert.match(ranked[0]![0]!, /^breath#c48-/);

  assert.deepEqual(await snapshot(url, 'public'), before, 'public: same tables, rows, files, functions and types');
  assert.deepEqual(await schemas(url), ['public', 'rankgate'], 'nothing outside rankgate’s schema');
  const ours = await snapshot(url, 'rankgate');
  for (const t of ['documents', 'book_chunks', 'bm25_postings', 'bm25_terms', 'bm25_stats', 'embedding_cache', 'index_variants', 'rankgate_migrations']) {
    assert.ok(ours[`table ${t}`], `rankgate.${t}`);
  }
  assert.match(ours.objects!, /i:book_chunks_hnsw_/, 'the per-variant indexes are in rankgate’s schema');
  // the vector extension an administrator installed in public is used from there, not created again
  const ext = await onServer(url, (c) => c.query(`SELECT extnamespace::regnamespace::text AS s FROM pg_extension WHERE extname = 'vector'`));
  assert.deepEqual(ext.rows, [{ s: 'public' }]);
});

test('server: without pgvector installed, rankgate creates it inside its own schema; a role that cannot is told what to ask for', async (t) => {
  if (!SERVER_URL) return t.skip(SERVER_SKIP);
  const { url, name, role } = await freshDatabase(t, `CREATE TABLE documents (id int); INSERT INTO documents VALUES (1);`);
  const owner = role('owner');
  await onServer(url, (c) => c.query(`CREATE ROLE ${owner} LOGIN; GRANT CREATE ON DATABASE ${name} TO ${owner}`));
  await assert.rejects(
    openDatabase({ url: urlOf(name, owner) }),
    userError(/pgvector is available but this role cannot create it \(permission denied to create extension "vector": only a superuser can\); ask an administrator to run: CREATE EXTENSION vector SCHEMA "rankgate" \(or in any schema\)/),
  );
  const before = await snapshot(url, 'public');
  const db = await openDatabase({ url });
  await db.close();
  const ext = await onServer(url, (c) => c.query(`SELECT extnamespace::regnamespace::text AS s FROM pg_extension WHERE extname = 'vector'`));
  assert.deepEqual(ext.rows, [{ s: 'rankgate' }]);
  assert.deepEqual(await snapshot(url, 'public'), before);
});

test('server: a read-only role evaluates an existing index and cannot be made to write; a missing or outdated index is exit 2', async (t) => {
  if (!SERVER_URL) return t.skip(SERVER_SKIP);
  const { url, name, role } = await freshDatabase(t, TEAM_PUBLIC);
  const ro = role('ro');
  // nothing built yet: a reader is refused with one line, and creates nothing
  await onServer(url, (c) => c.query(`CREATE ROLE ${ro} LOGIN; GRANT CONNECT ON DATABASE ${name} TO ${ro}`));
  const roUrl = urlOf(name, ro);
  await assert.rejects(createSearchService({ databaseUrl: roUrl, embedder: emb }), userError(/holds no rankgate index \(no rankgate tables in schema "rankgate"\)/));
  assert.deepEqual(await schemas(url), ['public']);

  const db = await openDatabase({ url });
  await ingestCorpus({ db, documents: FIXTURE_DOCS, chunkSizes: [48], embedder: emb });
  await db.close();
  await onServer(url, (c) => c.query(`GRANT USAGE ON SCHEMA rankgate TO ${ro}; GRANT SELECT ON ALL TABLES IN SCHEMA rankgate TO ${ro}`));
  const expected = await rankings(url);
  const ours = await snapshot(url, 'rankgate');
  const theirs = await snapshot(url, 'public');

  assert.deepEqual(await rankings(roUrl), expected, 'the read-only role gets the same rankings');
  // an eval that would ingest with this role is refused at its start (the privilege probe), in one line naming what is
  // missing; the admin role passes; with RANKGATE_DB_READONLY the probe is not asked
  assert.match(
    (await writePrivilegeProblem(roUrl)) ?? '',
    /role "rg_schema_[a-z0-9_]*_ro" cannot write rankgate's schema "rankgate" \(no CREATE on schema "rankgate"; no INSERT on bm25_postings, .*\), and this eval would ingest .*set RANKGATE_DB_READONLY=1/,
  );
  assert.equal(await writePrivilegeProblem(url), null);
  await assert.rejects(
    preflightTarget({ corpus: '.', databaseUrl: roUrl }, process.cwd(), 'file://providers/search.ts'),
    userError(/config\.corpus|cannot write rankgate's schema "rankgate"/),
  );
  await preflightTarget({ corpus: '.', databaseUrl: roUrl, autoIngest: false }, process.cwd(), 'file://providers/search.ts');
  process.env.RANKGATE_DB_READONLY = '1';
  try {
    await preflightTarget({ corpus: '.', databaseUrl: roUrl }, process.cwd(), 'file://providers/search.ts');
  } finally {
    delete process.env.RANKGATE_DB_READONLY;
  }
  // every way to write is refused
  await assert.rejects(openDatabase({ url: roUrl }), userError(/this role cannot write rankgate's schema "rankgate" \(permission denied for schema rankgate\); .*set RANKGATE_DB_READONLY=1/));
  const reader = await openDatabase({ url: roUrl, access: 'read' });
  try {
    await assert.rejects(ingestCorpus({ db: reader, documents: FIXTURE_DOCS.slice(0, 2), chunkSizes: [48], embedder: emb }));
  } finally {
    await reader.close();
  }
  // a reader session cannot write even with a role that could (default_transaction_read_only)
  const superReader = await openDatabase({ url, access: 'read' });
  try {
    await assert.rejects(superReader.pool.query(`DELETE FROM embedding_cache`), /read-only transaction/);
    await assert.rejects(superReader.pool.query(`CREATE TABLE x (a int)`), /read-only transaction/);
  } finally {
    await superReader.close();
  }
  process.env.RANKGATE_DB_READONLY = '1';
  try {
    await assert.rejects(openDatabase({ url }), userError(/RANKGATE_DB_READONLY is set: this command writes/));
    // the provider's service with a corpus (autoIngest, a writer otherwise) opens as a reader under RANKGATE_DB_READONLY
    const svc = await createSearchService({ databaseUrl: url, embedder: emb, routing: false, defaults, autoIngest: { corpus: '/nonexistent' } });
    await svc.close();
  } finally {
    delete process.env.RANKGATE_DB_READONLY;
  }
  assert.deepEqual(await snapshot(url, 'rankgate'), ours, 'rankgate’s own tables unchanged by the read-only attempts');
  assert.deepEqual(await snapshot(url, 'public'), theirs);

  // an index of an older rankgate (a migration not applied): refused to the reader with one line
  await onServer(url, (c) => c.query(`DELETE FROM rankgate.rankgate_migrations WHERE name = '003_corpus_identity.sql'`));
  await assert.rejects(createSearchService({ databaseUrl: roUrl, embedder: emb }), userError(/built by an older rankgate \(not applied yet: 003_corpus_identity\.sql\); run rankgate ingest once/));
});

test('server: tables of an earlier rankgate in public are refused, not moved; RANKGATE_DB_SCHEMA=public keeps using them', async (t) => {
  if (!SERVER_URL) return t.skip(SERVER_SKIP);
  const { url } = await freshDatabase(t);
  const old = await openDatabase({ url, schema: 'public' }); // the layout of rankgate before it had a schema of its own
  await ingestCorpus({ db: old, documents: FIXTURE_DOCS, chunkSizes: [48], embedder: emb });
  await old.close();
  const before = await snapshot(url, 'public');
  const legacy = /schema public holds the tables of an earlier rankgate \(bm25_postings, .*rankgate_migrations\); rankgate now keeps its tables in schema "rankgate".*RANKGATE_DB_SCHEMA=public/;
  await assert.rejects(openDatabase({ url }), userError(legacy));
  await assert.rejects(createSearchService({ databaseUrl: url, embedder: emb }), userError(legacy));
  assert.deepEqual(await schemas(url), ['public'], 'no schema created beside them');
  assert.deepEqual(await snapshot(url, 'public'), before);
  process.env.RANKGATE_DB_SCHEMA = 'public';
  try {
    assert.ok((await rankings(url)).every((r) => r.length > 0));
  } finally {
    delete process.env.RANKGATE_DB_SCHEMA;
  }
});

test('PGlite: a database of an earlier rankgate (tables in public) is refused to a reader and moved by the next writer', async () => {
  const pglite = await createPglite('memory://');
  try {
    const old = await openDatabase({ pglite, closeInstance: false, schema: 'public' });
    await ingestCorpus({ db: old, documents: FIXTURE_DOCS, chunkSizes: [48], embedder: emb });
    const expected = (await (await createSearchService({ db: old, embedder: emb, routing: false, defaults })).search('grief and loss')).hits.map((h) => h.chunkId);
    await old.close();
    await assert.rejects(
      openDatabase({ pglite, closeInstance: false, access: 'read' }),
      userError(/built by an earlier rankgate \(its tables are in schema public, not "rankgate"\); run rankgate ingest once to move them/),
    );
    const db = await openDatabase({ pglite, closeInstance: false });
    try {
      const where = await db.pool.query<{ s: string; n: string }>(
        `SELECT schemaname AS s, count(*)::text AS n FROM pg_tables WHERE schemaname IN ('public', 'rankgate') GROUP BY 1 ORDER BY 1`,
      );
      assert.deepEqual(where.rows, [{ s: 'rankgate', n: '8' }]);
      const svc = await createSearchService({ db, embedder: emb, routing: false, defaults });
      assert.deepEqual((await svc.search('grief and loss')).hits.map((h) => h.chunkId), expected);
    } finally {
      await db.close();
    }
  } finally {
    await pglite.close();
  }
});

test('RANKGATE_DB_SCHEMA: system schemas refused; a reserved word is a schema like any other (quoted everywhere)', async () => {
  assert.throws(() => resolveSchema(undefined, { RANKGATE_DB_SCHEMA: 'information_schema' }), userError(/RANKGATE_DB_SCHEMA "information_schema": .*not a system schema \(pg_…, information_schema\)/));
  assert.throws(() => resolveSchema(undefined, { RANKGATE_DB_SCHEMA: 'pg_toast' }), userError(/not a system schema/));
  assert.equal(resolveSchema(undefined, { RANKGATE_DB_SCHEMA: 'select' }), 'select');
  const pglite = await createPglite('memory://');
  try {
    const db = await openDatabase({ pglite, closeInstance: false, schema: 'select' });
    try {
      await ingestCorpus({ db, documents: FIXTURE_DOCS, chunkSizes: [48], embedder: emb });
      const first = (await (await createSearchService({ db, embedder: emb, routing: false, defaults })).search('grief and loss')).hits;
      assert.ok(first.length > 0);
      // the corpus changes: the variant is rebuilt (its indexes dropped by qualified name in the quoted schema)
      await ingestCorpus({ db, documents: FIXTURE_DOCS.slice(1), chunkSizes: [48], embedder: emb, replace: true });
      const where = await db.pool.query<{ s: string; n: string }>(`SELECT schemaname AS s, count(*)::text AS n FROM pg_tables WHERE schemaname IN ('public', 'select') GROUP BY 1 ORDER BY 1`);
      assert.deepEqual(where.rows, [{ s: 'select', n: '8' }]);
      assert.ok((await (await createSearchService({ db, embedder: emb, routing: false, defaults })).search('grief and loss')).hits.length > 0);
    } finally {
      await db.close();
    }
  } finally {
    await pglite.close();
  }
});

test('RANKGATE_DB_READONLY: only the documented on/off values; anything else is exit 2 naming them, and nothing is opened for writing', async () => {
  const { envFlag } = await import('../../src/util/env.ts');
  for (const on of ['1', 'true', 'YES', ' on ']) assert.equal(envFlag('X', { X: on }), true, on);
  for (const off of ['0', 'False', 'no', 'OFF', '', undefined]) assert.equal(envFlag('X', { X: off }), false, String(off));
  const pglite = await createPglite('memory://');
  try {
    for (const bad of ['2', 'enabled']) {
      process.env.RANKGATE_DB_READONLY = bad;
      try {
        for (const access of ['write', 'read'] as const) {
          await assert.rejects(
            openDatabase({ pglite, closeInstance: false, access }),
            userError(new RegExp(`^RANKGATE_DB_READONLY="${bad}": expected one of 1, true, yes, on, 0, false, no, off \\(case-insensitive\\), or unset$`)),
          );
        }
      } finally {
        delete process.env.RANKGATE_DB_READONLY;
      }
    }
    const r = await pglite.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'rankgate'`);
    assert.equal(r.rows[0]!.n, 0, 'no schema was created');
  } finally {
    await pglite.close();
  }
});

test('server: several sessions setting up one fresh schema at once all succeed (CREATE … IF NOT EXISTS raced on pg_type)', async (t) => {
  if (!SERVER_URL) return t.skip(SERVER_SKIP);
  const { url } = await freshDatabase(t, 'CREATE EXTENSION vector');
  // the race needs the sessions to reach the set-up together: 6 opens at once, as two eval columns and a few processes
  const dbs = await Promise.all(Array.from({ length: 6 }, () => openDatabase({ url })));
  try {
    assert.deepEqual(new Set(dbs.map((d) => d.schema)), new Set(['rankgate']));
    const rows = await dbs[0]!.pool.query('SELECT count(*)::int AS n FROM rankgate.rankgate_migrations');
    assert.ok(rows.rows[0].n >= 3, 'every migration applied once');
  } finally {
    await Promise.all(dbs.map((d) => d.close()));
  }
});
