/**
 * The keyword channel's SQL (src/search/keyword_bm25.sql) against two oracles, on a generated corpus with
 * several index variants, four text configs (english, spanish, hindi, simple), duplicated documents (exact score
 * ties, broken by chunk id), filters, and default and non-default k1/b:
 *   - the SQL BM25 as it was before its threshold CTE was MATERIALIZED (bench/keyword_bm25_reference.sql):
 *     same ids in the same order, same scores;
 *   - BM25 computed here in JS from the stored postings, terms and stats: same ids, scores to 1e-9.
 * On PGlite and on the server (unaffected: the same SQL and results); the two engines' lists are compared too.
 * Also: ingest keeps vectors inside the row, and an index whose rows were written with out-of-line vectors (an
 * older rankgate) searches exactly like the same corpus re-ingested with inline vectors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Db } from '../../src/db/index.ts';
import { ingestCorpus, variantName } from '../../src/ingest/pipeline.ts';
import { createSearchService } from '../../src/search/service.ts';
import type { SearchFilters } from '../../src/search/types.ts';
import type { CorpusDocument } from '../../src/ingest/types.ts';
import { ENGINES, HashEmbedder } from './fixture.ts';
import { mulberry32 } from '../../src/metrics/significance.ts';

const REFERENCE = readFileSync(new URL('../../bench/keyword_bm25_reference.sql', import.meta.url), 'utf8');

const VOCAB: Record<string, string[]> = {
  en: 'breathing calm anxious worry sleep night heart slow walking river garden quiet anger patience morning letter friends'.split(' '),
  es: 'respiración calma ansiedad sueño noche corazón lento caminar río jardín silencio paciencia mañana carta amigos'.split(' '),
  hi: 'साँस शांति चिंता नींद रात दिल धीमा चलना नदी बगीचा मौन धैर्य सुबह पत्र मित्र'.split(' '),
  fr: 'souffle calme inquiétude sommeil nuit cœur lent marcher rivière jardin silence patience matin lettre amis'.split(' '),
};

/** ~150 documents: small vocabularies (many shared terms), every 7th a copy of an earlier one (score ties). */
function generatedCorpus(): CorpusDocument[] {
  const rnd = mulberry32(20261123);
  const langs = ['en', 'es', 'hi', 'fr'];
  const docs: CorpusDocument[] = [];
  for (let i = 0; i < 150; i++) {
    const lang = langs[i % langs.length];
    const book = `book-${i % 5}`;
    let text: string;
    if (i % 7 === 6) text = (docs[i - 4].sections[0] as { text: string }).text; // same language, other book/path/tags
    else {
      const words = VOCAB[lang];
      const sentences: string[] = [];
      const n = 1 + Math.floor(rnd() * 4);
      for (let s = 0; s < n; s++) {
        const len = 3 + Math.floor(rnd() * 9);
        sentences.push(Array.from({ length: len }, () => words[Math.floor(rnd() * rnd() * words.length)]).join(' ') + '.');
      }
      text = sentences.join(' ');
    }
    docs.push({
      id: `gen-${String(i).padStart(3, '0')}`,
      title: `generated ${i}`,
      language: lang,
      slug: book,
      path: `books/${lang}/${book}/${i}.md`,
      tags: i % 3 === 0 ? ['a', 'b'] : i % 3 === 1 ? ['a'] : [],
      metadata: {},
      sections: [{ text }],
    } as CorpusDocument);
  }
  // exact duplicates under other ids (identical chunks: identical scores, order by chunk id)
  for (const j of [0, 1, 2, 3, 10, 11]) {
    const d = docs[j];
    docs.push({ ...d, id: `dup-${d.id}`, path: d.path!.replace('.md', '-dup.md') });
  }
  return docs;
}

interface Ranked {
  id: string;
  score: number;
}

/** BM25 in JS from the stored postings of variant `vid` (independent of the SQL's shape). */
async function oracle(db: Db, vid: number, cfg: string, query: string, k1: number, b: number, limit: number, f: SearchFilters): Promise<Ranked[]> {
  const terms = (await db.pool.query<{ t: string }>(`SELECT DISTINCT lexeme AS t FROM unnest(to_tsvector($1::regconfig, $2::text))`, [cfg, query])).rows.map((r) => r.t);
  if (!terms.length) return [];
  const st = (await db.pool.query<{ n: number; avgdl: number }>('SELECT n, avgdl FROM bm25_stats WHERE variant = $1', [vid])).rows[0];
  const rows = (
    await db.pool.query<{ term: string; df: number; tf: number; doc_len: number; id: string; language: string; book_slug: string | null; path: string | null; tags: string[] }>(
      `SELECT p.term, t.df, p.tf, p.doc_len, c.id, c.language, c.book_slug, c.path, d.tags
       FROM bm25_postings p JOIN bm25_terms t ON t.variant = p.variant AND t.term = p.term
       JOIN book_chunks c ON c.key = p.chunk JOIN documents d ON d.id = c.document
       WHERE p.variant = $1 AND p.term = ANY($2::text[])`,
      [vid, terms],
    )
  ).rows;
  const score = new Map<string, number>();
  for (const r of rows) {
    if (f.language && !(r.language === f.language || r.language.startsWith(f.language + '-'))) continue;
    if (f.book && r.book_slug !== f.book) continue;
    if (f.pathPrefix && !(r.path ?? '').startsWith(f.pathPrefix)) continue;
    if (f.tags && !f.tags.every((t) => r.tags.includes(t))) continue;
    const idf = Math.log(1 + (st.n - r.df + 0.5) / (r.df + 0.5));
    const s = (idf * r.tf * (k1 + 1)) / (r.tf + k1 * (1 - b + (b * r.doc_len) / st.avgdl));
    score.set(r.id, (score.get(r.id) ?? 0) + s);
  }
  return [...score]
    .map(([id, s]) => ({ id, score: s }))
    .sort((x, y) => Math.round(y.score * 1e9) - Math.round(x.score * 1e9) || Buffer.compare(Buffer.from(x.id), Buffer.from(y.id)))
    .slice(0, limit);
}

const QUERIES: { q: string; language: string }[] = [
  { q: 'breathing calm at night', language: 'en' },
  { q: 'slow walking by the river garden', language: 'en' },
  { q: 'anger patience anger', language: 'en' },
  { q: 'worry', language: 'en' },
  { q: 'respiración calma noche', language: 'es' },
  { q: 'jardín río silencio paciencia', language: 'es' },
  { q: 'साँस शांति रात', language: 'hi' },
  { q: 'नदी बगीचा', language: 'hi' },
  { q: 'souffle calme nuit', language: 'fr' },
  { q: 'jardin silence patience matin', language: 'fr' },
  { q: 'unknownword', language: 'en' },
];
const PARAMS = [
  [1.2, 0.75],
  [0.9, 0.4],
  [2, 1],
  [1.2, 0],
];
const FILTERS: SearchFilters[] = [{}, { language: 'es' }, { book: 'book-2' }, { pathPrefix: 'books/fr/' }, { tags: ['a', 'b'] }, { language: 'en', tags: ['a'] }];

const listsByEngine = new Map<string, string[]>();

for (const engine of ENGINES) {
  test(`${engine.name}: keyword SQL equals the previous SQL BM25 and a JS BM25 (variants, languages, ties, filters, k1/b)`, async (t) => {
    if (engine.skip) return t.skip(engine.skip);
    const db = await engine.open();
    try {
      const docs = generatedCorpus();
      const e8 = new HashEmbedder(8, 'hash-kx8');
      const e16 = new HashEmbedder(16, 'hash-kx16');
      await ingestCorpus({ db, documents: docs, chunkSizes: [16, 40], embedder: e8 });
      await ingestCorpus({ db, documents: docs, chunkSizes: [40], embedder: e16 });
      const lists: string[] = [];
      let compared = 0;
      let ties = 0;
      for (const [size, emb] of [
        [16, e8],
        [40, e8],
        [40, e16],
      ] as const) {
        const vid = (await db.pool.query<{ id: number }>('SELECT id FROM index_variants WHERE name = $1', [variantName(size, emb.id)])).rows[0].id;
        const svc = await createSearchService({ db, embedder: emb, routing: false, defaults: { chunkSize: size, embedder: emb.id } });
        for (const [qi, { q, language }] of QUERIES.entries()) {
          for (const [pi, [k1, b]] of PARAMS.entries()) {
            // two of the six filters per (query, k1/b), rotating: every filter meets every variant, query and k1/b
            // pair across the grid, at a third of the full product's queries
            for (const filters of [FILTERS[(qi + pi) % FILTERS.length], FILTERS[(qi + pi + 3) % FILTERS.length]]) {
              for (const topK of [5, 30]) {
                const what = `${variantName(size, emb.id)} "${q}" k1=${k1} b=${b} ${JSON.stringify(filters)} top ${topK}`;
                const r = await svc.search(q, { mode: 'keyword', language, bm25K1: k1, bm25B: b, filters, topK });
                const got = r.hits.map((h) => ({ id: h.chunkId, score: h.score }));
                const cfg = { en: 'english', es: 'spanish', hi: 'hindi' }[language] ?? 'simple';
                const ref = (
                  await db.pool.query<{ id: string; score: number }>(REFERENCE, [
                    vid, cfg, q, k1, b, topK,
                    filters.language ?? null, filters.book ?? null, filters.pathPrefix ? filters.pathPrefix + '%' : null, filters.tags ?? null,
                  ])
                ).rows.map((x) => ({ id: x.id, score: Number(x.score) }));
                assert.deepEqual(got, ref, what);
                const want = await oracle(db, vid, cfg, q, k1, b, topK, filters);
                assert.deepEqual(got.map((h) => h.id), want.map((h) => h.id), what);
                got.forEach((h, i) => assert.ok(Math.abs(h.score - want[i].score) < 1e-9, `${what}: ${h.id} ${h.score} vs ${want[i].score}`));
                for (let i = 1; i < got.length; i++) if (Math.round(got[i].score * 1e9) === Math.round(got[i - 1].score * 1e9)) ties++;
                compared += got.length;
                lists.push(`${what}: ${got.map((h) => h.id).join(',')}`);
              }
            }
          }
        }
        await svc.close();
      }
      t.diagnostic(`compared ${compared} hits, ${ties} tied neighbours`);
      assert.ok(compared > 3000, `compared ${compared} hits`);
      assert.ok(ties > 300, `ranked ${ties} tied neighbours`);
      listsByEngine.set(engine.name, lists);
      const other = listsByEngine.get(engine.name === 'pglite' ? 'postgres' : 'pglite');
      if (other) assert.deepEqual(lists, other, 'PGlite and Postgres rank identically');
    } finally {
      await db.close();
    }
  });

  test(`${engine.name}: vectors stay in the row; an index written with out-of-line vectors searches the same`, async (t) => {
    if (engine.skip) return t.skip(engine.skip);
    const db = await engine.open();
    try {
      const emb = new HashEmbedder(600, 'hash-kx600'); // 2,408-byte vectors: out of line under pgvector's default storage
      const name = variantName(40, emb.id);
      await ingestCorpus({ db, documents: generatedCorpus(), chunkSizes: [40], embedder: emb });
      const toastRel = (await db.pool.query<{ t: string }>(`SELECT reltoastrelid::regclass::text AS t FROM pg_class WHERE oid = 'book_chunks'::regclass`)).rows[0].t;
      const outOfLine = async () => Number((await db.pool.query<{ n: string }>(`SELECT count(DISTINCT chunk_id) AS n FROM ${toastRel}`)).rows[0].n);
      const attr = await db.pool.query<{ attstorage: string }>(
        `SELECT attstorage FROM pg_attribute WHERE attrelid = 'book_chunks'::regclass AND attname = 'embedding'`,
      );
      assert.equal(attr.rows[0].attstorage, 'm');
      const chunks = Number((await db.pool.query('SELECT count(*) AS n FROM book_chunks c JOIN index_variants v ON v.id = c.variant WHERE v.name = $1', [name])).rows[0].n);
      assert.ok(chunks > 100);
      assert.ok((await outOfLine()) < chunks / 10, `ingest writes vectors inside the row (${await outOfLine()} TOAST values for ${chunks} chunks)`);
      const run = async () => {
        const svc = await createSearchService({ db, embedder: emb, routing: false, defaults: { chunkSize: 40, embedder: emb.id } });
        const out: string[] = [];
        for (const { q, language } of QUERIES) {
          const r = await svc.search(q, { mode: 'hybrid', language, vectorSearch: 'exact', topK: 10 });
          out.push(JSON.stringify(r.hits.map((h) => [h.chunkId, h.score, h.channels.vector?.score, h.channels.keyword?.score])));
          const h = await svc.search(q, { mode: 'semantic', language, vectorSearch: 'hnsw', topK: 10 });
          assert.equal(h.hits.length, 10);
        }
        await svc.close();
        return out;
      };
      const inline = await run();
      // the rows as an older rankgate wrote them: pgvector's EXTERNAL storage, the default toast_tuple_target
      // (rewritten in place here; a test may UPDATE every row)
      await db.pool.query('ALTER TABLE book_chunks ALTER COLUMN embedding SET STORAGE EXTERNAL, RESET (toast_tuple_target)');
      await db.pool.query(
        `UPDATE book_chunks c SET embedding = (c.embedding::real[])::vector FROM index_variants v WHERE v.id = c.variant AND v.name = $1`,
        [name],
      );
      assert.ok((await outOfLine()) >= chunks, 'the "older" rows hold their vectors out of line');
      assert.deepEqual(await run(), inline, 'out-of-line vectors search exactly like inline ones');
    } finally {
      await db.close();
    }
  });
}
