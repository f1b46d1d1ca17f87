// Parity with trec_eval 10 on seeded random cases (test/fixtures/trec_eval/generate.ts) and on
// trec_eval's own regression fixtures: every printed line — name, qid and value — compared as TEXT.
// The expected outputs were produced by trec_eval built from usnistgov/trec_eval (see the README there).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { evaluateArgs } from '../../src/cli/trec-eval.ts';
import { UserError } from '../../src/errors.ts';
import { CLI_CASES, CLI_REFUSED, FLAG_SETS, cliArgs } from '../fixtures/trec_eval/generate.ts';

const FIX = join(import.meta.dirname, '..', 'fixtures', 'trec_eval');

function rankgate(args: string[]): { out: string; error?: string } {
  try {
    const b = evaluateArgs(args);
    return { out: typeof b === 'string' ? b : b.toString('latin1') };
  } catch (e) {
    if (e instanceof UserError) return { out: '', error: e.message };
    throw e;
  }
}

/** Compare line by line and value by value; returns [values compared, values equal, first mismatch]. */
function compare(expected: string, actual: string): [number, number, string] {
  const el = expected.split('\n');
  const al = actual.split('\n');
  let n = 0;
  let eq = 0;
  let first = '';
  for (let i = 0; i < Math.max(el.length, al.length); i++) {
    if (el[i] === '' && al[i] === '' ) continue;
    n++;
    if (el[i] === al[i]) eq++;
    else if (!first) first = `line ${i + 1}: expected ${JSON.stringify(el[i])}, got ${JSON.stringify(al[i])}`;
  }
  return [n, eq, first];
}

let compared = 0;
let equal = 0;

/**
 * rankgate's answer against trec_eval's stored one: the same text line by line, or, where trec_eval refused
 * (`#exit N`) or rankgate refuses by design (`refusal`: NaN/infinite parameters), a one-line error.
 */
function expectSame(expected: string, r: { out: string; error?: string }, refusal?: RegExp): void {
  if (expected.startsWith('#exit ') || refusal) {
    assert.ok(r.error, `${refusal ? 'rankgate refuses this by design' : `trec_eval refused this input (${expected.trim()})`}; rankgate printed ${r.out.length} bytes instead of an error`);
    assert.ok(!r.error.includes('\n'), `one-line error: ${r.error}`);
    if (refusal) assert.match(r.error, refusal);
    return;
  }
  assert.equal(r.error, undefined);
  const [n, eq, first] = compare(expected, r.out);
  compared += n;
  equal += eq;
  assert.equal(eq, n, first);
}

const expectedDir = join(FIX, 'expected');
for (const f of readdirSync(expectedDir).sort()) {
  const [id, fid] = f.replace(/\.out$/, '').split('.') as [string, string];
  const flags = FLAG_SETS[fid];
  if (!flags) continue;
  test(`case ${id} ${flags.join(' ')}: same text as trec_eval`, () => {
    const expected = readFileSync(join(expectedDir, f), 'latin1');
    expectSame(expected, rankgate([...flags, join(FIX, 'cases', `${id}.qrels`), join(FIX, 'cases', `${id}.run`)]));
  });
}

// trec_eval's own `make quicktest` fixtures (copies in test/fixtures/trec_eval/upstream)
const UP = join(FIX, 'upstream');
const QUICKTEST: [string, string[]][] = [
  ['out.test', ['qrels.test', 'results.test']],
  ['out.test.aq', ['-m', 'all_trec', '-q', 'qrels.test', 'results.test']],
  ['out.test.aqc', ['-m', 'all_trec', '-q', '-c', 'qrels.test', 'results.trunc']],
  ['out.test.aqcM', ['-m', 'all_trec', '-q', '-c', '-M100', 'qrels.test', 'results.trunc']],
  ['out.test.aql', ['-m', 'all_trec', '-mrelstring.20', '-q', '-l2', 'qrels.rel_level', 'results.test']],
  ['out.test.aqZ', ['-q', '-m', 'all_trec', '-Z', 'zscores_file', 'qrels.test', 'results.test']],
  ['out.test.aqcZ', ['-q', '-c', '-m', 'all_trec', '-m', 'relstring.5', '-m', 'gm_bpref', '-Z', 'zscores_file', 'qrels.test', 'results.trunc']],
  ['out.test.aqD302', ['-q', '-D', '0.302', '-m', 'all_trec', 'qrels.test', 'results.test']],
  ['out.test.qcD302', ['-q', '-c', '-D', '0.302', '-m', 'official', '-m', 'gm_bpref', 'qrels.test', 'results.trunc']],
  [
    'out.test.meas_params',
    ['-q', '-miprec_at_recall..10,.20,.25,.75,.50', '-m', 'P.5,7,3', '-m', 'recall.20,2000', '-m', 'Rprec_mult.5.0,0.2,0.35', '-mutility.2,-1,0,0',
      '-m', '11pt_avg..25,.5,.75', '-mndcg.1=3,2=9,4=4.5', '-mndcg_cut.10,20,23.4', '-msuccess.2,5,20', 'qrels.test', 'results.test'],
  ],
];
for (const [out, args] of QUICKTEST) {
  test(`trec_eval quicktest ${out}`, () => {
    expectSame(readFileSync(join(UP, out), 'latin1'), rankgate(args.map((a) => (/^(qrels|results)\.|^zscores_file$/.test(a) ? join(UP, a) : a))));
  });
}

// command lines: long options and prefixes, -Z files, measure parameters in C's atof forms (generate.ts CLI_CASES)
for (const name of Object.keys(CLI_CASES)) {
  test(`trec_eval command line ${name}: ${CLI_CASES[name]!.join(' ')}`, () => {
    const expected = readFileSync(join(expectedDir, 'cli', `${name}.out`), 'latin1');
    expectSame(expected, rankgate(cliArgs(name, FIX)), CLI_REFUSED.has(name) ? /reads as (NaN|infinity|-infinity)|beyond 2\^53/ : undefined);
  });
}

test('agreement count (printed for the report)', () => {
  console.log(`trec_eval parity: ${equal} of ${compared} printed lines equal as text`);
  assert.ok(compared > 10000, `compared only ${compared} lines`);
  assert.equal(equal, compared);
});

test('a run streamed in small chunks through one reused buffer gives the same output (chunk boundaries, CRLF)', async () => {
  const { Qrels, RunReader } = await import('../../src/metrics/trecfast.ts');
  const { selectMeasures, trecEval } = await import('../../src/metrics/treceval.ts');
  for (const id of ['03', '07', '12']) {
    const qrels = Qrels.parse(readFileSync(join(FIX, 'cases', `${id}.qrels`)), 'q');
    const runBytes = readFileSync(join(FIX, 'cases', `${id}.run`));
    const sel = selectMeasures(['all_trec']);
    const eval1 = (chunk: number) => {
      const rd = new RunReader(qrels, { fileName: 'r' });
      const buf = Buffer.alloc(chunk);
      for (let i = 0; i < runBytes.length; i += chunk) {
        const n = runBytes.copy(buf, 0, i, Math.min(runBytes.length, i + chunk));
        rd.push(buf.subarray(0, n));
      }
      rd.end();
      let out = '';
      trecEval(qrels, rd, sel, { runFileName: 'r', perQuery: true, complete: true }, (s) => (out += s));
      return out;
    };
    const whole = eval1(runBytes.length);
    for (const c of [1, 7, 64, 1000]) assert.equal(eval1(c), whole, `case ${id}, chunks of ${c} bytes`);
    assert.equal(whole, readFileSync(join(FIX, 'expected', `${id}.aqc.out`), 'latin1'));
  }
});

test('rankgate compare and the per-ranking API score like trec_eval -c, query by query', async () => {
  const { Qrels, RunReader } = await import('../../src/metrics/trecfast.ts');
  const { perQueryValues, fmt4 } = await import('../../src/metrics/treceval.ts');
  const { parseQrels, parseRun, orderRun, ndcg_cut_k, map, P_k } = await import('../../src/metrics/index.ts');
  let n = 0;
  const ok = readdirSync(expectedDir)
    .filter((f) => f.endsWith('.aqc.out') && !readFileSync(join(expectedDir, f), 'latin1').startsWith('#exit'))
    .map((f) => f.slice(0, 2))
    .slice(0, 4);
  for (const id of ok) {
    const qb = readFileSync(join(FIX, 'cases', `${id}.qrels`));
    const rb = readFileSync(join(FIX, 'cases', `${id}.run`));
    const qrels = Qrels.parse(qb, 'q');
    const rd = new RunReader(qrels, { fileName: 'r' });
    rd.push(rb);
    rd.end();
    const expected = readFileSync(join(FIX, 'expected', `${id}.aqc.out`), 'latin1').split('\n');
    const ref = (name: string, qid: string) => expected.find((l) => l.startsWith(name.padEnd(22) + '\t' + qid + '\t'))?.split('\t')[2];
    // the string API (assertions) on the same files; ids are latin1 like the byte reader's
    const sq = parseQrels(qb.toString('latin1'), 'q');
    const sr = parseRun(rb.toString('latin1'), 'r');
    for (const [spec, name, fn, k] of [
      ['ndcg_cut.10', 'ndcg_cut_10', ndcg_cut_k, 10],
      ['map', 'map', map, undefined],
      ['P_5', 'P_5', P_k, 5],
    ] as const) {
      const r = perQueryValues(qrels, rd, spec, { runFileName: 'r' });
      assert.equal(r.name, name);
      for (const [qid, v] of r.values) {
        assert.equal(fmt4(v), ref(name, qid), `${id} ${name} ${qid} (compare)`);
        const entries = sr.queries.get(qid);
        const api = fn(entries ? orderRun(entries) : [], sq.get(qid)!, k);
        assert.equal(fmt4(api), ref(name, qid), `${id} ${name} ${qid} (per-ranking API)`);
        n++;
      }
    }
  }
  assert.ok(n > 30);
});
