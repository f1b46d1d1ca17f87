import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUserError } from '../../src/errors.ts';
import { formatQrels, formatRun, orderRun, parseQrels, parseRun, sortedQueryIds } from '../../src/metrics/index.ts';

function userError(fn: () => unknown, re: RegExp) {
  assert.throws(fn, (e: unknown) => isUserError(e) && re.test((e as Error).message));
}

test('parseQrels reads `qid iter docno rel`, skipping blank and # lines', () => {
  const q = parseQrels('# comment\n1 0 d1 2\n\n1 0 d2 0\n2 0 d1 -1\n', 'q.txt');
  assert.deepEqual([...q.keys()], ['1', '2']);
  assert.deepEqual([...q.get('1')!], [
    ['d1', 2],
    ['d2', 0],
  ]);
  assert.equal(q.get('2')!.get('d1'), -1);
});

test('a bad qrels line names the file, line and field', () => {
  userError(() => parseQrels('1 0 d1 1\n1 0 d2\n', 'qrels.txt'), /^qrels\.txt:2: expected 4 fields/);
  userError(() => parseQrels('1 0 d1 high\n', 'qrels.txt'), /^qrels\.txt:1: field 4 \(rel\) must be an integer grade .*got 'high'/);
  // trec_eval reads a decimal grade with atol: 1.5 -> 1; U+00A0 is not a field separator
  assert.equal(parseQrels('1 0 d1 1.5\n', 'q').get('1')!.get('d1'), 1);
  userError(() => parseQrels('1 0\u00a0d1 1\n', 'qrels.txt'), /^qrels\.txt:1: expected 4 fields/);
  userError(() => parseQrels('1 0 d1 1\n1 0 d1 0\n', 'qrels.txt'), /^qrels\.txt:2: document 'd1' is judged twice for query '1' \(first at line 1\)/);
});

test('parseRun reads six fields, ignores trailing junk, keeps the LAST tag as runid (trec_eval)', () => {
  const r = parseRun('q1 Q0 d1 1 2.5 tagA extra words\nq1 Q0 d2 2 -1e-3 tagA\nq2 Q0 d9 1 7 tagB\n', 'run.txt');
  assert.equal(r.runid, 'tagB');
  assert.deepEqual(
    r.queries.get('q1')!.map((e) => [e.docno, e.rank, e.score, e.line]),
    [
      ['d1', 1, 2.5, 1],
      ['d2', 2, -0.001, 2],
    ],
  );
  assert.equal(r.queries.get('q2')![0]!.tag, 'tagB');
});

test('a bad run line names the file, line and field', () => {
  userError(() => parseRun('q1 Q0 d1 1 2.5\n', 'run.txt'), /^run\.txt:1: expected 6 fields/);
  userError(() => parseRun('q1 Q0 d1 1 NaN t\n', 'run.txt'), /^run\.txt:1: field 5 \(sim\) must be a number .*got 'NaN'/);
  userError(() => parseRun('q1 Q0 d1 1 2.5x t\n', 'run.txt'), /^run\.txt:1: field 5 \(sim\) must be a number .*got '2\.5x'/);
  // accepted as trec_eval does: rank column `1.0` or `-`, scores inf / 1e400
  const ok = parseRun('q1 Q0 d1 1.0 inf t\nq1 Q0 d2 - 1e400 t\nq1 Q0 d3 3 -INF t\n', 'run.txt').queries.get('q1')!;
  assert.deepEqual(ok.map((e) => e.score), [Infinity, Infinity, -Infinity]);
  // U+00A0 is part of a field, so this line has 5 fields
  userError(() => parseRun('q1 Q0 d1\u00a01 1 2.5\n', 'run.txt'), /^run\.txt:1: expected 6 fields/);
});

test('trec_eval ordering: score descending, ties by docno descending, rank column ignored', () => {
  const r = parseRun(
    ['q Q0 d1 1 1.0 t', 'q Q0 d3 2 1.0 t', 'q Q0 d2 3 2.0 t', 'q Q0 d10 4 1.0 t', 'q Q0 d3 5 0.5 t'].join('\n'),
    'run.txt',
  );
  const entries = r.queries.get('q')!;
  // ties at 1.0 sorted by docno descending in strcmp order: d3 > d10 > d1; duplicate d3 dropped
  assert.deepEqual(orderRun(entries), ['d2', 'd3', 'd10', 'd1']);
  assert.deepEqual(orderRun(entries, 'rank'), ['d1', 'd3', 'd2', 'd10']);
  assert.deepEqual(orderRun(entries, 'file'), ['d1', 'd3', 'd2', 'd10']);
});

test('query ids sort like strcmp (byte order), not numerically', () => {
  assert.deepEqual(sortedQueryIds(['10', '9', '100', 'a', 'B']), ['10', '100', '9', 'B', 'a']);
});

test('formatQrels and formatRun write files that parse back to the same data', () => {
  const qrels = new Map([
    ['q2', new Map([['d1', 1]])],
    [
      'q1',
      new Map([
        ['d2', 0],
        ['d1', 3],
      ]),
    ],
  ]);
  const text = formatQrels(qrels);
  assert.equal(text, 'q1 0 d1 3\nq1 0 d2 0\nq2 0 d1 1\n');
  assert.deepEqual(parseQrels(text, 'x'), new Map([
    ['q1', new Map([['d1', 3], ['d2', 0]])],
    ['q2', new Map([['d1', 1]])],
  ]));

  // No scores: n - rank + 1 is written, so trec_eval's score order reproduces the given order even
  // where docno order would disagree.
  const run = formatRun(new Map([['q1', [{ id: 'a' }, { id: 'z' }, { id: 'a' }, { id: 'm' }]]]), 'mine');
  assert.equal(run, 'q1 Q0 a 1 3 mine\nq1 Q0 z 2 2 mine\nq1 Q0 m 3 1 mine\n');
  assert.deepEqual(orderRun(parseRun(run, 'x').queries.get('q1')!), ['a', 'z', 'm']);
  assert.throws(() => formatRun(new Map([['q 1', [{ id: 'a' }]]]), 't'), /whitespace/);
});
