/**
 * Bedrock faults at the process level (the unit behaviour is pinned in test/embeddings and test/judge):
 * `rankgate ingest --embedder titan-v2-256` against the recording fake Bedrock on 127.0.0.1 that fails every
 * call (5xx, throttling, malformed body). The CLI must stop after a bounded number of requests with one clear
 * message naming the model and the endpoint and exit 2, without a stack trace, and leave the index as it was.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { FAKE_CREDENTIALS, FAKE_REGION, serverErrorReply, startFakeBedrock, throttlingReply, type FakeBedrock, type FakeReply } from '../helpers/fake-bedrock.ts';
import { CORPUS, assertNoStack, copyIndexFixture, killChildren, rankgate } from './helpers.ts';

describe('rankgate ingest with a failing Bedrock embedder', () => {
  let fake: FakeBedrock;
  let db: string;
  before(async () => {
    fake = await startFakeBedrock();
    db = await copyIndexFixture('bedrock');
  });
  after(async () => {
    killChildren();
    await fake.close();
    rmSync(join(db, '..'), { recursive: true, force: true });
  });

  const env = () => ({
    DATABASE_URL: undefined,
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: fake.url,
    AWS_REGION: FAKE_REGION,
    AWS_ACCESS_KEY_ID: FAKE_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: FAKE_CREDENTIALS.secretAccessKey,
    AWS_PROFILE: undefined,
  });

  const cases: [string, () => FakeReply, RegExp][] = [
    ['persistent 500s', () => serverErrorReply(500), /InternalServer|500/],
    ['endless throttling', () => throttlingReply(), /Throttl|429/],
    ['malformed body', () => ({ status: 200, body: '{"embedding": [0.1, 0.2' }), /malformed|JSON|embedding/i],
  ];
  for (const [label, reply, why] of cases) {
    it(`${label}: bounded requests, clear message, non-zero exit, index unchanged`, async () => {
      fake.requests.length = 0;
      fake.on('*', 'invoke', () => reply());
      const r = await rankgate(['ingest', '--db', db, '--corpus', CORPUS, '--chunk-size', '300', '--embedder', 'titan-v2-256'], env(), 120_000);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /embedder bedrock:embeddings:amazon\.titan-embed-text-v2:0@256 at 127\.0\.0\.1:\d+: /, 'names the model and the endpoint');
      assert.match(r.stderr, /the index variant being built was not written/);
      assert.match(r.stderr, why);
      assertNoStack(r.stderr);
      assert.ok(fake.requests.length >= 1 && fake.requests.length <= 20, `bounded: ${fake.requests.length} requests`);
      const s = await rankgate(['search', '--db', db, '--chunk-size', '300', '--embedder', 'titan-v2-256', 'still water'], env());
      assert.equal(s.code, 2, s.stderr);
      assert.match(s.stderr, /index variant c300:bedrock:embeddings:amazon\.titan-embed-text-v2:0@256 not found.*available: c300:use-lite/);
    });
  }
});
