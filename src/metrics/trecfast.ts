/**
 * Byte-level readers for trec_eval's qrels and run formats, built for speed and memory: the run is
 * fed in chunks (streamed), every line is split by hand on ASCII whitespace (space, \t, \n, \v, \f,
 * \r — C isspace in the "C" locale, exactly as trec_eval; a U+00A0 or any other non-ASCII byte is
 * part of a field), and per query only typed arrays are kept (score, relevance value, docno bytes).
 * Pure: the caller reads files and hands over bytes; strings are latin1 (one char per byte) so
 * ordering and output are byte-exact like C strcmp/printf.
 *
 * Input policy (trec_eval 10 behaviour unless said otherwise):
 * - qrels `qid iter docno rel`, exactly 4 fields; a line starting with `#` in column 0 is a comment;
 *   a blank line or a line with 3 or 5 fields is an error (as trec_eval). `rel` is read like C atol
 *   when it is an integer or a plain decimal (`1.5` -> 1, `-0.5` -> 0); anything else (`x`, `1e3`)
 *   is an error (trec_eval silently reads `x` as 0). Every `#` line is a comment (trec_eval 10
 *   fails on the second of two consecutive comment lines).
 * - run `qid iter docno rank sim tag [ignored...]`, at least 6 fields; blank lines and lines whose
 *   first non-blank byte is `#` are skipped. `iter` and `rank` are ignored whatever they hold
 *   (`1.0`, `-`). `sim` is a decimal float (`12`, `-1.5e-3`, `.5`), `inf`/`infinity` in any case
 *   with an optional sign, or a value beyond the double range (`1e400` = inf, as strtod); `nan`,
 *   hex floats and trailing garbage (`1.5x`) are errors (trec_eval's atof would read a prefix).
 * - The runid is the tag of the LAST run line. A NUL byte is an error in either file.
 */
import { UserError } from '../errors.ts';
import { RELVALUE_NONPOOL, RELVALUE_UNJUDGED } from './resrels.ts';

const SP = new Uint8Array(256);
for (const c of [0x20, 0x09, 0x0a, 0x0b, 0x0c, 0x0d]) SP[c] = 1;

function latin1(buf: Uint8Array, s: number, e: number): string {
  let out = '';
  if (e - s <= 32) {
    for (let i = s; i < e; i++) out += String.fromCharCode(buf[i]!);
    return out;
  }
  for (let i = s; i < e; i += 4096) out += String.fromCharCode(...buf.subarray(i, Math.min(e, i + 4096)));
  return out;
}

function hashBytes(buf: Uint8Array, s: number, e: number, seed: number): number {
  let h = (0x811c9dc5 ^ seed) | 0;
  for (let i = s; i < e; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h;
}

/** One query's judgments. */
export interface QrelsQuery {
  qid: string;
  /** index in qid order */
  index: number;
  /** rel_levels: judged docs per grade >= 0 */
  relLevels: number[];
  /** number of judged docs (any grade) */
  numJudged: number;
  /** docs with grade > 0 (m_num_rel.c's recount for -c) */
  numPositive: number;
}

export class Qrels {
  /** queries in strcmp order */
  readonly queries: QrelsQuery[] = [];
  readonly byQid = new Map<string, QrelsQuery>();
  /** docno bytes of every judgment, and per judgment: start, end, query index, rel */
  private bytes: Uint8Array;
  private jStart: Int32Array;
  private jEnd: Int32Array;
  private jQuery: Int32Array;
  private jRel: Int32Array;
  /**
   * One small open-addressing table per query (a run's lines come grouped by query, so the table in
   * use stays in cache), all in one array; slots are interleaved [judgment index (-1 = empty), hash].
   */
  private table: Int32Array = new Int32Array(0);
  private qOff: Int32Array = new Int32Array(0);
  private qMask: Int32Array = new Int32Array(0);

  private constructor(bytes: Uint8Array, n: number) {
    this.bytes = bytes;
    this.jStart = new Int32Array(n);
    this.jEnd = new Int32Array(n);
    this.jQuery = new Int32Array(n);
    this.jRel = new Int32Array(n);
  }

  private allocTables(counts: number[]): void {
    this.qOff = new Int32Array(counts.length);
    this.qMask = new Int32Array(counts.length);
    let total = 0;
    counts.forEach((c, i) => {
      let size = 8;
      while (size < c * 4) size <<= 1;
      this.qOff[i] = total;
      this.qMask[i] = size - 1;
      total += size * 2;
    });
    this.table = new Int32Array(total).fill(-1);
  }

  /** Parse a qrels file (bytes). Throws UserError `file:line: ...` on a malformed line. */
  static parse(buf: Uint8Array, fileName: string): Qrels {
    type Line = { qid: string; ds: number; de: number; rel: number; line: number };
    const lines: Line[] = [];
    let pos = 0;
    let lineNo = 0;
    const n = buf.length;
    const f = new Int32Array(10);
    let lastQid = '';
    let lqs = -1;
    let lqe = -1;
    while (pos < n) {
      lineNo++;
      let eol = buf.indexOf(0x0a, pos);
      if (eol < 0) eol = n;
      if (buf[pos] === 0x23) {
        pos = eol + 1;
        continue;
      }
      let nf = 0;
      let i = pos;
      while (i < eol) {
        while (i < eol && SP[buf[i]!]) i++;
        if (i >= eol) break;
        const s = i;
        while (i < eol && !SP[buf[i]!]) {
          if (buf[i] === 0) throw new UserError(`${fileName}:${lineNo}: NUL byte in a qrels line`);
          i++;
        }
        if (nf < 5) {
          f[nf * 2] = s;
          f[nf * 2 + 1] = i;
        }
        nf++;
      }
      if (nf !== 4) {
        throw new UserError(
          `${fileName}:${lineNo}: expected 4 fields 'qid iter docno rel' in a qrels line (fields are split on ASCII whitespace only), found ${nf}: '${latin1(buf, pos, Math.min(eol, pos + 120)).trim()}'`,
        );
      }
      // rel: [+-]digits[.digits] or [+-].digits, read as its integer part (C atol)
      let k = f[6]!;
      const ke = f[7]!;
      let neg = false;
      if (buf[k] === 0x2b || buf[k] === 0x2d) neg = buf[k++] === 0x2d;
      let rel = 0;
      let digits = 0;
      while (k < ke && buf[k]! >= 0x30 && buf[k]! <= 0x39) {
        rel = rel * 10 + (buf[k++]! - 0x30);
        digits++;
      }
      if (k < ke && buf[k] === 0x2e) {
        k++;
        while (k < ke && buf[k]! >= 0x30 && buf[k]! <= 0x39) {
          k++;
          digits++;
        }
      }
      if (k !== ke || digits === 0) {
        throw new UserError(`${fileName}:${lineNo}: field 4 (rel) must be an integer grade (or a decimal, read as its integer part like trec_eval), got '${latin1(buf, f[6]!, ke)}'`);
      }
      if (rel > 1_000_000) throw new UserError(`${fileName}:${lineNo}: field 4 (rel) ${latin1(buf, f[6]!, ke)} is out of range (grades are small integers; trec_eval keeps one counter per grade)`);
      if (neg) rel = -rel || 0;
      // qid: decoded only when it differs from the previous line's
      const qs = f[0]!;
      const qe = f[1]!;
      let same = qe - qs === lqe - lqs;
      for (let x = 0; same && x < qe - qs; x++) if (buf[qs + x] !== buf[lqs + x]) same = false;
      if (!same) {
        lastQid = latin1(buf, qs, qe);
        lqs = qs;
        lqe = qe;
      }
      lines.push({ qid: lastQid, ds: f[4]!, de: f[5]!, rel, line: lineNo });
      pos = eol + 1;
    }
    const q = new Qrels(buf, lines.length);
    const qids = [...new Set(lines.map((l) => l.qid))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    qids.forEach((qid, index) => {
      const e: QrelsQuery = { qid, index, relLevels: [], numJudged: 0, numPositive: 0 };
      q.queries.push(e);
      q.byQid.set(qid, e);
    });
    const counts = new Array<number>(qids.length).fill(0);
    for (const l of lines) counts[q.byQid.get(l.qid)!.index]!++;
    q.allocTables(counts);
    lines.forEach((l, j) => {
      const qq = q.byQid.get(l.qid)!;
      const prev = q.lookup(qq.index, buf, l.ds, l.de);
      if (prev !== undefined) {
        throw new UserError(`${fileName}:${l.line}: document '${latin1(buf, l.ds, l.de)}' is judged twice for query '${l.qid}' (trec_eval: duplicate docs)`);
      }
      q.jStart[j] = l.ds;
      q.jEnd[j] = l.de;
      q.jQuery[j] = qq.index;
      q.jRel[j] = l.rel;
      q.insert(qq.index, j, hashBytes(buf, l.ds, l.de, qq.index));
      qq.numJudged++;
      if (l.rel > 0) qq.numPositive++;
      if (l.rel >= 0) {
        while (qq.relLevels.length <= l.rel) qq.relLevels.push(0);
        qq.relLevels[l.rel]!++;
      }
    });
    return q;
  }

  private insert(qi: number, j: number, h: number): void {
    const off = this.qOff[qi]!;
    const mask = this.qMask[qi]!;
    let s = h & mask;
    while (this.table[off + s * 2] !== -1) s = (s + 1) & mask;
    this.table[off + s * 2] = j;
    this.table[off + s * 2 + 1] = h;
  }

  /** The grade of docno bytes buf[s,e) in query qi, or undefined. */
  lookup(qi: number, buf: Uint8Array, s: number, e: number, h = hashBytes(buf, s, e, qi)): number | undefined {
    const off = this.qOff[qi]!;
    const mask = this.qMask[qi]!;
    let slot = h & mask;
    const len = e - s;
    const t = this.table;
    for (;;) {
      const j = t[off + slot * 2]!;
      if (j === -1) return undefined;
      if (t[off + slot * 2 + 1] === h && this.jEnd[j]! - this.jStart[j]! === len) {
        const b = this.bytes;
        let k = 0;
        const js = this.jStart[j]!;
        while (k < len && b[js + k] === buf[s + k]) k++;
        if (k === len) return this.jRel[j];
      }
      slot = (slot + 1) & mask;
    }
  }

  /** Relevance value of a retrieved doc: its grade, -2 if judged negative, -1 if not judged. */
  relValue(qi: number, buf: Uint8Array, s: number, e: number, h: number): number {
    const r = this.lookup(qi, buf, s, e, h);
    return r === undefined ? RELVALUE_NONPOOL : r < 0 ? RELVALUE_UNJUDGED : r;
  }
}

/** One query's retrieved docs, as typed arrays. */
export class RunQuery {
  n = 0;
  sim = new Float64Array(16);
  rel = new Int32Array(16);
  hash = new Int32Array(16);
  /** docno i is bytes[dEnd[i-1] .. dEnd[i]) */
  dEnd = new Int32Array(16);
  bytes = new Uint8Array(256);
  constructor(readonly q: QrelsQuery) {}

  add(sim: number, rel: number, h: number, buf: Uint8Array, s: number, e: number): void {
    if (this.n === this.sim.length) {
      const cap = this.n * 2;
      const g = <T extends Float64Array | Int32Array>(a: T, C: new (n: number) => T): T => {
        const b = new C(cap);
        b.set(a);
        return b;
      };
      this.sim = g(this.sim, Float64Array);
      this.rel = g(this.rel, Int32Array);
      this.hash = g(this.hash, Int32Array);
      this.dEnd = g(this.dEnd, Int32Array);
    }
    const start = this.n ? this.dEnd[this.n - 1]! : 0;
    const len = e - s;
    if (start + len > this.bytes.length) {
      let cap = this.bytes.length * 2;
      while (cap < start + len) cap *= 2;
      const b = new Uint8Array(cap);
      b.set(this.bytes.subarray(0, start));
      this.bytes = b;
    }
    const bytes = this.bytes;
    for (let k = 0; k < len; k++) bytes[start + k] = buf[s + k]!;
    const i = this.n++;
    this.sim[i] = sim;
    this.rel[i] = rel;
    this.hash[i] = h;
    this.dEnd[i] = start + len;
  }

  start(i: number): number {
    return i ? this.dEnd[i - 1]! : 0;
  }

  docno(i: number): string {
    return latin1(this.bytes, this.start(i), this.dEnd[i]!);
  }

  /** strcmp of docnos i and j */
  cmpDoc(i: number, j: number): number {
    const b = this.bytes;
    let a = this.start(i);
    const ae = this.dEnd[i]!;
    let c = this.start(j);
    const ce = this.dEnd[j]!;
    while (a < ae && c < ce) {
      const d = b[a]! - b[c]!;
      if (d) return d;
      a++;
      c++;
    }
    return ae - a - (ce - c);
  }
}

const E10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
const FLOAT_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INF_RE = /^[+-]?(inf|infinity)$/i;

/** Parse the sim field like strtod (correctly rounded), or return NaN when it is not a number we accept. */
export function parseSim(buf: Uint8Array, s: number, e: number): number {
  // fast path: [-]digits[.digits] with <= 15 significant digits (exact by Clinger's argument)
  let i = s;
  let neg = false;
  if (buf[i] === 0x2d) {
    neg = true;
    i++;
  }
  let m = 0;
  let digits = 0;
  let frac = 0;
  let seenDot = false;
  let ok = i < e;
  for (; i < e; i++) {
    const c = buf[i]!;
    if (c >= 0x30 && c <= 0x39) {
      m = m * 10 + (c - 0x30);
      if (m !== 0 || digits) digits++;
      if (seenDot) frac++;
    } else if (c === 0x2e && !seenDot) seenDot = true;
    else {
      ok = false;
      break;
    }
  }
  if (ok && digits <= 15 && frac <= 22 && (i > s + (neg ? 1 : 0) + (seenDot ? 1 : 0))) {
    const v = frac ? m / E10[frac]! : m;
    return neg ? -v : v;
  }
  const t = latin1(buf, s, e);
  if (FLOAT_RE.test(t)) return Number(t);
  if (INF_RE.test(t)) return t[0] === '-' ? -Infinity : Infinity;
  return Number.NaN;
}

export interface RunReadOptions {
  fileName: string;
}

/**
 * Streams a run: `push(chunk)` any number of times, then `end()`. Lines of queries absent from the
 * qrels are checked for shape but not kept (trec_eval ignores them).
 */
export class RunReader {
  readonly queries = new Map<number, RunQuery>();
  runid = '';
  lines = 0;
  private carry: Uint8Array | null = null;
  private lineNo = 0;
  private lastQ: RunQuery | null | undefined = undefined;
  private lastQidBytes = new Uint8Array(64);
  private lastQidLen = -1;
  readonly otherQids = new Set<string>();

  constructor(
    private qrels: Qrels,
    private opts: RunReadOptions,
  ) {}

  push(chunk: Uint8Array): void {
    let buf = chunk;
    if (this.carry) {
      buf = new Uint8Array(this.carry.length + chunk.length);
      buf.set(this.carry);
      buf.set(chunk, this.carry.length);
      this.carry = null;
    }
    const last = buf.lastIndexOf(0x0a);
    // copies, never views: the caller may reuse its chunk buffer (and Buffer#slice does not copy)
    if (last < 0) {
      this.carry = Uint8Array.prototype.slice.call(buf);
      return;
    }
    this.parse(buf, last + 1);
    if (last + 1 < buf.length) this.carry = Uint8Array.prototype.slice.call(buf, last + 1);
  }

  end(): void {
    if (this.carry) {
      const c = this.carry;
      this.carry = null;
      const b = new Uint8Array(c.length + 1);
      b.set(c);
      b[c.length] = 0x0a;
      this.parse(b, b.length);
    }
  }

  private fail(msg: string, buf: Uint8Array, ls: number, le: number): never {
    throw new UserError(`${this.opts.fileName}:${this.lineNo}: ${msg}: '${latin1(buf, ls, Math.min(le, ls + 120)).trim()}'`);
  }

  private parse(buf: Uint8Array, n: number): void {
    let pos = 0;
    const f = new Int32Array(12);
    let tagS = -1;
    let tagE = -1;
    while (pos < n) {
      this.lineNo++;
      let i = pos;
      while (buf[i] !== 0x0a && SP[buf[i]!]) i++;
      if (buf[i] === 0x0a) {
        pos = i + 1;
        continue;
      }
      const ls = pos;
      if (buf[i] === 0x23) {
        pos = buf.indexOf(0x0a, i) + 1;
        continue;
      }
      let nf = 0;
      while (nf < 6) {
        while (buf[i] !== 0x0a && SP[buf[i]!]) i++;
        if (buf[i] === 0x0a) break;
        f[nf * 2] = i;
        while (!SP[buf[i]!]) {
          if (buf[i] === 0) this.fail('NUL byte in a run line', buf, ls, i);
          i++;
        }
        f[nf * 2 + 1] = i;
        nf++;
      }
      const eol = buf[i] === 0x0a ? i : buf.indexOf(0x0a, i);
      if (nf < 6) {
        this.fail(`expected at least 6 fields 'qid iter docno rank sim tag' in a run line (fields are split on ASCII whitespace only), found ${nf}`, buf, ls, eol);
      }
      pos = eol + 1;
      this.lines++;
      tagS = f[10]!;
      tagE = f[11]!;
      // which query: compare with the previous line's qid bytes
      const qs = f[0]!;
      const qe = f[1]!;
      const ql = qe - qs;
      let same = ql === this.lastQidLen;
      if (same) {
        const lb = this.lastQidBytes;
        for (let k = 0; k < ql; k++) {
          if (lb[k] !== buf[qs + k]) {
            same = false;
            break;
          }
        }
      }
      if (!same) {
        const qid = latin1(buf, qs, qe);
        if (ql > this.lastQidBytes.length) this.lastQidBytes = new Uint8Array(ql * 2);
        this.lastQidBytes.set(buf.subarray(qs, qe));
        this.lastQidLen = ql;
        const qq = this.qrels.byQid.get(qid);
        if (!qq) {
          this.lastQ = null;
          this.otherQids.add(qid);
        } else {
          let rq = this.queries.get(qq.index);
          if (!rq) this.queries.set(qq.index, (rq = new RunQuery(qq)));
          this.lastQ = rq;
        }
      }
      const sim = parseSim(buf, f[8]!, f[9]!);
      if (sim !== sim) {
        this.fail(`field 5 (sim) must be a number (decimal, 1e5, inf; nan and hex are refused), got '${latin1(buf, f[8]!, f[9]!)}'`, buf, ls, eol);
      }
      const rq = this.lastQ;
      if (rq) {
        const ds = f[4]!;
        const de = f[5]!;
        const h = hashBytes(buf, ds, de, rq.q.index);
        rq.add(sim, this.qrels.relValue(rq.q.index, buf, ds, de, h), h, buf, ds, de);
      }
    }
    if (tagS >= 0) this.runid = latin1(buf, tagS, tagE);
  }
}
