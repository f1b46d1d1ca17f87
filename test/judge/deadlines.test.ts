/**
 * The judge's deadlines and cache key: a dead Bedrock endpoint (accepts connections, never answers) ends in judge
 * errors in bounded time (call timeout, then "unreachable" at once), a spent budget makes every remaining
 * judgement a judge error without a call, and the verdict cache never answers for another endpoint, prompt
 * input or rank.
 */
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createJudge, judgeDeadlines, type JudgeOptions } from '../../src/judge/index.ts';
import { createEmbedder } from '../../src/embeddings/index.ts';
import { startDeadBedrock, startFakeBedrock, FAKE_CREDENTIALS, FAKE_REGION, type DeadBedrock, type FakeBedrock } from '../helpers/fake-bedrock.ts';
import { simulatedJudge } from './sim-model.ts';

let fake: FakeBedrock;
let dead: DeadBedrock;
let dir: string;
before(async () => {
  fake = await startFakeBedrock();
  fake.on('*', 'converse', simulatedJudge);
  dead = await startDeadBedrock();
});
after(async () => {
  await fake.close();
  await dead.close();
});
beforeEach(() => {
  fake.clearRequests();
  dir = mkdtempSync(join(tmpdir(), 'rg-judge-dl-'));
});

const opts = (o: Partial<JudgeOptions> = {}): JudgeOptions => ({
  mode: 'bedrock',
  endpoint: fake.url,
  region: FAKE_REGION,
  credentials: FAKE_CREDENTIALS,
  cacheDir: dir,
  retryBaseMs: 5,
  ...o,
});
const input = (i: number, rank = 1) => ({ query: 'how to find inner peace', expected: ['inner peace is found within'], result: `inner peace passage ${i}`, rank });

test('cache key: another endpoint (option or AWS_ENDPOINT_URL_BEDROCK_RUNTIME) means 0 cache hits and the new judge is called', async () => {
  const a = await createJudge(opts());
  for (let i = 0; i < 5; i++) assert.ok((await a.relevance(input(i))).verdict);
  assert.equal(fake.requests.length, 5);
  const again = await createJudge(opts());
  for (let i = 0; i < 5; i++) assert.equal((await again.relevance(input(i))).cached, true);
  assert.equal(again.stats.cacheHits, 5);
  assert.equal(fake.requests.length, 5, 'same endpoint: all cached');

  // the same fake under another name is another endpoint as far as the cache knows
  const other = fake.url.replace('127.0.0.1', 'localhost');
  const b = await createJudge(opts({ endpoint: other }));
  for (let i = 0; i < 5; i++) assert.equal((await b.relevance(input(i))).cached, false);
  assert.equal(b.stats.cacheHits, 0);
  assert.equal(b.stats.calls, 5);
  assert.equal(fake.requests.length, 10, 'the new endpoint was called for every judgement');

  const saved = process.env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME;
  try {
    process.env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME = `${fake.url}/`;
    const c = await createJudge(opts({ endpoint: undefined }));
    await c.relevance(input(0));
    assert.equal(c.stats.cacheHits, 1, 'the env endpoint resolves to the same endpoint as the option (trailing slash ignored)');
    process.env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME = other;
    const d = await createJudge(opts({ endpoint: undefined }));
    await d.relevance(input(0));
    assert.equal(d.stats.cacheHits, 1);
  } finally {
    if (saved === undefined) delete process.env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME;
    else process.env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME = saved;
  }
  rmSync(dir, { recursive: true, force: true });
});

test('cache key: the rank and the expected passages are inputs (they are in the prompt)', async () => {
  const j = await createJudge(opts());
  await j.relevance(input(1, 1));
  await j.relevance(input(1, 2));
  await j.relevance({ ...input(1, 1), expected: ['another expected passage'] });
  assert.equal(j.stats.cacheHits, 0);
  assert.equal(fake.requests.length, 3);
  await j.relevance(input(1, 2));
  assert.equal(j.stats.cacheHits, 1);
  rmSync(dir, { recursive: true, force: true });
});

test('a dead endpoint: the first calls end at the call timeout, then every judgement is an "unreachable" judge error at once', async () => {
  const j = await createJudge(opts({ endpoint: dead.url, timeoutMs: 400, callTimeoutMs: 700, concurrency: 4, unreachableAfter: 3 }));
  const t0 = performance.now();
  const rs = await Promise.all(Array.from({ length: 40 }, (_, i) => j.relevance(input(i))));
  const secs = (performance.now() - t0) / 1000;
  assert.ok(rs.every((r) => r.verdict === null), 'no verdict from a dead judge');
  assert.equal(j.stats.errors, 40);
  assert.match(rs[0]!.error!, /got no answer within 700 ms|failed after/);
  assert.ok(rs.some((r) => /unreachable: \d+ calls in a row got no answer/.test(r.error ?? '')), rs.map((r) => r.error).join('\n'));
  assert.ok(j.stats.skipped >= 30, `skipped ${j.stats.skipped}`);
  // 40 judgements x (3 attempts x 3 tries) would be minutes; bounded by about two call timeouts here
  assert.ok(secs < 5, `took ${secs.toFixed(1)} s`);
  rmSync(dir, { recursive: true, force: true });
});

test('the per-eval budget: once spent, remaining judgements are judge errors without a call', async () => {
  fake.on('*', 'converse', async (req) => ({ ...(await simulatedJudge(req)), delayMs: 150 }));
  try {
    const j = await createJudge(opts({ budgetSeconds: 0.4, concurrency: 1 }));
    const rs = [];
    for (let i = 0; i < 8; i++) rs.push(await j.relevance(input(i)));
    const spent = rs.filter((r) => /judge budget spent: 0\.4 s/.test(r.error ?? ''));
    assert.ok(rs[0]!.verdict, 'the first calls are judged');
    assert.ok(spent.length >= 3, rs.map((r) => r.error ?? r.verdict).join(', '));
    assert.equal(fake.requests.length, 8 - spent.length, 'no call once the budget is spent');
  } finally {
    fake.on('*', 'converse', simulatedJudge);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the budget counts time spent judging, not the eval\'s time between judgements', async () => {
  const j = await createJudge(opts({ budgetSeconds: 0.3, concurrency: 1 }));
  assert.ok((await j.relevance(input(1))).verdict);
  await new Promise((r) => setTimeout(r, 500)); // the eval searches meanwhile
  const second = await j.relevance(input(2));
  assert.ok(second.verdict, second.error);
  assert.equal(j.stats.skipped, 0);
  rmSync(dir, { recursive: true, force: true });
});

test('deadline settings: options, then env, then defaults; bad values are clear errors', () => {
  assert.deepEqual(judgeDeadlines({}), { timeoutMs: 15_000, callTimeoutMs: 30_000, budgetMs: 900_000, unreachableAfter: 2 });
  const saved = { ...process.env };
  try {
    process.env.RANKGATE_JUDGE_TIMEOUT_MS = '1000';
    process.env.RANKGATE_JUDGE_CALL_TIMEOUT_MS = '2500';
    process.env.RANKGATE_JUDGE_BUDGET_S = '30';
    process.env.RANKGATE_JUDGE_UNREACHABLE_AFTER = '0';
    assert.deepEqual(judgeDeadlines({}), { timeoutMs: 1000, callTimeoutMs: 2500, budgetMs: 30_000, unreachableAfter: 0 });
    assert.deepEqual(judgeDeadlines({ timeoutMs: 5, callTimeoutMs: 6, budgetSeconds: 7, unreachableAfter: 8 }), { timeoutMs: 5, callTimeoutMs: 6, budgetMs: 7000, unreachableAfter: 8 });
    process.env.RANKGATE_JUDGE_BUDGET_S = 'soon';
    assert.throws(() => judgeDeadlines({}), /RANKGATE_JUDGE_BUDGET_S="soon": expected a positive number/);
    assert.throws(() => judgeDeadlines({ callTimeoutMs: -1 }), /callTimeoutMs: expected a number >= 1/);
  } finally {
    process.env = saved;
  }
});

test('Bedrock embedders: a dead endpoint fails one call within its call timeout (no 9 x 60 s)', async () => {
  const e = await createEmbedder('titan-v2-256', { endpoint: dead.url, region: FAKE_REGION, credentials: FAKE_CREDENTIALS, timeoutMs: 300, callTimeoutMs: 800, retryBaseMs: 5 });
  const t0 = performance.now();
  await assert.rejects(e.embedQuery('anything'), /got no answer within 800 ms|failed after/);
  assert.ok(performance.now() - t0 < 3000);
  const saved = process.env.RANKGATE_BEDROCK_CALL_TIMEOUT_MS;
  process.env.RANKGATE_BEDROCK_CALL_TIMEOUT_MS = '500';
  try {
    const f = await createEmbedder('cohere-v3-english', { endpoint: dead.url, region: FAKE_REGION, credentials: FAKE_CREDENTIALS, retryBaseMs: 5 });
    const t1 = performance.now();
    await assert.rejects(f.embedQuery('anything'), /got no answer within 500 ms/);
    assert.ok(performance.now() - t1 < 3000, 'the env call timeout applies');
  } finally {
    if (saved === undefined) delete process.env.RANKGATE_BEDROCK_CALL_TIMEOUT_MS;
    else process.env.RANKGATE_BEDROCK_CALL_TIMEOUT_MS = saved;
  }
});
