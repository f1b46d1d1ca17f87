/**
 * Typed field access for one source entry (reporting precise problems with the SOURCE field names),
 * and the checks every format shares (zod schema, duplicate ids, no_results with expectations,
 * category balance).
 */
import { GoldenQuerySchema, KNOWN_CATEGORIES, ROUTINGS, badId, unscorableReason, type ExpectationNames, type GoldenQuery } from './schema.ts';
import { MAX_NESTING, nestingDepth, show, type Collector, type Ref } from './problems.ts';
import { suggest } from '../util/suggest.ts';
import { MAX_EXPANSION_STRINGS, MAX_QUERY_CHARS, count } from '../util/limits.ts';

export function fieldName(path: readonly (string | number)[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s ? `.${p}` : p;
  return s || 'entry';
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const words = (s: string) =>
  s
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 3)
    .map((w) => w.replace(/s$/, ''));

/**
 * The field of `known` a person most likely meant by `word`: one within a few edits (util/suggest.ts), else one
 * containing it or contained in it (`passages` -> `expected_passages`), else the one sharing most words
 * (`relevant_paths` -> `expected_paths`).
 */
export function suggestField(word: string, known: readonly string[]): string | undefined {
  const near = suggest(word, known);
  if (near) return near;
  const w = word.toLowerCase().replace(/-/g, '_');
  if (w.length >= 4) {
    const hit = known.find((k) => k.length >= 4 && (k.includes(w) || w.includes(k)));
    if (hit) return hit;
  }
  const ws = new Set(words(word));
  let best: string | undefined;
  let bestN = 0;
  for (const k of known) {
    const n = words(k).filter((x) => ws.has(x)).length;
    if (n > bestN) {
      best = k;
      bestN = n;
    }
  }
  return best;
}

export function unknownFieldMessage(key: string, known: readonly string[], what: string, noun = 'field'): string {
  const hit = suggestField(key, known);
  const never = `(an unknown ${noun} is an error, never ignored)`;
  if (hit) return `unknown ${noun} ${show(key)}; did you mean '${hit}'? expected only ${what} ${noun}s ${never}`;
  return `unknown ${noun} ${show(key)}, expected only ${what} ${noun}s: ${known.join(', ')} ${never}`;
}

/** A query's `extra` when it came from `format` (format-private data another format has no field for), else undefined. */
export function ownExtra(q: Pick<GoldenQuery, 'extra' | 'origin'>, format: string): Record<string, unknown> | undefined {
  return q.origin?.format === format ? q.extra : undefined;
}

/**
 * Entries nested deeper than MAX_NESTING levels are refused (a real golden entry is 4 deep), so no
 * later step (schema, comparison, writing) can overflow the stack. Returns false (and reports) then.
 */
export function shallowEnough(c: Collector, raw: unknown, index: number, label: string): boolean {
  if (nestingDepth(raw, MAX_NESTING) <= MAX_NESTING) return true;
  c.error({ index, path: [] }, label, 'entry', `nested more than ${MAX_NESTING} levels deep, expected a flat query object (at most ${MAX_NESTING} levels)`);
  return false;
}

/** Reads fields of one entry, remembering which were used so the rest can go to `extra`. */
export class Fields {
  readonly used = new Set<string>();
  failed = false;
  constructor(
    readonly c: Collector,
    readonly raw: Record<string, unknown>,
    readonly index: number,
    public label: string,
    /** prefix of the source path, e.g. [] for a top-level entry */
    readonly base: readonly (string | number)[] = [],
  ) {}

  ref(path: readonly (string | number)[]): Ref {
    return { index: this.index, path: [...this.base, ...path] };
  }
  err(path: readonly (string | number)[], message: string): void {
    this.failed = true;
    this.c.error(this.ref(path), this.label, fieldName([...this.base, ...path]), message);
  }
  warn(path: readonly (string | number)[], message: string): void {
    this.c.warn(this.ref(path), this.label, fieldName([...this.base, ...path]), message);
  }
  has(k: string): boolean {
    return this.raw[k] !== undefined && this.raw[k] !== null;
  }
  get(k: string): unknown {
    this.used.add(k);
    return this.raw[k];
  }
  str(k: string, opts: { required?: boolean; nonEmpty?: boolean; expect?: string } = {}): string | undefined {
    const v = this.get(k);
    const expect = opts.expect ?? (opts.nonEmpty ? 'a non-empty string' : 'a string');
    if (v === undefined || v === null) {
      if (opts.required) this.err([k], `missing, expected ${expect}`);
      return undefined;
    }
    if (typeof v !== 'string') {
      this.err([k], `got ${show(v)}, expected ${expect}`);
      return undefined;
    }
    if (opts.nonEmpty && v.trim() === '') {
      this.err([k], `is empty, expected ${expect}`);
      return undefined;
    }
    return v;
  }
  /** A string, or a number written where a string id is meant (kept as its decimal text). */
  idLike(k: string, opts: { required?: boolean } = {}): string | undefined {
    const v = this.raw[k];
    if (typeof v === 'number' && Number.isFinite(v)) {
      this.used.add(k);
      return String(v);
    }
    return this.str(k, { ...opts, nonEmpty: true, expect: 'a non-empty string id' });
  }
  strList(k: string, opts: { required?: boolean; allowString?: boolean } = {}): string[] | undefined {
    const v = this.get(k);
    if (v === undefined || v === null) {
      if (opts.required) this.err([k], 'missing, expected a list of strings');
      return undefined;
    }
    if (opts.allowString && typeof v === 'string') return [v];
    if (!Array.isArray(v)) {
      this.err([k], `got ${show(v)}, expected a list of strings`);
      return undefined;
    }
    const out: string[] = [];
    v.forEach((x, i) => {
      if (typeof x === 'string' && x.trim() !== '') out.push(x);
      else if (typeof x === 'number') out.push(String(x));
      else this.err([k, i], `got ${show(x)}, expected a non-empty string`);
    });
    return out;
  }
  int(k: string, opts: { required?: boolean } = {}): number | undefined {
    const v = this.get(k);
    if (v === undefined || v === null) {
      if (opts.required) this.err([k], 'missing, expected an integer');
      return undefined;
    }
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      this.err([k], `got ${show(v)}, expected an integer`);
      return undefined;
    }
    return v;
  }
  bool(k: string): boolean | undefined {
    const v = this.get(k);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') {
      this.err([k], `got ${show(v)}, expected true or false`);
      return undefined;
    }
    return v;
  }
  routing(k: string): GoldenQuery['expected_routing'] | undefined {
    const v = this.str(k, { expect: ROUTINGS.join(', ') });
    if (v === undefined) return undefined;
    if (!(ROUTINGS as readonly string[]).includes(v)) {
      this.err([k], `unknown routing ${show(v)}, expected one of ${ROUTINGS.join(', ')}`);
      return undefined;
    }
    return v as GoldenQuery['expected_routing'];
  }
  language(k: string, opts: { required?: boolean } = {}): string | undefined {
    const v = this.str(k, { required: opts.required, nonEmpty: true, expect: 'an ISO 639-1 code such as en, es, hi' });
    if (v === undefined) return undefined;
    if (!/^[a-z]{2}$/.test(v)) {
      this.err([k], `got ${show(v)}, expected an ISO 639-1 code such as en, es, hi`);
      return undefined;
    }
    return v;
  }
  /**
   * Golden entries are closed: every field neither read nor in `known` (the format's fields at this level) is an
   * error with a did-you-mean, so a misnamed expectation (`passages` for `expected_passages`) can never be dropped
   * while the rest of the entry validates. `what` names the level for the message ("expected only DES-058 entry
   * fields").
   */
  closed(known: readonly string[], what: string, noun = 'field'): void {
    for (const k of Object.keys(this.raw)) {
      if (this.used.has(k) || known.includes(k)) continue;
      this.err([k], unknownFieldMessage(k, known, what, noun));
    }
  }
  /** Known fields the reader did not map (kept in `extra` and written back by the same format). */
  rest(): Record<string, unknown> | undefined {
    const out: Record<string, unknown> = {};
    let any = false;
    for (const [k, v] of Object.entries(this.raw)) {
      if (this.used.has(k)) continue;
      out[k] = v;
      any = true;
    }
    return any ? out : undefined;
  }
}

/** Remove undefined-valued keys (so canonical objects compare and serialise cleanly). */
export function compact<T extends Record<string, unknown>>(o: T): T {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

export interface Candidate {
  fields: Fields;
  query: Record<string, unknown>;
}

export interface FinalizeOptions {
  /** the format's name for the list of expectations, for messages: expected_passages, expected_paths, ... */
  expectedField: string;
  /** how the format spells a relevant reference and the safety expectation, for the "nothing to score" message */
  names?: ExpectationNames;
  /** the format's name of the query text, for messages (default `query`; BEIR `text`, NQ `question`) */
  queryField?: string;
}

/**
 * Validate candidates against the canonical schema and the cross-entry rules. Returns the queries of
 * entries without errors (callers treat any error as an invalid file).
 */
export function finalize(c: Collector, candidates: Candidate[], opts: FinalizeOptions): GoldenQuery[] {
  const out: GoldenQuery[] = [];
  const seen = new Map<string, { index: number; query: string }>();
  for (const { fields, query } of candidates) {
    if (!queryWithinCaps(fields, query, opts)) continue;
    const parsed = GoldenQuerySchema.safeParse(query);
    if (!parsed.success) {
      if (!fields.failed) {
        for (const issue of parsed.error.issues) {
          const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
          const field = path[0] === 'expected' ? [opts.expectedField, ...path.slice(1)] : path;
          fields.err(field, `${issue.message} (got ${show(getPath(query, path))})`);
        }
      }
      continue;
    }
    const q = parsed.data;
    const prev = seen.get(q.id);
    if (prev) {
      fields.err(['id'], `duplicate id ${show(q.id)} (already used by entry #${prev.index}), expected every id to be unique`);
      continue;
    }
    seen.set(q.id, { index: fields.index, query: q.query });
    const idProblem = badId(q.id);
    if (idProblem) fields.err(['id'], `id ${show(q.id)} ${idProblem}`);
    q.expected.forEach((r, i) => {
      for (const k of ['chunk_id', 'doc_id', 'path'] as const) {
        const v = r[k];
        const bad = v === undefined ? undefined : badId(v);
        if (bad) fields.err([opts.expectedField, i], `${k} ${show(v)} ${bad}`);
      }
    });
    const unscorable = fields.failed ? undefined : unscorableReason(q, opts.names);
    if (unscorable) {
      fields.err([opts.expectedField], unscorable);
      continue;
    }
    if (q.expected_routing === 'no_results' && q.expected.length > 0) {
      fields.err([opts.expectedField], `${q.expected.length} expectation(s) on a no_results query, expected none (remove them or change expected_routing)`);
      continue;
    }
    if (fields.failed) continue;
    out.push(q);
  }
  if (candidates.length === 0 && c.errorCount === 0) c.warn(undefined, 'file', 'entries', 'the set has no queries, expected at least one');
  categoryBalance(c, out);
  return out;
}

/**
 * The query text within the caps of src/util/limits.ts (docs/golden-sets.md "Query length"): the query and each
 * `expansion:` string at most MAX_QUERY_CHARS characters, at most MAX_EXPANSION_STRINGS expansion strings. Over a cap
 * is an error naming the entry and the field (the text itself is never printed whole).
 */
function queryWithinCaps(fields: Fields, query: Record<string, unknown>, opts: FinalizeOptions): boolean {
  let ok = true;
  const q = query.query;
  if (typeof q === 'string' && q.length > MAX_QUERY_CHARS) {
    fields.err([opts.queryField ?? 'query'], `${count(q.length)} characters, expected at most ${count(MAX_QUERY_CHARS)} (a query's length cap: docs/golden-sets.md#query-length)`);
    ok = false;
  }
  const ex = query.expansion;
  if (Array.isArray(ex)) {
    if (ex.length > MAX_EXPANSION_STRINGS) {
      fields.err(['expansion'], `${ex.length} strings, expected at most ${MAX_EXPANSION_STRINGS} (each runs as its own query: docs/golden-sets.md#query-length)`);
      ok = false;
    }
    ex.forEach((x, i) => {
      if (typeof x === 'string' && x.length > MAX_QUERY_CHARS) {
        fields.err(['expansion', i], `${count(x.length)} characters, expected at most ${count(MAX_QUERY_CHARS)} (an expansion string's length cap: docs/golden-sets.md#query-length)`);
        ok = false;
      }
    });
  }
  return ok;
}

function getPath(o: unknown, path: readonly (string | number)[]): unknown {
  let cur = o;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[p];
  }
  return cur;
}

/**
 * Category balance warnings (never errors): for a set of at least 10 queries whose categories come from
 * the file (not derived), warn when one category holds more than 3x the queries of the smallest, and
 * when a set using the DES-058 categories misses some of the seven.
 */
export function categoryBalance(c: Collector, qs: GoldenQuery[]): void {
  const given = qs.filter((q) => !q.origin?.derived?.includes('category'));
  if (given.length < 10) return;
  const counts = new Map<string, number>();
  for (const q of given) counts.set(q.category, (counts.get(q.category) ?? 0) + 1);
  const known = KNOWN_CATEGORIES as readonly string[];
  if ([...counts.keys()].some((k) => known.includes(k))) {
    const missing = known.filter((k) => !counts.has(k));
    if (missing.length) c.warn(undefined, 'file', 'category', `no queries in categor${missing.length > 1 ? 'ies' : 'y'} ${missing.join(', ')}, expected all seven categories of the portal's DES-058 spec`);
  }
  if (counts.size < 2) return;
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const [maxK, maxN] = sorted[0]!;
  const [minK, minN] = sorted[sorted.length - 1]!;
  if (maxN > 3 * minN) {
    c.warn(undefined, 'file', 'category', `category imbalance: ${maxK} has ${maxN} queries but ${minK} only ${minN}, expected no category above 3x the smallest`);
  }
}
