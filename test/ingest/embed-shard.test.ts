/**
 * Sharded embedding (src/ingest/embed-shard.ts, `rankgate embed-cache`): two processes embed half of the corpus's
 * distinct chunk texts each (by content hash), the cache files merge, load into a fresh database's embedding cache,
 * and `rankgate ingest` then embeds nothing: every vector comes from the shards, and equals the one-process build's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { hashShard, readCacheFiles } from '../../src/ingest/embed-shard.ts';
import { ROOT, rankgate, tempDir, type RunResult } from '../harness/helpers.ts';

const CORPUS = join(ROOT, 'test', 'fixtures', 'harness', 'corpus');
const SIZES = '40,60';

describe('rankgate embed-cache: embed 1/N per process, merge, ingest embeds nothing', () => {
  const dir = tempDir('embed-shard');
  const f = (n: string) => join(dir, n);
  let shards: RunResult[] = [];
  let one: RunResult;
  before(async () => {
    // Two shard processes in parallel, and the one-process build (1/1) for comparison.
    [shards, one] = await Promise.all([
      Promise.all([1, 2].map((i) => rankgate(['embed-cache', 'build', '--shard', `${i}/2`, '--corpus', CORPUS, '--chunk-size', SIZES, '--out', f(`s${i}.jsonl`)]))),
      rankgate(['embed-cache', 'build', '--shard', '1/1', '--corpus', CORPUS, '--chunk-size', SIZES, '--out', f('all.jsonl')]),
    ]);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('each shard embeds its own texts (by content hash), and together they are the one-process build, vector for vector', async () => {
    for (const r of [...shards, one]) assert.equal(r.code, 0, r.stderr);
    const s1 = readCacheFiles([f('s1.jsonl')]);
    const s2 = readCacheFiles([f('s2.jsonl')]);
    const all = readCacheFiles([f('all.jsonl')]);
    assert.ok(s1.size > 0 && s2.size > 0, `both shards have texts (${s1.size}, ${s2.size})`);
    assert.equal(s1.size + s2.size, all.size);
    for (const e of s1.values()) assert.equal(hashShard(e.sha256, 2), 1);
    for (const e of s2.values()) assert.equal(hashShard(e.sha256, 2), 2);
    const m = await rankgate(['embed-cache', 'merge', f('merged.jsonl'), f('s2.jsonl'), f('s1.jsonl')]);
    assert.equal(m.code, 0, m.stderr);
    const merged = readCacheFiles([f('merged.jsonl')]);
    assert.equal(merged.size, all.size);
    for (const [k, e] of all) assert.deepEqual(merged.get(k)?.embedding, e.embedding, k);
    assert.match(shards[0]!.stdout, /shard 1\/2: \d+ of \d+ distinct chunk texts \(use-lite\), embedded \d+, reused 0/);
  });

  it('imported into a fresh database, the ingest finds every vector in the cache (embedded 0)', async () => {
    const db = f('db');
    const imp = await rankgate(['embed-cache', 'import', f('merged.jsonl'), '--db', db], { DATABASE_URL: undefined });
    assert.equal(imp.code, 0, imp.stderr);
    const n = readFileSync(f('merged.jsonl'), 'utf8').trim().split('\n').length;
    assert.match(imp.stdout, new RegExp(`: ${n} embeddings added to the cache \\(0 already there\\)`));
    const ing = await rankgate(['ingest', '--corpus', CORPUS, '--chunk-size', SIZES, '--db', db, '--json'], { DATABASE_URL: undefined });
    assert.equal(ing.code, 0, ing.stderr);
    const stats = JSON.parse(ing.stdout) as { variants: { embedded: number; cached: number; chunks: number }[] };
    assert.equal(stats.variants.length, 2);
    for (const v of stats.variants) {
      assert.equal(v.embedded, 0, 'nothing embedded by the ingest');
      assert.ok(v.cached > 0);
    }
    // And back out: the database's cache as a file holds the same keys.
    const exp = await rankgate(['embed-cache', 'export', f('export.jsonl'), '--db', db], { DATABASE_URL: undefined });
    assert.equal(exp.code, 0, exp.stderr);
    assert.deepEqual([...readCacheFiles([f('export.jsonl')]).keys()].sort(), [...readCacheFiles([f('merged.jsonl')]).keys()].sort());
  });

  it('bad input is one line, exit 2: shard syntax, a conflicting vector, a broken line', async () => {
    const bad = await rankgate(['embed-cache', 'build', '--shard', '3/2', '--out', f('x.jsonl'), '--corpus', CORPUS]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--shard 3\/2: shard 3 of 2 does not exist/);
    const { writeFileSync } = await import('node:fs');
    const line = readFileSync(f('s1.jsonl'), 'utf8').split('\n')[0]!;
    const e = JSON.parse(line) as { embedding: number[] };
    e.embedding[0] = e.embedding[0]! + 1;
    writeFileSync(f('conflict.jsonl'), JSON.stringify(e) + '\n');
    const c = await rankgate(['embed-cache', 'merge', f('m2.jsonl'), f('s1.jsonl'), f('conflict.jsonl')]);
    assert.equal(c.code, 2);
    assert.match(c.stderr, /conflict\.jsonl:1: text [0-9a-f]{64} \(use-lite\|512\|document\) has a different vector in .*s1\.jsonl:1/);
    writeFileSync(f('broken.jsonl'), line + '\n{oops\n');
    const b = await rankgate(['embed-cache', 'import', f('broken.jsonl'), '--db', f('db2')]);
    assert.equal(b.code, 2);
    assert.match(b.stderr, /broken\.jsonl:2: not JSON/);
    const u = await rankgate(['embed-cache', 'biuld']);
    assert.equal(u.code, 2);
    assert.match(u.stderr, /unknown subcommand 'biuld' \(did you mean 'build'\?\)|unknown subcommand 'biuld'.*build/);
    for (const r of [bad, c, b, u]) assert.doesNotMatch(r.stderr, /\n\s+at /);
  });
});
