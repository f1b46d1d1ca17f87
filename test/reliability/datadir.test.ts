/**
 * The data directory through the real CLI (src/db/datadir.ts, src/db/target.ts):
 * - readers (search, golden check, serve) never write, initialise or repair a directory: one that is not a
 *   complete rankgate database is refused with one line naming it and what is missing, and its files stay
 *   byte-identical (hashed before and after); a missing or empty directory is not created or filled;
 * - the writer (ingest) refuses a non-empty directory that is not a complete database;
 * - every CLI and the provider honour --db, DATABASE_URL and RANKGATE_DATA_DIR by the same rule.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS, ROOT, assertNoStack, copyIndexFixture, hashTree, killChildren, rankgate, spawnNode, tempDir } from './helpers.ts';

after(killChildren);

const NO_ENV = { DATABASE_URL: undefined, RANKGATE_DATA_DIR: undefined };
const oneLine = (s: string) => s.trim().split('\n').filter(Boolean);

/** Every reader command, pointed at `dir` by --db (or by the environment when `env` is given). */
function readers(dir: string | undefined): string[][] {
  const db = dir === undefined ? [] : ['--db', dir];
  return [
    ['search', 'lamp', ...db],
    ['golden', 'check', '--chunk-size', '300', ...db],
    ['serve', '--port', '0', ...db],
  ];
}

describe('readers never write, initialise or repair a data directory', () => {
  const tmp = tempDir('datadir');
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('PG_VERSION removed: every reader and the writer exit 2 with one line; nothing in the directory changes', async () => {
    const d = await copyIndexFixture('no-pg-version');
    try {
      rmSync(join(d, 'PG_VERSION'));
      const before = hashTree(d);
      for (const args of [...readers(d), ['ingest', '--db', d, '--corpus', CORPUS]]) {
        const r = await rankgate(args, NO_ENV);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        assert.deepEqual(oneLine(r.stderr), [`rankgate ${args[0] === 'golden' ? 'golden' : args[0]}: ${d}: not a complete rankgate database: PG_VERSION is missing`], args.join(' '));
        assertNoStack(r.stderr);
        assert.equal(hashTree(d), before, `${args[0]} changed the directory`);
      }
    } finally {
      rmSync(join(d, '..'), { recursive: true, force: true });
    }
  });

  it('other missing pieces are named: global/pg_control, base', async () => {
    const d = await copyIndexFixture('missing-pieces');
    try {
      rmSync(join(d, 'global', 'pg_control'));
      let r = await rankgate(['search', 'lamp', '--db', d], NO_ENV);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${d}: not a complete rankgate database: global/pg_control is missing`));
      rmSync(join(d, 'base'), { recursive: true });
      const before = hashTree(d);
      r = await rankgate(['search', 'lamp', '--db', d], NO_ENV);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(hashTree(d), before);
    } finally {
      rmSync(join(d, '..'), { recursive: true, force: true });
    }
  });

  it('a missing directory is not created and an empty one stays empty; the message says how to build one', async () => {
    const missing = join(tmp, 'nowhere');
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    for (const args of readers(missing)) {
      const r = await rankgate(args, NO_ENV);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`${missing}: no rankgate database here \\(the directory does not exist\\); build one with: rankgate ingest --db ${missing}`));
      assert.ok(!existsSync(missing), `${args[0]} created ${missing}`);
    }
    for (const args of readers(empty)) {
      const r = await rankgate(args, NO_ENV);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /no rankgate database here \(the directory is empty\)/);
      assert.deepEqual(readdirSync(empty), [], `${args[0]} wrote into the empty directory`);
    }
  });

  it('the writer refuses a non-empty directory that is not a rankgate database, and leaves it alone', async () => {
    const other = join(tmp, 'my-notes');
    mkdirSync(other);
    writeFileSync(join(other, 'notes.txt'), 'precious\n');
    const before = hashTree(other);
    const r = await rankgate(['ingest', '--db', other, '--corpus', CORPUS], NO_ENV);
    assert.equal(r.code, 2, r.stderr);
    assert.deepEqual(oneLine(r.stderr), [`rankgate ingest: ${other}: not a complete rankgate database: PG_VERSION is missing`]);
    assert.equal(hashTree(other), before);
  });
});

describe('one rule for --db, DATABASE_URL and RANKGATE_DATA_DIR in every CLI and the provider', () => {
  const tmp = tempDir('dbtarget');
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const closed = 'postgres://rg:pw@127.0.0.1:1/rg_target';

  it('RANKGATE_DATA_DIR is where search, golden check, serve and ingest go', async () => {
    const d = await copyIndexFixture('env-dir');
    try {
      const s = await rankgate(['search', 'still water', '--json'], { ...NO_ENV, RANKGATE_DATA_DIR: d });
      assert.equal(s.code, 0, s.stderr);
      const res = JSON.parse(s.stdout);
      assert.ok(res.hits.length > 0);
      assert.equal(res.diagnostics.index.engine, 'pglite');
      const g = await rankgate(['golden', 'check', '--chunk-size', '300', '--json'], { ...NO_ENV, RANKGATE_DATA_DIR: d });
      // 2: the demo golden set names documents this fixture index does not hold (golden check refuses those); the
      // checks printed show the index of RANKGATE_DATA_DIR was read
      assert.ok(g.code === 0 || g.code === 1 || g.code === 2, g.stderr);
      assert.ok(Array.isArray(JSON.parse(g.stdout).checks));
      // a directory that is not a database, named by the environment: every command names it (so it was used)
      const other = join(tmp, 'other');
      mkdirSync(other, { recursive: true });
      writeFileSync(join(other, 'x'), 'x');
      for (const args of [...readers(undefined), ['ingest', '--corpus', CORPUS]]) {
        const r = await rankgate(args, { ...NO_ENV, RANKGATE_DATA_DIR: other });
        assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(`${other}: not a complete rankgate database`), args[0]);
      }
    } finally {
      rmSync(join(d, '..'), { recursive: true, force: true });
    }
  });

  it('DATABASE_URL is used by every command and beats RANKGATE_DATA_DIR; --db beats both', async () => {
    const d = await copyIndexFixture('env-url');
    try {
      for (const args of [...readers(undefined), ['ingest', '--corpus', CORPUS]]) {
        const r = await rankgate(args, { DATABASE_URL: closed, RANKGATE_DATA_DIR: d });
        assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
        assert.match(r.stderr, /database postgres:\/\/127\.0\.0\.1:1\/rg_target is unreachable/, args[0]);
        assert.doesNotMatch(r.stderr, /pw@/);
      }
      const s = await rankgate(['search', 'still water', '--json', '--db', d], { DATABASE_URL: closed, RANKGATE_DATA_DIR: join(tmp, 'nowhere') });
      assert.equal(s.code, 0, s.stderr);
    } finally {
      rmSync(join(d, '..'), { recursive: true, force: true });
    }
  });

  it('the promptfoo provider resolves the same way (RANKGATE_DATA_DIR, then DATABASE_URL over it)', async () => {
    const script = join(tmp, 'provider.mts');
    writeFileSync(
      script,
      `const { default: P } = await import(${JSON.stringify(join(ROOT, 'providers', 'search.ts'))});
const p = new P({ config: { worker: false, warmup: false, routingConfig: false } });
const r = await p.callApi('q', { vars: { query: 'still water' } });
console.log(JSON.stringify({ error: r.error ?? null, index: r.metadata?.diagnostics?.index ?? null }));
process.exit(0);`,
    );
    const d = await copyIndexFixture('env-provider');
    try {
      const run = async (env: Record<string, string | undefined>) => {
        const s = spawnNode(['--import', 'tsx', script], { env });
        const r = await s.result;
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout.trim().split('\n').pop()!) as { error: string | null; index: { engine: string } | null };
      };
      const ok = await run({ ...NO_ENV, RANKGATE_DATA_DIR: d });
      assert.equal(ok.error, null);
      assert.equal(ok.index?.engine, 'pglite');
      const missing = await run({ ...NO_ENV, RANKGATE_DATA_DIR: join(tmp, 'nope') });
      assert.match(missing.error ?? '', new RegExp(`${join(tmp, 'nope')}: no rankgate database here`));
      const both = await run({ DATABASE_URL: closed, RANKGATE_DATA_DIR: d });
      assert.match(both.error ?? '', /database postgres:\/\/127\.0\.0\.1:1\/rg_target is unreachable/);
    } finally {
      rmSync(join(d, '..'), { recursive: true, force: true });
    }
  });
});
