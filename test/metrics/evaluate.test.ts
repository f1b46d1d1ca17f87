import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MeasureSpecError,
  columns,
  evaluateRun,
  formatEvaluation,
  formatFixed4,
  measureColumn,
  parseMeasureSpecs,
  parseQrels,
  parseRun,
  scoreRanking,
} from '../../src/metrics/index.ts';

const names = (specs: string[]) => columns(parseMeasureSpecs(specs)).map((c) => c.name);

test('measure specs: trec_eval syntax, printed names, merging, trec_eval order', () => {
  assert.deepEqual(names(['success.10,1', 'P_10', 'P.5,10', 'map']), ['map', 'P_5', 'P_10', 'success_1', 'success_10']);
  assert.deepEqual(names(['ndcg_cut_10']), ['ndcg_cut_10']);
  assert.deepEqual(names(['mrr_cut', 'judged.3']), ['mrr_cut_10', 'judged_3']);
  assert.equal(names(['all_trec']).length, 47);
  assert.ok(!names(['all_trec']).some((n) => /mrr|judged|exp/.test(n)), 'all_trec holds only measures trec_eval has');
  assert.deepEqual(names([]), ['num_ret', 'num_rel', 'num_rel_ret', 'map', 'Rprec', 'bpref', 'recip_rank', ...[5, 10, 15, 20, 30, 100, 200, 500, 1000].map((k) => `P_${k}`)]);
  assert.throws(() => parseMeasureSpecs(['P.0']), MeasureSpecError);
  assert.throws(() => parseMeasureSpecs(['map.5']), /takes no cutoff/);
  assert.throws(() => parseMeasureSpecs(['ndgc']), /unknown measure 'ndgc'/);
  assert.equal(measureColumn('ndcg_cut_10').k, 10);
  assert.throws(() => measureColumn('P'), /names 9 measures/);
});

test('formatFixed4 rounds like printf %6.4f (exact binary ties to even)', () => {
  assert.equal(formatFixed4(0.03125), '0.0312'); // exact tie, JS toFixed would give 0.0313
  assert.equal(formatFixed4(0.15625), '0.1562');
  assert.equal(formatFixed4(0.09375), '0.0938');
  assert.equal(formatFixed4(-0.03125), '-0.0312');
  assert.equal(formatFixed4(2 / 3), '0.6667');
  assert.equal(formatFixed4(1), '1.0000');
  assert.equal(formatFixed4(-412.66666), '-412.6667');
});

test('evaluateRun policies: no-relevant query counts as 0, -c zero-fills, run-only queries ignored', () => {
  const qrels = parseQrels('a 0 d1 1\nb 0 d1 0\nc 0 d9 1\n', 'q');
  const run = parseRun('a Q0 d1 1 1 r\nb Q0 d1 1 1 r\nz Q0 d1 1 1 r\n', 'r');
  const req = parseMeasureSpecs(['map', 'num_rel']);
  const ev = evaluateRun(qrels, run, req);
  assert.deepEqual(ev.columns.map((c) => c.name), ['num_rel', 'map'], 'trec_eval order, not request order');
  assert.deepEqual(
    ev.perQuery.map((q) => [q.qid, ...q.values]),
    [
      ['a', 1, 1],
      ['b', 0, 0], // no relevant document: counts, scores 0
    ],
  );
  assert.deepEqual(ev.all, [1, 0.5], 'num_rel summed, map averaged over 2 queries');
  assert.deepEqual(ev.missingFromRun, ['c']);
  assert.deepEqual(ev.notInQrels, ['z']);
  const evc = evaluateRun(qrels, run, req, { complete: true });
  assert.deepEqual(evc.perQuery.map((q) => q.qid), ['a', 'b', 'c']);
  assert.deepEqual(evc.all, [2, 1 / 3]);
  assert.equal(formatEvaluation(evc), 'num_rel               \tall\t2\nmap                   \tall\t0.3333\n');
});

test('scoreRanking scores one ranking on several named measures', () => {
  const j = new Map([
    ['a', 2],
    ['b', 0],
    ['c', 1],
  ]);
  const s = scoreRanking(['b', 'a', 'x'], j, ['mrr_cut_10', 'P.1,2', 'recall_2'], { relevanceLevel: 2 });
  assert.deepEqual(s, { P_1: 0, P_2: 0.5, recall_2: 1, mrr_cut_10: 0.5 });
  assert.throws(() => scoreRanking([], j, ['nope']), MeasureSpecError);
});
