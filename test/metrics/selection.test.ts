/** Cross-validated pick-the-best (src/metrics/selection.ts): hand-checkable cases. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crossValidatedSelection, SelectionInputError } from '../../src/metrics/selection.ts';

test('a column better on every query wins every fold; held-out mean = its mean, no optimism', () => {
  const r = crossValidatedSelection({ names: ['base', 'good'], values: [[0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]] }, { folds: 3, repeats: 4, seed: 7 });
  assert.equal(r.heldOutMean, 1);
  assert.equal(r.inSampleBest, 'good');
  assert.equal(r.optimism, 0);
  assert.equal(r.stability, 1);
  assert.deepEqual(r.wins, [{ name: 'good', count: 12, share: 1 }]);
  assert.equal(r.baselineMean, 0);
});

test('a column that is only lucky on some queries: held-out below in-sample (optimism > 0), seeded and deterministic', () => {
  // Column "lucky" scores 1 on 4 of 10 queries, "steady" 0.35 everywhere; in-sample lucky wins (0.4 > 0.35),
  // but whenever the held-out fold holds most of lucky's queries, the training folds pick differently.
  const lucky = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0];
  const steady = new Array(10).fill(0.35);
  const a = crossValidatedSelection({ names: ['steady', 'lucky'], values: [steady, lucky] }, { folds: 5, repeats: 50, seed: 1 });
  const b = crossValidatedSelection({ names: ['steady', 'lucky'], values: [steady, lucky] }, { folds: 5, repeats: 50, seed: 1 });
  assert.deepEqual(a, b, 'same seed, same result');
  assert.equal(a.inSampleBest, 'lucky');
  assert.ok(Math.abs(a.inSampleMean - 0.4) < 1e-12);
  assert.ok(a.heldOutMean < a.inSampleMean, `held-out ${a.heldOutMean} < in-sample ${a.inSampleMean}`);
  assert.ok(a.optimism > 0);
  assert.ok(a.stability < 1 && a.stability > 0);
  assert.equal(a.wins.reduce((s, w) => s + w.count, 0), 250);
});

test('bad input is refused', () => {
  assert.throws(() => crossValidatedSelection({ names: ['a'], values: [[1, 2]] }), SelectionInputError);
  assert.throws(() => crossValidatedSelection({ names: ['a', 'b'], values: [[1, 2], [1]] }), /every column needs a value/);
});
