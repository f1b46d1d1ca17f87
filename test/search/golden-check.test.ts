import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPglite, openDatabase } from '../../src/db/index.ts';
import { ingestCorpus } from '../../src/ingest/pipeline.ts';
import { run } from '../../src/cli/golden-check.ts';
import { isUserError } from '../../src/errors.ts';
import { FIXTURE_DOCS, HashEmbedder } from './fixture.ts';
import { capture } from '../helpers/capture.ts';

function entry(id: string, substrings: string[]) {
  return {
    id,
    query: `query ${id}`,
    language: 'en',
    category: 'direct',
    expected_passages: substrings.map((s) => ({ passage_substring: s, relevance: 'high' })),
    expected_routing: 'search',
  };
}

test('golden check: names each query whose substring resolves to nothing, warns on > 3 chunks', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-gcheck-'));
  try {
    const dataDir = join(dir, 'db');
    const pglite = await createPglite(dataDir);
    const db = await openDatabase({ pglite });
    const many = Array.from({ length: 5 }, (_, i) => ({ ...FIXTURE_DOCS[7], id: `lake-${i}` }));
    await ingestCorpus({ db, documents: [...FIXTURE_DOCS, ...many], chunkSizes: [24, 48], embedder: new HashEmbedder(64) });
    await db.close();

    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify([entry('q-ok', ['Grief is not a problem to be solved.', 'literal 100% and an under_score'])]));
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify([
        entry('q-ok2', ['Sleep problems often come from a racing mind']),
        entry('q-missing', ['this sentence is not in the corpus']),
        entry('q-vague', ['mountain lakes']),
      ]),
    );

    const ok = await capture(() => run(['--db', dataDir, '--embedder', 'hash-64', good]));
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /4 substring resolutions over 2 variant\(s\) \(c24:hash-64, c48:hash-64\): 0 unresolved/);

    const r = await capture(() => run(['--db', dataDir, '--embedder', 'hash-64', '--chunk-size', '48', good, bad]));
    assert.equal(r.code, 1);
    assert.match(r.err, /error: .*bad\.json: query q-missing: passage_substring "this sentence is not in the corpus" resolves to no chunk in c48:hash-64/);
    assert.doesNotMatch(r.err, /q-ok/);
    assert.match(r.err, /warning: .*bad\.json: query q-vague: .* matches 7 chunks in c48:hash-64/);

    // the index knows its documents: an expected path no document has is exit 2, FILE:LINE, did-you-mean
    const paths = join(dir, 'paths.yaml');
    writeFileSync(paths, '- id: q-path\n  query: slow breathing\n  category: direct\n  expected_paths: [books/en/quiet-breth.md, books/en/quiet-breath.md]\n');
    const p = await capture(() => run(['--db', dataDir, '--embedder', 'hash-64', paths]));
    assert.equal(p.code, 2, p.out + p.err);
    assert.match(p.err, /paths\.yaml:4 \(q-path\) expected path: no document of corpus of the index in .* has path \(or id\) "books\/en\/quiet-breth\.md"; did you mean "books\/en\/quiet-breath\.md"\?/);
    assert.equal(p.err.trim().split('\n').length, 1, p.err);

    await assert.rejects(
      run(['--db', dataDir, '--embedder', 'hash-64', '--chunk-size', 'abc', good]),
      (e: unknown) => isUserError(e) && /--chunk-size/.test((e as Error).message),
    );
    await assert.rejects(
      run(['--db', dataDir, '--embedder', 'hash-64', join(dir, 'nope.json')]),
      (e: unknown) => isUserError(e) && /nope\.json: no such golden-set file/.test((e as Error).message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
