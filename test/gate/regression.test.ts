/** Pure parts of the regression gate: power math, the paired regression check with Holm, shipping criteria and errors. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';
import { minimumDetectableDrop, normalQuantile, queriesNeeded, sampleSd } from '../../src/metrics/power.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baselineColumn, baselineFrom, baselineInconsistency, configMatches, identityMismatches, readBaseline, regressionCheck, sealBaseline, type Baseline } from '../../src/gate/baseline.ts';
import { isUserError } from '../../src/errors.ts';
import { generateTestCases, shardOf } from '../../src/golden/promptfoo.ts';
import { selectionIdentity } from '../../src/golden/testcases.ts';
import { DEFAULT_REGRESSION } from '../../src/gate/floors.ts';
import { buildReport } from '../../src/results/summary.ts';
import type { Column, QueryRecord } from '../../src/results/read.ts';
import { shippingCriteria } from '../../src/gate/shipping.ts';
import { shippingSection } from '../../src/report/markdown.ts';
import { errorGroups, gateColumn, regressionLines, verdictLines } from '../../src/gate/verdict.ts';
import { renderComment } from '../../src/report/markdown.ts';
import { regressionView, verdictConclusion } from '../../src/report/verdict-text.ts';
import { buildReportData, renderHtml } from '../../src/report/html/index.ts';

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

  it('a drop beyond max_drop the test cannot confirm is named "unconfirmed drop" (terminal, PR comment, HTML amber), never "ok", and the exit code stays 0', () => {
    // the case: 12 queries, Recall@3 0.8333 -> 0.5833 (3 queries lost, none gained), max_drop 9 points
    const base12 = col('base', Array.from({ length: 12 }, (_, i) => q(`u${String(i).padStart(2, '0')}`, 'a', i < 10 ? 1 : 0)));
    const b12 = baselineFrom(base12, buildReport(base12));
    const worse = col('cand', base12.queries.map((x, i) => q(x.id, x.category, i < 3 ? 0 : i < 10 ? 1 : 0)));
    const reg = { ...DEFAULT_REGRESSION, metrics: ['recall_at_3'], max_drop: 0.09 };
    const r = regressionCheck(b12, worse, buildReport(worse), reg);
    const t = r.tests.find((x) => x.scope === 'overall')!;
    assert.equal(t.failed, false);
    assert.ok(Math.abs(t.p - 0.25) < 1e-9, `p ${t.p}`);
    // s_d of (-1,-1,-1, 0 x 9) = 0.4523; (z_.975 + z_.8) * s_d / sqrt(12) = 36.6 pts; ((2.8016 * 0.4523) / 0.25)^2 -> 26 queries
    assert.ok(Math.abs(t.unconfirmed!.mdd_pts - 36.58) < 0.05, `mdd ${t.unconfirmed!.mdd_pts}`);
    assert.equal(t.unconfirmed!.needed, 26);
    assert.equal(r.mdd[0]!.mdd_pts.toFixed(1), t.unconfirmed!.mdd_pts.toFixed(1), 'the same minimum detectable drop as the section reports');
    const floors = { overall: {}, categories: {}, metric_family: 'strict' as const, regression: reg };
    const v = gateColumn(worse, { floors, floorsSource: 'gate.yaml', baseline: { path: 'b.json', data: b12 } });
    assert.equal(v.code, 0, 'not significant: the exit code is the test\'s');
    const text = verdictLines(v).join('\n');
    assert.match(text, /WARN overall recall_at_3: 0\.8333 -> 0\.5833 unconfirmed drop: −25\.0 pts \(p 0\.250; 12 queries cannot confirm less than 36\.6 pts; 26 queries would confirm it\)/);
    assert.doesNotMatch(text, /ok {3}overall recall_at_3/);
    const md = renderComment(v.report, null, v);
    assert.match(md, /- ⚠️ overall recall_at_3: unconfirmed drop: −25\.0 pts \(p 0\.250; 12 queries cannot confirm less than 36\.6 pts; 26 queries would confirm it\)/);
    const view = regressionView(v, floors);
    assert.deepEqual([view.failed, view.unconfirmed], [0, 2], 'overall and its one category');
    assert.match(verdictConclusion(v, floors), /Success@3 fell from 0\.8333 to 0\.5833, more than max_drop \(unconfirmed drop: −25\.0 pts/);
    const html = renderHtml(buildReportData({ evalId: null, timestamp: '2026-11-27T00:00:00Z', columns: [worse] }, { gate: { verdicts: [v], floors, floorsSource: 'gate.yaml' } }), '');
    assert.match(html, /Regression check: <span class="warn">2 unconfirmed drop\(s\) beyond max_drop<\/span>/);
    assert.doesNotMatch(html, /no significant drop/);
    // every query changed alike (3 queries, all lost): the exact test's p is 2 / 2^3; 6 queries would confirm it (2 / 64 < 0.05)
    const three = col('base', base12.queries.slice(0, 3));
    const lost = col('cand', three.queries.map((x) => q(x.id, x.category, 0)));
    const alike = regressionCheck(baselineFrom(three, buildReport(three)), lost, buildReport(lost), reg).tests[0]!;
    assert.match(regressionLines({ ...r, tests: [alike] }).join('\n'), /unconfirmed drop: −100\.0 pts \(p 0\.250; 3 queries cannot confirm any drop, every one having changed alike; 6 queries would confirm it\)/);
    // a drop within max_drop stays "ok"; a significant one is FAIL, not unconfirmed
    const within = regressionCheck(b12, worse, buildReport(worse), { ...reg, max_drop: 0.3 });
    assert.equal(within.tests[0]!.unconfirmed, undefined);
    assert.match(regressionLines(within).join('\n'), /ok {3}overall recall_at_3/);
  });

  it('identity: another corpus is fatal, another provider config is loud; a declared subset is partial', () => {
    // category b only, declared as such (RANKGATE_CATEGORY=b): compared on its 20 queries, "partial" in the first line
    const bq = base.queries.filter((x) => x.category === 'b');
    const other = { ...col('cand', bq), selection: { id: 'selb', size: 20, filter: { category: ['b'], of: 40 } }, identity: { engine: 'postgres', variant: 'c300/use-lite', corpusId: 'c2', corpus: 'my-docs' }, config: { topK: 5 } };
    const r = regressionCheck(b, other, buildReport(other), DEFAULT_REGRESSION);
    assert.deepEqual(r.mismatches.map((m) => [m.field, m.fatal]), [['corpus', true], ['engine', false], ['golden selection', false], ['provider config', false]]);
    assert.equal(r.partial, true);
    assert.equal(r.shared, 20);
    const floors = { overall: {}, categories: {}, metric_family: 'strict' as const, regression: DEFAULT_REGRESSION };
    const v = gateColumn(other, { floors, floorsSource: 'gate.yaml', baseline: { path: 'b.json', data: b } });
    assert.equal(v.code, 2);
    assert.match(v.reasons.join('\n'), /baseline b\.json was measured on another corpus: baseline datasets\/corpus \(c1\); this run my-docs \(c2\)/);
    const accepted = gateColumn(other, { floors, floorsSource: 'gate.yaml', baseline: { path: 'b.json', data: b }, acceptMismatch: true });
    assert.equal(accepted.code, 0);
    assert.match(accepted.notes.join('\n'), /partial: compared on the 20 queries this run shares with the baseline's 40/);
    assert.match(verdictLines(accepted)[0]!, /^rankgate gate PASSED \(exit 0\) for 'cand': PARTIAL \(declared filter category b: 20 of the golden files' 40 queries; compared on 20 of the baseline's 40 queries\)/);
  });

  it("the baseline's queries are the contract: missing ones are exit 2 (how many, which categories) unless a declared filter or shard leaves them out", () => {
    const floors = { overall: {}, categories: {}, metric_family: 'strict' as const, regression: DEFAULT_REGRESSION };
    const gate = (c: Column, extra = {}) => gateColumn(c, { floors, floorsSource: 'gate.yaml', baseline: { path: 'b.json', data: b }, ...extra });
    // a subset of the baseline as the whole golden set: queries removed (the portal's rule: never), even accepted
    const sub = col('cand', base.queries.filter((_, i) => i % 4 !== 0));
    for (const v of [gate(sub), gate(sub, { acceptMismatch: true, allowPartial: true })]) {
      assert.equal(v.code, 2);
      assert.match(v.reasons[0]!, /^this run lacks 10 of the 40 queries of baseline b\.json \(5 a, 5 b; e\.g\. q00, q04, q08, …\): they are no longer in the golden set; old queries are never removed/);
      assert.equal(v.partial, null);
      assert.match(verdictLines(v)[0]!, /^rankgate gate ERROR \(exit 2\) for 'cand': LACKS 10 of the baseline's 40 queries \(5 a, 5 b\) · 30 of 30 queries/);
    }
    // a partial run of the full selection (not declared): exit 2 whatever --allow-partial says
    const notRun = { ...col('cand', base.queries.slice(0, 30)), selection: { id: 'sel', size: 40 } };
    const p = gate(notRun, { allowPartial: true });
    assert.equal(p.code, 2);
    assert.match(p.reasons.join('\n'), /lacks 10 of the 40 queries .*\(10 b; .*declare the subset with RANKGATE_CATEGORY/);
    // a declared filter whose category lost a query: removed, exit 2
    const lost = { ...col('cand', base.queries.filter((x) => x.category === 'a' && x.id !== 'q07')), selection: { id: 'sela', size: 19, filter: { category: ['a'], of: 39 } } };
    const l = gate(lost);
    assert.equal(l.code, 2);
    assert.match(l.reasons.join('\n'), /lacks 1 of the 40 queries of baseline b\.json \(1 a; e\.g\. q07\): they are no longer in the golden set \(its declared subset: category a\)/);
    // a declared shard: the baseline's queries of other shards are left out; the shard's own must all be there
    const mine = base.queries.filter((x) => shardOf(x.id, 3) === 2);
    const shard = { ...col('cand', mine), selection: { id: 'sel', size: 40, shard: { index: 2, count: 3 }, shardSize: mine.length } };
    const s = gate(shard);
    assert.equal(s.code, 0, s.reasons.join('\n'));
    assert.match(verdictLines(s)[0]!, new RegExp(`PARTIAL \\(shard 2/3 of the 40-query selection; compared on ${mine.length} of the baseline's 40 queries\\)`));
    const short = { ...shard, queries: mine.slice(1), selection: { ...shard.selection, shardSize: mine.length - 1 } };
    assert.equal(gate(short).code, 2);
    // new queries appended are fine: compared on the shared ones
    const more = col('cand', [...base.queries, q('q99', 'c', 0)]);
    const m = gate(more);
    assert.equal(m.code, 0, m.reasons.join('\n'));
    assert.equal(m.regression!.shared, 40);
  });

  it('a baseline is checked against itself: per-query values in range and consistent with its summary and selection identity', () => {
    const unsealed = structuredClone(b);
    unsealed.identity!.selection = { id: selectionIdentity(base.queries).id, size: 40 };
    assert.match(baselineInconsistency(unsealed)!, /^identity\.seal: missing/);
    const good = sealBaseline(unsealed);
    assert.equal(baselineInconsistency(good), null);
    const bad = (f: (x: Baseline) => void, reseal = true) => {
      const x = structuredClone(good);
      f(x);
      return baselineInconsistency(reseal ? sealBaseline(x) : x);
    };
    // the identity block of another corpus copied in (its corpus id and documents): the seal no longer matches
    assert.match(
      bad((x) => Object.assign(x.identity!, { corpusId: 'f'.repeat(64), corpus: 'other/', documents: { 'a.md': { h: '0123456789abcdef' } } }), false)!,
      /^identity\.seal does not match the identity block and the per-query entries: .*an identity block copied from another baseline hides a corpus swap/,
    );
    assert.match(bad((x) => (x.queries.q02!.ndcg_at_10 = 0.123), false)!, /^identity\.seal does not match/, 'an entry edited where no summary checks it still breaks the seal');
    assert.match(bad((x) => (x.queries.q01!.mrr = -0.1))!, /queries\["q01"\]\.mrr: expected null or a number in \[0, 1\], got -0\.1/);
    assert.match(bad((x) => (x.queries.q01!.recall_at_3 = 0.5))!, /recall_at_3: expected 0, 1 or null/);
    assert.match(bad((x) => (x.queries.q01!.recall_at_3 = 0))!, /recall_at_3 0 \(no relevant reference in the top 3\) but mrr 1/);
    assert.match(bad((x) => Object.assign(x.queries.q01!, { recall_at_3: 0, mrr: 0 }))!, /summary\.overall_recall_at_3 is 1 but the per-query recall_at_3 values average 0\.9750/);
    assert.match(bad((x) => delete x.queries.q01)!, /summary\.total_queries is 40 but the file holds 39/);
    assert.match(bad((x) => (x.summary.categories.a!.count = 19))!, /summary\.categories\.a\.count is 19 but 20 per-query entries/);
    assert.match(bad((x) => (x.queries.q01!.category = 'z'))!, /summary\.categories\.a\.count is 20 but 19 per-query entries/);
    assert.match(bad((x) => (x.identity!.selection!.id = 'ffffffffffffffff'))!, /identity\.selection\.id ffffffffffffffff is not the identity of the 40 query ids/);
    assert.match(bad((x) => (x.identity!.selection!.filter = { category: ['a'], of: 40 }))!, /written from a filtered selection \(category a\)/);
    // through readBaseline: one line naming the file, exit 2
    const dir = mkdtempSync(join(tmpdir(), 'rankgate-bl-'));
    try {
      const f = join(dir, 'baseline.json');
      const x = structuredClone(good);
      x.queries.q05!.ndcg_at_10 = 3;
      writeFileSync(f, JSON.stringify(x));
      assert.throws(() => readBaseline(f), (e: Error) => isUserError(e) && e.message.startsWith(`${f}: queries["q05"].ndcg_at_10: expected null or a number in [0, 1], got 3`) && !e.message.includes('\n'));
      writeFileSync(f, JSON.stringify(good));
      assert.equal(Object.keys(readBaseline(f).queries).length, 40);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the golden selection says when it is a declared subset (the loader, datasets/tests.ts)', () => {
  const DES = join(import.meta.dirname, '..', 'fixtures', 'golden', 'des058', 'golden-set-en.json');
  it('a category or tag filter that leaves queries out is recorded as selection.filter; none when nothing is left out', () => {
    const sel = (c: Record<string, unknown>) => generateTestCases({ golden: DES, ...c }, {})[0]!.metadata.selection!;
    assert.equal(sel({}).filter, undefined);
    assert.deepEqual(sel({ category: 'direct' }).filter, { category: ['direct'], of: 5 });
    assert.deepEqual(sel({ tag: 'fear' }).filter, { tag: ['fear'], of: 5 });
    assert.equal(sel({ language: 'en' }).filter, undefined, 'a language filter that leaves nothing out is the whole set');
    const shard = sel({ shard: '1/2' });
    assert.deepEqual(shard.shard, { index: 1, count: 2 });
    assert.equal(shard.filter, undefined);
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

describe('the committed baseline as the reference: errored queries never a drop, regressed queries named', () => {
  const base = col('base', Array.from({ length: 12 }, (_, i) => q(`q${String(i).padStart(2, '0')}`, i < 6 ? 'a' : 'b', i === 11 ? 0 : 1)));
  const b = baselineFrom(base, buildReport(base));
  const floors = { overall: { recall_at_3: 0.5 }, categories: {}, metric_family: 'strict' as const, regression: { ...DEFAULT_REGRESSION, baseline: 'config/search-baseline.json' } };

  it('every query errored: no overall drop, nobody regressed, "12 of 12 queries errored" instead', async () => {
    const { deltaSection, renderComment, categoryTable } = await import('../../src/report/markdown.ts');
    const broken = col('cand', base.queries.map((x) => q(x.id, x.category, 0, 'search service unavailable: connect ECONNREFUSED')));
    const v = gateColumn(broken, { floors, floorsSource: 'gate.yaml', baseline: { path: 'config/search-baseline.json', data: b } });
    assert.equal(v.code, 2);
    assert.deepEqual(v.delta!.regressed, []);
    assert.deepEqual(v.delta!.overall_recall_at_3, [null, null]);
    const md = deltaSection(v.delta) + categoryTable(v.report, v.delta) + renderComment(v.report, v.delta, v);
    assert.match(md, /nothing to compare\.\n\n\*\*12 of 12 queries errored\*\*: 12× search service unavailable: connect ECONNREFUSED \(left out of the comparison/);
    assert.doesNotMatch(md, /▼|\d+ regressed/);
    assert.doesNotMatch(verdictLines(v).join('\n'), /regressed against the baseline/);
  });

  it('some errored: compared on the measured queries only; the verdict names the queries that went down', async () => {
    const { deltaSection } = await import('../../src/report/markdown.ts');
    const mixed = col('cand', base.queries.map((x, i) => (i < 2 ? q(x.id, x.category, 0, 'golden set: an expected document is not in the corpus') : i === 5 ? q(x.id, x.category, 0) : q(x.id, x.category, i === 11 ? 0 : 1))));
    const v = gateColumn(mixed, { floors, floorsSource: 'gate.yaml', baseline: { path: 'config/search-baseline.json', data: b } });
    assert.deepEqual(v.delta!.regressed.map((x) => x.id), ['q05']);
    assert.deepEqual(v.delta!.errored!.ids, ['q00', 'q01']);
    // the 10 measured: baseline 9 of 10 hits, this run 8 of 10
    assert.deepEqual(v.delta!.overall_recall_at_3, [0.9, 0.8]);
    assert.match(deltaSection(v.delta), /on the 10 queries measured: overall Success@3 90\.0% → 80\.0% \(▼ 10\.0 pts\)/);
    assert.match(v.reasons.join('\n'), /2 of 12 queries errored: 2× golden set: .*update the golden set \(the query's expected document\), or the document's path in the corpus/);
    assert.doesNotMatch(v.reasons.join('\n'), /fix the service/);
    assert.match(verdictLines(v).join('\n'), /^ {2}regressed against the baseline \(1 of 10 queries\): q05 \(recall_at_3 1→0, mrr 1→0, trec_recall_at_10 1→0\)$/m);
  });
});

describe('baseline notes that are true (issue 42.4)', () => {
  const qs = Array.from({ length: 6 }, (_, i) => q(`q${i}`, 'a', 1));
  const ours = (label: string, config: Record<string, unknown>, queries = qs): Column => ({ ...col(label, queries), providerId: 'file://providers/search.ts', config });
  const b = baselineFrom(ours('hybrid', { corpus: 'datasets/corpus' }), buildReport(ours('hybrid', { corpus: 'datasets/corpus' })));

  it('defaults made explicit, labels, the sweep marker and run-time settings are the same search: no note', () => {
    const sweepA = ours('A: hybrid rrf60 w1:1', { corpus: 'datasets/corpus', weights: { keyword: 1, vector: 1 }, rrfK: 60, rerank: false, sweep: 'expansion', timeoutMs: 5000, worker: false });
    assert.deepEqual(identityMismatches(b, sweepA, buildReport(sweepA)), []);
    assert.equal(configMatches(b, { ...sweepA, providerId: 'file:///repo/node_modules/rankgate/providers/search.ts' }), true);
  });

  it('a setting that changes what is searched is named, with its effective value on both sides', () => {
    const c = ours('B', { corpus: 'datasets/corpus', weights: { keyword: 0.6 }, expansion: 'rm3' });
    const m = identityMismatches(b, c, buildReport(c));
    assert.equal(m.length, 1);
    assert.equal(m[0]!.baseline, 'expansion=(none), weights={"keyword":1,"vector":1}');
    assert.equal(m[0]!.run, 'expansion=rm3, weights={"keyword":0.6,"vector":1}');
  });

  it('the baseline applies to the column whose config it records; the first when none does', () => {
    const cols = [ours('A', { corpus: 'datasets/corpus', mode: 'keyword' }), { ...ours('B', { corpus: 'datasets/corpus', rrfK: 60 }), index: 1 }];
    assert.deepEqual(baselineColumn(b, cols), { index: 1, matched: true });
    assert.deepEqual(baselineColumn(b, [cols[0]!]), { index: 0, matched: false });
    const v = gateColumn(cols[0]!, { floors: { overall: {}, categories: {}, metric_family: 'strict', regression: DEFAULT_REGRESSION }, floorsSource: 'f', baseline: null, noBaseline: "regression check: the baseline x applies to column 'B'" });
    assert.ok(v.notes.includes("regression check: the baseline x applies to column 'B'"));
    assert.ok(!v.notes.some((n) => n.startsWith('regression check off')));
  });

  it('a golden set that only gained queries: "N queries added", compared on the shared ones', () => {
    const grown = [...qs, q('q6', 'a', 1), q('q7', 'a', 1)];
    const c = ours('hybrid', { corpus: 'datasets/corpus' }, grown);
    c.selection = { id: 'sel-grown', size: 8 };
    const m = identityMismatches(b, c, buildReport(c));
    assert.equal(m.length, 1);
    assert.equal(m[0]!.note, '2 queries added to the golden set (not in the baseline): compared on the 6 shared queries');
    const v = gateColumn(c, { floors: { overall: {}, categories: {}, metric_family: 'strict', regression: DEFAULT_REGRESSION }, floorsSource: 'f', baseline: { path: 'b.json', data: b } });
    assert.ok(v.notes.includes('2 queries added to the golden set (not in the baseline): compared on the 6 shared queries'), v.notes.join('\n'));
    assert.ok(!v.notes.some((n) => /another golden selection/.test(n)));
    // a query removed is not "added": still another selection
    const shrunk = ours('hybrid', { corpus: 'datasets/corpus' }, [...qs.slice(1), q('q6', 'a', 1)]);
    shrunk.selection = { id: 'sel-other', size: 6 };
    assert.equal(identityMismatches(b, shrunk, buildReport(shrunk))[0]!.note, undefined);
  });
});

describe('the minimum-detectable-drop line on tiny sets (issue 42.7)', () => {
  const result = (n: number, needed: number) =>
    ({ alpha: 0.05, max_drop: 9, shared: n, baseline_queries: n, run_queries: n, partial: false, excluded_errors: 0, mismatches: [], tests: [], mdd: [{ metric: 'mrr_at_10', n, sd_diff: 0.003, sd_assumed: false, mdd_pts: 0.2, needed_for_max_drop: needed }] }) as Parameters<typeof regressionLines>[0];
  it('never "needs ~1 queries": the randomization test confirms nothing with fewer than 6 changed queries at alpha 0.05', () => {
    // one changed query of 12 fed the approximation an s_d that asks for ~1 query
    const line = regressionLines(result(12, 1)).at(-1)!;
    assert.doesNotMatch(line, /needs ~1 queries/);
    assert.match(line, /over 12 queries: 0\.2 pts \(these 12 queries can detect a 9\.0 pts drop, if at least 6 of them change\)$/);
    assert.match(regressionLines(result(3, 1)).at(-1)!, /over 3 queries: 0\.2 pts \(detecting a 9\.0 pts drop needs ~6 queries\)$/);
    assert.match(regressionLines(result(12, 81)).at(-1)!, /\(detecting a 9\.0 pts drop needs ~81 queries\)$/);
    assert.match(regressionLines(result(1, 81)).at(-1)!, /over 1 query: /);
  });
});
