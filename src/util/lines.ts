import { closeSync, readSync } from 'node:fs';
import { openRegularSync } from './regular-file.ts';

/** A line longer than readLinesSync's `maxLineBytes` (1-based line number): the reader stops before buffering more. */
export class LineTooLongError extends Error {
  constructor(
    readonly line: number,
    readonly maxBytes: number,
  ) {
    super(`line ${line} is longer than ${maxBytes} bytes`);
  }
}

/**
 * The lines of a file, one at a time (without their '\n' or '\r\n'), read in fixed-size chunks: memory holds one
 * chunk and the line being read, whatever the size of the file. Synchronous, so a reader of a large file needs no
 * async plumbing; throws the fs error (ENOENT, EISDIR...) of open or read.
 *
 * Lines are found in the bytes and each is decoded on its own: no string larger than a line is ever made, so a
 * gigabyte of JSONL leaves no chunk-sized strings for the garbage collector (they live in V8's large-object space,
 * freed only by a full collection, and made `rankgate gate`'s resident set grow with the file).
 * `maxLineBytes` bounds one line (a LineTooLongError, before more of it is buffered): a log of one endless line never
 * fills memory.
 */
export function* readLinesSync(path: string, chunkBytes = 1 << 20, maxLineBytes = Number.POSITIVE_INFINITY): Generator<string> {
  const fd = openRegularSync(path); // a fifo or device is refused (NotRegularFileError), never waited on
  try {
    const buf = Buffer.allocUnsafe(chunkBytes);
    /** the bytes of a line that began in an earlier chunk */
    let carry: Buffer[] = [];
    let carried = 0;
    let lineNo = 0;
    const tooLong = (bytes: number) => {
      if (bytes > maxLineBytes) throw new LineTooLongError(lineNo + 1, maxLineBytes);
    };
    const line = (b: Buffer): string => {
      const end = b.length > 0 && b[b.length - 1] === 13 ? b.length - 1 : b.length;
      return b.toString('utf8', 0, end);
    };
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      let start = 0;
      for (let at = buf.indexOf(10, 0); at >= 0 && at < n; at = buf.indexOf(10, start)) {
        tooLong(carried + at - start);
        if (carry.length) {
          carry.push(buf.subarray(start, at));
          const whole = Buffer.concat(carry);
          carry = [];
          carried = 0;
          lineNo++;
          yield line(whole);
        } else {
          lineNo++;
          yield line(buf.subarray(start, at));
        }
        start = at + 1;
      }
      // a copy: the chunk buffer is read into again
      if (start < n) {
        carried += n - start;
        tooLong(carried);
        carry.push(Buffer.from(buf.subarray(start, n)));
      }
    }
    if (carry.length) {
      const last = line(Buffer.concat(carry));
      if (last) yield last;
    }
  } finally {
    closeSync(fd);
  }
}
