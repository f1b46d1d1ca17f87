/**
 * One process per PGlite data directory, provably.
 *
 * PGlite holds the whole database in one process's memory: a second process opening the same directory would
 * write over it unseen. The lock is a sequence of generation files `<dir>/.rankgate.lock.<N>`; the one with the
 * highest N says who holds the directory:
 *
 *   {"pid": 123, "start": "5512345", ...}   held by process 123 started at tick 5512345 (/proc/123/stat field 22)
 *   {"free": true, ...}                      released
 *
 * Every change is an exclusive creation of the NEXT generation: the record is written completely to a private
 * temp file, then link(2)ed to `.rankgate.lock.<N+1>` (fails with EEXIST when another process got there first),
 * so a lock file is never empty or partial, and of several processes racing for N+1 exactly one wins.
 * - acquire: the highest record is free, or its process is gone (no such pid, or that pid now belongs to a
 *   process with another start time: pid reuse) -> claim N+1. A live holder -> "in use by process …".
 * - release: the holder claims N+1 with a free record (the highest generation is never deleted, so numbers
 *   never go back and a slow process can never re-create a generation that still counts).
 * - after claiming N+1 the winner checks that N+1 is still the highest (a process that slept through several
 *   generations may re-create an old, deleted number; it then finds a higher one and backs off), and deletes
 *   the generations below its own.
 * A generation file whose number is not canonical or not below 2^53 - 1 was not written by this scheme: it is stale,
 * ignored when looking for the highest generation and removed by the next holder.
 * Stale takeover needs no delete-then-create, so there is no window in which two processes both believe the
 * directory is theirs. Opening the same directory again in the same process shares the lock (reference-counted).
 */
import { linkSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { UserError } from '../errors.ts';

export const LOCK_PREFIX = '.rankgate.lock';
const GEN = /^\.rankgate\.lock\.(\d+)$/;

interface LockRecord {
  pid?: number;
  start?: string | null;
  free?: boolean;
  command?: string;
  since?: string;
}

const heldLocks = new Map<string, { refs: number; gen: number; dir: string }>();
let exitHookInstalled = false;

/** Start time of a process (clock ticks since boot, /proc/PID/stat field 22); null where /proc is unavailable;
 *  'gone' when the process does not exist or is a zombie. */
export function processStartTime(pid: number): string | null | 'gone' {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ESRCH') {
      try {
        readdirSync('/proc/self');
      } catch {
        return processAliveByKill(pid) ? null : 'gone'; // no /proc (macOS): pid only
      }
      return 'gone';
    }
    return processAliveByKill(pid) ? null : 'gone';
  }
  // "pid (comm) state ppid ..." — comm may hold spaces and parentheses: split after the last ')'
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (rest[0] === 'Z' || rest[0] === 'X') return 'gone';
  return rest[19] ?? null; // field 22 overall = index 19 after "pid (comm)"
}

function processAliveByKill(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True while the process that wrote `rec` still runs (same pid AND same start time). */
function holderAlive(rec: LockRecord): boolean {
  const pid = Number(rec.pid);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const start = processStartTime(pid);
  if (start === 'gone') return false;
  if (start === null || rec.start == null) return true; // cannot compare: the pid alone decides
  return start === rec.start;
}

/**
 * The generation a lock file name holds, or undefined when it is not one this scheme writes: a canonical decimal
 * (no leading zeros) whose successor is still an exact integer. Anything else (`…lock.00000000000000000000001`,
 * `…lock.9007199254740993`, `…lock.100000000000000000000`) is stale junk: no rankgate can hold it, and it must
 * never be read as the highest generation (its N+1 would round to itself, or name another file).
 */
export function parseGeneration(name: string): number | undefined {
  const m = GEN.exec(name);
  if (!m || !/^(0|[1-9]\d*)$/.test(m[1]!)) return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n + 1) ? n : undefined;
}

function lockNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function generations(dir: string): number[] {
  const out: number[] = [];
  for (const n of lockNames(dir)) {
    const g = parseGeneration(n);
    if (g !== undefined) out.push(g);
  }
  return out.sort((a, b) => a - b);
}

function readRecord(path: string): LockRecord | 'missing' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw e;
  }
  try {
    const r = JSON.parse(text) as LockRecord;
    return r && typeof r === 'object' ? r : {};
  } catch {
    return {}; // not written by this scheme (records are linked complete): no live holder can be named
  }
}

/** Create generation `gen` holding `record` atomically; false when it exists already. */
function claim(dir: string, gen: number, record: LockRecord): boolean {
  const tmp = join(dir, `${LOCK_PREFIX}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(tmp, JSON.stringify(record), { mode: 0o600 });
    linkSync(tmp, join(dir, `${LOCK_PREFIX}.${gen}`));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    rmSync(tmp, { force: true });
  }
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function inUse(dataDir: string, rec: LockRecord): UserError {
  return new UserError(
    `embedded database (PGlite) at ${dataDir} is in use by process ${rec.pid} (${String(rec.command ?? 'unknown command')}, since ${String(rec.since ?? '?')}); ` +
      `PGlite admits one process at a time: wait for it or stop it, or use a Postgres server (DATABASE_URL) to ingest while an eval runs`,
  );
}

/** The older single-file lock (`.rankgate.lock`, pid only) of a rankgate still running from before this scheme. */
function legacyHolder(dir: string): LockRecord | undefined {
  const r = readRecord(join(dir, LOCK_PREFIX));
  if (r === 'missing') return undefined;
  const pid = Number(r.pid);
  if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAliveByKill(pid)) {
    return { pid, command: (r as { command?: string }).command, since: (r as { started?: string }).started };
  }
  return undefined;
}

/**
 * Take the lock of a PGlite data directory (which must exist). Returns the release function.
 * Throws a UserError naming the holder when another live process holds it.
 */
export function lockDataDir(dataDir: string): () => void {
  const dir = resolve(dataDir);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    const h = heldLocks.get(dir);
    if (!h || --h.refs > 0) return;
    heldLocks.delete(dir);
    releaseGen(h.dir, h.gen);
  };
  const held = heldLocks.get(dir);
  if (held) {
    held.refs++;
    return release;
  }
  const legacy = legacyHolder(dir);
  if (legacy) throw inUse(dataDir, legacy);
  const start = processStartTime(process.pid);
  const mine: LockRecord = {
    pid: process.pid,
    start: start === 'gone' ? null : start,
    command: ['rankgate', ...process.argv.slice(2)].join(' ').slice(0, 200),
    since: new Date().toISOString(),
  };
  for (let attempt = 0; ; attempt++) {
    if (attempt > 200) throw new UserError(`embedded database (PGlite) at ${dataDir}: could not take its lock (too much contention); try again`);
    let gens: number[];
    let top: number;
    try {
      gens = generations(dir);
      top = gens.length ? gens[gens.length - 1]! : 0;
      if (top > 0) {
        const rec = readRecord(join(dir, `${LOCK_PREFIX}.${top}`));
        if (rec === 'missing') continue; // superseded while we looked
        if (!rec.free && holderAlive(rec) && rec.pid !== process.pid) throw inUse(dataDir, rec);
      }
      if (!claim(dir, top + 1, mine)) {
        sleepMs(1 + (attempt % 5));
        continue; // another process claimed it: look again
      }
    } catch (e) {
      if (e instanceof UserError) throw e;
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC') throw new UserError(`${dataDir}: disk full: no room for its lock file; free some space`);
      throw new UserError(`embedded database (PGlite) at ${dataDir}: cannot write its lock file in ${dir} (${code ?? (e as Error).message})`);
    }
    const after = generations(dir);
    if (after[after.length - 1] !== top + 1) {
      // we re-created a number that was already superseded: not ours
      rmSync(join(dir, `${LOCK_PREFIX}.${top + 1}`), { force: true });
      continue;
    }
    for (const g of after) if (g < top + 1) rmSync(join(dir, `${LOCK_PREFIX}.${g}`), { force: true });
    // generation files no rankgate writes (unparsable or out of range): stale, removed by the new holder
    for (const n of lockNames(dir)) if (GEN.test(n) && parseGeneration(n) === undefined) rmSync(join(dir, n), { force: true });
    rmSync(join(dir, LOCK_PREFIX), { force: true }); // a stale single-file lock of an older rankgate (checked above)
    heldLocks.set(dir, { refs: 1, gen: top + 1, dir });
    break;
  }
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const h of heldLocks.values()) releaseGen(h.dir, h.gen);
      heldLocks.clear();
    });
  }
  return release;
}

function releaseGen(dir: string, gen: number): void {
  try {
    const top = generations(dir).at(-1);
    if (top !== gen) return; // no longer ours (cannot happen while we live; never touch a newer record)
    if (claim(dir, gen + 1, { free: true, since: new Date().toISOString() })) {
      rmSync(join(dir, `${LOCK_PREFIX}.${gen}`), { force: true });
    }
  } catch {
    // a directory that vanished or went read-only: the record says our pid, which is gone once we exit
  }
}

/** Who holds the directory now (undefined: nobody). For messages and tests. */
export function lockHolder(dataDir: string): { pid: number; command?: string } | undefined {
  const dir = resolve(dataDir);
  const top = generations(dir).at(-1);
  if (top === undefined) return undefined;
  const rec = readRecord(join(dir, `${LOCK_PREFIX}.${top}`));
  if (rec === 'missing' || rec.free || !holderAlive(rec)) return undefined;
  return { pid: rec.pid!, command: rec.command };
}

/** Lock files are not part of the database: the emptiness and completeness checks skip them. */
export function isLockFile(name: string): boolean {
  return name.startsWith(LOCK_PREFIX);
}
