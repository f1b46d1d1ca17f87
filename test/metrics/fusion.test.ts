import { test } from 'node:test';
import assert from 'node:assert/strict';
import { combMnz, combSum, minMaxNormalise, rrf } from '../../src/metrics/index.ts';

const close = (a: number, b: number, msg?: string) => assert.ok(Math.abs(a - b) < 1e-12, `${msg ?? ''} expected ${b}, got ${a}`);

test('rrf: sum of w / (k + rank) with 1-based ranks and k = 60', () => {
  const fused = rrf([{ ids: ['a', 'b', 'c'] }, { ids: ['c', 'a'] }]);
  // a: 1/61 + 1/62; c: 1/63 + 1/61; b: 1/62
  assert.deepEqual(
    fused.map((f) => f.id),
    ['a', 'c', 'b'],
  );
  close(fused[0]!.score, 1 / 61 + 1 / 62);
  close(fused[1]!.score, 1 / 63 + 1 / 61);
  close(fused[2]!.score, 1 / 62);
});

test('rrf: custom k, weights, ties broken by id, duplicates keep the first rank', () => {
  const fused = rrf(
    [
      { ids: ['x', 'y', 'x'], weight: 2 },
      { ids: ['y', 'x'], weight: 1 },
    ],
    0,
  );
  // k = 0: x = 2/1 + 1/2 = 2.5 ; y = 2/2 + 1/1 = 2
  assert.deepEqual(fused, [
    { id: 'x', score: 2.5 },
    { id: 'y', score: 2 },
  ]);
  const tied = rrf([{ ids: ['b'] }, { ids: ['a'] }]);
  assert.deepEqual(
    tied.map((f) => f.id),
    ['a', 'b'],
    'equal scores: id ascending',
  );
  assert.throws(() => rrf([{ ids: ['a'], weight: -1 }]), RangeError);
});

test('minMaxNormalise maps each run to [0, 1]; a constant run is all 1', () => {
  assert.deepEqual(
    [
      ...minMaxNormalise([
        { id: 'a', score: 10 },
        { id: 'b', score: 5 },
        { id: 'c', score: 0 },
      ]),
    ],
    [
      ['a', 1],
      ['b', 0.5],
      ['c', 0],
    ],
  );
  assert.deepEqual([...minMaxNormalise([{ id: 'a', score: 3 }, { id: 'b', score: 3 }])], [
    ['a', 1],
    ['b', 1],
  ]);
});

test('combSum and combMnz over min-max normalised scores', () => {
  const runs = [
    {
      hits: [
        { id: 'a', score: 10 },
        { id: 'b', score: 6 },
        { id: 'c', score: 2 },
      ],
    },
    {
      hits: [
        { id: 'b', score: 0.9 },
        { id: 'd', score: 0.5 },
        { id: 'a', score: 0.1 },
      ],
    },
  ];
  // run 1 normalised: a 1, b 0.5, c 0 ; run 2: b 1, d 0.5, a 0
  // CombSUM: a 1, b 1.5, c 0, d 0.5 ; CombMNZ x hits: a 1*2, b 1.5*2, c 0*1, d 0.5*1
  assert.deepEqual(combSum(runs), [
    { id: 'b', score: 1.5 },
    { id: 'a', score: 1 },
    { id: 'd', score: 0.5 },
    { id: 'c', score: 0 },
  ]);
  assert.deepEqual(combMnz(runs), [
    { id: 'b', score: 3 },
    { id: 'a', score: 2 },
    { id: 'd', score: 0.5 },
    { id: 'c', score: 0 },
  ]);
  const weighted = combSum([{ ...runs[0]!, weight: 3 }, runs[1]!]);
  assert.deepEqual(weighted[0], { id: 'a', score: 3 });
});
