/**
 * providers/search.ts on its own: module: and url: services (both seed shapes, through rankgate's real HTTP
 * front src/search/http.ts), passage resolution in metadata, one shared service per service identity, and
 * errors / timeouts / malformed JSON becoming `{ error }` rows instead of exceptions.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import SearchProvider, { warmupParams } from '../../providers/search.ts';
import { startSearchServer, type RunningServer } from '../../src/search/http.ts';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';
import { createSearchService } from '../fixtures/harness/fixture-service.ts';
import { FIXTURE } from './helpers.ts';

const golden = GoldenQuerySchema.parse({
  id: 'fx-direct-002',
  query: 'what is love',
  language: 'en',
  category: 'direct',
  expected: [{ passage_substring: 'Love is the thread', grade: 3, relevant: true }, { passage_substring: 'no such text', grade: 1, relevant: false }],
});
const ctx = (query: string) => ({ vars: { query }, test: { metadata: { golden } } });
const moduleProvider = (config: Record<string, unknown> = {}) =>
  new SearchProvider({ id: 'file://providers/search.ts', config: { module: './fixture-service.ts', basePath: FIXTURE, ...config } });

describe('provider: module: services', () => {
  it('returns readable text as output, the ranking in metadata.harness, resolution per index variant and diagnostics', async () => {
    const p = moduleProvider({ chunkSize: 300 });
    const r = await p.callApi('ignored', ctx('what is love'));
    assert.equal(r.error, undefined);
    // Contract C: a person reads the ranked list; 'Love is the thread' resolves to d2#c300-1 (rank 3), the expected passage.
    assert.equal(typeof r.output, 'string');
    const lines = r.output!.split('\n');
    assert.match(lines[0]!, /^route search · expected result at #3 \(grade 3\): notes\/d2\.md · 4 results$/);
    assert.match(r.output!, /^#3 ✓ notes\/d2\.md · expected, grade 3$/m);
    assert.match(r.output!, /^#1 {3}notes\/d2\.md$/m, 'unmarked result: no check mark');
    assert.match(lines[2]!, /^ {4}"Grief softens when it is held with patience\./, 'a snippet under each result');
    assert.doesNotMatch(r.output!, /[{}]"ids"/, 'no JSON');
    assert.deepEqual(r.metadata!.harness!.ids, ['d2#c300-0', 'd3#c300-0', 'd2#c300-1', 'd4#c300-0']);
    assert.deepEqual(r.metadata!.harness!.hits.map((h) => h.rank), [1, 2, 3, 4]);
    assert.equal(r.metadata!.harness!.hits[2]!.documentId, 'd2');
    // compact rows (src/results/compact.ts): a stored hit keeps no per-channel ranks (rankgate search prints them)
    assert.ok(r.metadata!.harness!.hits.every((h) => !('channels' in h)), 'no hit keeps its channels');
    assert.equal(r.metadata!.harness!.practice_bridge, false);
    assert.ok(r.metadata!.harness!.latencyMs >= 0);
    assert.deepEqual(r.metadata!.resolution, { 'Love is the thread': ['d2#c300-1'], 'no such text': [] });
    // compact rows: the ranking returned the expected passage, so its failure bucket never reads the candidates
    assert.deepEqual(r.metadata!.diagnostics!.keywordCandidates, []);
    assert.deepEqual(r.metadata!.harness!.integrity, [], 'integrity computed on the full content');
    assert.equal(r.metadata!.params!.language, 'en', 'the query language goes to the search');
    await p.cleanup();
  });

  it("marks every row of a `promptfoo eval --no-write` run promptfooWrite: false (never a baseline, whatever promptfoo keeps)", async () => {
    const p = moduleProvider({ chunkSize: 300 });
    const kept = await p.callApi('', ctx('what is love'));
    assert.equal((kept.metadata as Record<string, unknown>).promptfooWrite, undefined, 'a kept run says nothing');
    const argv = process.argv;
    process.argv = [argv[0]!, 'promptfoo', 'eval', '--no-write', '-o', 'r.json'];
    try {
      const r = await p.callApi('', ctx('what is love'));
      assert.equal((r.metadata as Record<string, unknown>).promptfooWrite, false);
      assert.deepEqual(r.metadata!.harness!.ids, kept.metadata!.harness!.ids, 'the same ranking');
    } finally {
      process.argv = argv;
      await p.cleanup();
    }
  });

  it('shares one service between columns with the same service settings', async () => {
    const a = moduleProvider({ mode: 'keyword' });
    const b = moduleProvider({ mode: 'semantic' });
    const [sa, sb] = await Promise.all([a.service(), b.service()]);
    assert.equal(sa, sb);
    const c = moduleProvider({ mode: 'keyword', failOn: 'x' });
    assert.notEqual(await c.service(), sa, 'different module config, different service');
    await Promise.all([a.cleanup(), b.cleanup(), c.cleanup()]);
  });

  it('turns service errors, timeouts and a missing query into error rows', async () => {
    const p = moduleProvider({ failOn: 'what is love' });
    assert.match((await p.callApi('', ctx('what is love'))).error!, /search failed: fixture failure for "what is love"/);
    const slow = moduleProvider({ delayMs: 200, timeoutMs: 20, warmup: false });
    assert.match((await slow.callApi('', ctx('what is love'))).error!, /search failed: search timed out after 20 ms/);
    assert.match((await p.callApi('', { vars: {} })).error!, /no vars\.query/);
    const missing = new SearchProvider({ config: { module: './nope.ts', basePath: FIXTURE } });
    assert.match((await missing.callApi('', ctx('what is love'))).error!, /search service unavailable: /);
    await Promise.all([p.cleanup(), slow.cleanup(), missing.cleanup()]);
  });
});

describe('provider: the warm-up runs the column\'s whole pipeline once (issue 42.3)', () => {
  it('its expansion and rerank settings go with the untimed warm-up search, which is no row', async () => {
    const seen: { query: string; params: Record<string, unknown> }[] = [];
    // rankgate's own service's column, its service replaced by a recording one (no index needed)
    class Recording extends SearchProvider {
      override service() {
        return Promise.resolve({
          async search(query: string, params?: Record<string, unknown>) {
            seen.push({ query, params: params ?? {} });
            return { hits: [{ chunkId: 'a', documentId: 'a', rank: 1, score: 1, content: 'x' }], routing: null };
          },
          async close() {},
        } as never);
      }
    }
    const p = new Recording({ config: { basePath: FIXTURE, rerank: { provider: 'tei:rerank', k: 20 }, expansion: 'golden' as never } });
    const r = await p.callApi('', ctx('what is love'));
    assert.equal(r.error, undefined);
    assert.deepEqual(seen.map((x) => x.query), ['warm up', 'what is love'], 'one warm-up, then the row');
    assert.deepEqual(seen[0]!.params.rerank, { provider: 'tei:rerank', k: 20 }, 'the reranker is called in the warm-up');
    assert.deepEqual(seen[0]!.params.expansion, { source: 'golden', mode: 'rrf', queries: ['warm up expansion'] }, 'so is the expansion');
    await p.callApi('', ctx('what is love'));
    assert.equal(seen.filter((x) => x.query === 'warm up').length, 1, 'once per column');
  });

  it('warmupParams keeps the column\'s stages and drops a query\'s filters', () => {
    const rm3 = { source: 'rm3' as const, fbDocs: 10, fbTerms: 10, originalQueryWeight: 0.5 };
    assert.deepEqual(warmupParams({ expansion: rm3, rerank: { provider: 'tei:rerank', k: 50 }, filters: { language: 'en' } }), { expansion: rm3, rerank: { provider: 'tei:rerank', k: 50 }, filters: undefined });
  });
});

describe('provider: url: services', () => {
  let srv: RunningServer;
  let raw: Server;
  let rawUrl = '';
  before(async () => {
    srv = await startSearchServer({ service: createSearchService() });
    raw = createServer((req, res) => {
      if (req.url === '/bad-json/api/v1/search') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"results": [');
      if (req.url === '/error/api/v1/search') return void res.writeHead(500).end('{"error":"boom"}');
      if (req.url === '/slow/api/v1/search') return void setTimeout(() => res.writeHead(200).end('{"results": []}'), 1000);
      if (req.url === '/shape/api/v1/search') return void res.writeHead(200).end('{"hits": []}');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => raw.listen(0, '127.0.0.1', () => r()));
    rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
  });
  after(async () => {
    await srv.close();
    raw.closeAllConnections();
    await new Promise((r) => raw.close(r));
  });

  it('portal shape /api/v1/search: hits, routing and safety from the response', async () => {
    const p = new SearchProvider({ config: { url: `${srv.url}/api/v1/search`, topK: 3 } });
    const r = await p.callApi('', ctx('what is love'));
    assert.equal(r.error, undefined, r.error);
    assert.deepEqual(r.metadata!.harness!.ids, ['d2#c300-0', 'd3#c300-0', 'd2#c300-1']);
    assert.equal(r.metadata!.harness!.hits[0]!.content.startsWith('Grief softens'), true);
    assert.equal(r.metadata!.service, 'url');
    assert.equal(r.metadata!.resolution, undefined, 'no DB access over HTTP: assertions match substrings in content');
    const crisis = await p.callApi('', ctx('i cannot go on'));
    assert.equal(crisis.metadata!.harness!.safety, true);
  });

  it("rankgate serve passes a reranked search's diagnostics.rerank on, and a url: column reads it: the rerank buckets over HTTP", async () => {
    const reranked = await startSearchServer({ service: createSearchService({ stageBudget: 3 }) });
    try {
      const p = new SearchProvider({ config: { url: `${reranked.url}/api/v1/search`, topK: 2 } });
      const r = await p.callApi('', ctx('what is love'));
      assert.equal(r.error, undefined, r.error);
      assert.deepEqual(r.metadata!.diagnostics!.rerank, {
        budget: 3,
        firstStage: ['d2#c300-0', 'd3#c300-0', 'd2#c300-1', 'd4#c300-0'],
        reranker: 'fixture-reranker',
        reranked: ['d2#c300-0', 'd3#c300-0', 'd2#c300-1'],
        ms: 2.5,
        requests: 1,
        costUsd: 0.001,
      });
      // over HTTP a passage substring cannot be placed on an id not returned (no content, no resolution): not diagnosed
      assert.match(r.output!, /^route search · MISS: expected/);
      // a chunk_id reference can: d2#c300-1 reached the budget of 3 but not the 2 results, a reranker-ordering miss
      const byId = GoldenQuerySchema.parse({ ...golden, expected: [{ chunk_id: 'd2#c300-1', grade: 3, relevant: true }] });
      const r2 = await p.callApi('', { vars: { query: 'what is love' }, test: { metadata: { golden: byId } } });
      assert.match(r2.output!, /^route search · MISS \(reranker-ordering miss\): expected chunk d2#c300-1/);
      const nq = await new SearchProvider({ config: { url: `${reranked.url}/search/v1`, mode: 'hybrid', topK: 2 } }).callApi('', ctx('what is love'));
      assert.equal(nq.metadata!.diagnostics!.rerank!.budget, 3, 'the NQ shape carries it too');
    } finally {
      await reranked.close();
    }
  });

  it('NQ shape /search/v1/{mode}: the column mode picks the endpoint', async () => {
    const kw = await new SearchProvider({ config: { url: `${srv.url}/search/v1`, mode: 'keyword' } }).callApi('', ctx('what is love'));
    assert.deepEqual(kw.metadata!.harness!.ids, ['d2#c300-1', 'd2#c300-0']);
    const sem = await new SearchProvider({ config: { url: `${srv.url}/search/v1`, mode: 'semantic' } }).callApi('', ctx('what is love'));
    assert.deepEqual(sem.metadata!.harness!.ids, ['d2#c300-0', 'd3#c300-0']);
  });

  it('malformed JSON, HTTP errors, timeouts, wrong shapes and refused connections become error rows', async () => {
    const call = (url: string, extra: Record<string, unknown> = {}) => new SearchProvider({ config: { url, warmup: false, ...extra } }).callApi('', ctx('what is love'));
    assert.match((await call(`${rawUrl}/bad-json/api/v1/search`)).error!, /returned malformed JSON/);
    assert.match((await call(`${rawUrl}/error/api/v1/search`)).error!, /HTTP 500/);
    assert.match((await call(`${rawUrl}/slow/api/v1/search`, { timeoutMs: 100 })).error!, /timed out after 100 ms/);
    assert.match((await call(`${rawUrl}/shape/api/v1/search`)).error!, /response has no results\[\] array/);
    assert.match((await call('http://127.0.0.1:1/api/v1/search')).error!, /search failed: POST http:\/\/127\.0\.0\.1:1\/api\/v1\/search failed/);
  });
});

describe('provider: config validation (before any query)', () => {
  const make = (config: Record<string, unknown>) => () => new SearchProvider({ id: 'file://providers/search.ts', config: { basePath: FIXTURE, ...config } });
  const userError = (re: RegExp) => (e: unknown) => (e as Error).name === 'UserError' && re.test((e as Error).message);

  it('unknown keys and values are one UserError naming the config file, the key and a did-you-mean', () => {
    assert.throws(make({ rrfk: 60 }), userError(/^test\/fixtures\/harness\/promptfooconfig\.yaml: provider file:\/\/providers\/search\.ts: config: unknown key 'rrfk'; did you mean 'rrfK'\? \(valid: .*\)$/));
    assert.throws(make({ mode: 'hybird' }), userError(/config\.mode: 'hybird' is not valid; did you mean 'hybrid'\?/));
    assert.throws(make({ embedder: 'use-light' }), userError(/config\.embedder: 'use-light' is not valid; did you mean 'use-lite'\?/));
    assert.throws(make({ keywordScorer: 'bm52' }), userError(/did you mean 'bm25'/));
    assert.throws(make({ vectorSearch: 'hnws' }), userError(/did you mean 'hnsw'/));
    assert.throws(make({ weights: { keyword: 1, vektor: 1 } }), userError(/config\.weights: unknown key 'vektor'; did you mean 'vector'\?/));
    assert.throws(make({ topK: 0 }), userError(/config\.topK: expected an integer from 1 to 1000, got 0/));
    assert.throws(make({ timeoutMs: '5s' }), userError(/config\.timeoutMs: expected a number/));
    assert.throws(make({ url: 'ftp://x/search' }), userError(/config\.url: expected an http:\/\/ or https:\/\/ URL/));
    assert.throws(make({ url: 'http://x/search', module: './m.ts' }), userError(/either 'url' or 'module', not both/));
    assert.throws(make({ filters: { folder: 'a' } }), userError(/config\.filters: unknown key 'folder'/));
    assert.throws(make({ routingConfig: 3 }), userError(/routingConfig: expected a path to a routing YAML or false/));
  });

  it('module: passes its own keys through, refuses near misses of provider keys, and is not checked for embedder ids', () => {
    assert.doesNotThrow(make({ module: './fixture-service.ts', failOn: 'x', delayMs: 5, embedder: 'my-own-model' }));
    assert.throws(make({ module: './fixture-service.ts', topk: 3 }), userError(/unknown key 'topk'; did you mean 'topK'\?/));
    assert.doesNotThrow(make({ url: 'http://127.0.0.1:9/api/v1/search', mode: 'keyword', urlShape: 'nq' }));
    assert.throws(make({ url: 'http://127.0.0.1:9/api/v1/search', failOn: 'x' }), userError(/unknown key 'failOn'/));
  });

  it('expansion: one line naming the field; a url:/module: service refuses it; RANKGATE_EXPANSION beats the config', () => {
    assert.throws(make({ expansion: 'goldn' }), userError(/^test\/fixtures\/harness\/promptfooconfig\.yaml: provider file:\/\/providers\/search\.ts: config\.expansion: unknown expansion 'goldn': expected one of golden, golden-append, rm3, rewrites, hyde, off/));
    assert.throws(make({ expansion: { source: 'rm3', fbTerm: 5 } }), userError(/config\.expansion\.fbTerm: unknown key for source rm3 \(expected source, fbDocs, fbTerms, originalQueryWeight\)$/));
    assert.throws(make({ expansion: { source: 'llm', provider: 'openai:chat:m', prompt: 'missing-prompt.txt' } }), userError(/config\.expansion\.prompt: no such prompt file .*missing-prompt\.txt$/));
    assert.throws(make({ expansion: 'golden', module: './fixture-service.ts' }), userError(/config\.expansion: query expansion is a stage of rankgate's own service; a module: service expands queries itself/));
    assert.deepEqual(make({ expansion: { source: 'rm3', fbDocs: 5 } })().params.expansion, { source: 'rm3', fbDocs: 5, fbTerms: 10, originalQueryWeight: 0.5 });
    const saved = process.env.RANKGATE_EXPANSION;
    try {
      process.env.RANKGATE_EXPANSION = 'golden-append';
      assert.deepEqual(make({ expansion: 'rm3' })().params.expansion, { source: 'golden', mode: 'append' });
      process.env.RANKGATE_EXPANSION = 'off';
      assert.equal(make({ expansion: 'rm3' })().params.expansion, null);
      process.env.RANKGATE_EXPANSION = 'rm5';
      assert.throws(make({}), userError(/^RANKGATE_EXPANSION \(--expansion\): unknown expansion 'rm5'/));
    } finally {
      if (saved === undefined) delete process.env.RANKGATE_EXPANSION;
      else process.env.RANKGATE_EXPANSION = saved;
    }
  });

  it('a subclass may declare the extra keys it reads (the BEIR bench provider: benchRows)', async () => {
    const { default: Beir } = await import('../../bench/beir/provider.ts');
    assert.doesNotThrow(() => new Beir({ config: { basePath: FIXTURE, module: './fixture-service.ts', benchRows: 10 } }));
    assert.throws(make({ benchRows: 10 }), userError(/unknown key 'benchRows'/));
  });
});
