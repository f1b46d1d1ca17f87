/**
 * Blind-test YAML (`queries.yaml`, the blind-test framework): a list of entries (or a mapping with a `queries:` list)
 *
 *   - query: "记忆保持力"
 *     intent: "..."
 *     expected_paths: [notes/fsrs-algorithm.md, ...]      # hard must-hit labels: relevant
 *     relevance: { "notes/fsrs-algorithm.md": 3, "logs/2026-W15.md": 2 }   # grades 0..3 for nDCG
 *     tags: [cjk, common]
 *     filters: { folder: notes, tags: [memory] }
 *     answer_contains: { "notes/spaced-repetition.md": "spacing effect" }
 *     expansion: ["..."]
 *
 * Mapping: every path in expected_paths is a reference with `relevant: true` and grade
 * `relevance[path]`, or grade 3 when no grade is given (marked `implied_grade`, not written back).
 * A path that only appears in `relevance` is a reference with that grade and `relevant: false`
 * (it adds nDCG gain but is not a must-hit). `answer_contains[path]` lands on that path's reference.
 *
 * Ids: the format has none. An entry's `id:` is kept when present; otherwise the id is
 * `yaml-<index>` (0-based position in the list). Appending entries keeps every id stable; inserting or
 * reordering entries shifts them (`rankgate golden diff` then reports ids reused for different
 * queries): give such entries an explicit `id:`. `language` (when absent) is guessed from the script of
 * the query (CJK -> zh/ja/ko, Devanagari -> hi, else en) and `category` (when absent) is the first tag,
 * else `general`; derived values are never written back into the YAML.
 * Also read when present: language, category, expected_routing, retrieval_intent, expect_safety, notes,
 * source, slices, and `expected_passages` (DES-058-style references that are not paths, written when
 * converting from another format). Any other field is an error with a did-you-mean (entries are closed: a
 * misnamed expectation such as `relevant_paths:` is never silently dropped).
 */
import yaml from 'js-yaml';
import { YamlSizeError, YamlSyntaxError, loadYaml } from '../util/yaml.ts';
import type { GoldenQuery, Reference } from './schema.ts';
import { Collector, show, showShape, type Ref } from './problems.ts';
import { guessLanguage } from './text.ts';
import { Fields, compact, finalize, isPlainObject, ownExtra, shallowEnough, type Candidate } from './entry.ts';
import { isDerived, readPassageList, readRoutingFields, readTail, toPassage, type ReadResult } from './des058.ts';

/** The entry fields a blind-test YAML set knows (any other field is an error). */
export const YAML_KEYS = ['id', 'query', 'language', 'category', 'intent', 'expected_paths', 'relevance', 'tags', 'filters', 'answer_contains', 'expansion', 'expected_passages', 'expected_routing', 'retrieval_intent', 'expect_safety', 'notes', 'source', 'slices'] as const;

export function readBlindYaml(text: string, c: Collector): ReadResult {
  let data: unknown;
  try {
    // bounded: an alias bomb or a cyclic document is refused before anything walks it (src/util/yaml.ts)
    data = loadYaml(text, c.file);
  } catch (e) {
    if (e instanceof YamlSyntaxError) {
      c.error(e.line === undefined ? undefined : { line: e.line, col: e.col }, 'file', 'yaml', `invalid YAML: ${e.reason}, expected valid YAML (check indentation, quotes, brackets and duplicate keys)`);
    } else if (e instanceof YamlSizeError) c.error({ line: 1 }, 'file', 'yaml', e.detail);
    else throw e;
    return { queries: [] };
  }
  let list: unknown;
  let meta: Record<string, unknown> | undefined;
  if (Array.isArray(data)) list = data;
  else if (isPlainObject(data) && Array.isArray(data.queries)) {
    const { queries, ...rest } = data;
    list = queries;
    meta = { wrapper: rest };
  } else {
    c.error({ line: 1 }, 'file', 'root', `got ${showShape(data)}, expected a list of queries (or a mapping with a queries: list)`);
    return { queries: [] };
  }
  const candidates: Candidate[] = [];
  (list as unknown[]).forEach((raw, index) => {
    if (!isPlainObject(raw)) {
      c.error({ index, path: [] }, `#${index}`, 'entry', `got ${show(raw)}, expected a mapping with query and expected_paths`);
      return;
    }
    if (!shallowEnough(c, raw, index, `#${index}`)) return;
    const hasId = raw.id !== undefined && raw.id !== null;
    const label = hasId ? String(raw.id) : `#${index}`;
    const f = new Fields(c, raw, index, label);
    const derived: string[] = [];
    const q: Record<string, unknown> = {};
    q.id = hasId ? f.idLike('id') : `yaml-${index}`;
    if (!hasId) derived.push('id');
    q.query = f.str('query', { required: true, nonEmpty: true });
    const tags = f.strList('tags');
    if (tags) q.tags = tags;
    else derived.push('tags');
    if (f.has('language')) q.language = f.language('language');
    else {
      q.language = guessLanguage(typeof q.query === 'string' ? q.query : '');
      derived.push('language');
    }
    if (f.has('category')) q.category = f.str('category', { nonEmpty: true });
    else {
      q.category = tags?.[0] ?? 'general';
      derived.push('category');
    }

    const refs: Reference[] = [];
    const byPath = new Map<string, Reference>();
    const paths = f.strList('expected_paths') ?? [];
    paths.forEach((p, i) => {
      if (byPath.has(p)) return f.err(['expected_paths', i], `duplicate path ${show(p)}, expected each path once`);
      const r: Reference = { path: p, grade: 3, relevant: true, implied_grade: true };
      byPath.set(p, r);
      refs.push(r);
    });
    if (!f.has('expected_paths')) derived.push('expected_paths');
    const rel = f.get('relevance');
    if (rel !== undefined && rel !== null) {
      if (!isPlainObject(rel)) f.err(['relevance'], `got ${show(rel)}, expected a mapping of path: grade (0-3)`);
      else
        for (const [p, g] of Object.entries(rel)) {
          if (typeof g !== 'number' || !Number.isInteger(g) || g < 0 || g > 3) {
            f.err(['relevance', p], `unknown grade ${show(g)}, expected 0, 1, 2 or 3 (3 direct answer, 2 strong support, 1 related, 0 irrelevant)`);
            continue;
          }
          const r = byPath.get(p);
          if (r) {
            r.grade = g;
            delete r.implied_grade;
          } else {
            const nr: Reference = { path: p, grade: g, relevant: false };
            byPath.set(p, nr);
            refs.push(nr);
          }
        }
    }
    const ans = f.get('answer_contains');
    if (ans !== undefined && ans !== null) {
      if (!isPlainObject(ans)) f.err(['answer_contains'], `got ${show(ans)}, expected a mapping of path: phrase`);
      else
        for (const [p, s] of Object.entries(ans)) {
          const r = byPath.get(p);
          if (typeof s !== 'string' || s.trim() === '') f.err(['answer_contains', p], `got ${show(s)}, expected a non-empty phrase`);
          else if (!r) f.err(['answer_contains', p], `names path ${show(p)} that is in neither expected_paths nor relevance, expected one of those paths`);
          else r.answer_contains = s;
        }
    }
    const passages = readPassageList(f, 'expected_passages');
    if (passages) refs.push(...passages);
    q.expected = refs;
    readRoutingFields(f, q, derived);
    readTail(f, q, YAML_KEYS, 'blind-test YAML entry');
    q.origin = compact({ format: 'yaml', derived: derived.length ? derived : undefined });
    candidates.push({ fields: f, query: compact(q) });
  });
  const queries = finalize(c, candidates, { expectedField: 'expected_paths', names: { relevant: 'a path in expected_paths (or a passage with relevance "high")', safety: 'expect_safety: true' } });
  c.resolve(yamlLocator(text));
  return { queries, meta };
}

/**
 * Line of an entry / field in a block-style YAML list: entries start at the lines that begin with
 * `- ` at the indentation of the first list item; a field is the first `key:` line inside the entry.
 */
function yamlLocator(text: string) {
  return (_refs: Ref[]) => {
    const lines = text.split('\n');
    const starts: number[] = [];
    let indent: number | undefined;
    // in a `queries:` mapping, the list starts after that key
    const from = Math.max(0, lines.findIndex((l) => /^queries\s*:/.test(l)));
    lines.forEach((l, i) => {
      if (i < from) return;
      const m = /^(\s*)-(\s|$)/.exec(l);
      if (!m) return;
      if (indent === undefined) indent = m[1]!.length;
      if (m[1]!.length === indent) starts.push(i);
    });
    return (ref: Ref) => {
      const s = starts[ref.index];
      if (s === undefined) return undefined;
      const end = starts[ref.index + 1] ?? lines.length;
      let line = s;
      for (const part of ref.path) {
        if (typeof part === 'number') {
          // k-th list item after the current line
          let k = -1;
          for (let i = line + 1; i < end; i++) {
            if (/^\s*-(\s|$)/.test(lines[i]!) && ++k === part) {
              line = i;
              break;
            }
          }
          continue;
        }
        const esc = part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        const re = new RegExp(`^\\s*(-\\s+)?(${esc}|"${esc}"|'${esc}')\\s*:`);
        for (let i = line; i < end; i++) {
          if (re.test(lines[i]!)) {
            line = i;
            break;
          }
        }
      }
      return { line: line + 1 };
    };
  };
}

export function writeBlindYaml(queries: readonly GoldenQuery[], meta?: Record<string, unknown>): string {
  const list = queries.map((q) => {
    const d = (f: string) => isDerived(q, f, 'yaml');
    const pathRefs = q.expected.filter((r) => r.path !== undefined && !r.chunk_id && !r.doc_id && !r.passage_substring && !r.book_slug && r.chapter_number === undefined && !r.extra);
    const other = q.expected.filter((r) => !pathRefs.includes(r));
    const expectedPaths = pathRefs.filter((r) => r.relevant).map((r) => r.path!);
    const relevance: Record<string, number> = {};
    const answers: Record<string, string> = {};
    for (const r of pathRefs) {
      if (!r.implied_grade || !r.relevant || r.grade !== 3) relevance[r.path!] = r.grade;
      if (r.answer_contains) answers[r.path!] = r.answer_contains;
    }
    return compact({
      id: d('id') ? undefined : q.id,
      query: q.query,
      language: d('language') ? undefined : q.language,
      category: d('category') ? undefined : q.category,
      intent: q.intent,
      expected_paths: d('expected_paths') && expectedPaths.length === 0 ? undefined : expectedPaths,
      relevance: Object.keys(relevance).length ? relevance : undefined,
      tags: d('tags') ? undefined : q.tags,
      filters: q.filters,
      answer_contains: Object.keys(answers).length ? answers : undefined,
      expansion: q.expansion,
      expected_passages: other.length ? other.map(toPassage) : undefined,
      expected_routing: d('expected_routing') || (q.origin?.format !== 'yaml' && q.expected_routing === 'search') ? undefined : q.expected_routing,
      retrieval_intent: q.retrieval_intent,
      expect_safety: q.expect_safety,
      notes: q.notes,
      source: q.source,
      slices: Object.keys(q.slices).length ? q.slices : undefined,
      ...ownExtra(q, 'yaml'),
    });
  });
  const wrapper = meta?.wrapper;
  const doc = isPlainObject(wrapper) ? { ...wrapper, queries: list } : list;
  return yaml.dump(doc, { lineWidth: -1, noRefs: true, schema: yaml.CORE_SCHEMA });
}
