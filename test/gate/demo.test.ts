/**
 * The gate on the demo as a user runs it: real `promptfoo eval` of promptfooconfig.yaml (datasets/tests.ts, the
 * English DES-058 set, rankgate's service over the PGlite index; the full run is the README's first command on an
 * empty data directory, shared with the default-config test) and the real `rankgate gate`:
 * - the demo's Recall@3 (0.574 < the 0.80 floor) fails with exit 1 in the hook and in `rankgate gate`, with and
 *   without --no-write (promptfoo 0.121 then keeps no rows: the gate reads the column sums; 0.123 keeps them), and the verdict is the
 *   last thing `promptfoo eval` prints;
 * - a RANKGATE_CATEGORY=metaphorical run against a baseline of the 66 queries compares the shared queries only and
 *   says "partial";
 * - a url: service on a dead port and a corpus: path that does not exist: one line and exit 2 at the eval's start, no row;
 * (a 0-row run and --update-baseline refusing it: test/gate/mutations.test.ts, on the fixture service)
 * - a typo in the floors file is rejected before any query runs (exit 2, one line).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROMPTFOO_BIN, PROMPTFOO_VERSION, ROOT, defaultEvalRun, demoIndexInto, rankgate, runNode, tempDir, type RunResult } from '../harness/helpers.ts';
import { rowsUnderNoWrite } from '../../src/results/nowrite.ts';
import { closedPort } from './helpers.ts';

const tail = (r: RunResult, n: number) => (r.stdout + '\n' + r.stderr).trimEnd().split('\n').filter((l) => l.trim()).slice(-n).join('\n');

describe('the gate on the demo eval (real promptfoo, PGlite)', () => {
  const dir = tempDir('gate-demo');
  const env: Record<string, string | undefined> = {
    RANKGATE_DATA_DIR: join(dir, 'db'),
    DATABASE_URL: undefined,
    RANKGATE_JUDGE: 'off',
    PROMPTFOO_CONFIG_DIR: join(dir, 'pf'),
    PROMPTFOO_DISABLE_TELEMETRY: '1',
    PROMPTFOO_DISABLE_UPDATE: '1',
    PROMPTFOO_DISABLE_SHARING: '1',
    PROMPTFOO_DISABLE_DEBUG_LOG: '1',
    PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
  };
  const pf = (args: string[], extra: Record<string, string | undefined> = {}) =>
    runNode([PROMPTFOO_BIN, 'eval', '--no-table', '--no-progress-bar', '--no-cache', ...args], { env: { ...env, ...extra }, timeoutMs: 600_000 });
  const full = join(dir, 'full.json');
  const baseline = join(dir, 'baseline.json');
  let fullRun: RunResult;
  after(() => rmSync(dir, { recursive: true, force: true }));

  before(async () => {
    // The full demo eval is the README's first command, run once per `npm test` (helpers.ts: defaultEvalRun, checked
    // by the default-config test): its output (stdout and stderr in one stream), its results and the index its first
    // use built; the other runs here go on from a copy of that index.
    const run = await defaultEvalRun();
    await demoIndexInto(join(dir, 'db'));
    copyFileSync(run.results, full);
    fullRun = { code: run.code, stdout: run.output, stderr: '' };
  });

  it('the demo fails the 0.80 Recall@3 floor with exit 1, and the verdict is the last thing promptfoo eval prints', async () => {
    assert.equal(fullRun.code, 1, fullRun.stdout.slice(-3000));
    const lines = fullRun.stdout.trimEnd().split('\n');
    const head = lines.findIndex((l) => /^rankgate gate FAILED \(exit 1\) for 'hybrid rrf60 w1:1 c300 use-lite': 66 (of 66 )?queries · Success@3 0\.5741/.test(l));
    assert.ok(head > lines.findIndex((l) => /^Writing output to /.test(l)) && head > lines.findIndex((l) => /passed \(/.test(l)), 'after promptfoo\'s summary');
    assert.ok(lines.slice(head + 1).every((l) => l.startsWith('  ')), `only the verdict's reasons follow it:\n${lines.slice(head).join('\n')}`);
    assert.match(lines.at(-1)!, /✗ floor: overall recall_at_3 = 0\.5741 is below the floor 0\.8/);
    const g = await rankgate(['gate', full, '--update-baseline', '--baseline', baseline]);
    assert.equal(g.code, 1, g.stderr);
    assert.match(g.stdout, /baseline written: .*baseline\.json \(66 queries/);
    assert.match(g.stderr, /note: regression check not run: --update-baseline makes this run the baseline at .*baseline\.json/);
    assert.doesNotMatch(g.stdout + g.stderr, /regression check off/, 'not "no baseline at X" right after "baseline written: X"');
    assert.match(tail(g, 1), /✗ floor: overall recall_at_3 = 0\.5741 is below the floor 0\.8/);
  });

  const nwRows = rowsUnderNoWrite(PROMPTFOO_VERSION);
  it(`--no-write (promptfoo ${PROMPTFOO_VERSION}: ${nwRows ? 'rows kept' : 'no rows: the column sums'}): the hook and rankgate gate exit 1 with the same numbers`, async () => {
    assert.notEqual(nwRows, null, `promptfoo ${PROMPTFOO_VERSION}: its --no-write shape is not verified (src/results/nowrite.ts rowsUnderNoWrite)`);
    const nw = join(dir, 'nw.json');
    const r = await pf(['--no-write', '--output', nw]);
    assert.equal(r.code, 1, r.stderr.slice(-3000));
    assert.equal(JSON.parse(readFileSync(nw, 'utf8')).results.results.length, nwRows ? 66 : 0, `promptfoo ${PROMPTFOO_VERSION} keeps ${nwRows ? 'every' : 'no'} row under --no-write`);
    if (nwRows) {
      // the rows are evidence like a kept run's: same verdict, from the rows
      assert.match(r.stderr, /rankgate gate FAILED \(exit 1\) .*66 of 66 queries · Success@3 0\.5741 \(DES-058 Recall@3\) · MRR@10 [\d.]+\n/);
      const g = await rankgate(['gate', nw]);
      assert.equal(g.code, 1, g.stderr);
      assert.match(g.stderr, /66 of 66 queries · Success@3 0\.5741 \(DES-058 Recall@3\) · MRR@10 [\d.]+\n/);
      assert.match(tail(g, 1), /overall recall_at_3 = 0\.5741 is below the floor 0\.8/);
      return;
    }
    assert.match(r.stderr, /rankgate gate FAILED \(exit 1\) .*Success@3 0\.5741 \(DES-058 Recall@3\) · MRR@10 [\d.]+ \(from the column sums\)/);
    const g = await rankgate(['gate', nw]);
    assert.equal(g.code, 1, g.stderr);
    // With the golden selection on the test cases (datasets/tests.ts, contract A) the hook records its size in the sums.
    const withSelection = JSON.parse(readFileSync(full, 'utf8')).results.results[0].testCase.metadata.selection !== undefined;
    if (withSelection) assert.match(g.stderr, /66 of 66 queries · Success@3 0\.5741 .*\(from the column sums\)/, 'the hook recorded the selection size in the sums');
    else assert.match(g.stderr, /66 queries · Success@3 0\.5741 .*\(from the column sums\)\n.*\n\s+note: golden selection unknown/);
    assert.match(tail(g, 1), /overall recall_at_3 = 0\.5741 is below the floor 0\.8/);
  });

  it('RANKGATE_CATEGORY=metaphorical against the 66-query baseline: shared queries only, "partial"', async () => {
    const floors = join(dir, 'gate-regression.yaml');
    writeFileSync(floors, `overall: { recall_at_3: 0.8 }\ncategories:\n  technique_boundary: { routing_accuracy: 1.0 }\nregression: { baseline: ${JSON.stringify(baseline)}, max_drop: 0.02, alpha: 0.05 }\n`);
    const out = join(dir, 'meta.json');
    const r = await pf(['--output', out], { RANKGATE_CATEGORY: 'metaphorical', RANKGATE_GATE_FLOORS: floors });
    assert.equal(r.code, 2, 'a floor on a category the run does not have cannot be checked: exit 2, not a pass\n' + r.stderr.slice(-3000));
    assert.match(r.stderr, /partial: compared on the 8 queries this run shares with the baseline's 66/);
    assert.match(r.stderr, /technique_boundary routing_accuracy >= 1 cannot be checked: no technique_boundary queries in the results/);
    assert.doesNotMatch(r.stderr, /no longer in the set|▲/);
    const g = await rankgate(['gate', out, '--floors', floors, '--allow-partial']);
    assert.ok(g.code === 0 || g.code === 1, `partial accepted: the verdict is the floors' and the regression's\n${g.stderr}`);
    assert.match(g.stdout + g.stderr, /on 8 shared queries \(partial: of the baseline's 66\)/);
    assert.match(g.stdout + g.stderr, /NOT CHECKED \(allow_partial\)/);
  });

  it('a url: service on a dead port and a corpus: path that does not exist stop the eval at its start: one line, exit 2, no row', async () => {
    // (a service that goes down DURING an eval, "N of N queries errored ... connection refused": test/gate/mutations.test.ts)
    const port = await closedPort();
    const file = (p: string) => pathToFileURL(join(ROOT, p)).href;
    const demo = readFileSync(join(ROOT, 'promptfooconfig.yaml'), 'utf8').replace(/file:\/\/(providers|assertions|datasets)\//g, (_m, d: string) => file(`${d}/`));
    const cases = [
      { name: 'dead', cfg: demo.replace(/corpus: datasets\/corpus/, `url: http://127.0.0.1:${port}/api/v1/search`), says: new RegExp(`config\\.url: http://127\\.0\\.0\\.1:${port}/api/v1/search refused a probe request \\(POST .* failed: connection refused \\(nothing listening at 127\\.0\\.0\\.1:${port}; is the service running\\?\\)\\)`) },
      { name: 'corpus', cfg: demo.replace(/corpus: datasets\/corpus/, `corpus: ${join(ROOT, 'datasets', 'corpsu')}`), says: /config\.corpus: \S+\/datasets\/corpsu does not exist \(looked for .*\); did you mean '\S+\/datasets\/corpus'\?/ },
    ];
    for (const c of cases) {
      const path = join(dir, `${c.name}.yaml`);
      writeFileSync(path, c.cfg);
      const out = join(dir, `${c.name}.json`);
      const r = await pf(['-c', path, '--output', out]);
      assert.equal(r.code, 2, r.stderr.slice(-3000));
      // (promptfoo 0.123 runs the beforeAll hook, which names the judge, before the provider's start-up check; 0.121 after it)
      const said = r.stderr.split('\n').filter((l) => l.startsWith('rankgate: ') && !l.startsWith('rankgate: judge: '));
      assert.equal(said.length, 1, r.stderr.slice(-3000));
      assert.match(said[0]!, /^rankgate: \S*(dead|corpus)\.yaml: providers\[\d+\] \(label '[^']+'\): config\.(url|corpus): /);
      assert.match(said[0]!, c.says);
      assert.doesNotMatch(r.stdout + r.stderr, /queries errored|rankgate gate|Success@3/, 'no row ran, no verdict on nothing');
      assert.ok(!existsSync(out), 'no results written');
    }
  });

  it('a typo in the floors file is rejected once, before any query runs (exit 2)', async () => {
    const floors = join(dir, 'typo.yaml');
    writeFileSync(floors, 'overall:\n  recal_at_3: 0.80\n');
    const r = await pf(['--output', join(dir, 'typo.json')], { RANKGATE_GATE_FLOORS: floors });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /typo\.yaml: overall: unknown metric 'recal_at_3'; did you mean 'recall_at_3'\?/);
    assert.equal(r.stderr.match(/unknown metric/g)!.length, 1, 'said once');
    assert.ok(!existsSync(join(dir, 'typo.json')), 'no query ran, no results written');
  });
});
