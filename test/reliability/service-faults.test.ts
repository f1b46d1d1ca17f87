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
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES, ROOT, assertNoStack, killChildren, promptfooEval, rankgate, tempDir, type RunResult } from './helpers.ts';

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

describe('faulty search services through a real promptfoo eval', () => {
  const dir = tempDir('svc-faults');
  const out = join(dir, 'results.json');
  const moduleLog = join(dir, 'module-queries.jsonl');
  const urlLog: string[] = [];
  let server: Server;
  let run: RunResult;
  let rows: Row[];

  before(async () => {
    const hangs: import('node:http').ServerResponse[] = [];
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const q = String(JSON.parse(body).query);
        urlLog.push(q);
        const json = (status: number, text: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(text);
        if (q.includes('THROW')) return json(500, '{"error":"index shard 3 is unavailable"}');
        if (q.includes('HANG')) return void hangs.push(res);
        if (q.includes('MALFORMED')) return json(200, '{"results": [ {"chunk_id": "lake#c1"');
        if (q.includes('EMPTY')) return json(200, '{"results": []}');
        json(200, JSON.stringify({ results: ['lake#c1', 'lake#c2'].map((id, i) => ({ chunk_id: id, document_id: 'lake', content: 'Still water.', score: 1 - i / 10, rank: i + 1 })) }));
      });
    });
    server.on('close', () => hangs.forEach((r) => r.destroy()));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
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

  it('the eval finishes (no hang) with every row present, and the gate fails it (exit 1)', () => {
    assert.equal(rows.length, GOLDEN.length * 2);
    assert.equal(run.code, 1, run.stderr.slice(-2000));
    assert.match(run.stderr, /gate FAILED/);
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

  it('rankgate gate: counts and lists each error with its reason, exit 1, report written', async () => {
    for (const [col, n] of [['faulty-module', 3], ['faulty-url', 3]] as const) {
      const report = join(dir, `report-${col}.json`);
      const g = await rankgate(['gate', out, '--column', col, '--report', report]);
      assert.equal(g.code, 1, g.stderr);
      assert.match(g.stdout, new RegExp(`${n} errors`));
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
    assert.equal(g.code, 1, g.stderr);
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
