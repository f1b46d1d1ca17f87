/**
 * DES-058 golden sets (`golden-set-{lang}.json`, the portal's spec): a JSON array of
 *   { id, query, language, category, expected_passages: [{ book_slug, chapter_number,
 *     passage_substring, relevance: "high" | "partial" }], expected_routing, notes }
 * plus the extension fields our demo sets use: `retrieval_intent` ("meet_first" | "console"),
 * `safety_interstitial: true` (crisis-adjacent -> canonical `expect_safety`), `tags`.
 *
 * Grades: `high` -> grade 3, relevant (counts for Recall@3 / MRR); `partial` -> grade 1, not relevant
 * (acceptable in the top 5, gives nDCG gain only). A passage may carry an explicit integer `grade`
 * (rankgate extension, written when converting from a graded format) which then overrides that grade.
 * Passages may also name `chunk_id`, `doc_id`, `path` or `answer_contains` (rankgate extension).
 * Top-level `filters`, `expansion`, `intent`, `source`, `slices` are read into the canonical fields of
 * the same name. Any other field, at either level, is an error with a did-you-mean: entries are closed, so a
 * renamed `expected_passages` can never leave a query silently unscored.
 */
import { FiltersSchema, KNOWN_CATEGORIES, unscorableReason, type GoldenQuery, type Reference } from './schema.ts';
import { Collector, show, showShape, type Ref } from './problems.ts';
import { LineIndex } from './text.ts';
import { JsonSyntaxError, pathKey, scanJson } from './jsonscan.ts';
import { Fields, compact, fieldName, finalize, isPlainObject, ownExtra, shallowEnough, type Candidate } from './entry.ts';

export const DES058_GRADE = { high: 3, partial: 1 } as const;
export const RETRIEVAL_INTENTS = ['meet_first', 'console'];

/** The entry fields a DES-058 set knows (any other field is an error). */
export const DES058_KEYS = ['id', 'query', 'language', 'category', 'tags', 'expected_passages', 'expected_routing', 'retrieval_intent', 'safety_interstitial', 'notes', 'source', 'filters', 'expansion', 'intent', 'slices'] as const;

export interface ReadResult {
  queries: GoldenQuery[];
  /** set-level data a writer of the same format needs (e.g. a YAML wrapper, an NQ corpus). */
  meta?: Record<string, unknown>;
}

/** Parse JSON, reporting a syntax error at its line and column; undefined on error. */
export function parseJsonText(text: string, c: Collector, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    reportJsonSyntax(text, c, what, e);
    return undefined;
  }
}

export function reportJsonSyntax(text: string, c: Collector, what: string, original: unknown, lineOffset = 0, entry?: string): void {
  let msg = original instanceof Error ? original.message : String(original);
  let loc: { line: number; col: number } | undefined;
  let element: number | undefined;
  try {
    scanJson(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) {
      msg = e.message;
      loc = new LineIndex(text).pos(e.offset);
      element = e.element;
    }
  }
  const at = loc ? { line: loc.line + lineOffset, col: loc.col } : undefined;
  c.error(at, entry ?? (element !== undefined ? `#${element}` : 'file'), 'json', `invalid ${what}: ${msg}`);
}

/**
 * A key given twice in one entry, passage or filters object is an error: JSON.parse keeps only the last, so a
 * second `expected_passages: []` would silently replace the first. `line` is set for one JSONL line (its entry
 * index); otherwise `text` is a JSON array of entries. Reported at the entry and field, located by the format.
 */
export function reportDuplicateKeys(text: string, c: Collector, labelOf: (index: number) => string, line?: { index: number }): void {
  const found = (path: readonly (string | number)[]) => {
    const [index, ...rest] = line ? [line.index, ...path] : path;
    if (typeof index !== 'number') return;
    c.error({ index, path: rest }, labelOf(index), fieldName(rest), `duplicate key ${show(rest[rest.length - 1])}, expected each field once (JSON keeps only the last one: the first would be silently dropped)`);
  };
  try {
    scanJson(text, undefined, undefined, 0, { depth: line ? 3 : 4, found });
  } catch {
    /* parsed before: cannot fail */
  }
}

/** Locator for problems of a JSON array file: the line of the deepest recorded key/element of the path. */
export function jsonLocator(text: string, base: readonly (string | number)[] = []) {
  return (refs: Ref[]) => {
    const map = new Map<string, number>();
    const wanted = new Set(refs.map((r) => r.index));
    try {
      scanJson(text, map, base.length ? undefined : wanted, 5 + base.length);
    } catch {
      /* text parsed before; cannot fail */
    }
    const li = new LineIndex(text);
    return (ref: Ref) => {
      const full = [...base, ref.index, ...ref.path];
      for (let k = full.length; k >= 0; k--) {
        const off = map.get(pathKey(full.slice(0, k)));
        if (off !== undefined) return { line: li.line(off) };
      }
      return undefined;
    };
  };
}

/** The label of entry `index` for messages: its id (string or number), else `#index`. */
export function entryLabel(raw: unknown, idKey: string, index: number): string {
  const id = isPlainObject(raw) ? raw[idKey] : undefined;
  return (typeof id === 'string' && id) || typeof id === 'number' ? String(id) : `#${index}`;
}

function wordCount(s: string): number {
  return s.trim().split(/\s+/u).filter(Boolean).length;
}

/** expected_routing (recorded as derived when absent), retrieval_intent and expect_safety, as the blind-test YAML and
 * gold-set JSONL formats spell them (DES-058 spells safety and intent differently and checks them itself). */
export function readRoutingFields(f: Fields, q: Record<string, unknown>, derived: string[]): void {
  const routing = f.routing('expected_routing');
  if (routing) q.expected_routing = routing;
  else if (!f.has('expected_routing')) derived.push('expected_routing');
  const ri = f.str('retrieval_intent', { nonEmpty: true });
  if (ri !== undefined) q.retrieval_intent = ri;
  const safety = f.bool('expect_safety');
  if (safety !== undefined) q.expect_safety = safety;
}

/** The fields that end a DES-058 or blind-test YAML entry: notes, source (bootstrap | reviewed), the extension
 * fields; any other field is an error (entries are closed). */
export function readTail(f: Fields, q: Record<string, unknown>, known: readonly string[], what: string): void {
  const notes = f.str('notes');
  if (notes !== undefined) q.notes = notes;
  const source = f.str('source');
  if (source !== undefined) {
    if (source === 'bootstrap' || source === 'reviewed') q.source = source;
    else f.err(['source'], `unknown source ${show(source)}, expected bootstrap or reviewed`);
  }
  readExtensions(f, q);
  f.closed(known, what);
  const extra = f.rest();
  if (extra) q.extra = extra;
}

/** Read extension fields shared by the JSON-object formats (DES-058, gold-set JSONL). */
export function readExtensions(f: Fields, q: Record<string, unknown>): void {
  if (f.has('filters')) {
    const v = f.get('filters');
    const r = FiltersSchema.safeParse(v);
    if (r.success) q.filters = r.data;
    else
      for (const i of r.error.issues) {
        if (i.code === 'unrecognized_keys') for (const k of i.keys) f.err(['filters', k], `unknown filter ${show(k)}, expected folder, tags, language or book`);
        else f.err(['filters', ...i.path.map(String)], `${i.message}, expected an object with folder (string), tags (list), language (string), book (string)`);
      }
  }
  const exp = f.strList('expansion');
  if (exp) q.expansion = exp;
  const intent = f.str('intent');
  if (intent !== undefined) q.intent = intent;
  if (f.has('slices')) {
    const v = f.get('slices');
    if (isPlainObject(v) && Object.values(v).every((x) => typeof x === 'string')) q.slices = v;
    else f.err(['slices'], `got ${show(v)}, expected an object of string values`);
  }
}

export function readDes058(text: string, c: Collector): ReadResult {
  const data = parseJsonText(text, c, 'JSON');
  if (data === undefined) return { queries: [] };
  if (!Array.isArray(data)) {
    c.error({ line: 1 }, 'file', 'root', `got ${showShape(data)}, expected a JSON array of query objects`);
    return { queries: [] };
  }
  reportDuplicateKeys(text, c, (i) => entryLabel(data[i], 'id', i));
  const candidates: Candidate[] = [];
  data.forEach((raw, index) => {
    if (!isPlainObject(raw)) {
      c.error({ index, path: [] }, `#${index}`, 'entry', `got ${show(raw)}, expected an object with id, query, language, category`);
      return;
    }
    if (!shallowEnough(c, raw, index, `#${index}`)) return;
    const label = entryLabel(raw, 'id', index);
    const f = new Fields(c, raw, index, label);
    const derived: string[] = [];
    const q: Record<string, unknown> = {};
    q.id = f.idLike('id', { required: true });
    q.query = f.str('query', { required: true, nonEmpty: true });
    q.language = f.language('language', { required: true });
    q.category = f.str('category', { required: true, nonEmpty: true, expect: `a category (${KNOWN_CATEGORIES.join(', ')})` });
    if (typeof q.category === 'string' && !(KNOWN_CATEGORIES as readonly string[]).includes(q.category)) {
      f.warn(['category'], `unknown category ${show(q.category)}, expected one of ${KNOWN_CATEGORIES.join(', ')} (allowed, but the portal's DES-058 spec reports only those)`);
    }
    const tags = f.strList('tags');
    if (tags) q.tags = tags;
    else derived.push('tags');
    if (!f.has('expected_passages')) derived.push('expected');
    const passages = readPassageList(f, 'expected_passages');
    if (passages) q.expected = passages;
    const routing = f.routing('expected_routing');
    if (routing) q.expected_routing = routing;
    else if (!f.has('expected_routing')) derived.push('expected_routing');
    const intent = f.str('retrieval_intent', { nonEmpty: true, expect: 'a retrieval intent such as meet_first or console' });
    if (intent !== undefined) q.retrieval_intent = intent;
    if (intent !== undefined && !RETRIEVAL_INTENTS.includes(intent)) f.warn(['retrieval_intent'], `unknown retrieval intent ${show(intent)}, expected ${RETRIEVAL_INTENTS.join(' or ')} (allowed, but the judge knows only those)`);
    const safety = f.bool('safety_interstitial');
    if (safety !== undefined) q.expect_safety = safety;
    readTail(f, q, DES058_KEYS, 'DES-058 entry');
    q.origin = compact({ format: 'des058', derived: derived.length ? derived : undefined });
    // advice on a search query's passages, only for an entry without errors (an unknown field or a query with
    // nothing to score is an error, reported instead)
    if (!f.failed && (routing === 'search' || !f.has('expected_routing')) && (passages || !f.has('expected_passages'))) {
      const refs = (q.expected ?? []) as Reference[];
      if (!unscorableReason({ expected: refs, expected_routing: routing ?? 'search', expect_safety: safety, origin: q.origin as GoldenQuery['origin'] })) {
        if (refs.length === 0) f.warn(['expected_passages'], 'no expected passages on a search query, expected 1-3 (Recall@3 can only be judged by the LLM fallback)');
        else if (!refs.some((r) => r.relevant)) f.warn(['expected_passages'], 'no passage with relevance "high", expected at least one (Recall@3 counts only high passages)');
      }
      if (refs.length > 3) f.warn(['expected_passages'], `${refs.length} passages, expected 1-3 (the portal's DES-058 spec)`);
    }
    candidates.push({ fields: f, query: compact(q) });
  });
  const queries = finalize(c, candidates, { expectedField: 'expected_passages', names: { relevant: 'a passage with relevance "high"', safety: 'safety_interstitial: true' } });
  c.resolve(jsonLocator(text));
  return { queries };
}

const PASSAGE_KEYS = ['book_slug', 'chapter_number', 'passage_substring', 'relevance', 'chunk_id', 'doc_id', 'path', 'grade', 'answer_contains'] as const;

/** A list of DES-058 passage objects under `key` (also used by the other formats for non-path references). */
export function readPassageList(f: Fields, key: string): Reference[] | undefined {
  const v = f.get(key);
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) {
    f.err([key], `got ${show(v)}, expected a list of passages (empty for no_results queries)`);
    return undefined;
  }
  return v.map((p, i) => readPassage(f, p, i, key)).filter((x) => x !== undefined);
}

function readPassage(f: Fields, p: unknown, i: number, key: string): Reference | undefined {
  const at = [key, i] as const;
  if (!isPlainObject(p)) {
    f.err([...at], `got ${show(p)}, expected an object with passage_substring and relevance`);
    return undefined;
  }
  const pf = new Fields(f.c, p, f.index, f.label, [...at]);
  const ref: Record<string, unknown> = {};
  ref.book_slug = pf.str('book_slug', { nonEmpty: true });
  ref.chapter_number = pf.int('chapter_number');
  ref.chunk_id = pf.idLike('chunk_id');
  ref.doc_id = pf.idLike('doc_id');
  ref.path = pf.str('path', { nonEmpty: true });
  ref.answer_contains = pf.str('answer_contains', { nonEmpty: true });
  const hasOther = ref.chunk_id !== undefined || ref.doc_id !== undefined || ref.path !== undefined;
  ref.passage_substring = pf.str('passage_substring', { required: !hasOther, nonEmpty: true, expect: 'a verbatim 10-40 word substring of the passage' });
  if (typeof ref.passage_substring === 'string') {
    const n = wordCount(ref.passage_substring);
    if (n < 10 || n > 40) pf.warn(['passage_substring'], `has ${n} words, expected 10-40 words (the DES-058 spec's substring rule: long enough to be unique, short enough to survive re-chunking)`);
  }
  const rel = pf.get('relevance');
  let grade: number | undefined;
  if (rel === undefined || rel === null) pf.err(['relevance'], 'missing, expected "high" or "partial"');
  else if (rel !== 'high' && rel !== 'partial') pf.err(['relevance'], `unknown relevance ${show(rel)}, expected "high" or "partial"`);
  else {
    ref.relevant = rel === 'high';
    grade = DES058_GRADE[rel];
  }
  const g = pf.int('grade');
  if (g !== undefined) grade = g;
  ref.grade = grade;
  pf.closed(PASSAGE_KEYS, 'DES-058 passage');
  if (pf.failed) {
    f.failed = true;
    return undefined;
  }
  return compact(ref) as Reference;
}

/** DES-058 passage object for a canonical reference. */
export function toPassage(r: Reference): Record<string, unknown> {
  const relevance = r.relevant ? 'high' : 'partial';
  return compact({
    book_slug: r.book_slug,
    chapter_number: r.chapter_number,
    passage_substring: r.passage_substring,
    relevance,
    chunk_id: r.chunk_id,
    doc_id: r.doc_id,
    path: r.path,
    answer_contains: r.answer_contains,
    grade: r.grade === DES058_GRADE[relevance] ? undefined : r.grade,
  });
}

/**
 * Value to write for a canonical field that has a default: when the entry came from `format`, write it
 * unless the reader derived it; when it came from elsewhere, write it unless it is the default.
 */
export function emit<T>(q: GoldenQuery, field: string, format: string, value: T, isDefault: boolean): T | undefined {
  if (q.origin?.format === format) return isDerived(q, field, format) ? undefined : value;
  return isDefault ? undefined : value;
}

export function isDerived(q: GoldenQuery, field: string, format: string): boolean {
  return q.origin?.format === format && (q.origin.derived?.includes(field) ?? false);
}

export function writeDes058(queries: readonly GoldenQuery[]): string {
  const out = queries.map((q) => {
    const d = (f: string) => isDerived(q, f, 'des058');
    return compact({
      id: q.id,
      query: q.query,
      language: q.language,
      category: q.category,
      tags: d('tags') ? undefined : q.tags,
      expected_passages: d('expected') ? undefined : q.expected.map(toPassage),
      expected_routing: d('expected_routing') ? undefined : q.expected_routing,
      retrieval_intent: q.retrieval_intent,
      safety_interstitial: q.expect_safety,
      notes: q.notes,
      source: q.source,
      filters: q.filters,
      expansion: q.expansion,
      intent: q.intent,
      slices: Object.keys(q.slices).length ? q.slices : undefined,
      ...ownExtra(q, 'des058'),
    });
  });
  return `${JSON.stringify(out, null, 2)}\n`;
}
