/**
 * The embedding pool (src/embeddings/pool.ts) and the ingest on it (src/ingest/pipeline.ts embedWithCache): threads
 * give the same vectors in the same order as one process, a re-ingest embeds nothing, and a thread that fails or dies
 * fails the ingest closed, naming the chunk and its document, with nothing of the variant written.
 * USE-lite costs ~0.3 s and ~300 MB a thread: one real pool of 2 threads; the failure paths use a fake model module.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { createEmbedder, embedWorkerCount, EmbedPool } from '../../src/embeddings/index.ts';
import { ingestCorpus } from '../../src/ingest/pipeline.ts';
import type { CorpusDocument } from '../../src/ingest/types.ts';
import type { Db } from '../../src/db/index.ts';
import { isUserError } from '../../src/errors.ts';
import { FIXTURE_DOCS, openPgliteFixture } from '../search/fixture.ts';
import { fakeVector } from '../fixtures/embeddings/pool-fake-model.ts';

const FAKE = new URL('../fixtures/embeddings/pool-fake-model.ts', import.meta.url);
const fakePool = (workers = 2, batchSize = 2) => new EmbedPool({ workers, id: 'fake-8', dimension: 8, batchSize, module: FAKE });

const vectorsOf = async (db: Db, variant: string) =>
  (
    await db.pool.query<{ id: string; v: string }>(
      `SELECT c.id, c.embedding::text AS v FROM book_chunks c JOIN index_variants i ON i.id = c.variant WHERE i.name = $1 ORDER BY c.id`,
      [variant],
    )
  ).rows;

describe('embedding pool', () => {
  it('thread count: RANKGATE_EMBED_WORKERS or --embed-workers, default every core; a bad value names the knob', () => {
    assert.equal(embedWorkerCount(undefined, {}), availableParallelism());
    assert.equal(embedWorkerCount(undefined, { RANKGATE_EMBED_WORKERS: '3' }), 3);
    assert.equal(embedWorkerCount('1', { RANKGATE_EMBED_WORKERS: '3' }), 1, 'the flag wins');
    assert.equal(embedWorkerCount('auto', {}), availableParallelism());
    for (const bad of ['0', '-2', 'two', '1.5', '999']) {
      assert.throws(() => embedWorkerCount(undefined, { RANKGATE_EMBED_WORKERS: bad }), (e: unknown) => isUserError(e) && /^RANKGATE_EMBED_WORKERS: expected a whole number/.test((e as Error).message));
    }
    assert.throws(() => embedWorkerCount('0', {}), (e: unknown) => isUserError(e) && /^--embed-workers:/.test((e as Error).message));
  });

  it('USE-lite in 2 threads: the same vectors, bit for bit and in input order, as in this process; the index is identical; a re-ingest embeds nothing', async () => {
    const db = await openPgliteFixture();
    const one = await createEmbedder('use-lite', { batchSize: 4 });
    const pool = await createEmbedder('use-lite', { workers: 2, batchSize: 4 });
    try {
      assert.ok(pool instanceof EmbedPool);
      assert.equal(pool.parallel, 2);
      // raw vectors: 3 batches of 4 in flight on 2 threads, against the same batches in this thread
      const texts = FIXTURE_DOCS.slice(0, 10).map((d) => d.sections.map((s) => s.text).join(' ')).concat('', 'inner peace');
      const inThread: number[][] = [];
      for (let i = 0; i < texts.length; i += 4) inThread.push(...(await one.embedDocuments(texts.slice(i, i + 4))));
      const threaded = await pool.embedDocuments(texts);
      assert.equal(threaded.length, texts.length);
      assert.deepEqual(threaded, inThread, 'identical float64 vectors, same order');

      // the whole ingest: 16 chunks of 48 tokens, 4 model calls of 4 texts, 2 at a time
      const first = await ingestCorpus({ db, documents: FIXTURE_DOCS, chunkSizes: [48], embedder: one });
      assert.equal(first.variants[0]!.cached, 0);
      const single = await vectorsOf(db, 'c48:use-lite');
      assert.equal(single.length, 16);
      await db.pool.query('DELETE FROM embedding_cache');
      const before = pool.embedded;
      const second = await ingestCorpus({ db, documents: FIXTURE_DOCS, chunkSizes: [48], embedder: pool });
      assert.equal(second.variants[0]!.embedded, first.variants[0]!.embedded, 'every text embedded again, in the threads');
      assert.equal(pool.embedded - before, first.variants[0]!.embedded);
      assert.deepEqual(await vectorsOf(db, 'c48:use-lite'), single, 'the index holds the same vectors as the one-thread ingest');

      // re-ingest: every vector from the cache, no model call at all
      const calls = pool.embedded;
      const third = await ingestCorpus({ db, documents: FIXTURE_DOCS, chunkSizes: [48], embedder: pool });
      assert.equal(third.variants[0]!.embedded, 0);
      assert.equal(third.variants[0]!.cached, second.variants[0]!.embedded, 'every distinct text from the cache');
      assert.equal(pool.embedded, calls, 'zero texts sent to the threads');
      assert.deepEqual(await vectorsOf(db, 'c48:use-lite'), single);
    } finally {
      await pool.close?.();
      await db.close();
    }
  });

  describe('failures (a fake model in the threads)', () => {
    let db: Db | undefined;
    const docs = (extra: string): CorpusDocument[] => [
      { id: 'calm', title: 'Calm', language: 'en', tags: [], metadata: {}, sections: [{ text: 'slow: still water and a quiet mind.' }, { text: 'The heron waits in the shallows.' }] },
      { id: 'storm', title: 'Storm', language: 'en', tags: [], metadata: {}, sections: [{ text: 'Wind breaks the surface into pieces.' }, { text: extra }] },
      { id: 'moon', title: 'Moon', language: 'en', tags: [], metadata: {}, sections: [{ text: 'The moon comes and goes on the lake.' }] },
    ];
    after(async () => db?.close());

    it('batches that finish out of order still come back in input order', async () => {
      const pool = fakePool(2, 1);
      try {
        const texts = ['slow: first', 'second', 'third', 'slow: fourth', 'fifth'];
        assert.deepEqual(await pool.embedDocuments(texts), texts.map(fakeVector));
        assert.equal(pool.embedded, 5);
      } finally {
        await pool.close();
      }
    });

    it('a pool nobody closed never keeps the process alive once its threads are idle', () => {
      const script = `import { EmbedPool } from ${JSON.stringify(new URL('../../src/embeddings/pool.ts', import.meta.url).href)};
const p = new EmbedPool({ workers: 2, id: 'fake-8', dimension: 8, batchSize: 1, module: new URL(${JSON.stringify(FAKE.href)}) });
const v = await p.embedDocuments(['a', 'b', 'c']);
console.log(v.length);`;
      const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.signal, null, 'the process exited by itself (not killed by the timeout)');
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), '3');
    });

    for (const [what, text, why] of [
      ['throws', 'THROW this batch.', /embedding thread \d of 2: the model could not read this batch/],
      ['dies', 'CRASH the thread.', /embedding thread \d of 2 exited \(code 3\)/],
    ] as const) {
      it(`a thread that ${what}: the ingest fails with one line naming the chunk and its document (exit 2); the variant built before is untouched`, async () => {
        db ??= await openPgliteFixture();
        const pool = fakePool(2, 1);
        try {
          const good = await ingestCorpus({ db, documents: docs('All is well.'), chunkSizes: [16], embedder: pool, corpusPath: 'weather' });
          assert.equal(good.variants[0]!.embedded + good.variants[0]!.cached, good.variants[0]!.chunks);
          const before = await vectorsOf(db, 'c16:fake-8');
          assert.ok(before.length >= 4);
          await assert.rejects(ingestCorpus({ db, documents: docs(text), chunkSizes: [16], embedder: pool, corpusPath: 'weather' }), (e: unknown) => {
            const m = (e as Error).message;
            assert.ok(isUserError(e), m);
            assert.equal((e as { exitCode: number }).exitCode, 2);
            assert.ok(!m.includes('\n'), 'one line');
            assert.match(m, why);
            assert.match(m, /while embedding chunk storm#c16-\d+ of document storm;/);
            assert.match(m, /the index variant being built was not written/);
            return true;
          });
          assert.deepEqual(await vectorsOf(db, 'c16:fake-8'), before, 'nothing half-written');
          const v = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM index_variants WHERE name = 'c16:fake-8'`);
          assert.equal(v.rows[0]!.n, 1);
          if (what === 'dies') {
            // a pool that lost a thread is not trusted again
            await assert.rejects(pool.embedDocuments(['anything']), /exited \(code 3\)/);
          }
        } finally {
          await pool.close();
        }
      });
    }
  });
});
