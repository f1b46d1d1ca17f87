/**
 * A search service under test that throws, hangs, answers malformed JSON or an empty list, through a real
 * `promptfoo eval` (providers/search.ts, the rank/routing assertions and the gate hook) and `rankgate gate`:
 * each faulty query is an error row with its reason, the eval finishes, the gate counts and lists the errors.
 * Two columns: `module:` (test/fixtures/reliability/fault-service.ts) and `url:` (an HTTP server in this
 * test on 127.0.0.1 that fails the same way). The same run checks that queries carrying promptfoo template
 * syntax, quotes, SQL, backslashes, RTL, combining marks and emoji reach the service verbatim.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { converseReply, startDeadBedrock, startFakeBedrock, type DeadBedrock } from '../helpers/fake-bedrock.ts';
import { closedPort } from '../gate/helpers.ts';
import { BIN, FIXTURES, ROOT, assertNoStack, copyIndexFixture, killChildren, promptfooEval, rankgate, spawnNode, tempDir, type RunResult } from './helpers.ts';

const GOLDEN = JSON.parse(readFileSync(join(FIXTURES, 'golden.json'), 'utf8')) as { id: string; query: string }[];
const TIMEOUT_MS = 1500;

interface Row {
  provider: { label?: string; id?: string };
  testCase: { metadata: { id: string } };
  response?: { output?: unknown; metadata?: { harness?: { ids?: string[] } }; error?: string };
  error?: string | null;
  success: boolean;
  gradingResult?: { componentResults?: { pass: boolean; reason: string }[] };
}

/** A search service over HTTP on 127.0.0.1 (port 0): `answer` gets each request's query and its response. */
async function queryServer(answer: (query: string, res: ServerResponse) => void): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => answer(String(JSON.parse(body).query), res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('faulty search services through a real promptfoo eval', () => {
  const dir = tempDir('svc-faults');
  const out = join(dir, 'results.json');
  const moduleLog = join(dir, 'module-queries.jsonl');
  const urlLog: string[] = [];
  let server: Server;
  let run: RunResult;
  let rows: Row[];

  before(async () => {
    const hangs: ServerResponse[] = [];
    let port: number;
    ({ server, port } = await queryServer((q, res) => {
      urlLog.push(q);
      const json = (status: number, text: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(text);
      if (q.includes('THROW')) return json(500, '{"error":"index shard 3 is unavailable"}');
      if (q.includes('HANG')) return void hangs.push(res);
      if (q.includes('MALFORMED')) return json(200, '{"results": [ {"chunk_id": "lake#c1"');
      if (q.includes('EMPTY')) return json(200, '{"results": []}');
      json(200, JSON.stringify({ results: ['lake#c1', 'lake#c2'].map((id, i) => ({ chunk_id: id, document_id: 'lake', content: 'Still water.', score: 1 - i / 10, rank: i + 1 })) }));
    }));
    server.on('close', () => hangs.forEach((r) => r.destroy()));
    const config = join(dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      `description: reliability - faulty services
prompts: ['{{query}}']
providers:
  - id: file://${ROOT}/providers/search.ts
    label: faulty-module
    config: { module: ${join(FIXTURES, 'fault-service.ts')}, timeoutMs: ${TIMEOUT_MS}, logFile: ${moduleLog} }
  - id: file://${ROOT}/providers/search.ts
    label: faulty-url
    config: { url: 'http://127.0.0.1:${port}/api/v1/search', timeoutMs: ${TIMEOUT_MS} }
defaultTest:
  assert:
    - type: javascript
      value: file://${ROOT}/assertions/rank.ts:rank
    - type: javascript
      value: file://${ROOT}/assertions/routing.ts:routing
tests: file://${join(FIXTURES, 'tests.ts')}
env:
  PROMPTFOO_PASS_RATE_THRESHOLD: '0'
# one at a time: while the hanging query waits, only the provider's timeout timer keeps the process alive
evaluateOptions: { maxConcurrency: 1 }
extensions:
  - file://${ROOT}/assertions/gate.ts:beforeAll
  - file://${ROOT}/assertions/gate.ts:afterAll
`,
    );
    run = await promptfooEval(config, out).result;
    assert.ok(existsSync(out), `promptfoo wrote no results (exit ${run.code}):\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-3000)}`);
    rows = JSON.parse(readFileSync(out, 'utf8')).results.results;
  });
  after(async () => {
    killChildren();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const row = (label: string, id: string) => {
    const r = rows.find((x) => x.provider.label === label && x.testCase.metadata.id === id);
    assert.ok(r, `no row ${label} ${id}`);
    return r;
  };
  const errorOf = (r: Row) => String(r.response?.error ?? r.error ?? '');

  it('the eval finishes (no hang) with every row present, and the gate says the errored queries (exit 2)', () => {
    assert.equal(rows.length, GOLDEN.length * 2);
    assert.equal(run.code, 2, run.stderr.slice(-2000));
    assert.match(run.stderr, /gate ERROR \(exit 2\)[\s\S]*3 of 6 queries errored/);
  });

  it('module: throw, hang and malformed output are error rows with the reason', () => {
    assert.match(errorOf(row('faulty-module', 'rel-throw')), /index shard 3 is unavailable/);
    assert.match(errorOf(row('faulty-module', 'rel-hang')), new RegExp(`timed out after ${TIMEOUT_MS} ms`));
    assert.match(errorOf(row('faulty-module', 'rel-malformed')), /no hits\[\] array/);
    for (const id of ['rel-throw', 'rel-hang', 'rel-malformed']) assert.equal(row('faulty-module', id).success, false);
  });

  it('url: HTTP 500, no answer and malformed JSON are error rows with the reason', () => {
    assert.match(errorOf(row('faulty-url', 'rel-throw')), /HTTP 500.*index shard 3 is unavailable/);
    assert.match(errorOf(row('faulty-url', 'rel-hang')), new RegExp(`timed out after ${TIMEOUT_MS} ms`));
    assert.match(errorOf(row('faulty-url', 'rel-malformed')), /malformed JSON/);
  });

  it('an empty list is a scored miss, not an error and not a pass', () => {
    for (const label of ['faulty-module', 'faulty-url']) {
      const r = row(label, 'rel-empty');
      assert.equal(r.response?.error, undefined, 'not a provider error');
      // promptfoo runs a row's assertions concurrently and reports the last failure to finish as the row's error, so
      // look for the routing assertion's reason among the components.
      const reasons = (r.gradingResult?.componentResults ?? []).filter((c) => !c.pass).map((c) => c.reason);
      assert.ok(reasons.some((x) => /0 hits/.test(x)), `the failed routing assertion says why: ${JSON.stringify(reasons)}`);
      assert.ok(reasons.some((x) => /no relevant reference returned/.test(x)), 'and so does the rank assertion');
      assert.deepEqual(r.response?.metadata?.harness?.ids, []);
      assert.equal(r.success, false);
    }
  });

  it('rankgate gate: counts and lists each error with its reason, exit 2 (errored queries are not a quality result), report written', async () => {
    for (const [col, n] of [['faulty-module', 3], ['faulty-url', 3]] as const) {
      const report = join(dir, `report-${col}.json`);
      const g = await rankgate(['gate', out, '--column', col, '--report', report]);
      assert.equal(g.code, 2, g.stderr);
      assert.match(g.stdout, new RegExp(`6 queries, ${n} errored \\(left out of every figure\\) · Success@3 [\\d.]+ · `));
      // the measured queries' latency: an errored row's wait (the hung query's timeout) is no latency
      assert.match(g.stdout, new RegExp(`p95 [\\d.]+ ms over ${6 - n} measured queries; ${n} errored left out`));
      assert.match(g.stdout, new RegExp(`\\| direct \\| 6 \\(${n} errored\\) \\|`));
      assertNoStack(g.stderr);
      const rep = JSON.parse(readFileSync(report, 'utf8'));
      assert.equal(rep.errors, n);
      const errs = rep.failures.filter((f: { bucket: string }) => f.bucket === 'error');
      assert.deepEqual(errs.map((f: { id: string }) => f.id).sort(), ['rel-hang', 'rel-malformed', 'rel-throw']);
      for (const f of errs) assert.ok(f.reason.length > 10, `reason given: ${JSON.stringify(f)}`);
      assert.equal(rep.failures.find((f: { id: string }) => f.id === 'rel-empty')?.bucket !== 'error', true);
    }
  });

  it('rankgate gate --update-baseline refuses a run with errors and leaves the baseline as it was', async () => {
    const baseline = join(dir, 'baseline.json');
    const previous = '{"rankgate_baseline": 1, "created": "earlier", "column": "x", "config": {}, "summary": {}, "queries": {}}\n';
    writeFileSync(baseline, previous);
    const g = await rankgate(['gate', out, '--column', 'faulty-url', '--baseline', baseline, '--update-baseline']);
    assert.equal(g.code, 2, g.stderr);
    assert.match(g.stderr, /--update-baseline: 3 of 6 queries of 'faulty-url' errored \(rel-hang: .*timed out/);
    assert.match(g.stderr, /was left as it was/);
    assertNoStack(g.stderr);
    assert.equal(readFileSync(baseline, 'utf8'), previous);
  });

  it('queries reach the service verbatim: template syntax, quotes, SQL, backslash, RTL, combining marks, emoji', () => {
    const seen = readFileSync(moduleLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string);
    for (const id of ['rel-template', 'rel-hostile']) {
      const q = GOLDEN.find((g) => g.id === id)!.query;
      assert.ok(seen.includes(q), `module: service never saw ${JSON.stringify(q)}; saw ${JSON.stringify(seen)}`);
      assert.ok(urlLog.includes(q), `url: service never saw ${JSON.stringify(q)}; saw ${JSON.stringify(urlLog)}`);
      for (const label of ['faulty-module', 'faulty-url']) assert.equal(row(label, id).success, true, `${label} ${id}: ${errorOf(row(label, id))}`);
    }
  });
});

const pfRows = (out: string): Row[] => JSON.parse(readFileSync(out, 'utf8')).results.results;

describe('errors that read like rate limits are error rows at once, never retried by promptfoo', () => {
  // promptfoo retries a provider error whose text contains "429" or "rate limit" and then holds the provider's
  // queue for 60 s a time: a url whose port contains 429 stalled the eval above at its second row for minutes.
  const dir = tempDir('no-retry');
  const out = join(dir, 'results.json');
  const moduleLog = join(dir, 'module-queries.jsonl');
  const seen: string[] = [];
  let server: Server;
  let run: RunResult;
  let rows: Row[];

  before(async () => {
    let port: number;
    ({ server, port } = await queryServer((q, res) => {
      seen.push(q);
      if (q.includes('RATELIMIT')) return void res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '30' }).end('{"error":"rate limit exceeded"}');
      if (q.includes('THROW')) return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"upstream 429: rate limit"}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ results: [{ chunk_id: 'lake#c1', document_id: 'lake', content: 'Still water.', score: 1, rank: 1 }] }));
    }));
    const golden = join(dir, 'golden.json');
    const q = (id: string, query: string) => ({ id, query, language: 'en', category: 'direct', expected: [{ chunk_id: 'lake#c1', grade: 3, relevant: true }] });
    writeFileSync(golden, JSON.stringify([q('rl-429', 'still water RATELIMIT'), q('rl-500', 'still water THROW'), q('rl-ok', 'still water')]));
    const config = join(dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      `description: reliability - rate-limit-looking errors
prompts: ['{{query}}']
providers:
  - id: file://${ROOT}/providers/search.ts
    label: module
    config: { module: ${join(FIXTURES, 'fault-service.ts')}, timeoutMs: ${TIMEOUT_MS}, logFile: ${moduleLog} }
  - id: file://${ROOT}/providers/search.ts
    label: url
    config: { url: 'http://127.0.0.1:${port}/search', timeoutMs: ${TIMEOUT_MS} }
defaultTest:
  assert:
    - type: javascript
      value: file://${ROOT}/assertions/rank.ts:rank
tests: file://${join(FIXTURES, 'tests.ts')}
evaluateOptions: { maxConcurrency: 1 }
`,
    );
    run = await promptfooEval(config, out, { RANKGATE_RELIABILITY_GOLDEN: golden }).result;
    assert.ok(existsSync(out), `promptfoo wrote no results (exit ${run.code}):\n${run.stdout.slice(-2000)}\n${run.stderr.slice(-3000)}`);
    rows = pfRows(out);
  });
  after(async () => {
    killChildren();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const row = (label: string, id: string) => rows.find((x) => x.provider.label === label && x.testCase.metadata.id === id)!;

  it('each service saw each query exactly once (no retry), and the rows say why they failed', () => {
    const count = (list: string[], marker: string) => list.filter((x) => x.includes(marker)).length;
    const moduleSeen = readFileSync(moduleLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string);
    for (const [name, list] of [['module', moduleSeen], ['url', seen]] as const) {
      assert.equal(count(list, 'RATELIMIT'), 1, `${name}: ${JSON.stringify(list)}`);
      assert.equal(count(list, 'THROW'), 1, `${name}: ${JSON.stringify(list)}`);
    }
    assert.equal(rows.length, 6);
    assert.match(String(row('url', 'rl-429').response?.error), /HTTP 429: the service is rate limiting the eval .*not retried/);
    assert.match(String(row('url', 'rl-500').response?.error), /HTTP 500: .*upstream 429: rate limit/);
    assert.match(String(row('module', 'rl-429').response?.error), /answered 429: rate limit exceeded/);
    for (const label of ['module', 'url']) {
      assert.equal(row(label, 'rl-ok').success, true, `${label}: the query after them is answered and scored`);
      for (const id of ['rl-429', 'rl-500']) assert.equal(row(label, id).success, false);
    }
  });
});

/** A port on 127.0.0.1 with nothing listening, outside the range other tests' servers bind (test/gate/helpers.ts). */
const deadPort = closedPort;


describe('a bad provider config through a real promptfoo eval: one line, exit 2, before any query', () => {
  const dir = tempDir('bad-config');
  after(() => {
    killChildren();
    rmSync(dir, { recursive: true, force: true });
  });
  // One case through promptfoo (a real eval costs ~2 CPU-s): every kind of config error takes the same path out of
  // the provider's constructor; the messages of each kind (unknown key, bad value, bad embedder) are checked in
  // test/harness/provider.test.ts.
  const cases: [string, string, RegExp][] = [
    ['mode: hybird', 'hybird', /config\.mode: 'hybird' is not valid; did you mean 'hybrid'\? \(valid: hybrid, keyword, semantic\)/],
  ];
  for (const [line, name, re] of cases) {
    it(`${line}`, async () => {
      const sub = join(dir, name);
      mkdirSync(sub, { recursive: true });
      const config = join(sub, 'promptfooconfig.yaml');
      const log = join(sub, 'queries.jsonl');
      writeFileSync(
        config,
        `prompts: ['{{query}}']
providers:
  - id: file://${ROOT}/providers/search.ts
    label: fine
    config: { module: ${join(FIXTURES, 'fault-service.ts')}, logFile: ${log} }
  - id: file://${ROOT}/providers/search.ts
    label: typo
    config: { corpus: ${join(ROOT, 'test', 'fixtures', 'corpus', 'markdown')}, dataDir: ${join(sub, 'db')}, ${line} }
tests: file://${join(FIXTURES, 'tests.ts')}
`,
      );
      const out = join(sub, 'results.json');
      const r = await promptfooEval(config, out).result;
      assert.equal(r.code, 2, `${r.stdout.slice(-500)}\n${r.stderr.slice(-1500)}`);
      const mine = r.stderr.split('\n').filter((l) => l.startsWith('rankgate:'));
      assert.equal(mine.length, 1, `one line, once:\n${r.stderr}`);
      assert.match(mine[0]!, new RegExp(`^rankgate: ${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: providers\\[1\\] \\(label 'typo'\\): `));
      assert.match(mine[0]!, re);
      assertNoStack(r.stderr);
      assert.doesNotMatch(r.stderr, /ingesting|index variant/, 'never an ingest attempt');
      assert.equal(existsSync(out), false, 'no results written');
      assert.equal(existsSync(log), false, 'no query ran, not even in the good column');
    });
  }
});


describe('module: .ts, .mts, .js and .mjs from a folder outside the repo, in promptfoo\'s thread and in the worker; url: on a dead port', () => {
  const dir = tempDir('ext-modules'); // under the OS temp dir: no package.json, no "type": "module" above it
  const out = join(dir, 'results.json');
  let rows: Row[];
  let run: RunResult;
  const exts = ['ts', 'mts', 'js', 'mjs'] as const;
  let hung: DeadBedrock;
  before(async () => {
    const ts = `import { basename } from 'node:path';
interface Hit { chunkId: string }
export function createSearchService(config: Record<string, unknown>) {
  return {
    async search(query: string) {
      const hits: Hit[] = [{ chunkId: 'lake#c1' }, { chunkId: 'lake#c2' }];
      return { hits: hits.map((h, i) => ({ ...h, documentId: 'lake', rank: i + 1, score: 1 - i / 10, content: basename(String(config.tag)) + ' ' + query, channels: {} })), routing: { route: 'search', safety: false, reasons: [] }, diagnostics: null };
    },
    async close() {},
  };
}
`;
    const js = ts.replace(/^interface.*\n/m, '').replace(': Record<string, unknown>', '').replace('(query: string)', '(query)').replace('const hits: Hit[]', 'const hits');
    for (const e of exts) writeFileSync(join(dir, `my-search.${e}`), e.endsWith('ts') ? ts : js);
    const port = await deadPort();
    hung = await startDeadBedrock(); // any server that accepts connections and never answers
    const columns = exts.flatMap((e) =>
      [true, false].map(
        (worker) => `  - id: file://${ROOT}/providers/search.ts
    label: ${e}-${worker ? 'worker' : 'in-thread'}
    config: { module: ./my-search.${e}, worker: ${worker}, tag: ${e} }`,
      ),
    );
    const config = join(dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      `prompts: ['{{query}}']
providers:
${columns.join('\n')}
  - id: file://${ROOT}/providers/search.ts
    label: dead-url
    config: { url: 'http://127.0.0.1:${port}/api/v1/search', preflight: false }
  - id: file://${ROOT}/providers/search.ts
    label: hung-url
    config: { url: '${hung.url}/api/v1/search', timeoutMs: 1500, unreachableAfter: 1, preflight: false }
tests:
  - vars: { query: still water }
    metadata: { id: q1 }
  - vars: { query: the wind }
    metadata: { id: q2 }
env:
  PROMPTFOO_PASS_RATE_THRESHOLD: '0'
`,
    );
    run = await promptfooEval(config, out).result;
    assert.ok(existsSync(out), `no results (exit ${run.code}):\n${run.stderr.slice(-3000)}`);
    rows = pfRows(out);
  });
  after(async () => {
    killChildren();
    await hung?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const e of exts) {
    for (const mode of ['worker', 'in-thread']) {
      it(`${e} (${mode})`, () => {
        const mine = rows.filter((r) => r.provider.label === `${e}-${mode}`);
        assert.equal(mine.length, 2);
        for (const r of mine) {
          assert.equal(r.response?.error, undefined, `${e}-${mode}: ${r.response?.error}`);
          assert.deepEqual(r.response?.metadata?.harness?.ids, ['lake#c1', 'lake#c2']);
        }
      });
    }
  }

  it('url: a dead port is an error row per query saying the connection was refused', () => {
    const dead = rows.filter((r) => r.provider.label === 'dead-url');
    assert.equal(dead.length, 2);
    for (const r of dead) assert.match(String(r.response?.error ?? r.error), /connection refused \(nothing listening at 127\.0\.0\.1:\d+; is the service running\?\)/);
  });

  it('url: a service that accepts connections and never answers is cut off after unreachableAfter queries with no answer', () => {
    const rs = rows.filter((r) => r.provider.label === 'hung-url');
    assert.equal(rs.length, 2);
    for (const r of rs) assert.match(String(r.response?.error ?? r.error), /unreachable: 1 query in a row got no answer \(last: POST .* timed out after 1500 ms \(timeoutMs\)\); not queried/);
    // the warm-up (and at most one query already on its way) reached it; after that nothing is sent (preflight: false,
    // so the start-of-eval probe, which leaves a slow service to the rows, is not counted here)
    assert.ok(hung.connections >= 1 && hung.connections <= 2, `${hung.connections} connections to the hung service`);
  });
});

describe('a dead judge (accepts connections, never answers) in a real promptfoo eval of 10 queries', () => {
  const dir = tempDir('dead-judge');
  const out = join(dir, 'results.json');
  let dead: DeadBedrock;
  let run: RunResult;
  let rows: Row[];
  before(async () => {
    dead = await startDeadBedrock();
    const golden = Array.from({ length: 10 }, (_, i) => ({
      id: `dj-${i}`,
      query: `what is still water ${i}`,
      language: 'en',
      category: 'direct',
      expected: [{ chunk_id: 'lake#c1', grade: 3, relevant: true }],
    }));
    writeFileSync(join(dir, 'golden.json'), JSON.stringify(golden));
    const config = join(dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      `prompts: ['{{query}}']
providers:
  - id: file://${ROOT}/providers/search.ts
    label: lake
    config: { module: ${join(FIXTURES, 'fault-service.ts')} }
defaultTest:
  assert:
    - type: javascript
      value: file://${ROOT}/assertions/judge.ts:judged
      config: { mode: bedrock, endpoint: '${dead.url}', region: us-east-1, cacheDir: ${join(dir, 'cache')}, timeoutMs: 1000, callTimeoutMs: 1500 }
tests: file://${join(FIXTURES, 'tests.ts')}
env:
  PROMPTFOO_PASS_RATE_THRESHOLD: '0'
`,
    );
    run = await promptfooEval(config, out, {
      RANKGATE_RELIABILITY_GOLDEN: join(dir, 'golden.json'),
      AWS_ACCESS_KEY_ID: 'AKIDFAKEFAKEFAKE',
      AWS_SECRET_ACCESS_KEY: 'fake-secret-key',
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: undefined,
    }).result;
    assert.ok(existsSync(out), `no results (exit ${run.code}, signal ${run.signal}):\n${run.stderr.slice(-3000)}`);
    rows = pfRows(out);
  });
  after(async () => {
    killChildren();
    await dead?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ends (no hang) with every row, each a judge error, most of them without a call once the endpoint is shown dead', () => {
    assert.equal(rows.length, 10);
    const reasons = rows.map((r) => (r.gradingResult?.componentResults ?? []).map((c) => c.reason).join(' | '));
    for (const [i, r] of rows.entries()) {
      assert.equal(r.success, false, 'a broken judge is never a pass');
      assert.match(reasons[i]!, /JUDGE ERROR/);
    }
    assert.ok(reasons.filter((x) => /unreachable: \d+ calls in a row got no answer/.test(x)).length >= 5, reasons.join('\n'));
    // 20 judgements x 3 SDK attempts x 3 tries each was 180 connections of 30 s; now the cut-off bounds them
    assert.ok(dead.connections <= 4 * 3 * 3, `${dead.connections} connections to the dead endpoint`);
    assertNoStack(run.stderr);
  });
});

describe('the judge cache through real promptfoo evals: another endpoint is never answered from the cache', () => {
  const dir = tempDir('judge-cache');
  const golden = Array.from({ length: 4 }, (_, i) => ({
    id: `jc-${i}`,
    query: `what is still water ${i}`,
    language: 'en',
    category: 'direct',
    expected: [{ chunk_id: 'lake#c1', grade: 3, relevant: true }],
  }));
  let fake: Awaited<ReturnType<typeof startFakeBedrock>>;
  before(async () => {
    fake = await startFakeBedrock();
    fake.on('*', 'converse', () => converseReply('NOT_RELEVANT'));
    writeFileSync(join(dir, 'golden.json'), JSON.stringify(golden));
  });
  after(async () => {
    killChildren();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const evalWith = async (endpoint: string, name: string) => {
    const config = join(dir, `${name}.yaml`);
    writeFileSync(
      config,
      `prompts: ['{{query}}']
providers:
  - id: file://${ROOT}/providers/search.ts
    label: lake
    config: { module: ${join(FIXTURES, 'fault-service.ts')} }
defaultTest:
  assert:
    - type: javascript
      value: file://${ROOT}/assertions/judge.ts:judged
      config: { mode: bedrock, endpoint: '${endpoint}', region: us-east-1, cacheDir: ${join(dir, 'cache')} }
tests: file://${join(FIXTURES, 'tests.ts')}
env:
  PROMPTFOO_PASS_RATE_THRESHOLD: '0'
`,
    );
    const out = join(dir, `${name}.json`);
    fake.clearRequests();
    const r = await promptfooEval(config, out, {
      RANKGATE_RELIABILITY_GOLDEN: join(dir, 'golden.json'),
      AWS_ACCESS_KEY_ID: 'AKIDFAKEFAKEFAKE',
      AWS_SECRET_ACCESS_KEY: 'fake-secret-key',
    }).result;
    assert.ok(existsSync(out), `no results (exit ${r.code}):\n${r.stderr.slice(-2000)}`);
    const rows = JSON.parse(readFileSync(out, 'utf8')).results.results as { gradingResult?: { namedScores?: Record<string, number> } }[];
    const sum = (k: string) => rows.reduce((a, x) => a + (x.gradingResult?.namedScores?.[k] ?? 0), 0);
    return { calls: sum('judge_calls'), hits: sum('judge_cache_hits'), requests: fake.requests.length };
  };

  it('first run calls the judge, the rerun is all cache hits, the same judge at another endpoint has 0 hits and is called', async () => {
    const first = await evalWith(fake.url, 'a1');
    assert.equal(first.calls, 8, '4 queries x 2 results not matching the expected chunk');
    assert.equal(first.requests, 8);
    const again = await evalWith(fake.url, 'a2');
    assert.deepEqual([again.calls, again.hits, again.requests], [0, 8, 0]);
    const moved = await evalWith(fake.url.replace('127.0.0.1', 'localhost'), 'b1');
    assert.deepEqual([moved.hits, moved.calls, moved.requests], [0, 8, 8]);
  });
});

describe('rankgate serve under damage and load (real processes)', () => {
  let db: string;
  before(async () => {
    db = await copyIndexFixture('serve');
  });
  after(() => {
    killChildren();
    rmSync(join(db, '..'), { recursive: true, force: true });
  });

  it('refuses to start on a missing index variant or an unknown embedder: one line, exit 2, never "listening"', async () => {
    for (const [flags, re] of [
      [['--chunk-size', '999'], /^rankgate serve: index variant c999:use-lite not found in .*\(available: c300:use-lite\); run: rankgate ingest --chunk-size 999 --embedder use-lite$/],
      [['--embedder', 'use-light'], /^rankgate serve: --embedder: unknown embedder "use-light": no such id or family prefix; did you mean "use-lite"\?/],
      [['--max-qeue', '3'], /^rankgate serve: unknown option '--max-qeue'; did you mean '--max-queue'\?/],
    ] as const) {
      const r = await rankgate(['serve', '--port', '0', '--db', db, ...flags], {}, 60_000);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr.trim().split('\n')[0]!, re);
      assert.doesNotMatch(r.stderr, /listening on/);
      assertNoStack(r.stderr);
    }
  });

  it('sheds a burst with 503 + Retry-After at once instead of queueing it; the requests it accepts wait about the queue limit at most', async () => {
    const s = spawnNode([BIN, 'serve', '--port', '0', '--db', db, '--max-queue', '4', '--max-queue-wait-ms', '800'], { timeoutMs: 120_000 });
    await s.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+/, 90_000);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(s.output())![1]!;
    const one = async (q: string) => {
      const res = await fetch(`${url}/api/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: q }) });
      const body = (await res.json()) as { code?: string; results?: unknown[] };
      return { status: res.status, code: body.code, retryAfter: res.headers.get('retry-after'), queueMs: Number(res.headers.get('x-rankgate-queue-ms')), searchMs: Number(res.headers.get('x-rankgate-search-ms')) };
    };
    assert.equal((await one('still water')).status, 200);
    const rs = await Promise.all(Array.from({ length: 48 }, (_, i) => one(`still water ${i}`)));
    const ok = rs.filter((r) => r.status === 200);
    const shed = rs.filter((r) => r.status === 503);
    assert.equal(ok.length + shed.length, 48, rs.map((r) => r.status).join(','));
    assert.ok(shed.length > 0, 'a 48-request burst against a queue of 4 is shed, not queued');
    assert.ok(ok.length >= 2, 'and still serves some');
    for (const r of shed) assert.deepEqual([r.code, r.retryAfter], ['overloaded', '1']);
    // admission is decided on arrival from the mean search time (never shed after waiting): an accepted request
    // waits the limit plus at most what the searches ahead of it took beyond that mean (two slots, one search thread)
    const slowest = Math.max(...ok.map((r) => r.searchMs));
    for (const r of ok) assert.ok(r.queueMs <= 800 + 2 * slowest + 100, `accepted request queued ${r.queueMs} ms (slowest search ${slowest} ms)`);
    const health = (await (await fetch(`${url}/health`)).json()) as { status: string; queued: number };
    assert.equal(health.status, 'ok');
    assert.equal((await one('the wind')).status, 200, 'serves normally after the burst');
    s.child.kill('SIGTERM');
    const end = await s.result;
    assert.equal(end.code, 0);
    assertNoStack(end.stderr);
  });
});

describe('hostile url: services through a real promptfoo eval: evidence bounded, credentials never echoed', () => {
  const dir = tempDir('svc-hostile');
  const out = join(dir, 'results.json');
  const user = 'evaluser';
  const password = `pw-${process.pid}-hostile-Zq9`;
  const basic = Buffer.from(`${user}:${password}`).toString('base64');
  const corpus = readdirSync(join(ROOT, 'datasets', 'corpus')).sort().map((f) => readFileSync(join(ROOT, 'datasets', 'corpus', f), 'utf8')).join('\n\n');
  const golden = (JSON.parse(readFileSync(join(ROOT, 'datasets', 'golden', 'golden-set-en.json'), 'utf8')) as { category: string; expected_passages?: { passage_substring: string }[] }[])
    .filter((q) => q.category === 'direct');
  // every expected passage of the direct queries in one hit (~2 KB: under the cut)
  const passages = golden.flatMap((q) => (q.expected_passages ?? []).map((p) => p.passage_substring)).join(' ');
  let server: Server;
  let run: RunResult;
  const runs: Record<string, RunResult> = {};

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const hit = (content: string) => JSON.stringify({ results: [{ chunk_id: 'all#1', document_id: 'all', content, score: 1, rank: 1 }] });
        if (req.url?.startsWith('/corpus/')) return res.writeHead(200, { 'content-type': 'application/json' }).end(hit(corpus));
        if (req.url?.startsWith('/passages/')) return res.writeHead(200, { 'content-type': 'application/json' }).end(hit(passages));
        // a 500 that echoes the request's headers (a debug page)
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `upstream failed; request headers: authorization: ${req.headers.authorization}; x=${req.headers.authorization?.slice(6)}` }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const config = join(dir, 'promptfooconfig.yaml');
    const col = (label: string, path: string) => `  - id: file://${ROOT}/providers/search.ts\n    label: ${label}\n    config: { url: 'http://${path.startsWith('echo') ? `${user}@` : ''}127.0.0.1:${port}/${path}/api/v1/search', timeoutMs: 5000, preflight: false }\n`;
    writeFileSync(
      config,
      `description: reliability - hostile services\nprompts: ['{{query}}']\nproviders:\n${col('corpus-dump', 'corpus')}${col('passage-dump', 'passages')}${col('echo-auth', 'echo')}` +
        `defaultTest:\n  assert:\n    - type: javascript\n      value: file://${ROOT}/assertions/rank.ts:rank\n` +
        `tests:\n  - path: file://${ROOT}/datasets/tests.ts\n    config: { golden: [${join(ROOT, 'datasets', 'golden', 'golden-set-en.json')}], category: direct }\n` +
        `env:\n  PROMPTFOO_PASS_RATE_THRESHOLD: '0'\nextensions:\n  - file://${ROOT}/assertions/gate.ts:beforeAll\n  - file://${ROOT}/assertions/gate.ts:afterAll\n`,
    );
    const floors = join(dir, 'gate.yaml');
    writeFileSync(floors, 'overall:\n  recall_at_3: 0.5\n');
    // under umask 000 (promptfoo then writes its output 0666): the hook tightens it
    const umask = process.umask(0o000);
    try {
      // the password from the environment (a url: config holding one is refused: promptfoo would store it)
      run = await promptfooEval(config, out, { RANKGATE_GATE_FLOORS: floors, RANKGATE_URL_PASSWORD: password }).result;
    } finally {
      process.umask(umask);
    }
    assert.ok(existsSync(out), `promptfoo wrote no results (exit ${run.code}):\n${run.stderr.slice(-3000)}`);
    for (const [c, label] of [['corpus', 'corpus-dump'], ['passages', 'passage-dump'], ['echo', 'echo-auth']] as const)
      runs[c] = await rankgate(['gate', out, '--floors', floors, '--column', label, '--markdown', join(dir, `${c}.md`), '--comment', join(dir, `${c}-comment.md`), '--report', join(dir, `${c}.json`)]);
    runs.html = await rankgate(['report', out, '--html', join(dir, 'report.html')]);
  });
  after(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('the whole corpus as one hit: its content is cut to the maximum per hit, said LOUD, and it is no pass', () => {
    const rows = JSON.parse(readFileSync(out, 'utf8')).results.results as { provider: { label: string }; response: { metadata: { harness: { hits: { content: string }[]; contentCut?: { hits: number; maxChars: number } } } } }[];
    const dump = rows.filter((r) => r.provider.label === 'corpus-dump');
    assert.equal(dump.length, golden.length);
    for (const r of dump) {
      assert.deepEqual(r.response.metadata.harness.contentCut, { hits: 1, maxChars: 4800, longest: corpus.length }, 'the row counts the cut');
      assert.ok(r.response.metadata.harness.hits[0]!.content.length <= 4800);
    }
    const g = runs.corpus!;
    // cut to its first 4,800 characters (the start of the first book), it matches no direct query's passage: a quality result
    assert.equal(g.code, 1, g.stdout + g.stderr);
    assert.match(g.stderr, /rankgate gate FAILED \(exit 1\) for 'corpus-dump': .* 10 of 10 queries · Success@3 0\.0000 \(DES-058 Recall@3\) · MRR@10 0\.0000/);
    assert.match(g.stdout + g.stderr, /note: LOUD: content cut: 10 hit\(s\) of 10 queries .*longer than the maximum per hit, 4800 characters/);
    assert.doesNotMatch(g.stdout + g.stderr, /Success@3 1\.0000/);
  });

  it('every expected passage in one hit: flagged, nothing measured (exit 2), not Recall@3 1.0', () => {
    const g = runs.passages!;
    assert.equal(g.code, 2, g.stdout + g.stderr);
    assert.match(g.stderr, /✗ evidence: 10 hit\(s\) of 10 queries each contain the expected passages of several distinct golden documents \(query en-direct-\d+ rank 1 'all#1': book /);
    assert.match(run.stderr, /rankgate gate ERROR \(exit 2\) for 'passage-dump'/, 'the hook says it too');
    assert.equal(run.code, 2, run.stderr.slice(-2000));
  });

  it("a 500 echoing the url:'s Basic credentials: neither the password nor the Basic value in any output", () => {
    assert.match(runs.echo!.stderr, /10 of 10 queries errored: 10× search failed: POST .*HTTP 500/);
    assert.match(runs.echo!.stderr, /authorization: Basic \*\*\*/);
    const texts: [string, string][] = [['eval stdout', run.stdout], ['eval stderr', run.stderr]];
    for (const [k, r] of Object.entries(runs)) texts.push([`${k} stdout`, r.stdout], [`${k} stderr`, r.stderr]);
    for (const f of readdirSync(dir)) if (f !== 'promptfooconfig.yaml') texts.push([f, readFileSync(join(dir, f), 'utf8')]);
    assert.ok(texts.length >= 20, texts.map(([k]) => k).join(', '));
    const leaks = texts.filter(([, t]) => t.includes(basic) || t.includes(password)).map(([k]) => k);
    assert.deepEqual(leaks, [], `the credentials leaked into: ${leaks.join(', ')}`);
  });

  it('the results file and the record are never writable by others, whatever the umask', () => {
    for (const f of [out, join(dir, 'results.json.rankgate.jsonl')]) assert.equal(statSync(f).mode & 0o022, 0, `${f}: ${(statSync(f).mode & 0o777).toString(8)}`);
  });
});
