/**
 * The rerankers (src/rerank) against recording fakes of the vendors' documented shapes on 127.0.0.1
 * (test/helpers/fake-rerank-apis.ts, and the Bedrock fake through the real AWS SDK): ids, request shapes, scores in
 * input order, batching within the documented limits, 429 + Retry-After, usage and cost, every malformed answer
 * refused in one line, a missing key, and the score cache (a re-run sends nothing).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReranker, parseRerankerId, rerankerLabel, RerankCache, RerankerCallError, scorePassages } from '../../src/rerank/index.ts';
import { fakeRerankScore, startFakeRerankApi, type FakeRerankApi } from '../helpers/fake-rerank-apis.ts';
import { FAKE_CREDENTIALS, FAKE_REGION, startFakeBedrock, type FakeBedrock } from '../helpers/fake-bedrock.ts';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.ts';
import { parseGrade } from '../../src/rerank/llm.ts';

const PASSAGES = [
  'The lake was calm at dawn and the water held the sky.',
  'Stone walls stand for centuries without mortar.',
  'A calm lake at dawn: the water is still, the sky in it.',
  'Bread rises when the yeast is warm.',
];
const QUERY = 'calm lake water at dawn';
const expected = PASSAGES.map((p) => fakeRerankScore(QUERY, p));

describe('reranker ids', () => {
  test('families in promptfoo style, canonical ids and labels', () => {
    assert.equal(parseRerankerId('cohere:rerank:rerank-v3.5').family, 'cohere');
    assert.equal(parseRerankerId(' voyage:rerank:rerank-2.5 ').id, 'voyage:rerank:rerank-2.5');
    assert.equal(parseRerankerId('vllm:rerank:BAAI/bge-reranker-v2-m3').family, 'openai');
    assert.equal(parseRerankerId('infinity:rerank:mixedbread-ai/mxbai-rerank-large-v1').info.path, '/rerank');
    assert.equal(parseRerankerId('tei:rerank').id, 'tei:rerank');
    assert.equal(parseRerankerId('tei:rerank:BAAI/bge-reranker-large').model, 'BAAI/bge-reranker-large');
    assert.equal(parseRerankerId('bedrock:rerank:amazon.rerank-v1:0').model, 'amazon.rerank-v1:0');
    assert.equal(rerankerLabel('cohere:rerank:rerank-v3.5'), 'rerank-v3.5');
    assert.equal(rerankerLabel('vllm:rerank:BAAI/bge-reranker-v2-m3'), 'bge-reranker-v2-m3');
    assert.equal(rerankerLabel('bedrock:rerank:cohere.rerank-v3-5:0'), 'cohere.rerank-v3-5');
  });

  test('an unknown id is one line naming what is expected (did you mean)', () => {
    assert.throws(() => parseRerankerId('cohere:rerank:'), /cohere:rerank: needs a model name/);
    assert.throws(() => parseRerankerId('cohere:rernk:rerank-v3.5'), /unknown reranker "cohere:rernk:rerank-v3.5": no such reranker family; did you mean "cohere:rerank:rerank-v3.5"\?/);
    assert.throws(() => parseRerankerId('bedrock:rerank:cohere.rerank-v9'), /Bedrock rerank models: cohere.rerank-v3-5:0, amazon.rerank-v1:0/);
    assert.throws(() => parseRerankerId(''), /a reranker id is a non-empty string/);
    assert.throws(() => parseRerankerId('tei:rerankX'), /tei:rerank takes an optional :MODEL label/);
  });
});

describe('HTTP rerankers', () => {
  let fake: FakeRerankApi;
  let dir: string;
  before(async () => {
    fake = await startFakeRerankApi();
    dir = mkdtempSync(join(tmpdir(), 'rankgate-rerank-'));
  });
  after(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = (): NodeJS.ProcessEnv => ({
    COHERE_BASE_URL: fake.url,
    COHERE_API_KEY: 'co-secret-key',
    VOYAGE_API_BASE_URL: `${fake.url}/v1`,
    VOYAGE_API_KEY: 'voy-secret-key',
    JINA_BASE_URL: `${fake.url}/v1`,
    JINA_API_KEY: 'jina-secret-key',
    VLLM_BASE_URL: `${fake.url}/v1`,
    INFINITY_BASE_URL: fake.url,
    TEI_BASE_URL: fake.url,
  });

  for (const [id, path] of [
    ['cohere:rerank:rerank-v3.5', '/v2/rerank'],
    ['voyage:rerank:rerank-2.5', '/v1/rerank'],
    ['jina:rerank:jina-reranker-v2-base-multilingual', '/v1/rerank'],
    ['vllm:rerank:BAAI/bge-reranker-v2-m3', '/v1/rerank'],
    ['infinity:rerank:mixedbread-ai/mxbai-rerank-large-v1', '/rerank'],
    ['tei:rerank:BAAI/bge-reranker-large', '/rerank'],
  ] as const) {
    test(`${id}: the documented request, scores back in input order, usage`, async () => {
      fake.requests.length = 0;
      const r = createReranker(id, { env: env() });
      const a = await r.score(QUERY, PASSAGES);
      assert.deepEqual(a.scores, expected, 'one score per passage, in the order sent (the API answers sorted by score)');
      assert.equal(fake.requests.length, 1);
      const req = fake.requests[0]!;
      assert.equal(req.path, path);
      assert.equal(req.body.query, QUERY);
      assert.deepEqual(req.body.documents ?? req.body.texts, PASSAGES);
      if (id.startsWith('tei:')) assert.equal(req.body.model, undefined, 'TEI serves one model: no model field');
      else assert.equal(req.body.model, parseRerankerId(id).model);
      if (id.startsWith('voyage:')) assert.equal(req.body.truncation, true);
      if (id.startsWith('cohere:')) {
        assert.equal(req.body.top_n, PASSAGES.length);
        assert.equal(req.headers.authorization, 'Bearer co-secret-key');
        assert.equal(a.usage.searchUnits, 1);
        assert.equal(a.usage.costUsd, 0.002, 'Cohere: $2 per 1,000 search units');
      }
      if (id.startsWith('voyage:')) assert.ok(a.usage.tokens! > 0 && a.usage.costUsd! > 0);
      assert.equal(a.usage.requests, 1);
      assert.equal(a.usage.documents, PASSAGES.length);
    });
  }

  test('batches within the documented limit (TEI: 32 a request), scores still in input order', async () => {
    fake.requests.length = 0;
    const many = Array.from({ length: 70 }, (_, i) => `passage ${i} ${i % 7 === 0 ? 'calm lake water' : 'bread'}`);
    const a = await createReranker('tei:rerank', { env: env() }).score(QUERY, many);
    assert.deepEqual(fake.requests.map((r) => r.body.texts.length), [32, 32, 6]);
    assert.deepEqual(a.scores, many.map((p) => fakeRerankScore(QUERY, p)));
    assert.equal(a.usage.requests, 3);
  });

  test('a 429 with Retry-After is waited out and retried; a 500 too', async () => {
    fake.requests.length = 0;
    fake.enqueue({ status: 429, headers: { 'retry-after': '0.05' }, body: { message: 'slow down' } }, { status: 503, body: { message: 'busy' } });
    const a = await createReranker('cohere:rerank:rerank-v3.5', { env: env(), retryBaseMs: 5 }).score(QUERY, PASSAGES);
    assert.deepEqual(a.scores, expected);
    assert.equal(fake.requests.length, 3);
  });

  test('instructions go before the query; maxTokensPerDoc is Cohere max_tokens_per_doc, a cut elsewhere', async () => {
    fake.requests.length = 0;
    await createReranker('cohere:rerank:rerank-v3.5', { env: env(), instructions: 'Prefer passages about water.', maxTokensPerDoc: 512 }).score(QUERY, PASSAGES);
    assert.equal(fake.requests[0]!.body.query, `Prefer passages about water.\n\n${QUERY}`);
    assert.equal(fake.requests[0]!.body.max_tokens_per_doc, 512);
    fake.requests.length = 0;
    await createReranker('tei:rerank', { env: env(), maxTokensPerDoc: 3 }).score(QUERY, PASSAGES);
    assert.ok(fake.requests[0]!.body.texts.every((t: string, i: number) => t.length < PASSAGES[i]!.length), 'each passage cut to 3 tokens');
  });

  const corrupt: [string, (a: any) => unknown, RegExp][] = [
    ['fewer scores than passages', (a) => ({ ...a, results: a.results.slice(1) }), /malformed answer: 3 scores for 4 passages/],
    ['a NaN score', (a) => ({ ...a, results: a.results.map((r: any, i: number) => (i === 0 ? { ...r, relevance_score: 'NaN' } : r)) }), /results"\[0\]\.relevance_score is "NaN", expected a finite number/],
    ['Infinity (as JSON 1e999)', (a) => JSON.stringify(a).replace(/"relevance_score":[^,}]+/, '"relevance_score":1e999'), /relevance_score is null, expected a finite number/],
    ['a repeated index', (a) => ({ ...a, results: a.results.map((r: any, i: number) => (i === 1 ? { ...r, index: a.results[0].index } : r)) }), /results"\[1\]\.index \d is repeated/],
    ['an index out of range', (a) => ({ ...a, results: a.results.map((r: any, i: number) => (i === 2 ? { ...r, index: 9 } : r)) }), /results"\[2\]\.index 9 is out of range \(0\.\.3\)/],
    ['a missing index', (a) => ({ ...a, results: a.results.map((r: any, i: number) => (i === 0 ? { relevance_score: r.relevance_score } : r)) }), /results"\[0\]\.index is missing, expected an integer/],
    ['no results list', () => ({ data: [] }), /malformed answer: no "results" list/],
    ['not JSON', () => 'oops<html>', /not JSON/],
  ];
  for (const [what, fn, re] of corrupt) {
    test(`a wrong answer is refused in one line, never a ranking: ${what}`, async () => {
      fake.transform = (a) => fn(a);
      try {
        await assert.rejects(createReranker('cohere:rerank:rerank-v3.5', { env: env() }).score(QUERY, PASSAGES), (e: Error) => {
          assert.ok(e instanceof RerankerCallError, String(e));
          assert.match(e.message, re);
          assert.match(e.message, /^cohere:rerank:rerank-v3\.5 at http:\/\/127\.0\.0\.1:\d+\/v2\/rerank: /);
          assert.ok(!e.message.includes('\n'));
          return true;
        });
      } finally {
        fake.transform = undefined;
      }
    });
  }

  test('M1: an answer over the cap (64 KB + 1 KB a passage) is given up while streaming, never read whole', async () => {
    const huge = JSON.stringify({ results: [], pad: 'x'.repeat(8 * 1024 * 1024) });
    fake.enqueue({ body: huge });
    const before = process.memoryUsage().rss;
    const t0 = performance.now();
    await assert.rejects(createReranker('cohere:rerank:rerank-v3.5', { env: env(), attempts: 1 }).score(QUERY, PASSAGES), /malformed answer \(HTTP 200\): body over the 69632 bytes limit for this request/);
    assert.ok(performance.now() - t0 < 5000);
    assert.ok(process.memoryUsage().rss - before < 64 * 1024 * 1024, 'not held in memory');
  });

  test('a 401 fails at once naming the key; no key, no call; the key never shows', async () => {
    fake.requests.length = 0;
    fake.enqueue({ status: 401, body: { message: 'invalid api token co-secret-key' } });
    await assert.rejects(createReranker('cohere:rerank:rerank-v3.5', { env: env() }).score(QUERY, PASSAGES), (e: Error) => {
      assert.match(e.message, /HTTP 401: invalid api token \*\*\* \(check the API key\)/);
      assert.ok(!e.message.includes('co-secret-key'));
      return true;
    });
    assert.equal(fake.requests.length, 1, 'not retried');
    assert.throws(() => createReranker('voyage:rerank:rerank-2.5', { env: { VOYAGE_API_BASE_URL: fake.url } }), /voyage:rerank:rerank-2\.5: VOYAGE_API_KEY is not set/);
    assert.throws(() => createReranker('tei:rerank', { env: { TEI_BASE_URL: 'ftp://x' } }), /TEI_BASE_URL is not an http\(s\) URL/);
  });

  test('the score cache: a re-run sends nothing; a new passage sends only itself; another reranker or setting misses', async () => {
    const cache = new RerankCache(join(dir, 'cache'));
    const r = createReranker('cohere:rerank:rerank-v3.5', { env: env() });
    fake.requests.length = 0;
    const first = await scorePassages(r, QUERY, PASSAGES, cache);
    assert.deepEqual(first.scores, expected);
    assert.equal(first.cached, 0);
    assert.equal(fake.requests.length, 1);
    const again = await scorePassages(r, QUERY, PASSAGES, cache);
    assert.deepEqual(again.scores, expected);
    assert.equal(again.cached, 4);
    assert.equal(again.usage.requests, 0);
    assert.equal(fake.requests.length, 1, 'a re-run sends nothing');
    const more = [...PASSAGES, 'calm water'];
    const third = await scorePassages(r, QUERY, more, cache);
    assert.equal(fake.requests.length, 2);
    assert.deepEqual(fake.requests[1]!.body.documents, ['calm water'], 'only the new passage is sent');
    assert.deepEqual(third.scores, more.map((p) => fakeRerankScore(QUERY, p)));
    await scorePassages(r, QUERY, PASSAGES, cache, ['instructions: x']);
    assert.equal(fake.requests.length, 3, 'other settings: another cache entry');
    await scorePassages(createReranker('jina:rerank:m', { env: env() }), QUERY, PASSAGES, cache);
    assert.equal(fake.requests.length, 4, 'another reranker never reuses a score');
  });
});

describe('Bedrock rerankers (the real AWS SDK against a fake on 127.0.0.1)', () => {
  let fake: FakeBedrock;
  before(async () => {
    fake = await startFakeBedrock();
    fake.on('*', 'invoke', (req) => {
      const docs: string[] = req.body.documents;
      const results = docs.map((d, index) => ({ index, relevance_score: fakeRerankScore(req.body.query, d) })).sort((a, b) => b.relevance_score - a.relevance_score);
      return { body: { results } };
    });
  });
  after(() => fake.close());
  const opts = () => ({ endpoint: fake.url, region: FAKE_REGION, credentials: FAKE_CREDENTIALS, retryBaseMs: 5 });

  test('cohere.rerank-v3-5:0 (api_version 2) and amazon.rerank-v1:0 through InvokeModel; 1,000 passages a call; search units', async () => {
    for (const model of ['cohere.rerank-v3-5:0', 'amazon.rerank-v1:0']) {
      fake.clearRequests();
      const r = createReranker(`bedrock:rerank:${model}`, opts());
      const a = await r.score(QUERY, PASSAGES);
      assert.deepEqual(a.scores, expected);
      const reqs = fake.requestsFor(model, 'invoke');
      assert.equal(reqs.length, 1);
      assert.deepEqual(reqs[0]!.body.documents, PASSAGES);
      assert.equal(reqs[0]!.body.top_n, 4);
      assert.equal(reqs[0]!.body.api_version, model.startsWith('cohere.') ? 2 : undefined);
      assert.match(String(reqs[0]!.headers.authorization), /AWS4-HMAC-SHA256 .*\/bedrock\/aws4_request/);
      assert.equal(a.usage.searchUnits, 1);
    }
    fake.clearRequests();
    const big = Array.from({ length: 1001 }, (_, i) => `p${i}`);
    const a = await createReranker('bedrock:rerank:amazon.rerank-v1:0', opts()).score(QUERY, big);
    assert.deepEqual(fake.requestsFor('amazon.rerank-v1:0', 'invoke').map((r) => r.body.documents.length), [1000, 1]);
    assert.equal(a.scores.length, 1001);
    assert.equal(a.usage.searchUnits, 11);
    assert.equal(a.usage.costUsd, 0.011);
  });

  test('a malformed Bedrock answer is refused in one line', async () => {
    fake.enqueue('amazon.rerank-v1:0', 'invoke', { body: { results: [{ index: 0, relevance_score: 1 }] } });
    await assert.rejects(createReranker('bedrock:rerank:amazon.rerank-v1:0', opts()).score(QUERY, PASSAGES), /bedrock:rerank:amazon\.rerank-v1:0 at http:\/\/127\.0\.0\.1:\d+: malformed answer: 1 score for 4 passages/);
  });
});

describe('llm:PROVIDER_ID: a promptfoo chat provider as a pointwise reranker (fake OpenAI-compatible server)', () => {
  let llm: FakeLlm;
  let dir: string;
  const saved = { ...process.env };
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rankgate-llm-rerank-'));
    // the grade follows the fake's own word overlap: 3 for the best passages, 0 for the unrelated
    llm = await startFakeLlm((req) => {
      const passage = /Passage:\n([\s\S]*?)\n\nRelevance/.exec(req.text)?.[1] ?? '';
      if (passage.includes('GARBLE')) return 'I think it is quite relevant';
      const s = fakeRerankScore(QUERY, passage);
      return String(s > 0.6 ? 3 : s > 0.3 ? 2 : s > 0 ? 1 : 0);
    });
    process.env.OPENAI_BASE_URL = `${llm.url}/v1`;
    process.env.OPENAI_API_KEY = 'sk-llm-rerank';
  });
  after(async () => {
    await llm.close();
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  test('one call a passage through promptfoo, the grade 0-3 as the score, instructions in the prompt, tokens counted; cached by prompt', async () => {
    const r = createReranker('llm:openai:chat:gpt-4.1-mini', { instructions: 'Prefer passages about water.' });
    assert.equal(r.family, 'llm');
    const a = await r.score(QUERY, PASSAGES);
    assert.deepEqual(a.scores, [3, 0, 3, 0]);
    assert.equal(llm.requests.length, 4);
    assert.ok(llm.requests.every((q) => q.body.model === 'gpt-4.1-mini' && /Prefer passages about water\./.test(q.text) && q.text.includes(QUERY)));
    assert.equal(a.usage.requests, 4);
    assert.ok(a.usage.tokens! > 0);
    const cache = new RerankCache(join(dir, 'cache'));
    await scorePassages(r, QUERY, PASSAGES, cache);
    const n = llm.requests.length;
    await scorePassages(r, QUERY, PASSAGES, cache);
    assert.equal(llm.requests.length, n, 'a re-run sends nothing');
    // another prompt file: another cache entry (its hash is in the key)
    const prompt = join(dir, 'prompt.txt');
    writeFileSync(prompt, 'Grade it.\n---\nQ: {{query}}\nPassage:\n{{passage}}\n\nRelevance 0-3:\n');
    await scorePassages(createReranker('llm:openai:chat:gpt-4.1-mini', { env: { ...process.env, RANKGATE_RERANK_PROMPT: prompt } }), QUERY, PASSAGES, cache);
    assert.equal(llm.requests.length, n + 4);
    assert.match(llm.requests.at(-1)!.text, /Grade it\./);
  });

  test('an answer without a grade, a prompt file without its parts, an unknown id: one line each', async () => {
    await assert.rejects(createReranker('llm:openai:chat:m').score(QUERY, ['GARBLE here']), /llm:openai:chat:m at http:\/\/127\.0\.0\.1:\d+\/v1: malformed answer: passage 0: the model answered "I think it is quite relevant", not one digit 0, 1, 2 or 3/);
    const bad = join(dir, 'bad.txt');
    writeFileSync(bad, 'no separator {{query}}');
    assert.throws(() => createReranker('llm:openai:chat:m', { env: { RANKGATE_RERANK_PROMPT: bad } }), /must hold the system message, a line ---, and the user message with \{\{query\}\} and \{\{passage\}\}/);
    assert.throws(() => createReranker('llm:openai:chat:m', { env: { RANKGATE_RERANK_PROMPT: join(dir, 'missing.txt') } }), /the prompt file .*missing\.txt cannot be read \(ENOENT\)/);
    assert.throws(() => parseRerankerId('llm:gpt-4'), /a promptfoo provider id looks like openai:chat:MODEL/);
    assert.equal(parseGrade('2'), 2);
    assert.equal(parseGrade(' 3\n'), 3, 'white space trimmed');
    assert.equal(parseGrade('0.'), 0, 'one final period allowed');
    for (const bad of ['10', '2.5', '-1', 'Out of 3, I give 1', '0-3: 2', '3 — no, 0', 'Relevance: 3.', '2..', '"2"', '', '4', '２']) {
      assert.equal(parseGrade(bad), undefined, JSON.stringify(bad));
    }
  });

  test('W3: an answer that is not exactly one digit 0-3 is an error of that query naming the answer, never a grade', async () => {
    const answers: Record<string, string> = { 'p-minus': '-1', 'p-out-of': 'Out of 3, I give 1', 'p-range': '0-3: 2', 'p-self': '3 — no, 0', 'p-ctrl': '2\u001b[31m' };
    const llm2 = await startFakeLlm((req) => answers[/Passage:\n(\S+)/.exec(req.text)?.[1] ?? ''] ?? '1');
    const base = process.env.OPENAI_BASE_URL;
    process.env.OPENAI_BASE_URL = `${llm2.url}/v1`; // promptfoo's provider reads the process's environment
    try {
      for (const [passage, answer] of Object.entries(answers)) {
        await assert.rejects(
          createReranker('llm:openai:chat:m-strict').score(QUERY, [passage]),
          (e: Error) => {
            assert.ok(e instanceof RerankerCallError && e.code === 'MalformedResponse', String(e));
            assert.ok(e.message.includes(`the model answered ${JSON.stringify(answer)}, not one digit 0, 1, 2 or 3`), e.message);
            assert.ok(!e.message.includes('\u001b'), 'escaped, never a terminal control');
            return true;
          },
        );
      }
      assert.equal(llm2.requests.length, Object.keys(answers).length);
    } finally {
      process.env.OPENAI_BASE_URL = base;
      await llm2.close();
    }
  });
});
