import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSearchService, fuseRrf, escapeLike, DEFAULT_SEARCH_PARAMS } from '../../src/search/service.ts';
import { ingestCorpus } from '../../src/ingest/pipeline.ts';
import { isUserError } from '../../src/errors.ts';
import type { SearchParams } from '../../src/search/types.ts';
import { ENGINES, FIXTURE_DOCS, FIXTURE_QUERIES, HashEmbedder, SERVER_URL, SERVER_SKIP, openServerFixture } from './fixture.ts';

const emb = new HashEmbedder(64);
const base: Partial<SearchParams> = { chunkSize: 48, embedder: emb.id, routing: false };

test('fuseRrf: weighted 1/(k+rank) sums, ties by id', () => {
  const f = fuseRrf(
    [
      { id: 'b', score: 9 },
      { id: 'a', score: 8 },
    ],
    [
      { id: 'a', score: 0.9 },
      { id: 'b', score: 0.8 },
      { id: 'c', score: 0.7 },
    ],
    60,
    { keyword: 1, vector: 1 },
  );
  assert.deepEqual(
    f.map((h) => h.id),
    ['a', 'b', 'c'],
  );
  assert.equal(f[0].score, 1 / 62 + 1 / 61);
  assert.equal(f[2].score, 1 / 63);
  assert.deepEqual(f[2].vector, { rank: 3, score: 0.7 });
  const w = fuseRrf([{ id: 'x', score: 1 }], [{ id: 'y', score: 1 }], 10, { keyword: 2, vector: 1 });
  assert.deepEqual(
    w.map((h) => [h.id, h.score]),
    [
      ['x', 2 / 11],
      ['y', 1 / 11],
    ],
  );
});

test('escapeLike escapes backslash, percent and underscore', () => {
  assert.equal(escapeLike('a\\b%c_d'), 'a\\\\b\\%c\\_d');
});

for (const engine of ENGINES) {
  test(`${engine.name}: search service behaviour`, async (t) => {
    if (engine.skip) return t.skip(engine.skip);
    const db = await engine.open();
    const svc = await createSearchService({ db, embedder: emb, routing: false, defaults: base });
    try {
      await t.test('keyword BM25 finds the sleep chapter first and reports channel ranks', async () => {
        const r = await svc.search('cannot sleep at night worries', { mode: 'keyword' });
        assert.equal(r.hits[0].documentId, 'sleep');
        assert.equal(r.hits[0].rank, 1);
        assert.equal(r.hits[0].channels.keyword?.rank, 1);
        assert.equal(r.hits[0].channels.vector, undefined);
        assert.equal(r.hits[0].bookSlug, 'sleep-rest');
        assert.equal(r.hits[0].path, 'books/en/sleep-rest.md');
        assert.equal(typeof r.hits[0].chapterNumber, 'number');
        assert.equal(r.diagnostics.variant, 'c48:hash-64');
        assert.deepEqual(r.diagnostics.vectorCandidates, []);
        assert.deepEqual(
          r.hits.map((h) => h.chunkId),
          r.diagnostics.keywordCandidates.slice(0, r.hits.length),
        );
        for (let i = 1; i < r.hits.length; i++) assert.ok(r.hits[i - 1].score >= r.hits[i].score);
        assert.ok(r.diagnostics.timings.total >= 0);
      });

      await t.test('ts_rank_cd scorer and stemming (breathing ~ breath)', async () => {
        const r = await svc.search('breathing', { mode: 'keyword', keywordScorer: 'ts_rank_cd' });
        assert.ok(r.hits.length > 0);
        assert.ok(r.hits.every((h) => /breath/i.test(h.content)), 'english config stems breathing/breaths to breath');
      });

      await t.test('semantic: HNSW returns the exact ranking on a small variant', async () => {
        for (const q of FIXTURE_QUERIES) {
          const exact = await svc.search(q, { mode: 'semantic', vectorSearch: 'exact', topK: 5 });
          const hnsw = await svc.search(q, { mode: 'semantic', vectorSearch: 'hnsw', topK: 5 });
          // same scores; same ids above the last (possibly tied) score
          assert.deepEqual(hnsw.hits.map((h) => h.score.toFixed(6)), exact.hits.map((h) => h.score.toFixed(6)), q);
          const last = exact.hits.at(-1)!.score;
          const strict = (hs: typeof exact.hits) => hs.filter((h) => h.score > last + 1e-9).map((h) => h.chunkId);
          assert.deepEqual(strict(hnsw.hits), strict(exact.hits), q);
          const qv = await emb.embedQuery(q);
          const top = exact.hits[0];
          const dv = emb.vector(top.content);
          const cos = qv.reduce((s, x, i) => s + x * dv[i], 0) / (Math.hypot(...qv) * Math.hypot(...dv));
          assert.ok(Math.abs(top.score - cos) < 1e-5, `${q}: cosine ${top.score} vs ${cos}`);
        }
      });

      await t.test('hybrid = RRF of the two channel candidate lists', async () => {
        const p: Partial<SearchParams> = { mode: 'hybrid', vectorSearch: 'exact', rrfK: 60, candidates: 20, topK: 8, weights: { keyword: 0.7, vector: 0.3 } };
        const r = await svc.search('breathing exercises for anxiety', p);
        const kw = await svc.search('breathing exercises for anxiety', { ...p, mode: 'keyword', topK: 20 });
        const vec = await svc.search('breathing exercises for anxiety', { ...p, mode: 'semantic', topK: 20 });
        assert.deepEqual(r.diagnostics.keywordCandidates, kw.hits.map((h) => h.chunkId));
        assert.deepEqual(r.diagnostics.vectorCandidates, vec.hits.map((h) => h.chunkId));
        const expected = fuseRrf(
          kw.hits.map((h) => ({ id: h.chunkId, score: h.score })),
          vec.hits.map((h) => ({ id: h.chunkId, score: h.score })),
          60,
          { keyword: 0.7, vector: 0.3 },
        ).slice(0, 8);
        assert.deepEqual(r.hits.map((h) => h.chunkId), expected.map((h) => h.id));
        const h0 = r.hits[0];
        const manual = (h0.channels.keyword ? 0.7 / (60 + h0.channels.keyword.rank) : 0) + (h0.channels.vector ? 0.3 / (60 + h0.channels.vector.rank) : 0);
        assert.equal(h0.score, manual);
      });

      await t.test('filters: language, book, path prefix (LIKE-escaped), tags', async () => {
        const q = 'breath anxiety calm sleep anger water';
        const es = await svc.search(q, { mode: 'hybrid', filters: { language: 'es' }, topK: 20 });
        assert.ok(es.hits.length > 0);
        assert.ok(es.hits.every((h) => h.language === 'es'));
        const book = await svc.search(q, { filters: { book: 'sleep-rest' }, topK: 20 });
        assert.ok(book.hits.length > 0);
        assert.ok(book.hits.every((h) => h.documentId === 'sleep'));
        const prefix = await svc.search(q, { filters: { pathPrefix: 'books/en/' }, topK: 20 });
        assert.ok(prefix.hits.length > 0);
        assert.ok(prefix.hits.every((h) => h.path?.startsWith('books/en/')));
        const underscore = await svc.search('path literal', { filters: { pathPrefix: 'books/odd_' }, topK: 20 });
        assert.deepEqual([...new Set(underscore.hits.map((h) => h.documentId))], ['paths']);
        const noWildcard = await svc.search(q, { filters: { pathPrefix: 'books/%' }, topK: 20 });
        assert.equal(noWildcard.hits.length, 0, '% in a path prefix is literal');
        const tags = await svc.search(q, { filters: { tags: ['emotion', 'practice'] }, topK: 20, vectorSearch: 'hnsw' });
        assert.ok(tags.hits.length > 0);
        assert.ok(tags.hits.every((h) => h.documentId === 'anger'));
      });

      await t.test('ties are broken by chunk id, the same on every run', async () => {
        for (const mode of ['keyword', 'semantic', 'hybrid'] as const) {
          const a = await svc.search('mountain lakes quiet water', { mode, vectorSearch: 'exact', topK: 3 });
          const ids = a.hits.map((h) => h.chunkId);
          assert.deepEqual(ids.slice(0, 2), ['twin-a#c48-0', 'twin-b#c48-0'], mode);
          const b = await svc.search('mountain lakes quiet water', { mode, vectorSearch: 'exact', topK: 3 });
          assert.deepEqual(b.hits.map((h) => h.chunkId), ids);
          const one = await svc.search('mountain lakes quiet water', { mode, vectorSearch: 'exact', topK: 1, candidates: 1 });
          assert.deepEqual(one.hits.map((h) => h.chunkId), ['twin-a#c48-0'], `${mode}: a tie at the cut keeps the smaller id`);
        }
      });

      await t.test('resolvePassages: verbatim LIKE with %, _ and \\ escaped', async () => {
        const m = await svc.resolvePassages(
          ['literal 100% and an under_score', 'back\\slash', 'lakes_and', 'mountain%water', 'quiet water', 'no such text'],
          { chunkSize: 48, embedder: emb.id },
        );
        assert.deepEqual(m.get('literal 100% and an under_score'), ['paths#c48-0']);
        assert.deepEqual(m.get('back\\slash'), ['paths#c48-0']);
        assert.deepEqual(m.get('lakes_and'), []);
        assert.deepEqual(m.get('mountain%water'), []);
        assert.deepEqual(m.get('quiet water'), ['twin-a#c48-0', 'twin-b#c48-0']);
        assert.deepEqual(m.get('no such text'), []);
      });

      await t.test('bad params and a missing variant are UserErrors naming the field / the variants', async () => {
        await assert.rejects(svc.search('x', { topK: 0 }), (e: unknown) => isUserError(e) && /"topK"/.test((e as Error).message));
        await assert.rejects(svc.search('x', { mode: 'fuzzy' as never }), (e: unknown) => isUserError(e) && /"mode"/.test((e as Error).message));
        await assert.rejects(
          svc.search('x', { chunkSize: 999 }),
          (e: unknown) => isUserError(e) && /c999:hash-64 not found.*available: c24:hash-64, c48:hash-64/.test((e as Error).message),
        );
      });

      await t.test('re-ingest: embedding cache hit, and a failed rebuild leaves the old variant whole', async () => {
        const counting = new HashEmbedder(64);
        const again = await ingestCorpus({ db, documents: FIXTURE_DOCS, chunkSizes: [48], embedder: counting });
        assert.equal(counting.embedded, 0, 'unchanged text is never re-embedded');
        assert.equal(again.variants[0].embedded, 0);
        assert.ok(again.variants[0].cached > 0 && again.variants[0].cached <= again.variants[0].chunks);
        const before = await svc.search('grief and loss', { mode: 'hybrid', vectorSearch: 'exact' });
        const broken = [...FIXTURE_DOCS, { ...FIXTURE_DOCS[0], id: 'broken', sections: [{ text: 'bad \u0000 byte' }] }];
        await assert.rejects(ingestCorpus({ db, documents: broken, chunkSizes: [48], embedder: counting }));
        const fresh = await createSearchService({ db, embedder: emb, routing: false, defaults: base });
        const after = await fresh.search('grief and loss', { mode: 'hybrid', vectorSearch: 'exact' });
        assert.deepEqual(after.hits.map((h) => [h.chunkId, h.score]), before.hits.map((h) => [h.chunkId, h.score]));
        const v = await db.pool.query(`SELECT count(*)::int AS n FROM index_variants WHERE chunk_size = 48`);
        assert.equal(v.rows[0].n, 1);
        const d = await db.pool.query(`SELECT count(*)::int AS n FROM documents WHERE id = 'broken'`);
        assert.equal(d.rows[0].n, 0);
        await fresh.close();
      });

      await t.test('autoIngest builds a missing variant from a corpus file', async () => {
        const dir = mkdtempSync(join(tmpdir(), 'rankgate-auto-'));
        try {
          const file = join(dir, 'corpus.jsonl');
          writeFileSync(file, JSON.stringify({ id: 'auto1', title: 'Auto', text: 'Tea ceremonies slow the afternoon down.', language: 'en' }) + '\n');
          const auto = await createSearchService({ db, embedder: emb, routing: false, defaults: base, autoIngest: { corpus: file } });
          const origWrite = process.stderr.write;
          let printed = '';
          process.stderr.write = ((s: string) => ((printed += s), true)) as typeof process.stderr.write;
          let r;
          try {
            r = await auto.search('tea ceremony', { chunkSize: 64, mode: 'keyword' });
          } finally {
            process.stderr.write = origWrite;
          }
          assert.equal(r.hits[0].chunkId, 'auto1#c64-0');
          assert.match(printed, /c64:hash-64 is missing.*ingesting/);
          await auto.close();
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    } finally {
      await svc.close();
      await db.close();
    }
  });
}


test('keyword, exact-vector and hybrid(exact) rankings are identical on PGlite and the server', async (t) => {
  if (!SERVER_URL) return t.skip(SERVER_SKIP);
  const dbs = await Promise.all(ENGINES.map((e) => e.open()));
  const svcs = await Promise.all(dbs.map((db) => createSearchService({ db, embedder: emb, routing: false, defaults: base })));
  try {
    const configs: Partial<SearchParams>[] = [
      { mode: 'keyword', keywordScorer: 'bm25' },
      { mode: 'keyword', keywordScorer: 'bm25', bm25K1: 0.9, bm25B: 0.4 },
      { mode: 'keyword', keywordScorer: 'ts_rank_cd' },
      { mode: 'semantic', vectorSearch: 'exact' },
      { mode: 'hybrid', vectorSearch: 'exact' },
      { mode: 'hybrid', vectorSearch: 'exact', filters: { language: 'en' } },
    ];
    let compared = 0;
    for (const chunkSize of [24, 48]) {
      for (const c of configs) {
        for (const q of [...FIXTURE_QUERIES, 'साँस चिंता']) {
          const p = { ...c, chunkSize, topK: 20, candidates: 30, language: /[ऀ-ॿ]/.test(q) ? 'hi' : undefined };
          const [a, b] = await Promise.all(svcs.map((s) => s.search(q, p)));
          const label = `${JSON.stringify(p)} ${q}`;
          assert.deepEqual(a.hits.map((h) => h.chunkId), b.hits.map((h) => h.chunkId), label);
          a.hits.forEach((h, i) => assert.ok(Math.abs(h.score - b.hits[i].score) < 1e-6, label));
          compared += a.hits.length;
        }
      }
    }
    assert.ok(compared > 500, `compared ${compared} ranked hits`);
  } finally {
    for (const s of svcs) await s.close();
    for (const d of dbs) await d.close();
  }
});

test('server: two services that find one variant missing at once ingest it once, and the first keeps the variant it built (issue 38)', async (t) => {
  if (!SERVER_URL) return t.skip(SERVER_SKIP);
  const db = await openServerFixture(false);
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-race-'));
  const file = join(dir, 'corpus.jsonl');
  writeFileSync(file, ['lake', 'stone'].map((id) => JSON.stringify({ id, title: id, text: `The ${id} chapter is about the ${id}.`, language: 'en' })).join('\n') + '\n');
  // A's embedder holds its first batch until released: A is inside its ingest, past its check, when B starts
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inA = new Promise<void>((r) => (entered = r));
  class Gated extends HashEmbedder {
    override async embedDocuments(texts: string[]): Promise<number[][]> {
      entered();
      await gate;
      return super.embedDocuments(texts);
    }
  }
  const embB = new HashEmbedder(64);
  const a = await createSearchService({ db, embedder: new Gated(64), routing: false, defaults: base, autoIngest: { corpus: file } });
  const b = await createSearchService({ db, embedder: embB, routing: false, defaults: base, autoIngest: { corpus: file } });
  const origWrite = process.stderr.write;
  let printed = '';
  process.stderr.write = ((s: string) => ((printed += s), true)) as typeof process.stderr.write;
  let pa: Promise<unknown> | undefined;
  try {
    pa = a.variant(48, emb.id);
    await inA;
    let bDone = false;
    const pb = b.variant(48, emb.id).finally(() => (bDone = true));
    // B waits for A's lock (or, without one, ingests on its own while A is still embedding: the race)
    const waiting = async () =>
      (
        await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
             AND objid::bigint = (hashtext(current_schema() || $1)::bigint & 4294967295)`,
          [`rankgate_autoingest:48:${emb.id}`],
        )
      ).rows[0].n > 0;
    for (let i = 0; i < 1000 && !bDone && !(await waiting()); i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(bDone, false, 'B did not wait for the ingest A had started: it built the variant itself');
    release();
    const [va, vb] = (await Promise.all([pa, pb])) as [{ id: number }, { id: number }];
    assert.equal(vb.id, va.id, 'both services use the one variant built');
    assert.equal(embB.calls, 0, 'B embedded nothing');
    const rows = await db.pool.query<{ id: number }>('SELECT id FROM index_variants WHERE chunk_size = 48');
    assert.deepEqual(rows.rows.map((r) => r.id), [va.id]);
    assert.equal(printed.match(/is missing .*; ingesting/g)?.length, 1, printed);
    const r = await a.search('lake', { mode: 'keyword' });
    assert.equal(r.hits[0]?.chunkId, 'lake#c48-0');
  } finally {
    release();
    await pa?.catch(() => {});
    process.stderr.write = origWrite;
    await a.close();
    await b.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('DEFAULT_SEARCH_PARAMS are the documented defaults', () => {
  assert.equal(DEFAULT_SEARCH_PARAMS.mode, 'hybrid');
  assert.equal(DEFAULT_SEARCH_PARAMS.rrfK, 60);
  assert.equal(DEFAULT_SEARCH_PARAMS.keywordScorer, 'bm25');
  assert.ok((DEFAULT_SEARCH_PARAMS.efSearch ?? 0) >= DEFAULT_SEARCH_PARAMS.candidates);
});
