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
 * Sessions are configured the same way on both: `jit=off` on the server (one query spent 300 ms in JIT),
 * an optional private `schema` first on the search_path (tests isolate themselves on a shared server).
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
  /** Schema holding rankgate's tables (undefined: the server's default search_path). */
  schema?: string;
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
  /** Server only: create/use this schema (first on the search_path). */
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

function checkSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new UserError(`database schema "${schema}": expected lowercase letters, digits and _ (max 63)`);
  }
  return schema;
}

export async function openDatabase(opts: OpenDatabaseOptions = {}): Promise<Db> {
  const access = opts.access ?? 'write';
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
  const schema = opts.schema ? checkSchemaName(opts.schema) : undefined;
  const options = ['-c jit=off'];
  if (schema) options.push(`-c search_path=${schema},public`);
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 4,
    options: options.join(' '),
    connectionTimeoutMillis: 10_000,
  });
  pool.on('error', () => {}); // idle-client errors surface on the next query instead of crashing
  // A backend that dies while its client is checked out (pg_terminate_backend, server restart) makes pg emit
  // 'error' on that client after the query failed; without a listener Node crashes the whole eval. The failed
  // query already carries the error, and pg-pool drops the broken client on release.
  pool.on('connect', (client) => client.on('error', () => {}));
  guardFaults(pool, { describe: `database ${describe}` });
  try {
    const c = await pool.connect();
    try {
      if (schema && access === 'write') await c.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    } finally {
      c.release();
    }
  } catch (e) {
    await pool.end().catch(() => {});
    const msg = e instanceof Error ? e.message : String(e);
    throw new UserError(`database ${describe} is unreachable: ${msg} (check DATABASE_URL / --db)`);
  }
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
      if (schema && opts.dropSchemaOnClose) {
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
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
  const pglite = opts.pglite ?? (await createPglite(dataDir, { access }));
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
    pglite,
    ...(onDisk ? { dataDir } : {}),
    access,
    async close() {
      if (closed) return;
      closed = true;
      await pool.end().catch(() => {});
      if (own && !pglite.closed) await pglite.close();
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

/**
 * A reader's check (writes nothing): rankgate's tables exist and every migration of this version is applied.
 */
export async function checkCurrent(db: Db): Promise<void> {
  const where = db.dataDir ?? db.describe;
  const has = await db.pool.query<{ t: string | null }>(`SELECT to_regclass('rankgate_migrations')::text AS t`);
  if (!has.rows[0]?.t) {
    throw new UserError(
      db.dataDir
        ? `${where}: not a rankgate database: it holds no rankgate tables; build an index with: rankgate ingest --db ${where}`
        : `database ${where} holds no rankgate index (no rankgate tables); build one with: rankgate ingest`,
    );
  }
  const done = new Set((await db.pool.query<{ name: string }>('SELECT name FROM rankgate_migrations')).rows.map((r) => r.name));
  const pending = migrationFiles().filter((f) => !done.has(f));
  if (pending.length) {
    throw new UserError(
      `${db.dataDir ? where : `database ${where}`}: built by an older rankgate (not applied yet: ${pending.join(', ')}); ` +
        `run rankgate ingest${db.dataDir ? ` --db ${where}` : ''} once to upgrade it (read-only commands never change a database)`,
    );
  }
}

/** Apply src/db/migrations/*.sql in name order, once each, in one transaction per file. */
export async function migrate(db: Db): Promise<string[]> {
  const files = migrationFiles();
  const client = await db.pool.connect();
  const applied: string[] = [];
  try {
    await ensureVector(db, client);
    if (db.kind === 'pglite') await client.query('CREATE EXTENSION IF NOT EXISTS pg_textsearch');
    await client.query(
      `CREATE TABLE IF NOT EXISTS rankgate_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    for (const file of files) {
      await client.query('BEGIN');
      try {
        // Serialise concurrent migrators on a shared server (per schema).
        await client.query('SELECT pg_advisory_xact_lock(hashtext(current_schema() || $1))', ['rankgate_migrations']);
        const done = await client.query('SELECT 1 FROM rankgate_migrations WHERE name = $1', [file]);
        if (done.rowCount === 0) {
          await client.query(readFileSync(join(MIGRATIONS_DIR, file), 'utf8'));
          await client.query('INSERT INTO rankgate_migrations (name) VALUES ($1)', [file]);
          applied.push(file);
        }
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        const msg = e instanceof Error ? e.message : String(e);
        throw new UserError(`database ${db.describe}: migration ${file} failed: ${msg}`);
      }
    }
  } finally {
    client.release();
  }
  return applied;
}

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
    await client.query('CREATE EXTENSION IF NOT EXISTS vector');
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new UserError(
      `database ${db.describe}: pgvector is available but "CREATE EXTENSION vector" failed (${msg}); ` +
        `ask an administrator to run it in this database`,
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
