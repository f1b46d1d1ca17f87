/**
 * What every on-disk cache of rankgate (rerank scores src/rerank/cache.ts, model text src/llm/cache.ts, judge verdicts
 * src/judge/cache.ts, embedding-cache files of `rankgate embed-cache`) does before it believes a file: caches are
 * never evidence from the repository, and no cache file can block, exhaust or steer a command.
 *
 * - Tracked by git: a cache folder holding files that git tracks (`git -C <dir> ls-files`, in the repository that
 *   contains it; no git or no repository: nothing to check) came with the commit, e.g. a pull request's own scores.
 *   In CI (`CI` set, as every CI service sets it) that is exit 2 in one line naming them; elsewhere a LOUD warning, and
 *   those files are ignored (every lookup in them a miss). The workflow restores caches from actions/cache, keyed by
 *   the base branch (docs/gate.md "Caches").
 * - Read only when a regular file under MAX_CACHE_FILE_BYTES: a fifo (opening it would wait for ever), a socket, a
 *   device (/dev/zero never ends), a symbolic link leading out of the cache folder, or a file over the cap is skipped
 *   (a miss), never opened or read whole.
 * - Entries refused on read (out of the API's documented range, over the text caps, another producer's) are misses.
 *
 * Skipped files and refused entries are counted and said LOUD on stderr: the first of each kind per folder at once,
 * and the totals when the process exits. A miss is recomputed live, so the result is right; the note says that a
 * cache held something it should not.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, lstatSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UserError } from '../errors.ts';
import { NotRegularFileError, openRegularSync } from './regular-file.ts';
import { safeTerminal } from './terminal.ts';

/** Largest cache file read (bytes): far above any real entry (a rerank file of 1,000 passages is ~90 KB). */
export const MAX_CACHE_FILE_BYTES = 4 * 1024 * 1024;

/** Is this process running in CI? (`CI` set to anything but empty, 0 or false: GitHub Actions, GitLab, CircleCI, …) */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = (env.CI ?? '').trim().toLowerCase();
  return v !== '' && v !== '0' && v !== 'false' && v !== 'no' && v !== 'off';
}

const tracked = new Map<string, Set<string> | UserError>();

/**
 * The files of cache folder `dir` that git tracks, refused in CI (a UserError, exit 2, naming them) and otherwise
 * returned (absolute paths) to be ignored, with one LOUD warning. Checked once per folder per process.
 */
export function trackedCacheFiles(dir: string, what: string, env: NodeJS.ProcessEnv = process.env): Set<string> {
  const abs = resolve(dir);
  const known = tracked.get(abs);
  if (known instanceof UserError) throw known;
  if (known) return known;
  const out = new Set<string>();
  if (existsSync(abs)) {
    const r = spawnSync('git', ['-C', abs, 'ls-files', '-z', '--', '.'], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status === 0 && r.stdout) for (const f of r.stdout.split('\0')) if (f) out.add(join(abs, f));
    // git that cannot answer in CI (a timeout, "dubious ownership", no git) is not "nothing tracked": fail closed;
    // outside a repository there is nothing to check
    else if (r.status !== 0 && inCi(env) && !/not a git repository/i.test(r.stderr ?? '')) {
      const why = r.error ? (r.error as NodeJS.ErrnoException).code ?? r.error.message : (r.stderr ?? '').trim().split('\n')[0] || `exit ${r.status}`;
      const err = new UserError(`${safeTerminal(dir)}: cannot tell which files of the ${what} cache git tracks (git: ${safeTerminal(why)}): caches are never evidence from the repository, and in CI that must be checked (docs/gate.md#caches)`);
      tracked.set(abs, err);
      throw err;
    }
  }
  if (out.size) {
    const shown = [...out].slice(0, 3).map((f) => safeTerminal(relative(process.cwd(), f) || f));
    const list = `${shown.join(', ')}${out.size > 3 ? `, … (${out.size} files)` : ''}`;
    const fix = `caches are never evidence from the repository; remove them with git rm --cached -r ${safeTerminal(dir)} and use the workflow cache (docs/gate.md#caches)`;
    if (inCi(env)) {
      const err = new UserError(`${list} ${out.size === 1 ? 'is' : 'are'} tracked by git in the ${what} cache: ${fix}`);
      tracked.set(abs, err);
      throw err;
    }
    process.stderr.write(`rankgate: LOUD: ${list} ${out.size === 1 ? 'is' : 'are'} tracked by git in the ${what} cache ${safeTerminal(dir)}: ignored (${out.size} file${out.size === 1 ? '' : 's'}); ${fix}\n`);
  }
  tracked.set(abs, out);
  return out;
}

/**
 * Cache files named one by one (`rankgate embed-cache import FILE`, `build --cache FILE`): those git tracks are refused
 * in CI (a UserError naming them) and otherwise left out with a LOUD warning. Returns the files to use.
 */
export function untrackedCacheFiles(files: readonly string[], what: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const byDir = new Map<string, string[]>();
  for (const f of files) {
    const abs = resolve(f);
    const d = dirname(abs);
    byDir.set(d, [...(byDir.get(d) ?? []), abs]);
  }
  const tracked = new Set<string>();
  for (const [d, fs] of byDir) {
    if (!existsSync(d)) continue;
    const r = spawnSync('git', ['-C', d, 'ls-files', '-z', '--', ...fs.map((f) => relative(d, f))], { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'ignore'] });
    if (r.status === 0 && r.stdout) for (const f of r.stdout.split('\0')) if (f) tracked.add(join(d, f));
  }
  if (!tracked.size) return [...files];
  const shown = files.filter((f) => tracked.has(resolve(f))).map((f) => safeTerminal(f));
  const fix = 'caches are never evidence from the repository; remove them with git rm --cached and use the workflow cache (docs/gate.md#caches)';
  if (inCi(env)) throw new UserError(`${shown.join(', ')} ${shown.length === 1 ? 'is' : 'are'} tracked by git (the ${what} cache): ${fix}`);
  process.stderr.write(`rankgate: LOUD: ${shown.join(', ')} ${shown.length === 1 ? 'is' : 'are'} tracked by git (the ${what} cache): left out; ${fix}\n`);
  return files.filter((f) => !tracked.has(resolve(f)));
}

// ---------------------------------------------------------------------------------------------------------------
// Counted LOUD notes

const notes = new Map<string, { count: number; first: string }>();
let exitHooked = false;

/**
 * Count one skipped file or refused entry of a cache folder (`kind`: what was wrong, e.g. "a fifo, not a regular
 * file", "a score out of range"). The first of each (folder, kind) is said at once, the totals at exit.
 */
export function noteCache(dir: string, kind: string, detail: string): void {
  noteCacheOnce(dir, kind, detail);
}

function noteCacheOnce(dir: string, kind: string, detail: string): void {
  const key = `${dir}\u0000${kind}`;
  const n = notes.get(key);
  if (n) {
    n.count++;
    return;
  }
  notes.set(key, { count: 1, first: detail });
  process.stderr.write(`rankgate: LOUD: cache ${safeTerminal(dir)}: ${safeTerminal(detail)} (${kind}): treated as a miss, recomputed live\n`);
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', () => {
      for (const [k, v] of notes) {
        if (v.count < 2) continue;
        const [d, kind2] = k.split('\u0000');
        process.stderr.write(`rankgate: LOUD: cache ${safeTerminal(d!)}: ${v.count} entries skipped or refused (${kind2}); each a miss\n`);
      }
    });
  }
}

/** The notes counted so far: `{folder: {kind: count}}` (for tests and summaries). */
export function cacheNoteCounts(): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [k, v] of notes) {
    const [d, kind] = k.split('\u0000') as [string, string];
    (out[d] ??= {})[kind] = v.count;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Reading one cache file

const inside = (root: string, p: string) => {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/**
 * The text of cache file `path` in cache folder `root`, or undefined: absent (a plain miss), or skipped and noted (a
 * symbolic link out of the folder, a fifo/socket/device, over `maxBytes`, tracked by git outside CI). `quiet`: not
 * noted (a second read of the same file in one operation, e.g. before replacing it).
 */
export function readCacheFile(path: string, root: string, ignored: ReadonlySet<string>, maxBytes = MAX_CACHE_FILE_BYTES, quiet = false): string | undefined {
  const noteCache = quiet ? () => {} : noteCacheOnce;
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return undefined;
  }
  const abs = resolve(path);
  if (ignored.has(abs)) {
    noteCache(root, 'tracked by git', abs);
    return undefined;
  }
  if (st.isSymbolicLink()) {
    let real: string;
    let realRoot: string;
    try {
      real = realpathSync(path);
      realRoot = realpathSync(root);
    } catch {
      noteCache(root, 'a broken symbolic link', abs);
      return undefined;
    }
    if (!inside(realRoot, real)) {
      noteCache(root, 'a symbolic link out of the cache folder', `${abs} -> ${real}`);
      return undefined;
    }
  }
  let fd: number;
  try {
    fd = openRegularSync(path);
  } catch (e) {
    if (e instanceof NotRegularFileError) noteCache(root, `${e.message}`, abs);
    return undefined;
  }
  try {
    const s = fstatSync(fd);
    if (s.isDirectory()) return undefined;
    if (s.size > maxBytes) {
      noteCache(root, `over the ${maxBytes}-byte cap of a cache file`, `${abs} (${s.size} bytes)`);
      return undefined;
    }
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}
