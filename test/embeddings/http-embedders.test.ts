/**
 * The HTTP embedders (src/embeddings/remote.ts, http.ts) against recording fakes of the OpenAI, Voyage, Cohere v2 and
 * Ollama APIs on 127.0.0.1 (test/helpers/fake-embedding-apis.ts): ids, request shape, batching within the vendors'
 * limits, input types, the auth header, 429 then success, Retry-After, dead endpoints, wrong dimension, malformed
 * bodies, empty data, and no key in any error.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createEmbedder, embeddingCacheKey, legacyCacheKeys, parseEmbedderId, resolveEmbedderId, embedderLabel, isEmbedderId } from '../../src/embeddings/index.ts';
import { EmbedderCallError, redact, retryAfterMs } from '../../src/embeddings/http.ts';
import type { HttpEmbedder } from '../../src/embeddings/remote.ts';
import { embedAnswerCap, l2normalize } from '../../src/embeddings/vector.ts';
import {
  bagOfWordsVector,
  emptyData,
  fakeEnv,
  malformed,
  rateLimited,
  refusedUrl,
  serverError,
  stall,
  startFakeEmbeddingApi,
  wrongDimension,
  type FakeEmbeddingApi,
  type Vendor,
} from '../helpers/fake-embedding-apis.ts';
import { startDeadBedrock } from '../helpers/fake-bedrock.ts';

const close = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]!) < 1e-9);

describe('embedder ids (promptfoo vocabulary)', () => {
  test('families, canonical ids, @N dimensions, aliases of the old names', () => {
    assert.equal(resolveEmbedderId('voyage:voyage-3-large'), 'voyage:voyage-3-large');
    assert.equal(parseEmbedderId('voyage:voyage-3-large').dimension, 1024);
    assert.equal(resolveEmbedderId('voyage:voyage-3-large@1024'), 'voyage:voyage-3-large', 'the default dimension asked for is the same embedder');
    assert.equal(parseEmbedderId('voyage:voyage-3-large@2048').dimension, 2048);
    assert.equal(parseEmbedderId('openai:embedding:text-embedding-3-large').dimension, 3072);
    assert.equal(parseEmbedderId('openai:embedding:text-embedding-3-large@256').id, 'openai:embedding:text-embedding-3-large@256');
    assert.equal(parseEmbedderId('openai:embedding:BAAI/bge-m3').dimension, 1024);
    assert.equal(parseEmbedderId('openai:embedding:some/unknown-model').dimension, undefined, 'learned from the first answer');
    assert.equal(parseEmbedderId('ollama:embeddings:nomic-embed-text:latest').dimension, 768);
    assert.equal(parseEmbedderId('cohere:embedding:embed-english-v3.0').model, 'embed-english-v3.0');
    assert.equal(resolveEmbedderId('titan-v2-512'), 'bedrock:embeddings:amazon.titan-embed-text-v2:0@512');
    assert.equal(resolveEmbedderId('titan-v2'), 'bedrock:embeddings:amazon.titan-embed-text-v2:0');
    assert.equal(resolveEmbedderId('cohere-v3'), 'bedrock:embeddings:cohere.embed-english-v3');
    assert.deepEqual(legacyCacheKeys('bedrock:embeddings:amazon.titan-embed-text-v2:0@512'), ['titan-v2-512']);
    assert.deepEqual(legacyCacheKeys('use-lite'), ['use-lite']);
    assert.equal(embedderLabel('voyage:voyage-3-large'), 'voyage-3-large 1024-d');
    assert.equal(embedderLabel('openai:embedding:text-embedding-3-large@1024'), 'text-embedding-3-large 1024-d');
    assert.equal(embeddingCacheKey({ id: 'voyage:voyage-3-large', dimension: 1024 }, 'document'), 'voyage:voyage-3-large|1024|document');
  });

  test('bad ids are one clear line: unknown family (did you mean), no model, a dimension the model lacks', () => {
    assert.throws(() => resolveEmbedderId('voyag:voyage-3-large'), /unknown embedder "voyag:voyage-3-large": no such id or family prefix; did you mean "voyage:voyage-3-large"\?/);
    assert.throws(() => resolveEmbedderId('voyage:'), /voyage: needs a model name/);
    assert.throws(() => resolveEmbedderId('voyage:voyage-3-large@999'), /voyage-3-large gives 256, 512, 1024, 2048 dimensions, not 999/);
    assert.throws(() => resolveEmbedderId('openai:embedding:text-embedding-ada-002@512'), /gives 1536 dimensions only/);
    assert.throws(() => resolveEmbedderId('bedrock:embeddings:amazon.nova-x'), /Bedrock models rankgate embeds with/);
    assert.equal(isEmbedderId('use-light'), false);
    assert.equal(isEmbedderId('ollama:embeddings:anything-at-all'), true);
  });

  test('Retry-After: seconds, an HTTP date, retry-after-ms; redaction of secrets', () => {
    assert.equal(retryAfterMs(new Headers({ 'retry-after': '3' })), 3000);
    assert.equal(retryAfterMs(new Headers({ 'retry-after-ms': '250' })), 250);
    const now = Date.parse('2026-11-26T10:00:00Z');
    assert.equal(retryAfterMs(new Headers({ 'retry-after': 'Thu, 26 Nov 2026 10:00:05 GMT' }), now), 5000);
    assert.equal(retryAfterMs(new Headers({})), undefined);
    assert.equal(redact('bad key sk-123456 given', ['sk-123456', undefined]), 'bad key *** given');
  });
});

const CASES: { vendor: Vendor; id: string; dim: number; docType?: string; queryType?: string; typeField?: string; batch: number }[] = [
  { vendor: 'openai', id: 'openai:embedding:BAAI/bge-m3', dim: 1024, batch: 2048 },
  { vendor: 'voyage', id: 'voyage:voyage-3-large', dim: 1024, typeField: 'input_type', docType: 'document', queryType: 'query', batch: 1000 },
  { vendor: 'cohere', id: 'cohere:embedding:embed-english-v3.0', dim: 1024, typeField: 'input_type', docType: 'search_document', queryType: 'search_query', batch: 96 },
  { vendor: 'ollama', id: 'ollama:embeddings:bge-m3', dim: 1024, batch: 64 },
];

for (const c of CASES) {
  describe(`${c.id} against a fake ${c.vendor} API`, () => {
    let fake: FakeEmbeddingApi;
    before(async () => {
      fake = await startFakeEmbeddingApi(c.vendor);
    });
    after(() => fake.close());
    const make = (extra: Record<string, unknown> = {}) =>
      createEmbedder(c.id, { env: fakeEnv(fake), retryBaseMs: 1, ...extra }) as Promise<HttpEmbedder>;

    test('request shape, auth header, batches of the vendor limit, document input type, order by index', async () => {
      fake.clear();
      const e = await make();
      assert.equal(e.id, c.id);
      assert.equal(e.dimension, c.dim);
      assert.equal(e.maxBatch, c.batch);
      assert.equal(e.endpoint, new URL(fake.baseUrl).host);
      const texts = Array.from({ length: c.batch + 1 }, (_, i) => `passage number ${i} about still water`);
      const vs = await e.embedDocuments(texts);
      assert.equal(vs.length, texts.length);
      for (const i of [0, 1, c.batch]) assert.ok(close(vs[i]!, l2normalize(bagOfWordsVector(texts[i]!, c.dim))), `vector ${i} is its text's`);
      assert.deepEqual(fake.requests.map((r) => r.texts.length), [c.batch, 1]);
      assert.deepEqual(fake.requests.map((r) => r.status), [200, 200]);
      const r = fake.requests[0]!;
      assert.equal(r.headers['content-type'], 'application/json');
      if (c.vendor === 'ollama') assert.equal(r.headers.authorization, undefined);
      else assert.equal(r.headers.authorization, `Bearer ${fake.key}`);
      const model = { openai: 'BAAI/bge-m3', voyage: 'voyage-3-large', cohere: 'embed-english-v3.0', ollama: 'bge-m3' }[c.vendor];
      assert.equal(r.body.model, model);
      if (c.typeField) assert.equal(r.body[c.typeField], c.docType);
      else assert.equal(r.body.input_type, undefined);
      if (c.vendor === 'cohere') {
        assert.deepEqual(r.body.embedding_types, ['float']);
        assert.equal(r.body.truncate, 'END');
      }
      if (c.vendor === 'openai') assert.equal(r.body.encoding_format, 'float');
      assert.equal(e.stats.requests, 2);
      assert.ok(e.stats.inputTokens > 0, 'reported usage is summed');
    });

    test('query input type; an empty text is sent as one space', async () => {
      fake.clear();
      const e = await make();
      const q = await e.embedQuery('still water');
      assert.ok(close(q, l2normalize(bagOfWordsVector('still water', c.dim))));
      if (c.typeField) assert.equal(fake.requests[0]!.body[c.typeField], c.queryType);
      await e.embedDocuments(['', 'x']);
      assert.deepEqual(fake.requests[1]!.texts, [' ', 'x']);
    });

    test('429 (Retry-After: 0) then 503 then success: retried, counted', async () => {
      fake.clear();
      fake.enqueue(rateLimited(0), serverError(503));
      const e = await make();
      const vs = await e.embedDocuments(['one', 'two']);
      assert.equal(vs.length, 2);
      assert.deepEqual(fake.requests.map((r) => r.status), [429, 503, 200]);
      assert.equal(e.stats.throttled, 1);
      assert.equal(e.stats.retries, 2);
    });

    const failing: [string, () => void, RegExp, number][] = [
      ['persistent 500s', () => fake.enqueue(serverError(500), serverError(500), serverError(500)), /failed after 3 attempts: HTTP 500/, 3],
      ['a Retry-After longer than the call may wait', () => fake.enqueue(rateLimited(3600)), /asks to wait 3600 s \(Retry-After\)/, 1],
      ['a wrong dimension in the answer', () => fake.enqueue(wrongDimension(7)), /malformed answer: vector 0 has 7 dimensions, expected 1024/, 1],
      ['a malformed body', () => fake.enqueue(malformed()), /malformed answer \(HTTP 200\): not JSON/, 1],
      ['an empty data list', () => fake.enqueue(emptyData()), /malformed answer: "(data|embeddings\.float|embeddings)" is empty, expected 2 vectors/, 1],
      ['an answer without the vectors', () => fake.enqueue({ status: 200, body: { object: 'list' } }), /malformed answer: no "(data|embeddings\.float|embeddings)" list of vectors/, 1],
    ];
    for (const [label, arrange, re, requests] of failing) {
      test(`${label}: one clear error naming embedder and endpoint, bounded, not retried when the answer is unusable`, async () => {
        fake.clear();
        arrange();
        const e = await make({ attempts: 3 });
        await assert.rejects(e.embedDocuments(['a', 'b']), (err: unknown) => {
          assert.ok(err instanceof EmbedderCallError, String(err));
          assert.ok(err.message.startsWith(`${c.id} at ${fake.baseUrl}`), err.message);
          assert.match(err.message, re);
          assert.doesNotMatch(err.message, /\n/);
          return true;
        });
        assert.equal(fake.requests.length, requests);
      });
    }

    if (c.vendor !== 'ollama') {
      test('a wrong key: HTTP 401 at once, the key never in the message (even when the server echoes it)', async () => {
        fake.clear();
        const e = await make({ apiKey: 'sk-wrong-key-echoed-back' });
        fake.enqueue({ status: 401, body: { error: { message: 'Incorrect API key provided: sk-wrong-key-echoed-back' }, message: 'invalid api token sk-wrong-key-echoed-back', detail: 'bad key sk-wrong-key-echoed-back' } });
        await assert.rejects(e.embedQuery('x'), (err: Error) => {
          assert.match(err.message, /HTTP 401: .*\*\*\*.*\(check the API key\)/);
          assert.ok(!err.message.includes('sk-wrong-key-echoed-back'));
          return true;
        });
        assert.equal(fake.requests.length, 1);
        fake.clear();
        await assert.rejects((await make({ apiKey: 'not-the-fakes-key' })).embedQuery('x'), /HTTP 401: Incorrect API key|HTTP 401: .*key/i);
      });
    }
  });
}

describe('endpoints that do not answer', () => {
  test('connection refused: bounded attempts, NoAnswer naming the endpoint and the model', async () => {
    const url = await refusedUrl();
    const e = await createEmbedder('voyage:voyage-3-large', { env: { VOYAGE_API_KEY: 'k-123456', VOYAGE_API_BASE_URL: `${url}/v1` }, attempts: 3, retryBaseMs: 1 });
    await assert.rejects(e.embedDocuments(['a']), (err: EmbedderCallError) => {
      assert.equal(err.code, 'NoAnswer');
      assert.equal(err.attempts, 3);
      assert.match(err.message, new RegExp(`^voyage:voyage-3-large at ${url}/v1/embeddings: failed after 3 attempts: no answer \\(ECONNREFUSED\\)$`));
      return true;
    });
  });

  test('accepts and never answers: each attempt times out, the call deadline holds', async () => {
    const dead = await startDeadBedrock();
    try {
      const e = await createEmbedder('ollama:embeddings:bge-m3', { env: { OLLAMA_BASE_URL: dead.url }, timeoutMs: 100, callTimeoutMs: 1_000, attempts: 2, retryBaseMs: 1 });
      await assert.rejects(e.embedQuery('x'), (err: EmbedderCallError) => {
        assert.equal(err.code, 'NoAnswer');
        assert.equal(err.attempts, 2);
        assert.match(err.message, /ollama:embeddings:bge-m3 at http:\/\/127\.0\.0\.1:\d+\/api\/embed: failed after 2 attempts: no answer \(timed out\)/);
        return true;
      });
      assert.ok(dead.connections >= 2 && dead.connections <= 4, `${dead.connections} connections for 2 attempts`);
    } finally {
      await dead.close();
    }
  });

  test('a stalled answer and a call deadline shorter than the retries: no retry past the deadline', async () => {
    const fake = await startFakeEmbeddingApi('cohere');
    try {
      fake.enqueue(stall(5_000), stall(5_000), stall(5_000));
      const e = await createEmbedder('cohere:embedding:embed-english-v3.0', { env: fakeEnv(fake), timeoutMs: 150, callTimeoutMs: 400, attempts: 10, retryBaseMs: 50 });
      await assert.rejects(e.embedQuery('x'), /cohere:embedding:embed-english-v3\.0 at .*\/v2\/embed: (got no answer within 400 ms|failed after \d attempts: no answer \(timed out\) \(no time left)/);
      assert.ok(fake.requests.length <= 3, `${fake.requests.length} requests`);
    } finally {
      await fake.close();
    }
  });

  test('no key: a Config error before any request; the vendors need one, an OpenAI-compatible server need not', async () => {
    await assert.rejects(createEmbedder('voyage:voyage-3-large', { env: {} }), /voyage:voyage-3-large at https:\/\/api\.voyageai\.com\/v1\/embeddings: VOYAGE_API_KEY is not set/);
    await assert.rejects(createEmbedder('cohere:embedding:embed-english-v3.0', { env: {} }), /COHERE_API_KEY is not set/);
    await assert.rejects(createEmbedder('openai:embedding:text-embedding-3-small', { env: {} }), /OPENAI_API_KEY is not set/);
    const tei = await createEmbedder('openai:embedding:BAAI/bge-m3', { env: { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' } });
    assert.equal(tei.endpoint, '127.0.0.1:1');
    await assert.rejects(createEmbedder('ollama:embeddings:bge-m3', { env: { OLLAMA_BASE_URL: 'ftp://x' } }), /OLLAMA_BASE_URL is not an http\(s\) URL/);
  });
});

describe('dimensions', () => {
  test('openai text-embedding-3 with @N sends dimensions; a model unknown to rankgate learns its dimension from one probe', async () => {
    const oa = await startFakeEmbeddingApi('openai');
    const ol = await startFakeEmbeddingApi('ollama');
    try {
      const e = await createEmbedder('openai:embedding:text-embedding-3-large@256', { env: fakeEnv(oa) });
      assert.equal(e.dimension, 256);
      assert.equal((await e.embedQuery('x')).length, 256);
      assert.equal(oa.requests[0]!.body.dimensions, 256);
      const big = await createEmbedder('openai:embedding:text-embedding-3-large', { env: fakeEnv(oa) });
      assert.equal((await big.embedQuery('x')).length, 3072);
      assert.equal(oa.requests[1]!.body.dimensions, undefined);
      const own = await createEmbedder('ollama:embeddings:my-own-embedder', { env: fakeEnv(ol) });
      assert.equal(own.dimension, 0);
      await own.init!();
      assert.equal(own.dimension, 640);
      assert.equal(ol.requests.length, 1);
      assert.equal((await own.embedDocuments(['a', 'b']))[1]!.length, 640);
    } finally {
      await oa.close();
      await ol.close();
    }
  });

  test('token budget: Voyage batches stay under 3/4 of the model tokens per request', async () => {
    const fake = await startFakeEmbeddingApi('voyage');
    try {
      const e = await createEmbedder('voyage:voyage-3-large', { env: fakeEnv(fake) });
      const long = Array.from({ length: 200 }, (_, i) => `w${i} ` + 'calm '.repeat(999)); // ~1000 o200k tokens each
      await e.embedDocuments(long);
      const sizes = fake.requests.map((r) => r.texts.length);
      assert.ok(sizes.length >= 3, `split by tokens, not by the 1,000-input cap: ${sizes}`);
      assert.ok(sizes.every((n) => n * 1000 <= 90_000), `each request <= 90k tokens: ${sizes}`);
      assert.equal(sizes.reduce((a, b) => a + b, 0), 200);
    } finally {
      await fake.close();
    }
  });
});

describe('hostile answers: every vector usable, rows matched by index, the answer size capped', () => {
  let oa: FakeEmbeddingApi;
  let co: FakeEmbeddingApi;
  before(async () => {
    oa = await startFakeEmbeddingApi('openai');
    co = await startFakeEmbeddingApi('cohere');
  });
  after(async () => {
    await oa.close();
    await co.close();
  });
  const ID = 'openai:embedding:BAAI/bge-m3';
  const rejects = async (e: Promise<unknown>, re: RegExp, textIndex?: number) =>
    assert.rejects(e, (err: unknown) => {
      assert.ok(err instanceof EmbedderCallError, String(err));
      assert.equal(err.code, 'MalformedResponse');
      assert.match(err.message, re);
      assert.equal(err.textIndex, textIndex);
      assert.doesNotMatch(err.message, /\n/);
      return true;
    });

  test('values of 1e200 (an L2 norm that overflows) normalise to the same unit vectors, not to zero', async () => {
    oa.clear();
    oa.enqueue({ transform: (b) => ({ ...b, data: b.data.map((r: any) => ({ ...r, embedding: r.embedding.map((x: number) => x * 1e200) })) }) });
    const e = await createEmbedder(ID, { env: fakeEnv(oa) });
    const texts = ['still lake water', 'grey stone wall'];
    const vs = await e.embedDocuments(texts);
    for (let i = 0; i < 2; i++) {
      assert.ok(close(vs[i]!, l2normalize(bagOfWordsVector(texts[i]!, 1024))), `vector ${i} is its text's, unit length`);
      assert.ok(Math.abs(Math.hypot(...vs[i]!) - 1) < 1e-9);
    }
    assert.ok(close(l2normalize([1e-200, 0, -1e-200]), [Math.SQRT1_2, 0, -Math.SQRT1_2]), 'tiny values do not underflow to zero');
  });

  test('an all-zero vector is refused, naming the text', async () => {
    oa.clear();
    oa.enqueue({ transform: (b) => ({ ...b, data: b.data.map((r: any) => (r.index === 1 ? { ...r, embedding: r.embedding.map(() => 0) } : r)) }) });
    const e = await createEmbedder(ID, { env: fakeEnv(oa) });
    await rejects(e.embedDocuments(['a', 'b', 'c']), /malformed answer: vector 1 is all zeros/, 1);
    co.clear();
    co.enqueue({ transform: (b) => ({ ...b, embeddings: { float: b.embeddings.float.map((v: number[], i: number) => (i === 2 ? v.map(() => 0) : v)) } }) });
    const c = await createEmbedder('cohere:embedding:embed-english-v3.0', { env: fakeEnv(co) });
    await rejects(c.embedDocuments(['a', 'b', 'c']), /vector 2 is all zeros/, 2);
  });

  test('data[].index missing, repeated or out of range is refused (rows are never matched by position)', async () => {
    const cases: [string, (b: any) => unknown, RegExp, number][] = [
      ['missing (rows in another order)', (b) => ({ ...b, data: b.data.map(({ index: _i, ...r }: any) => r) }), /data\[0\]\.index is missing or not an integer \(null\)/, 0],
      ['repeated', (b) => ({ ...b, data: b.data.map((r: any) => ({ ...r, index: r.index === 2 ? 0 : r.index })) }), /data\[\d\]\.index 0 repeats data\[\d\]\.index/, 0],
      ['out of range', (b) => ({ ...b, data: b.data.map((r: any) => ({ ...r, index: r.index === 2 ? 3 : r.index })) }), /data\[0\]\.index 3 is out of range \(3 texts sent\)/, 0],
      ['not an integer', (b) => ({ ...b, data: b.data.map((r: any) => ({ ...r, index: String(r.index) })) }), /data\[0\]\.index is missing or not an integer \("2"\)/, 0],
    ];
    for (const [label, transform, re, row] of cases) {
      oa.clear();
      oa.enqueue({ transform });
      const e = await createEmbedder(ID, { env: fakeEnv(oa) });
      await rejects(e.embedDocuments(['a', 'b', 'c']), re, row).catch((err) => assert.fail(`${label}: ${err}`));
    }
    // a second batch's bad row is named by its position in the whole call
    oa.clear();
    oa.enqueue({}, { transform: (b) => ({ ...b, data: b.data.map((r: any) => ({ ...r, embedding: r.embedding.map(() => 0) })) }) });
    const e = await createEmbedder(ID, { env: fakeEnv(oa), maxBatch: 2, concurrency: 1 });
    await rejects(e.embedDocuments(['a', 'b', 'c']), /vector 0 is all zeros/, 2);
  });

  test('an answer over the cap is given up as a stream (chunked or declared), not retried; the default cap follows the request', async () => {
    const huge = `{"data": [${'0.1,'.repeat(400_000)}0.1]}`; // ~1.6 MB, no Content-Length from the fake: chunked
    for (const headers of [{}, { "content-length": String(Buffer.byteLength(huge)) }] as Record<string, string>[]) {
      oa.clear();
      oa.enqueue({ status: 200, headers, body: huge });
      const e = await createEmbedder(ID, { env: fakeEnv(oa), maxResponseBytes: 1024 * 1024, attempts: 3 });
      await rejects(e.embedDocuments(['a']), /malformed answer \(HTTP 200\): body over the 1 MB limit for this request/, 0);
      assert.equal(oa.requests.length, 1, 'not retried');
    }
    assert.equal(embedAnswerCap(2, 1024), 1024 * 1024 + 2 * 1024 * 96);
    assert.equal(embedAnswerCap(1, 0), 1024 * 1024 + 16_384 * 96, 'an unknown dimension: a generous one');
    // the default cap for 1 text of 1024 dims is ~1.1 MB: the same huge answer is refused without an explicit cap
    oa.clear();
    oa.enqueue({ status: 200, body: `{"data": [${'0.1,'.repeat(600_000)}0.1]}` });
    const e = await createEmbedder(ID, { env: fakeEnv(oa) });
    await rejects(e.embedDocuments(['a']), /body over the 1146880 bytes limit/, 0);
  });
});
