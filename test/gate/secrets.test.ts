/**
 * No secret in any output: a real small eval against the CI Postgres with a password-bearing DATABASE_URL (a role
 * made for this test, with a password), a column naming the same URL as `databaseUrl:`, a `url:` service with
 * credentials and a module: column with an `apiKey`. Every output of `rankgate eval`, `rankgate gate` (baseline,
 * report, Markdown, PR comment) and `rankgate report` (HTML) is searched for the password and the key.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURE, ROOT, rankgate, tempDir, type RunResult } from '../harness/helpers.ts';
import { closedPort } from './helpers.ts';
import { REDACTED, redactConfig, redactText } from '../../src/util/redact.ts';
import { databaseUrlHasPassword, validateProviderConfig } from '../../src/search/provider-config.ts';
import { isUserError } from '../../src/errors.ts';

const SERVER_URL = process.env.RANKGATE_TEST_DATABASE_URL;
const file = (p: string) => pathToFileURL(p).href;

describe('a password-bearing DATABASE_URL, databaseUrl, url: credentials and an apiKey never reach an output', () => {
  const dir = tempDir('secrets');
  const password = `Pw-${randomBytes(9).toString('hex')}`;
  const apiKey = `sk-${randomBytes(12).toString('hex')}`;
  const suffix = `${process.pid}_${Date.now() % 100000}`;
  const role = `rg_secret_${suffix}`;
  const db = `rg_secret_${suffix}`;
  let admin: import('pg').Client | undefined;
  let url = '';
  const runs: Record<string, RunResult> = {};

  before(async () => {
    if (!SERVER_URL) return;
    const pg = (await import('pg')).default;
    admin = new pg.Client({ connectionString: SERVER_URL });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin.query(`CREATE DATABASE ${db} OWNER ${role}`);
    const inDb = new URL(SERVER_URL);
    inDb.pathname = `/${db}`;
    const c = new pg.Client({ connectionString: inDb.toString() });
    await c.connect();
    await c.query('CREATE EXTENSION IF NOT EXISTS vector'); // as the server's admin: the role may not create it
    await c.end();
    const u = new URL(SERVER_URL);
    u.username = role;
    u.password = password;
    u.pathname = `/${db}`;
    url = u.toString();

    const port = await closedPort();
    const common = { mode: 'keyword', chunkSize: 200, embedder: 'use-lite', routing: false, routingConfig: false, corpus: join(FIXTURE, 'corpus'), topK: 5 };
    const config = join(dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      [
        'description: secrets',
        "prompts: ['{{query}}']",
        'providers:',
        `  - id: ${file(join(ROOT, 'providers', 'search.ts'))}`,
        '    label: env url',
        `    config: ${JSON.stringify(common)}`,
        `  - id: ${file(join(ROOT, 'providers', 'search.ts'))}`,
        '    label: config url',
        // the password comes from the environment (PGPASSWORD): a databaseUrl holding one is refused (see below)
        `    config: ${JSON.stringify({ ...common, databaseUrl: url.replace(`:${password}@`, '@') })}`,
        `  - id: ${file(join(ROOT, 'providers', 'search.ts'))}`,
        '    label: url credentials',
        // a url:'s password comes from the environment too (RANKGATE_URL_PASSWORD): a url holding one is refused
        `    config: ${JSON.stringify({ url: `http://${role}@127.0.0.1:${port}/api/v1/search`, unreachableAfter: 0, timeoutMs: 2000, preflight: false })}`,
        `  - id: ${file(join(ROOT, 'providers', 'search.ts'))}`,
        '    label: module key',
        `    config: ${JSON.stringify({ module: join(FIXTURE, 'fixture-service.ts'), apiKey, mode: 'hybrid' })}`,
        'defaultTest:',
        '  assert:',
        `    - { type: javascript, value: '${file(join(ROOT, 'assertions', 'rank.ts'))}:rank' }`,
        `tests: ${file(join(FIXTURE, 'real', 'tests.ts'))}`,
        'extensions:',
        `  - ${file(join(ROOT, 'assertions', 'gate.ts'))}:beforeAll`,
        `  - ${file(join(ROOT, 'assertions', 'gate.ts'))}:afterAll`,
        '',
      ].join('\n'),
    );
    const floors = join(dir, 'gate.yaml');
    writeFileSync(floors, 'overall:\n  recall_at_3: 0.5\n');
    const env = { DATABASE_URL: url, PGPASSWORD: password, RANKGATE_URL_PASSWORD: password, RANKGATE_DATA_DIR: undefined, PROMPTFOO_CONFIG_DIR: join(dir, 'pf') };
    runs.eval = await rankgate(['eval', '--config', config, '--out-dir', join(dir, 'out'), '--floors', floors], env);
    const raw = readdirSync(join(dir, 'out')).find((f) => f.endsWith('.promptfoo.json'));
    assert.ok(raw, `rankgate eval wrote promptfoo's results:\n${runs.eval.stderr.slice(-3000)}`);
    const results = join(dir, 'out', raw);
    runs.update = await rankgate(['gate', results, '--floors', floors, '--update-baseline', '--baseline', join(dir, 'baseline.json')], env);
    runs.gate = await rankgate(
      ['gate', results, '--floors', floors, '--baseline', join(dir, 'baseline.json'), '--report', join(dir, 'gate.json'), '--markdown', join(dir, 'gate.md'), '--comment', join(dir, 'comment.md')],
      env,
    );
    runs.html = await rankgate(['report', results, '--html', join(dir, 'report.html')], env);
  });

  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (!admin) return;
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [db]).catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${db}`).catch(() => {});
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.end().catch(() => {});
  });

  it('the eval really ran on the server through the password URL, and every output was written', (t) => {
    if (!SERVER_URL) return t.skip('needs RANKGATE_TEST_DATABASE_URL (a Postgres server with pgvector; .ci/setup-postgres.sh starts one)');
    const out = join(dir, 'out');
    const report = JSON.parse(readFileSync(join(out, readdirSync(out).find((f) => /^eval-.*Z\.json$/.test(f))!), 'utf8'));
    assert.equal(report.total_queries, 3, runs.eval.stderr.slice(-2000));
    assert.equal(report.errors, 0, `the first column searched the server without errors:\n${runs.eval.stderr.slice(-3000)}`);
    assert.equal(runs.eval.code, 0, runs.eval.stderr.slice(-2000));
    assert.equal(runs.update.code, 0, runs.update.stderr);
    assert.equal(runs.gate.code, 0, runs.gate.stderr);
    // the url: column errored (its error rows quote the URL), the module: column answered
    const rows = JSON.parse(readFileSync(join(out, readdirSync(out).find((f) => f.endsWith('.promptfoo.json'))!), 'utf8')).results.results;
    assert.ok(rows.some((r: { provider: { label: string }; error?: string }) => r.provider.label === 'url credentials' && /127\.0\.0\.1/.test(r.error ?? '')));
    for (const f of ['gate.json', 'gate.md', 'comment.md', 'baseline.json', 'report.html']) assert.ok(statSync(join(dir, f)).size > 0, f);
    const base = JSON.parse(readFileSync(join(dir, 'baseline.json'), 'utf8'));
    assert.ok(Object.keys(base.queries).length === 3, runs.update.stderr);
  });

  it('no output holds the password or the key: stdout, stderr, results, report, Markdown, baseline, comment, HTML', (t) => {
    if (!SERVER_URL) return t.skip('needs RANKGATE_TEST_DATABASE_URL (a Postgres server with pgvector; .ci/setup-postgres.sh starts one)');
    const found: string[] = [];
    for (const [name, r] of Object.entries(runs)) {
      for (const [stream, text] of [['stdout', r.stdout], ['stderr', r.stderr]] as const) {
        for (const s of [password, apiKey]) if (text.includes(s)) found.push(`${name} ${stream}`);
      }
    }
    const files: string[] = [];
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (n === 'pf') continue; // promptfoo's own database: see docs/gate.md
        if (statSync(p).isDirectory()) walk(p);
        else if (n !== 'promptfooconfig.yaml') files.push(p);
      }
    };
    walk(dir);
    assert.ok(files.length >= 8, files.join('\n'));
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const s of [password, apiKey]) if (text.includes(s)) found.push(f.slice(dir.length + 1));
    }
    assert.deepEqual(found, [], `the secret leaked into: ${found.join(', ')}`);
    // the credentials are shown redacted where the configuration is shown, so the reader still sees which URL
    const raw = readFileSync(files.find((f) => f.endsWith('.promptfoo.json'))!, 'utf8');
    // (promptfoo itself writes the url: column's credentials as ***:***; the databaseUrl column holds none: PGPASSWORD)
    assert.ok(raw.includes(`:${REDACTED}@127.0.0.1`), 'the results keep the URL with its password redacted');
    assert.ok(raw.includes(`"databaseUrl": "postgres://${role}@`), 'the databaseUrl column named its server without a password');
  });
});

describe('redaction rules', () => {
  it("the Basic value of url: credentials, libpq's keyword form, Authorization headers and every *_API_KEY / AWS secret of the environment", () => {
    const basic = Buffer.from('svc:B4sic-Pw').toString('base64');
    assert.equal(redactText('config url http://svc:B4sic-Pw@127.0.0.1:9/search'), 'config url http://svc:***@127.0.0.1:9/search');
    assert.equal(redactText(`500: echo ${basic} then`), '500: echo *** then', 'the Basic value of a url met once');
    assert.equal(redactText('{"error":"headers: authorization: Bearer tok-abc-123"}'), '{"error":"headers: authorization: Bearer ***"}');
    assert.equal(redactText('Authorization: Basic Zm9vOmJhcg=='), 'Authorization: Basic ***');
    assert.equal(redactText("could not connect: host=db.internal port=5432 user=app password='se cr3t!' dbname=x"), 'could not connect: host=db.internal port=5432 user=app password=*** dbname=x');
    assert.equal(redactText('retry with se cr3t! later'), 'retry with *** later');
    const keys = { JUDGE_X_API_KEY: 'sk-judge-0123456789', MY_EMBED_APIKEY: 'emb-abcdefgh', AWS_SESSION_TOKEN: 'FwoGZXIvYXdzEJr-session', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-K7MDENG' };
    const saved = Object.fromEntries(Object.keys(keys).map((k) => [k, process.env[k]]));
    Object.assign(process.env, keys);
    try {
      for (const v of Object.values(keys)) assert.equal(redactText(`the judge said: my key is ${v}.`), 'the judge said: my key is ***.');
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    process.env.DATABASE_URL_SAVED = process.env.DATABASE_URL ?? '';
    process.env.DATABASE_URL = "host=h user=u password=kw-Secret-77 dbname=d";
    try {
      assert.equal(redactText('error quoting kw-Secret-77'), 'error quoting ***', "DATABASE_URL's keyword-form password is known");
    } finally {
      if (process.env.DATABASE_URL_SAVED) process.env.DATABASE_URL = process.env.DATABASE_URL_SAVED;
      else delete process.env.DATABASE_URL;
      delete process.env.DATABASE_URL_SAVED;
    }
  });

  it('a provider config with a password inside databaseUrl is refused, naming the way to pass it from the environment', () => {
    for (const databaseUrl of ['postgres://app:Hunter2-pw@db/x', 'host=db user=app password=Hunter2-pw dbname=x', 'postgres://app@db/x?password=Hunter2-pw']) {
      assert.ok(databaseUrlHasPassword(databaseUrl), databaseUrl);
      assert.throws(
        () => validateProviderConfig({ databaseUrl }, { basePath: ROOT, providerId: 'file://providers/search.ts' }),
        (e: Error) => isUserError(e) && /databaseUrl holds a password .*PGPASSWORD=… with this databaseUrl without its password, or DATABASE_URL=… with no databaseUrl/.test(e.message) && !e.message.includes('Hunter2-pw'),
      );
    }
    assert.ok(!databaseUrlHasPassword('postgres://app@db/x'));
    validateProviderConfig({ databaseUrl: 'postgres://app@db:5432/x' }, { basePath: ROOT, providerId: 'file://providers/search.ts' });
  });

  it('URL credentials, secret query parameters and secret keys; numbers and look-alike keys kept', () => {
    assert.equal(redactText('connect postgres://u:s3cr3t-pw@h:5432/db failed'), 'connect postgres://u:***@h:5432/db failed');
    assert.equal(redactText('then s3cr3t-pw again'), 'then *** again', 'a password met once is redacted in free text later');
    assert.equal(redactText('postgres://h/db?sslmode=require&password=hunter22'), 'postgres://h/db?sslmode=require&password=***');
    const c = redactConfig({ apiKey: 'k-123456', nested: { 'x-api-key': 'abc12345', client_secret: 'zzzz9999' }, input_tokens: 12, passage_substring: 'pass the salt', url: 'https://a:b-c-d-e@h/x' });
    assert.deepEqual(c, { apiKey: '***', nested: { 'x-api-key': '***', client_secret: '***' }, input_tokens: 12, passage_substring: 'pass the salt', url: 'https://a:***@h/x' });
    assert.equal(redactText('error: key k-123456 refused'), 'error: key *** refused');
  });
});
