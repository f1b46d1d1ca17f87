/**
 * `rankgate golden bootstrap --from-feedback sql` on the CI Postgres (RANKGATE_TEST_DATABASE_URL): the legal harness's
 * two tables in a schema of the test's own, a role that may only SELECT them, the default feedback query (and a team's
 * own with --sql) read through the cursor in batches (12,004 rows: three round trips), and the one-line refusals of a
 * role without SELECT and of a query without the four columns.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { run as golden } from '../../src/cli/golden.ts';
import { loadGolden } from '../../src/golden/index.ts';
import { logQueryId } from '../../src/judgments/bootstrap.ts';
import { FETCH_ROWS } from '../../src/judgments/sql.ts';
import { runCli } from '../helpers/capture.ts';

const URL_ = process.env.RANKGATE_TEST_DATABASE_URL;
const SKIP = URL_ ? false : 'needs RANKGATE_TEST_DATABASE_URL (a Postgres server; .ci/setup-postgres.sh starts one)';

const rg = (...args: string[]) => runCli('golden', golden, args);

describe('bootstrap from the team\'s Postgres through a read-only role', { skip: SKIP }, () => {
  const tag = `${process.pid}_${Math.floor(Math.random() * 1e6)}`;
  const schema = `rg_feedback_${tag}`;
  const role = `rg_feedback_ro_${tag}`;
  const noRole = `rg_feedback_none_${tag}`;
  const dir = mkdtempSync(join(tmpdir(), 'rg-sql-'));
  let admin: pg.Client;
  const urlFor = (user: string) => {
    const u = new URL(URL_!);
    u.username = user;
    u.password = '';
    return u.toString();
  };

  before(async () => {
    admin = new pg.Client({ connectionString: URL_ });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`CREATE TABLE ${schema}.search_logs (id bigint PRIMARY KEY, query text NOT NULL, created_at timestamptz NOT NULL)`);
    await admin.query(`CREATE TABLE ${schema}.search_relevance_feedback (search_log_id bigint REFERENCES ${schema}.search_logs(id), case_law_id uuid NOT NULL, relevance_score int NOT NULL)`);
    await admin.query(
      `INSERT INTO ${schema}.search_logs VALUES (1, 'Betterment levy on a  rezoned plot', '2026-05-01T10:00:00Z'), (2, 'betterment levy on a rezoned plot', '2026-05-02T10:00:00Z'), (3, 'appeal deadline', '2026-05-03T10:00:00Z')`,
    );
    await admin.query(
      `INSERT INTO ${schema}.search_relevance_feedback VALUES (1, '11111111-1111-1111-1111-111111111111', 3), (2, '11111111-1111-1111-1111-111111111111', 3), (2, '22222222-2222-2222-2222-222222222222', 1), (3, '33333333-3333-3333-3333-333333333333', 3)`,
    );
    // 12,000 more rows of one more query: the cursor returns them in batches of FETCH_ROWS
    await admin.query(`INSERT INTO ${schema}.search_logs SELECT 100 + g, 'many rows', '2026-05-04T10:00:00Z'::timestamptz + g * interval '1 second' FROM generate_series(1, 12000) g`);
    await admin.query(`INSERT INTO ${schema}.search_relevance_feedback SELECT 100 + g, '44444444-4444-4444-4444-444444444444', CASE WHEN g % 4 = 0 THEN 3 ELSE 0 END FROM generate_series(1, 12000) g`);
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
    await admin.query(`GRANT SELECT ON ${schema}.search_logs, ${schema}.search_relevance_feedback TO ${role}`);
    await admin.query(`ALTER ROLE ${role} SET search_path = ${schema}`);
    await admin.query(`CREATE ROLE ${noRole} LOGIN`);
    await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${noRole}`);
    await admin.query(`GRANT SELECT ON ${schema}.search_logs TO ${noRole}`);
    await admin.query(`ALTER ROLE ${noRole} SET search_path = ${schema}`);
  });

  after(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    for (const r of [role, noRole]) {
      await admin.query(`DROP OWNED BY ${r}`).catch(() => {});
      await admin.query(`DROP ROLE IF EXISTS ${r}`).catch(() => {});
    }
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the default query through the read-only role: entries grouped by normalised query (shown as most rows typed it), the same bytes twice', async () => {
    assert.ok(12000 > 2 * FETCH_ROWS, 'the many-row query spans several fetches');
    // the role can read, and nothing else
    const ro = new pg.Client({ connectionString: urlFor(role) });
    await ro.connect();
    try {
      await assert.rejects(ro.query(`INSERT INTO search_logs VALUES (9, 'x', now())`), (e: { code?: string }) => e.code === '42501', 'the role may not write');
    } finally {
      await ro.end();
    }
    const out = join(dir, 'gold.jsonl');
    writeFileSync(out, '{"id":"c1","query":"Appeal deadline","relevant_case_law_ids":["33333333-3333-3333-3333-333333333333"],"source":"chair"}\n');
    const r = await rg('bootstrap', '--from-feedback', 'sql', '--database-url', urlFor(role), '--out', out);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /read 12,004 feedback rows \(sql: src\/judgments\/feedback\.sql\)/);
    const qs = loadGolden(out).queries;
    assert.deepEqual(
      qs.map((q) => [q.id, q.query, q.source, q.expected.map((e) => e.doc_id)]),
      [
        ['c1', 'Appeal deadline', 'reviewed', ['33333333-3333-3333-3333-333333333333']],
        [logQueryId('betterment levy on a rezoned plot'), 'betterment levy on a rezoned plot', 'bootstrap', ['11111111-1111-1111-1111-111111111111']],
        [logQueryId('many rows'), 'many rows', 'bootstrap', ['44444444-4444-4444-4444-444444444444']],
      ],
    );
    assert.match(qs[2]!.notes!, /3000 rows scored >= 3, 9000 below/);
    const first = readFileSync(out, 'utf8');
    const again = await rg('bootstrap', '--from-feedback', 'sql', '--database-url', urlFor(role), '--out', out);
    assert.equal(again.code, 0, again.err);
    assert.equal(readFileSync(out, 'utf8'), first);
  });

  test("a team's own query (--sql FILE); a role without SELECT on a table; a query without the four columns: one line, exit 2", async () => {
    const own = join(dir, 'own.sql');
    writeFileSync(own, `-- only the cited precedents of May 2nd onwards\nSELECT l.query, f.case_law_id::text AS doc, f.relevance_score AS score, l.created_at AS time\nFROM search_relevance_feedback f JOIN search_logs l ON l.id = f.search_log_id\nWHERE l.created_at >= '2026-05-02' AND l.id < 100;\n`);
    const out = join(dir, 'own.jsonl');
    const r = await rg('bootstrap', '--from-feedback', 'sql', '--sql', own, '--database-url', urlFor(role), '--out', out);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /read 3 feedback rows \(sql: .*own\.sql\)/);
    const denied = await rg('bootstrap', '--from-feedback', 'sql', '--database-url', urlFor(noRole), '--out', join(dir, 'x.jsonl'));
    assert.equal(denied.code, 2);
    assert.match(denied.err, /feedback\.sql: the feedback query failed \(permission denied for table search_relevance_feedback\): the role needs SELECT on the feedback and search-log tables/);
    const cols = join(dir, 'cols.sql');
    writeFileSync(cols, 'SELECT query, created_at FROM search_logs');
    const bad = await rg('bootstrap', '--from-feedback', 'sql', '--sql', cols, '--database-url', urlFor(role), '--out', join(dir, 'y.jsonl'));
    assert.equal(bad.code, 2);
    assert.match(bad.err, /cols\.sql: the query returns no column 'doc', 'score', 'time' \(it returns query, created_at\)/);
    const score = join(dir, 'score.sql');
    writeFileSync(score, "SELECT query, 'd1' AS doc, 9 AS score, created_at AS time FROM search_logs WHERE id = 2");
    const range = await rg('bootstrap', '--from-feedback', 'sql', '--sql', score, '--database-url', urlFor(role), '--out', join(dir, 'z.jsonl'));
    assert.equal(range.code, 2);
    assert.match(range.err, /score\.sql: sql row 1: field 'score': expected a whole score from 0 to 3/);
    const none = await rg('bootstrap', '--from-feedback', 'sql', '--out', join(dir, 'w.jsonl'));
    assert.ok(process.env.DATABASE_URL !== undefined || /no database: give --database-url URL/.test(none.err), none.err);
  });
});
