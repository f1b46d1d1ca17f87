/**
 * Text helpers shared by the readers: strict UTF-8 decoding (a UTF-8 byte-order mark is accepted and
 * dropped; CRLF line ends are accepted everywhere) and offset -> line/column mapping.
 */
import type { Collector } from './problems.ts';
import { NotRegularFileError, readRegularFileSync } from '../util/regular-file.ts';

/** Line/column (1-based) of character offsets in a text. Columns count UTF-16 code units + 1. */
export class LineIndex {
  private starts: number[] | undefined;
  constructor(readonly text: string) {}
  private build(): number[] {
    const s = [0];
    const t = this.text;
    let i = t.indexOf('\n');
    while (i !== -1) {
      s.push(i + 1);
      i = t.indexOf('\n', i + 1);
    }
    return s;
  }
  /** 1-based line of an offset. */
  line(offset: number): number {
    return this.pos(offset).line;
  }
  pos(offset: number): { line: number; col: number } {
    const s = (this.starts ??= this.build());
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - s[lo]! + 1 };
  }
  get lineCount(): number {
    return (this.starts ??= this.build()).length;
  }
}

/**
 * Decode bytes as UTF-8. A leading BOM is dropped. Invalid UTF-8 is an error reported at the line
 * and column of the first bad byte; returns undefined then.
 */
export function decodeUtf8(buf: Uint8Array, c: Collector): string | undefined {
  let start = 0;
  if (buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) start = 3;
  const body = buf.subarray(start);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    const bad = firstInvalidUtf8(body);
    // line/col of the bad byte: decode the valid prefix to count lines and characters.
    const prefix = new TextDecoder('utf-8').decode(body.subarray(0, bad));
    const idx = new LineIndex(prefix);
    const pos = idx.pos(prefix.length);
    c.error(pos, 'file', 'encoding', `invalid UTF-8 byte 0x${body[bad]!.toString(16).padStart(2, '0')} at byte ${bad + start}, expected a UTF-8 text file (re-save it as UTF-8)`);
    return undefined;
  }
}

function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const x = b[i]!;
    let n = 0;
    if (x < 0x80) n = 0;
    else if (x >= 0xc2 && x <= 0xdf) n = 1;
    else if (x >= 0xe0 && x <= 0xef) n = 2;
    else if (x >= 0xf0 && x <= 0xf4) n = 3;
    else return i;
    for (let k = 1; k <= n; k++) {
      const y = b[i + k];
      if (y === undefined || (y & 0xc0) !== 0x80) return i;
    }
    // overlongs / surrogates
    if (n === 2) {
      const y = b[i + 1]!;
      if ((x === 0xe0 && y < 0xa0) || (x === 0xed && y > 0x9f)) return i;
    } else if (n === 3) {
      const y = b[i + 1]!;
      if ((x === 0xf0 && y < 0x90) || (x === 0xf4 && y > 0x8f)) return i;
    }
    i += n + 1;
  }
  return Math.max(0, b.length - 1);
}

/** Guess an ISO 639-1 language from the script of a text (used when a format has no language field). */
export function guessLanguage(text: string): string {
  if (/[\u3040-\u30ff]/.test(text)) return 'ja';
  if (/[\uac00-\ud7af]/.test(text)) return 'ko';
  if (/[\u4e00-\u9fff]/.test(text)) return 'zh';
  if (/[\u0900-\u097f]/.test(text)) return 'hi';
  if (/[\u0590-\u05ff]/.test(text)) return 'he';
  if (/[\u0600-\u06ff]/.test(text)) return 'ar';
  if (/[\u0400-\u04ff]/.test(text)) return 'ru';
  if (/[ñ¿¡]/i.test(text)) return 'es';
  return 'en';
}

/** Read a file as UTF-8 text, reporting a missing/unreadable file or bad encoding; undefined then. */
export function readTextFile(path: string, c: Collector): string | undefined {
  let buf: Buffer;
  try {
    buf = readRegularFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    c.error(undefined, 'file', 'file', code === 'ENOENT' ? 'no such file, expected a golden-set file' : code === 'EISDIR' ? 'is a directory, expected a file (or a BEIR/TREC folder)' : e instanceof NotRegularFileError ? `${e.message}, expected a golden-set file` : `cannot read (${code ?? String(e)})`);
    return undefined;
  }
  return decodeUtf8(buf, c);
}
