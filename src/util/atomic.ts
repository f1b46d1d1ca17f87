import { chmodSync, closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

/** Files rankgate writes (baselines, reports, caches): readable by others, writable by the owner only, whatever the umask. */
export const OUTPUT_FILE_MODE = 0o644;

/**
 * Write a file so that readers see either the old content or the new, never half of it:
 * write a sibling temp file, fsync it, then rename over the target (atomic on POSIX).
 * The new file is never writable by group or others (a process umask of 0 made them 0666): it keeps the mode of the
 * file it replaces without those bits (a private 0600 stays private), else 0644; a stricter umask narrows it further.
 * `opts.mode` sets the mode exactly instead, whatever the umask and the file replaced (a secret: 0o600), before the
 * rename, so the file is never readable by others under its name.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, opts: { mode?: number } = {}): void {
  const { tmp, mode } = prepare(path);
  try {
    writeFileSync(tmp, data, { flush: true, mode: opts.mode ?? mode, flag: 'wx' });
    if (opts.mode !== undefined) chmodSync(tmp, opts.mode);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * writeFileAtomic for output too large for one string (a JSONL file of 100k rows): the lines are written one by one
 * to the sibling temp file, each followed by '\n', then fsynced and renamed over the target.
 */
export function writeLinesAtomic(path: string, lines: Iterable<string>): void {
  const { tmp, mode } = prepare(path);
  let fd: number | null = null;
  try {
    fd = openSync(tmp, 'wx', mode);
    let buf = '';
    for (const l of lines) {
      buf += l + '\n';
      if (buf.length > 1 << 20) {
        writeSync(fd, buf);
        buf = '';
      }
    }
    if (buf) writeSync(fd, buf);
    fsyncSync(fd);
    closeSync(fd);
    fd = null;
    renameSync(tmp, path);
  } catch (e) {
    if (fd !== null) closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** The target's folder made, its sibling temp path, and the mode of the new file (see writeFileAtomic). */
function prepare(path: string): { tmp: string; mode: number } {
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  let mode = OUTPUT_FILE_MODE;
  try {
    mode = statSync(path).mode & 0o755;
  } catch {
    /* a new file */
  }
  return { tmp: join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`), mode };
}
