import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCorpus, detectFormat, parseChapterHeading, MAX_JSON_DEPTH } from '../../src/ingest/readers.ts';
import { chunkDocument } from '../../src/ingest/chunker.ts';

const FIX = 'test/fixtures/corpus';
const tmp = mkdtempSync(join(tmpdir(), 'rankgate-readers-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));
function file(name: string, content: string | Buffer): string {
  const p = join(tmp, name);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
  return p;
}

test('markdown folder: front matter, chapters from "Chapter N:" and "N." headings, plain headings split sections', async () => {
  const docs = await readCorpus(`${FIX}/markdown`);
  assert.deepEqual(
    docs.map((d) => d.id),
    ['lago-sereno', 'shant-jheel', 'silent-lake'],
  );
  const lake = docs[2]!;
  assert.equal(lake.title, 'The Silent Lake');
  assert.equal(lake.language, 'en');
  assert.equal(lake.path, 'silent-lake.md');
  assert.deepEqual(lake.tags, ['stillness', 'meditation']);
  assert.deepEqual(lake.metadata, { author: 'Test Author' });
  assert.deepEqual(
    lake.sections.map((s) => [s.chapterNumber, s.heading]),
    [
      [undefined, undefined], // preface before the first chapter (the H1 is the title, not a section)
      [1, 'Chapter 1: Still Water'],
      [1, 'A note on reflections'], // a sub-heading stays in its chapter
      [2, '2. The Wind'],
      [undefined, 'Glossary'], // a plain heading at chapter level ends the chapter
    ],
  );
  assert.match(lake.sections[3]!.text, /## not a heading inside a code fence/);
  assert.ok(!lake.sections.some((s) => s.heading?.includes('not a heading')));

  const es = docs[0]!;
  assert.equal(es.language, 'es');
  assert.deepEqual(es.tags, ['stillness', 'lago']); // comma string accepted
  assert.equal(es.sections[0]!.chapterNumber, 1);
  const hi = docs[1]!;
  assert.equal(hi.language, 'hi');
  assert.equal(hi.sections[0]!.chapterNumber, 1); // अध्याय १ (Devanagari digit)

  const chunks = chunkDocument(lake, { chunkSize: 200 });
  const wind = chunks.find((c) => c.content.startsWith('The wind is the restless mind.'));
  assert.ok(wind);
  assert.deepEqual([wind.metadata.bookSlug, wind.metadata.chapterNumber, wind.metadata.heading, wind.metadata.path], [
    'silent-lake',
    2,
    '2. The Wind',
    'silent-lake.md',
  ]);
});

test('chapter heading forms', () => {
  assert.deepEqual(parseChapterHeading('Chapter 12: The Teacher'), { chapterNumber: 12, title: 'The Teacher' });
  assert.deepEqual(parseChapterHeading('CHAPTER IV - Roman'), { chapterNumber: 4, title: 'Roman' });
  assert.deepEqual(parseChapterHeading('7. Seven'), { chapterNumber: 7, title: 'Seven' });
  assert.deepEqual(parseChapterHeading('Capítulo 3: Tres'), { chapterNumber: 3, title: 'Tres' });
  assert.equal(parseChapterHeading('Glossary'), undefined);
  assert.equal(parseChapterHeading('2020 was a year'), undefined);
});

test('JSONL: id (string or number), title + text, language, tags, other fields as metadata', async () => {
  const docs = await readCorpus(`${FIX}/docs.jsonl`);
  assert.equal((await detectFormat(`${FIX}/docs.jsonl`)).format, 'jsonl');
  assert.deepEqual(docs.map((d) => [d.id, d.title, d.language]), [
    ['d1', 'First', 'en'],
    ['2', 'Segundo', 'es'],
  ]);
  assert.deepEqual(docs[0]!.metadata, { source: 'unit' });
  assert.deepEqual(docs[0]!.tags, ['a']);
  assert.equal(docs[0]!.sections[0]!.text, 'First\n\nAlpha beta gamma. Delta epsilon.');
});

test('BEIR: folder with corpus.jsonl, _id kept, title indexed with the text', async () => {
  assert.deepEqual(await detectFormat(`${FIX}/beir`), { format: 'beir', file: join(`${FIX}/beir`, 'corpus.jsonl') });
  const docs = await readCorpus(`${FIX}/beir`);
  assert.deepEqual(docs.map((d) => d.id), ['lake-1', 'lake-2']);
  assert.equal(docs[0]!.sections[0]!.text, 'Lakeside stillness\n\nThe surface settles at dawn. Second sentence here.');
  assert.equal(docs[1]!.sections[0]!.text, 'No title for this one.');
  assert.equal((await readCorpus(`${FIX}/beir/corpus.jsonl`, 'beir')).length, 2);
});

test('NQ prepared JSON: prechunked, nq ids kept, grouped by document_id', async () => {
  const docs = await readCorpus(`${FIX}/nq.json`);
  assert.equal(docs.length, 1);
  assert.equal(docs[0]!.id, 'natural_questions');
  const chunks = chunkDocument(docs[0]!, { chunkSize: 300 });
  assert.deepEqual(chunks.map((c) => c.id), ['nq_000000', 'nq_000001']);
  assert.equal(chunks[0]!.metadata.short_answer, 'The Breakfast Club');
});

const bad: [string, () => Promise<unknown>, RegExp][] = [
  ['missing path', () => readCorpus(join(tmp, 'nope')), /nope: corpus not found/],
  ['JSONL missing text', () => readCorpus(file('a.jsonl', '{"id":"x","text":"ok"}\n{"id":"y","title":"t"}\n')), /a\.jsonl:2: field 'text'/],
  ['JSONL malformed line', () => readCorpus(file('b.jsonl', '{"id":"x","text":"ok"}\n{"id": oops}\n')), /b\.jsonl:2: malformed JSON/],
  ['JSONL duplicate id', () => readCorpus(file('c.jsonl', '{"id":"x","text":"a"}\n{"id":"x","text":"b"}\n')), /c\.jsonl:2: field 'id': "x" repeats the id of line 1/],
  ['JSONL array line', () => readCorpus(file('d.jsonl', '["x"]\n')), /d\.jsonl: expected JSONL \(one JSON object per line\)/],
  ['JSONL bad language', () => readCorpus(file('e.jsonl', '{"id":"x","text":"a","language":"english!"}\n')), /e\.jsonl:1: field 'language'/],
  ['BEIR missing _id', () => (file('beir2/corpus.jsonl', '{"id":"x","text":"a"}\n'), readCorpus(join(tmp, 'beir2'))), /corpus\.jsonl:1: field '_id'/],
  ['NQ missing content', () => readCorpus(file('n1.json', '[{"chunk_id":"nq_1","document_id":"d","content":"a"},{"chunk_id":"nq_2"}]')), /n1\.json \[index 1\]: field 'content'/],
  ['NQ duplicate chunk id', () => readCorpus(file('n2.json', '[{"chunk_id":"nq_1","content":"a"},{"chunk_id":"nq_1","content":"b"}]')), /n2\.json \[index 1\]: field 'chunk_id': "nq_1" repeats index 0/],
  ['NQ not an array', () => readCorpus(file('n3.json', '{"chunk_id":"nq_1"}')), /n3\.json: expected a JSON array/],
  ['NQ malformed, with line and column', () => readCorpus(file('n4.json', '[\n {"chunk_id": "nq_1",}\n]')), /n4\.json:2:\d+: malformed JSON/],
  ['.json that is really JSONL', () => readCorpus(file('n5.json', '{"id":"a","text":"x"}\n{"id":"b","text":"y"}\n')), /n5\.json: looks like JSONL/],
  ['.jsonl that is really Markdown', () => readCorpus(file('m.jsonl', '# Title\n\nSome text.\n')), /m\.jsonl: expected JSONL/],
  ['.md that is binary', () => readCorpus(file('bin/x.md', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]))), /x\.md: contains NUL bytes/],
  ['.jsonl that is gzip', () => readCorpus(file('g.jsonl', Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]))), /g\.jsonl: contains NUL bytes/],
  ['invalid UTF-8 on line 2', () => readCorpus(file('u.jsonl', Buffer.concat([Buffer.from('{"id":"a","text":"x"}\n{"id":"b","text":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]))), /u\.jsonl:2: not valid UTF-8/],
  ['deeply nested JSONL', () => readCorpus(file('deep.jsonl', `{"id":"a","text":"x","meta":${'['.repeat(100000)}${']'.repeat(100000)}}\n`)), new RegExp(`deep\\.jsonl:1: JSON nested deeper than ${MAX_JSON_DEPTH}`)],
  ['deeply nested NQ', () => readCorpus(file('deep.json', `${'['.repeat(200000)}${']'.repeat(200000)}`)), /deep\.json: JSON nested deeper/],
  ['front matter not YAML', () => readCorpus(file('fm1/a.md', '---\ntitle: [unclosed\n---\n\ntext\n')), /a\.md:\d+: front matter is not valid YAML/],
  ['front matter not closed', () => readCorpus(file('fm2/a.md', '---\ntitle: x\n\ntext\n')), /a\.md:1: front matter opened with '---' but never closed/],
  ['front matter wrong type', () => readCorpus(file('fm3/a.md', '---\ntitle: [1, 2]\n---\n\ntext\n')), /a\.md \(front matter\): field 'title'/],
  ['front matter is a list', () => readCorpus(file('fm4/a.md', '---\n- a\n- b\n---\n\ntext\n')), /a\.md:2: front matter: expected a mapping/],
  ['duplicate slugs', () => readCorpus((file('dup/a.md', '---\nslug: same\n---\nx\n'), file('dup/b.md', '---\nslug: same\n---\ny\n'), join(tmp, 'dup'))), /b\.md: field 'slug': "same" is already used by .*a\.md/],
  ['empty folder', () => (mkdirSync(join(tmp, 'empty'), { recursive: true }), readCorpus(join(tmp, 'empty'))), /empty: cannot tell the corpus format/],
  ['unknown format', () => readCorpus(`${FIX}/docs.jsonl`, 'csv' as never), /format: expected one of markdown, jsonl, beir, nq/],
  ['over-long JSONL line', () => readCorpus(file('long.jsonl', `{"id":"a","text":"${'x'.repeat(17 * 1024 * 1024)}"}\n`)), /long\.jsonl:1: line longer than 16 MB/],
];
for (const [name, fn, re] of bad) {
  test(`bad input: ${name} -> UserError naming file, entry and field`, async () => {
    await assert.rejects(fn, (e: Error) => {
      assert.equal(e.name, 'UserError', `expected UserError, got ${e.name}: ${e.message}`);
      assert.match(e.message, re);
      return true;
    });
  });
}
