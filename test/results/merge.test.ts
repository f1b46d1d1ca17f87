/**
 * src/results/merge.ts on small promptfoo-shaped results files built here: the arithmetic of the merge (sums from the
 * rows, counts added, derived metrics recomputed over the merged sums, stats added) and every refusal, each one line
 * through the real CLI (exit 2). The end-to-end equality with a single-process run of real shard processes is
 * test/github/shards.test.ts.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fsum, mergeResults, type ResultsDoc } from '../../src/results/merge.ts';

const ROOT = join(import.meta.dirname, '..', '..');
// The selection id is the identity of the six query ids (src/golden/testcases.ts); the ids are chosen so that the hash
// sharding of RANKGATE_SHARD (src/golden/promptfoo.ts shardOf) puts them in the shards used below (merge checks both).
const SEL = { id: 'f7f1d5de34a3a899', size: 6, files: ['datasets/golden/x.json'] };
// Six queries: recall_at_3 values chosen so float sums depend on their order (0.1 + 0.2 + ...).
const VALUES: Record<string, number> = { q11: 0.1, q3: 0.2, q16: 0.3, q5: 1 / 3, q9: 0.7, q2: 1 };

function golden(id: string) {
  return { id, query: `query ${id}`, language: 'en', category: 'direct', tags: [], slices: {}, expected: [{ doc_id: 'd1', grade: 1, relevant: true }], expected_routing: 'search' };
}

function doc(ids: string[], shard: { index: number; count: number } | null, o: { sel?: typeof SEL; rk?: number; version?: string; pf?: string; index?: Record<string, unknown>; params?: Record<string, unknown>; rerank?: boolean } = {}): ResultsDoc {
  const sel = { ...(o.sel ?? SEL), ...(shard ? { shard, shardSize: ids.length } : {}) };
  const rows = ids.map((id, testIdx) => ({
    id: `row-${id}`,
    promptIdx: 0,
    testIdx,
    score: VALUES[id]!,
    success: VALUES[id]! >= 0.5,
    latencyMs: 10 + testIdx,
    cost: 0,
    namedScores: { recall_at_3: o.rerank ? 1 : VALUES[id]!, n_ranked: 1 },
    gradingResult: { pass: true, score: 1, namedScoreWeights: { recall_at_3: 1, n_ranked: 1 } },
    testCase: { vars: { query: `query ${id}` }, metadata: { id, golden: golden(id), selection: sel } },
    response: {
      output: 'x',
      metadata: {
        rankgate: o.version ?? '0.1.0',
        ...(o.index ? { diagnostics: { index: o.index } } : {}),
        ...(o.params ? { service: 'rankgate', params: { ...o.params, language: 'en' } } : {}),
        // a reranked column: the ranking and the rerank stage's own time (ms = 100 x the query's value) and cost
        ...(o.rerank
          ? {
              harness: { ids: ['d1#c1'], hits: [{ rank: 1, chunkId: 'd1#c1', documentId: 'd1', score: 1, content: '' }], routing: null, practice_bridge: false, safety: false, latencyMs: 10 + testIdx },
              diagnostics: { variant: 'v', keywordCandidates: [], vectorCandidates: [], timings: {}, rerank: { budget: 2, firstStage: ['x'], ms: 100 * VALUES[id]!, costUsd: 0.5 } },
            }
          : {}),
      },
    },
    tokenUsage: { total: 0, numRequests: 1 },
  }));
  const sum = (k: 'recall_at_3' | 'n_ranked') => rows.reduce((a, r) => a + r.namedScores[k], 0);
  const pass = rows.filter((r) => r.success).length;
  return {
    evalId: `eval-${shard?.index ?? 0}`,
    results: {
      version: 3,
      timestamp: `2026-11-23T10:0${shard?.index ?? 0}:00.000Z`,
      prompts: [
        {
          raw: '{{query}}',
          label: '{{query}}',
          provider: 'col-a',
          metrics: {
            score: rows.reduce((a, r) => a + r.score, 0),
            testPassCount: pass,
            testFailCount: rows.length - pass,
            testErrorCount: 0,
            assertPassCount: rows.length,
            assertFailCount: 0,
            totalLatencyMs: rows.reduce((a, r) => a + r.latencyMs, 0),
            tokenUsage: { total: 0, numRequests: rows.length, completionDetails: { reasoning: 0 } },
            namedScores: {
              recall_at_3: sum('recall_at_3'),
              n_ranked: sum('n_ranked'),
              avg_recall_at_3: sum('recall_at_3') / sum('n_ranked'),
              share: sum('n_ranked') / rows.length,
              // what the gate hook writes for a reranked column (this shard's own rows only)
              ...(o.rerank ? { rerank_latency_p95_ms: -1, rerank_cost_per_query_usd: -1 } : {}),
            },
            namedScoresCount: { recall_at_3: rows.length, n_ranked: rows.length },
            namedScoreWeights: { recall_at_3: rows.length, n_ranked: rows.length },
            cost: 0,
          },
        },
      ],
      results: rows,
      stats: { successes: pass, failures: rows.length - pass, errors: 0, tokenUsage: { total: 0, numRequests: rows.length }, durationMs: 100 * rows.length },
    },
    config: {
      providers: [{ id: 'file://providers/search.ts', label: 'col-a', config: { rrfK: o.rk ?? 60 } }],
      prompts: ['{{query}}'],
      tests: 'file://datasets/tests.ts',
      derivedMetrics: [
        { name: 'avg_recall_at_3', value: 'recall_at_3 / n_ranked' },
        { name: 'share', value: 'n_ranked / __count' },
        // not one of rankgate's own forms: merge compiles it with mathjs
        { name: 'pct_recall', value: '100 * recall_at_3 / max(n_ranked, 1)' },
      ],
    },
    metadata: { promptfooVersion: o.pf ?? '0.121.20' },
  } as unknown as ResultsDoc;
}

const IX = { engine: 'pglite', variant: 'c300/use-lite', corpusId: 'sha256:' + 'a'.repeat(64), corpus: 'datasets/corpus' };
const S1 = ['q11', 'q16', 'q9'];
const S2 = ['q3', 'q5', 'q2'];

describe('rankgate merge (src/results/merge.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-merge-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('fsum is exactly rounded and independent of order', () => {
    assert.equal(fsum([0.1, 0.2, 0.3]), 0.6);
    assert.notEqual(0.1 + 0.2 + 0.3, 0.6, 'plain addition is not');
    assert.equal(fsum([1e100, 1, -1e100]), 1);
    const xs = Object.values(VALUES);
    assert.equal(fsum(xs), fsum([...xs].reverse()));
    assert.equal(fsum([]), 0);
  });

  it('sums from the rows, adds counts and stats, recomputes derived metrics over the merged sums', () => {
    const { doc: m, summary } = mergeResults([
      { file: 's2.json', doc: doc(S2, { index: 2, count: 2 }) },
      { file: 's1.json', doc: doc(S1, { index: 1, count: 2 }) },
    ]);
    const met = m.results.prompts[0]!.metrics!;
    const exact = fsum(Object.values(VALUES));
    assert.equal(met.namedScores.recall_at_3, exact);
    assert.equal(met.namedScores.n_ranked, 6);
    assert.equal(met.namedScores.avg_recall_at_3, exact / 6);
    assert.equal(met.namedScores.share, 1, 'derived metric over __count = all rows of the column');
    assert.equal(met.namedScores.pct_recall, (100 * exact) / 6, 'an expression outside rankgate\'s forms, through mathjs');
    assert.equal(met.namedScoresCount.recall_at_3, 6);
    assert.equal(met.namedScoreWeights!.n_ranked, 6);
    assert.equal(met.testPassCount, 2);
    assert.equal(met.testFailCount, 4);
    assert.equal(met.totalLatencyMs, 2 * (10 + 11 + 12));
    assert.deepEqual(met.tokenUsage, { total: 0, numRequests: 6, completionDetails: { reasoning: 0 } });
    assert.equal(m.results.stats!.successes, 2);
    assert.equal(m.results.stats!.durationMs, 300, 'the longest shard: they ran in parallel');
    // Rows in shard order, one matrix row (testIdx) per query.
    assert.deepEqual(m.results.results.map((r) => (r.testCase!.metadata as { id: string }).id), [...S1, ...S2]);
    assert.deepEqual(m.results.results.map((r) => r.testIdx), [0, 1, 2, 3, 4, 5]);
    assert.equal(summary.selection.id, SEL.id);
    // The merged rows belong to the full selection (the gate checks completeness against it).
    for (const r of m.results.results) assert.deepEqual((r.testCase!.metadata as { selection: unknown }).selection, SEL);
    assert.notEqual(m.evalId, 'eval-1');
    assert.equal(m.results.timestamp, '2026-11-23T10:01:00.000Z');
    // One shard's verdict (the gate hook's tag in front of the description) is not the merged run's.
    const tagged = (d: ResultsDoc, tag: string) => ({ ...d, config: { ...d.config, description: `[${tag}] demo eval` } }) as ResultsDoc;
    const described = mergeResults([
      { file: 's1.json', doc: tagged(doc(S1, { index: 1, count: 2 }), 'gate FAIL (exit 1): Recall@3 0.5000 < 0.8') },
      { file: 's2.json', doc: tagged(doc(S2, { index: 2, count: 2 }), 'gate PASS (exit 0): every floor met') },
    ]).doc;
    assert.equal(described.config!.description, 'demo eval');
    const labelled = mergeResults([
      { file: 's1.json', doc: { ...doc(S1, { index: 1, count: 2 }), results: { ...doc(S1, { index: 1, count: 2 }).results, prompts: doc(S1, { index: 1, count: 2 }).results.prompts.map((p) => ({ ...p, label: '[gate FAIL (exit 1): Recall@3 0.5000 < 0.8] {{query}}' })) } } as ResultsDoc },
      { file: 's2.json', doc: doc(S2, { index: 2, count: 2 }) },
    ]).doc;
    assert.equal(labelled.results.prompts[0]!.label, '{{query}}', "and a shard's verdict in a column's prompt label");
  });

  it("a reranked column's rerank latency percentiles and cost per query are recomputed over every merged row", () => {
    const { doc: m } = mergeResults([
      { file: 's1.json', doc: doc(S1, { index: 1, count: 2 }, { rerank: true }) },
      { file: 's2.json', doc: doc(S2, { index: 2, count: 2 }, { rerank: true }) },
    ]);
    const ns = m.results.prompts[0]!.metrics!.namedScores;
    // ms = 100 x value: 10, 20, 30, 33.3, 70, 100 -> nearest-rank p95 of six = the largest
    assert.equal(ns.rerank_latency_p95_ms, 100);
    assert.equal(ns.rerank_latency_p50_ms, 30);
    assert.equal(ns.rerank_cost_per_query_usd, 0.5);
  });

  it('three shards merge to the same sums and means as two', () => {
    const three = mergeResults([
      { file: 's3.json', doc: doc(['q16', 'q2'], { index: 3, count: 3 }) },
      { file: 's1.json', doc: doc(['q11', 'q5'], { index: 1, count: 3 }) },
      { file: 's2.json', doc: doc(['q3', 'q9'], { index: 2, count: 3 }) },
    ]).doc.results.prompts[0]!.metrics!;
    const two = mergeResults([
      { file: 's1.json', doc: doc(S1, { index: 1, count: 2 }) },
      { file: 's2.json', doc: doc(S2, { index: 2, count: 2 }) },
    ]).doc.results.prompts[0]!.metrics!;
    assert.deepEqual(three.namedScores, two.namedScores);
    assert.deepEqual(three.namedScoresCount, two.namedScoresCount);
    assert.equal(three.testPassCount, two.testPassCount);
  });

  it('a full run merged alone is the canonical form of the same numbers, equal to the merged shards', () => {
    const full = mergeResults([{ file: 'full.json', doc: doc(['q11', 'q3', 'q16', 'q5', 'q9', 'q2'], null) }]).doc;
    const sharded = mergeResults([
      { file: 's1.json', doc: doc(S1, { index: 1, count: 2 }) },
      { file: 's2.json', doc: doc(S2, { index: 2, count: 2 }) },
    ]).doc;
    assert.deepEqual(sharded.results.prompts[0]!.metrics!.namedScores, full.results.prompts[0]!.metrics!.namedScores);
  });

  const write = (name: string, d: unknown) => {
    const p = join(dir, name);
    writeFileSync(p, typeof d === 'string' ? d : JSON.stringify(d));
    return p;
  };
  const cli = (args: string[]) => spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'merge', ...args], { encoding: 'utf8', cwd: ROOT });

  it('the CLI writes the merged file (exit 0) and refuses, in one line with exit 2, what cannot be merged exactly', () => {
    const s1 = write('s1.json', doc(S1, { index: 1, count: 2 }));
    const s2 = write('s2.json', doc(S2, { index: 2, count: 2 }));
    const out = join(dir, 'merged.json');
    const ok = cli([out, s1, s2]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /6 queries x 1 column \(6 rows\) of selection f7f1d5de34a3a899 merged from 2 files \(1\/2 3 queries, 2\/2 3 queries\)/);
    assert.equal(JSON.parse(readFileSync(out, 'utf8')).results.results.length, 6);

    const cases: [string, string[], RegExp][] = [
      ['missing shard', [s1], /missing shard 2\/2 \(1 of 2 shard results files given\)/],
      ['overlap', [s1, write('o.json', doc(['q11', 'q3', 'q5', 'q2'], { index: 2, count: 2 }))], /o\.json: query q11 is also in .*s1\.json: the shards overlap/],
      ['same shard twice', [s1, write('dup.json', doc(S2, { index: 1, count: 2 }))], /dup\.json: shard 1\/2 is also .*s1\.json/],
      ['other golden set', [s1, write('g.json', doc(S2, { index: 2, count: 2 }, { sel: { ...SEL, id: 'ffffffffffffffff' } }))], /g\.json: golden selection ffffffffffffffff .* differs from .*s1\.json's f7f1d5de34a3a899 .*different golden sets/],
      ['other config', [s1, write('c.json', doc(S2, { index: 2, count: 2 }, { rk: 40 }))], /c\.json: config\.providers\[0\]\.config\.rrfK is 40 here but 60 in .*s1\.json: shards must run the same configuration/],
      ['other rankgate', [s1, write('v.json', doc(S2, { index: 2, count: 2 }, { version: '0.2.0' }))], /v\.json: rankgate 0\.2\.0 here but 0\.1\.0 in .*: shards must run the same rankgate version/],
      ['other promptfoo', [s1, write('p.json', doc(S2, { index: 2, count: 2 }, { pf: '0.121.19' }))], /p\.json: promptfoo 0\.121\.19 here but 0\.121\.20/],
      ['split differently', [s1, write('n.json', doc(S2, { index: 2, count: 3 }))], /n\.json: is shard 2\/3 but .* is shard 1\/2: every shard must split the same way/],
      ['incomplete', [write('i1.json', doc(['q11', 'q16'], { index: 1, count: 2 })), s2], /has rows for 5 of the selection's 6 queries/],
      ['not JSON', [write('bad.json', '{oops')], /bad\.json: not JSON/],
      ['not promptfoo', [write('np.json', { hello: 1 })], /np\.json: expected promptfoo output JSON/],
      ['no selection', [write('ns.json', (() => { const d = doc(S1, null); delete (d.results.results[1]!.testCase!.metadata as Record<string, unknown>).selection; return d; })())], /ns\.json: results\[1\]\.testCase\.metadata\.selection is missing/],
      ['edited', [write('e.json', (() => { const d = doc(S1, { index: 1, count: 2 }); d.results.prompts[0]!.metrics!.namedScores.recall_at_3 = 9; return d; })()), s2], /e\.json: results\.prompts\[0\]\.metrics\.namedScores\.recall_at_3 is 9 but its rows sum to/],
      ['unsharded with shards', [write('full.json', doc(S1, null)), s2], /full\.json: is a full \(unsharded\) run/],
      // rows checked against the merged selection: its corpus, its service settings, its query ids and its shards
      ['shards of another corpus', [write('k1.json', doc(S1, { index: 1, count: 2 }, { index: IX })), write('k2.json', doc(S2, { index: 2, count: 2 }, { index: { ...IX, corpusId: 'sha256:' + 'b'.repeat(64), corpus: 'other-docs/' } }))],
        /k2\.json: results\[0\] was searched in pglite c300\/use-lite, corpus other-docs\/ \(sha256:bbbbbbbbbbbb\) but .*k1\.json results\[0\] in pglite c300\/use-lite, corpus datasets\/corpus \(sha256:aaaaaaaaaaaa\): shards of another corpus or index cannot be merged/],
      ['one row of another corpus in a shard', [write('k3.json', (() => { const d = doc(S1, { index: 1, count: 2 }, { index: IX }); (d.results.results[2]!.response!.metadata as { diagnostics: { index: Record<string, unknown> } }).diagnostics.index = { ...IX, corpusId: 'sha256:' + 'c'.repeat(64) }; return d; })()), write('k4.json', doc(S2, { index: 2, count: 2 }, { index: IX }))],
        /k3\.json: results\[2\] was searched in .*sha256:cccccccccccc.* but .*k3\.json results\[0\] in .*: shards of another corpus/],
      ['shards of an index vs none (url:)', [write('k5.json', doc(S1, { index: 1, count: 2 }, { index: IX })), s2], /s2\.json: results\[0\] was searched in no index \(a url:\/module: service\) but/],
      ['other service settings in the rows', [write('t1.json', doc(S1, { index: 1, count: 2 }, { params: { topK: 10 } })), write('t2.json', doc(S2, { index: 2, count: 2 }, { params: { topK: 5 } }))], /t2\.json: results\[0\] reports service settings .*topK.*5.* but .*t1\.json results\[0\] .*10.*: shards must run the same configuration/],
      ['rows relabelled from another golden set', [s1, write('r.json', doc(['q3', 'q5', 'q7'], { index: 2, count: 2 }))], /column 'col-a': the 6 merged query ids make golden selection [0-9a-f]{16}, not the f7f1d5de34a3a899 every row claims/],
      ['a row outside its shard', [write('w1.json', doc([...S1, 'q3'], { index: 1, count: 2 })), write('w2.json', doc(['q5', 'q2'], { index: 2, count: 2 }))], /w1\.json: results\[3\] query q3 belongs to shard 2\/2, not to this file's shard 1\/2/],
    ];
    for (const [what, files, re] of cases) {
      const before = existsSync(join(dir, 'never.json'));
      const r = cli([join(dir, 'never.json'), ...files]);
      assert.equal(r.status, 2, `${what}: ${r.stderr}`);
      assert.match(r.stderr, re, what);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
      assert.equal(existsSync(join(dir, 'never.json')), before, `${what}: nothing written`);
    }
  });
});
