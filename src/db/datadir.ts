/**
 * Is this directory a complete PGlite database? Checked from the files alone, before PGlite is started:
 * PGlite re-initialises a directory it does not recognise (a missing PG_VERSION meant a silent initdb over the
 * user's index), so nothing may open a directory that fails this check — readers refuse it, the writer only
 * creates a database in a missing or empty directory.
 */
import { chmodSync, existsSync, lstatSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isLockFile } from './lock.ts';

/** The PostgreSQL major version of the bundled PGlite (its PG_VERSION file). */
export const PGLITE_PG_VERSION = '18';

/** What initdb leaves in a data directory and Postgres cannot start without. */
const REQUIRED: { path: string; dir: boolean }[] = [
  { path: 'PG_VERSION', dir: false },
  { path: 'global/pg_control', dir: false },
  { path: 'global/pg_filenode.map', dir: false },
  { path: 'base', dir: true },
  { path: 'pg_wal', dir: true },
  { path: 'pg_xact', dir: true },
  { path: 'pg_multixact', dir: true },
  { path: 'postgresql.conf', dir: false },
];

export type DataDirState =
  | { state: 'missing' }
  | { state: 'empty' }
  | { state: 'not-a-directory' }
  | { state: 'complete' }
  | { state: 'incomplete'; missing: string }
  | { state: 'foreign'; reason: string }
  | { state: 'damaged'; file: string; reason: string };

export function inspectDataDir(dir: string): DataDirState {
  let st;
  try {
    st = statSync(dir);
  } catch {
    return { state: 'missing' };
  }
  if (!st.isDirectory()) return { state: 'not-a-directory' };
  const entries = readdirSync(dir).filter((n) => !isLockFile(n));
  if (!entries.length) return { state: 'empty' };
  for (const r of REQUIRED) {
    const p = join(dir, r.path);
    if (!existsSync(p)) return { state: 'incomplete', missing: `${r.path} is missing` };
    const s = statSync(p);
    if (r.dir && !s.isDirectory()) return { state: 'incomplete', missing: `${r.path} is not a directory` };
    if (!r.dir && !s.isFile()) return { state: 'incomplete', missing: `${r.path} is not a file` };
    if (!r.dir && s.size === 0) return { state: 'incomplete', missing: `${r.path} is empty` };
  }
  const version = readFileSync(join(dir, 'PG_VERSION'), 'utf8').trim();
  if (version !== PGLITE_PG_VERSION) {
    return {
      state: 'foreign',
      reason: /^\d+$/.test(version)
        ? `PG_VERSION says PostgreSQL ${version}, rankgate's embedded database is PostgreSQL ${PGLITE_PG_VERSION}`
        : `PG_VERSION is damaged (${JSON.stringify(version.slice(0, 20))})`,
    };
  }
  const control = readFileSync(join(dir, 'global/pg_control'));
  if (control.length !== 8192) return { state: 'damaged', file: 'global/pg_control', reason: `${control.length} bytes, expected 8192` };
  if (!controlCrcMatches(control)) return { state: 'damaged', file: 'global/pg_control', reason: 'its checksum does not match its contents' };
  return { state: 'complete' };
}

// CRC-32C (Castagnoli), as Postgres computes it over pg_control
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/**
 * pg_control ends its ControlFileData with a CRC-32C of everything before it. The struct's size differs
 * between Postgres versions, so look for the offset at which the stored CRC matches the bytes before it (a
 * chance match on a damaged file is about 1 in 17 million); none -> the file is damaged.
 */
export function controlCrcMatches(buf: Buffer): boolean {
  let crc = 0xffffffff;
  for (let n = 0; n < 1024 && n + 4 <= buf.length; n++) {
    if (n >= 16 && n % 4 === 0 && ((crc ^ 0xffffffff) >>> 0) === buf.readUInt32LE(n)) return true;
    crc = CRC_TABLE[(crc ^ buf[n]!) & 0xff]! ^ (crc >>> 8);
  }
  return false;
}

/** One line for a directory that fails the check: "DIR: not a complete rankgate database: WHY". */
export function describeDataDirProblem(dir: string, s: DataDirState): string | undefined {
  switch (s.state) {
    case 'complete':
      return undefined;
    case 'missing':
      return `${dir}: no rankgate database here (the directory does not exist); build one with: rankgate ingest --db ${dir}`;
    case 'empty':
      return `${dir}: no rankgate database here (the directory is empty); build one with: rankgate ingest --db ${dir}`;
    case 'not-a-directory':
      return `${dir}: embedded database (PGlite) data directory expected, but it is a file (give a directory, or a postgres:// URL)`;
    case 'incomplete':
      return `${dir}: not a complete rankgate database: ${s.missing}`;
    case 'foreign':
      return `${dir}: not a rankgate database: ${s.reason}`;
    case 'damaged':
      return `${dir}: file damaged: ${s.file} (${s.reason}); the database cannot be opened: restore the directory from a copy or rebuild the index with rankgate ingest into a new directory`;
  }
}

// ------------------------------------------------------------------------------------------ owner-only files

/** Folders of a data directory: owner only (Postgres refuses a group- or world-writable data directory). */
export const DATA_DIR_MODE = 0o700;
/** Files of a data directory: owner only. PGlite's file system makes every file it creates 0666 whatever the umask. */
export const DATA_FILE_MODE = 0o600;

/**
 * One line when a data directory belongs to another user (who could change the index under rankgate: truncate
 * global/pg_control, rewrite a table file); undefined when it is this user's (or there is no such directory).
 */
export function dataDirOwnerProblem(dir: string): string | undefined {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (uid === undefined) return undefined;
  let st;
  try {
    st = statSync(dir);
  } catch {
    return undefined;
  }
  if (st.uid === uid) return undefined;
  return `${dir}: the data directory belongs to user ${st.uid}, not to this user (${uid}): that account could change the index under rankgate; use a directory of your own (rankgate makes it owner-only, 0700)`;
}

/**
 * Make a data directory owner-only, whatever the umask and whoever made it: folders 0700, files 0600 (symbolic links
 * and entries of other users are left alone). Called when a database is created or opened and when it is closed, so
 * the files PGlite made meanwhile (0666) never stay open to others. Best effort: a file that vanished is skipped.
 */
export function restrictDataDir(dir: string): void {
  const walk = (d: string, depth: number): void => {
    fix(d, DATA_DIR_MODE);
    if (depth > 16) return;
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      let st;
      try {
        st = lstatSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(p, depth + 1);
      else if (st.isFile() && (st.mode & 0o777) !== DATA_FILE_MODE) fix(p, DATA_FILE_MODE);
    }
  };
  const fix = (p: string, mode: number): void => {
    try {
      chmodSync(p, mode);
    } catch {
      /* vanished, or not ours */
    }
  };
  walk(dir, 0);
}
