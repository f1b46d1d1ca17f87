// The trec-eval and compare commands, run as a user runs them: `node bin/rankgate.js ...`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const FIX = join(ROOT, 'test', 'fixtures', 'trec_eval', 'upstream');
const SKIP_FIX = existsSync(FIX) ? false : `needs ${FIX}`;
let dir = '';

function rankgate(...args: string[]) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), ...args], { cwd: ROOT, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rankgate-metrics-cli-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

// q1: relevant d1 (2), d3 (1); q2: relevant e2 (1). Run A ranks them well, run B badly.
const QRELS = 'q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 e1 0\nq2 0 e2 1\n';
const RUN_A = 'q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq1 Q0 d3 3 1.0 A\nq2 Q0 e2 1 5 A\nq2 Q0 e1 2 4 A\n';
const RUN_B = 'q1 Q0 d2 1 3.0 B\nq1 Q0 d3 2 2.0 B\nq1 Q0 d1 3 1.0 B\nq2 Q0 e1 1 5 B\n';

test('trec-eval prints trec_eval lines: padded name, qid, 4 decimals, integer counts', () => {
  const q = file('qrels', QRELS);
  const a = file('runA', RUN_A);
  const r = rankgate('trec-eval', '-q', '-m', 'P.1', '-m', 'num_rel_ret', '-m', 'recip_rank', q, a);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      'num_rel_ret           \tq1\t2',
      'recip_rank            \tq1\t1.0000',
      'P_1                   \tq1\t1.0000',
      'num_rel_ret           \tq2\t1',
      'recip_rank            \tq2\t1.0000',
      'P_1                   \tq2\t1.0000',
      'num_rel_ret           \tall\t3',
      'recip_rank            \tall\t1.0000',
      'P_1                   \tall\t1.0000',
      '',
    ].join('\n'),
  );
  assert.equal(r.stderr, '');
});

test('trec-eval -c counts a query missing from the run as 0; without -c it is an error, as in trec_eval 10', () => {
  const q = file('qrels', QRELS);
  const b = file('runB1', 'q1 Q0 d2 1 3.0 B\nq1 Q0 d1 2 1.0 B\n');
  const withC = rankgate('trec-eval', '-c', '-m', 'recip_rank', '-m', 'official', q, b);
  assert.equal(withC.code, 0, withC.stderr);
  assert.match(withC.stdout, /^num_q\s+\tall\t2$/m);
  assert.match(withC.stdout, /^recip_rank\s+\tall\t0\.2500$/m); // (1/2 + 0) / 2
  const without = rankgate('trec-eval', '-m', 'recip_rank', q, b);
  assert.equal(without.code, 2);
  assert.equal(without.stdout, '');
  assert.match(without.stderr, /query 'q2' has judgments but no results in .*runB1 .*use -c/);
  assert.equal(without.stderr.trim().split('\n').length, 1);
});

test('trec-eval -l 2 changes binary measures, not ndcg', () => {
  const q = file('qrels', QRELS);
  const a = file('runA', RUN_A);
  const l1 = rankgate('trec-eval', '-q', '-m', 'num_rel', '-m', 'ndcg', q, a).stdout;
  const l2 = rankgate('trec-eval', '-q', '-l', '2', '-m', 'num_rel', '-m', 'ndcg', q, a).stdout;
  assert.match(l1, /^num_rel\s+\tall\t3$/m);
  assert.match(l2, /^num_rel\s+\tall\t1$/m);
  const nd = (s: string) => s.split('\n').filter((l) => l.startsWith('ndcg'));
  assert.deepEqual(nd(l1), nd(l2));
});

test('trec-eval on the trec_eval fixture reproduces out.test.aq byte for byte', { skip: SKIP_FIX }, () => {
  const r = rankgate('trec-eval', '-q', '-m', 'all_trec', join(FIX, 'qrels.test'), join(FIX, 'results.test'));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, readFileSync(join(FIX, 'out.test.aq'), 'utf8'));
});

test('trec-eval: a bad file line exits 2 with file:line and no stack trace', () => {
  const q = file('qrels', QRELS);
  const bad = file('bad.run', 'q1 Q0 d1 1 3.0 A\nq1 Q0 d2 two 2.0x A\n');
  const r = rankgate('trec-eval', q, bad);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '', 'no half-written output');
  assert.equal(
    r.stderr.trim(),
    `rankgate trec-eval: ${bad}:2: field 5 (sim) must be a number (decimal, 1e5, inf; nan and hex are refused), got '2.0x': 'q1 Q0 d2 two 2.0x A'`,
  );
  const badQ = file('bad.qrels', 'q1 0 d1\n');
  const r2 = rankgate('trec-eval', badQ, file('runA', RUN_A));
  assert.equal(r2.code, 2);
  assert.match(r2.stderr, new RegExp(`${badQ.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:1: expected 4 fields`));
  assert.doesNotMatch(r2.stderr, /\n\s+at /);
});

test('trec-eval: usage errors exit 2 (missing file, unknown measure, wrong arguments)', () => {
  const q = file('qrels', QRELS);
  const missing = rankgate('trec-eval', q, join(dir, 'nope.run'));
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read run file '.*nope\.run': no such file/);
  const unknown = rankgate('trec-eval', '-m', 'ndcg_cutt_10', q, file('runA', RUN_A));
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /-m: unknown measure 'ndcg_cutt_10'/);
  assert.equal(rankgate('trec-eval', q).code, 2);
  assert.equal(rankgate('trec-eval', '--help').code, 0);
});

test('compare prints a table and --json the contract fields; A beats B', () => {
  const q = file('qrels', QRELS);
  const a = file('runA', RUN_A);
  const b = file('runB', RUN_B);
  const txt = rankgate('compare', '--qrels', q, '-m', 'ndcg_cut_10', a, b);
  assert.equal(txt.code, 0, txt.stderr);
  assert.match(txt.stdout, /^ndcg_cut_10 over 2 queries$/m);
  // runA: q1 DCG = 2 + 1/log2(4) = 2.5, IDCG = 2 + 1/log2(3) -> 0.9502; q2 = 1 -> mean 0.9751
  assert.match(txt.stdout, /^runA \(baseline\)\s+0\.9751$/m);
  assert.match(txt.stdout, /^runB\s+0\.\d{4}\s+-0\.\d{4}\s+\[/m);
  const js = rankgate('compare', '--json', '--qrels', q, '-m', 'recip_rank', a, b);
  assert.equal(js.code, 0, js.stderr);
  const out = JSON.parse(js.stdout);
  assert.equal(out.measure, 'recip_rank');
  assert.equal(out.baseline, 'runA');
  assert.equal(out.queries, 2);
  const c = out.comparisons[0];
  for (const k of ['run', 'mean', 'baseline_mean', 'diff', 'ci_low', 'ci_high', 'p_ttest', 'p_randomization', 'p_holm', 'wins', 'ties', 'losses']) {
    assert.ok(k in c, `field ${k}`);
  }
  // recip_rank: A = 1, 1 ; B: q1 first relevant d3 at rank 2 -> 1/2, q2 e2 not retrieved -> 0
  assert.equal(c.run, 'runB');
  assert.equal(c.baseline_mean, 1);
  assert.equal(c.mean, 0.25);
  assert.equal(c.diff, -0.75);
  assert.deepEqual([c.wins, c.ties, c.losses], [0, 0, 2]);
  assert.equal(c.p_randomization, 0.5); // d = [-0.5, -1]: |sum| >= 1.5 for 2 of 4 sign vectors
  assert.equal(c.p_holm, 0.5);
});

test('compare Holm-adjusts across several runs and reports errors with exit 2', () => {
  const q = file('qrels', QRELS);
  const a = file('runA', RUN_A);
  const b = file('runB', RUN_B);
  const c = file('runC', RUN_A.replaceAll(' A\n', ' C\n'));
  const res = JSON.parse(rankgate('compare', '--json', '--qrels', q, '-m', 'map', a, b, c).stdout);
  assert.deepEqual(
    res.comparisons.map((x: { run: string }) => x.run),
    ['runB', 'runC'],
  );
  const [pb, pc] = res.comparisons.map((x: { p_randomization: number }) => x.p_randomization);
  assert.equal(pc, 1, 'identical run');
  assert.equal(res.comparisons[0].p_holm, Math.min(1, 2 * pb));
  assert.equal(rankgate('compare', a, b).code, 2, 'missing --qrels');
  const bad = rankgate('compare', '--qrels', q, a, file('bad.run', 'q1 Q0 d1 1 x A\n'));
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /bad\.run:1: field 5 \(sim\) must be a number .*got 'x'/);
  assert.equal(rankgate('compare', '--qrels', q, '-m', 'P', a, b).code, 2, 'P names 9 measures, not one');
});

test('compare reads TREC runs like trec-eval: ASCII-whitespace fields, P_5 shorthand, same value as trec-eval', () => {
  const q = file('qrels', QRELS);
  // U+00A0 is part of the docno (trec_eval splits on ASCII whitespace only): 'd1\u00a01' is not d1
  const nb = file('runNb', 'q1 Q0 d1\u00a01 1 9 r\nq1 Q0 d3 2 8 r\nq2 Q0 e2 1 5 r\n');
  const a = file('runA', RUN_A);
  const js = JSON.parse(rankgate('compare', '--json', '--qrels', q, '-m', 'recip_rank', a, nb).stdout);
  assert.equal(js.comparisons[0].mean, (0.5 + 1) / 2);
  const te = rankgate('trec-eval', '-m', 'recip_rank', q, nb);
  assert.match(te.stdout, /^recip_rank\s+\tall\t0\.7500$/m);
  const last = rankgate('trec-eval', '-m', 'runid', q, file('runTags', 'q1 Q0 d1 1 9 first\nq2 Q0 e2 1 5 last\n'));
  assert.equal(last.stdout, 'runid                 \tall\tlast\n', "runid is the LAST run line's tag");
  const p5 = JSON.parse(rankgate('compare', '--json', '--qrels', q, '-m', 'P_5', a, nb).stdout);
  assert.equal(p5.measure, 'P_5');
});
