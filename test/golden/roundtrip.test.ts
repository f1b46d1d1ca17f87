/**
 * Lossless round trips: format -> canonical -> same format gives the same data (parsed, so
 * whitespace/quoting style may differ) and re-reads to the same canonical queries.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { parse as parseCsv } from 'csv-parse/sync';
import { loadGolden, loadGoldenFile } from '../../src/golden/index.ts';
import { FIX, read, tempDir, withoutOrigin, writeAs } from './helpers.ts';

const jsonl = (s: string) => s.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as unknown);
const lines = (s: string) => s.split('\n').filter((l) => l.trim()).sort();

test('DES-058 JSON round-trips losslessly', async (t) => {
  const src = join(FIX, 'des058', 'golden-set-en.json');
  const g = loadGolden(src);
  assert.equal(g.format, 'des058');
  const out = join(tempDir(t), 'golden-set-en.json');
  await writeAs('des058', g.queries, g.meta, out);
  assert.deepEqual(JSON.parse(read(out)), JSON.parse(read(src)));
  assert.deepEqual(loadGoldenFile(out), g.queries);
});

test('DES-058 mapping: high -> grade 3 relevant, partial -> grade 1 not relevant, extensions to canonical', () => {
  const qs = loadGoldenFile(join(FIX, 'des058', 'golden-set-en.json'));
  const [direct, dark, tech, adv, meta] = qs;
  assert.deepEqual(direct!.expected.map((r) => [r.grade, r.relevant]), [[3, true], [1, false]]);
  assert.equal(dark!.expect_safety, true);
  assert.equal(dark!.retrieval_intent, 'console');
  assert.deepEqual(dark!.tags, ['fear']);
  assert.equal(tech!.expected_routing, 'practice_bridge');
  assert.equal(adv!.expected_routing, 'no_results');
  assert.deepEqual(meta!.expected, [{ chunk_id: 'the-wave-and-the-ocean#c300-4', relevant: true, grade: 2 }]);
});

test('blind-test YAML round-trips losslessly (derived ids/language/category not written back)', async (t) => {
  const dir = tempDir(t);
  for (const name of ['queries.yaml', 'wrapped.yaml']) {
    const src = join(FIX, 'yaml', name);
    const g = loadGolden(src);
    assert.equal(g.format, 'yaml');
    const out = join(dir, name);
    await writeAs('yaml', g.queries, g.meta, out);
    assert.deepEqual(yaml.load(read(out)), yaml.load(read(src)), name);
    assert.deepEqual(loadGoldenFile(out), g.queries, name);
  }
});

test('blind-test YAML mapping: expected_paths relevant, relevance-only paths graded but not relevant, stable ids', () => {
  const [a, b, c] = loadGoldenFile(join(FIX, 'yaml', 'queries.yaml'));
  assert.deepEqual([a!.id, b!.id, c!.id], ['yaml-0', 'yaml-1', 'pinned-weekly-log']);
  assert.equal(a!.language, 'zh');
  assert.equal(a!.category, 'cjk');
  assert.deepEqual(
    a!.expected.map((r) => [r.path, r.grade, r.relevant, r.answer_contains ?? null]),
    [
      ['notes/fsrs-algorithm.md', 3, true, null],
      ['notes/spaced-repetition.md', 3, true, 'spacing effect'],
      ['logs/2026-W15.md', 2, false, null],
    ],
  );
  assert.deepEqual(a!.filters, { folder: 'notes', tags: ['memory'] });
  assert.equal(a!.expansion!.length, 2);
  assert.equal(a!.intent, 'find notes about long-term memory retention techniques');
  assert.deepEqual(b!.expected, [{ path: 'notes/fsrs-algorithm.md', grade: 3, relevant: true, implied_grade: true }]);
  assert.equal(c!.language, 'en');
  assert.equal(c!.category, 'logs');
  assert.deepEqual(c!.expected.map((r) => [r.grade, r.relevant]), [[3, true], [0, false]]);
});

test('gold-set JSONL round-trips losslessly; chair <-> reviewed keeps the original spelling', async (t) => {
  const src = join(FIX, 'jsonl', 'gold-set.jsonl');
  const g = loadGolden(src);
  assert.equal(g.format, 'jsonl');
  const [g1, g2, g3] = g.queries;
  assert.deepEqual(g1!.slices, { practice_area: 'betterment_levy', corpus: 'precedent_library' });
  assert.equal(g1!.language, 'he');
  assert.equal(g1!.source, 'bootstrap');
  assert.equal(g2!.source, 'reviewed');
  assert.deepEqual(g1!.expected, [
    { doc_id: '7c1e6a52-0001', grade: 3, relevant: true },
    { doc_id: '7c1e6a52-0002', grade: 3, relevant: true },
  ]);
  assert.deepEqual(g3!.expected, []);
  const out = join(tempDir(t), 'gold-set.jsonl');
  await writeAs('jsonl', g.queries, g.meta, out);
  assert.deepEqual(jsonl(read(out)), jsonl(read(src)));
  assert.deepEqual(loadGoldenFile(out), g.queries);
});

test('NQ CSV round-trips losslessly (quotes, commas, multi-line fields, unicode)', async (t) => {
  const src = join(FIX, 'nq', 'nq.csv');
  const g = loadGolden(src);
  assert.equal(g.format, 'nq-csv');
  assert.deepEqual(g.queries.map((q) => q.id), ['nq_000000', 'nq_000001', 'nq_000002', 'nq_000003']);
  assert.deepEqual(g.queries[0]!.expected.map((r) => [r.chunk_id, r.grade, r.relevant]), [['nq_000000', 3, true]]);
  const out = join(tempDir(t), 'nq.csv');
  await writeAs('nq-csv', g.queries, g.meta, out);
  assert.deepEqual(parseCsv(read(out), { columns: true }), parseCsv(read(src), { columns: true }));
  assert.deepEqual(loadGoldenFile(out), g.queries);
});

test('NQ prepared JSON round-trips losslessly, and CSV -> prepared JSON -> CSV keeps every row', async (t) => {
  const dir = tempDir(t);
  const src = join(FIX, 'nq', 'prepared.json');
  const g = loadGolden(src);
  assert.equal(g.format, 'nq-json');
  const out = join(dir, 'prepared.json');
  await writeAs('nq-json', g.queries, g.meta, out);
  assert.deepEqual(JSON.parse(read(out)), JSON.parse(read(src)));
  assert.deepEqual(loadGoldenFile(out), g.queries);

  const csv = loadGolden(join(FIX, 'nq', 'nq.csv'));
  const prepared = join(dir, 'from-csv.json');
  await writeAs('nq-json', csv.queries, csv.meta, prepared);
  const recs = JSON.parse(read(prepared)) as { chunk_id: string; document_id: string; content: string; metadata: Record<string, string> }[];
  assert.equal(recs.length, 4);
  assert.deepEqual(recs[1], {
    chunk_id: 'nq_000001',
    document_id: 'natural_questions',
    content: "`` Don't You (Forget About Me) '' is a 1985 pop song performed by Scottish rock band Simple Minds, \"best known\" for The Breakfast Club.",
    metadata: { question: "what film has the song don't you forget about me", short_answer: 'The Breakfast Club', question_id: '1' },
  });
  const back = join(dir, 'back.csv');
  await writeAs('nq-csv', loadGoldenFile(prepared), undefined, back);
  assert.deepEqual(parseCsv(read(back), { columns: true }), parseCsv(read(join(FIX, 'nq', 'nq.csv')), { columns: true }));
});

test('BEIR folder round-trips losslessly (unjudged queries kept in place, graded qrels)', async (t) => {
  const src = join(FIX, 'beir', 'mini');
  const g = loadGolden(src);
  assert.equal(g.format, 'beir');
  assert.deepEqual(g.queries.map((q) => q.id), ['1', '3', '13']);
  assert.deepEqual(g.queries[1]!.expected, [
    { doc_id: 'doc-b', grade: 2, relevant: true },
    { doc_id: 'doc-c', grade: 0, relevant: false },
  ]);
  const out = join(tempDir(t), 'mini');
  await writeAs('beir', g.queries, g.meta, out);
  assert.deepEqual(jsonl(read(join(out, 'queries.jsonl'))), jsonl(read(join(src, 'queries.jsonl'))));
  assert.deepEqual(lines(read(join(out, 'qrels', 'test.tsv'))), lines(read(join(src, 'qrels', 'test.tsv'))));
  assert.deepEqual(loadGoldenFile(out), g.queries);
  // another split is chosen explicitly
  assert.deepEqual(loadGoldenFile(src, { split: 'dev' }).map((q) => q.id), ['5']);
});

test('TREC SGML topics + qrels round-trip losslessly', async (t) => {
  const src = join(FIX, 'trec', 'sgml', 'topics.301-303.txt');
  const g = loadGolden(src);
  assert.equal(g.format, 'trec');
  const [t301, t302, t303] = g.queries;
  assert.equal(t301!.query, 'International Organized Crime');
  assert.match(t301!.intent!, /^Identify organizations that participate in international criminal\nactivity/);
  assert.match(t301!.notes!, /^A relevant document must/);
  assert.equal(t302!.notes, undefined);
  assert.deepEqual(t303!.expected, [
    { doc_id: 'LA011190-0112', grade: -1, relevant: false, extra: { iteration: '1' } },
    { doc_id: 'LA011190-0156', grade: 1, relevant: true },
  ]);
  const out = join(tempDir(t), 'topics.out.txt');
  const files = await writeAs('trec', g.queries, g.meta, out);
  assert.equal(files.size, 2);
  const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
  const topicsOf = (s: string) => (s.match(/<top>[\s\S]*?<\/top>/g) ?? []).map(norm);
  assert.deepEqual(topicsOf(read(out)), topicsOf(read(src)));
  const qrelsOut = [...files.keys()].find((k) => k !== out)!;
  assert.deepEqual(lines(read(qrelsOut)), lines(read(join(FIX, 'trec', 'sgml', 'qrels.301-303.txt'))));
  assert.deepEqual(loadGoldenFile(out), g.queries);
});

test('TREC tab-separated topics round-trip byte for byte', async (t) => {
  const src = join(FIX, 'trec', 'tsv', 'topics.tsv');
  const g = loadGolden(src);
  const out = join(tempDir(t), 'topics.tsv');
  const files = await writeAs('trec', g.queries, g.meta, out);
  assert.equal(read(out), read(src));
  assert.equal(files.get(join(out, '..', 'qrels.tsv')), read(join(FIX, 'trec', 'tsv', 'qrels.tsv')));
  assert.deepEqual(loadGoldenFile(out), g.queries);
});

test('cross-format: DES-058 -> YAML -> DES-058 and -> JSONL keep every expectation', async (t) => {
  const dir = tempDir(t);
  const g = loadGolden(join(FIX, 'des058', 'golden-set-en.json'));
  for (const [fmt, name] of [
    ['yaml', 'x.yaml'],
    ['jsonl', 'x.jsonl'],
  ] as const) {
    const mid = join(dir, name);
    await writeAs(fmt, g.queries, g.meta, mid);
    const viaMid = loadGoldenFile(mid);
    assert.deepEqual(withoutOrigin(viaMid), withoutOrigin(g.queries), fmt);
    const back = join(dir, `back-${fmt}.json`);
    await writeAs('des058', viaMid, undefined, back);
    assert.deepEqual(withoutOrigin(loadGoldenFile(back)), withoutOrigin(g.queries), fmt);
  }
});

test('YAML values that look like dates or numbers stay as written (CORE schema, no timestamps)', async (t) => {
  const dir = tempDir(t);
  const src = join(dir, 'q.yaml');
  const text = '- id: 2026-01-01\n  query: week 15\n  notes: 2026-06-02\n  expected_paths: [logs/2026-W15.md]\n  tags: [english]\n';
  (await import('node:fs')).writeFileSync(src, text);
  const g = loadGolden(src);
  assert.equal(g.queries[0]!.id, '2026-01-01');
  assert.equal(g.queries[0]!.notes, '2026-06-02');
  const out = join(dir, 'out.yaml');
  await writeAs('yaml', g.queries, g.meta, out);
  assert.deepEqual(yaml.load(read(out), { schema: yaml.CORE_SCHEMA }), yaml.load(text, { schema: yaml.CORE_SCHEMA }));
});
