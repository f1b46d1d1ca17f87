import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { judged, seekerFit, compactness } from '../../assertions/judge.ts';
import { DEFAULT_JUDGE_MODEL } from '../../src/judge/index.ts';
import { startFakeBedrock, converseReply, FAKE_CREDENTIALS, FAKE_REGION, type FakeBedrock } from '../helpers/fake-bedrock.ts';
import { simulatedJudge } from './sim-model.ts';

let fake: FakeBedrock;
let dir: string;
const savedCreds = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
before(async () => {
  fake = await startFakeBedrock();
  fake.on('*', 'converse', simulatedJudge);
  // The assertion config carries no credentials (they come from the standard AWS chain): use env.
  process.env.AWS_ACCESS_KEY_ID = FAKE_CREDENTIALS.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = FAKE_CREDENTIALS.secretAccessKey;
});
after(async () => {
  await fake.close();
  if (savedCreds.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
  else process.env.AWS_ACCESS_KEY_ID = savedCreds.id;
  if (savedCreds.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
  else process.env.AWS_SECRET_ACCESS_KEY = savedCreds.secret;
});
beforeEach(() => {
  fake.clearRequests();
  dir = mkdtempSync(join(tmpdir(), 'rg-judge-a-'));
});

const golden = {
  id: 'c-01',
  query: 'how to find inner peace',
  language: 'en',
  category: 'conceptual',
  expected: [{ passage_substring: 'the lake of calm', grade: 3, relevant: true }],
};
const output = {
  hits: [
    { rank: 1, chunkId: 'a#c300-0', documentId: 'a', score: 0.03, content: 'Taxes are due in April.' },
    { rank: 2, chunkId: 'a#c300-1', documentId: 'a', score: 0.02, content: 'Inner peace is found when the mind is still.' },
    { rank: 3, chunkId: 'b#c300-0', documentId: 'b', score: 0.01, content: 'He rested by the lake of calm.' },
  ],
  routing: { route: 'search', safety: false, reasons: [] },
  latencyMs: 3,
};
const ctx = (config: Record<string, unknown>, g: Record<string, unknown> = golden) => ({
  vars: { query: String(g.query) },
  test: { description: `${g.id}: ${g.query}`, metadata: { golden: g } },
  config,
});
const bedrockConfig = () => ({ mode: 'bedrock', endpoint: fake.url, region: FAKE_REGION, cacheDir: dir, retryBaseMs: 5 });

test('judged: strict credit kept, other results judged; namedScores overall and per category, cost and cache stats', async () => {
  const r = await judged(JSON.stringify(output), ctx(bedrockConfig()));
  assert.equal(r.pass, true);
  const ns = r.namedScores!;
  assert.equal(ns.judged_recall_at_1, 0);
  assert.equal(ns.judged_recall_at_3, 1);
  assert.equal(ns.judged_recall_at_3_conceptual, 1);
  assert.equal(ns.judged_mrr, 0.5);
  assert.equal(ns.judged_mrr_conceptual, 0.5);
  assert.ok(ns.judged_ndcg_at_10! > 0 && ns.judged_ndcg_at_10_conceptual === ns.judged_ndcg_at_10);
  assert.equal(ns.n_judged, 1);
  assert.equal(ns.n_judged_conceptual, 1);
  assert.equal(ns.judge_errors, 0);
  assert.equal(ns.judged_results, 2);
  assert.equal(ns.judge_calls, 2);
  assert.equal(ns.judge_cache_hits, 0);
  assert.ok(ns.judge_input_tokens! > 0 && ns.judge_cost_usd! > 0);
  assert.match(r.reason, /judge: bedrock us\.anthropic\.claude-haiku-4-5-20251001-v1:0 \(relevance-v1\).*verdicts: #1 NOT_RELEVANT, #2 HIGH/);
  const again = await judged(output, ctx(bedrockConfig()));
  assert.equal(again.namedScores!.judge_calls, 0);
  assert.equal(again.namedScores!.judge_cache_hits, 2);
  assert.equal(fake.requests.length, 2);
});

test('judged: a judge error fails the row and is counted (never a pass)', async () => {
  fake.enqueue(DEFAULT_JUDGE_MODEL, 'converse', converseReply('I think it is HIGH'), converseReply('I think it is HIGH'));
  const r = await judged(output, ctx({ ...bedrockConfig(), concurrency: 1 }));
  assert.equal(r.pass, false);
  assert.equal(r.namedScores!.judge_errors, 2);
  assert.equal(r.namedScores!.judge_errors_conceptual, 2);
  assert.equal(r.namedScores!.judged_recall_at_3, 1, 'the strict match at rank 3 still counts');
  assert.equal(r.namedScores!.judged_mrr, 1 / 3);
  assert.match(r.reason, /^JUDGE ERROR x2 \(unparseable judge answer/);
});

test('judge off: the row says "judge: off" and carries no judged scores; similarity keys are prefixed heuristic_', async () => {
  const off = await judged(output, ctx({ mode: 'off' }));
  assert.equal(off.pass, true);
  assert.match(off.reason, /^judge: off/);
  assert.equal(off.namedScores, undefined);
  const sim = await judged(output, ctx({ mode: 'similarity' }));
  assert.ok(Object.keys(sim.namedScores!).length > 0);
  assert.ok(Object.keys(sim.namedScores!).every((k) => k.startsWith('heuristic_')), Object.keys(sim.namedScores!).join());
  assert.match(sim.reason, /HEURISTIC/);
  assert.equal(fake.requests.length, 0);
});

test('seekerFit on Dark Night queries and compactness rubric', async () => {
  const dark = { id: 'dn-01', query: "I can't stop crying", language: 'en', category: 'dark_night', expected: [], retrieval_intent: 'console' };
  fake.enqueue(DEFAULT_JUDGE_MODEL, 'converse', converseReply('DOES_NOT_MEET'), converseReply('MEETS'), converseReply('PARTLY'));
  const r = await seekerFit(output, ctx({ ...bedrockConfig(), concurrency: 1 }, dark));
  assert.equal(r.pass, true);
  assert.deepEqual(r.namedScores, { seeker_fit: 0, seeker_fit_at_3: 1, n_seeker_fit: 1, seeker_fit_errors: 0 });
  const notDark = await seekerFit(output, ctx(bedrockConfig()));
  assert.match(notDark.reason, /not a Dark Night query/);

  fake.clearRequests();
  fake.enqueue(DEFAULT_JUDGE_MODEL, 'converse', converseReply('5'), converseReply('2'), converseReply('2'));
  // failRow: true makes the rubric fail the row below `min`; without it the verdict is a metric (the row's pass is its
  // golden expectation).
  const c = await compactness(output, ctx({ ...bedrockConfig(), concurrency: 1, min: 3.5, failRow: true }));
  assert.equal(c.pass, false);
  assert.equal(c.namedScores!.compactness_sum, 3); // mean of 5, 2, 2
  assert.match(c.reason, /5, 2, 2 · mean 3\.00 \(min 3\.5\)/);
  assert.equal(fake.requests.length, 3);
});

test("promptfoo's own Bedrock grader (bedrock:converse) runs llm-rubric against the fake via promptfoo.evaluate", async () => {
  const { default: promptfoo } = await import('promptfoo');
  const rubricRequests: string[] = [];
  fake.throttle(DEFAULT_JUDGE_MODEL, 'converse', 1);
  fake.on(DEFAULT_JUDGE_MODEL, 'converse', (req) => {
    const text = JSON.stringify(req.body);
    rubricRequests.push(text);
    const consoles = /heard/.test(text);
    return converseReply(JSON.stringify({ reason: consoles ? 'it consoles' : 'it instructs', pass: consoles, score: consoles ? 1 : 0 }));
  });
  try {
    const grader = {
      id: `bedrock:converse:${DEFAULT_JUDGE_MODEL}`,
      config: {
        region: FAKE_REGION,
        endpoint: fake.url,
        accessKeyId: FAKE_CREDENTIALS.accessKeyId,
        secretAccessKey: FAKE_CREDENTIALS.secretAccessKey,
        temperature: 0,
        maxTokens: 256,
      },
    };
    const rubric = 'The passage consoles the seeker rather than instructing them.';
    const summary = await promptfoo.evaluate(
      {
        prompts: ['{{passage}}'],
        providers: ['echo'],
        defaultTest: { options: { provider: grader } },
        tests: [
          { vars: { passage: 'Your sorrow is heard; you are not alone.' }, assert: [{ type: 'llm-rubric', value: rubric }] },
          { vars: { passage: 'Sit upright and breathe in for four counts.' }, assert: [{ type: 'llm-rubric', value: rubric }] },
        ],
      } as never,
      { cache: false, maxConcurrency: 1, showProgressBar: false } as never,
    );
    const evaluated = summary as unknown as { toEvaluateSummary(): Promise<{ results: { success: boolean; vars: Record<string, string> }[] }> };
    const { results } = await evaluated.toEvaluateSummary();
    const byPassage = Object.fromEntries(results.map((r) => [r.vars.passage, r.success]));
    assert.equal(byPassage['Your sorrow is heard; you are not alone.'], true);
    assert.equal(byPassage['Sit upright and breathe in for four counts.'], false);
    const converse = fake.requestsFor(DEFAULT_JUDGE_MODEL, 'converse');
    assert.equal(converse[0]!.status, 429, 'first grader call throttled, retried by the SDK');
    assert.equal(rubricRequests.length, 2);
    assert.ok(rubricRequests.every((t) => t.includes('consoles the seeker')), 'the rubric reaches the grader');
    const last = converse.at(-1)!;
    assert.equal(last.path, '/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse');
    assert.deepEqual(last.body.inferenceConfig, { maxTokens: 256, temperature: 0 });
    assert.match(String(last.headers.authorization), /Credential=AKIDFAKEFAKEFAKE\/\d{8}\/us-east-1\/bedrock\//);
  } finally {
    fake.off(DEFAULT_JUDGE_MODEL, 'converse');
  }
});

test("the gate hook's first lines: one per kind of judge, the answer judge with its own prompt (never 'judge: off' while it runs)", async () => {
  const { beforeAll } = await import('../../assertions/gate.ts');
  const saved = process.env.RANKGATE_JUDGE;
  const savedKeys = { OPENAI_API_KEY: process.env.OPENAI_API_KEY, OPENAI_BASE_URL: process.env.OPENAI_BASE_URL };
  delete process.env.RANKGATE_JUDGE;
  // the answer judge must be able to run (beforeAll refuses one without a key: src/judge/setup.ts); nothing listens here
  Object.assign(process.env, { OPENAI_API_KEY: 'dummy', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => (written.push(String(chunk)), true)) as typeof process.stderr.write;
  try {
    await beforeAll({
      suite: {
        tests: [],
        defaultTest: {
          assert: [
            { type: 'javascript', value: 'file://assertions/judge.ts:judged', config: { mode: 'off' } },
            { type: 'javascript', value: 'file://assertions/judge.ts:answer', config: { mode: 'openai:chat:M' } },
          ],
        },
      },
    });
  } finally {
    process.stderr.write = write;
    if (saved === undefined) delete process.env.RANKGATE_JUDGE;
    else process.env.RANKGATE_JUDGE = saved;
    for (const [k, v] of Object.entries(savedKeys)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const lines = written.join('').split('\n').filter((l) => l.startsWith('rankgate: '));
  assert.match(lines.find((l) => l.startsWith('rankgate: judge:')) ?? '', /^rankgate: judge: off \(configured \(.*config\.mode=off\)\)$/);
  assert.match(lines.find((l) => l.startsWith('rankgate: answer judge:')) ?? '', /^rankgate: answer judge: openai:chat:M \(answer-v1\) \(configured \(.*config\.mode=openai:chat:M\)\)$/);
});

test("a judge answer quoting an API key of the environment: the key is redacted in what the assertion returns (the results)", async () => {
  const key = 'sk-judge-QUOTED-0123456789';
  process.env.RANKGATE_TEST_JUDGE_API_KEY = key;
  fake.on('*', 'converse', () => converseReply(`I will not grade this. By the way my key is ${key}.`));
  try {
    const r = await judged(JSON.stringify(output), ctx(bedrockConfig()));
    const text = JSON.stringify(r);
    assert.ok(!text.includes(key), text.slice(0, 2000));
    assert.match(text, /my key is \*\*\*/, 'the answer is in the result, redacted');
  } finally {
    delete process.env.RANKGATE_TEST_JUDGE_API_KEY;
    fake.on('*', 'converse', simulatedJudge);
  }
});
