/**
 * Golden entries are closed, and every entry states something rankgate can score or check.
 *
 * In every format an unknown key on an entry is an ERROR (FILE:LINE (id) key: ... did you mean ...), not a warning
 * or extra data: a DES-058 set whose `expected_passages` is renamed `passages` on the queries that miss used to
 * validate and gate at Recall@3 1.0. A query with nothing checkable (no relevant reference, no practice_bridge /
 * no_results routing, no expect_safety: true) is an error whatever else it states. `golden validate`,
 * `golden check` and the tests loader (datasets/tests.ts) refuse such a set with exit 2.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isUserError } from '../../src/errors.ts';
import { loadGoldenFile, readGoldenFile } from '../../src/golden/index.ts';
import { suggestField } from '../../src/golden/entry.ts';
import { generateTests } from '../../datasets/tests.ts';
import { ROOT, tempDir } from './helpers.ts';

const q = (o: Record<string, unknown>) => ({ id: 'a', query: 'what is love', language: 'en', category: 'direct', ...o });
const des = (...items: unknown[]) => JSON.stringify(items, null, 2);
const high = { passage_substring: 'one two three four five six seven eight nine ten eleven', relevance: 'high' };
const partial = { ...high, relevance: 'partial' };
const jsonl = (...rows: unknown[]) => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

interface Case {
  name: string;
  files: Record<string, string>;
  open?: string;
  /** an error line (FILE replaced by F) must match */
  expect: RegExp;
}

function write(dir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
}

/** Error lines of the file, FILE replaced by F; asserts the file is invalid and loadGoldenFile refuses it with exit code 2. */
function errorsOf(dir: string, c: Case): string[] {
  write(dir, c.files);
  const path = join(dir, c.open ?? Object.keys(c.files)[0]!);
  const f = readGoldenFile(path);
  const lines = f.problems.filter((p) => p.severity === 'error').map((p) => f.lines[f.problems.indexOf(p)]!.split(path).join('F'));
  assert.ok(f.errorCount > 0, `${c.name}: no error (${f.lines.join(' | ')})`);
  assert.throws(
    () => loadGoldenFile(path),
    (e: unknown) => isUserError(e) && (e as { exitCode?: number }).exitCode === 2,
    c.name,
  );
  return lines;
}

const UNKNOWN: Case[] = [
  {
    name: 'DES-058: expected_passages renamed passages (the queries that miss)',
    files: { 'golden-set-en.json': des(q({ id: 'hit', expected_passages: [high] }), q({ id: 'miss', expected_routing: 'search', passages: [high] })) },
    expect: /^F:\d+ \(miss\) passages: unknown field "passages"; did you mean 'expected_passages'\? expected only DES-058 entry fields \(an unknown field is an error, never ignored\)$/,
  },
  {
    name: 'DES-058: a key differing only in case',
    files: { 'golden-set-en.json': des(q({ Expected_Passages: [high], expected_routing: 'practice_bridge' })) },
    expect: /^F:\d+ \(a\) Expected_Passages: unknown field "Expected_Passages"; did you mean 'expected_passages'\?/,
  },
  {
    name: 'DES-058: a key with a trailing space',
    files: { 'golden-set-en.json': des(q({ 'expected_passages ': [high], expected_routing: 'no_results' })) },
    expect: /^F:\d+ \(a\) expected_passages : unknown field "expected_passages "; did you mean 'expected_passages'\?/,
  },
  {
    name: 'DES-058: a far-off key lists the fields of the format',
    files: { 'golden-set-en.json': des(q({ expected_passages: [high], owner: 'alice' })) },
    expect: /^F:\d+ \(a\) owner: unknown field "owner", expected only DES-058 entry fields: id, query, language, category, tags, expected_passages, /,
  },
  {
    name: 'DES-058: __proto__ as a key',
    files: { 'golden-set-en.json': '[{"id": "a", "query": "q", "language": "en", "category": "direct", "expected_passages": [], "expected_routing": "no_results", "__proto__": {"expected_passages": [1]}}]' },
    expect: /^F:\d+ \(a\) __proto__: unknown field "__proto__"/,
  },
  {
    name: 'DES-058 passage: relevance misspelt, and a far-off passage key',
    files: { 'golden-set-en.json': des(q({ expected_passages: [{ ...high, weight: 2 }] })) },
    expect: /^F:\d+ \(a\) expected_passages\[0\]\.weight: unknown field "weight", expected only DES-058 passage fields: book_slug, chapter_number, passage_substring, relevance/,
  },
  {
    name: 'blind-test YAML: relevant_paths with an expected_routing',
    files: { 'queries.yaml': '- id: bt-1\n  query: how to find inner peace\n  expected_routing: search\n  relevant_paths:\n    - the-lamp-within.md\n' },
    expect: /^F:4 \(bt-1\) relevant_paths: unknown field "relevant_paths"; did you mean 'expected_paths'\? expected only blind-test YAML entry fields/,
  },
  {
    name: 'blind-test YAML (queries: wrapper): a misnamed key in the second entry',
    files: { 'q.yaml': 'queries:\n  - query: a\n    expected_paths: [a.md]\n  - query: b\n    expected_paths: [b.md]\n    answer: {b.md: phrase}\n' },
    expect: /^F:6 \(#1\) answer: unknown field "answer"; did you mean 'answer_contains'\?/,
  },
  {
    name: 'blind-test YAML: a passage under expected_passages with an unknown key',
    files: { 'q.yaml': '- query: a\n  expected_passages:\n    - passage_substring: some words here\n      relevance: high\n      note: x\n' },
    expect: /^F:\d+ \(#0\) expected_passages\[0\]\.note: unknown field "note", expected only DES-058 passage fields/,
  },
  {
    name: 'gold-set JSONL: relevant_ids',
    files: { 'gold.jsonl': jsonl({ id: 'g1', query: 'q', relevant_case_law_ids: ['d1'] }, { id: 'g2', query: 'q', relevant_case_law_ids: [], relevant_ids: ['d2'] }) },
    expect: /^F:2 \(g2\) relevant_ids: unknown field "relevant_ids"; did you mean 'relevant_case_law_ids'\? expected only gold-set JSONL entry fields/,
  },
  {
    name: 'NQ CSV: an extra column',
    files: { 'nq.csv': 'question,long_answer,short_answer,answer\n"q","a long answer","short","x"\n' },
    expect: /^F:1 \(header\) answer: unknown column "answer"; did you mean 'long_answer'\? expected only NQ CSV columns \(an unknown column is an error, never ignored\)$/,
  },
  {
    name: 'NQ prepared JSON: a record field and a metadata field',
    files: {
      'prepared.json': JSON.stringify([{ chunk_id: 'nq_000000', document_id: 'natural_questions', content: 'c', metadata: { question: 'q', answer: 'a' } }], null, 2),
    },
    expect: /^F:\d+ \(nq_000000\) metadata\.answer: unknown field "answer"; did you mean 'short_answer'\? expected only NQ metadata fields/,
  },
  {
    name: 'NQ prepared JSON: question at the top level',
    files: { 'prepared.json': JSON.stringify([{ chunk_id: 'nq_000000', document_id: 'natural_questions', content: 'c', metadata: { question: 'q' }, split: 'dev' }], null, 2) },
    expect: /^F:\d+ \(nq_000000\) split: unknown field "split", expected only NQ prepared JSON fields: chunk_id, document_id, content, metadata/,
  },
  {
    name: 'BEIR: a judged query with an unknown key',
    files: { 'b/queries.jsonl': jsonl({ _id: '1', text: 't', txt: 'x' }), 'b/qrels/test.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t1\n' },
    open: 'b',
    expect: /^F\/queries\.jsonl:1 \(1\) txt: unknown field "txt"; did you mean 'text'\? expected only BEIR queries\.jsonl fields/,
  },
  {
    name: 'BEIR: an unjudged query with an unknown key (kept aside, still checked)',
    files: { 'b/queries.jsonl': jsonl({ _id: '1', text: 't' }, { _id: '2', text: 'u', qrels: ['d1'] }), 'b/qrels/test.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t1\n' },
    open: 'b',
    expect: /^F\/queries\.jsonl:2 \(2\) qrels: unknown field "qrels"/,
  },
  {
    name: 'TREC: a misspelt topic tag',
    files: { 't/topics.txt': '<top>\n<num> Number: 1\n<title> bm25\n<desk> Description:\nwhat bm25 is\n</top>\n', 't/qrels.txt': '1 0 d1 1\n' },
    open: 't',
    expect: /^F\/topics\.txt:1 \(1\) desk: unknown tag "desk"; did you mean 'desc'\? expected only TREC topic tags \(an unknown tag is an error, never ignored\)$/,
  },
];

test(`an unknown key on an entry is an error in every format (${UNKNOWN.length} cases): FILE:LINE (id) key, did-you-mean, exit 2`, (t) => {
  const root = tempDir(t);
  for (const [i, c] of UNKNOWN.entries()) {
    const lines = errorsOf(join(root, `case${i}`), c);
    assert.ok(lines.some((l) => c.expect.test(l)), `${c.name}: no line matches ${c.expect}\n  ${lines.join('\n  ')}`);
  }
});

test('a key given twice in one entry or passage is an error (JSON keeps only the last one): DES-058, gold-set JSONL, BEIR', (t) => {
  const root = tempDir(t);
  const cases: Case[] = [
    {
      name: 'DES-058: a second expected_passages (empty) after a no_results routing',
      files: { 'g.json': '[\n  {"id": "a", "query": "q", "language": "en", "category": "adversarial",\n   "expected_passages": [{"passage_substring": "some words", "relevance": "high"}],\n   "expected_routing": "no_results",\n   "expected_passages": []}\n]\n' },
      expect: /^F:5 \(a\) expected_passages: duplicate key "expected_passages", expected each field once \(JSON keeps only the last one: the first would be silently dropped\)$/,
    },
    {
      name: 'DES-058 passage: relevance twice',
      files: { 'g.json': des(q({ expected_passages: [high] })).replace('"relevance": "high"', '"relevance": "high", "relevance": "partial"') },
      expect: /^F:\d+ \(a\) expected_passages\[0\]\.relevance: duplicate key "relevance"/,
    },
    {
      name: 'gold-set JSONL: relevant_case_law_ids twice',
      files: { 'g.jsonl': '{"id":"g0","query":"q","relevant_case_law_ids":["d0"]}\n{"id":"g1","query":"q","relevant_case_law_ids":["d1"],"relevant_case_law_ids":[],"expected_routing":"no_results"}\n' },
      expect: /^F:2 \(g1\) relevant_case_law_ids: duplicate key "relevant_case_law_ids"/,
    },
    {
      name: 'BEIR: text twice',
      files: { 'b/queries.jsonl': '{"_id": "1", "text": "the real query", "text": "another"}\n', 'b/qrels/test.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t1\n' },
      open: 'b',
      expect: /^F\/queries\.jsonl:1 \(1\) text: duplicate key "text"/,
    },
  ];
  for (const [i, c] of cases.entries()) {
    const lines = errorsOf(join(root, `case${i}`), c);
    assert.ok(lines.some((l) => c.expect.test(l)), `${c.name}: no line matches ${c.expect}\n  ${lines.join('\n  ')}`);
  }
});

test('the classic TREC topic tags (con, fac, def, ...) are known: kept, written back, not an error', (t) => {
  const d = tempDir(t);
  write(d, { 't/topics.txt': '<top>\n<num> Number: 51\n<dom> Domain: International Economics\n<title> Topic: Airbus Subsidies\n<con> Concept(s):\n1. Airbus\n<fac> Factor(s):\n<def> Definition(s):\n</top>\n', 't/qrels.txt': '51 0 d1 1\n' });
  const f = readGoldenFile(join(d, 't'));
  assert.equal(f.errorCount, 0, f.lines.join('\n'));
  assert.deepEqual(Object.keys(f.queries[0]!.extra ?? {}), ['dom', 'con', 'fac', 'def']);
});

test('did-you-mean for fields: edits, containment, shared words', () => {
  const des058 = ['id', 'query', 'language', 'category', 'tags', 'expected_passages', 'expected_routing', 'notes'];
  assert.equal(suggestField('passages', des058), 'expected_passages');
  assert.equal(suggestField('expected_pasages', des058), 'expected_passages');
  assert.equal(suggestField('routing', des058), 'expected_routing');
  assert.equal(suggestField('Query', des058), 'query');
  assert.equal(suggestField('relevant_paths', ['query', 'expected_paths', 'relevance']), 'expected_paths');
  assert.equal(suggestField('case_law_ids', ['id', 'relevant_case_law_ids']), 'relevant_case_law_ids');
  assert.equal(suggestField('owner', des058), undefined);
});

interface Checkable {
  name: string;
  files: Record<string, string>;
  open?: string;
  /** undefined: valid; else an error line must match */
  error?: RegExp;
}

const NOTHING = /nothing to score \(/;

const CHECKABLE: Checkable[] = [
  // refused: nothing rankgate can score or check, whatever else the entry says
  { name: 'DES-058: expected_routing search alone (passages deleted)', files: { 'g.json': des(q({ expected_routing: 'search', notes: 'n', tags: ['fear'] })) }, error: /^F:\d+ \(a\) expected_passages: nothing to score \(no reference; expected_routing 'search' only says results come back\), expected one of: a passage with relevance "high"; an expected_routing of practice_bridge or no_results; safety_interstitial: true/ },
  { name: 'DES-058: a dark-night retrieval_intent without passages', files: { 'g.json': des(q({ category: 'dark_night', expected_routing: 'search', retrieval_intent: 'console' })) }, error: NOTHING },
  { name: 'DES-058: partial passages only', files: { 'g.json': des(q({ expected_passages: [partial, partial] })) }, error: /nothing to score \(2 references, none relevant/ },
  { name: 'DES-058: safety_interstitial false only', files: { 'g.json': des(q({ expected_routing: 'search', safety_interstitial: false })) }, error: /nothing to score \(no reference; expected_routing 'search' only says results come back; expect_safety false is never checked\)/ },
  { name: 'DES-058: no expected_routing, empty passages', files: { 'g.json': des(q({ expected_passages: [] })) }, error: NOTHING },
  { name: 'YAML: relevance grades without expected_paths', files: { 'q.yaml': '- id: y1\n  query: grief\n  relevance:\n    a.md: 3\n    b.md: 2\n' }, error: /^F:1 \(y1\) expected_paths: nothing to score \(2 references, none relevant/ },
  { name: 'YAML: expected_routing search and intent only', files: { 'q.yaml': '- id: y1\n  query: grief\n  intent: find grief\n  expected_routing: search\n' }, error: NOTHING },
  { name: 'JSONL: empty relevant_case_law_ids', files: { 'g.jsonl': jsonl({ id: 'g1', query: 'q', relevant_case_law_ids: [], note: 'todo' }) }, error: NOTHING },
  { name: 'BEIR: a query judged only non-relevant', files: { 'b/queries.jsonl': jsonl({ _id: '1', text: 't' }, { _id: '2', text: 'u' }), 'b/qrels/test.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t1\n2\td2\t0\n' }, open: 'b', error: /^F\/queries\.jsonl:2 \(2\) qrels: nothing to score \(1 reference, none relevant: .*\), expected a qrels row with score >= 1 / },
  { name: 'TREC: a topic judged only -1 and 0', files: { 't/topics.txt': '1\tbm25\n2\ttf idf\n', 't/qrels.txt': '1 0 d1 1\n2 0 d2 0\n2 0 d3 -1\n' }, open: 't', error: /^F\/topics\.txt:2 \(2\) qrels: nothing to score \(2 references, none relevant/ },
  // accepted: something checkable
  { name: 'DES-058: adversarial no_results, no passages', files: { 'g.json': des(q({ category: 'adversarial', expected_routing: 'no_results', expected_passages: [] })) } },
  { name: 'DES-058: practice_bridge, no passages', files: { 'g.json': des(q({ category: 'technique_boundary', expected_routing: 'practice_bridge', expected_passages: [] })) } },
  { name: 'DES-058: safety_interstitial true, no passages', files: { 'g.json': des(q({ category: 'dark_night', expected_routing: 'search', safety_interstitial: true })) } },
  { name: 'DES-058: one high among partials', files: { 'g.json': des(q({ expected_passages: [partial, high] })) } },
  { name: 'YAML: graded expected_paths', files: { 'q.yaml': '- query: grief\n  expected_paths: [a.md]\n  relevance:\n    a.md: 2\n    b.md: 1\n' } },
  { name: 'YAML: expect_safety true only', files: { 'q.yaml': '- query: I want to end it\n  expect_safety: true\n' } },
  { name: 'JSONL: no ids, routing no_results', files: { 'g.jsonl': jsonl({ id: 'g1', query: 'q', relevant_case_law_ids: [], expected_routing: 'no_results' }) } },
  { name: 'BEIR: graded qrels (grade 2 is relevant)', files: { 'b/queries.jsonl': jsonl({ _id: '1', text: 't' }), 'b/qrels/test.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t2\n1\td2\t0\n' }, open: 'b' },
];

test(`a query with nothing rankgate can score or check is an error, whatever else it states (${CHECKABLE.length} cases)`, (t) => {
  const root = tempDir(t);
  for (const [i, c] of CHECKABLE.entries()) {
    const dir = join(root, `case${i}`);
    if (!c.error) {
      write(dir, c.files);
      const f = readGoldenFile(join(dir, c.open ?? Object.keys(c.files)[0]!));
      assert.equal(f.errorCount, 0, `${c.name}: ${f.lines.join(' | ')}`);
      assert.equal(f.queries.length > 0, true, c.name);
      continue;
    }
    const lines = errorsOf(dir, { ...c, expect: c.error });
    assert.ok(lines.some((l) => c.error!.test(l)), `${c.name}: no line matches ${c.error}\n  ${lines.join('\n  ')}`);
  }
});

/** The shipped English set with `expected_passages` renamed `passages` on its first five search queries. */
function renamedShipped(dir: string): { path: string; renamed: string[] } {
  const src = JSON.parse(readFileSync(join(ROOT, 'datasets', 'golden', 'golden-set-en.json'), 'utf8')) as Record<string, unknown>[];
  const renamed: string[] = [];
  for (const e of src) {
    if (renamed.length < 5 && Array.isArray(e.expected_passages) && e.expected_passages.length) {
      e.passages = e.expected_passages;
      delete e.expected_passages;
      renamed.push(String(e.id));
    }
  }
  const path = join(dir, 'golden-set-en.json');
  writeFileSync(path, JSON.stringify(src, null, 2));
  return { path, renamed };
}

test('the tests loader (datasets/tests.ts) refuses a set with a renamed expected_passages: UserError, exit code 2, every renamed query named', async (t) => {
  const { path, renamed } = renamedShipped(tempDir(t));
  await assert.rejects(generateTests({ golden: [path] }), (e: unknown) => {
    assert.ok(isUserError(e));
    assert.equal((e as { exitCode?: number }).exitCode, 2);
    const lines = (e as Error).message.split('\n');
    assert.equal(lines.length, renamed.length);
    renamed.forEach((id, i) => assert.match(lines[i]!, new RegExp(`golden-set-en\\.json:\\d+ \\(${id}\\) passages: unknown field "passages"; did you mean 'expected_passages'\\?`)));
    return true;
  });
});

test('golden validate and golden check exit 2 on such a set, the first line naming the entry and the field', (t) => {
  const d = tempDir(t);
  const { path, renamed } = renamedShipped(d);
  const rg = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'golden', ...args], { cwd: ROOT, encoding: 'utf8' });
  const v = rg('validate', path);
  assert.equal(v.status, 2, v.stdout + v.stderr);
  assert.match(v.stdout.split('\n')[0]!, new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+ \\(${renamed[0]}\\) passages: unknown field "passages"; did you mean 'expected_passages'\\?`));
  // `golden check` loads the sets before it opens any index
  const c = rg('check', '--db', join(d, 'no-index'), path);
  assert.equal(c.status, 2, c.stdout + c.stderr);
  assert.match(c.stderr, new RegExp(`\\(${renamed[0]}\\) passages: unknown field "passages"; did you mean 'expected_passages'\\?`));
  assert.doesNotMatch(c.stdout + c.stderr, /\n\s+at .+:\d+:\d+\)?$/m);
});
