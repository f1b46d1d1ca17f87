// Hand-worked values for every measure. The worked example (relevance level 1 unless stated):
//   judgments J: a=3, b=0, c=1, d=2, e=-1 (in pool, unjudged), f=0      -> relevant {a,c,d}, R=3;
//                judged non-relevant {b,f}, N=2
//   ranking:     x a b c a e f d  -> the duplicate 'a' at position 5 is dropped, leaving
//                x a b c e f d    (7 docs; relevant at ranks 2, 4, 7; x is not judged at all)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  P_k,
  Rprec,
  bpref,
  judged_k,
  map,
  map_cut_k,
  mrr_cut_k,
  ndcg,
  ndcg_cut_k,
  ndcg_exp_cut_k,
  num_rel,
  num_rel_ret,
  num_ret,
  recall_k,
  recip_rank,
  success_k,
  type Measure,
} from '../../src/metrics/index.ts';

const J = new Map<string, number>([
  ['a', 3],
  ['b', 0],
  ['c', 1],
  ['d', 2],
  ['e', -1],
  ['f', 0],
]);
const RUN = ['x', 'a', 'b', 'c', 'a', 'e', 'f', 'd'];
const close = (actual: number, expected: number, msg?: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-12, `${msg ?? ''} expected ${expected}, got ${actual}`);

test('counts: duplicates are dropped, negative grades are not relevant', () => {
  assert.equal(num_ret(RUN, J), 7);
  assert.equal(num_rel(RUN, J), 3);
  assert.equal(num_rel_ret(RUN, J), 3);
  assert.equal(num_rel(RUN, J, undefined, { relevanceLevel: 2 }), 2);
  assert.equal(num_rel_ret(['c', 'e', 'x'], J, undefined, { relevanceLevel: 2 }), 0);
});

test('map and map_cut_k divide by all relevant documents R', () => {
  close(map(RUN, J), (1 / 2 + 2 / 4 + 3 / 7) / 3);
  close(map_cut_k(RUN, J, 4), (1 / 2 + 2 / 4) / 3);
  close(map_cut_k(RUN, J, 1), 0);
  close(map_cut_k(RUN, J, 100), map(RUN, J), 'k beyond the ranking equals map');
  // level 2: relevant {a (rank 2), d (rank 7)}, R = 2
  close(map(RUN, J, undefined, { relevanceLevel: 2 }), (1 / 2 + 2 / 7) / 2);
});

test('Rprec looks at the top R', () => {
  close(Rprec(RUN, J), 1 / 3); // top 3 = x a b
  close(Rprec(['a', 'c', 'd'], J), 1);
  close(Rprec(['a'], J), 1 / 3, 'a ranking shorter than R still divides by R');
});

test('recip_rank has no cutoff; mrr_cut_k does', () => {
  close(recip_rank(RUN, J), 1 / 2);
  close(mrr_cut_k(RUN, J, 1), 0);
  close(mrr_cut_k(RUN, J, 2), 1 / 2);
  close(recip_rank(['x', 'b', 'f', 'y', 'd'], J), 1 / 5);
  close(mrr_cut_k(['x', 'b', 'f', 'y', 'd'], J, 4), 0);
});

test('P_k always divides by k; recall_k by R; success_k is 0/1', () => {
  close(P_k(RUN, J, 5), 2 / 5); // x a b c e
  close(P_k(RUN, J, 10), 3 / 10, 'k larger than the ranking: missing positions are non-relevant');
  close(P_k(RUN, J, 2, { relevanceLevel: 3 }), 1 / 2);
  close(recall_k(RUN, J, 4), 2 / 3);
  close(recall_k(RUN, J, 10), 1);
  assert.equal(success_k(RUN, J, 1), 0);
  assert.equal(success_k(RUN, J, 2), 1);
  assert.equal(success_k(RUN, J, 100), 1);
});

test('bpref counts judged non-relevant documents above each relevant one (trec_eval m_bpref.c)', () => {
  // x skipped (unjudged); a: no nonrel above -> 1; b nonrel (1); c: 1 - min(1,3)/min(2,3) = 1/2;
  // e skipped (grade -1); f nonrel (2); d: 1 - min(2,3)/min(2,3) = 0.  (1 + 1/2 + 0) / 3
  close(bpref(RUN, J), 1.5 / 3);
  // level 2: R = 2, N = 3 (b, c, f); a -> 1; then b, c, f above d -> 1 - min(3,2)/min(3,2) = 0
  close(bpref(RUN, J, undefined, { relevanceLevel: 2 }), 1 / 2);
  close(bpref(['a', 'c', 'd', 'b'], J), 1);
});

test('graded nDCG: linear gain, log2(rank+1) discount, ideal from all judged documents', () => {
  // gains by rank: x0 a3 b0 c1 e0 (negative grade -> 0) f0 d2 ; ideal grades 3,2,1
  const dcg = 3 / Math.log2(3) + 1 / Math.log2(5) + 2 / Math.log2(8);
  const idcg = 3 / Math.log2(2) + 2 / Math.log2(3) + 1 / Math.log2(4);
  close(ndcg(RUN, J), dcg / idcg); // ~0.627936
  close(ndcg_cut_k(RUN, J, 2), 3 / Math.log2(3) / (3 + 2 / Math.log2(3)));
  close(ndcg_cut_k(RUN, J, 1000), ndcg(RUN, J), 'k larger than both ranking and ideal equals ndcg');
  close(ndcg_cut_k(['a', 'd', 'c'], J, 3), 1);
  close(ndcg_cut_k(['d', 'a', 'c'], J, 3), (2 + 3 / Math.log2(3) + 1 / 2) / (3 + 2 / Math.log2(3) + 1 / 2));
  // relevance level does not change graded measures (trec_eval ignores -l for ndcg)
  close(ndcg(RUN, J, undefined, { relevanceLevel: 3 }), ndcg(RUN, J));
  // ideal counts relevant documents that were NOT retrieved
  close(ndcg_cut_k(['a'], J, 5), 3 / (3 + 2 / Math.log2(3) + 1 / 2));
});

test('ndcg_exp_cut_k uses gain 2^g - 1 and equals ndcg_cut_k on binary judgments', () => {
  close(ndcg_exp_cut_k(RUN, J, 2), 7 / Math.log2(3) / (7 + 3 / Math.log2(3)));
  const bin = new Map([
    ['p', 1],
    ['q', 1],
    ['r', 0],
  ]);
  const ranking = ['r', 'q', 'z', 'p'];
  close(ndcg_exp_cut_k(ranking, bin, 3), ndcg_cut_k(ranking, bin, 3));
  close(ndcg_cut_k(ranking, bin, 3), 1 / Math.log2(3) / (1 + 1 / Math.log2(3)));
});

test('judged_k: share of the top k with a grade >= 0, divided by k', () => {
  close(judged_k(RUN, J, 5), 3 / 5); // x unjudged, a b c judged, e has grade -1
  close(judged_k(['a', 'b'], J, 4), 2 / 4);
  close(judged_k([], J, 3), 0);
});

test('ties in "as ranked" input keep the given order (the caller decides the order)', () => {
  // Two rankings with the same set but swapped order give different P_1: no re-sorting happens.
  assert.equal(P_k(['a', 'b'], J, 1), 1);
  assert.equal(P_k(['b', 'a'], J, 1), 0);
});

const ALL: [string, Measure, number | undefined][] = [
  ['map', map, undefined],
  ['map_cut_k', map_cut_k, 10],
  ['Rprec', Rprec, undefined],
  ['bpref', bpref, undefined],
  ['recip_rank', recip_rank, undefined],
  ['mrr_cut_k', mrr_cut_k, 10],
  ['P_k', P_k, 10],
  ['recall_k', recall_k, 10],
  ['success_k', success_k, 10],
  ['ndcg', ndcg, undefined],
  ['ndcg_cut_k', ndcg_cut_k, 10],
  ['ndcg_exp_cut_k', ndcg_exp_cut_k, 10],
  ['judged_k', judged_k, 10],
  ['num_ret', num_ret, undefined],
  ['num_rel_ret', num_rel_ret, undefined],
];

test('an empty ranking scores 0 on every measure (num_rel still counts)', () => {
  for (const [name, fn, k] of ALL) assert.equal(fn([], J, k), 0, name);
  assert.equal(num_rel([], J), 3);
});

test('a query with no relevant documents scores 0 on every measure', () => {
  const none = new Map([
    ['b', 0],
    ['f', 0],
    ['e', -1],
  ]);
  const ranking = ['b', 'f', 'e', 'x'];
  for (const [name, fn, k] of ALL) {
    if (name === 'num_ret' || name === 'judged_k') continue;
    assert.equal(fn(ranking, none, k), 0, name);
  }
  assert.equal(num_ret(ranking, none), 4);
  close(judged_k(ranking, none, 10), 2 / 10);
});

test('duplicates keep their first occurrence', () => {
  // 'c' first appears at rank 1; its later copy must not count again or shift 'a'.
  const ranking = ['c', 'c', 'c', 'a'];
  assert.equal(num_ret(ranking, J), 2);
  close(P_k(ranking, J, 2), 1);
  close(map(ranking, J), (1 + 1) / 3);
  close(ndcg_cut_k(ranking, J, 2), (1 + 3 / Math.log2(3)) / (3 + 2 / Math.log2(3)));
});

test('cut measures reject a missing or invalid k', () => {
  assert.throws(() => P_k(RUN, J), /P_k needs a cutoff/);
  assert.throws(() => ndcg_cut_k(RUN, J, 0), RangeError);
  assert.throws(() => recall_k(RUN, J, 2.5), RangeError);
});
