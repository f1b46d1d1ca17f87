/**
 * Hostile and odd queries straight into SearchService.search (every mode) and resolvePassages, on PGlite and
 * on the server: each is either searched (a well-formed response) or rejected with a UserError naming the
 * query; never another exception, never SQL interpreted, and the index answers normally afterwards.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSearchService } from '../../src/search/service.ts';
import { isUserError } from '../../src/errors.ts';
import type { SearchMode, SearchParams } from '../../src/search/types.ts';
import { ENGINES, HashEmbedder } from '../search/fixture.ts';

const emb = new HashEmbedder(64);
const base: Partial<SearchParams> = { chunkSize: 48, embedder: emb.id, routing: false, vectorSearch: 'exact' };

/** [label, query, must be searched (true) or may be rejected (false)] */
const QUERIES: [string, string, boolean][] = [
  ['SQL fragment', "x'); DROP TABLE book_chunks; --", true],
  ['SQL comment and semicolon', 'grief /* */ ; SELECT pg_sleep(10); --', true],
  ['LIKE wildcards', '100% _breath_ %%', true],
  ['backslashes', 'C:\\path\\to\\grief \\x00 \\\\', true],
  ['quotes', `"grief" and 'loss' and \`anger\``, true],
  ['tsquery operators', 'grief & !loss | (anger <-> calm):*', true],
  ['template syntax', '{{ query }} {% for x in y %}{{x}}{% endfor %} {# c #} ${process.exit(1)}', true],
  ['right-to-left', 'الحزن والفقد \u202Egrief\u202C', true],
  ['combining characters', 'gri\u0301ef lo\u0308ss Z\u0335\u0321a\u0337lgo', true],
  ['emoji and ZWJ', '😢 grief 👩‍👩‍👧 🏳️‍🌈 loss', true],
  ['Devanagari', 'दुःख और हानि', true],
  // query text is capped at 10,000 characters (src/util/limits.ts, issue 43 H2): under it searched, over it refused
  ['9,990 characters', 'grief and loss '.repeat(666), true],
  ['1,500 distinct terms', Array.from({ length: 1_500 }, (_, i) => `w${i}x`).join(' '), true],
  ['100 KB', 'grief and loss '.repeat(7000), false],
  ['10k distinct terms', Array.from({ length: 10_000 }, (_, i) => `w${i}x`).join(' '), false],
  ['empty', '', false],
  ['whitespace only', ' \t\n\u00A0\u2003 ', false],
  ['NUL byte', 'grief\u0000loss', false],
  ['lone surrogate (invalid UTF-16)', 'grief \uD83D loss', false],
  ['U+FFFD (decoded invalid UTF-8)', 'grief \uFFFD\uFFFD loss', true],
  ['control characters', 'grief\u0001\u0007\u001b[31mloss', true],
];

for (const engine of ENGINES) {
  test(`${engine.name}: hostile queries are searched or rejected clearly, never a crash`, async (t) => {
    if (engine.skip) return t.skip(engine.skip);
    const db = await engine.open();
    const svc = await createSearchService({ db, embedder: emb, routing: false, defaults: base });
    try {
      const before = await db.pool.query('SELECT count(*)::int AS n FROM book_chunks');
      const normal = await svc.search('grief and loss', { mode: 'hybrid' });
      assert.ok(normal.hits.length > 0);
      for (const [label, q, mustSearch] of QUERIES) {
        for (const mode of ['keyword', 'semantic', 'hybrid'] as SearchMode[]) {
          let outcome: string;
          try {
            const r = await svc.search(q, { mode });
            assert.ok(Array.isArray(r.hits), `${label} ${mode}: hits[]`);
            for (const h of r.hits) assert.equal(typeof h.chunkId, 'string');
            outcome = 'searched';
          } catch (e) {
            assert.ok(isUserError(e), `${label} (${mode}) threw a non-user error: ${(e as Error)?.stack ?? e}`);
            assert.match((e as Error).message, /query/i, `${label}: the message names the query`);
            outcome = 'rejected';
          }
          if (mustSearch) assert.equal(outcome, 'searched', `${label} (${mode}) must be searched`);
          if (q.length > 10_000) assert.equal(outcome, 'rejected', `${label} (${mode}): over the query-length cap`);
        }
      }
      // the same literal text is matched literally by resolvePassages
      const subs = ["x'); DROP TABLE book_chunks; --", '%', '_', '\\', "'", '100% and an under_score', 'a\u0000b'];
      const m = await svc.resolvePassages(subs, { chunkSize: 48, embedder: emb.id });
      const v = await db.pool.query(`SELECT id FROM index_variants WHERE chunk_size = 48 AND embedder = $1`, [emb.id]);
      for (const s of subs) {
        // literal containment, computed without LIKE (strpos), is the reference
        const ref = s.includes('\u0000')
          ? []
          : (await db.pool.query(`SELECT id FROM book_chunks WHERE variant = $1 AND strpos(content, $2) > 0 ORDER BY id`, [v.rows[0].id, s])).rows.map((r) => r.id);
        assert.deepEqual(m.get(s), ref, `resolvePassages(${JSON.stringify(s)})`);
      }
      assert.ok(m.get('%')!.length > 0 && m.get('%')!.length < before.rows[0].n, '% matches only chunks holding a %');
      const after = await db.pool.query('SELECT count(*)::int AS n FROM book_chunks');
      assert.equal(after.rows[0].n, before.rows[0].n, 'nothing was dropped or changed');
      const again = await svc.search('grief and loss', { mode: 'hybrid' });
      assert.deepEqual(again.hits.map((h) => h.chunkId), normal.hits.map((h) => h.chunkId), 'the index answers as before');
    } finally {
      await svc.close();
      await db.close();
    }
  });
}

test('pglite: a failed statement leaves the shared connection in step (later queries get their own answers)', async () => {
  const { openPgliteFixture } = await import('../search/fixture.ts');
  const db = await openPgliteFixture();
  try {
    await assert.rejects(db.pool.query('SELECT $1::int', ['abc']), /invalid input syntax/);
    await assert.rejects(db.pool.query('SELECT 1/0'), /division by zero/);
    await assert.rejects(db.pool.query('SELECT $1::text', ['a\u0000b']), /0x00/);
    assert.deepEqual((await db.pool.query('SELECT $1::text AS t', ['ok'])).rows, [{ t: 'ok' }]);
    assert.deepEqual((await db.pool.query('SELECT 2 AS two')).rows, [{ two: 2 }]);
  } finally {
    await db.close();
  }
});
