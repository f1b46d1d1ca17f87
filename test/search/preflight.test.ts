/**
 * Setup checked before queries (src/search/preflight.ts): a missing corpus: or module: path, a module without the
 * createSearchService export, a url: that refuses a probe request are one line naming the config entry and the key;
 * a url: that answers (even slowly or with a 500) is left to the rows. And an exit-2 verdict prints no metric value.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { preflightTarget, probeRefusal } from '../../src/search/preflight.ts';
import { verdictLines, type ColumnVerdict } from '../../src/gate/verdict.ts';
import { isUserError } from '../../src/errors.ts';
import { closedPort } from '../gate/helpers.ts';

const refused = (re: RegExp) => (e: unknown) => {
  assert.ok(isUserError(e), String(e));
  assert.equal((e as { exitCode: number }).exitCode, 2);
  assert.match((e as Error).message, re);
  assert.doesNotMatch((e as Error).message, /\n/);
  return true;
};

function team(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-preflight-'));
  mkdirSync(join(dir, 'docs', 'corpus'), { recursive: true });
  writeFileSync(
    join(dir, 'promptfooconfig.yaml'),
    `providers:\n  - id: file://providers/search.ts\n    label: ours\n    config: { corpus: docs/corpsu }\n  - id: file://providers/search.ts\n    label: theirs\n    config: { module: ./search-module.mjs }\n`,
  );
  writeFileSync(join(dir, 'search-module.mjs'), 'export function createSearchServce() {}\nexport const version = 1;\n');
  writeFileSync(join(dir, 'good.mjs'), 'export default { createSearchService: () => ({ search: async () => ({ hits: [] }) }) };\n');
  writeFileSync(join(dir, 'broken.mjs'), 'export const x = ;\n');
  return dir;
}

test('corpus: and module: paths that do not exist, a module without the export: one line naming the entry and the key', async (t) => {
  const dir = team();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const id = 'file://providers/search.ts';
  await assert.rejects(
    preflightTarget({ corpus: 'docs/corpsu' }, dir, id),
    refused(/^\/.*\/promptfooconfig\.yaml: providers\[0\] \(label 'ours'\): config\.corpus: docs\/corpsu does not exist \(looked for .*docs\/corpsu\); did you mean 'docs\/corpus'\?$/),
  );
  await preflightTarget({ corpus: 'docs/corpus' }, dir, id);
  await assert.rejects(
    preflightTarget({ module: './search-modul.mjs' }, dir, id),
    refused(/config\.module: \.\/search-modul\.mjs does not exist \(looked for .*\); did you mean '\.\/search-module\.mjs'\?$/),
  );
  await assert.rejects(
    preflightTarget({ module: './search-module.mjs' }, dir, id),
    refused(
      /^\/.*\/promptfooconfig\.yaml: providers\[1\] \(label 'theirs'\): config\.module: \.\/search-module\.mjs does not export createSearchService\(config\) \(named, or on its default export\); it exports createSearchServce, version; did you mean 'createSearchServce'\?$/,
    ),
  );
  await assert.rejects(preflightTarget({ module: './broken.mjs' }, dir, id), refused(/config\.module: \.\/broken\.mjs cannot be loaded: .*Unexpected token/));
  await preflightTarget({ module: './good.mjs' }, dir, id);
  await preflightTarget({ module: './nowhere.mjs', preflight: false }, dir, id);
});

test('url: refused connections, unknown paths and auth failures stop the eval; slow or failing answers are left to the rows', async (t) => {
  const seen: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push(`${req.url} ${body}`);
      if (req.url === '/api/v1/search') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"results":[]}');
      if (req.url === '/broken/api/v1/search') return res.writeHead(500).end('boom');
      if (req.url === '/private/api/v1/search') return res.writeHead(401).end('no token');
      res.writeHead(404).end('not here');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-preflight-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const id = 'file://providers/search.ts';

  const dead = `http://127.0.0.1:${await closedPort()}/api/v1/search`;
  await assert.rejects(
    preflightTarget({ url: dead }, dir, id),
    refused(/^promptfooconfig\.yaml: provider file:\/\/providers\/search\.ts: config\.url: http:\/\/127\.0\.0\.1:\d+\/api\/v1\/search refused a probe request \(POST .* failed: connection refused \(nothing listening at 127\.0\.0\.1:\d+; is the service running\?\)\); no query can succeed \(preflight: false skips this check\)$/),
  );
  await assert.rejects(preflightTarget({ url: `${base}/wrong/api/v1/search` }, dir, id), refused(/refused a probe request \(POST .*-> HTTP 404: not here\)/));
  await assert.rejects(preflightTarget({ url: `${base}/private/api/v1/search` }, dir, id), refused(/-> HTTP 401: no token/));
  await preflightTarget({ url: `${base}/api/v1/search` }, dir, id);
  await preflightTarget({ url: `${base}/broken/api/v1/search` }, dir, id); // a 500 is the rows' business
  await preflightTarget({ url: dead, preflight: false }, dir, id);
  assert.ok(seen.includes('/api/v1/search {"query":"rankgate preflight probe","limit":1}'), seen.join('\n'));
  assert.equal(probeRefusal('POST x timed out after 10000 ms (timeoutMs)'), undefined);
  assert.equal(probeRefusal('POST x -> HTTP 503: busy'), undefined);
});

test('an exit-2 verdict with nothing measured says so instead of metric values, its reason once; exit 0/1 keep them', () => {
  const report = { overall_recall_at_3: null, overall_mrr_at_10: null, errors: 40 } as unknown as ColumnVerdict['report'];
  const v: ColumnVerdict = {
    column: 'ours',
    code: 2,
    evidence: 'rows',
    evaluated: 40,
    measured: 0,
    expected: 40,
    partial: null,
    lacking: null,
    reasons: ['40 of 40 queries errored: 40× search service unavailable: database postgres://127.0.0.1:5432/app holds no rankgate index (no rankgate tables in schema "rankgate")'],
    notes: [],
    errors: null,
    report,
    regression: null,
    delta: null,
  };
  const lines = verdictLines(v);
  assert.equal(lines[0], "rankgate gate ERROR (exit 2) for 'ours': 40 of 40 queries · nothing measured: all 40 queries errored (the reasons below)");
  assert.doesNotMatch(lines.join('\n'), /Success@3|MRR@10|0\.0000/);
  assert.equal(lines[1], `  ✗ ${v.reasons[0]}`);
  assert.equal(lines.join('\n').split('search service unavailable').length, 2, 'the reason (and its advice) once');
  const zeros = { ...report, overall_recall_at_3: 0, overall_mrr_at_10: 0, errors: 0 } as ColumnVerdict['report'];
  const failed = verdictLines({ ...v, code: 1, measured: 40, report: zeros, reasons: ['floor: overall recall_at_3 = 0.0000 is below the floor 0.8'] });
  assert.match(failed[0]!, /FAILED \(exit 1\) for 'ours': 40 of 40 queries · Success@3 0\.0000 \(DES-058 Recall@3\) · MRR@10 0\.0000$/);
  // 11 of 12 measured: the figures of the 11, with the one errored beside them; never "nothing measured"
  const one = { ...report, overall_recall_at_3: 0.9091, overall_mrr_at_10: 0.8, errors: 1 } as ColumnVerdict['report'];
  const some = verdictLines({ ...v, evaluated: 12, expected: 12, measured: 11, report: one, reasons: ['1 of 12 queries errored: 1× search failed: x: a broken setup is not a quality result; fix the service, or set max_error_rate in config/gate.yaml'] });
  assert.equal(some[0], "rankgate gate ERROR (exit 2) for 'ours': 12 of 12 queries · Success@3 0.9091 (DES-058 Recall@3) · MRR@10 0.8000 over the 11 measured (1 of 12 errored) · not a quality verdict (the reasons below)");
  assert.equal(some.join('\n').split('fix the service').length, 2, 'the advice once');
});
