/**
 * Judged@k against ir_measures' definition (its own test fixture, hand-computed below), and condensed-list nDCG@10
 * against trec_eval 10's `-J -m ndcg_cut.10` (the parity fixtures' real trec_eval output).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Judged_k, condensed_ndcg_cut_k, judged_k, ndcg_cut_k, orderRun, parseQrels, parseRun } from '../../src/metrics/index.ts';

const FIX = join(import.meta.dirname, '..', 'fixtures', 'trec_eval');

test("Judged@k: ir_measures' own fixture, computed by hand", () => {
  // terrierteam/ir_measures tests/test_judged.py: qrels and a run ordered by score (ties by docno)
  const qrels = new Map([
    ['0', new Map([['D0', 0], ['D1', 1], ['D2', 1], ['D3', 2], ['D4', 0]])],
    ['1', new Map([['D0', 1], ['D3', 2], ['D5', 2]])],
  ]);
  // 0: D0 .8, D2 .7, D1 .3, D3 .4, D4 .1 -> D0 D2 D3 D1 D4; 1: D1 .8, D3 .7, D4 .3, D2 .4 -> D1 D3 D2 D4
  const run = { '0': ['D0', 'D2', 'D3', 'D1', 'D4'], '1': ['D1', 'D3', 'D2', 'D4'] };
  // query 0: every returned document is judged (grade 0 counts): 1 at every cutoff
  for (const k of [1, 3, 10, 1000]) assert.equal(Judged_k(run['0'], qrels.get('0')!, k), 1);
  // query 1: only D3 is judged. @10 and @1000: a run of 4 is divided by 4 (ir_measures recalculates the cutoff), 1/4;
  // @3: D1 D3 D2 -> 1/3; @1: D1 -> 0
  assert.equal(Judged_k(run['1'], qrels.get('1')!, 10), 1 / 4);
  assert.equal(Judged_k(run['1'], qrels.get('1')!, 1000), 1 / 4);
  assert.equal(Judged_k(run['1'], qrels.get('1')!, 3), 1 / 3);
  assert.equal(Judged_k(run['1'], qrels.get('1')!, 1), 0);
  // rankgate's trec_eval-style judged_k divides by k: another measure under another name
  assert.equal(judged_k(run['1'], qrels.get('1')!, 10), 1 / 10);
});

test('Judged@k: a negative grade is a judgment, a duplicate counts once, no judgments or no results is no value', () => {
  const j = new Map([['a', -1], ['b', 0]]);
  assert.equal(Judged_k(['a', 'b', 'c', 'd'], j, 10), 2 / 4, 'ir_measures: `did in qid_qrels`, whatever the grade');
  assert.equal(Judged_k(['a', 'a', 'c'], j, 2), 1 / 2, 'a later copy of an id is dropped before the cut');
  assert.ok(Number.isNaN(Judged_k([], j, 10)), 'an empty ranking has no value');
  assert.ok(Number.isNaN(Judged_k(['a'], new Map(), 10)), 'a query without judgments has no value');
  assert.throws(() => Judged_k(['a'], j, 0), /positive integer/);
});

test('condensed nDCG@10: unjudged results removed first, equal to trec_eval 10 -J -m ndcg_cut.10 query by query', () => {
  // by hand: ranking x(unjudged) a(3) y(unjudged) b(0) c(2); condensed: a b c
  const j = new Map([['a', 3], ['b', 0], ['c', 2], ['d', 1]]);
  const r = ['x', 'a', 'y', 'b', 'c'];
  const dcg = 3 / Math.log2(2) + 0 + 2 / Math.log2(4);
  const ideal = 3 / Math.log2(2) + 2 / Math.log2(3) + 1 / Math.log2(4);
  assert.ok(Math.abs(condensed_ndcg_cut_k(r, j, 10) - dcg / ideal) < 1e-12);
  assert.ok(condensed_ndcg_cut_k(r, j, 10) > ndcg_cut_k(r, j, 10), 'the strict figure counts x and y as misses');
  // trec_eval's own output on the parity fixtures (-q -c -J -m all_trec): every query present in the run
  let compared = 0;
  for (const id of ['00', '03', '07', '12']) {
    const qrels = parseQrels(readFileSync(join(FIX, 'cases', `${id}.qrels`), 'latin1'), 'q');
    const run = parseRun(readFileSync(join(FIX, 'cases', `${id}.run`), 'latin1'), 'r');
    const expected = new Map<string, number>();
    for (const line of readFileSync(join(FIX, 'expected', `${id}.aqJ.out`), 'latin1').split('\n')) {
      const f = line.split('\t');
      if (f[0]?.trim() === 'ndcg_cut_10' && f[1] !== 'all') expected.set(f[1]!, Number(f[2]));
    }
    for (const [qid, entries] of run.queries) {
      const judg = qrels.get(qid);
      if (!judg || !expected.has(qid)) continue;
      const got = condensed_ndcg_cut_k(orderRun(entries), judg, 10);
      assert.equal(got.toFixed(4), expected.get(qid)!.toFixed(4), `case ${id} query ${qid}`);
      compared++;
    }
  }
  assert.ok(compared >= 10, `compared ${compared} queries`);
});
