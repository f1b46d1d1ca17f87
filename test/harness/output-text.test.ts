/** The readable output cell (src/report/output-text.ts): titles, sections, snippets, marks, route and flags. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';
import { hitTitle, renderOutputText, snippet } from '../../src/report/output-text.ts';
import type { HarnessHit, HarnessOutput } from '../../src/results/types.ts';

const hit = (rank: number, chunkId: string, documentId: string, content: string, extra: Partial<HarnessHit> = {}): HarnessHit => ({ rank, chunkId, documentId, score: 1 / rank, content, ...extra });
const out = (hits: HarnessHit[], o: Partial<HarnessOutput> = {}): HarnessOutput => ({ ids: hits.map((h) => h.chunkId), hits, routing: { route: 'search', safety: false, reasons: [] }, practice_bridge: false, safety: false, latencyMs: 3, ...o });

test('ranked list: route line first, titles from slugs or the service, chapter, snippet, marks with grade', () => {
  const g = GoldenQuerySchema.parse({
    id: 'q', query: 'lamp', language: 'en', category: 'direct',
    expected: [{ chunk_id: 'the-lamp-within#c300-4', grade: 3, relevant: true }, { doc_id: 'antar-deep', grade: 1, relevant: false }],
  });
  const text = renderOutputText(
    out([
      hit(1, 'antar-deep#c300-0', 'antar-deep', '## Chapter 2\n\nThe deep   within is quiet.', { chapterNumber: 2 }),
      hit(2, 'the-lamp-within#c300-4', 'the-lamp-within', 'The lamp of calmness burns steadily.', { chapterNumber: 3 }),
      hit(3, 'x', 'x', 'Other.', { title: 'A Titled Doc', heading: 'Intro' }),
    ], { safety: true }),
    g,
  );
  assert.deepEqual(text.split('\n'), [
    'route search · SAFETY flag · expected result at #2 (grade 3) · 3 results',
    '#1 ~ Antar Deep · ch. 2 · partial match, grade 1',
    '    "Chapter 2 The deep within is quiet."',
    '#2 ✓ The Lamp Within · ch. 3 · expected, grade 3',
    '    "The lamp of calmness burns steadily."',
    '#3   A Titled Doc · Intro',
    '    "Other."',
  ]);
});

test('no expected result, a stated non-search route, titles from paths, long snippets cut at a word', () => {
  const g = GoldenQuerySchema.parse({ id: 'q', query: 'breathing', language: 'en', category: 'technique_boundary', expected_routing: 'practice_bridge' });
  const text = renderOutputText(out([], { routing: { route: 'search', safety: false, reasons: [] } }), g);
  assert.equal(text, 'route search · 0 results · expected route practice_bridge ✗');
  assert.equal(hitTitle(hit(1, 'c', 'notes/a.md', '', { path: 'notes/a.md' })), 'notes/a.md');
  assert.equal(snippet('word '.repeat(40), 20), 'word word word word …');
});

test('a miss names what was expected: the document and where it ranked, or that it is not in the top N', () => {
  const g = GoldenQuerySchema.parse({
    id: 'q', query: 'calm', language: 'en', category: 'direct',
    expected: [
      { book_slug: 'the-lamp-within', chapter_number: 3, passage_substring: 'calmness burns', grade: 3, relevant: true },
      { path: 'notes/calm.md', grade: 2, relevant: true },
      { doc_id: 'antar-deep', grade: 1, relevant: false },
    ],
  });
  const others = [1, 2, 3, 4].map((r) => hit(r, `o${r}`, `other-${r}`, 'Unrelated text.'));
  // not returned at all: the route line says which document was expected and that it is not in the top 4
  assert.equal(renderOutputText(out(others), g).split('\n')[0], 'route search · MISS: expected The Lamp Within · ch. 3 (grade 3) +1 more, not in the top 4 · 4 results');
  assert.equal(renderOutputText(out([]), g).split('\n')[0], 'route search · MISS: expected The Lamp Within · ch. 3 (grade 3) +1 more, not in the results (none returned) · 0 results');
  // found below the two results a truncated cell shows: named on the route line
  const low = [...others.slice(0, 3), hit(4, 'n', 'notes/calm.md', 'Calm.', { path: 'notes/calm.md' })];
  assert.equal(renderOutputText(out(low), g).split('\n')[0], 'route search · expected result at #4 (grade 2): notes/calm.md · 4 results');
  const high = [hit(1, 'n', 'notes/calm.md', 'Calm.', { path: 'notes/calm.md' }), ...others.slice(0, 2)];
  assert.equal(renderOutputText(out(high), g).split('\n')[0], 'route search · expected result at #1 (grade 2) · 3 results');
});

test('the rank assertion says on a miss what was expected and where it ranked', async () => {
  const { rank } = await import('../../assertions/rank.ts');
  const golden = { id: 'q', query: 'calm', language: 'en', category: 'direct', expected: [{ chunk_id: 'the-lamp-within#c300-4', book_slug: 'the-lamp-within', chapter_number: 3, grade: 3, relevant: true }] };
  const ctx = () => ({ test: { metadata: { golden } }, config: { passAt: 3 }, vars: { query: 'calm' } });
  const miss = rank(out([hit(1, 'x', 'x', 'X.'), hit(2, 'y', 'y', 'Y.')]), ctx());
  assert.equal(miss.pass, false);
  assert.match(miss.reason, /: no relevant reference returned: expected The Lamp Within · ch\. 3 \(grade 3\), not in the top 2 · Success@3 0 · Recall@10 0 /);
  const low = rank(out([1, 2, 3, 4].map((r) => hit(r, r === 4 ? 'the-lamp-within#c300-4' : `o${r}`, 'd', 'T.'))), ctx());
  assert.equal(low.pass, false);
  assert.match(low.reason, /: best relevant rank 4 \(expected The Lamp Within · ch\. 3 \(grade 3\) in the top 3\) · Success@3 0/);
});
