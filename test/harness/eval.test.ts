/**
 * Real promptfoo evals (the CLI, nothing mocked) of test/fixtures/harness: ten golden queries through
 * providers/search.ts with a module: search service that answers from canned rankings, so every value
 * below is computed by hand from rankings.json and golden.json:
 *
 *   query              ranking (units)                   relevant at      bucket
 *   fx-direct-001      d1-0*, d1-1, d1-2                 1                rank1_hit
 *   fx-direct-002      d2-0(partial), d3-0, d2-1*        3                topk_ordering_gap
 *   fx-conceptual-001  d1-0, d2-0, d3-0 (d3-1* in BM25)  -                first_stage_top10_miss
 *   fx-conceptual-002  d1-0, d2-0 (d4-0* nowhere)        -                candidate_generation_miss
 *   fx-conceptual-003  d3-0 (substring in no chunk)      -                missing_expected_source
 *   fx-emotional-001   d2-0, folder filter (d4-1*)       -                filtered_candidate_miss
 *   fx-darknight-001   d4-2*, d2-0 (safety flag)         1                rank1_hit
 *   fx-beir-001        docs d1, d2*(g2), d3*(g1)         2, 3             topk_ordering_gap
 *   fx-technique-001   practice_bridge                   routing only
 *   fx-adversarial-001 no_results                        routing only
 *
 * Means over the 8 ranked queries: Recall@3 4/8 = 0.5; Recall@1 2/8; MRR@10 (1 + 1/3 + 1 + 1/2)/8 = 0.354167;
 * nDCG@10 (1 + 2.5/3.630930 + 1 + 1.761860/2.630930)/8 = 0.419775; P@5 (0.2+0.2+0.2+0.4)/8 = 0.125;
 * AP@10 (1 + 1/3 + 1 + (1/2+2/3)/2)/8 = 0.364583; found rank mean (1+3+1+2)/4 = 1.75.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE, close, fixtureEvalInto, promptfooEval, rankgate, tempDir, type RunResult } from './helpers.ts';
import { resummarise } from '../gate/helpers.ts';
import { sealBaseline } from '../../src/gate/baseline.ts';

const CONFIG = join(FIXTURE, 'promptfooconfig.yaml');

describe('promptfoo eval of the harness fixture', () => {
  const dir = tempDir('harness-eval');
  const out = join(dir, 'results.json');
  const lenient = join(dir, 'floors-lenient.yaml');
  let strictRun: RunResult;
  let doc: { results: { prompts: { provider: string; metrics: { namedScores: Record<string, number>; testPassCount: number; testFailCount: number } }[]; results: { testCase: { metadata: { id: string } }; namedScores: Record<string, number>; gradingResult: { componentResults: { reason: string }[] } }[] } };

  before(async () => {
    writeFileSync(lenient, 'overall:\n  recall_at_3: 0.5\ncategories:\n  technique_boundary:\n    routing_accuracy: 1.0\n');
    // the plain fixture eval is run once per `npm test` and shared with test/reliability/signals.test.ts (helpers.ts:
    // fixtureEvalRun): its exit code and output, and a copy of its results and re-gate record here (out)
    strictRun = await fixtureEvalInto(dir);
    doc = JSON.parse(readFileSync(out, 'utf8'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('fails the run through the afterAll gate hook (exit 1, clear message), not through promptfoo failed rows', () => {
    assert.equal(strictRun.code, 1, strictRun.stderr.slice(-2000));
    assert.match(strictRun.stderr, /rankgate gate FAILED \(exit 1\) for 'fixture-hybrid'/);
    assert.match(strictRun.stderr, /overall recall_at_3 = 0\.5000 is below the floor 0\.8/);
    const m = doc.results.prompts[0]!.metrics;
    // The four misses in the top 3 (conceptual x3, emotional); fx-direct-001's integrity issues are metrics, not a failure.
    assert.equal(m.testFailCount, 4, 'four rows miss their golden expectation');
  });

  it('exits 0 when the floors pass even though 4 rows miss their golden expectation', async () => {
    const out2 = join(dir, 'results-lenient.json');
    const r = await promptfooEval(CONFIG, out2, { RANKGATE_GATE_FLOORS: lenient });
    assert.equal(r.code, 0, r.stderr.slice(-2000));
    assert.match(r.stderr, /gate PASSED/);
    const d = JSON.parse(readFileSync(out2, 'utf8'));
    assert.equal(d.results.prompts[0].metrics.testFailCount, 4);
  });

  it('sums the named scores per column and derives the hand-computed means', () => {
    const s = doc.results.prompts[0]!.metrics.namedScores;
    assert.equal(doc.results.prompts[0]!.provider, 'fixture-hybrid');
    assert.equal(s.n_ranked, 8);
    assert.equal(s.recall_at_3, 4);
    assert.ok(close(s.avg_recall_at_3!, 0.5));
    assert.ok(close(s.avg_recall_at_1!, 0.25));
    assert.ok(close(s.avg_mrr!, 0.354167));
    assert.ok(close(s.avg_ndcg_at_10!, 0.419775));
    assert.ok(close(s.avg_precision_at_5!, 0.125));
    assert.ok(close(s.avg_ap_at_10!, 0.364583));
    assert.ok(close(s.avg_found_rank!, 1.75));
    assert.ok(close(s.avg_answerable_at_10!, 1));
    assert.equal(s.routing_accuracy, 1);
    assert.equal(s.safety_accuracy, 1);
    assert.equal(s.n_routing, 10);
    assert.ok(s.latency_p95_ms! >= s.latency_p50_ms!);
  });

  it('derives per-category means from per-category keys and n_<category> counters', () => {
    const s = doc.results.prompts[0]!.metrics.namedScores;
    assert.equal(s.n_direct, 2);
    assert.equal(s.n_conceptual, 3);
    assert.ok(close(s.avg_mrr_direct!, (1 + 1 / 3) / 2));
    assert.ok(close(s.avg_ndcg_at_10_direct!, (1 + 2.5 / (3 + 1 / Math.log2(3))) / 2));
    assert.equal(s.avg_recall_at_3_conceptual, 0);
    assert.ok(close(s.avg_ndcg_at_10_beir!, (2 / Math.log2(3) + 0.5) / (2 + 1 / Math.log2(3))));
    assert.ok(close(s.avg_ap_at_10_beir!, (1 / 2 + 2 / 3) / 2));
    assert.equal(s.avg_precision_at_5_beir, 0.4);
    assert.equal(s.routing_accuracy_technique_boundary, 1);
    assert.equal(s.routing_accuracy_adversarial, 1);
    assert.equal(s.avg_recall_at_3_technique_boundary, undefined, 'routing-only category has no ranking means');
  });

  it('labels each query with its failure bucket', () => {
    const s = doc.results.prompts[0]!.metrics.namedScores;
    assert.deepEqual(
      Object.fromEntries(Object.entries(s).filter(([k]) => k.startsWith('bucket_')).sort()),
      {
        bucket_first_stage_top10_miss: 1,
        bucket_candidate_generation_miss: 1,
        bucket_filtered_candidate_miss: 1,
        bucket_missing_expected_source: 1,
        bucket_rank1_hit: 2,
        bucket_topk_ordering_gap: 2,
      },
    );
    const row = doc.results.results.find((r) => r.testCase.metadata.id === 'fx-conceptual-001')!;
    assert.equal(row.namedScores.bucket_first_stage_top10_miss, 1);
    assert.match(row.gradingResult.componentResults[0]!.reason, /^first_stage_top10_miss: no relevant reference returned/);
  });

  it('records integrity issues of the top results (open code fence, mid-sentence cut)', () => {
    const row = doc.results.results.find((r) => r.testCase.metadata.id === 'fx-direct-001')!;
    assert.equal(row.namedScores.open_code_fence, 1);
    assert.equal(row.namedScores.cut_mid_sentence, 1);
    assert.ok(close(row.namedScores.integrity!, 1 / 3));
  });

  it('rankgate gate: DES-058 report JSON, exit 1 on the default floors, 0 on lenient floors', async () => {
    const report = join(dir, 'report.json');
    const md = join(dir, 'report.md');
    const r = await rankgate(['gate', out, '--report', report, '--markdown', md]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /overall recall_at_3 = 0\.5000 is below the floor 0\.8/);
    const rep = JSON.parse(readFileSync(report, 'utf8'));
    assert.equal(rep.total_queries, 10);
    assert.equal(rep.overall_recall_at_3, 0.5);
    assert.equal(rep.overall_mrr_at_10, 0.3542);
    assert.equal(rep.gate_passed, false);
    assert.equal(rep.judge, 'judge: off');
    // Every fixture entry carries its route (no origin: built in code), so routing accuracy shows for every category.
    assert.deepEqual(rep.categories.direct, { count: 2, recall_at_3: 1, mrr_at_10: 0.6667, ndcg_at_10: 0.8443, recall_at_10: 1, share_judged_at_10: 0.4167, share_judged_at_3: 0.5, routing_accuracy: 1 });
    assert.deepEqual(rep.categories.technique_boundary, { count: 1, routing_accuracy: 1 });
    assert.deepEqual(rep.categories.adversarial, { count: 1, routing_accuracy: 1 });
    assert.equal(rep.categories.dark_night.routing_accuracy, 1, 'safety-flag category reports routing accuracy too');
    assert.deepEqual(
      rep.failures.map((f: { id: string; bucket: string }) => [f.id, f.bucket]),
      [
        ['fx-conceptual-001', 'first_stage_top10_miss'],
        ['fx-conceptual-002', 'candidate_generation_miss'],
        ['fx-conceptual-003', 'missing_expected_source'],
        ['fx-emotional-001', 'filtered_candidate_miss'],
      ],
    );
    const f0 = rep.failures[0];
    assert.equal(f0.expected_passage, 'Fear of death fades');
    assert.equal(f0.best_match_rank, null);
    assert.equal(f0.top_3_results.length, 3);
    assert.match(f0.top_3_results[0], /^The lamp of calmness/);
    assert.deepEqual(rep.failure_buckets.rank1_hit, 2);
    assert.equal(rep.metrics.avg_rank_when_found, 1.75);
    assert.match(readFileSync(md, 'utf8'), /\| direct \| 2 \| 100\.0% \|/);

    const ok = await rankgate(['gate', out, '--floors', lenient]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /gate PASSED/);
  });

  it('rankgate gate --comment on a first run (no baseline): marker, headline, per-category table, says there is no baseline', async () => {
    const comment = join(dir, 'comment-first.md');
    const r = await rankgate(['gate', out, '--floors', lenient, '--comment', comment]);
    assert.equal(r.code, 0, r.stderr);
    const c = readFileSync(comment, 'utf8');
    const lines = c.split('\n');
    assert.equal(lines[0], '<!-- rankgate:search-eval -->', 'the marker the workflow finds its comment by');
    assert.match(c, /## Search quality gate: passed/);
    assert.match(c, /Overall \*\*Success@3 50\.0%\*\* \(DES-058 Recall@3\) · MRR@10 /);
    assert.match(c, /\| direct \| 2 \| 100\.0% \|/, 'per-category table row for direct (2 queries, both found in the top 3)');
    // these floors configure no regression check: said as such, not as "the first run"
    assert.match(c, /Nothing compared: no regression check against a baseline for this column/);
    // with a regression check and no baseline file yet: the check is off, and the comment says why
    const withReg = join(dir, 'floors-reg.yaml');
    writeFileSync(withReg, `overall:\n  recall_at_3: 0.5\nregression:\n  baseline: ${join(dir, 'no-such-baseline.json')}\n`);
    const first = await rankgate(['gate', out, '--floors', withReg, '--comment', comment]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(readFileSync(comment, 'utf8'), /Nothing compared: regression check off: no baseline at \S*no-such-baseline\.json/);
    assert.doesNotMatch(c, /regressed/, 'nothing to compare with, so no regressions are claimed');
    // Under a failing floor the same comment says FAILED and names the floor.
    const strict = join(dir, 'floors-strict.yaml');
    writeFileSync(strict, 'overall:\n  recall_at_3: 0.9\n');
    const f = await rankgate(['gate', out, '--floors', strict, '--comment', comment]);
    assert.equal(f.code, 1);
    const cf = readFileSync(comment, 'utf8');
    assert.match(cf, /## Search quality gate: FAILED/);
    assert.match(cf, /recall_at_3 0\.5000 \(floor 0\.9\)/);
  });

  it('rankgate gate: --update-baseline then the delta names regressed and improved queries', async () => {
    const base = join(dir, 'baseline.json');
    const w = await rankgate(['gate', out, '--floors', lenient, '--baseline', base, '--update-baseline']);
    assert.equal(w.code, 0, w.stderr);
    const b = JSON.parse(readFileSync(base, 'utf8'));
    assert.equal(b.rankgate_baseline, 1);
    assert.equal(b.config.label, 'fixture-hybrid');
    assert.equal(b.config.module, './fixture-service.ts');
    assert.equal(Object.keys(b.queries).length, 10);
    const same = await rankgate(['gate', out, '--floors', lenient, '--baseline', base]);
    assert.match(same.stdout, /0 regressed, 0 improved\*\*, 10 unchanged/);

    // Pretend the baseline was better on two queries and worse on one (its summary recomputed and its identity
    // re-sealed to match: the gate refuses a baseline whose per-query values disagree with its own summary or seal).
    b.queries['fx-direct-002'].mrr = 1;
    Object.assign(b.queries['fx-conceptual-001'], { recall_at_3: 1, mrr: 0.5 });
    b.queries['fx-direct-001'].mrr = 0.5;
    writeFileSync(base, JSON.stringify(sealBaseline(resummarise(b))));
    const comment = join(dir, 'comment.md');
    const d = await rankgate(['gate', out, '--floors', lenient, '--baseline', base, '--comment', comment]);
    assert.equal(d.code, 0);
    assert.match(d.stdout, /2 regressed, 1 improved\*\*, 7 unchanged/);
    assert.match(d.stdout, /`fx-conceptual-001` \(conceptual\): recall_at_3 1\.00 → 0\.00/);
    assert.match(d.stdout, /`fx-direct-002` \(direct\): mrr 1\.00 → 0\.33/);
    assert.match(d.stdout, /Improved:\n\n- `fx-direct-001` \(direct\): mrr 0\.50 → 1\.00/);
    const c = readFileSync(comment, 'utf8');
    assert.match(c, /^<!-- rankgate:search-eval -->/);
    assert.match(c, /Overall \*\*Success@3 50\.0%\*\*/);
  });

  it('rankgate gate: bad input exits 2 with a message naming the file and no stack trace', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"results": {}}');
    const r = await rankgate(['gate', bad]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /bad\.json: expected promptfoo output JSON with results\.prompts\[\] and results\.results\[\]/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    const badFloors = join(dir, 'floors-bad.yaml');
    writeFileSync(badFloors, 'overall:\n  recall_at_3: 1.5\n');
    const f = await rankgate(['gate', out, '--floors', badFloors]);
    assert.equal(f.code, 2);
    assert.match(f.stderr, /floors-bad\.yaml: overall\.recall_at_3: /);
    const missing = await rankgate(['gate', out, '--baseline', join(dir, 'nope.json')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope\.json: no such baseline/);
    assert.ok(!existsSync(join(dir, 'nope.json')));
  });
});
