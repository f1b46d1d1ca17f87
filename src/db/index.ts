/**
 * Storage: one SQL dialect and one migration set, driven through `pg` on both engines.
 *
 * - `url` (or `DATABASE_URL`) set -> a Postgres server through `pg.Pool` (pgvector required).
 * - otherwise -> embedded PGlite (Postgres 18 in WASM, with pgvector and pg_textsearch) in `dataDir`
 *   (default `.rankgate/db`, or `memory://`), wrapped by `createPgConfig` so `pg` sees a server
 *   (pool size 1; types come back exactly as from a server).
 *
 * Sessions are configured the same way on both: `jit=off` on the server (one query spent 300 ms in JIT),
 * an optional private `schema` first on the search_path (tests isolate themselves on a shared server).
 */
import { existsSync, readFileSync, readdirSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { UserError } from '../errors.ts';

export type DbKind = 'pglite' | 'postgres';

export interface Db {
  pool: pg.Pool;
  kind: DbKind;
  /** Human-readable target, credentials removed: 'postgres://host:port/db' or 'PGlite .rankgate/db'. */
  describe: string;
  /** Schema holding rankgate's tables (undefined: the server's default search_path). */
  schema?: string;
  /** The PGlite instance when kind = 'pglite' (for clone(), dumpDataDir()). */
  pglite?: import('@electric-sql/pglite').PGlite;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL. Default: process.env.DATABASE_URL; if neither, PGlite. */
  url?: string;
  /** PGlite data directory (default `.rankgate/db`); 'memory://' for an in-memory database. */
  dataDir?: string;
  /** Use an existing PGlite instance (e.g. a clone of a test fixture). The caller keeps ownership unless closeInstance. */
  pglite?: import('@electric-sql/pglite').PGlite;
  /** Close the given `pglite` instance on close() (default true). */
  closeInstance?: boolean;
  /** Server only: create/use this schema (first on the search_path). */
  schema?: string;
  /** Server only: DROP SCHEMA ... CASCADE on close() (tests). */
  dropSchemaOnClose?: boolean;
  /** Run migrations (default true). */
  migrate?: boolean;
  /** Server pool size (default 4). */
  poolSize?: number;
}

export const DEFAULT_DATA_DIR = '.rankgate/db';
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
  const url = opts.pglite ? undefined : (opts.url ?? process.env.DATABASE_URL ?? undefined);
  const db = url ? await openServer(url, opts) : await openPglite(opts);
  if (opts.migrate !== false) {
    try {
      await migrate(db);
    } catch (e) {
      await db.close().catch(() => {});
      throw e;
    }
  }
  return db;
}

async function openServer(url: string, opts: OpenDatabaseOptions): Promise<Db> {
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
  try {
    const c = await pool.connect();
    try {
      if (schema) await c.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
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

/** Create a PGlite instance with the extensions rankgate uses (vector, pg_textsearch). */
export async function createPglite(dataDir: string): Promise<import('@electric-sql/pglite').PGlite> {
  const [{ PGlite }, { vector }, { pg_textsearch }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-pgvector'),
    import('@electric-sql/pglite-pg_textsearch'),
  ]);
  const memory = dataDir.startsWith('memory://');
  let release: () => void = () => {};
  try {
    if (!memory) {
      if (existsSync(dataDir) && !statSync(dataDir).isDirectory()) throw new Error('it is a file, not a directory');
      mkdirSync(resolve(dataDir), { recursive: true });
      release = lockDataDir(dataDir);
    }
    const pglite = new PGlite(memory ? dataDir : resolve(dataDir), {
      extensions: { vector, pg_textsearch },
    });
    await pglite.waitReady;
    const close = pglite.close.bind(pglite);
    pglite.close = async () => {
      try {
        await close();
      } finally {
        release();
      }
    };
    return pglite;
  } catch (e) {
    release();
    if (e instanceof UserError) throw e;
    const msg = e instanceof Error ? e.message : String(e);
    throw new UserError(`embedded database (PGlite) at ${dataDir} could not be opened: ${msg}`);
  }
}

// ---------------------------------------------------------------- one process per PGlite data directory

/**
 * PGlite holds the whole database in one process's memory: a second process opening the same directory
 * would write over it unseen. `<dataDir>/.rankgate.lock` (created with O_EXCL, holding the PID) admits one
 * process; a lock whose PID is gone (or that cannot be read) is stale and taken over. Opening the same
 * directory again in the same process shares the lock (reference-counted). Released on close and at exit.
 */
export const LOCK_FILE = '.rankgate.lock';
const heldLocks = new Map<string, { refs: number; path: string }>();
let exitHookInstalled = false;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function ownLock(path: string): boolean {
  try {
    return JSON.parse(readFileSync(path, 'utf8')).pid === process.pid;
  } catch {
    return false;
  }
}

export function lockDataDir(dataDir: string): () => void {
  const abs = resolve(dataDir);
  const path = join(abs, LOCK_FILE);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    const h = heldLocks.get(abs);
    if (h && --h.refs > 0) return;
    heldLocks.delete(abs);
    if (ownLock(path)) rmSync(path, { force: true });
  };
  const held = heldLocks.get(abs);
  if (held) {
    held.refs++;
    return release;
  }
  const info = JSON.stringify({ pid: process.pid, command: ['rankgate', ...process.argv.slice(2)].join(' ').slice(0, 200), started: new Date().toISOString() });
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(path, info, { flag: 'wx' });
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' || attempt >= 3) {
        throw new UserError(`embedded database (PGlite) at ${dataDir}: cannot create its lock file ${path} (${code ?? (e as Error).message})`);
      }
      let owner: { pid?: unknown; command?: unknown; started?: unknown } | undefined;
      try {
        owner = JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        owner = undefined; // garbled or vanished: stale
      }
      const pid = Number(owner?.pid);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
        throw new UserError(
          `embedded database (PGlite) at ${dataDir} is in use by process ${pid} (${String(owner?.command ?? 'unknown command')}, since ${String(owner?.started ?? '?')}); ` +
            `PGlite admits one process at a time: wait for it or stop it, or use a Postgres server (DATABASE_URL) to ingest while an eval runs`,
        );
      }
      rmSync(path, { force: true }); // stale: its process is gone
    }
  }
  heldLocks.set(abs, { refs: 1, path });
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const h of heldLocks.values()) if (ownLock(h.path)) rmSync(h.path, { force: true });
    });
  }
  return release;
}

async function openPglite(opts: OpenDatabaseOptions): Promise<Db> {
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const dataDir = opts.dataDir ?? DEFAULT_DATA_DIR;
  const own = !opts.pglite || opts.closeInstance !== false;
  const pglite = opts.pglite ?? (await createPglite(dataDir));
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
  let closed = false;
  return {
    pool,
    kind: 'pglite',
    describe: opts.pglite ? 'PGlite (in-process instance)' : `PGlite ${dataDir}`,
    pglite,
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
      if (own && !pglite.closed) await pglite.close();
    },
  };
}

/** Apply src/db/migrations/*.sql in name order, once each, in one transaction per file. */
export async function migrate(db: Db): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith('.sql'))
    .sort();
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
