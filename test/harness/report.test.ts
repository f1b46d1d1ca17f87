/** Pure parts of the harness: per-query scoring edge cases, routing, integrity, floors, percentiles, shipping latency. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoldenQuerySchema, type GoldenQuery } from '../../src/golden/schema.ts';
import { categoryKey, checkIntegrity, parseOutput, rankNamedScores, rerankCostOf, rerankNamedScores, routingChecked, routingNamedScores, scoreRanking, scoreRouting } from '../../src/results/score.ts';
import { applyGate, loadFloors } from '../../src/gate/floors.ts';
import { buildReport, buildReportFromSums, percentile, rerankCacheNote, rerankUncachedNote } from '../../src/results/summary.ts';
import { rerankPart } from '../../src/report/column-line.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import { listCostUsd } from '../../src/search/rerank-step.ts';
import { shippingCriteria } from '../../src/gate/shipping.ts';
import { parseResultsJson, sumsInconsistency, type Column, type QueryRecord } from '../../src/results/read.ts';
import { mulberry32 } from '../../src/metrics/significance.ts';
import { applyDerivedMetrics, compileOwnDerived, derivedMetricsFor } from '../../src/results/derived.ts';
import { compileDerivedMetrics } from '../../assertions/gate.ts';
import { evaluate } from 'mathjs';
import { bucketLabel, type HarnessHit, type HarnessOutput } from '../../src/results/types.ts';

const g = (o: Record<string, unknown>): GoldenQuery => GoldenQuerySchema.parse({ id: 'q', query: 'q', language: 'en', category: 'direct', ...o });
const hit = (chunkId: string, documentId: string, content = 'Text.', extra: Partial<HarnessHit> = {}): HarnessHit => ({ rank: 0, chunkId, documentId, score: 0, content, ...extra });
const out = (hits: HarnessHit[], extra: Partial<HarnessOutput> = {}): HarnessOutput => ({
  ids: hits.map((h) => h.chunkId),
  hits: hits.map((h, i) => ({ ...h, rank: i + 1 })),
  routing: { route: hits.length ? 'search' : 'no_results', safety: false, reasons: [] },
  practice_bridge: false,
  safety: false,
  latencyMs: 1,
  ...extra,
});

describe('scoreRanking', () => {
  it('credits a passage split over two overlapping chunks once, at its best rank', () => {
    const q = g({ expected: [{ passage_substring: 'the passage', grade: 3, relevant: true }] });
    const s = scoreRanking(q, out([hit('a', 'd'), hit('b', 'd'), hit('c', 'd')]), { resolution: { 'the passage': ['b', 'c'] } })!;
    assert.equal(s.best_rank, 2);
    assert.equal(s.trec_recall_at_10, 1);
    assert.equal(s.precision_at_5, 1 / 5, 'the second chunk of the same passage is not a second relevant item');
    assert.equal(s.mrr, 0.5);
  });

  it('without a resolution (url:/module: services) matches the substring in the hit content, whitespace-normalised', () => {
    const q = g({ expected: [{ passage_substring: 'quiet   mind', grade: 3, relevant: true }] });
    const s = scoreRanking(q, out([hit('a', 'd', 'Noise.'), hit('b', 'd', 'A quiet\nmind rests.')]))!;
    assert.equal(s.best_rank, 2);
    assert.equal(s.bucket, 'topk_ordering_gap');
  });

  it('DES-058: partial references count for nDCG but not for Recall@3', () => {
    const q = g({ expected: [{ chunk_id: 'p', grade: 1, relevant: false }, { chunk_id: 'h', grade: 3, relevant: true }] });
    const s = scoreRanking(q, out([hit('p', 'd'), hit('x', 'd'), hit('y', 'd'), hit('h', 'd')]))!;
    assert.equal(s.recall_at_3, 0);
    assert.equal(s.recall_at_5, 1);
    assert.ok(s.ndcg_at_10 > 0 && s.ndcg_at_10 < 1);
    // DCG = 1/log2(2) + 3/log2(5); IDCG = 3 + 1/log2(3)
    assert.ok(Math.abs(s.ndcg_at_10 - (1 + 3 / Math.log2(5)) / (3 + 1 / Math.log2(3))) < 1e-12);
  });

  it('document judgements collapse the ranking to documents (best chunk) before scoring', () => {
    const q = g({ expected: [{ path: 'notes/b.md', grade: 3, relevant: true }] });
    const s = scoreRanking(q, out([hit('a1', 'A'), hit('a2', 'A'), hit('a3', 'A'), hit('b1', 'B', 'x', { path: 'notes/b.md' })]))!;
    assert.equal(s.level, 'document');
    assert.equal(s.best_rank, 2, 'three chunks of A are one document');
    assert.equal(s.recall_at_3, 1);
  });

  it('returns null for routing-only queries and buckets a miss without diagnostics as not_diagnosed', () => {
    assert.equal(scoreRanking(g({ expected_routing: 'no_results' }), out([])), null);
    const s = scoreRanking(g({ expected: [{ chunk_id: 'z', grade: 3, relevant: true }] }), out([hit('a', 'd')]))!;
    assert.equal(s.bucket, 'not_diagnosed');
    assert.equal(s.found, 0);
    assert.equal(s.last_expected_rank, null);
  });

  it('blind-test buckets without a reranker: below the top 10, in a channel\'s candidates, filtered, generation', () => {
    const q = g({ expected: [{ chunk_id: 'doc#c300-7', grade: 3, relevant: true }] });
    const diag = (kw: string[], vec: string[] = []) => ({ diagnostics: { variant: 'c300/x', keywordCandidates: kw, vectorCandidates: vec, timings: {} } });
    const top10 = Array.from({ length: 10 }, (_, i) => hit(`o#c300-${i}`, 'o'));
    // returned at rank 11 (topK 20): below the top-10 output, reranking disabled
    assert.equal(scoreRanking(q, out([...top10, hit('doc#c300-7', 'doc')]), diag(['x']))!.bucket, 'first_stage_top10_miss');
    assert.equal(scoreRanking(q, out(top10), diag(['x', 'doc#c300-7']))!.bucket, 'first_stage_top10_miss', 'a channel had it; cut before the list');
    assert.equal(scoreRanking(q, out(top10), diag(['x'], ['y']))!.bucket, 'candidate_generation_miss');
    assert.equal(scoreRanking(g({ ...q, filters: { tags: ['t'] } }), out(top10), diag(['x']))!.bucket, 'filtered_candidate_miss');
    assert.equal(scoreRanking(q, out([hit('a', 'a'), hit('doc#c300-7', 'doc')]), diag(['x']))!.bucket, 'topk_ordering_gap');
    // no stage metrics without a reranker (not zeros)
    assert.equal(scoreRanking(q, out(top10), diag(['x']))!.stages, undefined);
  });

  it('blind-test buckets with a reranker: reranker-ordering miss (in the budget), rerank-budget miss (first stage past the budget)', () => {
    const q = g({ expected: [{ chunk_id: 'e', grade: 3, relevant: true }] });
    const top = (n: number) => Array.from({ length: n }, (_, i) => hit(`h${i}`, `D${i}`));
    const meta = (firstStage: string[], budget: number, kw: string[] = []) => ({
      diagnostics: { variant: 'v', keywordCandidates: kw, vectorCandidates: [], timings: {}, rerank: { reranker: 'tei', budget, firstStage, reranked: firstStage.slice(0, budget) } },
    });
    const fs = [...Array.from({ length: 12 }, (_, i) => `h${i}`), 'e', 'z'];
    // e at first-stage rank 13: inside a budget of 20, outside one of 5
    assert.equal(scoreRanking(q, out(top(10)), meta(fs, 20))!.bucket, 'reranker_ordering_miss');
    assert.equal(scoreRanking(q, out(top(10)), meta(fs, 5))!.bucket, 'rerank_budget_miss');
    // not in the reported first stage but in a channel's candidates: still a first-stage result
    assert.equal(scoreRanking(q, out(top(10)), meta(fs.slice(0, 12), 5, ['e']))!.bucket, 'rerank_budget_miss');
    // in no first-stage candidate at all
    assert.equal(scoreRanking(q, out(top(10)), meta(fs.slice(0, 12), 5))!.bucket, 'candidate_generation_miss');
    assert.equal(scoreRanking(g({ ...q, filters: { book: 'b' } }), out(top(10)), meta(fs.slice(0, 12), 5))!.bucket, 'filtered_candidate_miss');
    // returned at rank 11 (topK 12) past a budget of 5: the final list is the reranked budget then the first stage
    assert.equal(scoreRanking(q, out([...top(10), hit('e', 'E')]), meta(['e', ...fs], 5))!.bucket, 'reranker_ordering_miss');
    assert.equal(scoreRanking(q, out([...top(10), hit('e', 'E')]), meta(fs, 5))!.bucket, 'rerank_budget_miss');
    // a hit in the top 10 is a hit, whatever the stages
    assert.equal(scoreRanking(q, out([hit('e', 'E')]), meta(fs, 5))!.bucket, 'rank1_hit');
    // document level with prechunked ids (no '#', chunk ids differ from document ids): cannot tell -> not diagnosed
    const qd = g({ expected: [{ doc_id: 'E', grade: 3, relevant: true }] });
    assert.equal(scoreRanking(qd, out(top(10).map((h) => ({ ...h, documentId: 'X' }))), meta(fs, 20))!.bucket, 'not_diagnosed');
    // a team's service ranking documents (chunk id = document id): candidate ids are document ids
    const docs = Array.from({ length: 10 }, (_, i) => hit(`D${i}`, `D${i}`));
    assert.equal(scoreRanking(qd, out(docs), meta([...docs.map((h) => h.chunkId), 'E'], 20))!.bucket, 'reranker_ordering_miss');
    assert.equal(scoreRanking(qd, out(docs), meta([...docs.map((h) => h.chunkId), 'E'], 10))!.bucket, 'rerank_budget_miss');
  });

  it('per-stage scores of a reranked row: first-stage Recall@budget, its Recall@3 / nDCG@10, and the gain final minus first stage', () => {
    const q = g({ expected: [{ chunk_id: 'e', grade: 3, relevant: true }] });
    const meta = (firstStage: string[], budget: number) => ({ diagnostics: { variant: 'v', keywordCandidates: [], vectorCandidates: [], timings: {}, rerank: { budget, firstStage } } });
    // first stage: e at rank 5; the reranker moved it to rank 1
    const fsIds = ['a', 'b', 'c', 'd', 'e', 'f'];
    const s = scoreRanking(q, out([hit('e', 'E'), hit('a', 'A'), hit('b', 'B')]), meta(fsIds, 5))!;
    assert.equal(s.bucket, 'rank1_hit');
    const st = s.stages!;
    assert.equal(st.budget, 5);
    assert.equal(st.first_stage_recall_at_budget, 1);
    assert.equal(st.first_stage_recall_at_3, 0);
    assert.ok(Math.abs(st.first_stage_ndcg_at_10 - 1 / Math.log2(6)) < 1e-12, 'e at first-stage rank 5: DCG 3/log2(6), IDCG 3');
    assert.equal(st.rerank_gain_recall_at_3, 1);
    assert.ok(Math.abs(st.rerank_gain_ndcg_at_10 - (1 - 1 / Math.log2(6))) < 1e-12);
    // a budget of 4: the ceiling is 0 (e never reached the reranker)
    assert.equal(scoreRanking(q, out([hit('a', 'A')]), meta(fsIds, 4))!.stages!.first_stage_recall_at_budget, 0);
    // named scores: the stage measures with their counter; none on a row without a reranker
    const ns = rankNamedScores('direct', s);
    assert.equal(ns.first_stage_recall_at_budget, 1);
    assert.equal(ns.n_rerank_ranked, 1);
    // the gain is no named score (promptfoo's dialog would colour it as a pass rate): the final measures beside the
    // first stage's, all 0..1 shares, and the gain their difference
    assert.equal(Object.keys(ns).some((k) => /gain/.test(k)), false);
    assert.equal(ns.reranked_recall_at_3, 1);
    assert.equal(ns.reranked_recall_at_3! - ns.first_stage_recall_at_3!, st.rerank_gain_recall_at_3);
    assert.ok(Math.abs(ns.reranked_ndcg_at_10! - ns.first_stage_ndcg_at_10! - st.rerank_gain_ndcg_at_10) < 1e-12);
    assert.equal(ns.bucket_rank1_hit, 1);
    const plain = rankNamedScores('direct', scoreRanking(q, out([hit('e', 'E')]))!);
    assert.equal(Object.keys(plain).some((k) => /first_stage|rerank/.test(k)), false);
    // an id that cannot be matched (a passage substring without resolution, not among the hits): no stage scores
    const qp = g({ expected: [{ passage_substring: 'calm water', grade: 3, relevant: true }] });
    assert.equal(scoreRanking(qp, out([hit('a', 'A', 'calm water')]), meta(['zz', 'a'], 2))!.stages, undefined);
    // the rerank latency and cost of the row, as the routing assertion records them
    const rs = rerankNamedScores(rerankCostOf({ diagnostics: { variant: 'v', keywordCandidates: [], vectorCandidates: [], timings: {}, rerank: { budget: 5, firstStage: fsIds, ms: 12.5, requests: 1, costUsd: 0.002 } } }));
    assert.deepEqual(rs, { n_reranked: 1, rerank_ms: 12.5, rerank_requests: 1, rerank_cost_usd: 0.002, n_rerank_cost: 1 });
    // a row the score cache answered: counted as such, with what it would have cost uncached at list price
    const cachedRow = rerankNamedScores(rerankCostOf({ diagnostics: { variant: 'v', keywordCandidates: [], vectorCandidates: [], timings: {}, rerank: { budget: 5, firstStage: fsIds, ms: 0.3, requests: 0, cached: 5, uncachedCostUsd: 0.002 } } }));
    assert.deepEqual(cachedRow, { n_reranked: 1, rerank_ms: 0.3, rerank_requests: 0, n_rerank_cached: 1, rerank_uncached_cost_usd: 0.002, n_rerank_uncached_cost: 1 });
    assert.equal(rerankCostOf({ diagnostics: null }), null);
    assert.deepEqual(rerankNamedScores(null), {});
  });

  it('an older results file: its bucket_candidate_budget_miss sums count as first_stage_top10_miss, and the sums still check out', () => {
    const ns = { n_ranked: 3, recall_at_3: 1, bucket_rank1_hit: 1, bucket_candidate_budget_miss: 2 };
    const col = { index: 0, label: 'old', providerId: 'p', config: {}, namedScores: ns, queries: [], counts: { pass: 1, fail: 2, error: 0 }, selection: null, identity: null } as Column;
    assert.equal(sumsInconsistency(col), null, 'the old name counts in the buckets = n_ranked check');
    const rep = buildReportFromSums(col);
    assert.equal(rep.failure_buckets.first_stage_top10_miss, 2);
    assert.equal(rep.failure_buckets.rank1_hit, 1);
    assert.equal(bucketLabel('candidate_budget_miss'), 'first-stage top-10 miss');
    assert.equal(bucketLabel('rerank_budget_miss'), 'rerank-budget miss');
  });

  it('reads metadata.harness (readable-text output), else the older object / JSON-string output; rejects other shapes clearly', () => {
    const o = out([hit('a', 'd')]);
    assert.equal(parseOutput('route search · 1 result\n#1   D', { harness: o }), o, 'contract C: the structure is in metadata.harness');
    assert.equal(parseOutput(JSON.stringify(out([hit('a', 'd')]))).hits.length, 1);
    assert.equal(parseOutput(o, {}).hits.length, 1, 'older results: the object output');
    assert.throws(() => parseOutput('plain text'), /output is text and the row has no metadata\.harness/);
    assert.throws(() => parseOutput({ ids: [] }), /no hits\[\]/);
  });
});

describe('scoreRouting and integrity', () => {
  it('practice_bridge, no_results (route, empty, or below threshold), search, safety flag', () => {
    const bridge = out([], { routing: { route: 'practice_bridge', safety: false, reasons: [] }, practice_bridge: true });
    assert.equal(scoreRouting(g({ expected_routing: 'practice_bridge' }), bridge)!.ok, true);
    assert.equal(scoreRouting(g({ expected_routing: 'practice_bridge' }), out([hit('a', 'd')]))!.ok, false);
    const low = out([hit('a', 'd')], { routing: { route: 'search', safety: false, reasons: [], topRelevance: 0.2 } });
    assert.equal(scoreRouting(g({ expected_routing: 'no_results' }), low)!.ok, false);
    assert.equal(scoreRouting(g({ expected_routing: 'no_results' }), low, { noResultsThreshold: 0.3 })!.ok, true);
    assert.equal(scoreRouting(g({}), out([]))!.ok, false, 'search expects results');
    const r = scoreRouting(g({ expect_safety: true }), out([hit('a', 'd')]))!;
    assert.equal(r.ok, false);
    assert.match(r.reason, /safety flag missing/);
    assert.equal(scoreRouting(g({ expect_safety: true }), out([hit('a', 'd')], { safety: true }))!.ok, true);
  });

  it('checks routing only where the golden entry states it (derived by the reader, or a format without routing)', () => {
    const none = out([], { routing: { route: 'no_results', safety: false, reasons: [] } });
    // A blind-test YAML entry without expected_routing: the reader filled in `search` (origin.derived); not checked.
    assert.equal(scoreRouting(g({ origin: { format: 'yaml', derived: ['expected_routing'] } }), none), null);
    assert.equal(routingChecked(g({ origin: { format: 'yaml', derived: ['expected_routing'] } })), false);
    // NQ / BEIR / TREC have no routing field: `search` states nothing; a stated route in DES-058 is checked.
    assert.equal(scoreRouting(g({ origin: { format: 'beir', derived: ['language', 'category'] } }), none), null);
    assert.equal(scoreRouting(g({ origin: { format: 'des058' } }), none)!.ok, false);
    // Only the safety flag stated: the route is not judged, the flag is.
    const s = scoreRouting(g({ origin: { format: 'yaml', derived: ['expected_routing'] }, expect_safety: true }), none)!;
    assert.equal(s.expected, 'any');
    assert.equal(s.ok, false);
    assert.match(s.reason, /safety flag missing/);
    const ns = routingNamedScores('direct', null, 12);
    assert.deepEqual(ns, { latency_ms: 12, n_latency: 1 }, 'an unchecked query adds no routing counts');
    assert.equal(routingNamedScores('direct', scoreRouting(g({}), out([hit('a', 'd')])), 1)['#4 routing'], 1);
  });

  it('flags mid-sentence cuts and open code fences in the top results only', () => {
    const o = out([hit('a', 'd', 'Ends well.'), hit('b', 'd', 'and then the'), hit('c', 'd', '```js\nx()\n'), hit('e', 'd', 'Fenced:\n```\ncode\n```'), hit('f', 'd', '“Quoted.”')]);
    assert.deepEqual(checkIntegrity(o).map((i) => [i.chunkId, i.issue]), [['b', 'cut_mid_sentence'], ['c', 'open_code_fence']]);
    assert.deepEqual(checkIntegrity(o, 1), []);
  });

  it('category keys are mathjs-safe', () => {
    assert.equal(categoryKey('technique-boundary'), 'technique_boundary');
    assert.equal(categoryKey('2nd Slice'), 'c_2nd_slice');
  });
});

function column(label: string, latencies: number[], r10: number[]): Column {
  const queries: QueryRecord[] = r10.map((v, i) => ({
    id: `q${i}`, query: 'q', category: 'c', language: 'en', tags: [], golden: g({ id: `q${i}` }), error: null,
    retrieval: { recall_at_1: v, recall_at_3: v, recall_at_5: v, recall_at_10: v, trec_recall_at_10: v, mrr: v, ndcg_at_10: v, precision_at_5: v, ap_at_10: v, found: v, best_rank: v ? 1 : null, last_expected_rank: null, answerable_at_10: null, relevant_refs: 1, level: 'chunk', bucket: 'rank1_hit' },
    routing: null, integrity: [], latencyMs: latencies[i]!, top: [], promptfooPass: true, judged: false,
  }));
  return { index: 0, label, providerId: 'p', config: {}, namedScores: {}, queries, counts: null, selection: null, identity: null };
}

/** The killed-reranker run of issue 42: 12 queries, the last 3 errored after waiting out the reranker (8 s each). */
function killedRerankerColumn(): Column {
  const c = column('B', [192, 263, 210, 230, 200, 220, 240, 250, 205, 8184, 8184, 8184], [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]);
  c.queries.forEach((q, i) => {
    q.category = i % 2 ? 'odd' : 'even';
    q.rerank = { reranker: 'tei:rerank', budget: 50, ms: 10 + i, requests: 1, cached: 0 };
    if (i >= 9) {
      q.error = 'search failed: tei:rerank at http://127.0.0.1:1/rerank unreachable';
      q.rerank = null;
    }
  });
  return c;
}

describe('measured queries only (issue 42.3, 42.5)', () => {
  it('every figure of the report leaves errored queries out and says how many', () => {
    const r = buildReport(killedRerankerColumn());
    assert.equal(r.total_queries, 12);
    assert.equal(r.errors, 3);
    assert.equal(r.measured_queries, 9);
    assert.equal(r.overall_recall_at_3, 0.8889, 'over the 9 measured, not 8 of 12 = 0.6667');
    assert.equal(r.latency_ms.p95, 263, 'the errored rows waited 8,184 ms: not a latency');
    assert.equal(r.latency_ms.n, 9);
    // per category: the measured ones, the errored counted beside (odd: 1, 3, 5, 7 measured; 9, 11 errored)
    assert.deepEqual([r.categories.odd!.count, r.categories.odd!.errors, r.categories.odd!.recall_at_3], [6, 2, 1]);
    assert.deepEqual([r.categories.even!.count, r.categories.even!.errors, r.categories.even!.recall_at_3], [6, 1, 0.8]);
    assert.equal(Object.values(r.failure_buckets).reduce((a, n) => a + n, 0), 9, 'a bucket per measured ranked query');
    assert.equal(r.rerank!.queries, 9);
    assert.equal(r.failures.filter((f) => f.bucket === 'error').length, 3, 'still named as failures');
  });

  it('criterion 5 compares the measured queries\' p95 and says how many errored were left out', () => {
    const base = column('A', [500, 520, 544.1, 510, 505, 515, 530, 525, 540, 535, 528, 532], Array(12).fill(0));
    const v = shippingCriteria(base, killedRerankerColumn());
    const c5 = v.criteria[4]!;
    assert.equal(c5.passed, true);
    assert.match(c5.detail, /^p95 544\.1 ms -> 263\.0 ms \(budget 1632\.3 ms\) · candidate p95 over 9 measured queries; 3 errored left out · whole pipeline; its rerank stage p95 18\.0 ms$/);
    assert.equal(v.criteria[5]!.passed, false, 'the errored queries fail their own criterion');
  });

  it('a rerank stage read from its score cache says so beside its p95 and cost, with the uncached estimate', () => {
    const c = column('B', [5, 6, 7], [1, 1, 1]);
    c.queries.forEach((q) => (q.rerank = { reranker: 'cohere:rerank:rerank-v3.5', budget: 50, ms: 0.3, requests: 0, cached: 50, uncachedCostUsd: 0.002 }));
    const r = buildReport(c).rerank!;
    assert.deepEqual([r.cached_queries, r.partly_cached_queries, r.cost_per_query_usd, r.uncached_cost_per_query_usd], [3, 0, null, 0.002]);
    assert.equal(rerankCacheNote(r), 'cache: 3 of 3');
    assert.equal(rerankUncachedNote(r), 'uncached ~$0.002000 per query at list price');
    assert.match(rerankPart(r), /stage p95 0\.3 ms \(cache: 3 of 3\), cost – \(cache: 3 of 3; uncached ~\$0\.002000 per query at list price\)/);
    assert.match(shippingCriteria(column('A', [5, 6, 7], [0, 0, 0]), c).criteria[4]!.detail, /its rerank stage p95 0\.3 ms \(cache: 3 of 3\)$/);
    // list prices: Cohere bills a search unit per query of up to 100 documents; Voyage per token; TEI has none
    assert.equal(listCostUsd('cohere:rerank:rerank-v3.5', 'q', Array(50).fill('passage')), 0.002);
    assert.ok(listCostUsd('voyage:rerank:rerank-2.5', 'a query', ['one passage'])! > 0);
    assert.equal(listCostUsd('tei:rerank', 'q', ['p']), undefined);
  });

  it('the Markdown lists the failure buckets of every column that has them, not only the first', () => {
    const a = buildReport(column('A', [1, 1], [1, 0]));
    const b = buildReport(killedRerankerColumn());
    const md = renderMarkdown(a, null, [], undefined, [b]);
    const section = md.slice(md.indexOf('## Failure buckets'));
    assert.match(section, /\*\*A\*\*\n\n- rank-1 hit \(`rank1_hit`\): 2\n/);
    assert.match(section, /\*\*B\*\*\n\n- rank-1 hit \(`rank1_hit`\): 9\n\nRerank stage `tei:rerank` \(budget 50\), 9 queries: /);
    assert.match(md, /Overall \*\*Success@3 50\.0%\*\* \(DES-058 Recall@3\)/);
    assert.match(renderMarkdown(b), /latency p50 [\d.]+ ms, p95 263\.0 ms \(over 9 measured queries; 3 errored left out\) \(\*\*3 of 12 queries errored\*\*: left out of every figure\)/);
    assert.match(renderMarkdown(b), /\| odd \| 6 \(2 errored\) \| 100\.0% \|/);
  });

  it('judged metrics of queries the judge could not judge are n/a, never the strict figure', () => {
    const c = column('A', [1, 1], [1, 1]);
    for (const q of c.queries) {
      // every judgement failed: the row still carries judged keys, with the expected passage's strict credit
      q.judgedScores = { judged_recall_at_3: 1, judged_mrr: 1, n_judged: 1, judge_errors: 9, judge_calls: 0 };
      q.judgeErrors = 'JUDGE ERROR x9 (API key is not set)';
    }
    const r = buildReport(c);
    assert.equal(r.overall_judged_recall_at_3, null);
    assert.equal(r.judge_stats!.judged_queries, 0);
    assert.equal(r.judge_stats!.errors, 18);
    assert.match(r.judge, /^judge: FAILED on 2 of 2 queries/);
    c.queries[0]!.judgedScores = { judged_recall_at_3: 0, judged_mrr: 0.5, n_judged: 1, judge_errors: 0 };
    c.queries[0]!.judgeErrors = null;
    assert.equal(buildReport(c).overall_judged_recall_at_3, 0, 'the one judged query alone');
  });
});

describe('report helpers', () => {
  it('nearest-rank percentiles', () => {
    const xs = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    assert.equal(percentile(xs, 50), 5);
    assert.equal(percentile(xs, 95), 10);
    assert.equal(percentile([], 95), null);
  });

  it('shipping criterion 5: p95 latency <= min(3 x baseline p95, 2500 ms)', () => {
    const base = column('A', [100, 100, 100, 100], [0, 0, 0, 0]);
    const good = column('B', [250, 250, 250, 300], [1, 1, 1, 0]);
    const slow = column('C', [250, 250, 250, 301], [1, 1, 1, 0]);
    assert.equal(shippingCriteria(base, good).criteria[4]!.passed, true);
    assert.equal(shippingCriteria(base, slow).criteria[4]!.passed, false);
    assert.equal(shippingCriteria(base, good).ship, true);
    const capped = shippingCriteria(column('A', [1000, 1000], [0, 0]), column('B', [2600, 2600], [1, 1]));
    assert.equal(capped.criteria[4]!.passed, false, 'the 2,500 ms cap applies even when 3x baseline is higher');
  });

  it('floors: a category missing from the results cannot be checked (never a silent pass); a present one below its floor fails', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'rankgate-floors-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const f = join(dir, 'gate.yaml');
    writeFileSync(f, 'overall: { recall_at_3: 0.5 }\ncategories: { technique_boundary: { routing_accuracy: 1.0 }, c: { recall_at_3: 0.9 } }\n');
    const report = buildReport(column('A', [1, 1, 1, 1], [1, 1, 0, 1]));
    const checks = applyGate(report, loadFloors(f));
    assert.deepEqual(checks.map((c) => [c.name, c.passed, c.unmeasured === true]), [
      ['overall recall_at_3 >= 0.5', true, false],
      ['technique_boundary routing_accuracy >= 1', false, true],
      ['c recall_at_3 >= 0.9', false, false],
    ]);
    assert.match(checks[1]!.note!, /cannot be checked: no technique_boundary queries in the results/);
    assert.equal(report.gate_passed, false);
    const partial = applyGate(buildReport(column('A', [1, 1, 1, 1], [1, 1, 0, 1])), { ...loadFloors(f), allow_partial: true });
    assert.equal(partial[1]!.passed, true);
    assert.match(partial[1]!.note!, /^NOT CHECKED \(allow_partial\)/);
    writeFileSync(f, 'overall: { recall_at_3: high }\n');
    assert.throws(() => loadFloors(f), /gate\.yaml: overall\.recall_at_3: expected a floor between 0 and 1, got 'high'/);
    writeFileSync(f, 'overall: [\n');
    assert.throws(() => loadFloors(f), /gate\.yaml:\d+:\d+: not valid YAML/);
  });

  it('gate.yaml: unknown keys, metrics and shapes are one line naming the file and key, with a did-you-mean', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'rankgate-floors-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const f = join(dir, 'gate.yaml');
    const bad: [string, RegExp][] = [
      ['overall: { recal_at_3: 0.8 }\n', /gate\.yaml: overall: unknown metric 'recal_at_3'; did you mean 'recall_at_3'\? \(valid: recall_at_3, mrr_at_10, /],
      ['overal: { recall_at_3: 0.8 }\n', /gate\.yaml: unknown key 'overal'; did you mean 'overall'\? \(valid: allow_partial, categories, judge, max_error_rate, metric_family, min_reviewed_share, overall, regression, version\)/],
      ['', /gate\.yaml: empty gate configuration/],
      ['overall: {}\n', /gate\.yaml: no floor and no regression check configured/],
      ['categories: { technique_boundary: 1.0 }\n', /categories\.technique_boundary: expected a map of metric: floor/],
      ['categories: { technique_boundary: { routing_acuracy: 1 } }\n', /categories\.technique_boundary: unknown metric 'routing_acuracy'; did you mean 'routing_accuracy'\?/],
      ['metric_family: judgd\noverall: { recall_at_3: 0.8 }\n', /metric_family: expected strict or judged, got 'judgd'; did you mean 'judged'\?/],
      ['overall: { recall_at_3: 0.8 }\nmax_error_rate: 2\n', /max_error_rate: expected a share of queries in \[0, 1\), got 2/],
      ['overall: { recall_at_3: 0.8 }\nregression: { max_dorp: 2 }\n', /regression: unknown key 'max_dorp'; did you mean 'max_drop'\?/],
      ['overall: { recall_at_3: 0.8 }\nregression: { metrics: [recall_at3] }\n', /regression\.metrics\[0\]: unknown metric 'recall_at3'; did you mean 'recall_at_3'\?/],
      ['overall: { recall_at_3: 0.8 }\nregression: { alpha: 5 }\n', /regression\.alpha: expected a significance level in \(0, 1\)/],
      ['overall: { recall_at_3: 0.8 }\nregression: { max_drop: 2 }\n', /regression\.max_drop: expected a drop in the metric's 0\.\.1 units like the floors \(0\.02 = 2 points\), got 2/],
      ['overall: { recall_at_3: 0.8 }\nregression: { max_drift: 5 }\n', /regression\.max_drift: expected a cumulative drop in the metric's 0\.\.1 units like max_drop \(0\.05 = 5 points over the history window\), got 5/],
      ['overall: { recall_at_3: 0.8 }\nregression: { max_drfit: 0.05 }\n', /regression: unknown key 'max_drfit'; did you mean 'max_drift'\?/],
    ];
    for (const [text, re] of bad) {
      writeFileSync(f, text);
      assert.throws(() => loadFloors(f), re, text);
    }
    writeFileSync(f, 'overall: { recall_at_3: 0.8 }\nregression: { max_drop: 0.03 }\n');
    assert.deepEqual(loadFloors(f).regression, { baseline: 'data/eval/baseline.json', max_drop: 0.03, alpha: 0.05, metrics: ['recall_at_3', 'mrr_at_10'], accept_mismatch: false });
    writeFileSync(f, 'overall: { recall_at_3: 0.8 }\nregression: { max_drift: 0.05 }\n');
    assert.equal(loadFloors(f).regression!.max_drift, 0.05);
    assert.deepEqual(loadFloors(join(process.cwd(), 'config', 'gate.yaml')).overall, { recall_at_3: 0.8 }, 'the committed gate.yaml loads');
    assert.deepEqual(readdirSync(dir), ['gate.yaml']);
  });

  it('results JSON: a bad golden names the row and field; a provider error is an error row, left out of every figure', () => {
    const row = (extra: Record<string, unknown>) => ({ promptIdx: 0, testIdx: 0, testCase: { metadata: { golden: { id: 'x', query: 'q', language: 'en', category: 'direct', expected: [{ chunk_id: 'a', grade: 3, relevant: true }] } } }, ...extra });
    const doc = (rows: unknown[]) => JSON.stringify({ results: { prompts: [{ provider: 'col' }], results: rows } });
    const p = parseResultsJson(doc([row({ error: 'search failed: timed out after 5 ms', success: false })]), 'r.json');
    const q = p.columns[0]!.queries[0]!;
    assert.equal(q.error, 'search failed: timed out after 5 ms');
    assert.equal(q.retrieval!.recall_at_3, 0);
    assert.equal(q.routing!.ok, false);
    const report = buildReport(p.columns[0]!);
    assert.equal(report.errors, 1);
    assert.equal(report.overall_recall_at_3, null, 'nothing measured: no figure, not a 0');
    assert.equal(report.routing.accuracy, null);
    assert.equal(report.failures[0]!.bucket, 'error');
    const bad = row({});
    (bad.testCase.metadata.golden as Record<string, unknown>).language = 'english';
    assert.throws(() => parseResultsJson(doc([bad]), 'r.json'), /r\.json: results\[0\] \(test 0\): testCase\.metadata\.golden\.language: an ISO 639-1 code/);
    assert.throws(() => parseResultsJson('{', 'r.json'), /r\.json: not JSON/);
  });

  it('derived metrics exist only for counters the tests can produce', () => {
    const names = derivedMetricsFor([g({ category: 'emotional', expected: [{ chunk_id: 'a', grade: 3, relevant: true }] }), g({ category: 'adversarial', expected_routing: 'no_results' })]).map((m) => m.name);
    assert.ok(names.includes('avg_mrr_emotional'));
    assert.ok(names.includes('routing_accuracy_adversarial'));
    assert.ok(!names.includes('avg_mrr_adversarial'));
    assert.ok(!names.includes('avg_answerable_at_10'));
    assert.ok(!names.includes('safety_accuracy'));
    assert.equal(new Set(names).size, names.length);
  });

  it('derived metrics compiled once give what per-row mathjs evaluate (promptfoo) gives, and fail where it fails', () => {
    const goldens = [g({ category: 'emotional', expected: [{ chunk_id: 'a', grade: 3, relevant: true }], expect_safety: true }), g({ category: 'adversarial', expected_routing: 'no_results' })];
    const metrics = [...derivedMetricsFor(goldens, [], ['']), { name: 'custom', value: '2 * mrr + max(n_ranked, 10) ^ 2' }, { name: 'fn', value: () => 7 }, { name: 'bad', value: 'mrr / (' }];
    const compiled = compileDerivedMetrics(metrics);
    assert.equal(compiled.length, metrics.length);
    // A scope like promptfoo's: the column's namedScore sums (every counter these metrics read), plus __count.
    const vars = new Set(metrics.flatMap((m) => (typeof m.value === 'string' ? m.value.match(/[a-z_][a-z0-9_]*/g) ?? [] : [])));
    const scope: Record<string, number> = { __count: 2 };
    let i = 0;
    for (const v of vars) if (v !== 'max') scope[v] = ++i % 5 === 0 ? 0 : i * 1.5;
    let checked = 0;
    for (const [k, m] of metrics.entries()) {
      const c = compiled[k]!;
      if (m.name === 'fn') assert.equal(c, m, 'function metrics are left alone');
      else if (m.name === 'bad') assert.equal(c.value, 'mrr / (', 'an expression mathjs cannot parse is left for promptfoo to report');
      else {
        assert.equal(typeof c.value, 'function', m.name);
        assert.equal(String(c.value), m.value, 'the function prints as its expression');
        assert.deepEqual((c.value as (s: object) => number)({ ...scope }), evaluate(m.value as string, { ...scope }), m.name);
        checked++;
      }
    }
    assert.ok(checked > 20, `compared ${checked} metrics`);
    const avgMrr = compiled.find((m) => m.name === 'avg_mrr')!.value as (s: object) => number;
    assert.throws(() => avgMrr({ mrr: 1 }), /Undefined symbol n_ranked/, 'a missing counter throws as evaluate does');
    assert.throws(() => evaluate('mrr / n_ranked', { mrr: 1 }), /Undefined symbol n_ranked/);
  });

  it("rankgate's own derived means without mathjs equal promptfoo's mathjs updateDerivedMetrics, zeros and missing inputs included", () => {
    const goldens = [
      g({ category: 'emotional', expected: [{ chunk_id: 'a', grade: 3, relevant: true, answer_contains: 'x' }], expect_safety: true }),
      g({ category: 'adversarial', expected_routing: 'no_results' }),
      g({ category: 'dark night', expected: [{ chunk_id: 'b', grade: 2, relevant: true }], expected_routing: 'search' }),
    ];
    const metrics = derivedMetricsFor(goldens, [], ['', 'heuristic_']);
    for (const m of metrics) assert.ok(compileOwnDerived(m.value), `${m.name}: '${m.value}' is one of the forms`);
    assert.equal(compileOwnDerived('2 * mrr'), null, 'anything else is left to mathjs');
    const vars = [...new Set(metrics.flatMap((m) => m.value.match(/[a-z_][a-z0-9_]*/g) ?? []))].filter((v) => v !== 'max');
    const rnd = mulberry32(7);
    let compared = 0;
    for (let trial = 0; trial < 300; trial++) {
      // a column's sums: some inputs missing (no row reported them), some 0 (0/0, x/0), the rest counts and fractions
      const sums: Record<string, number> = {};
      for (const v of vars) {
        const r = rnd();
        if (r < 0.15) continue;
        sums[v] = r < 0.35 ? 0 : r < 0.7 ? Math.floor(rnd() * 40) : rnd() * 20;
      }
      const ours = { ...sums };
      applyDerivedMetrics(ours, metrics, 12);
      // promptfoo 0.121's updateDerivedMetrics after the last row, with mathjs
      const theirs: Record<string, number> = { ...sums };
      const scope: Record<string, unknown> = { ...sums, __count: 12 };
      for (const m of metrics) {
        theirs[m.name] ??= 0;
        try {
          theirs[m.name] = evaluate(m.value, scope) as number;
          scope[m.name] = theirs[m.name];
        } catch {
          // left at 0
        }
      }
      assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
      for (const k of Object.keys(theirs)) assert.ok(Object.is(ours[k], theirs[k]), `trial ${trial} ${k}: ${ours[k]} vs mathjs ${theirs[k]}`);
      compared += metrics.length;
    }
    assert.ok(compared > 10_000, `compared ${compared} values`);
  });
});
