import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/**
 * The lines of a file, one at a time (without their '\n' or '\r\n'), read in fixed-size chunks: memory holds one
 * chunk and the line being read, whatever the size of the file. Synchronous, so a reader of a large file needs no
 * async plumbing; throws the fs error (ENOENT, EISDIR...) of open or read.
 */
export function* readLinesSync(path: string, chunkBytes = 1 << 20): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(chunkBytes);
    const dec = new StringDecoder('utf8');
    let rest = '';
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      rest += dec.write(buf.subarray(0, n));
      let start = 0;
      for (let at = rest.indexOf('\n'); at >= 0; at = rest.indexOf('\n', start)) {
        yield rest.slice(start, at > start && rest.charCodeAt(at - 1) === 13 ? at - 1 : at);
        start = at + 1;
      }
      rest = rest.slice(start);
    }
    rest += dec.end();
    if (rest) yield rest;
  } finally {
    closeSync(fd);
  }
}
