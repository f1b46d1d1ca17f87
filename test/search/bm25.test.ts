import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSearchService } from '../../src/search/service.ts';
import { ingestCorpus, variantName } from '../../src/ingest/pipeline.ts';
import type { CorpusDocument } from '../../src/ingest/types.ts';
import { ENGINES, FIXTURE_DOCS, FIXTURE_QUERIES, HashEmbedder } from './fixture.ts';

// Tiny corpus in a language without a stemmer ('fr' -> the 'simple' config): tokens are the lowercased words.
const TINY: Record<string, string> = {
  t1: 'apple banana apple',
  t2: 'banana cherry',
  t3: 'cherry cherry cherry date',
  t4: 'elderberry fig grape apple banana cherry date',
};
const tinyDocs: CorpusDocument[] = Object.entries(TINY).map(([id, text]) => ({
  id,
  title: id,
  language: 'fr',
  tags: [],
  metadata: {},
  sections: [{ text }],
}));

/** Okapi BM25 with Lucene's idf, by hand. */
function handBm25(query: string, k1: number, b: number): [string, number][] {
  const docs = Object.entries(TINY).map(([id, t]) => [id, t.split(' ')] as const);
  const N = docs.length;
  const avgdl = docs.reduce((s, [, w]) => s + w.length, 0) / N;
  const terms = [...new Set(query.split(' '))];
  const out: [string, number][] = [];
  for (const [id, words] of docs) {
    let score = 0;
    let matched = false;
    for (const term of terms) {
      const tf = words.filter((w) => w === term).length;
      if (!tf) continue;
      matched = true;
      const df = docs.filter(([, w]) => w.includes(term)).length;
      const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5));
      score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * words.length) / avgdl));
    }
    if (matched) out.push([id, score]);
  }
  return out.sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1));
}

for (const engine of ENGINES) {
  test(`${engine.name}: SQL BM25 equals a hand-computed BM25 on a tiny corpus`, async (t) => {
    if (engine.skip) return t.skip(engine.skip);
    const db = await engine.open();
    const emb = new HashEmbedder(8, 'hash-tiny');
    try {
      await ingestCorpus({ db, documents: tinyDocs, chunkSizes: [64], embedder: emb });
      const svc = await createSearchService({ db, embedder: emb, routing: false, defaults: { chunkSize: 64, embedder: emb.id } });
      const st = await db.pool.query(
        `SELECT s.n, s.avgdl FROM bm25_stats s JOIN index_variants v ON v.id = s.variant WHERE v.name = $1`,
        [variantName(64, emb.id)],
      );
      assert.equal(st.rows[0].n, 4);
      assert.equal(st.rows[0].avgdl, (3 + 2 + 4 + 7) / 4);
      for (const [k1, b] of [
        [1.2, 0.75],
        [0.9, 0.4],
        [2, 1],
        [1.2, 0],
      ]) {
        for (const q of ['apple', 'cherry date', 'banana apple grape', 'apple apple kiwi']) {
          const r = await svc.search(q, { mode: 'keyword', bm25K1: k1, bm25B: b, language: 'fr', topK: 10 });
          const want = handBm25(q, k1, b);
          assert.deepEqual(
            r.hits.map((h) => h.documentId),
            want.map(([id]) => id),
            `${q} k1=${k1} b=${b}`,
          );
          r.hits.forEach((h, i) => assert.ok(Math.abs(h.score - want[i][1]) < 1e-9, `${q}: ${h.score} vs ${want[i][1]}`));
        }
      }
      await svc.close();
    } finally {
      await db.close();
    }
  });
}

test('pglite: SQL BM25 ranks like the pg_textsearch bm25 index', async () => {
  const db = await ENGINES[0].open();
  const emb = new HashEmbedder(8, 'hash-en');
  try {
    // English-only variant so one text config covers every chunk, as a bm25 index has one config.
    const english = FIXTURE_DOCS.filter((d) => d.language === 'en');
    await ingestCorpus({ db, documents: english, chunkSizes: [24], embedder: emb });
    const svc = await createSearchService({ db, embedder: emb, routing: false, defaults: { chunkSize: 24, embedder: emb.id } });
    const v = await db.pool.query(`SELECT id FROM index_variants WHERE name = $1`, [variantName(24, emb.id)]);
    await db.pool.query(
      `CREATE TABLE ts_cmp AS SELECT id, content FROM book_chunks WHERE variant = $1`,
      [v.rows[0].id],
    );
    let compared = 0;
    for (const [k1, b] of [
      [1.2, 0.75],
      [0.9, 0.4],
    ]) {
      await db.pool.query(`DROP INDEX IF EXISTS ts_cmp_bm25`);
      await db.pool.query(
        `CREATE INDEX ts_cmp_bm25 ON ts_cmp USING bm25 (content) WITH (text_config = 'english', k1 = ${k1}, b = ${b})`,
      );
      for (const q of [...FIXTURE_QUERIES.filter((x) => !/ó/.test(x)), 'breath', 'sleep night', 'quiet mind breath']) {
        const theirs = await db.pool.query<{ id: string; score: number }>(
          `SELECT id, -(content <@> to_bm25query($1, 'ts_cmp_bm25')) AS score FROM ts_cmp
           ORDER BY content <@> to_bm25query($1, 'ts_cmp_bm25'), id LIMIT 10`,
          [q],
        );
        const matched = theirs.rows.filter((r) => Number(r.score) > 0);
        const ours = await svc.search(q, { mode: 'keyword', bm25K1: k1, bm25B: b, language: 'en', topK: 10 });
        assert.deepEqual(
          ours.hits.map((h) => h.chunkId),
          matched.map((r) => r.id),
          `${q} k1=${k1} b=${b}`,
        );
        ours.hits.forEach((h, i) => assert.ok(Math.abs(h.score - Number(matched[i].score)) < 1e-5, `${q}: ${h.score} vs ${matched[i].score}`));
        compared += matched.length;
      }
    }
    assert.ok(compared > 40, `compared ${compared} hits`);
    await svc.close();
  } finally {
    await db.close();
  }
});
