// rankgate trec-eval's command line against trec_eval 10's: long options and their unique prefixes, the -Z file,
// and measure parameters in every form C's atof/atol reads (read as trec_eval does, or refused in one line).
// Inputs are built here; test/metrics/trec-parity.test.ts compares the same forms with trec_eval's own output.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evaluateArgs } from '../../src/cli/trec-eval.ts';
import { UserError } from '../../src/errors.ts';
import { atof } from '../../src/metrics/treceval.ts';

let dir = '';
let qrels = '';
let run = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'rankgate-trec-args-'));
  qrels = join(dir, 'q.qrels');
  run = join(dir, 'r.run');
  writeFileSync(qrels, 'q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 e1 0\nq2 0 e2 1\nq2 0 e3 1\n');
  writeFileSync(run, 'q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 2.0 A\nq1 Q0 d3 3 1.0 A\nq2 Q0 e1 1 5 A\nq2 Q0 e2 2 4 A\nq2 Q0 x9 3 3 A\nq2 Q0 e3 4 2 A\n');
});
after(() => rmSync(dir, { recursive: true, force: true }));

const out = (...args: string[]) => {
  const b = evaluateArgs(args);
  return typeof b === 'string' ? b : b.toString('latin1');
};
const refused = (args: string[], re: RegExp) => {
  assert.throws(() => evaluateArgs(args), (e: unknown) => {
    assert.ok(e instanceof UserError, String(e));
    assert.ok(!e.message.includes('\n'), `one line: ${e.message}`);
    assert.match(e.message, re);
    return true;
  });
};

test('C atof forms: hexadecimal floats, exponents, blanks, trailing garbage, inf and nan', () => {
  const cases: [string, number][] = [
    ['0x1p-1', 0.5], ['0x1.8p-1', 0.75], ['0X.8P+1', 1], ['0xA', 10], ['-0x10', -16], ['0x1p', 1], ['0x', 0], ['0xg', 0],
    ['1e-1', 0.1], [' \t 0.5', 0.5], ['0.5abc', 0.5], ['5.', 5], ['.25e0', 0.25], ['1e', 1], ['+.5', 0.5], ['', 0], ['abc', 0],
    ['0x1fffffffffffffff', 2 ** 61], ['0x1p-1074', 5e-324], ['0x1p1024', Infinity], ['1e400', Infinity], ['-INFINITY', -Infinity],
    ['0x1.00000000000008p0', 1], ['0x1.00000000000018p0', 1 + 2 * 2 ** -52],
  ];
  for (const [s, v] of cases) assert.equal(atof(s), v, `atof(${JSON.stringify(s)})`);
  assert.ok(Number.isNaN(atof('nan')) && Number.isNaN(atof(' -NaN(12)')));
});

test('measure parameters in hex and exponent forms are read as trec_eval reads them, never as 0', () => {
  const hex = out('-m', 'iprec_at_recall.0x1p-1', qrels, run);
  assert.match(hex, /^iprec_at_recall_0\.50\s+all\t/m);
  assert.doesNotMatch(hex, /_0\.00/);
  assert.equal(hex, out('-m', 'iprec_at_recall.0.5', qrels, run));
  assert.equal(out('-m', 'iprec_at_recall. 1e-1', qrels, run), out('-m', 'iprec_at_recall.0.1', qrels, run));
  // a p_double name keeps the text as typed (trec_eval appends the parameter string), the value is atof's
  const setF = out('-m', 'set_F.0x1p-1', qrels, run);
  assert.match(setF, /^set_F_0x1p-1\s+\tall\t/);
  assert.equal(setF.split('\t')[2], out('-m', 'set_F.0.5', qrels, run).split('\t')[2]);
  assert.notEqual(setF.split('\t')[2], out('-m', 'set_F.0', qrels, run).split('\t')[2], 'the fixture tells 0.5 from 0');
  assert.equal(out('-m', 'rbp.p=0x1p-1', qrels, run).split('\t')[2], out('-m', 'rbp.p=0.5', qrels, run).split('\t')[2]);
  assert.equal(out('-m', 'P. 5', qrels, run), out('-m', 'P.5', qrels, run));
});

test('NaN, infinite and past-2^53 parameters are refused in one line naming the parameter', () => {
  refused(['-m', 'iprec_at_recall.nan,0.5', qrels, run], /-m iprec_at_recall\.nan,0\.5: parameter 'nan' reads as NaN/);
  refused(['-m', 'rbp.p=NaN', qrels, run], /parameter 'NaN' reads as NaN/);
  refused(['-m', 'iprec_at_recall.inf', qrels, run], /reads as infinity/);
  refused(['-m', 'utility.-1e400,-1,0,0', qrels, run], /reads as -infinity/);
  refused(['-m', 'P.99999999999999999999', qrels, run], /beyond 2\^53/);
  refused(['-m', 'P.0x10', qrels, run], /cutoffs must be positive/); // atol reads 0x10 as 0, as trec_eval does
});

test('an empty -Z file is refused (trec_eval: Cannot read zscores file); a NaN mean is refused; hex values are read', () => {
  const empty = join(dir, 'empty.z');
  writeFileSync(empty, '');
  refused(['-q', '-Z', empty, '-m', 'P.5', qrels, run], /empty\.z: the z-score file is empty/);
  const nan = join(dir, 'nan.z');
  writeFileSync(nan, 'q1 P_5 0.1 0.2\nq2 P_5 nan 0.5\n');
  refused(['-Z', nan, '-m', 'P.5', qrels, run], /nan\.z:2: mean 'nan' reads as NaN/);
  const hex = join(dir, 'hex.z');
  const dec = join(dir, 'dec.z');
  writeFileSync(hex, 'q1 P_5 0x1p-2 0x1.8p-2\nq2 P_5 0.1 0X.4P+0\n');
  writeFileSync(dec, 'q1 P_5 0.25 0.375\nq2 P_5 0.1 0.25\n');
  assert.equal(out('-q', '-Z', hex, '-m', 'P.5', qrels, run), out('-q', '-Z', dec, '-m', 'P.5', qrels, run));
});

test('long options and their unique prefixes mean what the short options mean', () => {
  const short = out('-q', '-c', '-n', '-J', '-l', '2', '-M', '3', '-m', 'P.5', '-m', 'map', qrels, run);
  assert.ok(short.length > 0);
  for (const args of [
    ['--query_eval_wanted', '--complete_rel_info_wanted', '--nosummary', '--Judged_docs_only', '--level_for_rel', '2', '--Max_retrieved_per_topic=3', '--measure=P.5', '--measure', 'map'],
    ['--query', '--comp', '--nosum', '--Judged', '--l=2', '--Ma', '3', '--meas=P.5', '--m', 'map'],
    ['--q', '--c', '--n', '--J', '--lev', '2', '--M=3', '--measure=P.5', '-mmap'],
  ]) {
    assert.equal(out(...args, qrels, run), short, args.join(' '));
    assert.equal(out(qrels, run, ...args), short, `after the files: ${args.join(' ')}`);
  }
  assert.equal(out('--Rel=qrels', '--Res', 'trec_results', '--Num=10', '--De', '0', '--O', 'x', qrels, run), out(qrels, run));
  assert.match(out('--help'), /^usage: rankgate trec-eval/);
  assert.match(out('--vers'), /trec_eval version 10\.0/);
});

test('ambiguous, unknown, value-less and value-given-to-a-flag long options are refused in one line', () => {
  refused(['--Re', 'qrels', qrels, run], /option '--Re' is ambiguous: it could be --Rel_info_format or --Results_format/);
  refused(['--R=qrels', qrels, run], /ambiguous/);
  refused(['--queries', qrels, run], /unknown option '--queries'/);
  refused(['--nosummary=1', qrels, run], /option '--nosummary' takes no value/);
  refused([qrels, run, '--measure'], /option '--measure' needs a value/);
  refused(['--Query', qrels, run], /unknown option '--Query'/); // case matters, as in getopt_long
});
