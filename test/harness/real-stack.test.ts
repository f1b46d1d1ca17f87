/**
 * The real stack through promptfoo: rankgate's own SearchService on a fresh PGlite database, the two-document
 * fixture corpus ingested on first use (progress on stderr), USE-lite embeddings, keyword-only and hybrid
 * columns. Distinctive words make the expected ranks certain: "zephyrine" and "quillwort" occur in one chunk
 * each, so both are rank 1; real-003's passage is in no document (missing_expected_source). A third column reranks the
 * hybrid one with `rerank: {provider: 'tei:rerank', k: 3}` against the fake TEI API (TEI_BASE_URL): the rows keep
 * diagnostics.rerank through the worker thread and the row compaction, and get per-stage scores and rerank latency.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE, close, promptfooEval, tempDir, type RunResult } from './helpers.ts';
import { startFakeRerankApi, type FakeRerankApi } from '../helpers/fake-rerank-apis.ts';

interface Row {
  provider: { label: string };
  testCase: { metadata: { id: string } };
  namedScores: Record<string, number>;
  response: {
    output: string;
    metadata: {
      harness: { ids: string[]; latencyMs: number };
      resolution?: Record<string, string[]>;
      diagnostics: { keywordCandidates: string[]; rerank?: { reranker: string; budget: number; firstStage: string[]; reranked: string[]; ms: number; requests: number } };
    };
  };
}

describe('real SearchService (PGlite, autoIngest) through promptfoo', () => {
  const dir = tempDir('harness-real');
  const out = join(dir, 'real.json');
  let run: RunResult;
  let rows: Row[];
  let cols: Record<string, Record<string, number>>;
  let tei: FakeRerankApi;
  before(async () => {
    tei = await startFakeRerankApi();
    run = await promptfooEval(join(FIXTURE, 'real', 'promptfooconfig.yaml'), out, {
      RANKGATE_DATA_DIR: join(dir, 'db'),
      DATABASE_URL: undefined,
      TEI_BASE_URL: tei.url,
      RANKGATE_RERANK_CACHE_DIR: join(dir, 'rerank-cache'),
      RANKGATE_RERANK: undefined,
      RANKGATE_RERANK_K: undefined,
    });
    const d = JSON.parse(readFileSync(out, 'utf8'));
    rows = d.results.results;
    cols = Object.fromEntries(d.results.prompts.map((p: { provider: string; metrics: { namedScores: Record<string, number> } }) => [p.provider, p.metrics.namedScores]));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await tei.close();
  });

  const row = (label: string, id: string) => rows.find((r) => r.provider.label === label && r.testCase.metadata.id === id)!;

  it('builds the index on first use with progress, then evaluates both columns without errors', () => {
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.match(run.stderr, /index variant c200:use-lite is missing .*; ingesting .*corpus/);
    assert.equal(rows.length, 9);
    assert.ok(rows.every((r) => r.response?.metadata?.harness?.ids.length > 0));
  });

  it('resolves expected passage substrings to chunk ids of the column index variant', () => {
    const r = row('real keyword-only c200', 'real-001');
    assert.deepEqual(r.response.metadata.resolution, { 'trimmed the zephyrine lanterns every evening': ['lantern-keepers#c200-0'] });
    assert.equal(r.response.metadata.harness.ids[0], 'lantern-keepers#c200-0');
    assert.match(r.response.output, /^#1 ✓ Lantern Keepers( · ch\. 1)? · expected, grade 3$/m, 'readable output: title and the expected mark');
    assert.equal(r.namedScores.bucket_rank1_hit, 1);
    assert.equal(r.namedScores.recall_at_1, 1);
  });

  it('scores document judgements on the collapsed ranking, and buckets an unresolvable passage', () => {
    for (const label of ['real keyword-only c200', 'real hybrid c200']) {
      assert.equal(row(label, 'real-002').namedScores.mrr, 1, `${label}: marsh-notes first`);
      const miss = row(label, 'real-003');
      assert.deepEqual(miss.response.metadata.resolution, { 'this sentence appears in no fixture document': [] });
      assert.equal(miss.namedScores.bucket_missing_expected_source, 1);
      assert.ok(close(cols[label]!.avg_recall_at_3!, 2 / 3));
    }
    // first-stage candidates stay on a row whose ranking returned nothing relevant (compact rows: src/results/compact.ts)
    const r1 = row('real hybrid c200', 'real-001');
    if (r1.namedScores.found === 0) assert.ok(r1.response.metadata.diagnostics.keywordCandidates.includes('lantern-keepers#c200-0'));
    else assert.deepEqual(r1.response.metadata.diagnostics.keywordCandidates, []);
    assert.ok(row('real hybrid c200', 'real-003').response.metadata.diagnostics.keywordCandidates.length > 0, 'kept on the row that found nothing');
  });

  it('a reranked column of rankgate\'s own service: diagnostics.rerank kept in every row, per-stage scores, latency inside the pipeline', () => {
    const label = 'real hybrid c200 reranked';
    const reranked = rows.filter((r) => r.provider.label === label);
    assert.equal(reranked.length, 3);
    for (const r of reranked) {
      const rr = r.response.metadata.diagnostics.rerank!;
      assert.equal(rr.reranker, 'tei:rerank');
      assert.equal(rr.budget, 3);
      assert.ok(rr.firstStage.length >= Math.min(3, r.response.metadata.harness.ids.length), 'the first stage at least the budget deep');
      assert.deepEqual([...rr.reranked].sort(), rr.firstStage.slice(0, 3).sort(), 'the reranker reordered the budget');
      assert.deepEqual(r.response.metadata.harness.ids.slice(0, rr.reranked.length), rr.reranked.slice(0, 5), 'the final order starts with the reranked budget');
      // the whole pipeline's latency (the worker's serviceMs) holds the rerank stage's time
      assert.ok(r.response.metadata.harness.latencyMs >= rr.ms, `latency ${r.response.metadata.harness.latencyMs} ms >= rerank ${rr.ms} ms`);
      assert.equal(r.namedScores.n_reranked, 1);
      assert.equal(r.namedScores.rerank_ms, rr.ms);
    }
    // the two ranked queries with an id-matchable first stage get per-stage scores (real-002: marsh-notes among the budget)
    assert.equal(row(label, 'real-002').namedScores.first_stage_recall_at_budget, 1);
    assert.equal(row(label, 'real-002').namedScores.bucket_rank1_hit, 1);
    assert.equal(row(label, 'real-003').namedScores.bucket_missing_expected_source, 1);
    assert.equal(cols[label]!.n_reranked, 3);
    assert.equal(typeof cols[label]!.rerank_latency_p95_ms, 'number');
    assert.equal(typeof cols[label]!.avg_first_stage_recall_at_budget, 'number');
    // the columns without a reranker: none of it
    for (const plain of ['real keyword-only c200', 'real hybrid c200']) {
      assert.deepEqual(Object.keys(cols[plain]!).filter((k) => /rerank|first_stage/.test(k)), [], plain);
      assert.equal(row(plain, 'real-001').response.metadata.diagnostics.rerank, undefined);
    }
    // one probe plus the queries' requests reached the fake, each a TEI /rerank request of at most the budget
    assert.ok(tei.requests.length >= 2);
    assert.ok(tei.requests.every((q) => q.path === '/rerank' && q.body.texts.length <= 3));
  });
});
