/** rankgate report's pieces without a browser: bootstrap CIs, sweep panels, the Mermaid chart of the PR comment. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapMean, sweepPanels } from '../../src/report/html/data.ts';
import { mermaidCategoryChart } from '../../src/report/html/index.ts';
import type { BaselineDelta } from '../../src/gate/baseline.ts';
import type { Des058Report } from '../../src/results/summary.ts';
import type { ParsedResults } from '../../src/results/read.ts';

test('bootstrap CI of a mean: seeded, brackets the mean, degenerate on constant data', () => {
  const xs = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1];
  const a = bootstrapMean(xs, { seed: 3 });
  assert.deepEqual(a, bootstrapMean(xs, { seed: 3 }));
  assert.equal(a.mean, 0.7);
  assert.ok(a.lo! <= 0.7 && a.hi! >= 0.7 && a.lo! >= 0 && a.hi! <= 1 && a.hi! - a.lo! > 0.2);
  assert.deepEqual(bootstrapMean([0.5, 0.5, 0.5]), { mean: 0.5, lo: 0.5, hi: 0.5, n: 3 });
  assert.deepEqual(bootstrapMean([]), { mean: null, lo: null, hi: null, n: 0 });
});

test('sweep panels: hybrid columns on an RRF k x weights grid, one panel per chunk size x embedder', () => {
  const col = (label: string, config: Record<string, unknown>) => ({ index: 0, label, providerId: 'p', config, namedScores: {}, queries: [] });
  const parsed = {
    evalId: null,
    timestamp: 't',
    columns: [
      col('a', { mode: 'hybrid', rrfK: 40, weights: { keyword: 1, vector: 1 }, chunkSize: 300, embedder: 'use-lite' }),
      col('b', { mode: 'hybrid', rrfK: 60, weights: { keyword: 1, vector: 1 }, chunkSize: 300, embedder: 'use-lite' }),
      col('c', { mode: 'hybrid', rrfK: 60, weights: { keyword: 0.6, vector: 0.4 }, chunkSize: 300, embedder: 'use-lite' }),
      col('kw', { mode: 'keyword', chunkSize: 300 }),
      col('lonely', { mode: 'hybrid', rrfK: 60, chunkSize: 500, embedder: 'use-lite' }),
    ],
  } as unknown as ParsedResults;
  const p = sweepPanels(parsed);
  assert.equal(p.length, 1, 'a panel needs two cells; keyword-only is not on the grid');
  assert.equal(p[0]!.title, 'chunk size 300 · use-lite');
  assert.deepEqual(p[0]!.rrfK, [40, 60]);
  assert.deepEqual(p[0]!.weights, ['bm25 0.6 : vec 0.4', 'bm25 1 : vec 1']);
  assert.deepEqual(p[0]!.ndcg.map((c) => [c[0], c[1]]), [[0, 1], [1, 1], [1, 0]]);
});

test('Mermaid xychart for the PR comment: per-category Recall@3, bars = head, line = baseline', () => {
  const report = { categories: { direct: { count: 2, recall_at_3: 0.5 }, emotional: { count: 1, recall_at_3: 1 }, technique_boundary: { count: 1, routing_accuracy: 1 } } } as unknown as Des058Report;
  const delta = { categories: { direct: { recall_at_3: [0.25, 0.5] }, emotional: { recall_at_3: [1, 1] } } } as unknown as BaselineDelta;
  assert.equal(
    mermaidCategoryChart(report, delta),
    [
      '```mermaid',
      'xychart-beta',
      '  title "Success@3 per category (%): bars = this PR, line = baseline"',
      '  x-axis ["direct", "emotional"]',
      '  y-axis "Success@3 (%)" 0 --> 100',
      '  bar [50, 100]',
      '  line [25, 100]',
      '```',
    ].join('\n'),
  );
  assert.doesNotMatch(mermaidCategoryChart(report), /line/);
  assert.equal(mermaidCategoryChart({ categories: {} } as unknown as Des058Report), '');
});

// ------------------------------------------------------------------ the verdict block and the significance of every gated metric
import { buildReportData, renderHtml } from '../../src/report/html/index.ts';
import { gateColumn, verdictLines } from '../../src/gate/verdict.ts';
import { DEFAULT_FLOORS, type Floors } from '../../src/gate/floors.ts';
import { parseResultsObject } from '../../src/results/read.ts';
import { describeWithVerdict } from '../../src/report/verdict-text.ts';
import { withoutVerdictTag } from '../../src/results/merge.ts';

/** A results document: each column ranks the expected chunk `e<i>` at the rank its function gives (null: not returned). */
function resultsDoc(columns: { label: string; rankOf: (i: number) => number | null }[], n: number): unknown {
  const rows: unknown[] = [];
  columns.forEach((c, promptIdx) => {
    for (let i = 0; i < n; i++) {
      const category = i % 4 === 3 ? 'technique_boundary' : 'direct';
      const golden =
        category === 'technique_boundary'
          ? { id: `q${i}`, query: `how do I breathe ${i}`, language: 'en', category, expected_routing: 'practice_bridge' }
          : { id: `q${i}`, query: `lamp ${i}`, language: 'en', category, expected: [{ chunk_id: `e${i}`, grade: 3, relevant: true }] };
      const r = c.rankOf(i);
      const ids = Array.from({ length: 5 }, (_, k) => (r === k + 1 ? `e${i}` : `x${i}-${k}`));
      const route = category === 'technique_boundary' ? 'practice_bridge' : 'search';
      rows.push({
        promptIdx,
        testIdx: i,
        success: true,
        latencyMs: 5 + i,
        testCase: { metadata: { golden } },
        provider: { label: c.label },
        response: {
          output: {
            ids,
            hits: ids.map((id, k) => ({ rank: k + 1, chunkId: id, documentId: id.split('-')[0], score: 1 / (k + 1), content: `Text ${id}.` })),
            routing: { route, safety: false, reasons: [] },
            practice_bridge: route === 'practice_bridge',
            safety: false,
            latencyMs: 5 + i,
          },
        },
      });
    }
  });
  return { evalId: 'eval-test', results: { timestamp: '2026-11-26T00:00:00Z', prompts: columns.map((c) => ({ provider: c.label })), results: rows } };
}

function reportHtml(doc: unknown, floors: Floors) {
  const parsed = parseResultsObject(doc, 'r.json');
  const verdicts = parsed.columns.map((c) => gateColumn(c, { floors, floorsSource: 'gate.yaml' }));
  const data = buildReportData(parsed, { gate: { verdicts, floors, floorsSource: 'gate.yaml' } });
  return { verdicts, data, html: renderHtml(data, '/* echarts */') };
}

test('report: the verdict block comes first, from gateColumn, with every floor, its value, the regression check and a conclusion', () => {
  // 12 ranked queries, Recall@3 = 6/12 = 0.5 (< 0.8); the routing floor of technique_boundary is met
  const failing = reportHtml(resultsDoc([{ label: 'cand', rankOf: (i) => (i % 8 < 4 ? 1 : 5) }], 16), DEFAULT_FLOORS);
  assert.equal(failing.verdicts[0]!.code, 1);
  const h = failing.html;
  const block = h.slice(h.indexOf('<section id="verdict"'), h.indexOf('</section>', h.indexOf('<section id="verdict"')));
  assert.ok(h.indexOf('<section id="verdict"') < h.indexOf('id="overall"'), 'the verdict opens the report');
  assert.match(block, /data-verdict="FAIL" data-exit-code="1"/);
  assert.match(block, /<span class="badge">FAIL<\/span> rankgate gate, exit 1/);
  assert.match(block, /overall Success@3 &ge; 0\.8<\/td><td data-label="measured">0\.5000<\/td><td data-label="result" class="bad">fail/);
  assert.match(block, /technique_boundary routing accuracy &ge; 1<\/td><td data-label="measured">1\.0000<\/td><td data-label="result" class="good">pass/);
  assert.match(block, /Regression check: not configured/);
  assert.match(block, /The search is below 1 of 2 quality floors on 16 queries: Success@3 is 0\.5000 where the gate requires at least 0\.8\./);
  assert.match(block, /The gate fails \(exit 1\)/);

  const passing = reportHtml(resultsDoc([{ label: 'cand', rankOf: () => 1 }], 16), { ...DEFAULT_FLOORS, regression: { baseline: '/nonexistent/baseline.json', max_drop: 0.02, alpha: 0.05, metrics: ['recall_at_3'], accept_mismatch: false } });
  assert.match(passing.html, /data-verdict="PASS" data-exit-code="0"/);
  assert.match(passing.html, /The search meets every quality floor on 16 queries: Success@3 1\.0000 \(floor 0\.8\)/);
  assert.match(passing.html, /Regression check: <span class="warn">off<\/span>/);
  assert.match(passing.html, /no baseline at \/nonexistent\/baseline\.json/);

  // a floor nothing measures: exit 2, said as "nothing trustworthy was measured", never as a quality result
  const error = reportHtml(resultsDoc([{ label: 'cand', rankOf: () => 1 }], 16), { ...DEFAULT_FLOORS, categories: { emotional: { recall_at_3: 0.5 } } });
  assert.match(error.html, /data-verdict="ERROR" data-exit-code="2"/);
  assert.match(error.html, /Nothing trustworthy was measured for &#39;cand&#39;/);
  assert.match(error.html, /emotional Success@3 &ge; 0\.5<\/td><td data-label="measured">–<\/td><td data-label="result" class="bad">not measured/);
});

test('report: significance for every gated metric (Recall@3, MRR@10, nDCG@10, routing), and each column gated', () => {
  const doc = resultsDoc(
    [
      { label: 'base', rankOf: () => 1 },
      { label: 'worse', rankOf: (i) => (i % 3 ? null : 2) },
    ],
    24,
  );
  const { data, html } = reportHtml(doc, DEFAULT_FLOORS);
  assert.deepEqual(
    data.significance.map((s) => [s.label, s.queries, s.comparisons.length]),
    [
      ['Success@3', 18, 1],
      ['MRR@10', 18, 1],
      ['nDCG@10', 18, 1],
      ['routing accuracy', 24, 1],
    ],
  );
  const r3 = data.significance[0]!.comparisons[0]!;
  assert.ok(r3.diff < -0.5 && r3.p_holm < 0.05, `Recall@3 drop is significant: ${r3.diff} p ${r3.p_holm}`);
  assert.match(html, /<h2>Significance against base: Success@3, MRR@10, nDCG@10, routing accuracy<\/h2>/);
  assert.deepEqual(data.gate!.columns.map((c) => [c.label, c.word]), [['base', 'PASS'], ['worse', 'FAIL']]);
  assert.equal(data.gate!.combined, 1);
  assert.match(html, /every column against the same floors: 1 pass, 1 fail, 0 error \(the eval's exit code: 1\)/);
  // every table sits in its own scroll box (usable at 390 px; the browser check is in view.test.ts)
  const tables = html.match(/<table/g)!.length;
  assert.equal(html.match(/<div class="scroll"><table class="stack/g)!.length, tables);
});

test('the eval description starts with the verdict; rankgate merge takes it off again', () => {
  const doc = resultsDoc([{ label: 'cand', rankOf: (i) => (i % 8 < 4 ? 1 : 5) }], 8);
  const parsed = parseResultsObject(doc, 'r.json');
  const v = gateColumn(parsed.columns[0]!, { floors: DEFAULT_FLOORS, floorsSource: 'gate.yaml' });
  const d = describeWithVerdict('my eval [draft]', [v], 1);
  assert.equal(d, '[gate FAIL (exit 1): Success@3 0.5000 < 0.8] my eval [draft]');
  assert.equal(withoutVerdictTag(d), 'my eval [draft]');
  assert.equal(describeWithVerdict(undefined, [v], 1, true), '[gate report only, would be FAIL (exit 1): Success@3 0.5000 < 0.8]');
  assert.equal(describeWithVerdict('x', 'config/gate.yaml: overall: unknown metric [recall]', 2), '[gate ERROR (exit 2): config/gate.yaml: overall: unknown metric (recall)] x');
  const two = describeWithVerdict('sweep', [v, { ...v, column: 'b', code: 0, reasons: [] }], 1);
  assert.equal(two, "[gate FAIL (exit 1): 1 of 2 columns fails; first 'cand': Success@3 0.5000 < 0.8] sweep");
});

test('report from the committed baseline only: significance for every gated metric and the regressed queries with their miss cell; tables stack at 390 px', async () => {
  const { baselineFrom } = await import('../../src/gate/baseline.ts');
  const { buildReport } = await import('../../src/results/summary.ts');
  const base = parseResultsObject(resultsDoc([{ label: 'hybrid', rankOf: () => 1 }], 24), 'base.json').columns[0]!;
  const committed = { path: 'config/search-baseline.json', data: baselineFrom(base, buildReport(base)) };
  // the PR: one column only, worse on a third of the ranked queries (not returned) and on q1 (rank 2)
  const parsed = parseResultsObject(resultsDoc([{ label: 'hybrid', rankOf: (i) => (i % 3 === 0 ? null : i === 1 ? 2 : 1) }], 24), 'pr.json');
  const floors: Floors = { ...DEFAULT_FLOORS, regression: { baseline: committed.path, max_drop: 0.02, alpha: 0.05, metrics: ['recall_at_3'], accept_mismatch: false } };
  const verdicts = parsed.columns.map((c) => gateColumn(c, { floors, floorsSource: 'gate.yaml', baseline: committed }));
  const data = buildReportData(parsed, { gate: { verdicts, floors, floorsSource: 'gate.yaml' }, committedBaseline: committed });
  const html = renderHtml(data, '/* echarts */');
  assert.equal(data.reference, 'baseline config/search-baseline.json');
  assert.deepEqual(data.significance.map((s) => [s.label, s.queries]), [['Success@3', 18], ['MRR@10', 18], ['nDCG@10', 18], ['routing accuracy', 24]]);
  assert.ok(data.significance[0]!.comparisons[0]!.diff < 0);
  assert.doesNotMatch(html, /nothing to compare|Nothing to compare against/);
  const changes = data.changes[0]!;
  assert.ok(changes.regressed.length >= 6);
  assert.deepEqual(changes.regressed.find((q) => q.id === 'q0')!.miss, 'e0: not in the top 10');
  assert.deepEqual(changes.regressed.find((q) => q.id === 'q1')!.miss, 'e1: rank 2');
  assert.match(html, /<th>miss: expected, where it ranked<\/th>/);
  assert.match(html, /<td data-label="miss: expected, where it ranked" class="miss">e0: not in the top 10<\/td>/);
  assert.match(html, /\(not kept: the baseline stores per-query values only\)/);
  // the verdict names the regressed queries against the committed baseline too
  assert.match(verdictLines(verdicts[0]!).join('\n'), /regressed against the baseline \(\d+ of 24 queries\): q0 \(recall_at_3 1→0/);
  // every body cell carries its column's header (the stacked layout's label)
  assert.equal(html.match(/<table class="stack/g)!.length, html.match(/<table/g)!.length);
  assert.doesNotMatch(html.replace(/<thead>[\s\S]*?<\/thead>/g, ''), /<td(?![^>]*data-label)[\s>]/);
});
