/**
 * The default eval as a user runs it: a bare `promptfoo eval` in the repository root with no PROMPTFOO_*
 * variables set (the committed .env supplies them), on the embedded defaults (a fresh PGlite database,
 * the demo corpus ingested on first use), exiting 0 with the gate passing or 1 with a clear gate message,
 * never promptfoo's 100 for failed rows. HOME is a temp dir: nothing may be written to ~/.promptfoo. The run happens
 * in a temp copy of the repository root (promptfooconfig.yaml and .env copied, everything else linked), so its
 * promptfoo history lands in that copy's .promptfoo and never in the repository's own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { overallDerivedMetrics } from '../../src/results/derived.ts';
import { ROOT, defaultEvalRun } from './helpers.ts';

describe('promptfooconfig.yaml and .env', () => {
  it('labels the column, lists the assertions, the derived means, the gate hooks and the exit-code policy', () => {
    const cfg = yaml.load(readFileSync(join(ROOT, 'promptfooconfig.yaml'), 'utf8')) as Record<string, any>;
    assert.equal(cfg.providers.length, 1);
    assert.deepEqual(cfg.prompts, [{ raw: '{{query}}', label: 'golden query' }], 'one prompt, the golden query, labelled');
    assert.equal(cfg.providers[0].id, 'file://providers/search.ts');
    assert.match(cfg.providers[0].label, /hybrid rrf60/);
    assert.equal(cfg.tests, 'file://datasets/tests.ts');
    assert.deepEqual(
      cfg.defaultTest.assert.map((a: { value: string }) => a.value),
      ['file://assertions/rank.ts:rank', 'file://assertions/routing.ts:routing', 'file://assertions/integrity.ts:integrity', 'file://assertions/judge.ts:judged'],
    );
    assert.equal(cfg.derivedMetrics, undefined, 'no derivedMetrics: the gate hooks compute the means (promptfoo would load mathjs for them)');
    assert.deepEqual(cfg.extensions, ['file://assertions/gate.ts:beforeAll', 'file://assertions/gate.ts:afterEach', 'file://assertions/gate.ts:afterAll']);
    assert.equal(cfg.env.PROMPTFOO_PASS_RATE_THRESHOLD, '0');
    const env = readFileSync(join(ROOT, '.env'), 'utf8');
    for (const k of ['PROMPTFOO_CONFIG_DIR=.promptfoo', 'PROMPTFOO_DISABLE_TELEMETRY=1', 'PROMPTFOO_DISABLE_UPDATE=1', 'PROMPTFOO_DISABLE_SHARING=1', 'PROMPTFOO_PASS_RATE_THRESHOLD=0']) {
      assert.ok(env.includes(k), `.env sets ${k}`);
    }
  });
});

describe('bare `promptfoo eval` on the embedded defaults', () => {
  it('builds the index on first use, evaluates the English set and exits through the gate', async () => {
    // the run itself is shared with the demo gate and view tests, once per `npm test` (helpers.ts: defaultEvalRun)
    const r = await defaultEvalRun();
    assert.ok(r.code === 0 || r.code === 1, `exit 0 (gate passed) or 1 (gate failed), got ${r.code}\n${r.output.slice(-3000)}`);
    assert.match(r.output, /ingesting .*datasets\/corpus/);
    assert.match(r.output, r.code === 0 ? /gate PASSED/ : /rankgate gate FAILED \(exit 1\)/);
    assert.ok(!existsSync(join(r.home, '.promptfoo')), 'promptfoo state went to the .promptfoo beside the config (from .env), not ~/.promptfoo');
    assert.ok(existsSync(join(r.work, '.promptfoo')), 'the .env setting PROMPTFOO_CONFIG_DIR=.promptfoo took effect');
    assert.equal(r.historyAfter, r.historyBefore, "the repository's own .promptfoo is untouched");
    const d = JSON.parse(readFileSync(r.results, 'utf8'));
    const s = d.results.prompts[0].metrics.namedScores;
    const golden = JSON.parse(readFileSync(join(ROOT, 'datasets', 'golden', 'golden-set-en.json'), 'utf8'));
    assert.equal(d.results.results.length, golden.length);
    // failureReason 2 = ERROR (provider or assertion crash); 1 = a row failing its own assertions, which is allowed.
    assert.equal(d.results.results.filter((x: { failureReason?: number }) => x.failureReason === 2).length, 0, 'no errored rows');
    assert.ok(s.avg_recall_at_3 >= 0 && s.avg_recall_at_3 <= 1);
    // the overall means (computed by the gate hook after the last row, as promptfoo's derivedMetrics would be)
    for (const m of overallDerivedMetrics()) assert.equal(typeof s[m.name], 'number', `${m.name} in the column's scores`);
    assert.equal(s.avg_recall_at_3, s.recall_at_3 / s.n_ranked);
    assert.equal(s.not_found_rate, 1 - s.found / s.n_ranked);
    assert.ok('routing_accuracy_technique_boundary' in s);
    assert.ok(s.latency_p95_ms > 0);
    assert.match(r.output, /judge: off/, 'no AWS configuration: the judge is off and the summary says so');
  });
});
