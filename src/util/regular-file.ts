/**
 * The one way rankgate opens a file a user named (a golden set and its qrels, a BEIR folder's files, a TREC run or
 * qrels, a results file, a baseline, floors, a review page): opened without blocking and checked on the open
 * descriptor before a byte is read, so a fifo, socket or device is refused with what it is (opening a fifo for
 * reading waits for a writer for ever; a device never ends) and nothing changes between the check and the read.
 * A folder passes the open; reading it fails with EISDIR as before. The error is not a UserError: each caller wraps
 * it into its own one line naming the file and what it expected ("x: cannot read the baseline (a fifo, not a
 * regular file)").
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync } from 'node:fs';
import { specialKind } from './folder-scan.ts';

export class NotRegularFileError extends Error {
  /** Like an fs error's code, for callers that print `code ?? message`: absent, so the message is printed. */
  readonly code = undefined;
  constructor(readonly kind: string) {
    super(`a ${kind}, not a regular file`);
  }
}

/** A read-only descriptor of `path`, which is a regular file (or a folder); a special file is refused, never waited on. */
export function openRegularSync(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    // a socket cannot be opened at all (ENXIO): say what it is
    if ((e as NodeJS.ErrnoException).code === 'ENXIO') {
      const st = statSync(path, { throwIfNoEntry: false });
      if (st && !st.isFile() && !st.isDirectory()) throw new NotRegularFileError(specialKind(st));
    }
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() && !st.isDirectory()) throw new NotRegularFileError(specialKind(st));
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return fd;
}

/** readFileSync for a file a user named: a fifo, socket or device is refused (NotRegularFileError). */
export function readRegularFileSync(path: string): Buffer;
export function readRegularFileSync(path: string, encoding: 'utf8'): string;
export function readRegularFileSync(path: string, encoding?: 'utf8'): Buffer | string {
  const fd = openRegularSync(path);
  try {
    return encoding ? readFileSync(fd, encoding) : readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}
