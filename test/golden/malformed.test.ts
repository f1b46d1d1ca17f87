/**
 * Malformed golden sets: every case gives one-line problems `FILE:LINE[:COL] (id or #index) field:
 * what is wrong, expected ...`, never a crash, and loadGoldenFile throws a UserError listing them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { isUserError } from '../../src/errors.ts';
import { loadGoldenFile, readGoldenFile, validateGolden, validateGoldenLines, validateQueries } from '../../src/golden/index.ts';
import { tempDir } from './helpers.ts';

const q = (o: Record<string, unknown>) => ({ id: 'a', query: 'what is love', language: 'en', category: 'direct', ...o });
const des = (...items: unknown[]) => JSON.stringify(items, null, 2);
const hi = { passage_substring: 'one two three four five six seven eight nine ten eleven', relevance: 'high' };

interface Case {
  name: string;
  /** file name (relative; a path with / creates folders) -> content */
  files: Record<string, string | Buffer>;
  /** which path to read (default: the first file) */
  open?: string;
  format?: string;
  /** a problem line must match this (after the `FILE` prefix is replaced by `F`) */
  expect: RegExp;
}

const CASES: Case[] = [
  { name: 'DES-058 root is an object', files: { 'g.json': '{"id": "a"}' }, expect: /^F:1 \(file\) root: got a mapping of 1 key, expected a JSON array/ },
  { name: 'DES-058 entry is not an object', files: { 'g.json': des(q({}), 'oops') }, expect: /^F:\d+ \(#1\) entry: got "oops", expected an object/ },
  { name: 'wrong type: query is a number', files: { 'g.json': des(q({ id: 'b', query: 5 })) }, expect: /^F:4 \(b\) query: got number 5, expected a non-empty string$/ },
  { name: 'missing field: query', files: { 'g.json': des({ id: 'b', language: 'en', category: 'direct' }) }, expect: /^F:2 \(b\) query: missing, expected a non-empty string$/ },
  { name: 'empty query (whitespace only)', files: { 'g.json': des(q({ query: '   ' })) }, expect: /^F:4 \(a\) query: is empty, expected a non-empty string$/ },
  // H2: query text is capped (src/util/limits.ts): a 2 MB query or expansion string would take minutes to embed
  { name: 'a query over the length cap', files: { 'g.json': des(q({ query: 'w'.repeat(2_000_000), expected_passages: [hi] })) }, expect: /^F:\d+ \(a\) query: 2,000,000 characters, expected at most 10,000 \(a query's length cap: docs\/golden-sets\.md#query-length\)$/ },
  { name: 'an expansion string over the length cap', files: { 'g.yaml': `- id: a\n  query: calm\n  expected_paths: [a.md]\n  expansion:\n    - fine\n    - "${'e'.repeat(10_001)}"\n` }, expect: /^F:\d+ \(a\) expansion\[1\]: 10,001 characters, expected at most 10,000 \(an expansion string's length cap/ },
  { name: 'too many expansion strings', files: { 'g.yaml': `- id: a\n  query: calm\n  expected_paths: [a.md]\n  expansion: [${Array.from({ length: 21 }, (_, i) => `x${i}`).join(', ')}]\n` }, expect: /^F:\d+ \(a\) expansion: 21 strings, expected at most 20/ },
  { name: 'missing id', files: { 'g.json': des({ query: 'x', language: 'en', category: 'direct' }) }, expect: /^F:2 \(#0\) id: missing, expected a non-empty string id$/ },
  { name: 'duplicate ids', files: { 'g.json': des(q({}), q({ query: 'other' })) }, expect: /^F:9 \(a\) id: duplicate id "a" \(already used by entry #0\), expected every id to be unique$/ },
  { name: 'unknown relevance grade', files: { 'g.json': des(q({ expected_passages: [{ ...hi, relevance: 'medium' }] })) }, expect: /^F:\d+ \(a\) expected_passages\[0\]\.relevance: unknown relevance "medium", expected "high" or "partial"$/ },
  { name: 'missing relevance', files: { 'g.json': des(q({ expected_passages: [{ passage_substring: hi.passage_substring }] })) }, expect: /^F:8 \(a\) expected_passages\[0\]\.relevance: missing, expected "high" or "partial"$/ },
  { name: 'unknown routing', files: { 'g.json': des(q({ expected_routing: 'nowhere' })) }, expect: /^F:7 \(a\) expected_routing: unknown routing "nowhere", expected one of search, practice_bridge, no_results$/ },
  {
    name: 'expected passages on a no_results query',
    files: { 'g.json': des(q({ category: 'adversarial', expected_routing: 'no_results', expected_passages: [hi] })) },
    expect: /^F:8 \(a\) expected_passages: 1 expectation\(s\) on a no_results query, expected none/,
  },
  { name: 'language not ISO 639-1', files: { 'g.json': des(q({ language: 'English' })) }, expect: /^F:5 \(a\) language: got "English", expected an ISO 639-1 code/ },
  { name: 'safety_interstitial not a boolean', files: { 'g.json': des(q({ safety_interstitial: 'yes' })) }, expect: /^F:7 \(a\) safety_interstitial: got "yes", expected true or false$/ },
  // config C searches each expansion string: anything else is refused by every reader, never searched or dropped
  { name: 'expansion not a list', files: { 'g.json': des(q({ expansion: 'calm mind' })) }, expect: /^F:7 \(a\) expansion: got "calm mind", expected a list of strings$/ },
  { name: 'expansion holds an object', files: { 'g.json': des(q({ expansion: ['calm', { text: 'mind' }] })) }, expect: /^F:\d+ \(a\) expansion\[1\]: got .*expected a non-empty string$/ },
  { name: 'YAML: expansion holds a list', files: { 'q.yaml': '- id: y1\n  query: inner peace\n  expected_paths: [a.md]\n  expansion:\n    - [calm, still]\n' }, expect: /^F:\d+(:\d+)? \(y1\) expansion\[0\]: got .*expected a non-empty string$/ },
  { name: 'JSONL: expansion an empty string', files: { 'g.jsonl': '{"id":"a","query":"q","relevant_case_law_ids":["1"],"expansion":[""]}\n' }, expect: /^F:1(:\d+)? \(a\) expansion\[0\]: got "", expected a non-empty string$/ },
  { name: 'expected_passages not a list', files: { 'g.json': des(q({ expected_passages: 'p1' })) }, expect: /^F:7 \(a\) expected_passages: got "p1", expected a list of passages/ },
  { name: 'passage without substring or id', files: { 'g.json': des(q({ expected_passages: [{ relevance: 'high' }] })) }, expect: /^F:8 \(a\) expected_passages\[0\]\.passage_substring: missing, expected a verbatim 10-40 word substring/ },
  { name: 'tags not a list of strings', files: { 'g.json': des(q({ tags: ['fear', 3.5, null] })) }, expect: /^F:\d+ \(a\) tags\[2\]: got null, expected a non-empty string$/ },
  { name: 'broken JSON: trailing comma', files: { 'g.json': '[\n  {"id": "a",\n   "query": "q",\n  }\n]' }, expect: /^F:4:3 \(#0\) json: invalid JSON: unexpected character "}", expected a double-quoted property name \(trailing comma\?\)$/ },
  { name: 'broken JSON: truncated file', files: { 'g.json': '[\n  {"id": "a", "query": "q"},\n  {"id": "b", "qu' }, expect: /^F:3:\d+ \(#1\) json: invalid JSON: unterminated string, expected a closing "$/ },
  { name: 'broken JSON: raw newline in a string', files: { 'g.json': '[{"id": "a", "query": "line one\nline two"}]' }, expect: /^F:1:\d+ \(#0\) json: invalid JSON: raw control character .* expected it escaped/ },
  { name: 'empty file', files: { 'g.json': '' }, expect: /^F:1:1 \(file\) json: invalid JSON: unexpected end of file, expected a value$/ },
  {
    name: 'UTF-8 BOM and CRLF: BOM dropped, line numbers still right',
    files: { 'g.json': Buffer.from(`\uFEFF[\r\n  {"id": "a", "query": "q", "language": "en", "category": "direct"},\r\n  {"id": "b", "query": 7, "language": "en", "category": "direct"}\r\n]\r\n`) },
    expect: /^F:3 \(b\) query: got number 7, expected a non-empty string$/,
  },
  {
    name: 'invalid UTF-8 (a Latin-1 é)',
    files: { 'g.json': Buffer.concat([Buffer.from('[\n  {"id": "a", "query": "caf'), Buffer.from([0xe9]), Buffer.from('"}\n]')]) },
    expect: /^F:2:28 \(file\) encoding: invalid UTF-8 byte 0xe9 at byte 29, expected a UTF-8 text file/,
  },
  { name: 'YAML: unknown grade', files: { 'q.yaml': '- query: a\n  expected_paths: [x.md]\n  relevance:\n    x.md: 7\n' }, expect: /^F:4 \(#0\) relevance\.x\.md: unknown grade number 7, expected 0, 1, 2 or 3/ },
  { name: 'YAML: unknown filter', files: { 'q.yaml': '- query: a\n  filters:\n    colour: red\n' }, expect: /^F:3 \(#0\) filters\.colour: unknown filter "colour", expected folder, tags, language or book$/ },
  { name: 'YAML: answer_contains for an unlisted path', files: { 'q.yaml': '- query: a\n  expected_paths: [x.md]\n- query: b\n  answer_contains:\n    y.md: hi\n' }, expect: /^F:5 \(#1\) answer_contains\.y\.md: names path "y\.md" that is in neither expected_paths nor relevance/ },
  { name: 'YAML: broken flow list (line and column)', files: { 'q.yaml': '- query: a\n  tags: [x\n- query: b\n' }, expect: /^F:3:1 \(file\) yaml: invalid YAML: missed comma between flow collection entries, expected valid YAML/ },
  { name: 'YAML: duplicate key', files: { 'q.yaml': '- query: a\n  query: b\n' }, expect: /^F:2:\d+ \(file\) yaml: invalid YAML: duplicated mapping key/ },
  { name: 'YAML: scalar instead of a list', files: { 'q.yaml': 'just a string\n' }, expect: /^F:1 \(file\) root: got a string of 13 characters, expected a list of queries/ },
  { name: 'YAML: duplicate explicit ids', files: { 'q.yaml': '- id: q1\n  query: a\n- id: q1\n  query: b\n' }, expect: /^F:3 \(q1\) id: duplicate id "q1"/ },
  { name: 'YAML: queries: mapping after another list (line still right)', files: { 'q.yaml': 'legend:\n  - cjk\nqueries:\n  - query: a\n    expected_paths: [x.md]\n  - query: ""\n' }, expect: /^F:6 \(#1\) query: is empty, expected a non-empty string$/ },
  { name: 'YAML: empty query', files: { 'q.yaml': '- query: ""\n  expected_paths: [a.md]\n' }, expect: /^F:1 \(#0\) query: is empty, expected a non-empty string$/ },
  { name: 'JSONL: broken line (line and column)', files: { 'g.jsonl': '{"id":"a","query":"q","relevant_case_law_ids":[]}\n{"id":"c", "query": }\n' }, expect: /^F:2:21 \(#1\) json: invalid JSON on this line: unexpected character "}", expected a value/ },
  { name: 'JSONL: unknown source', files: { 'g.jsonl': '{"id":"a","query":"q","relevant_case_law_ids":[],"source":"judge"}\n' }, expect: /^F:1 \(a\) source: unknown source "judge", expected bootstrap or chair$/ },
  { name: 'JSONL: ids not a list', files: { 'g.jsonl': '\n{"id":"a","query":"q","relevant_case_law_ids":"1"}\n' }, expect: /^F:2 \(a\) relevant_case_law_ids: got "1", expected a list of strings$/ },
  { name: 'JSONL: missing relevant_case_law_ids', files: { 'g.jsonl': '{"id":"a","query":"q"}\n' }, expect: /^F:1 \(a\) relevant_case_law_ids: missing, expected a list of strings$/ },
  { name: 'CSV: unclosed quote', files: { 'nq.csv': 'question,long_answer,short_answer\n"a","b","c"\n"x","y\n' }, expect: /^F:3(:\d+)? \(file\) csv: invalid CSV: Quote Not Closed.*expected quoted fields/ },
  { name: 'CSV: inconsistent column count', files: { 'nq.csv': 'question,long_answer,short_answer\n"a","b","c","d"\n' }, expect: /^F:2(:\d+)? \(file\) csv: invalid CSV: Invalid Record Length/ },
  { name: 'CSV: missing long_answer column', files: { 'nq.csv': 'question,answer\n"a","b"\n' }, expect: /^F:1 \(header\) long_answer: missing column, expected a header question,long_answer,short_answer/ },
  { name: 'CSV: empty question', files: { 'nq.csv': 'question,long_answer,short_answer\n"a","b","c"\n"","y","z"\n' }, expect: /^F:3 \(nq_000001\) question: is empty, expected the question text$/ },
  { name: 'NQ JSON: metadata missing', files: { 'nq.json': '[\n {"chunk_id": "nq_000000", "document_id": "natural_questions", "content": "c"}\n]' }, expect: /^F:2 \(nq_000000\) metadata: got nothing, expected an object with question and short_answer$/ },
  {
    name: 'BEIR: qrels name an unknown query, bad score',
    files: { 'b/queries.jsonl': '{"_id": "1", "text": "t"}\n', 'b/qrels/test.tsv': 'query-id\tcorpus-id\tscore\n1\td1\t1\n9\td2\t1\n1\td3\thigh\n' },
    open: 'b',
    expect: /^F\/qrels\/test\.tsv:3 \(9\) query-id: query "9" is not in queries\.jsonl/,
  },
  {
    name: 'BEIR: score not an integer',
    files: { 'b/queries.jsonl': '{"_id": "1", "text": "t"}\n', 'b/qrels/test.tsv': 'query-id\tcorpus-id\tscore\n1\td3\thigh\n' },
    open: 'b',
    expect: /^F\/qrels\/test\.tsv:2 \(1\) score: got "high", expected an integer grade$/,
  },
  { name: 'TREC: qrels row with 3 columns', files: { 't/topics.txt': '1\tbm25\n', 't/qrels.txt': '1 0 d1 1\n1 d2 1\n' }, open: 't', expect: /^F\/qrels\.txt:2 \(#1\) qrels: got 3 columns, expected 4: qid iteration docno relevance$/ },
  { name: 'TREC: topics without a qrels file', files: { 'x.topics': '<top>\n<num> Number: 1\n<title> bm25\n</top>\n' }, format: 'trec', expect: /^F \(file\) qrels: no qrels file found next to x\.topics, expected a \*qrels\* file/ },
  {
    name: 'entry nested 5,000 levels deep (no stack overflow)',
    files: { 'g.json': `[{"id": "a", "query": "q", "language": "en", "category": "direct",\n "x": ${'['.repeat(5000)}${']'.repeat(5000)}}]` },
    expect: /^F:1 \(#0\) entry: nested more than 32 levels deep, expected a flat query object/,
  },
  { name: 'array nested 200,000 levels deep', files: { 'g.json': `${'['.repeat(200000)}${']'.repeat(200000)}` }, expect: /^F:1 \(#0\) entry: got an array .*expected an object with id, query/ },
  { name: 'TREC: a qrels file without topics', files: { 'qrels.test': '301 0 FBIS3-10082 1\n' }, expect: /^F \(file\) topics: this is a qrels file and no topics file was found beside it, expected the topics/ },
  { name: '--format names an unknown format', files: { 'g.json': '[]' }, format: 'excel', expect: /^F \(file\) format: unknown golden-set format 'excel', expected one of des058/ },
  { name: 'format cannot be detected', files: { 'notes.txt': 'hello there\n' }, expect: /^F \(file\) format: cannot tell the golden-set format .* \(pass --format\)$/ },
  { name: 'file does not exist', files: {}, open: 'missing.json', expect: /^F \(file\) format: no such file or folder, expected a golden-set file$/ },
];

const LINE = /^\S+?(:\d+(:\d+)?)? \([^)]+\) \S+: .*expected.*$/;

test(`at least 25 malformed inputs (${CASES.length}) each give one-line errors and no crash`, async (t) => {
  assert.ok(CASES.length >= 25);
  const root = tempDir(t);
  for (const [i, c] of CASES.entries()) {
    const dir = join(root, `case${i}`);
    mkdirSync(dir, { recursive: true });
    for (const [name, content] of Object.entries(c.files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), content);
    }
    const path = join(dir, c.open ?? Object.keys(c.files)[0]!);
    const f = readGoldenFile(path, { format: c.format });
    assert.ok(f.errorCount > 0, `${c.name}: expected an error, got none (${f.lines.join(' | ')})`);
    const lines = f.problems.filter((p) => p.severity === 'error').map((p) => f.lines[f.problems.indexOf(p)]!);
    for (const l of lines) assert.match(l, LINE, `${c.name}: not a one-line problem: ${l}`);
    const rel = lines.map((l) => l.split(path).join('F'));
    assert.ok(rel.some((l) => c.expect.test(l)), `${c.name}: no line matches ${c.expect}\n  got:\n  ${rel.join('\n  ')}`);
    // loadGoldenFile throws a UserError carrying the same lines (no stack trace in the CLI)
    assert.throws(
      () => loadGoldenFile(path, { format: c.format }),
      (e: unknown) => isUserError(e) && e.message.split('\n').every((l) => LINE.test(l)) && e.message.includes(lines[0]!),
      c.name,
    );
  }
});

test('warnings do not invalidate: DES-058 substring 10-40 words and category imbalance', (t) => {
  const dir = tempDir(t);
  const items = [q({ id: 'a0', expected_passages: [{ passage_substring: 'too short', relevance: 'high' }] })];
  for (let i = 1; i < 12; i++) items.push(q({ id: `a${i}`, query: `q${i}`, category: i < 10 ? 'direct' : 'emotional', expected_passages: [hi] }));
  const p = join(dir, 'golden-set-en.json');
  writeFileSync(p, des(...items));
  const f = readGoldenFile(p);
  assert.equal(f.errorCount, 0);
  assert.equal(f.queries.length, 12);
  const w = f.lines.map((l) => l.split(p).join('F'));
  assert.ok(w.includes('F:9 (a0) expected_passages[0].passage_substring: warning: has 2 words, expected 10-40 words (the DES-058 spec\'s substring rule: long enough to be unique, short enough to survive re-chunking)'), w.join('\n'));
  assert.ok(w.some((l) => /^F \(file\) category: warning: category imbalance: direct has 10 queries but emotional only 2/.test(l)), w.join('\n'));
  assert.ok(w.some((l) => /no queries in categories conceptual, metaphorical, technique_boundary, dark_night, adversarial/.test(l)), w.join('\n'));
  assert.deepEqual(validateGolden(p).map((x) => x.severity), ['warning', 'warning', 'warning']);
  assert.deepEqual(validateGoldenLines(p), f.lines);
});

test('validateQueries checks canonical objects built in code with the same rules', () => {
  const probs = validateQueries([
    { id: 'a', query: 'x', language: 'en', category: 'direct', expected: [{ doc_id: 'd', grade: 3, relevant: true }] },
    { id: 'a', query: 'y', language: 'en', category: 'direct' },
    { id: 'c', query: 'z', language: 'en', category: 'adversarial', expected_routing: 'no_results', expected: [{ doc_id: 'd', grade: 3, relevant: true }] },
    { id: 'd', query: 'w', language: 'en', category: 'direct', expected: [{ grade: 3, relevant: true }] },
  ]);
  const lines = probs.map((p) => `${p.entry} ${p.field}`);
  assert.deepEqual(lines, ['a id', 'c expected', 'd expected[0]']);
});

test('a 50 MB golden set with one bad entry at the end: the error names its line, nothing crashes', (t) => {
  const dir = tempDir(t);
  const p = join(dir, 'golden-set-en.json');
  const fd = openSync(p, 'w');
  const passage = { ...hi, book_slug: 'autobiography-of-a-yogi', chapter_number: 12 };
  let bytes = 0;
  let lines = 1;
  let i = 0;
  writeSync(fd, '[\n');
  while (bytes < 50 * 1024 * 1024) {
    const s = `${JSON.stringify(q({ id: `en-direct-${i}`, query: `query number ${i}`, expected_passages: [passage], notes: 'x'.repeat(300) }))},\n`;
    writeSync(fd, s);
    bytes += s.length;
    lines++;
    i++;
  }
  writeSync(fd, `${JSON.stringify(q({ id: 'last', expected_routing: 'sideways' }))}\n]\n`);
  closeSync(fd);
  const f = readGoldenFile(p);
  assert.equal(f.errorCount, 1);
  assert.equal(f.lines.filter((l) => !l.includes('warning')).length, 1);
  assert.equal(f.lines.find((l) => !l.includes('warning'))!, `${p}:${lines + 1} (last) expected_routing: unknown routing "sideways", expected one of search, practice_bridge, no_results`);
});

test('DES-058 warnings (on queries checkable otherwise): search query without passages, no high passage, >3 passages, unknown retrieval intent', (t) => {
  const p = join(tempDir(t), 'golden-set-en.json');
  const partial = { ...hi, relevance: 'partial' };
  writeFileSync(p, des(q({ id: 'none', expected_routing: 'search', safety_interstitial: true }), q({ id: 'low', expected_passages: [partial], safety_interstitial: true }), q({ id: 'many', expected_passages: [hi, hi, hi, hi], retrieval_intent: 'cheer' })));
  const f = readGoldenFile(p);
  assert.equal(f.errorCount, 0);
  const w = f.lines.map((l) => l.split(p).join('F'));
  assert.deepEqual(w, [
    'F:2 (none) expected_passages: warning: no expected passages on a search query, expected 1-3 (Recall@3 can only be judged by the LLM fallback)',
    'F:15 (low) expected_passages: warning: no passage with relevance "high", expected at least one (Recall@3 counts only high passages)',
    'F:28 (many) expected_passages: warning: 4 passages, expected 1-3 (the portal\'s DES-058 spec)',
    'F:46 (many) retrieval_intent: warning: unknown retrieval intent "cheer", expected meet_first or console (allowed, but the judge knows only those)',
  ]);
});

test('thousands of bad rows: first 200 errors listed, then one tail line; still no crash', (t) => {
  const p = join(tempDir(t), 'nq.csv');
  writeFileSync(p, `question,long_answer,short_answer\n${'"","answer",""\n'.repeat(5000)}`);
  const f = readGoldenFile(p);
  assert.equal(f.errorCount, 5000);
  assert.equal(f.lines.length, 201);
  assert.equal(f.lines[0], `${p}:2 (nq_000000) question: is empty, expected the question text`);
  assert.equal(f.lines[199], `${p}:201 (nq_000199) question: is empty, expected the question text`);
  assert.equal(f.lines[200], `${p}: ... and 4800 more errors not shown`);
  assert.throws(() => loadGoldenFile(p), (e: unknown) => isUserError(e) && e.message.split('\n').length === 201 && e.message.endsWith('... and 4800 more errors not shown'));
});
