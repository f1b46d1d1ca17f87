import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { chunkDocument, splitSentences, splitLongSentence } from '../../src/ingest/chunker.ts';
import type { CorpusDocument } from '../../src/ingest/types.ts';

function doc(sections: CorpusDocument['sections'], extra: Partial<CorpusDocument> = {}): CorpusDocument {
  return { id: 'doc', title: 'T', language: 'en', tags: [], metadata: {}, sections, ...extra };
}

// ~20 distinct sentences of 10-20 tokens each, so a 200-token budget needs several chunks.
const SENTENCES = Array.from(
  { length: 60 },
  (_, i) => `Sentence number ${i} talks about the lake, the heron and the wind over the water ${'again '.repeat(i % 5)}today.`,
);
const LONG_TEXT = [SENTENCES.slice(0, 20).join(' '), SENTENCES.slice(20, 40).join(' '), SENTENCES.slice(40).join(' ')].join('\n\n');

for (const size of [200, 300, 500]) {
  test(`chunk size ${size}: every chunk within budget, tokenCount exact, all text kept in order`, () => {
    const chunks = chunkDocument(doc([{ text: LONG_TEXT }]), { chunkSize: size });
    assert.ok(chunks.length >= 2, `expected several chunks at ${size}, got ${chunks.length}`);
    for (const c of chunks) {
      assert.ok(c.tokenCount <= size, `${c.id} has ${c.tokenCount} tokens > ${size}`);
      assert.equal(c.tokenCount, countTokens(c.content));
    }
    // no overlap: concatenating chunks gives back every sentence exactly once, in order
    const joined = chunks.map((c) => c.content).join(' ').replace(/\s+/g, ' ');
    assert.equal(joined, SENTENCES.join(' '));
    // greedy packing: a chunk plus the next chunk's first sentence would exceed the budget
    for (let i = 0; i + 1 < chunks.length; i++) {
      const nextFirst = splitSentences(chunks[i + 1]!.content.split('\n\n')[0]!, 'en')[0]!;
      assert.ok(countTokens(`${chunks[i]!.content} ${nextFirst}`) > size - 2, `chunk ${i} closed early`);
    }
  });
}

test('chunks end on sentence boundaries when no sentence exceeds the budget', () => {
  const chunks = chunkDocument(doc([{ text: LONG_TEXT }]), { chunkSize: 200 });
  for (const c of chunks) {
    assert.match(c.content, /^Sentence number \d+/);
    assert.match(c.content, /today\.$/);
  }
});

test('ids are <documentId>#c<size>-<index>, stable across runs, metadata carries book, chapter, heading, path', () => {
  const d = doc(
    [
      { chapterNumber: 1, heading: 'Chapter 1: One', text: LONG_TEXT },
      { chapterNumber: 2, heading: 'Chapter 2: Two', text: 'A short chapter. Only two sentences.' },
    ],
    { id: 'silent-lake', slug: 'silent-lake', path: 'books/silent-lake.md' },
  );
  const a = chunkDocument(d, { chunkSize: 300, overlap: 40 });
  const b = chunkDocument(structuredClone(d), { chunkSize: 300, overlap: 40 });
  assert.deepEqual(a, b);
  a.forEach((c, i) => {
    assert.equal(c.id, `silent-lake#c300-${i}`);
    assert.equal(c.chunkIndex, i);
    assert.equal(c.documentId, 'silent-lake');
    assert.equal(c.metadata.bookSlug, 'silent-lake');
    assert.equal(c.metadata.path, 'books/silent-lake.md');
  });
  const last = a[a.length - 1]!;
  assert.equal(last.content, 'A short chapter. Only two sentences.');
  assert.equal(last.metadata.chapterNumber, 2);
  assert.equal(last.metadata.heading, 'Chapter 2: Two');
});

test('chunks never cross a section boundary, and overlap does not carry across one', () => {
  const d = doc([
    { chapterNumber: 1, text: 'Alpha one. Alpha two.' },
    { chapterNumber: 2, text: 'Beta one. Beta two.' },
  ]);
  const chunks = chunkDocument(d, { chunkSize: 200, overlap: 100 });
  assert.deepEqual(
    chunks.map((c) => [c.content, c.metadata.chapterNumber]),
    [
      ['Alpha one. Alpha two.', 1],
      ['Beta one. Beta two.', 2],
    ],
  );
});

test('overlap repeats whole trailing sentences of the previous chunk, within the overlap budget', () => {
  const overlap = 40;
  const chunks = chunkDocument(doc([{ text: SENTENCES.join(' ') }]), { chunkSize: 200, overlap });
  assert.ok(chunks.length >= 3);
  for (let i = 1; i < chunks.length; i++) {
    const prev = splitSentences(chunks[i - 1]!.content, 'en');
    const cur = splitSentences(chunks[i]!.content, 'en');
    // the shared prefix of cur equals a suffix of prev
    let k = 0;
    while (k < cur.length && prev.includes(cur[k]!)) k++;
    assert.ok(k >= 1, `chunk ${i} carries no overlap`);
    assert.deepEqual(cur.slice(0, k), prev.slice(prev.length - k));
    const carried = cur.slice(0, k).reduce((s, x) => s + countTokens(x), 0);
    assert.ok(carried <= overlap, `carried ${carried} tokens > overlap ${overlap}`);
    assert.ok(k < cur.length, `chunk ${i} is only overlap`);
    assert.ok(chunks[i]!.tokenCount <= 200);
  }
  // every sentence appears, in order, in the union
  const seen = new Set(chunks.flatMap((c) => splitSentences(c.content, 'en')));
  for (const s of SENTENCES) assert.ok(seen.has(s), `lost: ${s}`);
});

test('a sentence longer than the budget is split inside, at word boundaries, and only that sentence', () => {
  const long = `${Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ')}.`;
  const text = `Short before. ${long} Short after.`;
  const chunks = chunkDocument(doc([{ text }]), { chunkSize: 200 });
  assert.ok(chunks.length >= 3);
  for (const c of chunks) assert.ok(c.tokenCount <= 200);
  assert.equal(chunks.map((c) => c.content).join(' '), text);
  assert.ok(chunks[0]!.content.startsWith('Short before. w0 '), 'the split sentence fills up the first chunk');
  assert.ok(chunks.at(-1)!.content.endsWith('Short after.'));
  // pieces end between words: each chunk's last token is a complete "wN" word or sentence
  for (const c of chunks) assert.match(c.content, /(w\d+\.?|\.)$/);
});

test('a single "word" over the budget (no spaces) is cut between characters', () => {
  const blob = 'x'.repeat(3000) + 'नमस्ते'.repeat(200);
  const pieces = splitLongSentence(blob, 64);
  assert.ok(pieces.length > 2);
  for (const p of pieces) assert.ok(countTokens(p) <= 64);
  assert.equal(pieces.join(''), blob);
});

test('Spanish and Hindi are segmented with their own sentence rules', () => {
  assert.deepEqual(splitSentences('¿Qué es el alma? Es el océano. ¡Mira!', 'es'), ['¿Qué es el alma?', 'Es el océano.', '¡Mira!']);
  assert.deepEqual(splitSentences('सुबह झील शांत होती है। उसकी सतह पर कुछ नहीं हिलता। क्यों?', 'hi'), [
    'सुबह झील शांत होती है।',
    'उसकी सतह पर कुछ नहीं हिलता।',
    'क्यों?',
  ]);
  const hi = Array.from({ length: 40 }, (_, i) => `यह वाक्य संख्या ${i} है और झील के बारे में बात करता है।`).join(' ');
  const chunks = chunkDocument(doc([{ text: hi }], { language: 'hi' }), { chunkSize: 200, overlap: 30 });
  assert.ok(chunks.length >= 2);
  for (const c of chunks) {
    assert.equal(c.language, 'hi');
    assert.ok(c.tokenCount <= 200);
    assert.match(c.content, /।$/);
  }
  const es = chunkDocument(doc([{ text: 'El Sr. García llegó. Se fue.' }], { language: 'es' }), { chunkSize: 200 });
  assert.equal(es[0]!.language, 'es');
});

test('an unknown language tag falls back to default sentence rules instead of throwing', () => {
  const chunks = chunkDocument(doc([{ text: 'One. Two.' }], { language: 'zz-invalid!!' }), { chunkSize: 200 });
  assert.equal(chunks[0]!.content, 'One. Two.');
});

test('a huge single paragraph is chunked in bounded time without losing text', () => {
  const big = 'word '.repeat(60000).trim() + '. End here.';
  const chunks = chunkDocument(doc([{ text: big }]), { chunkSize: 500 });
  for (const c of chunks) assert.ok(c.tokenCount <= 500);
  assert.equal(chunks.map((c) => c.content).join(' '), big);
});

test('prechunked documents pass through with their own ids and metadata', () => {
  const d = doc([], {
    id: 'natural_questions',
    prechunked: [
      { id: 'nq_000000', content: 'First passage.', metadata: { question: 'q0' } },
      { id: 'nq_000001', content: 'Second passage.' },
    ],
  });
  const chunks = chunkDocument(d, { chunkSize: 300 });
  assert.deepEqual(
    chunks.map((c) => [c.id, c.chunkIndex, c.content, c.documentId]),
    [
      ['nq_000000', 0, 'First passage.', 'natural_questions'],
      ['nq_000001', 1, 'Second passage.', 'natural_questions'],
    ],
  );
  assert.equal(chunks[0]!.metadata.question, 'q0');
  assert.equal(chunks[0]!.tokenCount, countTokens('First passage.'));
});

test('bad options are rejected with a UserError naming the option', () => {
  assert.throws(() => chunkDocument(doc([{ text: 'x' }]), { chunkSize: 0 }), { name: 'UserError', message: /chunk size/ });
  assert.throws(() => chunkDocument(doc([{ text: 'x' }]), { chunkSize: 200, overlap: 200 }), {
    name: 'UserError',
    message: /overlap/,
  });
  assert.throws(() => chunkDocument(doc([{ text: 'x' }]), { chunkSize: 200, overlap: -1 }), { name: 'UserError' });
});

test('empty sections and whitespace-only text produce no chunks', () => {
  assert.deepEqual(chunkDocument(doc([{ text: '   \n\n  ' }, { text: '' }]), { chunkSize: 200 }), []);
});
