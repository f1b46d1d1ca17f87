/**
 * Storage: one SQL dialect and one migration set, driven through `pg` on both engines.
 *
 * Which database: resolveDatabaseTarget (src/db/target.ts), one rule for every CLI and the provider —
 * `--db`/config first, then `DATABASE_URL` (a server), then `RANKGATE_DATA_DIR` (a PGlite directory), then
 * `.rankgate/db`.
 * - a server -> `pg.Pool` (pgvector required).
 * - otherwise -> embedded PGlite (Postgres 18 in WASM, with pgvector and pg_textsearch) in the data directory
 *   (or `memory://`), wrapped by `createPgConfig` so `pg` sees a server (pool size 1; types come back exactly as
 *   from a server).
 *
 * Readers (`access: 'read'`: search, serve, golden check, the provider when it will not ingest) never create,
 * initialise, migrate or repair anything: a directory or schema that is not a complete, current rankgate
 * database is refused with one line. The writer (`access: 'write'`: ingest) creates and migrates.
 *
 * Where: every table, index and sequence rankgate makes lives in ONE schema of its own (`RANKGATE_DB_SCHEMA`, default
 * `rankgate`; created by a writer when absent), on both engines: each session's search_path is that schema, then the
 * schema holding the `vector` extension when it is elsewhere (a server where an administrator installed it in
 * `public`); a fresh install of the extension goes into rankgate's schema. Nothing of a team's `public` is read,
 * created, altered or dropped (docs/search.md "What rankgate creates"). A database of an earlier rankgate with its
 * tables in `public`: an embedded (PGlite) directory is rankgate's own and is moved into the schema by the next
 * writer; a server is refused with the two ways on (`RANKGATE_DB_SCHEMA=public`, or moving the tables).
 *
 * Read-only (`access: 'read'`, or `RANKGATE_DB_READONLY=1` for every command): the session runs with
 * `default_transaction_read_only=on`, so even a bug cannot write; a role with USAGE on the schema and SELECT on its
 * tables is enough. Sessions also run `jit=off` on the server (one query spent 300 ms in JIT).
 */
import { chmodSync, readFileSync, readdirSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { UserError } from '../errors.ts';
import { resolveDatabaseTarget, DEFAULT_DATA_DIR } from './target.ts';
import { LOCK_PREFIX, lockDataDir } from './lock.ts';
import { DATA_DIR_MODE, dataDirOwnerProblem, describeDataDirProblem, inspectDataDir, restrictDataDir } from './datadir.ts';
import { MIN_FREE_BYTES, describeFault, faultCauseAt, freeBytes, registerOpenDir, withPgliteFaults } from './faults.ts';
import { dropTemplate, extractTemplate, readTemplate, saveTemplate } from './pglite-template.ts';
import { envFlag } from '../util/env.ts';

export { resolveDatabaseTarget, DEFAULT_DATA_DIR, isServerUrl, type DatabaseTarget } from './target.ts';
export { lockDataDir, lockHolder, LOCK_PREFIX } from './lock.ts';
export { inspectDataDir, describeDataDirProblem } from './datadir.ts';
export { describeFault, isDatabaseFault, faultCauseAt, freeBytes, fullDisks, openDataDirs, MIN_FREE_BYTES } from './faults.ts';

export type DbKind = 'pglite' | 'postgres';
export type DbAccess = 'read' | 'write';

export interface Db {
  pool: pg.Pool;
  kind: DbKind;
  /** Human-readable target, credentials removed: 'postgres://host:port/db' or 'PGlite .rankgate/db'. */
  describe: string;
  /** Schema holding rankgate's tables (RANKGATE_DB_SCHEMA, default 'rankgate'). */
  schema: string;
  /** The PGlite instance when kind = 'pglite' (for clone(), dumpDataDir()). */
  pglite?: import('@electric-sql/pglite').PGlite;
  /** The PGlite data directory (as given) when kind = 'pglite' and it is on disk. */
  dataDir?: string;
  /** 'read': opened by a command that never writes. */
  access: DbAccess;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** A `--db` flag value (postgres:// URL or directory); beats url/dataDir and the environment. */
  db?: string;
  /** postgres:// URL. Default: resolveDatabaseTarget (DATABASE_URL, …); if none, PGlite. */
  url?: string;
  /** PGlite data directory (default RANKGATE_DATA_DIR, else `.rankgate/db`); 'memory://' for an in-memory database. */
  dataDir?: string;
  /** Use an existing PGlite instance (e.g. a clone of a test fixture). The caller keeps ownership unless closeInstance. */
  pglite?: import('@electric-sql/pglite').PGlite;
  /** Close the given `pglite` instance on close() (default true). */
  closeInstance?: boolean;
  /** The schema holding rankgate's tables (default env RANKGATE_DB_SCHEMA, else 'rankgate'); a writer creates it. */
  schema?: string;
  /** Server only: DROP SCHEMA ... CASCADE on close() (tests). */
  dropSchemaOnClose?: boolean;
  /** 'write' (default): may create the database and applies migrations. 'read': refuses anything that is not a
   *  complete, current rankgate database and writes nothing. */
  access?: DbAccess;
  /** Run migrations (default true for access 'write'; never for 'read'). */
  migrate?: boolean;
  /** Server pool size (default 4). */
  poolSize?: number;
}

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

function redact(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}${u.port ? ':' + u.port : ''}${u.pathname}`;
  } catch {
    return 'the database URL given';
  }
}

export const DEFAULT_SCHEMA = 'rankgate';

/** The tables rankgate makes (001_init.sql) and its migration ledger: what an earlier version left in `public`. */
export const RANKGATE_TABLES = ['documents', 'index_variants', 'book_chunks', 'bm25_postings', 'bm25_terms', 'bm25_stats', 'embedding_cache', 'rankgate_migrations'] as const;

const nonEmpty = (s: string | undefined) => (s !== undefined && s.trim() !== '' ? s.trim() : undefined);

/** The schema of rankgate's tables: the option, else RANKGATE_DB_SCHEMA, else 'rankgate'. */
export function resolveSchema(given?: string, env: NodeJS.ProcessEnv = process.env): string {
  const schema = nonEmpty(given) ?? nonEmpty(env.RANKGATE_DB_SCHEMA) ?? DEFAULT_SCHEMA;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema) || schema.startsWith('pg_') || schema === 'information_schema') {
    throw new UserError(
      `${given !== undefined ? 'database schema' : 'RANKGATE_DB_SCHEMA'} "${schema}": expected lowercase letters, digits and _ (max 63), ` +
        `not a system schema (pg_…, information_schema)`,
    );
  }
  return schema;
}

/** RANKGATE_DB_READONLY=1 (or true/yes/on): every command opens the database read-only; a value that is neither on nor off is exit 2 (src/util/env.ts). */
export function readOnlyByEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return envFlag('RANKGATE_DB_READONLY', env);
}

/** A quoted identifier: rankgate's schema in every statement (a reserved word such as `select` is a valid schema name)
 *  and names read from the catalog, such as the vector extension's schema. */
export const ident = (name: string) => '"' + name.replace(/"/g, '""') + '"';

type Run = <R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]) => Promise<pg.QueryResult<R>>;

/**
 * A session's setup, the same on both engines: a writer creates rankgate's schema when absent (looked up first:
 * CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege on the database even when the schema exists); returns the
 * search_path: rankgate's schema, then the vector extension's schema when it lives elsewhere.
 */
async function prepareSession(run: Run, schema: string, access: DbAccess, describe: string, kind: DbKind): Promise<string> {
  // a server whose public holds an earlier rankgate's tables is refused before anything is created
  if (kind === 'postgres' && schema !== 'public') {
    const at = async (s: string) => !!(await run<{ t: string | null }>(`SELECT to_regclass(format('%I.%I', $1::text, 'rankgate_migrations'))::text AS t`, [s])).rows[0]?.t;
    if (!(await at(schema)) && (await at('public'))) {
      const present = await run<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename = ANY($1::text[]) ORDER BY 1`, [[...RANKGATE_TABLES]]);
      throw new UserError(legacyServerMessage({ describe: describe.replace(/^database /, ''), schema }, present.rows.map((r) => r.t)));
    }
  }
  if (access === 'write') {
    const has = await run('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (!has.rowCount) {
      try {
        await run(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
      } catch (e) {
        // another session created it at the same moment (IF NOT EXISTS is not safe under concurrency): it exists
        if ((e as { code?: string }).code === '23505') return prepareSession(run, schema, access, describe, kind);
        const msg = e instanceof Error ? e.message : String(e);
        throw new UserError(
          `${describe}: cannot create schema "${schema}", where rankgate keeps its tables (${msg}); ` +
            `ask an administrator to run: CREATE SCHEMA ${ident(schema)} AUTHORIZATION <this role>, or set RANKGATE_DB_SCHEMA to a schema this role owns; ` +
            `to evaluate an index that already exists without writing, set RANKGATE_DB_READONLY=1 (docs/search.md "What rankgate creates")`,
        );
      }
    }
  }
  const vec = await run<{ s: string }>(
    `SELECT n.nspname AS s FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`,
  );
  const vecSchema = vec.rows[0]?.s;
  return vecSchema && vecSchema !== schema ? `${ident(schema)}, ${ident(vecSchema)}` : ident(schema);
}

/**
 * Can this server role write rankgate's schema? Asked at an eval's start (src/search/preflight.ts) when the eval would
 * ingest, so a read-only role is refused in one line before any query instead of erroring every row. Returns the
 * refusal (one line), or null when the role can write or the server cannot be reached (the open reports that itself).
 * Checked: the role's sessions are not read-only by default; the schema exists with USAGE and CREATE, or the database
 * grants CREATE to make it; every rankgate table there takes INSERT.
 */
export async function writePrivilegeProblem(url: string, given?: string, describe = url): Promise<string | null> {
  const schema = resolveSchema(given);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch {
    return null;
  }
  try {
    const r = await client.query<{ who: string; ro: string; has: boolean; dbcreate: boolean; usage: boolean | null; create: boolean | null; noinsert: string[] | null }>(
      `SELECT current_user AS who, current_setting('default_transaction_read_only') AS ro,
              EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS has,
              has_database_privilege(current_database(), 'CREATE') AS dbcreate,
              CASE WHEN EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) THEN has_schema_privilege($1, 'USAGE') END AS usage,
              CASE WHEN EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) THEN has_schema_privilege($1, 'CREATE') END AS "create",
              (SELECT array_agg(t ORDER BY t) FROM unnest($2::text[]) AS t
                WHERE to_regclass(format('%I.%I', $1::text, t)) IS NOT NULL
                  AND NOT has_table_privilege(format('%I.%I', $1::text, t), 'INSERT')) AS noinsert`,
      [schema, [...RANKGATE_TABLES]],
    );
    const x = r.rows[0]!;
    const why: string[] = [];
    if (x.ro === 'on') why.push('its sessions are read-only (default_transaction_read_only = on)');
    if (!x.has && !x.dbcreate) why.push(`schema "${schema}" does not exist and the role may not create it (no CREATE on the database)`);
    if (x.has && x.usage === false) why.push(`no USAGE on schema "${schema}"`);
    if (x.has && x.create === false) why.push(`no CREATE on schema "${schema}"`);
    if (x.noinsert?.length) why.push(`no INSERT on ${x.noinsert.join(', ')}`);
    if (!why.length) return null;
    return (
      `database ${describe}: role "${x.who}" cannot write rankgate's schema "${schema}" (${why.join('; ')}), and this eval would ingest its corpus there; ` +
      `set RANKGATE_DB_READONLY=1 (or the provider's autoIngest: false) to evaluate the index that exists without writing, ` +
      `or grant the role CREATE and write privileges (docs/search.md "What rankgate creates")`
    );
  } catch {
    return null;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A libpq `options` value: spaces and backslashes escaped. */
const optionValue = (v: string) => v.replace(/[\\ ]/g, (m) => '\\' + m);

export async function openDatabase(opts: OpenDatabaseOptions = {}): Promise<Db> {
  const access = opts.access ?? 'write';
  const readOnlyEnv = readOnlyByEnv(); // checked on every open: a value that is neither on nor off is exit 2
  if (access === 'write' && readOnlyEnv) {
    throw new UserError(
      'RANKGATE_DB_READONLY is set: this command writes to the database (ingest, migrations, the embedding cache) and rankgate will not; ' +
        'unset RANKGATE_DB_READONLY, or evaluate an index that already exists (provider autoIngest: false)',
    );
  }
  let db: Db;
  if (opts.pglite) db = await openPglite(opts, DEFAULT_DATA_DIR, access);
  else {
    const target = resolveDatabaseTarget({ db: opts.db, url: opts.url, dataDir: opts.dataDir });
    db = target.kind === 'postgres' ? await openServer(target.url, opts, access) : await openPglite(opts, target.dataDir, access);
  }
  try {
    if (access === 'read') await checkCurrent(db);
    else if (opts.migrate !== false) await migrate(db);
  } catch (e) {
    await db.close().catch(() => {});
    if (e instanceof UserError) throw e;
    throw new UserError(describeFault(e, { path: db.dataDir, describe: db.describe, action: 'read the database' }));
  }
  return db;
}

async function openServer(url: string, opts: OpenDatabaseOptions, access: DbAccess): Promise<Db> {
  const describe = redact(url);
  const schema = resolveSchema(opts.schema);
  const base = { connectionString: url, connectionTimeoutMillis: 10_000 };
  // one setup connection: the schema (writer), and where the vector extension lives (for the search_path)
  let searchPath: string;
  const setup = new pg.Client({ ...base, options: '-c jit=off' });
  setup.on('error', () => {});
  try {
    await setup.connect();
  } catch (e) {
    await setup.end().catch(() => {});
    const msg = e instanceof Error ? e.message : String(e);
    throw new UserError(`database ${describe} is unreachable: ${msg} (check DATABASE_URL / --db)`);
  }
  try {
    searchPath = await prepareSession((sql, params) => setup.query(sql, params), schema, access, `database ${describe}`, 'postgres');
  } catch (e) {
    if (e instanceof UserError) throw e;
    const msg = e instanceof Error ? e.message : String(e);
    throw new UserError(`database ${describe}: ${msg}`);
  } finally {
    await setup.end().catch(() => {});
  }
  // set at connection start, so no query of any pooled connection ever runs with the server's default search_path
  const options = ['-c jit=off', `-c search_path=${optionValue(searchPath)}`];
  if (access === 'read') options.push('-c default_transaction_read_only=on');
  const pool = new pg.Pool({ ...base, max: opts.poolSize ?? 4, options: options.join(' ') });
  pool.on('error', () => {}); // idle-client errors surface on the next query instead of crashing
  // A backend that dies while its client is checked out (pg_terminate_backend, server restart) makes pg emit
  // 'error' on that client after the query failed; without a listener Node crashes the whole eval. The failed
  // query already carries the error, and pg-pool drops the broken client on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  guardFaults(pool, { describe: `database ${describe}` });
  let closed = false;
  return {
    pool,
    kind: 'postgres',
    describe,
    schema,
    access,
    async close() {
      if (closed) return;
      closed = true;
      if (opts.dropSchemaOnClose) {
        await pool.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`).catch(() => {});
      }
      await pool.end();
    },
  };
}


/**
 * Create a PGlite instance with the extensions rankgate uses (vector, pg_textsearch).
 *
 * `access: 'read'` opens only a directory that is a complete rankgate database and never creates,
 * initialises or repairs anything; `'write'` (default; ingest and test fixtures) may create a fresh database in
 * a missing or empty directory, and refuses any other directory that is not a complete database. Both hold the
 * directory's lock (src/db/lock.ts) while open.
 */
export async function createPglite(
  dataDir: string,
  opts: { access?: DbAccess } = {},
): Promise<import('@electric-sql/pglite').PGlite> {
  const access = opts.access ?? 'write';
  const memory = dataDir.startsWith('memory://');
  let release: () => void = () => {};
  let created: 'dir' | 'contents' | undefined;
  if (!memory) {
    const before = inspectDataDir(dataDir);
    if (before.state !== 'complete' && !(access === 'write' && (before.state === 'missing' || before.state === 'empty'))) {
      throw new UserError(describeDataDirProblem(dataDir, before)!);
    }
    // PGlite cannot start with less than ~16 MB free ("PGlite failed to initialize properly"): say so, touching nothing
    const free = before.state === 'complete' ? freeBytes(dataDir) : undefined;
    if (free !== undefined && free < MIN_FREE_BYTES) {
      throw new UserError(
        `${dataDir}: disk full: ${(free / 1048576).toFixed(1)} MB free on its file system, the embedded database needs at least ${MIN_FREE_BYTES / 1048576} MB to start; free some space`,
      );
    }
    created = before.state === 'missing' ? 'dir' : before.state === 'empty' ? 'contents' : undefined;
    // another user's directory could be changed under rankgate: refused; this user's is made owner-only (0700) before
    // PGlite writes anything into it, whatever the umask (a directory made by an older rankgate is tightened too)
    const foreign = created === 'dir' ? undefined : dataDirOwnerProblem(dataDir);
    if (foreign) throw new UserError(foreign);
    try {
      mkdirSync(resolve(dataDir), { recursive: true, mode: DATA_DIR_MODE });
      chmodSync(resolve(dataDir), DATA_DIR_MODE);
    } catch (e) {
      throw new UserError(describeFault(e, { path: dataDir, action: 'create the data directory' }));
    }
    release = lockDataDir(dataDir);
    // looked at again under the lock: another process may have changed it meanwhile
    const now = inspectDataDir(dataDir);
    if (now.state !== 'complete' && !(access === 'write' && now.state === 'empty')) {
      release();
      throw new UserError(describeDataDirProblem(dataDir, now)!);
    }
  }
  const [{ PGlite }, { vector }, { pg_textsearch }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-pgvector'),
    import('@electric-sql/pglite-pg_textsearch'),
  ]);
  try {
    // A reader of a small index gets a buffer pool its size (PGlite zero-fills the whole pool at every start)
    const buffers = access === 'read' && !memory && created === undefined ? readerSharedBuffersMb(dataDir) : undefined;
    const startParams = buffers ? [...PGlite.defaultStartParams, '-c', `shared_buffers=${buffers}MB`] : undefined;
    const start = () =>
      withPgliteFaults(dataDir, async () => {
        const p = new PGlite(memory ? dataDir : resolve(dataDir), { extensions: { vector, pg_textsearch }, ...(startParams ? { startParams } : {}) });
        await p.waitReady;
        return p;
      });
    // A new database directory starts from the machine's copy of a just-initialised cluster when there is one,
    // unpacked into it and opened as an existing database (one PGlite start instead of initdb's 3-4 s of CPU;
    // src/db/pglite-template.ts); the first creation makes that copy. `memory://` runs initdb: an instance loaded
    // from a tarball keeps its process alive until closed (PGlite 0.5.14), and an in-memory one has no directory.
    const fresh = memory || created !== undefined;
    const template = fresh && !memory ? readTemplate() : undefined;
    let pglite: import('@electric-sql/pglite').PGlite | undefined;
    let templateFailed = false;
    if (template) {
      try {
        extractTemplate(template, dataDir);
        pglite = await start();
      } catch {
        templateFailed = true;
        removeCreated(dataDir, 'contents');
      }
    }
    if (!pglite) {
      pglite = await start();
      if (templateFailed) dropTemplate();
      if (fresh) await saveTemplate(pglite);
    }
    // PGlite's file system makes its files 0666: owner-only now, and again on close (files made meanwhile)
    if (!memory) restrictDataDir(dataDir);
    const unregister = memory ? () => {} : registerOpenDir(dataDir);
    const close = pglite.close.bind(pglite);
    pglite.close = async () => {
      unregister();
      try {
        await close();
      } catch {
        // an instance that died (WASM abort, disk full) cannot close cleanly; the lock still goes
      } finally {
        if (!memory) restrictDataDir(dataDir);
        release();
      }
    };
    return pglite;
  } catch (e) {
    // a database this call began to create and could not finish (disk full during initdb): remove what it made,
    // so the directory is missing/empty again rather than a half-initialised one every later command refuses
    if (created) removeCreated(dataDir, created);
    release();
    if (e instanceof UserError) throw e;
    throw new UserError(
      describeFault(e, { path: dataDir, action: created ? 'create the embedded database (PGlite)' : 'open the embedded database (PGlite)' }),
    );
  }
}

/**
 * shared_buffers for a process that only reads an existing database: the smallest of 16, 32, 64 MB that holds all its
 * tables and indexes (base/, system catalogs included), else PGlite's default 128 MB. PGlite allocates and zero-fills
 * the whole pool at every start (128 MB: ~0.2 s of CPU and 128 MB of memory per `rankgate search`), and a reader of a
 * small index cannot use more than the index. Writers (ingest, the provider when it may ingest) and large indexes
 * keep the default.
 */
export function readerSharedBuffersMb(dataDir: string): 16 | 32 | 64 | undefined {
  let bytes = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (bytes > 64 * 1048576) return;
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.isFile()) bytes += statSync(join(d, e.name)).size;
    }
  };
  try {
    walk(join(dataDir, 'base'));
  } catch {
    return undefined;
  }
  for (const mb of [16, 32, 64] as const) if (bytes <= mb * 1048576) return mb;
  return undefined;
}

function removeCreated(dataDir: string, what: 'dir' | 'contents'): void {
  try {
    for (const name of readdirSync(dataDir)) {
      if (name.startsWith(LOCK_PREFIX)) continue;
      rmSync(join(dataDir, name), { recursive: true, force: true });
    }
    if (what === 'dir') {
      for (const name of readdirSync(dataDir)) if (name.startsWith(LOCK_PREFIX) && !/^\.rankgate\.lock\.\d+$/.test(name)) rmSync(join(dataDir, name), { force: true });
    }
  } catch {
    // best effort
  }
}

async function openPglite(opts: OpenDatabaseOptions, dataDir: string, access: DbAccess): Promise<Db> {
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const own = !opts.pglite || opts.closeInstance !== false;
  const schema = resolveSchema(opts.schema);
  const pglite = opts.pglite ?? (await createPglite(dataDir, { access }));
  // PGlite is one session (its pg "connections" share it): the search_path and read-only flag are set on it once
  try {
    const run: Run = (sql, params) => pglite.query(sql, params) as never;
    const searchPath = await prepareSession(run, schema, access, `PGlite ${dataDir}`, 'pglite');
    await pglite.exec(`SET search_path TO ${searchPath}; SET default_transaction_read_only = ${access === 'read' ? 'on' : 'off'}`);
  } catch (e) {
    if (own) await pglite.close().catch(() => {});
    if (e instanceof UserError) throw e;
    throw new UserError(describeFault(e, { path: opts.pglite ? undefined : dataDir, describe: `PGlite ${dataDir}`, action: 'open the embedded database (PGlite)' }));
  }
  const pool = new pg.Pool({ ...(createPgConfig(pglite) as unknown as pg.PoolConfig), max: 1 });
  // pg-pool destroys a client whose query failed and connects a new one; over PGlite's single in-process
  // protocol channel the old connection's teardown interleaves with the new one, so every later query gets
  // the previous one's reply ("Received unexpected parseComplete message") and the process then crashes.
  // The client itself stays consistent after an error: keep it.
  pool.query = (async (text: string | pg.QueryConfig, values?: unknown[]) => {
    const client = await pool.connect();
    try {
      return await client.query(text as string, values);
    } finally {
      client.release();
    }
  }) as unknown as typeof pool.query;
  pool.on('error', () => {});
  const onDisk = !opts.pglite && !dataDir.startsWith('memory://');
  guardFaults(pool, { ...(onDisk ? { path: dataDir } : {}), describe: `PGlite ${dataDir}` });
  let closed = false;
  return {
    pool,
    kind: 'pglite',
    describe: opts.pglite ? 'PGlite (in-process instance)' : `PGlite ${dataDir}`,
    schema,
    pglite,
    ...(onDisk ? { dataDir } : {}),
    access,
    async close() {
      if (closed) return;
      closed = true;
      await pool.end().catch(() => {});
      if (own && !pglite.closed) await pglite.close();
      else if (!pglite.closed) await pglite.exec('RESET search_path; RESET default_transaction_read_only').catch(() => {});
    },
  };
}

/**
 * Damaged files and full disks surface as query errors ("invalid page in block 0 of relation base/5/16835",
 * "could not extend file … No space left on device"): turn those — and only those — into one-line UserErrors
 * naming the database and the cause (src/db/faults.ts). Every other error passes through unchanged (lost
 * connections, SQL errors: their callers handle them).
 */
function guardFaults(pool: pg.Pool, ctx: { path?: string; describe: string }): void {
  const map = (e: unknown): unknown =>
    !(e instanceof UserError) && faultCauseAt(e, ctx.path) ? new UserError(describeFault(e, { ...ctx, action: 'read or write the index' })) : e;
  const wrapQuery = <T extends { query: (...a: never[]) => unknown }>(target: T): void => {
    const orig = target.query.bind(target) as (...a: unknown[]) => unknown;
    (target as unknown as { query: (...a: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const last = args[args.length - 1];
      if (typeof last === 'function') return orig(...args); // callback style: untouched
      const r = orig(...args) as Promise<unknown> | unknown;
      return r && typeof (r as Promise<unknown>).then === 'function' ? (r as Promise<unknown>).catch((e: unknown) => Promise.reject(map(e))) : r;
    };
  };
  wrapQuery(pool);
  const wrapped = new WeakSet<object>();
  pool.on('acquire', (client) => {
    if (wrapped.has(client)) return;
    wrapped.add(client);
    wrapQuery(client);
  });
}

function migrationFiles(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort();
}

/** Does `schema.name` exist (a table or an index)? Qualified: never found through the search_path elsewhere. */
async function relationExists(run: Pick<pg.Pool, 'query'>, schema: string, name: string): Promise<boolean> {
  const r = await run.query<{ t: string | null }>(`SELECT to_regclass(format('%I.%I', $1::text, $2::text))::text AS t`, [schema, name]);
  return !!r.rows[0]?.t;
}

/**
 * Tables of an earlier rankgate in `public` (it wrote there before rankgate had a schema of its own): the names of
 * RANKGATE_TABLES present there when `public.rankgate_migrations` is (a team's own `public.documents` without
 * rankgate's migration ledger is not rankgate's, and is never looked at again); [] otherwise.
 */
async function legacyPublicTables(db: Db, run: Pick<pg.Pool, 'query'> = db.pool): Promise<string[]> {
  if (db.schema === 'public' || (await relationExists(run, db.schema, 'rankgate_migrations'))) return [];
  if (!(await relationExists(run, 'public', 'rankgate_migrations'))) return [];
  const out: string[] = [];
  for (const t of RANKGATE_TABLES) if (await relationExists(run, 'public', t)) out.push(t);
  return out;
}

/** The one line for a server whose `public` holds an earlier rankgate's tables (never moved on a server by itself). */
function legacyServerMessage(db: Pick<Db, 'describe' | 'schema'>, tables: string[]): string {
  return (
    `database ${db.describe}: schema public holds the tables of an earlier rankgate (${tables.join(', ')}); ` +
    `rankgate now keeps its tables in schema "${db.schema}" and never touches public on a server: ` +
    `set RANKGATE_DB_SCHEMA=public to keep using them where they are, or move them once (ALTER TABLE public.<table> SET SCHEMA ${ident(db.schema)} ` +
    `for each; docs/search.md "Databases of an earlier rankgate")`
  );
}

/**
 * A reader's check (writes nothing): rankgate's tables exist in its schema and every migration of this version is
 * applied.
 */
export async function checkCurrent(db: Db): Promise<void> {
  const where = db.dataDir ?? db.describe;
  if (!(await relationExists(db.pool, db.schema, 'rankgate_migrations'))) {
    const legacy = await legacyPublicTables(db);
    if (legacy.length && db.kind === 'postgres') throw new UserError(legacyServerMessage(db, legacy));
    if (legacy.length) {
      throw new UserError(
        `${db.dataDir ? where : `database ${where}`}: built by an earlier rankgate (its tables are in schema public, not "${db.schema}"); ` +
          `run rankgate ingest${db.dataDir ? ` --db ${where}` : ''} once to move them (read-only commands never change a database)`,
      );
    }
    throw new UserError(
      db.dataDir
        ? `${where}: not a rankgate database: it holds no rankgate tables; build an index with: rankgate ingest --db ${where}`
        : `database ${where} holds no rankgate index (no rankgate tables in schema "${db.schema}"); build one with: rankgate ingest` +
            (db.kind === 'postgres' ? ' (or set RANKGATE_DB_SCHEMA to the schema that holds it)' : ''),
    );
  }
  const done = new Set((await db.pool.query<{ name: string }>(`SELECT name FROM ${ident(db.schema)}.rankgate_migrations`)).rows.map((r) => r.name));
  const pending = migrationFiles().filter((f) => !done.has(f));
  if (pending.length) {
    throw new UserError(
      `${db.dataDir ? where : `database ${where}`}: built by an older rankgate (not applied yet: ${pending.join(', ')}); ` +
        `run rankgate ingest${db.dataDir ? ` --db ${where}` : ''} once to upgrade it (read-only commands never change a database)`,
    );
  }
}

/**
 * Apply src/db/migrations/*.sql in name order, once each, in one transaction per file, in rankgate's schema
 * (`{{schema}}` in a file is its name, for statements that must not find a same-named object through the search_path).
 * An embedded database of an earlier rankgate (tables in public) is moved into the schema first; a server's is refused.
 */
export async function migrate(db: Db): Promise<string[]> {
  const files = migrationFiles();
  const client = await db.pool.connect();
  const applied: string[] = [];
  // On a shared server the whole set-up is one critical section per schema: two evals (or two columns of one) that set
  // up the same schema at once raced on CREATE … IF NOT EXISTS, which is not safe under concurrency (a duplicate key
  // in pg_type). A session lock, released below; each file's transaction also takes its own.
  const setupLock = db.kind === 'postgres' ? [db.schema, 'rankgate_setup'] : null;
  try {
    if (setupLock) await client.query('SELECT pg_advisory_lock(hashtext($1::text || $2::text))', setupLock);
    const legacy = await legacyPublicTables(db, client);
    if (legacy.length && db.kind === 'postgres') throw new UserError(legacyServerMessage(db, legacy));
    if (legacy.length) await moveLegacyTables(db, client, legacy);
    await ensureVector(db, client);
    if (db.kind === 'pglite') await client.query(`CREATE EXTENSION IF NOT EXISTS pg_textsearch SCHEMA ${ident(db.schema)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${ident(db.schema)}.rankgate_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const file of files) {
      await client.query('BEGIN');
      try {
        // Serialise concurrent migrators on a shared server (per schema).
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1::text || $2::text))', [db.schema, 'rankgate_migrations']);
        const done = await client.query(`SELECT 1 FROM ${ident(db.schema)}.rankgate_migrations WHERE name = $1`, [file]);
        if (done.rowCount === 0) {
          await client.query(readFileSync(join(MIGRATIONS_DIR, file), 'utf8').replaceAll('{{schema}}', ident(db.schema)));
          await client.query(`INSERT INTO ${ident(db.schema)}.rankgate_migrations (name) VALUES ($1)`, [file]);
          applied.push(file);
        }
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        const msg = e instanceof Error ? e.message : String(e);
        throw new UserError(`database ${db.describe}: migration ${file} failed: ${msg}`);
      }
    }
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const denied = deniedWhat(msg);
    if (denied && !/cannot create it/.test(msg)) {
      throw new UserError(
        `database ${db.describe}: this role cannot write rankgate's schema "${db.schema}" (${denied}); ingesting needs CREATE and write privileges there ` +
          `(docs/search.md "What rankgate creates"); to evaluate an index that already exists with this role, set RANKGATE_DB_READONLY=1 or the provider's autoIngest: false`,
      );
    }
    if (e instanceof UserError) throw e;
    throw new UserError(`database ${db.describe}: cannot set up rankgate's schema "${db.schema}": ${msg}`);
  } finally {
    if (setupLock) await client.query('SELECT pg_advisory_unlock(hashtext($1::text || $2::text))', setupLock).catch(() => {});
    client.release();
  }
  return applied;
}

/** "permission denied for schema rankgate" out of a (possibly already wrapped) error text; undefined when it is not one. */
function deniedWhat(msg: string): string | undefined {
  const all = msg.match(/permission denied (?:for|to) [^|()]+/gi);
  return all?.[all.length - 1]?.trim();
}

/** An embedded database of an earlier rankgate: its tables (with their indexes and sequences) moved from public, in one transaction. */
async function moveLegacyTables(db: Db, client: pg.PoolClient, tables: string[]): Promise<void> {
  await client.query('BEGIN');
  try {
    for (const t of tables) await client.query(`ALTER TABLE public.${t} SET SCHEMA ${ident(db.schema)}`);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  }
  process.stderr.write(`rankgate: ${db.dataDir ?? db.describe}: moved the tables of an earlier rankgate from schema public into "${db.schema}"\n`);
}

/**
 * pgvector is one extension per database. Found in any schema: used from there (that schema follows rankgate's on the
 * search_path). Absent: created inside rankgate's schema (nothing outside it), which takes a superuser (pgvector
 * 0.8 is not a trusted extension); any other role is refused with one line saying what to ask an administrator for.
 */
async function ensureVector(db: Db, client: pg.PoolClient): Promise<void> {
  const have = await client.query(`SELECT extversion FROM pg_extension WHERE extname = 'vector'`);
  if (have.rowCount) return;
  const avail = await client.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`);
  if (!avail.rowCount) {
    throw new UserError(
      `database ${db.describe}: the pgvector extension ("vector") is not installed on this server; ` +
        `install pgvector (e.g. .ci/setup-postgres.sh builds 0.8.0) or unset DATABASE_URL to use the embedded PGlite`,
    );
  }
  try {
    await client.query(`CREATE EXTENSION IF NOT EXISTS vector SCHEMA ${ident(db.schema)}`);
  } catch (e) {
    const raw = e instanceof Error ? e.message : String(e);
    const msg = deniedWhat(raw) ? `${deniedWhat(raw)}: only a superuser can` : raw;
    throw new UserError(
      `database ${db.describe}: pgvector is available but this role cannot create it (${msg}); ` +
        `ask an administrator to run: CREATE EXTENSION vector SCHEMA ${ident(db.schema)} (or in any schema) in this database once`,
    );
  }
}

// ---------------------------------------------------------------- text-search configuration

/** Configs rankgate maps languages to; anything unavailable falls back to 'simple' on every engine. */
export const TEXT_CONFIGS = ['english', 'spanish', 'hindi', 'simple'] as const;
const LANGUAGE_CONFIG: Record<string, string> = { en: 'english', es: 'spanish', hi: 'hindi' };

const configCache = new WeakMap<pg.Pool, Promise<Set<string>>>();

/** Text-search configs available on this engine (cached per pool). */
export function availableTextConfigs(db: Db): Promise<Set<string>> {
  let p = configCache.get(db.pool);
  if (!p) {
    p = db.pool
      .query<{ cfgname: string }>('SELECT cfgname FROM pg_catalog.pg_ts_config')
      .then((r) => new Set(r.rows.map((x) => x.cfgname)));
    configCache.set(db.pool, p);
  }
  return p;
}

/**
 * The regconfig for a language tag ('en', 'es-MX', 'hi') or an explicit config name: english, spanish,
 * hindi, else simple. A config this engine lacks falls back to 'simple' (the same rule on both engines).
 */
export function textConfigFor(languageOrConfig: string | undefined, available: Set<string>): string {
  const v = (languageOrConfig ?? 'en').toLowerCase();
  let cfg: string;
  if ((TEXT_CONFIGS as readonly string[]).includes(v)) cfg = v;
  else cfg = LANGUAGE_CONFIG[v.split(/[-_]/)[0]] ?? 'simple';
  return available.has(cfg) ? cfg : 'simple';
}

/** Load a `.sql` file that sits beside a module. */
export function loadSql(moduleUrl: string, name: string): string {
  return readFileSync(join(dirname(fileURLToPath(moduleUrl)), name), 'utf8');
}
