/**
 * The query-expansion stage of rankgate's service (src/search/expand.ts) on the fixture index: RM3 against a
 * hand-computed example and against an independent reading of the index (the weighted BM25 SQL is the weighted sum of
 * its terms' BM25 scores), golden `expansion:` fused by RRF or appended, LLM rewrites and HyDE against the fake chat
 * API (cached: a re-run sends nothing; a failing model is a failed search, never an unexpanded one), and the settings.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSearchService, fuseRrfLists, type SearchService } from '../../src/search/service.ts';
import { expansionFromEnv, parseExpansionSetting, parseRewrites, rm3Query, RM3_DEFAULTS, type FeedbackDoc } from '../../src/search/expand.ts';
import { loadSql } from '../../src/db/index.ts';
import { isUserError } from '../../src/errors.ts';
import type { SearchParams } from '../../src/search/types.ts';
import { ENGINES, HashEmbedder } from './fixture.ts';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.ts';

const emb = new HashEmbedder(64);
const base: Partial<SearchParams> = { chunkSize: 48, embedder: emb.id, routing: false };
const ids = (r: { hits: { chunkId: string }[] }) => r.hits.map((h) => h.chunkId);
const userError = (re: RegExp) => (e: unknown) => isUserError(e) && re.test((e as Error).message) && !(e as Error).message.includes('\n');

test('rm3Query: the hand-computed example (Anserini: prune per document, L1, weight by score, prune, interpolate)', () => {
  const t = (tf: number, df: number) => ({ tf, df });
  // n = 100: a term in more than 10 documents is left out (zz, df 50); x is too short (one character)
  const docs: FeedbackDoc[] = [
    { score: 2, terms: new Map([['aa', t(2, 5)], ['cc', t(1, 3)], ['ee', t(1, 4)], ['zz', t(5, 50)]]) },
    { score: 1, terms: new Map([['cc', t(3, 3)], ['ee', t(1, 4)], ['x', t(4, 1)]]) },
    { score: 5, terms: new Map([['gg', t(9, 2)]]) }, // past fbDocs
  ];
  const got = rm3Query(new Map([['aa', 1], ['bb', 1]]), docs, 100, { fbDocs: 2, fbTerms: 2, originalQueryWeight: 0.5 });
  // d1 pruned to {aa: 2, cc: 1} (cc before ee on the tie), |d1| = 3; d2 {cc: 3, ee: 1}, |d2| = 4
  // RM: aa = 2/3*2 = 16/12, cc = 1/3*2 + 3/4*1 = 17/12, ee = 1/4 -> pruned to cc, aa -> cc 17/33, aa 16/33
  // w = 0.5 q + 0.5 RM: aa = 1/4 + 8/33, cc = 17/66, bb = 1/4
  const want = [
    { term: 'aa', weight: 0.25 + 8 / 33 },
    { term: 'cc', weight: 17 / 66 },
    { term: 'bb', weight: 0.25 },
  ];
  assert.deepEqual(got.map((x) => x.term), want.map((x) => x.term));
  for (let i = 0; i < want.length; i++) assert.ok(Math.abs(got[i]!.weight - want[i]!.weight) < 1e-12, `${want[i]!.term}: ${got[i]!.weight}`);
  assert.ok(Math.abs(got.reduce((a, x) => a + x.weight, 0) - 1) < 1e-12, 'the weights sum to 1');
  // originalQueryWeight 1: the query alone; no feedback documents: the query alone
  assert.deepEqual(rm3Query(new Map([['aa', 1], ['bb', 1]]), docs, 100, { fbDocs: 2, fbTerms: 2, originalQueryWeight: 1 }).map((x) => x.term), ['aa', 'bb']);
  assert.deepEqual(rm3Query(new Map([['aa', 2], ['bb', 1]]), [], 100, RM3_DEFAULTS).map((x) => [x.term, +x.weight.toFixed(6)]), [['aa', +(1 / 3).toFixed(6)], ['bb', +(1 / 6).toFixed(6)]]);
});

test('parseRewrites: one a line, numbering and quotes stripped, the query and repeats left out, at most n', () => {
  assert.deepEqual(parseRewrites('1. calm breathing\n- "slow breaths"\n\nCalm Breathing\nbreath and anxiety\nextra one', 'breath and anxiety', 3), ['calm breathing', 'slow breaths', 'extra one']);
});

test('expansion settings: shorthands, objects, one line naming the field for anything else', () => {
  assert.deepEqual(parseExpansionSetting('golden', 'x'), { source: 'golden', mode: 'rrf' });
  assert.deepEqual(parseExpansionSetting('golden-append', 'x'), { source: 'golden', mode: 'append' });
  assert.deepEqual(parseExpansionSetting('rm3', 'x'), { source: 'rm3', fbDocs: 10, fbTerms: 10, originalQueryWeight: 0.5 });
  assert.deepEqual(parseExpansionSetting({ source: 'rm3', fbDocs: 5 }, 'x'), { source: 'rm3', fbDocs: 5, fbTerms: 10, originalQueryWeight: 0.5 });
  assert.equal(parseExpansionSetting(false, 'x'), null);
  assert.equal(parseExpansionSetting('off', 'x'), null);
  const llm = parseExpansionSetting('rewrites', 'x', { provider: 'openai:chat:m' });
  assert.equal(llm?.source === 'llm' && llm.n, 3);
  assert.throws(() => parseExpansionSetting('goldn', 'config.expansion'), userError(/^config\.expansion: unknown expansion 'goldn': expected one of golden, golden-append, rm3, rewrites, hyde, off/));
  assert.throws(() => parseExpansionSetting({ source: 'rm3', fbdocs: 5 }, 'config.expansion'), userError(/^config\.expansion\.fbdocs: unknown key for source rm3/));
  assert.throws(() => parseExpansionSetting({ source: 'rm3', originalQueryWeight: 2 }, 'e'), userError(/^e\.originalQueryWeight: expected a number from 0 to 1, got 2/));
  assert.throws(() => parseExpansionSetting({ source: 'golden', mode: 'concat' }, 'e'), userError(/^e\.mode: expected rrf or append/));
  assert.throws(() => parseExpansionSetting('hyde', 'e'), userError(/^e\.provider: expected a promptfoo chat provider id/));
  assert.throws(() => parseExpansionSetting({ source: 'llm', provider: 'openai:chat:m', prompt: 'nope.txt' }, 'e', { basePath: tmpdir() }), userError(/^e\.prompt: no such prompt file/));
  // the environment beats the config; off turns the config's off; a team's service has no stage of ours
  assert.deepEqual(expansionFromEnv('rm3', { RANKGATE_EXPANSION: 'golden' }), { source: 'golden', mode: 'rrf' });
  assert.equal(expansionFromEnv('rm3', { RANKGATE_EXPANSION: 'off' }), null);
  assert.equal(expansionFromEnv('rm3', {}), undefined);
  assert.throws(() => expansionFromEnv(undefined, { RANKGATE_EXPANSION: 'rm4' }), userError(/^RANKGATE_EXPANSION \(--expansion\): unknown expansion 'rm4'/));
  assert.throws(() => expansionFromEnv(undefined, { RANKGATE_EXPANSION: 'golden' }, true), userError(/url:\/module: service/));
  const env = expansionFromEnv(undefined, { RANKGATE_EXPANSION: 'hyde', RANKGATE_EXPANSION_PROVIDER: 'anthropic:messages:claude' });
  assert.equal(env?.source === 'llm' && `${env.kind} ${env.provider}`, 'hyde anthropic:messages:claude');
});

for (const engine of ENGINES) {
  describe(`query expansion on the fixture index (${engine.name})`, { skip: engine.skip }, () => {
    let svc: SearchService;
    let db: Awaited<ReturnType<typeof engine.open>>;
    let dir: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'rankgate-expand-'));
      db = await engine.open();
      svc = await createSearchService({ db, embedder: emb, routing: false, defaults: base, expansionCacheDir: join(dir, 'cache') });
    });
    after(async () => {
      await svc?.close();
      await db?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('RM3: the weighted query from the first pass, scored as sum_t w(t) * BM25(t, d)', async () => {
      const q = 'slow breath calms the heart';
      const plain = await svc.search(q, { mode: 'keyword', topK: 20 });
      const r = await svc.search(q, { mode: 'keyword', topK: 20, expansion: { source: 'rm3', fbDocs: 3, fbTerms: 5, originalQueryWeight: 0.5 } });
      const d = r.diagnostics.expansion!;
      assert.equal(d.source, 'rm3');
      assert.equal(d.feedbackDocs, 3);
      // the oracle: the same model from the index tables read independently (tsvector of each feedback chunk, bm25_terms)
      const v = (await db.pool.query('SELECT id FROM index_variants WHERE chunk_size = 48')).rows[0].id;
      const n = Number((await db.pool.query('SELECT n FROM bm25_stats WHERE variant = $1', [v])).rows[0].n);
      const docs: FeedbackDoc[] = [];
      for (const h of plain.hits.slice(0, 3)) {
        const rows = (
          await db.pool.query(
            `SELECT u.lexeme AS term, cardinality(u.positions) AS tf, t.df FROM book_chunks c, unnest(c.tsv) u, bm25_terms t
             WHERE c.variant = $1 AND c.id = $2 AND t.variant = $1 AND t.term = u.lexeme`,
            [v, h.chunkId],
          )
        ).rows;
        docs.push({ score: h.score, terms: new Map(rows.map((x) => [x.term, { tf: Number(x.tf), df: Number(x.df) }])) });
      }
      const qt = (await db.pool.query(`SELECT lexeme FROM unnest(to_tsvector('english', $1))`, [q])).rows.map((x) => x.lexeme as string);
      const want = rm3Query(new Map(qt.map((t) => [t, 1])), docs, n, { fbDocs: 3, fbTerms: 5, originalQueryWeight: 0.5 });
      assert.deepEqual(d.terms, want.map((t) => ({ term: t.term, weight: +t.weight.toFixed(6) })));
      assert.equal(d.expanded, want.some((t) => !qt.includes(t.term)));
      assert.ok(d.expanded, 'feedback added terms the query does not have');
      // every term's own BM25 (weight 1, one term) from the same SQL: the expanded score is their weighted sum
      const sql = loadSql(new URL('../../src/search/service.ts', import.meta.url).href, 'keyword_bm25.sql');
      const single = new Map<string, Map<string, number>>();
      for (const t of want) {
        const rows = (await db.pool.query(sql, [v, 'english', '', 1.2, 0.75, 1000, null, null, null, null, [t.term], [1]])).rows;
        single.set(t.term, new Map(rows.map((x) => [x.id as string, Number(x.score)])));
      }
      const expected = new Map<string, number>();
      for (const t of want) for (const [id, s] of single.get(t.term)!) expected.set(id, (expected.get(id) ?? 0) + t.weight * s);
      assert.ok(r.hits.length > 0);
      for (const h of r.hits) assert.ok(Math.abs(h.score - expected.get(h.chunkId)!) < 1e-9, `${h.chunkId}: ${h.score} vs ${expected.get(h.chunkId)}`);
      const order = [...expected].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, r.hits.length).map(([id]) => id);
      assert.deepEqual(ids(r), order);
      // hybrid: the vector channel keeps the query; fusion as always
      const h = await svc.search(q, { expansion: { source: 'rm3', fbDocs: 3, fbTerms: 5, originalQueryWeight: 0.5 } });
      const plainHybrid = await svc.search(q);
      assert.deepEqual(h.diagnostics.vectorCandidates, plainHybrid.diagnostics.vectorCandidates);
      assert.deepEqual(h.diagnostics.keywordCandidates.slice(0, 10), ids(await svc.search(q, { mode: 'keyword', topK: 10, expansion: { source: 'rm3', fbDocs: 3, fbTerms: 5, originalQueryWeight: 0.5 } })));
    });

    test('golden expansion: each string its own query fused by RRF with the original; append; none: unchanged', async () => {
      const q = 'cannot sleep at night worries';
      const extra = ['insomnia regular schedule', 'racing mind before bed'];
      const lists = [];
      for (const text of [q, ...extra]) {
        const d = (await svc.search(text, { topK: 50 })).diagnostics;
        lists.push({ keyword: d.keywordCandidates.map((id) => ({ id, score: 0 })), vector: d.vectorCandidates.map((id) => ({ id, score: 0 })) });
      }
      const r = await svc.search(q, { expansion: { source: 'golden', mode: 'rrf', queries: extra } });
      assert.deepEqual(ids(r), fuseRrfLists(lists, 60, { keyword: 1, vector: 1 }).slice(0, 10).map((h) => h.id));
      assert.deepEqual(r.diagnostics.expansion, { source: 'golden', mode: 'rrf', expanded: true, queries: extra });
      const a = await svc.search(q, { expansion: { source: 'golden', mode: 'append', queries: extra } });
      assert.deepEqual(ids(a), ids(await svc.search(`${q} ${extra.join(' ')}`)));
      const none = await svc.search(q, { expansion: { source: 'golden', mode: 'rrf' } });
      assert.deepEqual(ids(none), ids(await svc.search(q)));
      assert.deepEqual(none.diagnostics.expansion, { source: 'golden', mode: 'rrf', expanded: false });
      await assert.rejects(svc.search(q, { expansion: { source: 'golden', mode: 'rrf', queries: [3 as unknown as string] } }), userError(/field "expansion\.queries" must be a list of strings/));
    });
  });
}

describe('LLM rewrites and HyDE against the fake chat API (PGlite)', () => {
  let fake: FakeLlm;
  let svc: SearchService;
  let db: Awaited<ReturnType<(typeof ENGINES)[0]['open']>>;
  let dir: string;
  const saved = { ...process.env };
  before(async () => {
    fake = await startFakeLlm((req) => (/hypothetical|HyDE/.test(req.text) ? 'Slow breathing calms the nervous system and lowers the heart rate.' : 'calm breathing exercises\n2. slow exhale anxiety\n- nervous system rest'));
    process.env.OPENAI_API_KEY = 'sk-test';
    process.env.OPENAI_BASE_URL = `${fake.url}/v1`;
    dir = mkdtempSync(join(tmpdir(), 'rankgate-expand-llm-'));
    db = await ENGINES[0]!.open();
    svc = await createSearchService({ db, embedder: emb, routing: false, defaults: base, expansionCacheDir: join(dir, 'cache') });
  });
  after(async () => {
    await svc?.close();
    await db?.close();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
    process.env = saved;
  });

  test('rewrites: N queries fused by RRF, usage in the diagnostics, cached (a re-run sends nothing)', async () => {
    const s = parseExpansionSetting({ source: 'llm', provider: 'openai:chat:gpt-test', kind: 'rewrites', n: 2 }, 'e')!;
    const r = await svc.search('breath and anxiety', { expansion: s });
    const d = r.diagnostics.expansion!;
    assert.deepEqual(d.queries, ['calm breathing exercises', 'slow exhale anxiety']);
    assert.equal(d.requests, 1);
    assert.equal(d.cached, false);
    assert.equal(d.inputTokens, 100);
    assert.equal(fake.requests.length, 1);
    assert.match(fake.requests[0]!.text, /Write 2 different rewrites/);
    assert.match(fake.requests[0]!.text, /Query: breath and anxiety/);
    assert.equal(fake.requests[0]!.body.temperature, 0);
    const again = await svc.search('breath and anxiety', { expansion: s });
    assert.equal(fake.requests.length, 1, 'the re-run sends nothing');
    assert.equal(again.diagnostics.expansion!.cached, true);
    assert.equal(again.diagnostics.expansion!.requests, 0);
    assert.deepEqual(ids(again), ids(r));
    assert.deepEqual(ids(r), ids(await svc.search('breath and anxiety', { expansion: { source: 'golden', mode: 'rrf', queries: d.queries } })));
  });

  test('HyDE: the passage embedded for the vector channel, the keyword channel keeps the query; a team prompt file', async () => {
    const p = join(dir, 'hyde.txt');
    writeFileSync(p, 'Be brief.\n---\nWrite a hypothetical passage answering: {{query}}\n');
    const s = parseExpansionSetting({ source: 'llm', provider: 'openai:chat:gpt-test', kind: 'hyde', prompt: 'hyde.txt' }, 'e', { basePath: dir })!;
    fake.requests.length = 0;
    const r = await svc.search('breath and anxiety', { expansion: s });
    assert.equal(fake.requests.length, 1);
    assert.match(fake.requests[0]!.text, /^Be brief\.\nWrite a hypothetical passage answering: breath and anxiety$/);
    const passage = 'Slow breathing calms the nervous system and lowers the heart rate.';
    assert.deepEqual(r.diagnostics.expansion!.queries, [passage]);
    assert.deepEqual(r.diagnostics.keywordCandidates, (await svc.search('breath and anxiety')).diagnostics.keywordCandidates);
    assert.deepEqual(r.diagnostics.vectorCandidates, (await svc.search(passage)).diagnostics.vectorCandidates);
  });

  test('S2: a model echoing a key in any form: no form of it in the rewrites, the HyDE passage or the cache files', async () => {
    const key = 'sk-echo-5e4d3c2b1a09f8e7';
    process.env.RANKGATE_TEST_ECHO_API_KEY = key;
    const b = Buffer.from(key);
    const forms = [
      key,
      b.toString('base64'),
      b.toString('base64url'),
      Buffer.concat([Buffer.from('zz'), b, Buffer.from('q')]).toString('base64'),
      encodeURIComponent(key),
      [...b].map((x) => `%${x.toString(16).toUpperCase()}`).join(''),
      [...key].reverse().join(''),
    ];
    const reply = fake.reply;
    try {
      fake.reply = (req) => (/hypothetical/.test(req.text) ? `The answer mentions ${forms.join(' and ')}.` : forms.map((f, i) => `rewrite ${i} with ${f}`).join('\n'));
      const cacheDir = join(dir, 'echo-cache');
      const echo = await createSearchService({ db, embedder: emb, routing: false, defaults: base, expansionCacheDir: cacheDir });
      try {
        const rw = await echo.search('echo the key please', { expansion: parseExpansionSetting({ source: 'llm', provider: 'openai:chat:gpt-echo', n: 7 }, 'e')! });
        const hy = await echo.search('echo the key please', { expansion: parseExpansionSetting({ source: 'llm', provider: 'openai:chat:gpt-echo', kind: 'hyde' }, 'e')! });
        const texts = [...rw.diagnostics.expansion!.queries!, ...hy.diagnostics.expansion!.queries!];
        assert.equal(texts.length, 8);
        const files = readdirSync(cacheDir, { recursive: true }).map(String).filter((f) => f.endsWith('.json'));
        assert.equal(files.length, 2);
        const all = [...texts, ...files.map((f) => readFileSync(join(cacheDir, f), 'utf8'))].join('\n');
        for (const f of forms) assert.ok(!all.includes(f), `the form ${f} leaked:\n${all.slice(0, 600)}`);
        assert.match(all, /rewrite 0 with \*\*\*/);
      } finally {
        await echo.close();
      }
    } finally {
      fake.reply = reply;
      delete process.env.RANKGATE_TEST_ECHO_API_KEY;
    }
  });

  test('W5: a planted expansion entry is keyed by producer and prompt hash and checked as a fresh answer: refused, asked live', async () => {
    const cacheDir = join(dir, 'w5-cache');
    const planted = await createSearchService({ db, embedder: emb, routing: false, defaults: base, expansionCacheDir: cacheDir });
    try {
      const s = parseExpansionSetting({ source: 'llm', provider: 'openai:chat:gpt-plant', n: 2 }, 'e')!;
      fake.requests.length = 0;
      await planted.search('grief and loss', { expansion: s });
      assert.equal(fake.requests.length, 1);
      const file = readdirSync(cacheDir, { recursive: true }).map(String).find((f) => f.endsWith('.json'))!;
      const entry = JSON.parse(readFileSync(join(cacheDir, file), 'utf8'));
      // over the cap of one query text: a fresh answer could not be this
      writeFileSync(join(cacheDir, file), JSON.stringify({ ...entry, texts: ['x'.repeat(10_001)] }));
      const r = await planted.search('grief and loss', { expansion: s });
      assert.equal(r.diagnostics.expansion!.cached, false, 'refused, not shown as "(cached)"');
      // asked live (promptfoo's own response cache may answer the identical request: rankgate called the model)
      assert.equal(r.diagnostics.expansion!.requests, 1, 'asked live');
      assert.deepEqual(r.diagnostics.expansion!.queries, entry.texts, "the model's own rewrites");
      // another producer under the same file name (an edited endpoint): a miss
      const again = JSON.parse(readFileSync(join(cacheDir, file), 'utf8'));
      writeFileSync(join(cacheDir, file), JSON.stringify({ ...again, endpoint: 'http://attacker.example/v1', texts: ['planted text'] }));
      const r2 = await planted.search('grief and loss', { expansion: s });
      assert.equal(r2.diagnostics.expansion!.cached, false);
      assert.ok(!r2.diagnostics.expansion!.queries!.includes('planted text'));
      assert.equal(r2.diagnostics.expansion!.requests, 1);
    } finally {
      await planted.close();
    }
  });

  test('H2: query text is capped at 10,000 characters: a long query, a long HyDE passage, an append that joins past it', async () => {
    await assert.rejects(svc.search('q'.repeat(10_001)), userError(/search: the query is 10,001 characters, over the 10,000-character cap/));
    const reply = fake.reply;
    try {
      fake.reply = () => 'calm '.repeat(3000);
      const t0 = performance.now();
      await assert.rejects(svc.search('a long passage please', { expansion: parseExpansionSetting({ source: 'llm', provider: 'openai:chat:gpt-long', kind: 'hyde' }, 'e')! }), /expansion hyde by openai:chat:gpt-long: the model's passage is 14,999 characters, over the 10,000-character cap of one query text/);
      fake.reply = () => `${'slow '.repeat(2100)}\nsecond`;
      await assert.rejects(svc.search('long rewrites please', { expansion: parseExpansionSetting({ source: 'llm', provider: 'openai:chat:gpt-long', n: 2 }, 'e')! }), /expansion rewrites by openai:chat:gpt-long: rewrite 1 is 10,499 characters, over the 10,000-character cap/);
      assert.ok(performance.now() - t0 < 5000, 'refused before anything embeds it');
    } finally {
      fake.reply = reply;
    }
    await assert.rejects(svc.search('breath', { expansion: { source: 'golden', mode: 'append', queries: ['w'.repeat(9_000), 'v'.repeat(2_000)] } }), userError(/expansion append: the query and its 2 expansion\(s\) join to 11,008 characters, over the 10,000-character cap/));
    await assert.rejects(svc.search('breath', { expansion: { source: 'golden', mode: 'rrf', queries: ['w'.repeat(10_001)] } }), userError(/expansion\[0\]: 10,001 characters, over the 10,000-character cap/));
  });

  test('a model that fails or answers nothing: the search fails (an error row), never an unexpanded search', async () => {
    const reply = fake.reply;
    try {
      fake.reply = () => ({ status: 400, message: 'model not found' });
      const s = parseExpansionSetting({ source: 'llm', provider: 'openai:chat:gpt-gone', n: 2 }, 'e')!;
      await assert.rejects(svc.search('grief and loss', { expansion: s }), /expansion rewrites by openai:chat:gpt-gone failed: .*400/);
      fake.reply = () => '   ';
      await assert.rejects(svc.search('grief and loss', { expansion: s }), /the model answered no rewrite/);
    } finally {
      fake.reply = reply;
    }
  });
});
