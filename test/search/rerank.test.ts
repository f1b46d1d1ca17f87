/**
 * The rerank stage of rankgate's service (src/search/rerank-step.ts) on the fixture index, against the fake rerank
 * API (test/helpers/fake-rerank-apis.ts): the top k fused candidates reordered by the reranker's scores (ties by fused
 * rank), the rest in fused order, the diagnostics the failure buckets need, the cache (a re-run sends nothing), a
 * dead reranker as a failed search (an error row, never a ranking), and the settings' parsing and precedence.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSearchService, type SearchService } from '../../src/search/service.ts';
import { parseRerankSetting, rerankFromEnv, rerankLabel } from '../../src/search/rerank-step.ts';
import { isUserError } from '../../src/errors.ts';
import type { SearchParams } from '../../src/search/types.ts';
import { ENGINES, HashEmbedder } from './fixture.ts';
import { fakeRerankScore, startFakeRerankApi, type FakeRerankApi } from '../helpers/fake-rerank-apis.ts';

const emb = new HashEmbedder(64);
const base: Partial<SearchParams> = { chunkSize: 48, embedder: emb.id, routing: false };
const QUERY = 'slow breath calms the heart';

describe('the rerank stage on the fixture index (PGlite)', () => {
  let fake: FakeRerankApi;
  let dir: string;
  let svc: SearchService;
  let db: Awaited<ReturnType<(typeof ENGINES)[0]['open']>>;
  const saved = { ...process.env };
  before(async () => {
    fake = await startFakeRerankApi();
    dir = mkdtempSync(join(tmpdir(), 'rankgate-rerank-step-'));
    process.env.TEI_BASE_URL = fake.url;
    process.env.COHERE_BASE_URL = fake.url;
    process.env.COHERE_API_KEY = 'co-key';
    db = await ENGINES[0]!.open();
    svc = await createSearchService({ db, embedder: emb, routing: false, defaults: base, rerankCacheDir: join(dir, 'cache') });
  });
  after(async () => {
    await svc?.close();
    await db?.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
    process.env = saved;
  });

  test('the budget in the reranker order (ties by fused rank), the rest in fused order; the diagnostics', async () => {
    const plain = await svc.search(QUERY, { topK: 10 });
    assert.equal(plain.diagnostics.rerank, undefined, 'no reranker, no rerank block');
    fake.requests.length = 0;
    const k = 5;
    const r = await svc.search(QUERY, { topK: 10, rerank: { provider: 'tei:rerank', k } });
    const d = r.diagnostics.rerank!;
    assert.equal(d.reranker, 'tei:rerank');
    assert.equal(d.budget, k);
    // first stage: the fused order (what the plain search returned), at least max(k, topK) deep where there are that many
    assert.deepEqual(d.firstStage.slice(0, 10), plain.hits.map((h) => h.chunkId).slice(0, 10));
    const budget = d.firstStage.slice(0, k);
    const content = new Map(plain.hits.map((h) => [h.chunkId, h.content]));
    const score = (id: string) => fakeRerankScore(QUERY, content.get(id)!);
    const expected = [...budget].sort((a, b) => score(b) - score(a) || budget.indexOf(a) - budget.indexOf(b));
    assert.deepEqual(d.reranked, expected);
    assert.deepEqual(r.hits.slice(0, k).map((h) => h.chunkId), expected, 'the final top comes from the reranker');
    assert.deepEqual(r.hits.slice(k).map((h) => h.chunkId), d.firstStage.slice(k, 10), 'past the budget: fused order');
    assert.equal(r.hits[0]!.score, score(expected[0]!), "a reranked hit's score is the reranker's");
    assert.deepEqual(r.hits.map((h) => h.rank), r.hits.map((_, i) => i + 1));
    assert.equal(fake.requests.length, 1, 'one batched request for the budget');
    assert.equal(fake.requests[0]!.body.texts.length, k);
    assert.equal(d.requests, 1);
    assert.equal(d.cached, 0);
    assert.ok(typeof r.diagnostics.timings.rerank === 'number');
  });

  test('a re-run sends nothing (the score cache); a larger budget sends only the new passages', async () => {
    fake.requests.length = 0;
    const a = await svc.search(QUERY, { topK: 10, rerank: { provider: 'tei:rerank', k: 5 } });
    assert.equal(fake.requests.length, 0);
    assert.equal(a.diagnostics.rerank!.requests, 0);
    assert.equal(a.diagnostics.rerank!.cached, 5);
    const b = await svc.search(QUERY, { topK: 10, rerank: { provider: 'tei:rerank', k: 8 } });
    assert.equal(fake.requests.length, 1);
    assert.equal(fake.requests[0]!.body.texts.length, Math.min(8, b.diagnostics.rerank!.firstStage.length) - 5);
  });

  test('a budget deeper than the channels: the first stage goes as deep as the budget', async () => {
    const r = await svc.search(QUERY, { topK: 3, candidates: 5, rerank: { provider: 'tei:rerank', k: 12 } });
    assert.ok(r.diagnostics.rerank!.firstStage.length > 5, `first stage ${r.diagnostics.rerank!.firstStage.length} deep`);
    assert.equal(r.hits.length, 3);
  });

  test('a reranker that dies or answers wrong fails the search (an error row), never a ranking', async () => {
    fake.enqueue({ status: 200, body: [{ index: 0, score: 1 }] });
    await assert.rejects(svc.search('anger and grief', { rerank: { provider: 'tei:rerank', k: 4 } }), /tei:rerank at http:\/\/127\.0\.0\.1:\d+\/rerank: malformed answer: 1 score for 4 passages/);
    fake.enqueue({ status: 401, body: { message: 'bad token' } });
    await assert.rejects(svc.search('anger and grief at night', { rerank: { provider: 'cohere:rerank:rerank-v3.5', k: 4 } }), /HTTP 401: bad token \(check the API key\)/);
  });

  test('a dead reranker: after 2 queries in a row got no answer, the rest fail at once (the dead-service deadline)', async () => {
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((res) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => res(p));
      });
    });
    const dead = await createSearchService({ db, embedder: emb, routing: false, defaults: base, rerankCacheDir: false, rerankerOptions: { env: { TEI_BASE_URL: `http://127.0.0.1:${port}` }, attempts: 1 } });
    try {
      const params = { rerank: { provider: 'tei:rerank', k: 3 } };
      for (let i = 0; i < 2; i++) await assert.rejects(dead.search(`anger ${i}`, params), /tei:rerank at http:\/\/127\.0\.0\.1:\d+\/rerank: failed after 1 attempt: no answer \(ECONNREFUSED\)/);
      await assert.rejects(dead.search('anger 3', params), /tei:rerank at http:\/\/127\.0\.0\.1:\d+\/rerank unreachable: 2 queries in a row got no answer .*not reranked \(RANKGATE_RERANK_UNREACHABLE_AFTER\)/);
    } finally {
      await dead.close();
    }
  });

  test('an unknown reranker or a missing key in the service defaults: refused at construction', async () => {
    const db = await ENGINES[0]!.open();
    await assert.rejects(
      createSearchService({ db, embedder: emb, routing: false, defaults: { ...base, rerank: { provider: 'cohere:rerank:x', k: 5 } }, rerankerOptions: { env: {} } }),
      /cohere:rerank:x: COHERE_API_KEY is not set/,
    );
    await assert.rejects(createSearchService({ db, embedder: emb, routing: false, defaults: { ...base, rerank: 'coher:rerank:x' as never } }), /unknown reranker "coher:rerank:x"/);
    await db.close();
  });
});

describe('rerank settings', () => {
  test('a reranker id or {provider, k, maxTokensPerDoc, instructions}; false is none; bad values name the field', () => {
    assert.deepEqual(parseRerankSetting('cohere:rerank:rerank-v3.5', 'rerank'), { provider: 'cohere:rerank:rerank-v3.5', k: 50 });
    assert.deepEqual(parseRerankSetting({ provider: 'tei:rerank', k: 10, instructions: 'x' }, 'rerank'), { provider: 'tei:rerank', k: 10, instructions: 'x' });
    assert.equal(parseRerankSetting(false, 'rerank'), null);
    assert.throws(() => parseRerankSetting({ provider: 'tei:rerank', k: 0 }, 'c.rerank'), /c\.rerank\.k: expected an integer from 1 to 1000, got 0/);
    assert.throws(() => parseRerankSetting({ provider: 'tei:rerank', budget: 5 }, 'c.rerank'), /c\.rerank\.budget: unknown key/);
    assert.throws(() => parseRerankSetting({ k: 5 }, 'c.rerank'), /c\.rerank\.provider: expected a reranker id/);
    assert.throws(() => parseRerankSetting(5, 'c.rerank'), /expected a reranker id or \{provider/);
    assert.equal(rerankLabel({ provider: 'vllm:rerank:BAAI/bge-reranker-v2-m3', k: 25 }), 'bge-reranker-v2-m3@25');
    assert.equal(rerankLabel(null), 'no-rerank');
  });

  test('--rerank / --rerank-k / --no-rerank (RANKGATE_RERANK, RANKGATE_RERANK_K) beat the config', () => {
    const env = { TEI_BASE_URL: 'http://127.0.0.1:9', COHERE_API_KEY: 'k' };
    const configured = { provider: 'tei:rerank', k: 20, instructions: 'i' };
    assert.equal(rerankFromEnv(configured, env), undefined, 'nothing set: the config decides');
    assert.equal(rerankFromEnv(configured, { ...env, RANKGATE_RERANK: 'off' }), null);
    assert.deepEqual(rerankFromEnv(configured, { ...env, RANKGATE_RERANK_K: '5' }), { provider: 'tei:rerank', k: 5, instructions: 'i' });
    assert.deepEqual(rerankFromEnv(configured, { ...env, RANKGATE_RERANK: 'cohere:rerank:rerank-v3.5' }), { provider: 'cohere:rerank:rerank-v3.5', k: 20, instructions: 'i' });
    assert.deepEqual(rerankFromEnv(undefined, { ...env, RANKGATE_RERANK: 'tei:rerank', RANKGATE_RERANK_K: '100' }), { provider: 'tei:rerank', k: 100 });
    assert.throws(() => rerankFromEnv(undefined, { RANKGATE_RERANK_K: '5' }), /RANKGATE_RERANK_K=5 \(--rerank-k\): no reranker is configured/);
    assert.throws(() => rerankFromEnv(configured, { ...env, RANKGATE_RERANK_K: 'ten' }), /expected an integer from 1 to 1000/);
    assert.throws(() => rerankFromEnv(undefined, { RANKGATE_RERANK: 'voyage:rerank:rerank-2.5' }), (e: Error) => isUserError(e) && /VOYAGE_API_KEY is not set/.test(e.message));
    assert.throws(() => rerankFromEnv(undefined, { RANKGATE_RERANK: 'tei:rerank' }, true), /rankgate's own service's/);
    assert.equal(rerankFromEnv(undefined, { RANKGATE_RERANK: 'off' }, true), null, '--no-rerank on a team service changes nothing');
  });
});

describe('the rerank sweep and the CLI flags', () => {
  test('RANKGATE_SWEEP=rerank: no reranker, then each reranker x k 10/25/50/100, labels naming reranker and k', async () => {
    const { sweepGrid } = await import('../../src/search/sweep.ts');
    const env = { TEI_BASE_URL: 'http://127.0.0.1:9', COHERE_API_KEY: 'k', RANKGATE_SWEEP_RERANKERS: 'tei:rerank, cohere:rerank:rerank-v3.5' };
    const cols = sweepGrid('rerank', { corpus: 'datasets/corpus', rerank: { provider: 'tei:rerank', k: 7, instructions: 'be strict' } }, env);
    assert.deepEqual(cols.map((c) => c.label), [
      'hybrid rrf60 w1:1 c300 use-lite 512-d no-rerank',
      ...['tei@10', 'tei@25', 'tei@50', 'tei@100', 'rerank-v3.5@10', 'rerank-v3.5@25', 'rerank-v3.5@50', 'rerank-v3.5@100'].map((x) => `hybrid rrf60 w1:1 c300 use-lite 512-d ${x}`),
    ]);
    assert.equal(cols[0]!.config.rerank, false);
    assert.deepEqual(cols[8]!.config.rerank, { instructions: 'be strict', provider: 'cohere:rerank:rerank-v3.5', k: 100 }, "the config's other rerank settings go with every reranker");
    assert.ok(cols.every((c) => c.config.sweep === 'rerank' && c.config.corpus === 'datasets/corpus'));
    // without RANKGATE_SWEEP_RERANKERS: --rerank (RANKGATE_RERANK), else the config's reranker
    assert.equal(sweepGrid('rerank', {}, { TEI_BASE_URL: 'http://x', RANKGATE_RERANK: 'tei:rerank' }).length, 5);
    assert.equal(sweepGrid('rerank', { rerank: 'tei:rerank' }, { TEI_BASE_URL: 'http://x' }).length, 5);
    assert.throws(() => sweepGrid('rerank', {}, {}), /the rerank sweep compares no reranker with each configured reranker: name them with RANKGATE_SWEEP_RERANKERS/);
    assert.throws(() => sweepGrid('rerank', {}, { RANKGATE_SWEEP_RERANKERS: 'cohere:rerank:x,bogus:rerank' }), /RANKGATE_SWEEP_RERANKERS\.provider: unknown reranker "bogus:rerank"/);
  });

  test('a column of the rerank sweep keeps its own reranker whatever RANKGATE_RERANK says; other columns take it', async () => {
    const { default: SearchProvider } = await import('../../providers/search.ts');
    const saved = { ...process.env };
    try {
      process.env.TEI_BASE_URL = 'http://127.0.0.1:9';
      process.env.RANKGATE_RERANK = 'tei:rerank';
      process.env.RANKGATE_RERANK_K = '7';
      const swept = new SearchProvider({ config: { rerank: false, sweep: 'rerank', preflight: false } as never });
      assert.equal(swept.params.rerank, null, 'no reranker: the sweep said so');
      const plain = new SearchProvider({ config: { preflight: false } });
      assert.deepEqual(plain.params.rerank, { provider: 'tei:rerank', k: 7 });
      process.env.RANKGATE_RERANK = 'off';
      delete process.env.RANKGATE_RERANK_K;
      assert.equal(new SearchProvider({ config: { rerank: 'tei:rerank', preflight: false } as never }).params.rerank, null, '--no-rerank beats the config');
      process.env.RANKGATE_RERANK = 'tei:rerank,cohere:rerank:x';
      assert.throws(() => new SearchProvider({ config: { preflight: false } }), /one reranker per column; a list is for the rerank sweep/);
    } finally {
      process.env = saved;
    }
  });

  test('rankgate search --rerank ID --rerank-k N / --no-rerank: validated flags', async () => {
    const { searchParamsFromFlags } = await import('../../src/cli/search.ts');
    const saved = process.env.TEI_BASE_URL;
    process.env.TEI_BASE_URL = 'http://127.0.0.1:9';
    try {
      assert.deepEqual(searchParamsFromFlags({ rerank: 'tei:rerank', 'rerank-k': '20' }).rerank, { provider: 'tei:rerank', k: 20 });
      assert.equal(searchParamsFromFlags({ 'no-rerank': true }).rerank, null);
      assert.throws(() => searchParamsFromFlags({ 'rerank-k': '20' }), /--rerank-k: name the reranker with --rerank ID/);
      assert.throws(() => searchParamsFromFlags({ rerank: 'tei:rerank', 'no-rerank': true }), /--no-rerank: not with --rerank/);
      assert.throws(() => searchParamsFromFlags({ rerank: 'voyage:rerank:rerank-2.5' }), /VOYAGE_API_KEY is not set/);
    } finally {
      if (saved === undefined) delete process.env.TEI_BASE_URL;
      else process.env.TEI_BASE_URL = saved;
    }
  });
});
