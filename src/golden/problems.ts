/**
 * Problems found in a golden-set file, each printable as ONE line a person can act on:
 *
 *   FILE:LINE[:COL] (id or #index) field: what is wrong, what was expected
 *
 * `#index` is the 0-based position of the entry in the file (array element, YAML list item, JSONL line,
 * CSV data row); the id is used when the entry has one. Errors make a file invalid, warnings do not.
 */
import { UserError } from '../errors.ts';
import { safeTerminal } from '../util/terminal.ts';

export type Severity = 'error' | 'warning';

export interface Problem {
  file: string;
  line?: number;
  col?: number;
  /** `en-direct-001` or `#3`, or `file` for problems of the whole file. */
  entry: string;
  field: string;
  message: string;
  severity: Severity;
  /** Where in the parsed data the problem is, until a format's locator turns it into line/col. */
  ref?: Ref;
}

/** Entry index and the path of source fields inside it, e.g. `{ index: 3, path: ['expected_passages', 0] }`. */
export interface Ref {
  index: number;
  path: readonly (string | number)[];
}

export function formatProblem(p: Problem): string {
  const loc = p.line === undefined ? p.file : `${p.file}:${p.line}${p.col === undefined ? '' : `:${p.col}`}`;
  const msg = p.severity === 'warning' ? `warning: ${p.message}` : p.message;
  // file names, ids and values quoted from the file may hold newlines or ANSI escapes: one safe line (src/util/terminal.ts)
  return safeTerminal(`${loc} (${entryLabel(p.entry)}) ${p.field}: ${oneLine(msg)}`);
}

/** An entry label (usually the id) as printed: control characters escaped, at most 80 characters. */
export function entryLabel(s: string): string {
  const esc = safeTerminal(s);
  return esc.length > 80 ? `${esc.slice(0, 77)}...` : esc;
}

/**
 * What the root of a file that is not a golden set holds, quoting none of its content (the file may be a linked
 * /etc/passwd or a .env with API keys): its kind and size only.
 */
export function showShape(v: unknown): string {
  if (v === undefined || v === null) return 'an empty document';
  if (typeof v === 'string') return `a string of ${v.length} character${v.length === 1 ? '' : 's'}`;
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (typeof v === 'object') {
    const n = Object.keys(v).length;
    return `a mapping of ${n} key${n === 1 ? '' : 's'}${'queries' in v ? ' whose queries is not a list' : ''}`;
  }
  return `a ${typeof v}`;
}

/** Keep a message on one line (values quoted from the file may contain newlines). */
export function oneLine(s: string): string {
  return s.replace(/\r?\n/g, '\\n');
}

/** Short, one-line rendering of a value found in the file, for messages. */
export function show(v: unknown): string {
  try {
    return showUnsafe(v);
  } catch {
    return Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : typeof v;
  }
}

function showUnsafe(v: unknown): string {
  let s: string;
  if (v === undefined) return 'nothing';
  if (typeof v === 'string') s = JSON.stringify(v);
  else if (v === null) return 'null';
  else if (Array.isArray(v)) s = `an array ${safeJson(v)}`;
  else if (typeof v === 'object') s = `an object ${safeJson(v)}`;
  else s = `${typeof v} ${String(v)}`;
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function safeJson(v: unknown): string {
  if (nestingDepth(v, 8) > 8) return Array.isArray(v) ? '[...]' : '{...}';
  return JSON.stringify(v) ?? String(v);
}

/** Nesting depth of a parsed value (iterative, stops counting past `limit`). */
export function nestingDepth(v: unknown, limit = Infinity): number {
  let max = 0;
  const stack: [unknown, number][] = [[v, 0]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d + 1 > max) max = d + 1;
    if (max > limit) return max;
    for (const y of Array.isArray(x) ? x : Object.values(x as object)) if (y !== null && typeof y === 'object') stack.push([y, d + 1]);
  }
  return max;
}

export const MAX_NESTING = 32;

export interface Loc {
  line?: number;
  col?: number;
}

function isRef(x: Loc | Ref | undefined): x is Ref {
  return x !== undefined && 'index' in x;
}

/** Collects problems of one file; stops recording after `limit` errors so a huge broken file stays fast. */
export class Collector {
  readonly problems: Problem[] = [];
  errorCount = 0;
  dropped = 0;
  constructor(
    readonly file: string,
    readonly limit = 200,
  ) {}
  error(loc: Loc | Ref | undefined, entry: string, field: string, message: string): void {
    this.errorCount++;
    if (this.errorCount > this.limit) {
      this.dropped++;
      return;
    }
    this.push(loc, entry, field, message, 'error');
  }
  warn(loc: Loc | Ref | undefined, entry: string, field: string, message: string): void {
    if (this.problems.length >= this.limit * 2) return;
    this.push(loc, entry, field, message, 'warning');
  }
  private push(loc: Loc | Ref | undefined, entry: string, field: string, message: string, severity: Severity): void {
    if (isRef(loc)) this.problems.push({ file: this.file, entry, field, message, severity, ref: loc });
    else this.problems.push({ file: this.file, line: loc?.line, col: loc?.col, entry, field, message, severity });
  }
  /** Turn entry/field references into line numbers (the format knows how), then sort by line. */
  resolve(locate: (refs: Ref[]) => (ref: Ref) => Loc | undefined): void {
    const refs = this.problems.filter((p) => p.ref).map((p) => p.ref!);
    if (refs.length === 0) return;
    const at = locate(refs);
    for (const p of this.problems) {
      if (!p.ref) continue;
      const loc = at(p.ref);
      p.line = loc?.line;
      p.col = loc?.col;
      delete p.ref;
    }
    // file order (stable: problems of one line keep the order they were found in)
    const order = new Map(this.problems.map((p, i) => [p, i]));
    this.problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || order.get(a)! - order.get(b)!);
  }
  get errors(): Problem[] {
    return this.problems.filter((p) => p.severity === 'error');
  }
  get warnings(): Problem[] {
    return this.problems.filter((p) => p.severity === 'warning');
  }
  /** Problems as printable lines, errors first in file order, with a tail line when some were dropped. */
  lines(): string[] {
    const out = this.problems.map(formatProblem);
    if (this.dropped > 0) out.push(`${this.file}: ... and ${this.dropped} more errors not shown`);
    return out;
  }
}

/** Thrown by loadGoldenFile: the message is the problem lines (one per line), never a stack. */
export class GoldenProblemsError extends UserError {
  readonly problems: Problem[];
  constructor(problems: Problem[], extraLines: string[] = []) {
    super([...problems.map(formatProblem), ...extraLines].join('\n'), 2);
    this.problems = problems;
  }
}
