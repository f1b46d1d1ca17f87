/**
 * Gold-set JSONL (`data/eval/gold-set.jsonl`, the legal gold-set harness): one object per line
 *   {"id","query","practice_area","corpus","relevant_case_law_ids":[...],"source":"bootstrap|chair","note"}
 *
 * Mapping: `practice_area` and `corpus` -> `slices` (reported like categories); each id in
 * `relevant_case_law_ids` -> a `doc_id` reference, grade 3, relevant (the legal gold-set harness records a cited precedent as relevance_score=3);
 * `source: bootstrap` -> bootstrap, `source: chair` -> reviewed (the original spelling is kept in
 * `origin.raw.source` and written back); `note` -> notes. `language` (when absent) is guessed from
 * the script of the query (Hebrew -> he, ...), `category` (when absent) is practice_area, else corpus,
 * else `general`; derived values are not written back. Optional extension fields: language,
 * category, tags, expected_routing, retrieval_intent, expect_safety, filters, expansion, intent,
 * slices, expected_passages (references that are not plain case-law ids). Any other field is an error.
 * Blank lines are skipped; line numbers in problems are the file's own.
 */
import type { GoldenQuery, Reference } from './schema.ts';
import { Collector, show, type Ref } from './problems.ts';
import { guessLanguage } from './text.ts';
import { Fields, compact, finalize, isPlainObject, ownExtra, shallowEnough, type Candidate } from './entry.ts';
import { emit, entryLabel, isDerived, readExtensions, readPassageList, readRoutingFields, reportDuplicateKeys, reportJsonSyntax, toPassage, type ReadResult } from './des058.ts';

export interface JsonlRow {
  line: number;
  value: unknown;
  /** the line's text */
  text: string;
}

/** Parse JSON Lines, reporting each broken line with its line and column. */
export function parseJsonLines(text: string, c: Collector): JsonlRow[] {
  const rows: JsonlRow[] = [];
  let start = 0;
  let lineNo = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    lineNo++;
    let line = text.slice(start, end);
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.trim() !== '') {
      try {
        rows.push({ line: lineNo, value: JSON.parse(line), text: line });
      } catch (e) {
        reportJsonSyntax(line, c, 'JSON on this line', e, lineNo - 1, `#${rows.length}`);
        rows.push({ line: lineNo, value: undefined, text: line });
      }
    }
    if (end === text.length) break;
    start = end + 1;
  }
  return rows;
}

export function rowLocator(rows: readonly JsonlRow[]) {
  return (_refs: Ref[]) => (ref: Ref) => {
    const r = rows[ref.index];
    return r ? { line: r.line } : undefined;
  };
}

/** The fields a gold-set JSONL line knows (any other field is an error). */
export const JSONL_KEYS = ['id', 'query', 'practice_area', 'corpus', 'relevant_case_law_ids', 'source', 'note', 'language', 'category', 'tags', 'expected_passages', 'expected_routing', 'retrieval_intent', 'expect_safety', 'filters', 'expansion', 'intent', 'slices'] as const;

export function readGoldJsonl(text: string, c: Collector): ReadResult {
  const rows = parseJsonLines(text, c);
  rows.forEach((r, index) => {
    if (r.value !== undefined) reportDuplicateKeys(r.text, c, (i) => entryLabel(rows[i]?.value, 'id', i), { index });
  });
  const candidates: Candidate[] = [];
  rows.forEach(({ value: raw }, index) => {
    if (raw === undefined) return; // syntax error already reported
    if (!isPlainObject(raw)) {
      c.error({ index, path: [] }, `#${index}`, 'entry', `got ${show(raw)}, expected a JSON object with id, query, relevant_case_law_ids`);
      return;
    }
    if (!shallowEnough(c, raw, index, `#${index}`)) return;
    const label = typeof raw.id === 'string' && raw.id ? raw.id : `#${index}`;
    const f = new Fields(c, raw, index, label);
    const derived: string[] = [];
    const rawVals: Record<string, unknown> = {};
    const q: Record<string, unknown> = {};
    q.id = f.idLike('id', { required: true });
    q.query = f.str('query', { required: true, nonEmpty: true });
    const slices: Record<string, string> = {};
    const pa = f.str('practice_area');
    if (pa !== undefined) slices.practice_area = pa;
    const corpus = f.str('corpus');
    if (corpus !== undefined) slices.corpus = corpus;
    if (f.has('language')) q.language = f.language('language');
    else {
      q.language = guessLanguage(typeof q.query === 'string' ? q.query : '');
      derived.push('language');
    }
    if (f.has('category')) q.category = f.str('category', { nonEmpty: true });
    else {
      q.category = pa || corpus || 'general';
      derived.push('category');
    }
    const tags = f.strList('tags');
    if (tags) q.tags = tags;
    else derived.push('tags');
    const ids = f.strList('relevant_case_law_ids', { required: true });
    const refs: Reference[] = (ids ?? []).map((id) => ({ doc_id: id, grade: 3, relevant: true }));
    const more = readPassageList(f, 'expected_passages');
    if (more) refs.push(...more);
    q.expected = refs;
    const src = f.str('source');
    if (src !== undefined) {
      if (src === 'bootstrap') q.source = 'bootstrap';
      else if (src === 'chair' || src === 'reviewed') {
        q.source = 'reviewed';
        rawVals.source = src;
      } else f.err(['source'], `unknown source ${show(src)}, expected bootstrap or chair`);
    }
    const note = f.str('note');
    if (note !== undefined) q.notes = note;
    readRoutingFields(f, q, derived);
    readExtensions(f, q);
    q.slices = { ...slices, ...((q.slices as Record<string, string> | undefined) ?? {}) };
    f.closed(JSONL_KEYS, 'gold-set JSONL entry');
    const extra = f.rest();
    if (extra) q.extra = extra;
    q.origin = compact({ format: 'jsonl', derived: derived.length ? derived : undefined, raw: Object.keys(rawVals).length ? rawVals : undefined });
    candidates.push({ fields: f, query: compact(q) });
  });
  const queries = finalize(c, candidates, { expectedField: 'relevant_case_law_ids', names: { relevant: 'an id in relevant_case_law_ids (or a passage with relevance "high")', safety: 'expect_safety: true' } });
  c.resolve(rowLocator(rows));
  return { queries };
}

function isPlainCaseLaw(r: Reference): boolean {
  return r.doc_id !== undefined && r.grade === 3 && r.relevant && Object.keys(r).every((k) => ['doc_id', 'grade', 'relevant'].includes(k));
}

export function writeGoldJsonl(queries: readonly GoldenQuery[]): string {
  const lines = queries.map((q) => {
    const d = (f: string) => isDerived(q, f, 'jsonl');
    const { practice_area, corpus, ...otherSlices } = q.slices;
    const plain = q.expected.filter(isPlainCaseLaw);
    const other = q.expected.filter((r) => !isPlainCaseLaw(r));
    const rawSource = q.origin?.format === 'jsonl' ? q.origin.raw?.source : undefined;
    const source = q.source === 'reviewed' ? (typeof rawSource === 'string' ? rawSource : 'chair') : q.source;
    return JSON.stringify(
      compact({
        id: q.id,
        query: q.query,
        practice_area,
        corpus,
        relevant_case_law_ids: plain.map((r) => r.doc_id!),
        source,
        note: q.notes,
        language: d('language') ? undefined : q.language,
        category: d('category') ? undefined : q.category,
        tags: emit(q, 'tags', 'jsonl', q.tags, q.tags.length === 0),
        expected_passages: other.length ? other.map(toPassage) : undefined,
        expected_routing: emit(q, 'expected_routing', 'jsonl', q.expected_routing, q.expected_routing === 'search'),
        retrieval_intent: q.retrieval_intent,
        expect_safety: q.expect_safety,
        filters: q.filters,
        expansion: q.expansion,
        intent: q.intent,
        slices: Object.keys(otherSlices).length ? otherSlices : undefined,
        ...ownExtra(q, 'jsonl'),
      }),
    );
  });
  return lines.length ? `${lines.join('\n')}\n` : '';
}
