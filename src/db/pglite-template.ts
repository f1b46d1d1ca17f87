/**
 * A new embedded database directory starts from a copy of a just-initialised, empty PGlite cluster instead of running
 * initdb (`memory://` databases still run initdb: PGlite keeps a process alive while an instance loaded from a
 * tarball is open, and an in-memory instance is never reopened from a directory).
 *
 * initdb in WASM costs 3–4 s of CPU. The copy (a 4.5 MB gzipped tar of the data directory) is unpacked into the new
 * directory here, in Node (~0.1 s), and the directory is then opened as an existing database: one PGlite start. (PGlite's
 * own `loadDataDir` unpacked it inside WASM and kept the process alive until that instance closed, so it cost a
 * second start to reopen the directory, ~1 s more; it also wrote the maker's lock file over the new directory's.) The copy
 * is made by the first creation on the machine (initdb as before, then `dumpDataDir`, BEFORE any rankgate table
 * or extension exists: the migrations always run on top of it) and kept in the system temp directory (a folder per
 * user; the folder must be this user's and closed to others, the copy this user's and not writable by others, checked
 * and read through one file descriptor, else it is neither loaded nor written), never in the project, keyed by the versions of PGlite and its extension packages. It is written to a temporary name and renamed,
 * so processes creating databases at once never read a half-written copy.
 *
 * A copy that does not unpack or start is not trusted: the caller clears what it wrote and runs initdb; only when initdb then
 * succeeds is the copy deleted (a full disk fails both, and the copy stays). `RANKGATE_PGLITE_TEMPLATE=off` turns
 * the copy off (always initdb, nothing kept); `RANKGATE_PGLITE_TEMPLATE=/path/file.tar.gz` keeps it there instead.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, fstatSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { gunzipSync, gzipSync } from 'node:zlib';
import { dirname, join, resolve } from 'node:path';
import { LOCK_PREFIX } from './lock.ts';

const PACKAGES = ['@electric-sql/pglite', '@electric-sql/pglite-pgvector', '@electric-sql/pglite-pg_textsearch'];

function packageVersion(name: string): string {
  const req = createRequire(import.meta.url);
  let dir = dirname(req.resolve(name));
  for (let i = 0; i < 6; i++) {
    const p = join(dir, 'package.json');
    if (existsSync(p)) {
      const pkg = JSON.parse(readFileSync(p, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name) return pkg.version ?? '?';
    }
    dir = dirname(dir);
  }
  return '?';
}

let defaultPath: string | null | undefined;

/** Where the copy lives (whether or not it exists yet); null when turned off. */
export function templatePath(): string | null {
  const setting = (process.env.RANKGATE_PGLITE_TEMPLATE ?? '').trim();
  if (/^(off|0|false|no)$/i.test(setting)) return null;
  if (setting) return setting;
  if (defaultPath !== undefined) return defaultPath;
  try {
    const key = createHash('sha256')
      .update(PACKAGES.map((n) => `${n}@${packageVersion(n)}`).join(' '))
      .update(`${process.platform}-${process.arch}`)
      .digest('hex')
      .slice(0, 16);
    // per user: another account on the machine can neither plant the copy nor find it in a shared folder
    const uid = typeof process.getuid === 'function' ? process.getuid() : 'u';
    defaultPath = join(tmpdir(), `rankgate-pglite-template-${uid}`, `${key}.tar.gz`);
  } catch {
    defaultPath = null;
  }
  return defaultPath;
}

const uid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);

/**
 * May the copy live in (and be read from) this folder? A real folder (not a symbolic link) of this user (or root)
 * that no one else can write in, unless it is sticky like /tmp (others can then neither remove nor rename this
 * user's file). A folder another user made first (the default one is per user, in the shared temp dir) is not used.
 */
export function trustedTemplateFolder(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory()) return false;
    const me = uid();
    if (me !== undefined && st.uid !== me && st.uid !== 0) return false;
    return (st.mode & 0o022) === 0 || (st.mode & 0o1000) !== 0;
  } catch {
    return false;
  }
}

/**
 * The copy's bytes through ONE file descriptor: opened without following a link (and without blocking on a fifo),
 * checked on that descriptor (a regular file of this user that no one else may write), read from it. No stat-then-read
 * race: what is checked is what is read. Undefined when there is none or it is not to be trusted.
 */
function readTrusted(p: string): Buffer | undefined {
  if (!trustedTemplateFolder(dirname(p))) return undefined;
  let fd: number;
  try {
    fd = openSync(p, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    const me = uid();
    if (!st.isFile() || (me !== undefined && st.uid !== me) || (st.mode & 0o022) !== 0) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The copy as an uncompressed tar, or undefined when there is none (or it cannot be read, or is not trusted). */
export function readTemplate(): Buffer | undefined {
  const p = templatePath();
  if (!p || !existsSync(p)) return undefined;
  const raw = readTrusted(p);
  if (!raw) return undefined;
  let tar: Buffer;
  try {
    tar = gunzipSync(raw);
  } catch {
    tar = Buffer.alloc(0);
  }
  // a tar archive ('ustar' at 257) holding a cluster's PG_VERSION; anything else is damaged or truncated and is made
  // again by this creation (PGlite reports a bad archive asynchronously, after its start has already failed)
  if (tar.length < 1_000_000 || tar.toString('latin1', 257, 262) !== 'ustar' || !tar.includes('PG_VERSION')) {
    removeQuietly(p);
    return undefined;
  }
  return tar;
}

/**
 * Unpack the copy (readTemplate) into `dir`, an empty directory the caller holds the lock of: folders and regular
 * files only, every header checksum checked, never a path outside `dir`. The lock files and postmaster.pid of the
 * process that made the copy are left out. Anything else throws (a damaged copy): the caller clears what was written
 * and runs initdb.
 */
export function extractTemplate(tar: Buffer, dir: string): void {
  const root = resolve(dir);
  const text = (h: Buffer, from: number, to: number) => {
    const s = h.toString('latin1', from, to);
    const nul = s.indexOf('\0');
    return nul < 0 ? s : s.slice(0, nul);
  };
  let off = 0;
  let files = 0;
  for (;;) {
    if (off + 512 > tar.length) throw new Error('damaged copy: the archive ends without its end marker');
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    const stored = parseInt(text(h, 148, 156).trim(), 8);
    const size = parseInt(text(h, 124, 136).trim() || '0', 8);
    const name = text(h, 0, 100);
    const prefix = h.toString('latin1', 257, 262) === 'ustar' ? text(h, 345, 500) : '';
    const rel = (prefix ? `${prefix}/${name}` : name).replace(/^\/+/, '').replace(/\/+$/, '');
    if (stored !== sum) throw new Error(`damaged copy: bad header checksum at byte ${off}`);
    if (!Number.isSafeInteger(size) || size < 0 || off + 512 + size > tar.length) throw new Error(`damaged copy: ${rel}: bad size`);
    const body = tar.subarray(off + 512, off + 512 + size);
    off += 512 + Math.ceil(size / 512) * 512;
    if (rel === '' || rel === '.') continue;
    if (rel.split('/').some((p) => p === '..' || p === '.' || p === '')) throw new Error(`damaged copy: entry path ${JSON.stringify(rel)}`);
    if (rel.startsWith(LOCK_PREFIX) || rel === 'postmaster.pid') continue;
    const dest = join(root, rel);
    const type = h[156];
    // owner-only whatever the umask (restrictDataDir makes the whole directory so once PGlite has started)
    if (type === 0x35 /* '5' directory */) mkdirSync(dest, { recursive: true, mode: 0o700 });
    else if (type === 0x30 /* '0' */ || type === 0 /* old-style regular file */) {
      mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
      writeFileSync(dest, body, { mode: 0o600 });
      files++;
    } else throw new Error(`damaged copy: ${rel}: entry type ${JSON.stringify(String.fromCharCode(type!))}`);
  }
  if (!files || !existsSync(join(root, 'PG_VERSION'))) throw new Error('damaged copy: no PG_VERSION');
}

/** Keep a copy of a just-initialised cluster (best effort: a failure only means the next creation runs initdb). */
export async function saveTemplate(pglite: { dumpDataDir(c?: 'none' | 'gzip' | 'auto'): Promise<File | Blob> }): Promise<void> {
  const p = templatePath();
  if (!p || existsSync(p)) return;
  const tmp = `${p}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`;
  try {
    mkdirSync(dirname(p), { recursive: true, mode: 0o700 });
    // never into a folder another user made or may write in (they could swap the copy): no copy is kept then
    if (!trustedTemplateFolder(dirname(p))) return;
    const blob = await pglite.dumpDataDir('none');
    writeFileSync(tmp, gzipSync(Buffer.from(await blob.arrayBuffer()), { level: 6 }), { mode: 0o600, flag: 'wx' });
    renameSync(tmp, p);
  } catch {
    removeQuietly(tmp);
  }
}

/** The copy failed to load where initdb then worked: it is damaged or stale. */
export function dropTemplate(): void {
  const p = templatePath();
  if (p && trustedTemplateFolder(dirname(p))) removeQuietly(p);
}

/** The copy is an optimisation: a path it cannot remove (a directory, a read-only folder) never fails a creation. */
function removeQuietly(p: string): void {
  try {
    rmSync(p, { force: true });
  } catch {
    /* left; initdb runs */
  }
}
