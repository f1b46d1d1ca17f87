import { mkdirSync, renameSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';

/**
 * Write a file so that readers see either the old content or the new, never half of it:
 * write a sibling temp file, fsync it, then rename over the target (atomic on POSIX).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${Date.now()}`);
  try {
    writeFileSync(tmp, data, { flush: true });
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
