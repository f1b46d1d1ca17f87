/**
 * A real promptfoo eval (the CLI) with a reranked column: test/fixtures/harness/promptfooconfig.rerank.yaml runs the
 * module: fixture service twice with topK 2: as it is (first stage only), and as a team's service that reranks inside
 * and reports diagnostics.rerank (stageBudget 3: firstStage = the hybrid ranking, then the keyword and vector
 * candidates not in it; budget 3; a fixed 2.5 ms and $0.001 per query). Every bucket and stage value below is
 * computed by hand from rankings.json and golden.json:
 *
 *   query              first stage (relevant *)                       no reranker              reranked (budget 3)
 *   fx-direct-001      d1-0*, d1-1, d1-2                              rank1_hit                rank1_hit
 *   fx-direct-002      d2-0(partial), d3-0, d2-1*, d4-0 (kw d2-1)     first_stage_top10_miss   reranker_ordering_miss
 *   fx-conceptual-001  d1-0, d2-0, d3-0, d3-1* (kw)                   first_stage_top10_miss   rerank_budget_miss
 *   fx-conceptual-002  d1-0, d2-0 (d4-0* nowhere)                     candidate_generation_miss (both)
 *   fx-conceptual-003  d3-0 (substring in no chunk)                   missing_expected_source (both)
 *   fx-emotional-001   d2-0, folder filter (d4-1* nowhere)            filtered_candidate_miss (both)
 *   fx-darknight-001   d4-2*, d2-0                                    rank1_hit                rank1_hit
 *   fx-beir-001        docs d1, d2*(g2), d3*(g1)                      topk_ordering_gap        topk_ordering_gap
 *
 * Per-stage (reranked column, 8 ranked queries): first_stage_recall_at_budget 1 for direct-001, direct-002, darknight,
 * beir (d2 among the documents of the first 3 ids) = 4/8; the gain on Recall@3 is -1 for direct-002 only (d2-1 at
 * first-stage rank 3, not returned in the top 2) = -1/8; the gain on nDCG@10: direct-002 -1.5/3.630930, conceptual-001
 * -1/log2(5), beir -0.5/2.630930.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE, close, promptfooEval, tempDir, type RunResult } from './helpers.ts';
import { parseResultsJson } from '../../src/results/read.ts';
import { buildReport, buildReportFromSums } from '../../src/results/summary.ts';
import { renderComment } from '../../src/report/markdown.ts';
import { buildReportData, renderHtml } from '../../src/report/html/index.ts';

interface Row {
  provider: { label: string };
  testCase: { metadata: { id: string } };
  namedScores: Record<string, number>;
  response: { output: string; metadata: { diagnostics: { rerank?: Record<string, unknown> } | null } };
}

const BUCKETS_FIRST: Record<string, string> = {
  'fx-direct-001': 'rank1_hit',
  'fx-direct-002': 'first_stage_top10_miss',
  'fx-conceptual-001': 'first_stage_top10_miss',
  'fx-conceptual-002': 'candidate_generation_miss',
  'fx-conceptual-003': 'missing_expected_source',
  'fx-emotional-001': 'filtered_candidate_miss',
  'fx-darknight-001': 'rank1_hit',
  'fx-beir-001': 'topk_ordering_gap',
};
const BUCKETS_RERANKED: Record<string, string> = {
  ...BUCKETS_FIRST,
  'fx-direct-002': 'reranker_ordering_miss',
  'fx-conceptual-001': 'rerank_budget_miss',
};

describe('promptfoo eval with a reranked team service (diagnostics.rerank)', () => {
  const dir = tempDir('harness-rerank');
  const out = join(dir, 'results.json');
  let run: RunResult;
  let rows: Row[];
  let cols: Record<string, Record<string, number>>;
  before(async () => {
    run = await promptfooEval(join(FIXTURE, 'promptfooconfig.rerank.yaml'), out);
    const d = JSON.parse(readFileSync(out, 'utf8'));
    rows = d.results.results;
    // the columns in config order (their labels carry the gate's verdict tag)
    const ns = d.results.prompts.map((p: { metrics: { namedScores: Record<string, number> } }) => p.metrics.namedScores);
    cols = { 'fixture-first-stage': ns[0], 'fixture-reranked': ns[1] };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const bucketOfRow = (r: Row) => Object.keys(r.namedScores).find((k) => k.startsWith('bucket_'))?.slice('bucket_'.length);

  it('buckets every ranked query of each column, row by row', () => {
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    for (const [label, expected] of [['fixture-first-stage', BUCKETS_FIRST], ['fixture-reranked', BUCKETS_RERANKED]] as const) {
      const got = Object.fromEntries(rows.filter((r) => r.provider.label === label && bucketOfRow(r)).map((r) => [r.testCase.metadata.id, bucketOfRow(r)]));
      assert.deepEqual(got, expected, label);
    }
    const counts = (label: string) => Object.fromEntries(Object.entries(cols[label]!).filter(([k]) => k.startsWith('bucket_')).sort());
    assert.deepEqual(counts('fixture-reranked'), {
      bucket_candidate_generation_miss: 1,
      bucket_filtered_candidate_miss: 1,
      bucket_missing_expected_source: 1,
      bucket_rank1_hit: 2,
      bucket_rerank_budget_miss: 1,
      bucket_reranker_ordering_miss: 1,
      bucket_topk_ordering_gap: 1,
    });
    assert.deepEqual(counts('fixture-first-stage'), {
      bucket_candidate_generation_miss: 1,
      bucket_filtered_candidate_miss: 1,
      bucket_first_stage_top10_miss: 2,
      bucket_missing_expected_source: 1,
      bucket_rank1_hit: 2,
      bucket_topk_ordering_gap: 1,
    });
  });

  it('per-stage scores per row and their means per column; none at all on the column without a reranker', () => {
    const r = cols['fixture-reranked']!;
    assert.equal(r.n_rerank_ranked, 8);
    assert.equal(r.first_stage_recall_at_budget, 4);
    assert.equal(r.avg_first_stage_recall_at_budget, 0.5);
    // the gain is no named score (promptfoo's dialog shows every one as a pass rate: a gain read "Pass -12.50%" in red):
    // the final means of the reranked rows beside the first stage's, and the gain, signed, in the column header
    assert.equal(Object.keys(r).some((k) => /gain/.test(k)), false);
    assert.equal(r.avg_reranked_recall_at_3! - r.avg_first_stage_recall_at_3!, -1 / 8);
    const gainNdcg = (-1.5 / (3 + 1 / Math.log2(3)) - 1 / Math.log2(5) - 0.5 / (2 + 1 / Math.log2(3))) / 8;
    assert.ok(Math.abs(r.avg_reranked_ndcg_at_10! - r.avg_first_stage_ndcg_at_10! - gainNdcg) < 2e-4);
    const header = JSON.parse(readFileSync(out, 'utf8')).results.prompts[1].label as string;
    assert.match(header, /^\[gate [^\]]* · rerank gain nDCG@10 −0\.1292, Success@3 −12\.5 pts\] /);
    const row = rows.find((x) => x.provider.label === 'fixture-reranked' && x.testCase.metadata.id === 'fx-direct-002')!;
    assert.equal(row.namedScores.first_stage_recall_at_3, 1);
    assert.equal(row.namedScores.recall_at_3, 0);
    assert.equal(row.namedScores.reranked_recall_at_3, 0);
    // latency and cost: every row of the reranked column (routing-only ones too)
    assert.equal(r.n_reranked, 10);
    assert.equal(r.rerank_latency_p50_ms, 2.5);
    assert.equal(r.rerank_latency_p95_ms, 2.5);
    assert.ok(close(r.rerank_cost_per_query_usd!, 0.001));
    const plain = cols['fixture-first-stage']!;
    assert.deepEqual(Object.keys(plain).filter((k) => /first_stage_recall|rerank/.test(k)), []);
    // the row keeps the block, ids only
    const rr = row.response.metadata.diagnostics!.rerank!;
    assert.deepEqual(rr.firstStage, ['d2#c300-0', 'd3#c300-0', 'd2#c300-1', 'd4#c300-0']);
    assert.equal(rr.budget, 3);
    // the matrix cell names the bucket
    assert.match(row.response.output, /^route search · MISS \(reranker-ordering miss\): expected/);
  });

  it('the report, the PR comment and the HTML report name the buckets and show the rerank stage', () => {
    const parsed = parseResultsJson(readFileSync(out, 'utf8'), out);
    const col = parsed.columns[1]!;
    const rep = buildReport(col);
    assert.equal(rep.failure_buckets.rerank_budget_miss, 1);
    assert.equal(rep.failure_buckets.reranker_ordering_miss, 1);
    assert.equal(rep.rerank!.queries, 10);
    assert.equal(rep.rerank!.budget, 3);
    assert.equal(rep.rerank!.reranker, 'fixture-reranker');
    assert.equal(rep.rerank!.first_stage_recall_at_budget, 0.5);
    assert.equal(rep.rerank!.cost_per_query_usd, 0.001);
    assert.equal(buildReport(parsed.columns[0]!).rerank, null);
    // a column known only by its sums (a --no-write run): the same means from the row sums
    const sums = buildReportFromSums(col);
    assert.equal(sums.rerank!.first_stage_recall_at_budget, 0.5);
    assert.equal(sums.rerank!.rerank_gain_recall_at_3, -0.125);
    assert.equal(sums.rerank!.cost_per_query_usd, 0.001);
    assert.equal(sums.rerank!.latency_ms.p95, 2.5);
    assert.equal(sums.failure_buckets.reranker_ordering_miss, 1);
    assert.equal(buildReportFromSums(parsed.columns[0]!).rerank, null);
    const comment = renderComment(rep);
    assert.match(comment, /- rerank-budget miss \(`rerank_budget_miss`\): 1/);
    assert.match(comment, /- reranker-ordering miss \(`reranker_ordering_miss`\): 1/);
    assert.match(comment, /Rerank stage `fixture-reranker` \(budget 3\), 10 queries: first-stage Success@budget 50\.0% · gain nDCG@10 -0\.129, Success@3 -12\.5 pts/);
    const html = renderHtml(buildReportData(parsed), '');
    assert.match(html, /<th>rerank-budget miss<\/th>/);
    assert.match(html, /<th>first-stage Success@budget<\/th>/);
    // the hook's column line
    assert.match(run.stderr, /\[fixture-reranked\] 10 queries · .* · rerank budget 3: first-stage Success@budget 0\.5000, gain nDCG@10 -0\.1292, stage p95 2\.5 ms, cost \$0\.001000 per query/);
    // every column's failure buckets under its line (the rerank buckets of the reranked one)
    assert.match(run.stderr, /\[fixture-reranked\] [^\n]*\n    failure buckets: [^\n]*rerank-budget miss 1, reranker-ordering miss 1/);
    assert.match(run.stderr, /\[fixture-first-stage\] [^\n]*\n    failure buckets: [^\n]*first-stage top-10 miss 2/);
    assert.doesNotMatch(run.stderr, /\[fixture-first-stage\].*rerank/);
    // the shipping criteria the hook prints: the latency criterion on the whole pipeline, with the rerank stage's own p95
    // the criteria one a line under the column's ship line (5: the whole pipeline's p95, and the rerank stage's own)
    assert.match(run.stderr, /\[fixture-reranked\] ship: no \(\d+ queries\)\n(?:    .*\n)*?    [✓✗] 5\. p95 latency .*p95 [\d.]+ ms -> [\d.]+ ms \(budget [\d.]+ ms\) · whole pipeline; its rerank stage p95 2\.5 ms/);
  });
});
