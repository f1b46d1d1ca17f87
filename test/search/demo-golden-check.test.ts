/**
 * Issue 5: every passage_substring of the bundled golden sets resolves to a chunk of the bundled corpus at the
 * standard chunk sizes 200, 300 and 500, and none is so vague that it matches more than 3 chunks.
 * Chunk boundaries do not depend on the embedder, so the fast test embedder stands in for USE-lite here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPglite, openDatabase } from '../../src/db/index.ts';
import { ingestCorpus } from '../../src/ingest/pipeline.ts';
import { readCorpus } from '../../src/ingest/readers.ts';
import { run } from '../../src/cli/golden-check.ts';
import { HashEmbedder } from './fixture.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

test('demo golden sets: every passage substring resolves at chunk sizes 200, 300 and 500 (none to more than 3 chunks)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-demo-check-'));
  try {
    const dataDir = join(dir, 'db');
    const db = await openDatabase({ pglite: await createPglite(dataDir) });
    const documents = await readCorpus(join(root, 'datasets/corpus'), 'markdown');
    assert.equal(documents.length, 6, 'four English books, one Spanish, one Hindi');
    const embedder = new HashEmbedder(64);
    await ingestCorpus({ db, documents, chunkSizes: [200, 300, 500], embedder });
    await db.close();

    const sets = readdirSync(join(root, 'datasets/golden'))
      .filter((f) => /^golden-set-.*\.json$/.test(f))
      .map((f) => join(root, 'datasets/golden', f));
    assert.equal(sets.length, 3, 'en, es, hi');
    let out = '';
    let err = '';
    const log = console.log;
    const error = console.error;
    console.log = (...a: unknown[]) => void (out += a.join(' ') + '\n');
    console.error = (...a: unknown[]) => void (err += a.join(' ') + '\n');
    let code: number;
    try {
      code = await run(['--db', dataDir, '--embedder', embedder.id, '--chunk-size', '200,300,500', ...sets]);
    } finally {
      console.log = log;
      console.error = error;
    }
    assert.equal(code, 0, `golden check failed:\n${err}`);
    // Each substring of the three sets is resolved once per variant.
    const substrings = sets
      .flatMap((f) => JSON.parse(readFileSync(f, 'utf8')) as { expected_passages: { passage_substring?: string }[] }[])
      .flatMap((q) => q.expected_passages.filter((p) => p.passage_substring));
    assert.ok(substrings.length >= 100, 'the demo sets carry passage substrings');
    assert.match(out, new RegExp(`${3 * substrings.length} substring resolutions over 3 variant`));
    assert.match(out, /over 3 variant\(s\) \(c200:hash-64, c300:hash-64, c500:hash-64\): 0 unresolved/);
    assert.doesNotMatch(err, /warning: .*matches \d+ chunks/, `a substring matches more than 3 chunks:\n${err}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
