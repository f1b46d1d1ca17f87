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
import { readFileSync, readdirSync, mkdirSync } from 'node:fs';
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
  if (!dataDir.startsWith('memory://')) mkdirSync(resolve(dataDir), { recursive: true });
  try {
    const pglite = new PGlite(dataDir.startsWith('memory://') ? dataDir : resolve(dataDir), {
      extensions: { vector, pg_textsearch },
    });
    await pglite.waitReady;
    return pglite;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new UserError(`embedded database (PGlite) at ${dataDir} could not be opened: ${msg}`);
  }
}

async function openPglite(opts: OpenDatabaseOptions): Promise<Db> {
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const dataDir = opts.dataDir ?? DEFAULT_DATA_DIR;
  const own = !opts.pglite || opts.closeInstance !== false;
  const pglite = opts.pglite ?? (await createPglite(dataDir));
  const pool = new pg.Pool({ ...(createPgConfig(pglite) as unknown as pg.PoolConfig), max: 1 });
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
