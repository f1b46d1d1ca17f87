import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmbedder } from '../../src/embeddings/index.ts';
import { l2normalize } from '../../src/embeddings/vector.ts';
import { BedrockCallError } from '../../src/embeddings/bedrock-client.ts';
import type { BedrockEmbedder } from '../../src/embeddings/bedrock.ts';
import {
  startFakeBedrock,
  fakeVector,
  serverErrorReply,
  validationErrorReply,
  FAKE_CREDENTIALS,
  FAKE_REGION,
  type FakeBedrock,
} from '../helpers/fake-bedrock.ts';

const TITAN = 'amazon.titan-embed-text-v2:0';
const COHERE_EN = 'cohere.embed-english-v3';
const COHERE_ML = 'cohere.embed-multilingual-v3';

let fake: FakeBedrock;
before(async () => {
  fake = await startFakeBedrock();
});
after(async () => {
  await fake.close();
});
beforeEach(() => fake.clearRequests());

const base = () => ({ endpoint: fake.url, region: FAKE_REGION, credentials: FAKE_CREDENTIALS, retryBaseMs: 5 });
const close = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]!) < 1e-12);

test('titan-v2-512: one SigV4-signed InvokeModel per text, body {inputText, dimensions, normalize}, order kept', async () => {
  const e = (await createEmbedder('titan-v2-512', base())) as BedrockEmbedder;
  assert.equal(e.id, 'bedrock:embeddings:amazon.titan-embed-text-v2:0@512');
  assert.equal(e.model, TITAN);
  assert.equal(e.endpoint, new URL(fake.url).host);
  assert.equal(e.dimension, 512);
  assert.equal(e.maxBatch, 1);
  const texts = ['the wave and the ocean', 'calmness', 'a third text', 'fourth', 'fifth', 'sixth'];
  const vs = await e.embedDocuments(texts);
  assert.equal(vs.length, texts.length);
  texts.forEach((t, i) => assert.ok(close(vs[i]!, l2normalize(fakeVector(t, 512))), `vector ${i} belongs to its text`));
  const reqs = fake.requestsFor(TITAN, 'invoke');
  assert.equal(reqs.length, texts.length);
  assert.equal(reqs[0]!.path, '/model/amazon.titan-embed-text-v2%3A0/invoke');
  assert.equal(reqs[0]!.method, 'POST');
  assert.deepEqual(
    reqs.map((r) => r.body.inputText).sort(),
    [...texts].sort(),
  );
  for (const r of reqs) {
    assert.deepEqual(Object.keys(r.body).sort(), ['dimensions', 'inputText', 'normalize']);
    assert.equal(r.body.dimensions, 512);
    assert.equal(r.body.normalize, true);
    assert.match(String(r.headers.authorization), /^AWS4-HMAC-SHA256 Credential=AKIDFAKEFAKEFAKE\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
  }
  assert.equal(e.stats.calls, texts.length);
  assert.ok(e.stats.inputTokens > 0, 'Titan token counts are summed');
  for (const v of vs) assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-9);
});

test('titan-v2 dimensions 256 and 1024 (alias titan-v2 = 1024); query embedding uses the same body', async () => {
  for (const [id, dim] of [['titan-v2-256', 256], ['titan-v2', 1024]] as const) {
    fake.clearRequests();
    const e = await createEmbedder(id, base());
    assert.equal(e.dimension, dim);
    const q = await e.embedQuery('why am I here');
    assert.equal(q.length, dim);
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.body.dimensions, dim);
  }
});

test('cohere-v3-english: 97 texts -> 2 calls (96 + 1), input_type search_document; query -> search_query', async () => {
  const e = (await createEmbedder('cohere-v3-english', base())) as BedrockEmbedder;
  assert.equal(e.dimension, 1024);
  assert.equal(e.maxBatch, 96);
  const texts = Array.from({ length: 97 }, (_, i) => `passage ${i}`);
  const vs = await e.embedDocuments(texts);
  assert.equal(vs.length, 97);
  assert.ok(close(vs[96]!, l2normalize(fakeVector('passage 96', 1024))));
  assert.ok(close(vs[0]!, l2normalize(fakeVector('passage 0', 1024))));
  const reqs = fake.requestsFor(COHERE_EN, 'invoke');
  assert.deepEqual(reqs.map((r) => r.body.texts.length), [96, 1]);
  for (const r of reqs) {
    assert.equal(r.body.input_type, 'search_document');
    assert.equal(r.body.truncate, 'END');
  }
  fake.clearRequests();
  const q = await e.embedQuery('inner peace');
  assert.ok(close(q, l2normalize(fakeVector('inner peace', 1024))));
  assert.equal(fake.requests[0]!.body.input_type, 'search_query');
  assert.deepEqual(fake.requests[0]!.body.texts, ['inner peace']);
  assert.equal(e.stats.calls, 3);
});

test('cohere-v3-multilingual: texts over 2,048 characters are cut explicitly (counted, warned), never split a surrogate pair', async () => {
  const warnings: string[] = [];
  const e = (await createEmbedder('cohere-v3-multilingual', { ...base(), onWarning: (m) => warnings.push(m) })) as BedrockEmbedder;
  const long = 'a'.repeat(2047) + '😀' + 'tail';
  const vs = await e.embedDocuments(['short', 'b'.repeat(3000), long]);
  assert.equal(vs.length, 3);
  const sent = fake.requestsFor(COHERE_ML, 'invoke')[0]!.body.texts as string[];
  assert.equal(sent[0], 'short');
  assert.equal(sent[1]!.length, 2048);
  assert.equal(sent[2], 'a'.repeat(2047), 'the emoji is dropped whole rather than half-sent');
  assert.equal(e.stats.truncated, 2);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /2 texts cut to 2048 characters/);
});

test('cohere: accepts the embeddings_by_type body shape {embeddings: {float: [...]}}', async () => {
  fake.enqueue(COHERE_EN, 'invoke', { body: { id: 'x', response_type: 'embeddings_by_type', embeddings: { float: [fakeVector('x', 1024)] } } });
  const e = await createEmbedder('cohere-v3', base());
  const [v] = await e.embedDocuments(['x']);
  assert.ok(close(v!, l2normalize(fakeVector('x', 1024))));
});

test('throttling then success: the SDK retries a 429 ThrottlingException by itself', async () => {
  fake.throttle(TITAN, 'invoke', 1);
  const e = (await createEmbedder('titan-v2-256', { ...base(), maxAttempts: 3 })) as BedrockEmbedder;
  const v = await e.embedQuery('hello');
  assert.equal(v.length, 256);
  assert.deepEqual(fake.requests.map((r) => r.status), [429, 200]);
});

test('throttling and 5xx beyond the SDK attempts: our own bounded backoff retries, then success', async () => {
  fake.enqueue(COHERE_EN, 'invoke', serverErrorReply(503, 'ServiceUnavailableException'));
  fake.throttle(COHERE_EN, 'invoke', 1);
  const e = (await createEmbedder('cohere-v3-english', { ...base(), maxAttempts: 1, retries: 2 })) as BedrockEmbedder;
  const vs = await e.embedDocuments(['one', 'two']);
  assert.equal(vs.length, 2);
  assert.deepEqual(fake.requests.map((r) => r.status), [503, 429, 200]);
  assert.equal(e.stats.retries, 2);
  assert.equal(e.stats.throttled, 1);
});

test('errors are bounded: persistent 500s stop after maxAttempts x (retries + 1) requests with a clear error', async () => {
  fake.on(TITAN, 'invoke', () => serverErrorReply(500));
  try {
    const e = await createEmbedder('titan-v2-1024', { ...base(), maxAttempts: 2, retries: 1 });
    await assert.rejects(e.embedQuery('x'), (err: unknown) => {
      assert.ok(err instanceof BedrockCallError);
      assert.match(err.message, /amazon\.titan-embed-text-v2:0 failed after 4 attempts: InternalServerException \(HTTP 500\)/);
      return true;
    });
    assert.equal(fake.requests.length, 4);
  } finally {
    fake.off(TITAN, 'invoke');
  }
});

test('validation errors are not retried', async () => {
  fake.enqueue(COHERE_EN, 'invoke', validationErrorReply('bad input_type'));
  const e = await createEmbedder('cohere-v3-english', { ...base(), maxAttempts: 3, retries: 2 });
  await assert.rejects(e.embedQuery('x'), /ValidationException \(HTTP 400\): bad input_type/);
  assert.equal(fake.requests.length, 1);
});

test('malformed bodies are clear errors, not retried: not JSON, missing vectors, wrong dimension, wrong count', async () => {
  const cases: [string, string, unknown, RegExp][] = [
    ['titan-v2-512', TITAN, 'this is {not json', /malformed response body from amazon\.titan-embed-text-v2:0: not JSON/],
    ['titan-v2-512', TITAN, { vector: [1, 2] }, /"embedding" should be 512 finite numbers, got undefined/],
    ['titan-v2-512', TITAN, { embedding: [1, 2, 3] }, /"embedding" should be 512 finite numbers, got 3 values/],
    ['cohere-v3-english', COHERE_EN, { embeddings: [fakeVector('a', 1024)] }, /expected "embeddings" with 2 vectors, got 1/],
    ['cohere-v3-english', COHERE_EN, { embeddings: [fakeVector('a', 1024), ['x']] }, /embeddings\[1\] should be 1024 finite numbers/],
  ];
  for (const [id, model, body, re] of cases) {
    fake.clearRequests();
    fake.enqueue(model, 'invoke', { body });
    const e = await createEmbedder(id, { ...base(), retries: 2 });
    await assert.rejects(e.embedDocuments(['a', 'b'].slice(0, id.startsWith('titan') ? 1 : 2)), (err: unknown) => {
      assert.ok(err instanceof BedrockCallError, String(err));
      assert.match(err.message, re);
      return true;
    });
    assert.equal(fake.requests.length, 1, `${id}: no retry of a malformed body`);
  }
});

test('timeouts: a stalled response times out per request and the retries are bounded', async () => {
  fake.enqueue(TITAN, 'invoke', { delayMs: 5_000, body: {} }, { delayMs: 5_000, body: {} });
  const e = await createEmbedder('titan-v2-256', { ...base(), timeoutMs: 150, callTimeoutMs: 5_000, maxAttempts: 1, retries: 1 });
  const t0 = Date.now();
  await assert.rejects(e.embedQuery('slow'), /failed after 2 attempts: TimeoutError/);
  assert.equal(fake.requests.length, 2);
  assert.ok(Date.now() - t0 < 4_000, 'did not wait for the stalled server');
});

test('endpoint from AWS_ENDPOINT_URL_BEDROCK_RUNTIME; a missing region is a clear error', async () => {
  const saved = { ...process.env };
  const dir = mkdtempSync(join(tmpdir(), 'rg-aws-'));
  writeFileSync(join(dir, 'config'), '');
  try {
    process.env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME = fake.url;
    const e = await createEmbedder('titan-v2-256', { region: FAKE_REGION, credentials: FAKE_CREDENTIALS });
    assert.equal((await e.embedQuery('via env')).length, 256);
    assert.equal(fake.requests.length, 1);
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    delete process.env.AWS_PROFILE;
    process.env.AWS_CONFIG_FILE = join(dir, 'config');
    process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'config');
    const noRegion = await createEmbedder('titan-v2-256', { credentials: FAKE_CREDENTIALS, maxAttempts: 1, retries: 0 });
    await assert.rejects(noRegion.embedQuery('x'), /Region is missing.*AWS_REGION/);
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
});

test('hostile answers: 1e200 values normalise; an all-zero vector is refused naming the text; an oversized body is given up (declared or chunked), not retried', async () => {
  const titan = await createEmbedder('titan-v2-512', { ...base(), retries: 2 });
  const big = fakeVector('lake', 512).map((x) => x * 1e200);
  fake.enqueue(TITAN, 'invoke', { body: { embedding: big, inputTextTokenCount: 1 } });
  const [v] = await titan.embedDocuments(['lake']);
  assert.ok(close(v!, l2normalize(fakeVector('lake', 512))), 'same direction, unit length (the norm did not overflow)');

  fake.clearRequests();
  fake.enqueue(COHERE_EN, 'invoke', { body: { embeddings: [fakeVector('a', 1024), new Array(1024).fill(0)] } });
  const cohere = await createEmbedder('cohere-v3-english', { ...base(), retries: 2 });
  await assert.rejects(cohere.embedDocuments(['a', 'b']), (err: unknown) => {
    assert.ok(err instanceof BedrockCallError, String(err));
    assert.match(err.message, /malformed response body from cohere\.embed-english-v3: embeddings\[1\] is all zeros/);
    assert.equal(err.textIndex, 1);
    return true;
  });

  const huge = JSON.stringify({ embedding: new Array(40_000).fill(0.123456789012345) });
  const cap = 1024 * 1024 + 512 * 96;
  const over = huge.repeat(Math.ceil((cap + 1) / huge.length));
  for (const headers of [{}, { 'transfer-encoding': 'chunked' }] as Record<string, string>[]) {
    fake.clearRequests();
    fake.enqueue(TITAN, 'invoke', { headers, body: over });
    await assert.rejects(titan.embedDocuments(['x', 'y']), (err: unknown) => {
      assert.ok(err instanceof BedrockCallError, String(err));
      assert.match(err.message, new RegExp(`malformed response body from amazon\\.titan-embed-text-v2:0: over the ${cap} bytes limit for this request`));
      assert.equal(err.code, 'MalformedResponse');
      assert.equal(err.textIndex, 0);
      return true;
    });
    assert.equal(fake.requestsFor(TITAN).length, 2, 'one request per text: the oversized answer is not retried');
  }
});
