/** Pure parts of the regression gate: power math, the paired regression check with Holm, shipping criteria and errors. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';
import { minimumDetectableDrop, normalQuantile, queriesNeeded, sampleSd } from '../../src/metrics/power.ts';
import { baselineFrom, regressionCheck } from '../../src/gate/baseline.ts';
import { DEFAULT_REGRESSION } from '../../src/gate/floors.ts';
import { buildReport } from '../../src/results/summary.ts';
import type { Column, QueryRecord } from '../../src/results/read.ts';
import { shippingCriteria } from '../../src/gate/shipping.ts';
import { shippingSection } from '../../src/report/markdown.ts';
import { errorGroups, gateColumn } from '../../src/gate/verdict.ts';

function q(id: string, category: string, r3: number, error: string | null = null): QueryRecord {
  return {
    id, query: id, category, language: 'en', tags: [], error,
    golden: GoldenQuerySchema.parse({ id, query: id, language: 'en', category, expected: [{ chunk_id: 'a', grade: 3, relevant: true }] }),
    retrieval: { recall_at_1: r3, recall_at_3: r3, recall_at_5: r3, recall_at_10: r3, trec_recall_at_10: r3, mrr: r3, ndcg_at_10: r3, precision_at_5: r3 / 5, ap_at_10: r3, found: r3, best_rank: r3 ? 1 : null, last_expected_rank: null, answerable_at_10: null, relevant_refs: 1, level: 'chunk', bucket: r3 ? 'rank1_hit' : 'not_diagnosed' },
    routing: { expected: 'search', actual: 'search', practice_bridge: false, ok: true, safety_expected: false, safety_ok: null, reason: 'ok' },
    integrity: [], latencyMs: 1, top: [], promptfooPass: true, judged: false,
  };
}
const col = (label: string, queries: QueryRecord[]): Column => ({ index: 0, label, providerId: 'p', config: { topK: 10 }, namedScores: {}, queries, counts: null, selection: { id: 'sel', size: queries.length }, identity: { engine: 'pglite', variant: 'c300/use-lite', corpusId: 'c1', corpus: 'datasets/corpus' } });

describe('power (src/metrics/power.ts)', () => {
  it('normal quantiles, the minimum detectable drop and the queries needed', () => {
    assert.ok(Math.abs(normalQuantile(0.975) - 1.959964) < 1e-6);
    assert.ok(Math.abs(normalQuantile(0.8) - 0.841621) < 1e-6);
    assert.ok(Math.abs(normalQuantile(0.001) + 3.090232) < 1e-6);
    // (1.959964 + 0.841621) * 0.5 / sqrt(100)
    assert.ok(Math.abs(minimumDetectableDrop(0.5, 100, 0.05) - 0.1400793) < 1e-6);
    assert.equal(queriesNeeded(0.5, 0.1400793, 0.05), 100);
    assert.equal(queriesNeeded(0.5, 0, 0.05), null);
    assert.equal(minimumDetectableDrop(0.5, 0, 0.05), Infinity);
    assert.ok(Math.abs(sampleSd([1, 2, 3, 4]) - 1.2909944) < 1e-6);
    assert.throws(() => normalQuantile(1), /p must be in \(0, 1\)/);
  });
});

describe('regression check', () => {
  const base = col('base', Array.from({ length: 40 }, (_, i) => q(`q${String(i).padStart(2, '0')}`, i < 20 ? 'a' : 'b', 1)));
  const b = baselineFrom(base, buildReport(base));

  it('a large, significant drop fails overall and in the category where it happens (Holm across categories)', () => {
    const worse = col('cand', base.queries.map((x, i) => q(x.id, x.category, i < 12 ? 0 : 1)));
    const r = regressionCheck(b, worse, buildReport(worse), { ...DEFAULT_REGRESSION, metrics: ['recall_at_3'] });
    const overall = r.tests.find((t) => t.scope === 'overall')!;
    assert.equal(overall.failed, true);
    assert.ok(Math.abs(overall.drop_pts - 30) < 1e-9);
    assert.ok(overall.p < 0.001);
    const a = r.tests.find((t) => t.scope === 'a')!;
    assert.equal(a.failed, true);
    assert.ok(a.p_adj >= a.p, 'Holm-adjusted');
    assert.equal(r.tests.find((t) => t.scope === 'b')!.failed, false);
    assert.equal(r.mdd[0]!.n, 40);
    assert.equal(r.mdd[0]!.sd_assumed, false);
  });

  it('a drop under max_drop, or not significant, passes; errored queries are left out, not regressions', () => {
    const small = col('cand', base.queries.map((x, i) => q(x.id, x.category, i < 1 ? 0 : 1)));
    const r = regressionCheck(b, small, buildReport(small), { ...DEFAULT_REGRESSION, metrics: ['recall_at_3'], max_drop: 0.05 });
    assert.equal(r.tests.some((t) => t.failed), false);
    const errored = col('cand', base.queries.map((x, i) => (i < 12 ? q(x.id, x.category, 0, 'search failed: timed out') : q(x.id, x.category, 1))));
    const e = regressionCheck(b, errored, buildReport(errored), { ...DEFAULT_REGRESSION, metrics: ['recall_at_3'] });
    assert.equal(e.excluded_errors, 12);
    assert.equal(e.tests.some((t) => t.failed), false);
  });

  it('identity: another corpus is fatal, another provider config is loud; a subset run is partial', () => {
    const other = { ...col('cand', base.queries.slice(0, 10)), identity: { engine: 'postgres', variant: 'c300/use-lite', corpusId: 'c2', corpus: 'my-docs' }, config: { topK: 5 } };
    const r = regressionCheck(b, other, buildReport(other), DEFAULT_REGRESSION);
    assert.deepEqual(r.mismatches.map((m) => [m.field, m.fatal]), [['corpus', true], ['engine', false], ['provider config', false]]);
    assert.equal(r.partial, true);
    assert.equal(r.shared, 10);
    const v = gateColumn(other, { floors: { overall: {}, categories: {}, metric_family: 'strict', regression: DEFAULT_REGRESSION }, floorsSource: 'gate.yaml', baseline: { path: 'b.json', data: b } });
    assert.equal(v.code, 2);
    assert.match(v.reasons.join('\n'), /baseline b\.json was measured on another corpus: baseline datasets\/corpus \(c1\); this run my-docs \(c2\)/);
    const accepted = gateColumn(other, { floors: { overall: {}, categories: {}, metric_family: 'strict', regression: DEFAULT_REGRESSION }, floorsSource: 'gate.yaml', baseline: { path: 'b.json', data: b }, acceptMismatch: true });
    assert.equal(accepted.code, 0);
    assert.match(accepted.notes.join('\n'), /partial: compared on the 10 queries this run shares with the baseline's 40/);
  });
});

describe('errors are errors', () => {
  it('shipping criteria leave errored queries out and report them; the gate groups their reasons', () => {
    const a = col('base', [q('x1', 'a', 1), q('x2', 'a', 1), q('x3', 'a', 0)]);
    const dead = col('cand', [q('x1', 'a', 0, 'search failed: connect ECONNREFUSED 127.0.0.1:9\n    at stack'), q('x2', 'a', 0, 'search failed: connect ECONNREFUSED 127.0.0.1:9'), q('x3', 'a', 0, 'timed out')]);
    const v = shippingCriteria(a, dead);
    assert.equal(v.queries, 0, 'no pair with an errored query');
    assert.match(v.criteria[1]!.detail, /0 of 0 queries regress/);
    assert.deepEqual(v.errors, { baseline: 0, candidate: 3, reasons: ['search failed: connect ECONNREFUSED 127.0.0.1:9', 'timed out'] });
    assert.equal(v.ship, false);
    assert.match(shippingSection(v), /❌ no errored queries: 3 of 3 candidate and 0 of 3 baseline queries errored \(left out of the criteria, not counted as regressions\)/);
    assert.deepEqual(errorGroups(dead.queries), [{ reason: 'search failed: connect ECONNREFUSED 127.0.0.1:9', count: 2 }, { reason: 'timed out', count: 1 }]);
    const g = gateColumn(dead, { floors: { overall: { recall_at_3: 0.5 }, categories: {}, metric_family: 'strict' }, floorsSource: 'gate.yaml' });
    assert.equal(g.code, 2);
    assert.match(g.reasons[0]!, /^3 of 3 queries errored: 2× search failed: connect ECONNREFUSED 127\.0\.0\.1:9; 1× timed out/);
    assert.equal(g.reasons.length, 1, 'the zeros of errored queries are not also reported as a floor failure');
  });
});
