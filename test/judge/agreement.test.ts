/**
 * How far to trust the judge: weighted kappa computed by hand, the `rankgate judge agreement` command against a fake
 * judge whose errors the test controls (right 80% of the time), gate.yaml's judge.min_kappa, and the answer judge's
 * answer_score in the report and the gate.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agreement, confusionMatrix, weightedKappa } from '../../src/metrics/agreement.ts';
import { agreementItems, agreementText } from '../../src/cli/judge.ts';
import { applyGate, loadFloors, parseFloors } from '../../src/gate/floors.ts';
import { buildReport } from '../../src/results/summary.ts';
import { parseResultsObject } from '../../src/results/read.ts';
import { answer } from '../../assertions/judge.ts';
import { rankgate } from '../harness/helpers.ts';
import { searchResultOf, startFakeLlm, type FakeLlm } from '../helpers/fake-llm.ts';

const dir = mkdtempSync(join(tmpdir(), 'rg-agreement-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('weighted kappa (linear) as computed by hand; undefined when nothing can disagree', () => {
  // truths 0,0,0,1,1,1,2,2,2,2; the judge says 1 for one 0 and 1 for one 2, right 8 of 10 times.
  const truth = [0, 0, 0, 1, 1, 1, 2, 2, 2, 2];
  const rated = [0, 1, 0, 1, 1, 1, 2, 1, 2, 2];
  const pairs = truth.map((t, i) => ({ truth: t, rated: rated[i]! }));
  assert.deepEqual(confusionMatrix(pairs, 3), [
    [2, 1, 0],
    [0, 3, 0],
    [0, 1, 3],
  ]);
  // observed weighted disagreement (0.5 + 0.5) / 10 = 0.1; marginals rows .3 .3 .4, columns .2 .5 .3;
  // expected .5(.3*.5) + 1(.3*.3) + .5(.3*.2) + .5(.3*.3) + 1(.4*.2) + .5(.4*.5) = 0.42; kappa = 1 - .1/.42 = 16/21
  const a = agreement(pairs, 3, { seed: 7, resamples: 500 });
  assert.ok(Math.abs(a.kappa! - 16 / 21) < 1e-12, `${a.kappa}`);
  assert.equal(a.accuracy, 0.8);
  assert.ok(a.ci95 && a.ci95[0] <= a.kappa! && a.kappa! <= a.ci95[1], `${a.ci95}`);
  assert.deepEqual(agreement(pairs, 3, { seed: 7, resamples: 500 }).ci95, a.ci95, 'seeded: the same interval on a rerun');
  // perfect agreement, and the degenerate case where both raters used one category throughout
  assert.equal(weightedKappa([[3, 0], [0, 2]]), 1);
  assert.equal(weightedKappa([[5, 0], [0, 0]]), null);
  // unweighted 2x2 is the classic kappa: po .7, pe .5*.6+.5*.4 = .5 -> .4
  assert.ok(Math.abs(weightedKappa([[20, 5], [10, 15]])! - 0.4) < 1e-12);
  assert.throws(() => confusionMatrix([{ truth: 3, rated: 0 }], 3), /out of the scale 0\.\.2/);
});

/** A results file of one column: 10 queries, each with one graded reference returned at rank 1 and one unrelated result;
 * with `offTopic`, an 11th query expecting no results that returned one. */
function resultsDoc(offTopic = true) {
  const grades = [3, 3, 3, 3, 3, 1, 1, 1, 0, 0];
  const rows = grades.map((grade, i) => {
    const id = `q${i}`;
    const golden = {
      id,
      query: `question ${i}`,
      language: 'en',
      category: i < 5 ? 'direct' : 'conceptual',
      expected: [{ chunk_id: `${id}-ref`, grade, relevant: grade >= 2 }, { chunk_id: `${id}-other`, grade: 3, relevant: true }],
      origin: { format: 'yaml' },
    };
    const hits = [
      { rank: 1, chunkId: `${id}-ref`, documentId: `${id}-ref`, score: 1, content: `text of item ${i}`, channels: {} },
      { rank: 2, chunkId: `${id}-x`, documentId: `${id}-x`, score: 0.5, content: `unrelated ${i}`, channels: {} },
    ];
    return {
      promptIdx: 0,
      testIdx: i,
      testCase: { vars: { query: golden.query }, metadata: { golden } },
      response: { output: 'x', metadata: { harness: { ids: hits.map((h) => h.chunkId), hits, routing: null, practice_bridge: false, safety: false, latencyMs: 1 } } },
      success: true,
      namedScores: {},
      provider: { id: 'p', label: 'col' },
    };
  });
  // an off-topic query: its results are known NOT_RELEVANT
  const off = { id: 'off1', query: 'weather in LA', language: 'en', category: 'adversarial', expected: [], expected_routing: 'no_results', origin: { format: 'des058' } };
  const offHits = [{ rank: 1, chunkId: 'z', documentId: 'z', score: 0.1, content: 'off-topic result', channels: {} }];
  if (offTopic) rows.push({
    promptIdx: 0,
    testIdx: 10,
    testCase: { vars: { query: off.query }, metadata: { golden: off as never } },
    response: { output: 'x', metadata: { harness: { ids: ['z'], hits: offHits, routing: null, practice_bridge: false, safety: false, latencyMs: 1 } } },
    success: true,
    namedScores: {},
    provider: { id: 'p', label: 'col' },
  });
  return { evalId: 'e1', results: { timestamp: '2026-11-26T00:00:00Z', prompts: [{ provider: 'col', label: 'col' }], results: rows }, config: { providers: [{ id: 'p', label: 'col' }] } };
}

let fake: FakeLlm;
before(async () => {
  // right 80% of the time: items 1 (HIGH -> PARTIAL) and 8 (NOT_RELEVANT -> PARTIAL) are answered wrong
  const truthOf = (r: string) => {
    const m = /text of item (\d)/.exec(r);
    if (!m) return 'NOT_RELEVANT';
    const i = Number(m[1]);
    if (i === 1 || i === 8) return 'PARTIAL';
    return i < 5 ? 'HIGH' : i < 8 ? 'PARTIAL' : 'NOT_RELEVANT';
  };
  fake = await startFakeLlm((req) => truthOf(searchResultOf(req.text)));
});
after(async () => fake.close());

test('agreement items: graded references that came back, and every result of an off-topic query', () => {
  const items = agreementItems(resultsDoc().results.results, 0);
  assert.equal(items.length, 11);
  assert.deepEqual(items.map((i) => i.truth), [2, 2, 2, 2, 2, 1, 1, 1, 0, 0, 0]);
  assert.equal(items.find((i) => i.queryId === 'q0')!.expected.length, 0, 'the matched reference is not its own context');
});

test('rankgate judge agreement: a fake judge right 80% of the time, kappa as by hand, and the gate trusts it or not', async () => {
  const results = join(dir, 'results.json');
  writeFileSync(results, JSON.stringify(resultsDoc(false)));
  const out = join(dir, 'agreement.json');
  const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, RANKGATE_JUDGE: 'openai:chat:gpt-4.1-mini', PROMPTFOO_CACHE_ENABLED: 'false', PROMPTFOO_CONFIG_DIR: join(dir, 'pf') };
  const r = await rankgate(['judge', 'agreement', results, '--out', out, '--seed', '3', '--cache-dir', join(dir, 'cache')], env);
  assert.equal(r.code, 0, r.stderr);
  // 10 items: truths 2x5, 1x3, 0x2; the judge is wrong on item 1 (2 -> 1) and item 8 (0 -> 1): right 8 of 10 (80%).
  // confusion [[1,1,0],[0,3,0],[0,1,4]]; observed weighted disagreement (0.5 + 0.5) / 10 = 0.1;
  // marginals rows .2 .3 .5, columns .1 .5 .4; expected .5(.2*.5) + 1(.2*.4) + .5(.3*.1) + .5(.3*.4) + 1(.5*.1) + .5(.5*.5)
  // = .05 + .08 + .015 + .06 + .05 + .125 = 0.38; kappa = 1 - .1/.38 = 0.736842
  const hand = 1 - 0.1 / 0.38;
  const doc = JSON.parse(readFileSync(out, 'utf8'));
  assert.ok(Math.abs(doc.overall.kappa - hand) < 1e-12, `${doc.overall.kappa} vs ${hand}`);
  assert.deepEqual(doc.overall.confusion, [
    [1, 1, 0],
    [0, 3, 0],
    [0, 1, 4],
  ]);
  assert.equal(doc.overall.accuracy, 0.8);
  assert.equal(doc.judged, 10);
  // judgements that failed are named as such, never folded into "N of M judged"
  assert.match(agreementText({ ...doc, judged: 8, judge_errors: 2 }).split('\n')[0]!, /against the golden grades: judge: FAILED on 2 of 10 results \(left out\); 8 judged$/);
  assert.match(agreementText(doc).split('\n')[0]!, /against the golden grades: 10 of 10 results judged$/);
  assert.deepEqual(Object.keys(doc.categories), ['conceptual', 'direct']);
  assert.match(r.stdout, new RegExp(`weighted kappa \\(linear\\) ${hand.toFixed(3)} · 95% CI \\[`));
  assert.match(r.stdout, /judge: openai:chat:gpt-4\.1-mini \(relevance-v1\) \(configured \(RANKGATE_JUDGE=openai:chat:gpt-4\.1-mini\)\)/);

  // gate.yaml: judged floors count only above min_kappa; below it, or with no agreement file, exit 2 (not trustworthy)
  const report = buildReport(parseResultsObject(resultsDoc(), results).columns[0]!);
  const gateFile = (min: number, file = out) => {
    const p = join(dir, `gate-${min}.yaml`);
    writeFileSync(p, `metric_family: judged\noverall: { recall_at_3: 0.1 }\njudge: { agreement: ${file}, min_kappa: ${min} }\n`);
    return loadFloors(p);
  };
  const low = applyGate(structuredClone(report), gateFile(0.9)).find((c) => c.metric === 'judge_kappa')!;
  assert.equal(low.passed, false);
  assert.match(low.note!, /weighted kappa 0\.\d{3} .* below judge\.min_kappa 0\.9: the instrument is not trustworthy/);
  assert.equal(applyGate(structuredClone(report), gateFile(0.5)).find((c) => c.metric === 'judge_kappa')!.passed, true);
  const missing = applyGate(structuredClone(report), gateFile(0.5, join(dir, 'nope.json'))).find((c) => c.metric === 'judge_kappa')!;
  assert.match(missing.note!, /cannot read the judge agreement \(ENOENT\)/);
  assert.throws(() => parseFloors({ overall: { recall_at_3: 0.5 }, judge: { agreement: 'a.json', min_kapa: 0.6 } }, 'gate.yaml'), /gate\.yaml: judge: unknown key 'min_kapa'; did you mean 'min_kappa'\?/);

  const bad = await rankgate(['judge', 'agreement', results, '--cache-dir', join(dir, 'cache')], { ...env, RANKGATE_JUDGE: 'openai:caht:gpt-4.1-mini' });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /did you mean 'openai:chat:gpt-4\.1-mini'\?/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
  // --judge is checked as such before the results are read, and --judge wins over RANKGATE_JUDGE (the one judge rule)
  const badFlag = await rankgate(['judge', 'agreement', join(dir, 'no-such-results.json'), '--judge', 'bogus'], env);
  assert.equal(badFlag.code, 2);
  assert.match(badFlag.stderr, /judge mode "bogus" \(--judge\)/);
  const flag = await rankgate(['judge', 'agreement', results, '--seed', '3', '--cache-dir', join(dir, 'cache'), '--judge', 'openai:chat:gpt-4.1-mini'], { ...env, RANKGATE_JUDGE: 'similarity' });
  assert.equal(flag.code, 0, flag.stderr);
  assert.match(flag.stdout, /judge: openai:chat:gpt-4\.1-mini \(relevance-v1\)/);
});

test('answer judge: answer_score per row, in the report overall and per category, and a 1-5 floor', async () => {
  const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${fake.url}/v1`, PROMPTFOO_CACHE_ENABLED: 'false' };
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  fake.reply = (req) => (/Breakfast Club<\/answer>/.test(req.text) ? '5' : '2');
  try {
    const golden = (id: string, short: string) => ({
      id,
      query: 'what film has the song dont you forget about me',
      language: 'en',
      category: 'nq',
      expected: [{ chunk_id: 'nq_1', grade: 1, relevant: true, extra: { short_answer: short } }],
      origin: { format: 'nq-json' },
    });
    const ctx = (g: object, config: Record<string, unknown> = {}) => ({ test: { metadata: { golden: g } }, config: { mode: 'openai:chat:gpt-4.1-mini', cacheDir: join(dir, 'acache'), ...config } });
    const out = (answerText?: string) => ({ ids: [], hits: [], routing: null, practice_bridge: false, safety: false, latencyMs: 1, ...(answerText ? { answer: answerText } : {}) });
    const good = await answer(out('The Breakfast Club'), ctx(golden('a', 'The Breakfast Club')));
    assert.equal(good.namedScores!.answer_score, 5);
    assert.equal(good.namedScores!.n_answer, 1);
    assert.equal(good.namedScores!.answer_score_nq, 5);
    const poor = await answer(out('Pretty in Pink'), ctx(golden('b', 'The Breakfast Club')));
    assert.equal(poor.namedScores!.answer_score, 2);
    const none = await answer(out(), ctx(golden('c', 'The Breakfast Club')));
    assert.equal(none.namedScores, undefined);
    assert.match(none.reason, /returned no answer/);
    // the report and a floor on it (1-5 scale)
    const col = parseResultsObject(
      {
        results: {
          prompts: [{ provider: 'c' }],
          results: [
            { promptIdx: 0, testCase: { metadata: { golden: golden('a', 'x') } }, response: { output: JSON.stringify(out('x')) }, namedScores: good.namedScores, success: true },
            { promptIdx: 0, testCase: { metadata: { golden: golden('b', 'x') } }, response: { output: JSON.stringify(out('y')) }, namedScores: poor.namedScores, success: true },
          ],
        },
      },
      'answers.json',
    ).columns[0]!;
    const report = buildReport(col);
    assert.equal(report.metrics.answer_score, 3.5);
    assert.equal(report.categories.nq!.answer_score, 3.5);
    const floors = parseFloors({ overall: { answer_score: 4.0 } }, 'gate.yaml');
    const check = applyGate(report, floors).find((c) => c.metric === 'answer_score')!;
    assert.deepEqual([check.value, check.passed], [3.5, false]);
    assert.throws(() => parseFloors({ overall: { answer_score: 0.8 } }, 'gate.yaml'), /overall\.answer_score: expected a floor between 1 and 5/);
  } finally {
    for (const [k, v] of Object.entries(saved)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  }
});
