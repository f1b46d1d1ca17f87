/** rankgate report's pieces without a browser: bootstrap CIs, sweep panels, the Mermaid chart of the PR comment. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapMean, sweepPanels } from '../../src/report/html/data.ts';
import { mermaidCategoryChart } from '../../src/report/html/index.ts';
import type { BaselineDelta } from '../../src/gate/baseline.ts';
import type { Des058Report } from '../../src/results/summary.ts';
import type { ParsedResults } from '../../src/results/read.ts';

test('bootstrap CI of a mean: seeded, brackets the mean, degenerate on constant data', () => {
  const xs = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1];
  const a = bootstrapMean(xs, { seed: 3 });
  assert.deepEqual(a, bootstrapMean(xs, { seed: 3 }));
  assert.equal(a.mean, 0.7);
  assert.ok(a.lo! <= 0.7 && a.hi! >= 0.7 && a.lo! >= 0 && a.hi! <= 1 && a.hi! - a.lo! > 0.2);
  assert.deepEqual(bootstrapMean([0.5, 0.5, 0.5]), { mean: 0.5, lo: 0.5, hi: 0.5, n: 3 });
  assert.deepEqual(bootstrapMean([]), { mean: null, lo: null, hi: null, n: 0 });
});

test('sweep panels: hybrid columns on an RRF k x weights grid, one panel per chunk size x embedder', () => {
  const col = (label: string, config: Record<string, unknown>) => ({ index: 0, label, providerId: 'p', config, namedScores: {}, queries: [] });
  const parsed = {
    evalId: null,
    timestamp: 't',
    columns: [
      col('a', { mode: 'hybrid', rrfK: 40, weights: { keyword: 1, vector: 1 }, chunkSize: 300, embedder: 'use-lite' }),
      col('b', { mode: 'hybrid', rrfK: 60, weights: { keyword: 1, vector: 1 }, chunkSize: 300, embedder: 'use-lite' }),
      col('c', { mode: 'hybrid', rrfK: 60, weights: { keyword: 0.6, vector: 0.4 }, chunkSize: 300, embedder: 'use-lite' }),
      col('kw', { mode: 'keyword', chunkSize: 300 }),
      col('lonely', { mode: 'hybrid', rrfK: 60, chunkSize: 500, embedder: 'use-lite' }),
    ],
  } as unknown as ParsedResults;
  const p = sweepPanels(parsed);
  assert.equal(p.length, 1, 'a panel needs two cells; keyword-only is not on the grid');
  assert.equal(p[0]!.title, 'chunk size 300 · use-lite');
  assert.deepEqual(p[0]!.rrfK, [40, 60]);
  assert.deepEqual(p[0]!.weights, ['bm25 0.6 : vec 0.4', 'bm25 1 : vec 1']);
  assert.deepEqual(p[0]!.ndcg.map((c) => [c[0], c[1]]), [[0, 1], [1, 1], [1, 0]]);
});

test('Mermaid xychart for the PR comment: per-category Recall@3, bars = head, line = baseline', () => {
  const report = { categories: { direct: { count: 2, recall_at_3: 0.5 }, emotional: { count: 1, recall_at_3: 1 }, technique_boundary: { count: 1, routing_accuracy: 1 } } } as unknown as Des058Report;
  const delta = { categories: { direct: { recall_at_3: [0.25, 0.5] }, emotional: { recall_at_3: [1, 1] } } } as unknown as BaselineDelta;
  assert.equal(
    mermaidCategoryChart(report, delta),
    [
      '```mermaid',
      'xychart-beta',
      '  title "Recall@3 per category (%): bars = this PR, line = baseline"',
      '  x-axis ["direct", "emotional"]',
      '  y-axis "Recall@3 (%)" 0 --> 100',
      '  bar [50, 100]',
      '  line [25, 100]',
      '```',
    ].join('\n'),
  );
  assert.doesNotMatch(mermaidCategoryChart(report), /line/);
  assert.equal(mermaidCategoryChart({ categories: {} } as unknown as Des058Report), '');
});
