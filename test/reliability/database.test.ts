/**
 * Database faults, through the real CLI: unreachable at start (server port closed, PGlite path that is a
 * file, a corrupt PGlite directory) and a server backend terminated in the middle of an ingest's write
 * transaction. Each must end in one clear message naming the database, a non-zero exit and no stack trace;
 * the interrupted ingest writes nothing (one transaction per variant) and a re-run completes.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CORPUS, FIXTURES, ROOT, SERVER_SKIP, SERVER_URL, assertNoStack, killChildren, promptfooEval, rankgate, serverDatabase, spawnNode, BIN, tempDir } from './helpers.ts';

after(killChildren);

describe('database unreachable at start', () => {
  const dir = tempDir('db-start');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('server on a closed port: ingest and search exit 2 naming the database, no stack', async () => {
    const url = 'postgres://rg_user:s3cret@127.0.0.1:1/rankgate_nowhere';
    for (const args of [
      ['ingest', '--db', url, '--corpus', CORPUS],
      ['search', '--db', url, 'calm water'],
    ]) {
      const r = await rankgate(args);
      assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
      assert.match(r.stderr, /database postgres:\/\/127\.0\.0\.1:1\/rankgate_nowhere is unreachable/);
      assert.doesNotMatch(r.stderr, /s3cret/, 'the password is never printed');
      assertNoStack(r.stderr);
    }
  });

  it('DATABASE_URL pointing nowhere is named the same way', async () => {
    const r = await rankgate(['search', 'calm water'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/rg_env' });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /database postgres:\/\/127\.0\.0\.1:1\/rg_env is unreachable/);
    assertNoStack(r.stderr);
  });

  it('PGlite data directory that is a file: exit 2 naming the path, no stack, the file untouched', async () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'precious\n');
    for (const args of [
      ['search', '--db', file, 'calm water'],
      ['ingest', '--db', file, '--corpus', CORPUS],
    ]) {
      const r = await rankgate(args, { DATABASE_URL: undefined });
      assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
      assert.match(r.stderr, /PGlite/);
      assert.ok(r.stderr.includes(file), r.stderr);
      assertNoStack(r.stderr);
    }
    assert.equal(readFileSync(file, 'utf8'), 'precious\n');
  });

  it('corrupt PGlite data directory: exit 2 naming it, no stack', async () => {
    const bad = join(dir, 'corrupt');
    mkdirSync(bad);
    writeFileSync(join(bad, 'PG_VERSION'), 'garbage\n');
    const r = await rankgate(['search', '--db', bad, 'calm water'], { DATABASE_URL: undefined });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /not a complete rankgate database: global\/pg_control is missing/);
    assert.ok(r.stderr.includes(bad), r.stderr);
    assertNoStack(r.stderr);
  });
});

describe('server backend terminated in the middle of an ingest', () => {
  it('clear error naming the database, non-zero exit, nothing written; a re-run completes', async (t) => {
    if (!SERVER_URL) return t.skip(SERVER_SKIP);
    const sdb = await serverDatabase('rg_rel_ingest');
    const pg = (await import('pg')).default;
    const locker = new pg.Client({ connectionString: sdb.url });
    try {
      await locker.connect();
      // The pipeline takes this advisory lock inside its write transaction (documents already upserted):
      // holding it parks the ingest exactly there, so the termination lands mid-transaction every time. The key is
      // per schema (current_schema(): rankgate's own, `rankgate`).
      const key = "hashtext('rankgate' || 'rankgate_ingest:c300:use-lite')";
      await locker.query(`SELECT pg_advisory_lock(${key})`);
      const ingest = spawnNode([BIN, 'ingest', '--db', sdb.url, '--corpus', CORPUS, '--chunk-size', '300'], { timeoutMs: 120_000 });
      let pid: number | undefined;
      const deadline = Date.now() + 90_000;
      while (!pid && Date.now() < deadline) {
        const w = await locker.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
             AND query LIKE '%pg_advisory_xact_lock%'`,
        );
        pid = w.rows[0]?.pid;
        if (!pid) {
          if (ingest.child.exitCode !== null) break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      assert.ok(pid, `the ingest never reached its write transaction:\n${ingest.output()}`);
      await locker.query('SELECT pg_terminate_backend($1)', [pid]);
      const r = await ingest.result;
      assert.notEqual(r.code, 0, 'an ingest whose connection was killed must not exit 0');
      assert.ok(r.code !== null, `ended by signal ${r.signal}`);
      const host = new URL(sdb.url);
      assert.ok(r.stderr.includes(`${host.hostname}:${host.port}${host.pathname}`), `names the database:\n${r.stderr}`);
      assert.match(r.stderr, /connection|terminat/i);
      assertNoStack(r.stderr);
      const counts = await locker.query(
        `SELECT (SELECT count(*) FROM rankgate.index_variants)::int AS v, (SELECT count(*) FROM rankgate.documents)::int AS d,
                (SELECT count(*) FROM rankgate.book_chunks)::int AS c`,
      );
      assert.deepEqual(counts.rows[0], { v: 0, d: 0, c: 0 }, 'the interrupted transaction left nothing behind');
      await locker.query(`SELECT pg_advisory_unlock(${key})`);

      const again = await rankgate(['ingest', '--db', sdb.url, '--corpus', CORPUS, '--chunk-size', '300', '--json'], {}, 120_000);
      assert.equal(again.code, 0, again.stderr);
      const stats = JSON.parse(again.stdout);
      assert.equal(stats.variants[0].chunks, 7);
      assert.equal(stats.variants[0].embedded, 0, 'vectors paid for before the failure came from the cache');
      const v = await locker.query('SELECT chunk_count FROM rankgate.index_variants');
      assert.deepEqual(v.rows, [{ chunk_count: 7 }]);
    } finally {
      await locker.end().catch(() => {});
      await sdb.drop();
    }
  });
});

/** A connection URL without its password. */
const noPassword = (url: string) => {
  const u = new URL(url);
  u.password = '';
  return u.toString();
};

describe('server backends terminated again and again during a promptfoo eval', () => {
  it('no crash: every row is an answer or an error naming the lost connection; the eval finishes; the gate counts errors', async (t) => {
    if (!SERVER_URL) return t.skip(SERVER_SKIP);
    const sdb = await serverDatabase('rg_rel_eval');
    const dir = tempDir('db-eval');
    try {
      const ing = await rankgate(['ingest', '--db', sdb.url, '--corpus', CORPUS, '--chunk-size', '300'], {}, 120_000);
      assert.equal(ing.code, 0, ing.stderr);
      const config = join(dir, 'promptfooconfig.yaml');
      const out = join(dir, 'results.json');
      writeFileSync(
        config,
        `prompts: ['{{query}}']
providers:
  - id: file://${ROOT}/providers/search.ts
    label: ours-on-server
    config: { databaseUrl: '${noPassword(sdb.url)}', routingConfig: false, chunkSize: 300, embedder: use-lite, timeoutMs: 20000 }
defaultTest:
  assert:
    - type: javascript
      value: file://${ROOT}/assertions/rank.ts:rank
tests: file://${join(FIXTURES, 'tests.ts')}
evaluateOptions: { maxConcurrency: 2 }
env: { PROMPTFOO_PASS_RATE_THRESHOLD: '0' }
`,
      );
      // a databaseUrl holding a password is refused (promptfoo would store it): the CI server's comes through PGPASSWORD
      const ev = promptfooEval(config, out, { PGPASSWORD: decodeURIComponent(new URL(sdb.url).password) || undefined });
      let kills = 0;
      const deadline = Date.now() + 120_000;
      while (ev.child.exitCode === null && Date.now() < deadline) {
        const r = await sdb.admin.query(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
          [new URL(sdb.url).pathname.slice(1)],
        );
        kills += r.rows[0].n;
        await new Promise((res) => setTimeout(res, 150));
      }
      const r = await ev.result;
      assert.ok(kills > 0, 'some backend was terminated');
      assert.doesNotMatch(r.stderr, /Emitted 'error' event|Received unexpected/, r.stderr.slice(-2000));
      const rows = JSON.parse(readFileSync(out, 'utf8')).results.results as { response?: { error?: string; output?: unknown } }[];
      assert.equal(rows.length, 6, 'the eval finished every row');
      for (const row of rows) {
        // a backend killed mid-read shows up as the server's termination notice or, when the socket is reset first,
        // as pg's "read ECONNRESET": both name the lost connection
        if (row.response?.error) assert.match(row.response.error, /terminat|connection|unavailable|ECONNRESET/i);
        else assert.ok(row.response?.output, 'a row without an error has an output');
      }
      // floors of this fixture (direct queries only): the repository's config/gate.yaml has a technique_boundary floor
      // that no fixture row can check, which made a run whose every row survived the kills exit 2 as well
      writeFileSync(join(dir, 'gate.yaml'), 'overall:\n  recall_at_3: 0.5\n');
      const g = await rankgate(['gate', out, '--floors', join(dir, 'gate.yaml'), '--report', join(dir, 'report.json')]);
      // the exit-code contract: errored rows are a broken setup (2), never a quality result
      if (rows.some((x) => x.response?.error)) assert.equal(g.code, 2, g.stderr);
      else assert.ok(g.code === 1 || g.code === 0, g.stderr);
      const rep = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'));
      assert.equal(rep.errors, rows.filter((x) => x.response?.error).length, 'every lost row is counted as an error');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await sdb.drop();
    }
  });
});
