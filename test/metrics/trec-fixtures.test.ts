// Agreement of the per-ranking measure API (src/metrics/evaluate.ts, what rankgate compare and the
// assertions call) with trec_eval's own regression fixtures (usnistgov/trec_eval test/, committed
// copies in test/fixtures/trec_eval/upstream): every line we print must appear, with the same value and in the
// same relative order, in trec_eval's output for the same command. Measures trec_eval prints that
// we do not implement (iprec_at_recall, infAP, gm_map, ...) are ignored; each fixture also checks
// that every implemented measure was actually compared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { evaluateRun, formatEvaluation, parseMeasureSpecs, parseQrels, parseRun } from '../../src/metrics/index.ts';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'trec_eval', 'upstream');
const SKIP = existsSync(DIR) ? false : `needs ${DIR}`;

function read(name: string): string {
  return readFileSync(join(DIR, name), 'utf8');
}

function check(opts: { qrels: string; run: string; ref: string; specs: string[]; level?: number; complete?: boolean; expectLines: number }) {
  const ev = evaluateRun(parseQrels(read(opts.qrels), opts.qrels), parseRun(read(opts.run), opts.run), parseMeasureSpecs(opts.specs), {
    relevanceLevel: opts.level ?? 1,
    complete: opts.complete ?? false,
  });
  const mine = formatEvaluation(ev, { perQuery: true }).trimEnd().split('\n');
  const names = new Set(mine.map((l) => l.split('\t')[0]));
  const ref = read(opts.ref)
    .trimEnd()
    .split('\n')
    .filter((l) => names.has(l.split('\t')[0]));
  assert.equal(mine.length, opts.expectLines, 'number of lines we print');
  // Compare line by line for a readable failure, then as a whole (order).
  const refByKey = new Map(ref.map((l) => [l.split('\t').slice(0, 2).join('\t'), l]));
  for (const l of mine) {
    const key = l.split('\t').slice(0, 2).join('\t');
    assert.equal(l, refByKey.get(key), `${opts.ref}: ${key.replace(/\s+/g, ' ')}`);
  }
  assert.deepEqual(mine, ref, `${opts.ref}: same lines in the same order`);
}

// Per query we print 3 counts + map, Rprec, bpref, recip_rank + 9 P + 9 recall + ndcg + 9 ndcg_cut
// + 9 map_cut + 3 success = 47 measures; then runid, num_q and the 47 `all` lines: 3 x 47 + 2 + 47.
const ALL_TREC_LINES = 3 * 47 + 2 + 47;

test('-q -m all_trec qrels.test results.test == out.test.aq', { skip: SKIP }, () => {
  check({ qrels: 'qrels.test', run: 'results.test', ref: 'out.test.aq', specs: ['all_trec'], expectLines: ALL_TREC_LINES });
});

test('-q -c -m all_trec qrels.test results.trunc == out.test.aqc (query 302 missing from the run)', { skip: SKIP }, () => {
  check({ qrels: 'qrels.test', run: 'results.trunc', ref: 'out.test.aqc', specs: ['all_trec'], complete: true, expectLines: ALL_TREC_LINES });
});

test('-q -l2 -m all_trec qrels.rel_level results.test == out.test.aql (graded, negative levels)', { skip: SKIP }, () => {
  check({ qrels: 'qrels.rel_level', run: 'results.test', ref: 'out.test.aql', specs: ['all_trec'], level: 2, expectLines: ALL_TREC_LINES });
});

test('parameterised cutoffs == out.test.meas_params (P.5,7,3 recall.20,2000 ndcg_cut.10,20,23 success.2,5,20)', { skip: SKIP }, () => {
  // trec_eval was run with ndcg_cut.10,20,23.4 (it reads 23.4 as 23 with atol); we take integers.
  check({
    qrels: 'qrels.test',
    run: 'results.test',
    ref: 'out.test.meas_params',
    specs: ['P.5,7,3', 'recall.20,2000', 'ndcg_cut.10,20,23', 'success.2,5,20'],
    expectLines: 4 * 11,
  });
});

test('default measures (no -m) == out.test restricted to what we implement', { skip: SKIP }, () => {
  const ev = evaluateRun(parseQrels(read('qrels.test'), 'qrels.test'), parseRun(read('results.test'), 'results.test'), parseMeasureSpecs([]));
  const mine = formatEvaluation(ev).trimEnd().split('\n');
  const names = new Set(mine.map((l) => l.split('\t')[0]));
  const ref = read('out.test').trimEnd().split('\n').filter((l) => names.has(l.split('\t')[0]));
  assert.equal(mine.length, 2 + 7 + 9);
  assert.deepEqual(mine, ref);
});

test('without -c a query missing from the run is left out and reported', { skip: SKIP }, () => {
  const ev = evaluateRun(parseQrels(read('qrels.test'), 'qrels.test'), parseRun(read('results.trunc'), 'results.trunc'), parseMeasureSpecs(['map']));
  assert.deepEqual(ev.missingFromRun, ['302']);
  assert.deepEqual(
    ev.perQuery.map((q) => q.qid),
    ['301', '303'],
  );
  // the mean is over the two evaluated queries, not three
  assert.equal(ev.all[0], (ev.perQuery[0]!.values[0]! + ev.perQuery[1]!.values[0]!) / 2);
});
