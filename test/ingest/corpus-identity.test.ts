/**
 * An index variant always knows its corpus (src/ingest/identity.ts, src/ingest/pipeline.ts, src/search/service.ts):
 * - `rankgate ingest --corpus OTHER` into a database holding another corpus's index refuses (exit 2, one line)
 *   and changes nothing; `--replace` replaces it and drops the other corpus's documents;
 * - re-ingesting a corpus removes the documents that left it, with their chunks;
 * - the service with `autoIngest` (the provider's `corpus:`) never evaluates against another corpus's index:
 *   one clear line; an earlier state of the same corpus is rebuilt; an embedder that does not exist is an error
 *   before any ingest; diagnostics.index = {engine, variant, corpusId, corpus}.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS, ROOT, assertNoStack, copyIndexFixture, killChildren, rankgate, tempDir } from '../reliability/helpers.ts';
import { isUserError } from '../../src/errors.ts';
import { corpusIdentity, corpusLabel } from '../../src/ingest/identity.ts';
import { readCorpus } from '../../src/ingest/readers.ts';

after(killChildren);

const NO_ENV = { DATABASE_URL: undefined, RANKGATE_DATA_DIR: undefined };
const JSONL = join(ROOT, 'test', 'fixtures', 'corpus', 'docs.jsonl');

async function search(db: string, args: string[] = []) {
  const r = await rankgate(['search', 'still water', '--json', '--db', db, ...args], NO_ENV);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as { hits: { chunkId: string; documentId: string }[]; diagnostics: { index: { engine: string; variant: string; corpusId: string | null; corpus: string | null } } };
}

async function tables(db: string) {
  const { openDatabase } = await import('../../src/db/index.ts');
  const d = await openDatabase({ dataDir: db, access: 'read' });
  try {
    const docs = (await d.pool.query<{ id: string }>('SELECT id FROM documents ORDER BY id')).rows.map((r) => r.id);
    const chunkDocs = (await d.pool.query<{ document: string }>('SELECT DISTINCT document FROM book_chunks ORDER BY 1')).rows.map((r) => r.document);
    return { docs, chunkDocs };
  } finally {
    await d.close();
  }
}

describe('corpus identity', () => {
  const tmp = tempDir('corpus-id');
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('the identity is a hash of ids and contents: order-free, changes with one edited document', async () => {
    const docs = await readCorpus(CORPUS);
    const a = corpusIdentity(docs, CORPUS);
    assert.equal(a.id, corpusIdentity([...docs].reverse(), '/elsewhere').id);
    assert.match(a.id, /^[0-9a-f]{64}$/);
    assert.equal(a.path, 'test/fixtures/corpus/markdown');
    const edited = docs.map((d, i) => (i === 0 ? { ...d, title: d.title + '!' } : d));
    assert.notEqual(corpusIdentity(edited).id, a.id);
    assert.notEqual(corpusIdentity(docs.slice(1)).id, a.id);
    assert.equal(corpusLabel('/abs/outside'), '/abs/outside');
  });

  it('ingest of another corpus refuses without --replace (nothing changes), replaces with it', async () => {
    const db = await copyIndexFixture('other-corpus');
    try {
      const before = await search(db);
      const fixtureId = corpusIdentity(await readCorpus(CORPUS)).id;
      assert.deepEqual(before.diagnostics.index, { engine: 'pglite', variant: 'c300:use-lite', corpusId: fixtureId, corpus: 'test/fixtures/corpus/markdown' });
      const r = await rankgate(['ingest', '--db', db, '--corpus', JSONL], NO_ENV);
      assert.equal(r.code, 2, r.stderr);
      assert.deepEqual(r.stderr.trim().split('\n'), [
        `rankgate ingest: ${db} holds index variant c300:use-lite built from test/fixtures/corpus/markdown (corpus ${fixtureId.slice(0, 12)}), ` +
          `not from test/fixtures/corpus/docs.jsonl (corpus ${corpusIdentity(await readCorpus(JSONL)).id.slice(0, 12)}): ingesting here would replace it; ` +
          `pass --replace to do that, or give another database (--db DIR, RANKGATE_DATA_DIR)`,
      ]);
      assertNoStack(r.stderr);
      assert.deepEqual((await search(db)).hits, before.hits, 'nothing changed');

      const ok = await rankgate(['ingest', '--db', db, '--corpus', JSONL, '--replace'], NO_ENV, 170_000);
      assert.equal(ok.code, 0, ok.stderr);
      assert.match(ok.stdout, /replaced c300:use-lite \(another corpus; --replace\)/);
      assert.match(ok.stdout, /removed 3 documents that left the corpus/);
      const after = await search(db);
      assert.equal(after.diagnostics.index.corpus, 'test/fixtures/corpus/docs.jsonl');
      const t = await tables(db);
      assert.deepEqual(t.docs, t.chunkDocs, 'only the new corpus is left');
      assert.ok(!t.docs.includes('silent-lake'));
    } finally {
      rmSync(join(db, '..'), { recursive: true, force: true });
    }
  });

  it('re-ingesting a corpus without a document removes it and its chunks; the service rebuilds an earlier state', async () => {
    const db = await copyIndexFixture('left-corpus');
    const corpus = join(tmp, 'corpus');
    cpSync(CORPUS, corpus, { recursive: true });
    try {
      // the same documents elsewhere: the same corpus (same id), so no --replace is needed
      let r = await rankgate(['ingest', '--db', db, '--corpus', corpus], NO_ENV, 170_000);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual((await tables(db)).docs, ['lago-sereno', 'shant-jheel', 'silent-lake']);
      rmSync(join(corpus, 'shant-jheel.md'));
      r = await rankgate(['ingest', '--db', db, '--corpus', corpus], NO_ENV, 170_000);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /removed 1 document that left the corpus/);
      const t = await tables(db);
      assert.deepEqual(t.docs, ['lago-sereno', 'silent-lake']);
      assert.deepEqual(t.chunkDocs, ['lago-sereno', 'silent-lake']);

      // the provider's path: autoIngest with the corpus edited since -> rebuilt, with a line saying so
      writeFileSync(join(corpus, 'silent-lake.md'), '# Silent lake\n\nStill water at dawn, edited.\n');
      const { createSearchService } = await import('../../src/search/service.ts');
      const printed: string[] = [];
      const write = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((c: string) => (printed.push(String(c)), true)) as typeof process.stderr.write;
      const svc = await createSearchService({ dataDir: db, routing: false, autoIngest: { corpus } });
      try {
        const res = await svc.search('still water');
        const now = corpusIdentity(await readCorpus(corpus), corpus);
        assert.equal(res.diagnostics.index?.corpusId, now.id);
        assert.match(printed.join(''), /was built from an earlier state of .*corpus.*; rebuilding it/);
      } finally {
        process.stderr.write = write;
        await svc.close();
      }
    } finally {
      rmSync(join(db, '..'), { recursive: true, force: true });
    }
  });

  it('the service never evaluates against another corpus; an unknown embedder is an error before any ingest', async () => {
    const db = await copyIndexFixture('svc-corpus');
    const { createSearchService } = await import('../../src/search/service.ts');
    try {
      const other = await createSearchService({ dataDir: db, routing: false, autoIngest: { corpus: JSONL } });
      try {
        await assert.rejects(other.search('still water'), (e: unknown) => {
          assert.ok(isUserError(e));
          assert.match(
            (e as Error).message,
            new RegExp(`^index variant c300:use-lite in ${db} was built from test/fixtures/corpus/markdown \\(corpus [0-9a-f]{12}\\), not test/fixtures/corpus/docs\\.jsonl \\(corpus [0-9a-f]{12}\\): rankgate will not evaluate against it nor replace it on its own; rebuild it with: rankgate ingest --corpus test/fixtures/corpus/docs\\.jsonl --chunk-size 300 --embedder use-lite --replace`),
          );
          assert.ok(!(e as Error).message.includes('\n'));
          return true;
        });
      } finally {
        await other.close();
      }
      // autoIngest off (the provider's `autoIngest: false` with `corpus:`): checked all the same, never ingested
      const checkOnly = await createSearchService({ dataDir: db, routing: false, autoIngest: { corpus: JSONL, ingest: false } });
      try {
        await assert.rejects(checkOnly.search('still water'), /^UserError: index variant c300:use-lite in .* was built from test\/fixtures\/corpus\/markdown/);
        await assert.rejects(checkOnly.search('still water', { chunkSize: 999 }), /index variant c999:use-lite not found/);
      } finally {
        await checkOnly.close();
      }
      const same = await createSearchService({ dataDir: db, routing: false, autoIngest: { corpus: CORPUS } });
      const printed: string[] = [];
      const write = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((c: string) => (printed.push(String(c)), true)) as typeof process.stderr.write;
      try {
        const res = await same.search('still water');
        assert.ok(res.hits.length > 0);
        assert.equal(res.diagnostics.index?.corpus, 'test/fixtures/corpus/markdown');
        await assert.rejects(same.search('still water', { embedder: 'use-light' }), (e: unknown) => {
          assert.ok(isUserError(e));
          assert.match((e as Error).message, /^embedder "use-light" does not exist: expected one of use-lite, .*; did you mean 'use-lite'\?$/);
          return true;
        });
        assert.doesNotMatch(printed.join(''), /ingesting/, 'no ingest was attempted');
      } finally {
        process.stderr.write = write;
        await same.close();
      }
    } finally {
      rmSync(join(db, '..'), { recursive: true, force: true });
    }
  });
});
