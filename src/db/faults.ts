/**
 * Damaged disks and damaged indexes, in plain words — the ONE place that maps what PGlite (Postgres in WASM),
 * a Postgres server and the file system throw to a cause a person can act on:
 *
 *   disk full        ENOSPC, "No space left on device", "could not extend file", PGlite's start-up failure
 *                    when the disk has no room
 *   file damaged     Postgres "invalid page", "could not read block", checksum / control file errors, WASM
 *                    aborts and out-of-bounds accesses while reading a data file
 *   permission       EACCES / EPERM / EROFS
 *
 * Every message is one line naming the path (or database) and the cause; no stack, no "[object Object]".
 */

import { statfsSync } from 'node:fs';

/** Below this much free space PGlite cannot start (it fails with "PGlite failed to initialize properly") and an
 *  ingest can no longer grow its write-ahead log (16 MB segments). */
export const MIN_FREE_BYTES = 16 * 1024 * 1024;

/** Free bytes on the file system holding `dir` (undefined when it cannot be asked). */
export function freeBytes(dir: string): number | undefined {
  try {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return undefined;
  }
}

/** PGlite data directories open in this process (a failure with no clear cause is checked against their disks). */
const openDirs = new Set<string>();
export function registerOpenDir(dir: string): () => void {
  openDirs.add(dir);
  return () => openDirs.delete(dir);
}

/** The open data directories whose file system is (nearly) full. */
export function fullDisks(): { dir: string; free: number }[] {
  const out: { dir: string; free: number }[] = [];
  for (const dir of openDirs) {
    const free = freeBytes(dir);
    if (free !== undefined && free < MIN_FREE_BYTES) out.push({ dir, free });
  }
  return out;
}

export function openDataDirs(): string[] {
  return [...openDirs];
}

export interface FaultContext {
  /** The PGlite data directory (when there is one). */
  path?: string;
  /** The database as described to people (server URL without credentials, 'PGlite DIR'). */
  describe?: string;
  /** What was being done: 'open the embedded database (PGlite)', 'write the index', … */
  action?: string;
}

/** Text of anything thrown: Error message (+ cause), a PGlite/pg error object's fields, or JSON of an object. */
export function errorText(e: unknown): string {
  if (e === null || e === undefined) return String(e);
  if (typeof e === 'string') return e;
  if (e instanceof Error) {
    const parts = [e.message];
    const x = e as Error & { code?: unknown; detail?: unknown; cause?: unknown; errno?: unknown };
    if (typeof x.code === 'string' || typeof x.code === 'number') parts.push(`code ${x.code}`);
    if (typeof x.detail === 'string') parts.push(x.detail);
    if (x.cause !== undefined && x.cause !== e) parts.push(errorText(x.cause));
    return parts.filter(Boolean).join(' | ');
  }
  if (typeof e === 'object') {
    const o = e as Record<string, unknown>;
    const fields = ['message', 'code', 'errno', 'name', 'detail', 'status'].filter((k) => o[k] !== undefined).map((k) => `${k} ${String(o[k])}`);
    if (fields.length) return fields.join(' | ');
    try {
      return JSON.stringify(e).slice(0, 300);
    } catch {
      return Object.prototype.toString.call(e);
    }
  }
  return String(e);
}

export type FaultCause = 'disk-full' | 'damaged' | 'permission' | 'read-only-fs';

const DISK_FULL = /ENOSPC|No space left on device|could not extend file|disk full|errno 28\b|code 28\b|\bQuotaExceeded/i;
const DAMAGED =
  /invalid page|could not read block|could not read file|could not open file|invalid checksum|checksum mismatch|incorrect checksum|control file|pg_control|invalid magic number|could not locate a valid checkpoint|invalid memory alloc request|unexpected zero page|invalid resource manager|Aborted\(|RuntimeError|memory access out of bounds|unreachable executed|index out of bounds|table index is out of bounds|divide by zero|invalid record length|corrupt|damaged|XX001|XX002|missing chunk number|unexpected data beyond EOF|could not access status of transaction|failed to initialize properly/i;
const PERMISSION = /EACCES|EPERM|permission denied|Operation not permitted/i;
const READ_ONLY = /EROFS|read-only file system/i;

/** The cause of a database / file-system failure, when it is one of the damaged-disk kinds. */
/** Emscripten's file-system errors (PGlite's NODEFS) carry WASI errno numbers, not names. */
const WASI_ERRNO: Record<number, FaultCause> = { 51: 'disk-full', 2: 'permission', 63: 'permission', 69: 'read-only-fs', 29: 'damaged' };

export function faultCause(e: unknown): FaultCause | undefined {
  const o = e as { name?: unknown; errno?: unknown } | null;
  if (o && typeof o === 'object' && o.name === 'ErrnoError' && typeof o.errno === 'number' && WASI_ERRNO[o.errno]) return WASI_ERRNO[o.errno];
  const text = errorText(e);
  const wasi = /errno (\d+) \| name ErrnoError/.exec(text);
  if (wasi && WASI_ERRNO[Number(wasi[1])]) return WASI_ERRNO[Number(wasi[1])];
  if (DISK_FULL.test(text)) return 'disk-full';
  if (READ_ONLY.test(text)) return 'read-only-fs';
  if (PERMISSION.test(text)) return 'permission';
  if (DAMAGED.test(text)) return 'damaged';
  return undefined;
}

export function isDatabaseFault(e: unknown): boolean {
  return faultCause(e) !== undefined;
}

/**
 * The cause of an error on an open PGlite directory: what the error says, else "disk full" when the directory's
 * disk has (nearly) no room left — PGlite reports a failed WAL write as a PANIC with unrelated follow-up errors
 * ("XLogBeginInsert was already called") or none at all.
 */
export function faultCauseAt(e: unknown, path: string | undefined): FaultCause | undefined {
  const c = faultCause(e);
  if (c || !path) return c;
  const free = freeBytes(path);
  if (free !== undefined && free < MIN_FREE_BYTES) return 'disk-full';
  return undefined;
}

/** Postgres names the damaged file in its messages ("… of relation base/5/16390", "… file \"global/pg_control\""). */
function damagedFile(text: string): string | undefined {
  const rel = /relation "?((?:base|global|pg_tblspc)\/[\w/.]+)/.exec(text) ?? /file "([^"]+)"/.exec(text);
  return rel?.[1];
}

/** One line: "<where>: <cause in plain words>: <detail>", never a stack. */
export function describeFault(e: unknown, ctx: FaultContext = {}): string {
  const where = ctx.path ?? ctx.describe ?? 'database';
  const text = errorText(e).split('\n')[0]!.replace(/\s+/g, ' ').trim().slice(0, 300);
  const cause = faultCauseAt(e, ctx.path);
  const doing = ctx.action ? ` (while trying to ${ctx.action})` : '';
  switch (cause) {
    case 'disk-full':
      return `${where}: disk full: no space left on the file system holding it${doing}; free some space and run it again`;
    case 'read-only-fs':
      return `${where}: the file system is read-only${doing}: ${text}`;
    case 'permission':
      return `${where}: permission denied${doing}: ${text}`;
    case 'damaged': {
      const file = damagedFile(text);
      return (
        `${where}: file damaged${file ? ` (${file})` : ''}: the database cannot be read${doing} [${text}]; ` +
        `restore it from a copy or rebuild it with rankgate ingest${ctx.path ? ` into a new directory` : ''}`
      );
    }
    default:
      return `${where}: ${ctx.action ? `could not ${ctx.action}: ` : ''}${text}`;
  }
}

/**
 * Run PGlite's start-up with its failure modes caught: a WASM abort may reject with a bare object (an emscripten
 * ErrnoError: `{errno: 51}` is a full disk) or throw from a callback as an uncaught exception. Both become one
 * Error whose text faultCause() can classify (never "[object Object]").
 */
export async function withPgliteFaults<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  let uncaught: unknown;
  const onUncaught = (err: unknown) => {
    uncaught = err;
  };
  process.prependListener('uncaughtException', onUncaught);
  try {
    const r = await fn();
    if (uncaught) throw uncaught;
    return r;
  } catch (e) {
    const err = new Error(errorText(uncaught ?? e));
    const o = (uncaught ?? e) as { name?: unknown; errno?: unknown } | null;
    if (o && typeof o === 'object' && o.name === 'ErrnoError') Object.assign(err, { name: 'ErrnoError', errno: o.errno });
    throw err;
  } finally {
    process.off('uncaughtException', onUncaught);
    void dataDir;
  }
}
