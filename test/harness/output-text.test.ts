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
