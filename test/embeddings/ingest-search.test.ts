/**
 * Ingest + semantic search with every HTTP embedder family against the fakes on 127.0.0.1
 * (test/helpers/fake-embedding-apis.ts), in one PGlite index that already holds c300:use-lite.
 *
 * In process (one database open): each family ingests (the plan comes first: chunks, tokens, cost where the list
 * price is known), a semantic search finds the chunk holding the query's words, the variant records embedder, model,
 * dimension and endpoint host; a 3,072-d model gets a halfvec HNSW index and searches through it (= exact search);
 * re-ingesting sends nothing (cache keyed by id|dimension|input type); the same id answering with another dimension is
 * refused naming both; a wrong dimension, a malformed body, an empty data list and a dead endpoint leave the database
 * as it was.
 *
 * Through the CLI (a keyed run): ingest, search, a dead endpoint (exit 2, one line naming endpoint and model, every
 * variant and the cache as they were), embed-cache export; then no API key in any byte rankgate wrote or printed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS, ROOT, assertNoStack, copyIndexFixture, killChildren, promptfooEval, rankgate, type RunResult } from '../reliability/helpers.ts';
import {
  emptyData,
  fakeEnv,
  malformed,
  refusedUrl,
  startFakeEmbeddingApi,
  wrongDimension,
  type FakeEmbeddingApi,
  type Reply,
  type Vendor,
} from '../helpers/fake-embedding-apis.ts';
import { createEmbedder, EmbedderCallError } from '../../src/embeddings/index.ts';
import { isUserError } from '../../src/errors.ts';
import { ingestCorpus, type IngestPlan } from '../../src/ingest/pipeline.ts';
import { readCorpus } from '../../src/ingest/readers.ts';
import { openDatabase, type Db } from '../../src/db/index.ts';
import { createSearchService, type SearchService } from '../../src/search/service.ts';
import type { CorpusDocument } from '../../src/ingest/types.ts';

const FAMILIES: { vendor: Vendor; id: string; dim: number; price: boolean }[] = [
  { vendor: 'voyage', id: 'voyage:voyage-3-large', dim: 1024, price: true },
  { vendor: 'cohere', id: 'cohere:embedding:embed-english-v3.0', dim: 1024, price: true },
  { vendor: 'openai', id: 'openai:embedding:BAAI/bge-m3', dim: 1024, price: false },
  { vendor: 'ollama', id: 'ollama:embeddings:bge-m3', dim: 1024, price: false },
  { vendor: 'openai', id: 'openai:embedding:text-embedding-3-large', dim: 3072, price: true },
];
const QUERY = 'the heron stands in the shallows';

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (statSync(p).isFile()) out.push(p);
  }
  return out;
}

const fakes = new Map<Vendor, FakeEmbeddingApi>();
const allEnv = () => Object.assign({}, ...[...fakes.values()].map(fakeEnv)) as Record<string, string>;
const keys = () => [...fakes.values()].map((f) => f.key);
let dbDir: string;

before(async () => {
  for (const v of ['openai', 'voyage', 'cohere', 'ollama'] as Vendor[]) fakes.set(v, await startFakeEmbeddingApi(v));
  dbDir = await copyIndexFixture('embedders');
});
after(async () => {
  killChildren();
  for (const f of fakes.values()) await f.close();
  rmSync(join(dbDir, '..'), { recursive: true, force: true });
});

describe('in process: ingest and semantic search per embedder family', () => {
  let db: Db;
  let svc: SearchService;
  let documents: CorpusDocument[];
  before(async () => {
    db = await openDatabase({ dataDir: dbDir, access: 'write' });
    // the service embeds queries with the same embedders (pointed at the fakes), not ones built from process.env
    const embedders = await Promise.all(FAMILIES.map((f) => createEmbedder(f.id, { env: allEnv(), retryBaseMs: 1 })));
    svc = await createSearchService({ db, routing: false, embedders });
    documents = await readCorpus(CORPUS);
  });
  after(async () => {
    await svc.close();
    await db.close();
  });
  const ingest = async (id: string, extra: { chunkSizes?: number[]; replace?: boolean; env?: Record<string, string> } = {}) => {
    const embedder = await createEmbedder(id, { env: { ...allEnv(), ...(extra.env ?? {}) }, retryBaseMs: 1, attempts: 2 });
    const plans: IngestPlan[] = [];
    const stats = await ingestCorpus({ db, documents, chunkSizes: extra.chunkSizes ?? [300], embedder, corpusPath: CORPUS, replace: extra.replace, onPlan: (p) => plans.push(p) });
    return { stats, plans, embedder };
  };

  for (const f of FAMILIES) {
    it(`${f.id}: plan before sending, ingest, semantic search (hnsw and exact), variant record`, async () => {
      const fake = fakes.get(f.vendor)!;
      fake.clear();
      const sentBeforePlan: number[] = [];
      const embedder = await createEmbedder(f.id, { env: allEnv(), retryBaseMs: 1 });
      const plans: IngestPlan[] = [];
      const stats = await ingestCorpus({
        db, documents, chunkSizes: [300], embedder, corpusPath: CORPUS,
        onPlan: (p) => (plans.push(p), sentBeforePlan.push(fake.requests.length)),
      });
      assert.deepEqual(sentBeforePlan, [0], 'nothing was sent before the plan');
      const [p] = plans;
      assert.equal(p!.variant, `c300:${f.id}`);
      assert.equal(p!.dimension, f.dim);
      assert.equal(p!.cached, 0);
      assert.equal(p!.toEmbed, stats.variants[0]!.embedded);
      assert.ok(p!.tokens > 0);
      assert.equal(p!.costUsd !== undefined, f.price);
      if (f.price) assert.ok(Math.abs(p!.costUsd! - (p!.tokens / 1e6) * p!.pricePerMTok!) < 1e-12);
      assert.equal(fake.requests.reduce((s, q) => s + q.texts.length, 0), p!.toEmbed);
      for (const vectorSearch of ['hnsw', 'exact'] as const) {
        const res = await svc.search(QUERY, { chunkSize: 300, embedder: f.id, mode: 'semantic', vectorSearch });
        assert.equal(res.diagnostics.variant, `c300:${f.id}`);
        assert.match(res.hits[0]!.content, /A heron stands in the shallows/, `${vectorSearch}: the chunk with the query words ranks first`);
      }
      const q = fake.requests.at(-1)!;
      if (f.vendor === 'voyage') assert.equal(q.body.input_type, 'query');
      if (f.vendor === 'cohere') assert.equal(q.body.input_type, 'search_query');
    });
  }

  it('the variants record embedder, model, dimension and endpoint host; 3,072-d gets a halfvec HNSW index', async () => {
    const r = await db.pool.query<{ name: string; dimension: number; params: any }>('SELECT name, dimension, params FROM index_variants ORDER BY name');
    const large = r.rows.find((x) => x.name === 'c300:openai:embedding:text-embedding-3-large')!;
    assert.equal(large.dimension, 3072);
    assert.equal(large.params.vectorIndex, 'halfvec');
    assert.deepEqual(large.params.embedder, {
      id: 'openai:embedding:text-embedding-3-large', family: 'openai', model: 'text-embedding-3-large', dimension: 3072, endpoint: new URL(fakes.get('openai')!.baseUrl).host,
    });
    const voyage = r.rows.find((x) => x.name === 'c300:voyage:voyage-3-large')!;
    assert.equal(voyage.params.vectorIndex, 'vector');
    const idx = await db.pool.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'book_chunks_hnsw_v%' AND indexdef LIKE '%halfvec%'`);
    assert.equal(idx.rows.length, 1);
    assert.match(idx.rows[0]!.indexdef, /halfvec\(3072\)\) halfvec_cosine_ops/);
    const cacheKeys = await db.pool.query<{ embedder: string }>('SELECT DISTINCT embedder FROM embedding_cache ORDER BY 1');
    // the producer: a server that is not the vendor's own (the fake on 127.0.0.1) is named in the key
    assert.ok(cacheKeys.rows.some((k) => k.embedder === `voyage:voyage-3-large|1024|document|${new URL(fakes.get('voyage')!.baseUrl).host}`), JSON.stringify(cacheKeys.rows));
  });

  it('re-ingesting sends nothing; another chunk size sends only the new texts', async () => {
    const fake = fakes.get('voyage')!;
    fake.clear();
    const again = await ingest('voyage:voyage-3-large');
    assert.equal(again.plans[0]!.toEmbed, 0);
    assert.equal(again.stats.variants[0]!.embedded, 0);
    assert.equal(fake.requests.length, 0);
    const smaller = await ingest('voyage:voyage-3-large', { chunkSizes: [24] });
    assert.ok(smaller.plans[0]!.cached > 0 && smaller.plans[0]!.toEmbed > 0, JSON.stringify(smaller.plans[0]));
    assert.equal(fake.requests.reduce((s, q) => s + q.texts.length, 0), smaller.plans[0]!.toEmbed);
  });

  it('the same id answering with another dimension (another model behind the name) is refused naming both', async () => {
    const other = await startFakeEmbeddingApi('ollama', { models: { 'my-own-embedder': 640 } });
    const other2 = await startFakeEmbeddingApi('ollama', { models: { 'my-own-embedder': 320 } });
    try {
      await ingest('ollama:embeddings:my-own-embedder', { env: fakeEnv(other) });
      await assert.rejects(ingest('ollama:embeddings:my-own-embedder', { env: fakeEnv(other2) }), (e: Error) => {
        assert.match(e.message, /index variant c300:ollama:embeddings:my-own-embedder holds vectors of my-own-embedder, 640-d from 127\.0\.0\.1:\d+, but this embedder gives my-own-embedder, 320-d from 127\.0\.0\.1:\d+: vectors of two models never share a variant; pass --replace/);
        return true;
      });
      const replaced = await ingest('ollama:embeddings:my-own-embedder', { env: fakeEnv(other2), replace: true });
      assert.equal(replaced.stats.variants[0]!.dimension, 320);
      assert.equal(replaced.plans[0]!.cached, 0, 'the 640-d cache entries are another key');
    } finally {
      await other.close();
      await other2.close();
    }
  });

  const failures: [string, Vendor, string, Reply | 'refused', RegExp][] = [
    ['a wrong dimension in the answer', 'cohere', 'cohere:embedding:embed-english-v3.0', wrongDimension(5), /malformed answer: vector 0 has 5 dimensions, expected 1024/],
    ['a malformed body', 'openai', 'openai:embedding:BAAI/bge-m3', malformed(), /malformed answer \(HTTP 200\): not JSON/],
    ['an empty data list', 'voyage', 'voyage:voyage-3-large', emptyData(), /malformed answer: "data" is empty/],
    ['a dead endpoint', 'ollama', 'ollama:embeddings:bge-m3', 'refused', /failed after 2 attempts: no answer \(ECONNREFUSED\)/],
    // hostile answers: the error names the text the bad vector was for (a chunk of a corpus document)
    ['an all-zero vector', 'ollama', 'ollama:embeddings:bge-m3', { transform: (b: any) => ({ ...b, embeddings: b.embeddings.map((v: number[], i: number) => (i === 1 ? v.map(() => 0) : v)) }) },
      /malformed answer: vector 1 is all zeros \(no direction to compare\); answer for chunk \S+ of document [^;]+; the index variant being built was not written/],
    ['rows in another order with index missing', 'openai', 'openai:embedding:BAAI/bge-m3', { transform: (b: any) => ({ ...b, data: b.data.map(({ index: _i, ...r }: any) => r) }) },
      /malformed answer: data\[0\]\.index is missing or not an integer \(null\); answer for chunk \S+ of document [^;]+/],
    ['a repeated index', 'voyage', 'voyage:voyage-3-large', { transform: (b: any) => ({ ...b, data: b.data.map((r: any) => ({ ...r, index: r.index === 1 ? 0 : r.index })) }) },
      /malformed answer: data\[\d+\]\.index 0 repeats data\[\d+\]\.index; answer for chunk \S+ of document [^;]+/],
  ];
  for (const [label, vendor, id, reply, why] of failures) {
    it(`${label}: a clear error naming endpoint and model; nothing written`, async () => {
      const fake = fakes.get(vendor)!;
      fake.clear();
      const snapshot = async () =>
        JSON.stringify((await db.pool.query('SELECT v.name, v.chunk_count, (SELECT count(*) FROM book_chunks c WHERE c.variant = v.id) AS n FROM index_variants v ORDER BY v.name')).rows);
      const before = await snapshot();
      let env: Record<string, string> = {};
      if (reply === 'refused') env = { OLLAMA_BASE_URL: await refusedUrl() };
      else for (let i = 0; i < 3; i++) fake.enqueue(reply);
      // chunk size 20: texts not in the cache, a variant that does not exist yet
      await assert.rejects(ingest(id, { chunkSizes: [20], env }), (e: unknown) => {
        // a call that failed stays the embedder's error; a wrong answer is the user's error naming the text (exit 2)
        if (reply === 'refused') assert.ok(e instanceof EmbedderCallError, String(e));
        else assert.ok(isUserError(e) && e.exitCode === 2, String(e));
        const msg = (e as Error).message;
        assert.ok(msg.startsWith(`${reply === 'refused' ? '' : 'embedder '}${id} at ${env.OLLAMA_BASE_URL ?? fake.baseUrl}`), msg);
        assert.match(msg, why);
        assert.doesNotMatch(msg, /\n/);
        return true;
      });
      assert.equal(await snapshot(), before);
    });
  }
});

describe('through the CLI: a keyed run, exit 2 on a dead endpoint, and no key anywhere', () => {
  const outputs: RunResult[] = [];
  const run = async (args: string[], extra: Record<string, string> = {}) => {
    const r = await rankgate(args, { DATABASE_URL: undefined, ...allEnv(), ...extra }, 120_000);
    outputs.push(r);
    return r;
  };

  it('ingest prints the plan line and progress, search answers, a dead endpoint is exit 2 and one line, the files untouched', async () => {
    for (const f of fakes.values()) f.clear();
    const r = await run(['ingest', '--db', dbDir, '--corpus', CORPUS, '--chunk-size', '300', '--embedder', 'voyage:voyage-3.5']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /ingest c300:voyage:voyage-3\.5: 7 chunks, 7 texts to embed with voyage:voyage-3\.5 \(voyage-3\.5, 1024-d at 127\.0\.0\.1:\d+\) \(0 cached\), ~[\d,]+ tokens \(o200k estimate\), about \$[\d.]+ at \$0\.06\/M tokens list price/);
    assert.match(r.stderr, /ingest c300:voyage:voyage-3\.5: embedded 7 new texts, [\d.]+ chunks\/s/);
    assert.match(r.stdout, /c300:voyage:voyage-3\.5\s+7 chunks\s+embedded 7, cached 0/);
    const s = await run(['search', '--db', dbDir, '--chunk-size', '300', '--embedder', 'voyage:voyage-3.5', '--mode', 'semantic', '--no-routing', QUERY]);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /heron stands in the shallows/);

    const snapshot = async () => {
      const d = await openDatabase({ dataDir: dbDir, access: 'read' });
      try {
        const q = 'SELECT v.name, v.built_at::text, (SELECT count(*) FROM book_chunks c WHERE c.variant = v.id) AS n, (SELECT count(*) FROM embedding_cache) AS cached FROM index_variants v ORDER BY v.name';
        return JSON.stringify((await d.pool.query(q)).rows);
      } finally {
        await d.close();
      }
    };
    const before = await snapshot();
    const dead = await refusedUrl();
    const d = await run(['ingest', '--db', dbDir, '--corpus', CORPUS, '--chunk-size', '300', '--embedder', 'voyage:voyage-3-lite'], { VOYAGE_API_BASE_URL: `${dead}/v1`, RANKGATE_EMBED_CALL_TIMEOUT_MS: '3000' });
    assert.equal(d.code, 2, d.stdout + d.stderr);
    assertNoStack(d.stderr);
    const lines = d.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('ingest c300:'));
    assert.equal(lines.length, 1, d.stderr);
    assert.match(lines[0]!, new RegExp(`^rankgate ingest: embedder voyage:voyage-3-lite at ${dead}/v1/embeddings: failed after \\d attempts: no answer \\(ECONNREFUSED\\)(.*)?; the index variant being built was not written`));
    assert.equal(await snapshot(), before, 'every variant, its build time, its chunks and the cache as they were');
  });

  it('a hostile embedding API (rows reversed, index dropped; then all-zero vectors; then 1e200 values): exit 2 in one line naming the chunk, nothing written; 1e200 indexes right', async () => {
    const hostile = await startFakeEmbeddingApi('openai');
    try {
      const snapshot = async () => {
        const d = await openDatabase({ dataDir: dbDir, access: 'read' });
        try {
          const q = 'SELECT v.name, v.built_at::text, (SELECT count(*) FROM book_chunks c WHERE c.variant = v.id) AS n, (SELECT count(*) FROM embedding_cache) AS cached FROM index_variants v ORDER BY v.name';
          return JSON.stringify((await d.pool.query(q)).rows);
        } finally {
          await d.close();
        }
      };
      const before = await snapshot();
      const args = ['ingest', '--db', dbDir, '--corpus', CORPUS, '--chunk-size', '300', '--embedder', 'openai:embedding:text-embedding-3-small'];
      const cases: [Reply, RegExp][] = [
        [{ transform: (b: any) => ({ ...b, data: b.data.map(({ index: _i, ...r }: any) => r) }) }, /malformed answer: data\[0\]\.index is missing or not an integer \(null\); answer for chunk \S+ of document [^;]+; the index variant being built was not written/],
        [{ transform: (b: any) => ({ ...b, data: b.data.map((r: any) => ({ ...r, embedding: r.embedding.map(() => 0) })) }) }, /malformed answer: vector 0 is all zeros \(no direction to compare\); answer for chunk \S+ of document [^;]+/],
      ];
      for (const [reply, re] of cases) {
        hostile.clear();
        hostile.enqueue(reply);
        const r = await run(args, fakeEnv(hostile));
        assert.equal(r.code, 2, r.stdout + r.stderr);
        assertNoStack(r.stderr);
        const lines = r.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('ingest c300:'));
        assert.equal(lines.length, 1, r.stderr);
        assert.match(lines[0]!, /^rankgate ingest: embedder openai:embedding:text-embedding-3-small at http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings: /);
        assert.match(lines[0]!, re);
        assert.equal(await snapshot(), before, 'no variant, chunk or cached vector written');
      }
      // finite values of 1e200: normalised in a scaled way, indexed on the right texts (the lake query finds the lake)
      hostile.clear();
      hostile.enqueue({ transform: (b: any) => ({ ...b, data: b.data.map((r: any) => ({ ...r, embedding: r.embedding.map((x: number) => x * 1e200) })) }) });
      const ok = await run(args, fakeEnv(hostile));
      assert.equal(ok.code, 0, ok.stderr);
      const s = await run(['search', '--db', dbDir, '--chunk-size', '300', '--embedder', 'openai:embedding:text-embedding-3-small', '--mode', 'semantic', '--no-routing', QUERY], fakeEnv(hostile));
      assert.equal(s.code, 0, s.stderr);
      assert.match(s.stdout, /heron stands in the shallows/);
    } finally {
      await hostile.close();
    }
  });

  it('a real promptfoo eval with corpus: against a hostile embedding API (index dropped; all-zero vectors): exit 2 in one line naming embedder, check and chunk, before any row; no results, nothing written', async () => {
    const hostile = await startFakeEmbeddingApi('openai');
    try {
      const snapshot = async () => {
        const d = await openDatabase({ dataDir: dbDir, access: 'read' });
        try {
          const q = 'SELECT v.name, v.built_at::text, (SELECT count(*) FROM book_chunks c WHERE c.variant = v.id) AS n, (SELECT count(*) FROM embedding_cache) AS cached FROM index_variants v ORDER BY v.name';
          return JSON.stringify((await d.pool.query(q)).rows);
        } finally {
          await d.close();
        }
      };
      const before = await snapshot();
      const dir = join(dbDir, '..', 'eval-hostile');
      mkdirSync(dir, { recursive: true });
      const config = join(dir, 'promptfooconfig.yaml');
      // chunk size 20: a variant that does not exist and texts that are not cached, so the eval's provider ingests
      writeFileSync(
        config,
        [
          'prompts: ["{{query}}"]',
          'providers:',
          `  - id: file://${join(ROOT, 'providers', 'search.ts')}`,
          '    label: hostile embedder',
          `    config: { mode: semantic, embedder: "openai:embedding:text-embedding-3-small", chunkSize: 20, dataDir: "${dbDir}", corpus: "${CORPUS}", routingConfig: false }`,
          'tests:',
          `  - vars: { query: "${QUERY}" }`,
          '  - vars: { query: "still water" }',
        ].join('\n') + '\n',
      );
      const cases: [string, Reply, RegExp][] = [
        ['index dropped', { transform: (b: any) => ({ ...b, data: b.data.map(({ index: _i, ...r }: any) => r) }) }, /malformed answer: data\[0\]\.index is missing or not an integer \(null\); answer for chunk \S+ of document [^;]+; the index variant being built was not written/],
        ['all-zero vectors', { transform: (b: any) => ({ ...b, data: b.data.map((r: any) => ({ ...r, embedding: r.embedding.map(() => 0) })) }) }, /malformed answer: vector 0 is all zeros \(no direction to compare\); answer for chunk \S+ of document [^;]+/],
      ];
      for (const [name, reply, re] of cases) {
        hostile.clear();
        for (let i = 0; i < 5; i++) hostile.enqueue(reply);
        const out = join(dir, `results-${name.replace(/\W+/g, '-')}.json`);
        const r = await promptfooEval(config, out, { DATABASE_URL: undefined, ...allEnv(), ...fakeEnv(hostile), PROMPTFOO_CONFIG_DIR: join(dir, 'pf') }).result;
        outputs.push(r);
        assert.equal(r.code, 2, `${name}: ${r.stdout.slice(-1500)}${r.stderr.slice(-1500)}`);
        assert.ok(hostile.requests.length > 0, `${name}: the provider asked the hostile API`);
        assertNoStack(r.stdout + r.stderr);
        const lines = (r.stdout + r.stderr).split('\n').filter((l) => /malformed answer|search failed|search service unavailable/.test(l));
        assert.equal(lines.length, 1, `${name}: one line, not one per row:\n${r.stderr}`);
        assert.match(lines[0]!, /^rankgate: embedder openai:embedding:text-embedding-3-small at http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings: /, name);
        assert.match(lines[0]!, re, name);
        assert.equal(existsSync(out), false, `${name}: no results written (no row measured)`);
        assert.equal(await snapshot(), before, `${name}: no variant, chunk or cached vector written`);
      }
    } finally {
      await hostile.close();
    }
  });

  it('a promptfoo eval through the provider with the keyed embedder (results JSON, promptfoo\'s own store)', async () => {
    const dir = join(dbDir, '..', 'eval');
    mkdirSync(dir, { recursive: true });
    const config = join(dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      [
        'prompts: ["{{query}}"]',
        'providers:',
        `  - id: file://${join(ROOT, 'providers', 'search.ts')}`,
        '    label: semantic voyage-3-large 1024-d',
        `    config: { mode: semantic, embedder: "voyage:voyage-3-large", chunkSize: 300, dataDir: "${dbDir}", corpus: "${CORPUS}", routingConfig: false }`,
        'tests:',
        `  - vars: { query: "${QUERY}" }`,
        String.raw`    assert: [{ type: javascript, value: '/#1\s+Silent Lake/.test(output)' }]`,
        '  - vars: { query: "still water" }',
      ].join('\n') + '\n',
    );
    const r = await promptfooEval(config, join(dir, 'results.json'), { DATABASE_URL: undefined, ...allEnv(), PROMPTFOO_CONFIG_DIR: join(dir, 'pf') }).result;
    outputs.push(r);
    assert.equal(r.code, 0, r.stdout.slice(-1500) + r.stderr.slice(-1500));
    const results = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
    assert.equal(results.results.stats.successes, 2, JSON.stringify(results.results.results.map((x: any) => [x.error, x.gradingResult?.reason, String(x.response?.output).slice(0, 300)])));
  });

  it('no API key in any file rankgate wrote or any line it printed', async () => {
    const exported = join(dbDir, '..', 'cache.jsonl');
    const r = await run(['embed-cache', 'export', exported, '--db', dbDir, '--embedder', 'voyage:voyage-3.5']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /cache\.jsonl: 7 embeddings/);
    assert.match(readFileSync(exported, 'utf8'), /"embedder":"voyage:voyage-3\.5\|1024\|document\|127\.0\.0\.1:\d+"/);
    const files = filesUnder(join(dbDir, '..'));
    assert.ok(files.length > 10);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const k of keys()) assert.equal(bytes.indexOf(k), -1, `${file} holds ${k}`);
    }
    assert.equal(outputs.length, 11);
    assert.ok(files.some((f) => f.endsWith('results.json')) && files.some((f) => f.includes(`${join('eval', 'pf')}`)), 'the eval results and promptfoo\'s store are among the files');
    for (const o of outputs) for (const k of keys()) assert.ok(!(o.stdout + o.stderr).includes(k), `output holds ${k}`);
  });
});
