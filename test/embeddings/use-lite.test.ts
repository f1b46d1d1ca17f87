import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEmbedder, cosine, resolveEmbedderId, embedderDimension } from '../../src/embeddings/index.ts';
import { isUserError } from '../../src/errors.ts';

test('use-lite: 512-d, L2-normalised, one vector per input (empty and whitespace texts included)', async () => {
  const e = await createEmbedder('use-lite');
  assert.equal(e.id, 'use-lite');
  assert.equal(e.dimension, 512);
  assert.equal(e.maxBatch, 64);
  const texts = ['calmness of the soul', '', '   ', 'a', ''];
  const vs = await e.embedDocuments(texts);
  assert.equal(vs.length, texts.length);
  for (const v of vs) {
    assert.equal(v.length, 512);
    assert.ok(v.every(Number.isFinite));
    assert.ok(Math.abs(Math.hypot(...v) - 1) < 1e-9, 'unit length');
  }
  assert.deepEqual(await e.embedDocuments([]), []);
});

test('use-lite: deterministic, memoised, and a text gets the same vector alone or inside a batch of >64', async () => {
  const a = await createEmbedder('use-lite');
  const b = await createEmbedder('use-lite');
  assert.equal(a, b, 'one embedder (and one model load) per process');
  const q1 = await a.embedQuery('inner peace');
  const q2 = await a.embedQuery('inner peace');
  assert.deepEqual(q1, q2);
  const many = Array.from({ length: 70 }, (_, i) => `sentence number ${i} about the ocean and the wave`);
  many[67] = 'inner peace';
  const vs = await a.embedDocuments(many);
  assert.equal(vs.length, 70);
  // position 67 is in the second batch of 64; values may differ in the last float bits only
  assert.ok(cosine(vs[67]!, q1) > 0.99999);
  assert.ok(cosine(vs[0]!, vs[1]!) < 0.99999, 'different texts give different vectors');
});

test('use-lite: semantic sanity', async () => {
  const e = await createEmbedder('use-lite');
  const [peace, calm, tax] = await e.embedDocuments(['inner peace', 'tranquility and calm', 'tax return form']);
  assert.ok(cosine(peace!, calm!) > cosine(peace!, tax!), `${cosine(peace!, calm!)} vs ${cosine(peace!, tax!)}`);
  const q = await e.embedQuery('how do I find inner peace');
  assert.ok(cosine(q, calm!) > cosine(q, tax!));
});

test('embedder ids: aliases, dimensions, unknown ids rejected with the list of known ids', () => {
  assert.equal(resolveEmbedderId('titan-v2'), 'bedrock:embeddings:amazon.titan-embed-text-v2:0');
  assert.equal(resolveEmbedderId('titan-v2-1024'), 'bedrock:embeddings:amazon.titan-embed-text-v2:0');
  assert.equal(resolveEmbedderId('cohere-v3'), 'bedrock:embeddings:cohere.embed-english-v3');
  assert.equal(embedderDimension('titan-v2-256'), 256);
  assert.equal(embedderDimension('cohere-v3-multilingual'), 1024);
  assert.equal(embedderDimension('use-lite'), 512);
  assert.throws(
    () => resolveEmbedderId('titan-v2-768'),
    (err: unknown) => isUserError(err) && /unknown embedder "titan-v2-768".*did you mean "titan-v2-.*use-lite.*voyage:MODEL.*aliases:.*cohere-v3-multilingual/.test((err as Error).message),
  );
});
