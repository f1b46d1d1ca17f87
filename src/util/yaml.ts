/**
 * YAML for user files (golden sets, routing.yaml, gate.yaml, front matter, the promptfoo config), refused in
 * bounded time and memory when pathological.
 *
 * js-yaml shares one object for every use of an alias, so loading an "alias bomb" (each level referring to the
 * previous one ten times) takes time and memory proportional to the TEXT; anything that walks the result
 * (validation, JSON, templating, copies, promptfoo) visits the EXPANDED tree: 10^9 values from under 1 KB, or a
 * million long strings (gigabytes) from 18 KB. So every load is followed by a measure of the expanded size:
 * values (nodes) and characters of text (string values and keys), computed once per distinct object and reused
 * for every alias to it, so the measure itself is linear in the text whatever the expansion. The budget is
 * relative to what the document holds as written (each value and character counted once, aliases not expanded;
 * comments and layout do not count, so padding a file does not raise it): YAML_BUDGET.baseNodes + factor x its
 * values, and baseBytes + factor x its characters, never more than maxNodes / maxBytes (nor less than the written
 * size). A document without aliases is exactly its written size, and ordinary reuse of a list or a block of settings stays far under the
 * budget; a document that expands beyond it, or that contains itself (an alias inside its own anchor), is refused
 * with one line.
 *
 * Schemas: CORE_SCHEMA (no timestamps, no merge keys) for our own files. PRECHECK_SCHEMA reads what promptfoo's
 * loader reads (YAML 1.1 timestamps, !!binary, !!omap, !!pairs, !!set) but keeps `<<` as a plain key: merging is
 * what can cost quadratic time while parsing, and a merge key counted as a key whose value is the merged
 * mapping(s) weighs at least as much as the merged result.
 */
import yaml from 'js-yaml';
import { UserError } from '../errors.ts';

/** Budget of the expanded document: base + factor x its written size, at most max (see the header). */
export const YAML_BUDGET = { baseNodes: 100_000, baseBytes: 4 * 1024 * 1024, factor: 10, maxNodes: 20_000_000, maxBytes: 256 * 1024 * 1024 } as const;

/** The YAML 1.1 types promptfoo's loader accepts, without the merge key (see the header). */
const types = (yaml as unknown as { types: Record<'timestamp' | 'binary' | 'omap' | 'pairs' | 'set', yaml.Type> }).types; // untyped in @types/js-yaml
export const PRECHECK_SCHEMA = yaml.CORE_SCHEMA.extend({
  implicit: [types.timestamp],
  explicit: [types.binary, types.omap, types.pairs, types.set],
});

export interface YamlBudget {
  maxNodes: number;
  maxBytes: number;
}

export interface LoadYamlOptions {
  /** Default yaml.CORE_SCHEMA (no timestamps or other implicit types beyond the JSON-ish core). */
  schema?: yaml.Schema;
  /** Override the budget derived from the document's written size. */
  budget?: Partial<YamlBudget>;
}

/** A YAML syntax error: `FILE:LINE:COL: not valid YAML (reason)`; line and col are 1-based when known. */
export class YamlSyntaxError extends UserError {
  constructor(
    readonly file: string,
    readonly reason: string,
    readonly line?: number,
    readonly col?: number,
  ) {
    super(`${file}${line === undefined ? '' : `:${line}:${col}`}: not valid YAML (${reason})`);
  }
}

/** A document over its expansion budget or cyclic: `FILE: refused: ...`; `detail` is the part after `FILE: `. */
export class YamlSizeError extends UserError {
  constructor(
    readonly file: string,
    readonly detail: string,
  ) {
    super(`${file}: ${detail}`);
  }
}

/** The budget of a document holding `written` values and characters (aliases not expanded). */
export function yamlBudget(written: Pick<ExpandedSize, 'nodes' | 'bytes'>, over: Partial<YamlBudget> = {}): YamlBudget {
  const b = YAML_BUDGET;
  return {
    // never below the written size: a document without aliases is never refused
    maxNodes: over.maxNodes ?? Math.max(written.nodes, Math.min(b.maxNodes, b.baseNodes + b.factor * written.nodes)),
    maxBytes: over.maxBytes ?? Math.max(written.bytes, Math.min(b.maxBytes, b.baseBytes + b.factor * written.bytes)),
  };
}

/** Parse `text` (from `file`); a syntax error, an over-budget or a cyclic document is a UserError naming the file. */
export function loadYaml(text: string, file: string, opts: LoadYamlOptions = {}): unknown {
  let doc: unknown;
  try {
    doc = yaml.load(text, { filename: file, schema: opts.schema ?? yaml.CORE_SCHEMA });
  } catch (e) {
    if (e instanceof RangeError) throw new YamlSyntaxError(file, 'nested too deeply, expected at most a few hundred levels');
    const ye = e as { mark?: { line: number; column: number }; reason?: string; message: string };
    throw new YamlSyntaxError(file, ye.reason ?? ye.message.split('\n')[0]!, ye.mark ? ye.mark.line + 1 : undefined, ye.mark ? ye.mark.column + 1 : undefined);
  }
  checkExpandedSize(doc, file, opts.budget);
  return doc;
}

/**
 * Pre-check a YAML (or JSON) file another program will parse with aliases and merge keys (promptfoo reads
 * promptfooconfig.yaml, and .json configs too, with its YAML loader): the same budget, in the same bounded time.
 */
export function precheckYaml(text: string, file: string): void {
  loadYaml(text, file, { schema: PRECHECK_SCHEMA });
}

export interface ExpandedSize {
  /** values (scalars, lists, mappings), every alias counted as a full copy */
  nodes: number;
  /** characters of string values, keys and other scalars as written out */
  bytes: number;
  /** the same as written in the document: every distinct list or mapping counted once (aliases not expanded) */
  written: { nodes: number; bytes: number };
}

function scalarBytes(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (v instanceof Uint8Array) return v.byteLength;
  if (v instanceof Date) return 24;
  return String(v).length;
}

function isContainer(v: unknown): v is object {
  return typeof v === 'object' && v !== null && !(v instanceof Date) && !(v instanceof Uint8Array);
}

/**
 * The fully expanded size of a parsed document, or 'cycle' when a value contains itself. Linear in the number of
 * DISTINCT objects: each object's size is computed once (iteratively: no recursion, whatever the nesting) and
 * added again for every further reference to it.
 */
export function measureExpanded(doc: unknown): ExpandedSize | 'cycle' {
  if (!isContainer(doc)) return { nodes: 1, bytes: scalarBytes(doc), written: { nodes: 1, bytes: scalarBytes(doc) } };
  interface Frame {
    o: object;
    vals: unknown[];
    i: number;
    nodes: number;
    bytes: number;
  }
  const memo = new Map<object, { nodes: number; bytes: number }>();
  const written = { nodes: 0, bytes: 0 };
  const active = new Set<object>();
  const stack: Frame[] = [];
  const open = (o: object): void => {
    active.add(o);
    let keyBytes = 0;
    let vals: unknown[];
    if (Array.isArray(o)) vals = o;
    else {
      const keys = Object.keys(o);
      for (const k of keys) keyBytes += k.length;
      vals = keys.map((k) => (o as Record<string, unknown>)[k]);
    }
    stack.push({ o, vals, i: 0, nodes: 1, bytes: keyBytes });
    written.nodes += 1;
    written.bytes += keyBytes;
  };
  open(doc);
  for (;;) {
    const f = stack[stack.length - 1]!;
    if (f.i < f.vals.length) {
      const v = f.vals[f.i++];
      if (!isContainer(v)) {
        const b = scalarBytes(v);
        f.nodes += 1;
        f.bytes += b;
        written.nodes += 1;
        written.bytes += b;
        continue;
      }
      const known = memo.get(v);
      if (known) {
        f.nodes += known.nodes;
        f.bytes += known.bytes;
        written.nodes += 1; // the alias itself
      } else if (active.has(v)) return 'cycle';
      else open(v);
      continue;
    }
    stack.pop();
    active.delete(f.o);
    const size = { nodes: f.nodes, bytes: f.bytes };
    memo.set(f.o, size);
    const parent = stack[stack.length - 1];
    if (!parent) return { ...size, written };
    parent.nodes += size.nodes;
    parent.bytes += size.bytes;
  }
}

const count = (n: number) => (Number.isFinite(n) && n < 1e15 ? Math.round(n).toLocaleString('en-US') : n.toExponential(1));

function size(chars: number): string {
  if (!Number.isFinite(chars) || chars >= 1e15) return `${chars.toExponential(1)} characters`;
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let v = chars;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} bytes` : `${v.toFixed(1)} ${units[u]}`;
}

/**
 * Throws a YamlSizeError when `doc`, fully expanded, is over its budget (yamlBudget of its written size, or
 * `budget` where given) or contains a cycle.
 */
export function checkExpandedSize(doc: unknown, file: string, budget: Partial<YamlBudget> = {}): void {
  const m = measureExpanded(doc);
  if (m === 'cycle') throw new YamlSizeError(file, 'refused: a YAML alias refers to a value that contains it (a cycle)');
  const max = yamlBudget(m.written, budget);
  const hint = 'once its YAML aliases such as *name are written out';
  if (m.nodes > max.maxNodes) {
    throw new YamlSizeError(file, `refused: the document expands to more than ${count(max.maxNodes)} values, the limit for the ${count(m.written.nodes)} values it holds as written (${count(m.nodes)} ${hint}); write the values out or split the file`);
  }
  if (m.bytes > max.maxBytes) {
    throw new YamlSizeError(file, `refused: the document expands to more than ${size(max.maxBytes)} of text, the limit for the ${size(m.written.bytes)} of text it holds as written (${size(m.bytes)} ${hint}); write the values out or split the file`);
  }
}
