/**
 * Sweeps: the grid of promptfooconfig.sweep.ts (pure), and a real promptfoo sweep over the fixture service
 * (three labelled columns) feeding `rankgate compare --results` and the blind-test shipping criteria.
 *
 * Hand-computed from rankings.json (keyword / semantic columns rank the channel candidate lists):
 *   keyword-only:  Recall@3 5/8, MRR@10 (1+1+1/2+1+1)/8 = 0.5625, trec Recall@10 (1+1+1+1+1/2)/8 = 0.5625
 *   semantic-only: Recall@3 3/8, MRR@10 3/8, trec Recall@10 (1+1+1/2)/8 = 0.3125
 *   per query vs hybrid on Recall@10: keyword wins fx-conceptual-001, loses fx-beir-001 (1 -> 1/2);
 *   semantic loses fx-direct-002 and fx-beir-001.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { sweepColumns, embeddersFor, skippedEmbeddersLine } from '../../promptfooconfig.sweep.ts';
import { readResultsFile } from '../../src/results/stream.ts';
import { shippingCriteria } from '../../src/gate/shipping.ts';
import { compareResultColumns } from '../../src/gate/compare.ts';
import { FIXTURE, PROMPTFOO_BIN, close, demoIndexInto, promptfooEval, rankgate, runNode, tempDir } from './helpers.ts';
import { startFakeLlm } from '../helpers/fake-llm.ts';

describe('promptfooconfig.sweep.ts grid', () => {
  it('quick: at least 6 columns on one index variant, each labelled with its parameters', () => {
    const cols = sweepColumns({ RANKGATE_SWEEP: 'quick' });
    assert.ok(cols.length >= 6);
    assert.equal(new Set(cols.map((c) => c.label)).size, cols.length, 'labels are unique');
    assert.deepEqual(new Set(cols.map((c) => c.config.chunkSize)), new Set([300]));
    assert.deepEqual(new Set(cols.map((c) => c.config.mode)), new Set(['hybrid', 'keyword', 'semantic']));
    const h40 = cols.find((c) => c.label === 'hybrid rrf40 w1:1 c300 use-lite')!;
    assert.equal(h40.config.rrfK, 40);
    const v60 = cols.find((c) => c.label.includes('vec60/bm25-40'))!;
    assert.deepEqual(v60.config.weights, { keyword: 0.4, vector: 0.6 });
    assert.equal(sweepColumns({}).length, cols.length, 'quick is the default');
  });

  it('full: RRF k x weights x chunk size x embedder plus keyword/semantic columns; Bedrock embedders only when configured', () => {
    const local = sweepColumns({ RANKGATE_SWEEP: 'full' });
    // 3 chunk sizes x (9 hybrid + keyword + semantic) for use-lite; the default column duplicates one hybrid.
    assert.equal(local.length, 33);
    assert.deepEqual(new Set(local.map((c) => c.config.chunkSize)), new Set([200, 300, 500]));
    assert.deepEqual(new Set(local.map((c) => c.config.rrfK).filter(Boolean)), new Set([40, 60, 80]));
    assert.deepEqual(embeddersFor({}), ['use-lite']);
    const env = { RANKGATE_SWEEP: 'full', AWS_REGION: 'us-east-1', AWS_PROFILE: 'x' };
    assert.deepEqual(embeddersFor(env), ['use-lite', 'bedrock:embeddings:cohere.embed-english-v3', 'bedrock:embeddings:amazon.titan-embed-text-v2:0@512']);
    const withBedrock = sweepColumns(env);
    assert.equal(withBedrock.length, 33 + 2 * 3 * 10);
    assert.ok(withBedrock.some((c) => c.label === 'hybrid rrf80 bm25-60/vec40 c500 cohere.embed-english-v3 1024-d'));
    assert.ok(withBedrock.some((c) => c.label === 'semantic-only c200 amazon.titan-embed-text-v2:0 512-d'));
    assert.throws(() => sweepColumns({ RANKGATE_SWEEP: 'huge' }), /RANKGATE_SWEEP: unknown sweep 'huge'; the sweeps are quick, embedders, rrf, chunk, modes, rerank, full, expansion$/);
  });

  it('embedders (DES-058): use-lite plus every embedder whose credentials are present, the others named in one line; labels carry model and dimension', () => {
    assert.deepEqual(sweepColumns({ RANKGATE_SWEEP: 'embedders' }).map((c) => c.label), [
      'hybrid rrf60 w1:1 c300 use-lite 512-d',
      'keyword-only bm25 c300',
      'semantic-only c300 use-lite 512-d',
    ]);
    const env = { RANKGATE_SWEEP: 'embedders', VOYAGE_API_KEY: 'k', COHERE_API_KEY: 'k', OPENAI_BASE_URL: 'http://tei/v1', OLLAMA_BASE_URL: 'http://o' };
    const cols = sweepColumns(env);
    assert.deepEqual(embeddersFor(env), ['use-lite', 'voyage:voyage-3-large', 'cohere:embedding:embed-english-v3.0', 'openai:embedding:BAAI/bge-m3', 'ollama:embeddings:bge-m3']);
    assert.equal(cols.length, 1 + 2 * 5);
    assert.equal(new Set(cols.map((c) => c.label)).size, cols.length, 'labels are unique');
    for (const l of ['semantic-only c300 voyage-3-large 1024-d', 'hybrid rrf60 w1:1 c300 embed-english-v3.0 1024-d', 'semantic-only c300 BAAI/bge-m3 1024-d', 'semantic-only c300 bge-m3 1024-d ollama']) {
      assert.ok(cols.some((c) => c.label === l), l);
    }
    assert.equal(cols.find((c) => c.label === 'semantic-only c300 voyage-3-large 1024-d')!.config.embedder, 'voyage:voyage-3-large');
    assert.equal(
      skippedEmbeddersLine(env),
      'rankgate sweep: embedders skipped: openai:embedding:text-embedding-3-large (OPENAI_BASE_URL points at another server); ' +
        'bedrock:embeddings:cohere.embed-english-v3 (no AWS region and credentials); bedrock:embeddings:amazon.titan-embed-text-v2:0@512 (no AWS region and credentials)',
    );
    assert.match(skippedEmbeddersLine({})!, /voyage:voyage-3-large \(VOYAGE_API_KEY not set\); cohere:embedding:embed-english-v3\.0 \(COHERE_API_KEY not set\)/);
    assert.equal(skippedEmbeddersLine({ RANKGATE_SWEEP_EMBEDDERS: 'use-lite,voyage:voyage-3.5' }), undefined);
  });
});

it("the demo's promptfooconfig.sweep.ts with an unknown RANKGATE_SWEEP: one line naming the sweeps, exit 2, no stack trace", async () => {
  const dir = tempDir('sweep-unknown');
  try {
    const r = await runNode([PROMPTFOO_BIN, 'eval', '-c', 'promptfooconfig.sweep.ts', '--no-cache', '--no-table', '--no-progress-bar'], {
      env: { RANKGATE_SWEEP: 'bogus', PROMPTFOO_CONFIG_DIR: join(dir, 'pf'), PROMPTFOO_DISABLE_TELEMETRY: '1', PROMPTFOO_DISABLE_UPDATE: '1' },
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^rankgate sweep: RANKGATE_SWEEP: unknown sweep 'bogus'; the sweeps are quick, embedders, rrf, chunk, modes, rerank, full, expansion$/m);
    assert.doesNotMatch(r.stderr, /triggerUncaughtException|\n\s+at /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('rrf, chunk and modes vary one parameter around the base config (a team\'s corpus and embedder kept)', async () => {
  const { sweepGrid } = await import('../../src/search/sweep.ts');
  const team = { corpus: 'help', embedder: 'use-lite', chunkSize: 400, rrfK: 60, routing: false };
  const rrf = sweepGrid('rrf', team, {});
  assert.equal(rrf.length, 9, 'the base (rrf60 w1:1) is one of the 9 cells');
  assert.ok(rrf.every((c) => c.config.corpus === 'help' && c.config.chunkSize === 400 && c.config.routing === false));
  assert.deepEqual(sweepGrid('chunk', team, {}).map((c) => c.config.chunkSize), [400, 200, 300, 500]);
  assert.deepEqual(sweepGrid('modes', team, {}).map((c) => c.config.mode), ['hybrid', 'keyword', 'semantic']);
  assert.throws(() => sweepGrid('reranker', team, {}, '--sweep'), /^UserError: --sweep: unknown sweep 'reranker'; the sweeps are /);
  assert.throws(() => sweepGrid('rerank', team, {}, '--sweep'), /the rerank sweep compares no reranker with each configured reranker/, 'the rerank sweep needs a reranker');
});

describe('fixture sweep through promptfoo, compare --results and shipping criteria', () => {
  const dir = tempDir('harness-sweep');
  const out = join(dir, 'sweep.json');
  before(async () => {
    const r = await promptfooEval(join(FIXTURE, 'promptfooconfig.sweep.yaml'), out);
    assert.equal(r.code, 0, 'RANKGATE_GATE=off in the config env: report only\n' + r.stderr.slice(-1500));
    assert.match(r.stderr, /report only \(RANKGATE_GATE=off\)/);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('one labelled column per provider entry with hand-computed means', () => {
    const d = JSON.parse(readFileSync(out, 'utf8'));
    const by = Object.fromEntries(d.results.prompts.map((p: { provider: string; metrics: { namedScores: Record<string, number> } }) => [p.provider, p.metrics.namedScores]));
    assert.deepEqual(Object.keys(by), ['fixture hybrid rrf60', 'fixture keyword-only', 'fixture semantic-only']);
    assert.ok(close(by['fixture keyword-only'].avg_recall_at_3, 0.625));
    assert.ok(close(by['fixture keyword-only'].avg_mrr, 0.5625));
    assert.ok(close(by['fixture keyword-only'].avg_trec_recall_at_10, 0.5625));
    assert.ok(close(by['fixture semantic-only'].avg_recall_at_3, 0.375));
    assert.ok(close(by['fixture semantic-only'].avg_trec_recall_at_10, 0.3125));
  });

  it('the blind-test shipping criteria for each candidate against the first column', () => {
    const parsed = readResultsFile(out);
    const [base, kw, sem] = parsed.columns;
    const k = shippingCriteria(base!, kw!);
    assert.equal(k.queries, 8);
    // (criterion 5, latency, depends on timing here; it is checked on fixed latencies in report.test.ts)
    assert.deepEqual(k.criteria.slice(0, 4).map((c) => c.passed), [false, true, false, null]);
    assert.match(k.criteria[0]!.detail, /0\.5000 -> 0\.5625 \(\+6\.3 pts\)/);
    assert.match(k.criteria[2]!.detail, /category:beir -50\.0 pts/);
    const s = shippingCriteria(base!, sem!);
    assert.deepEqual(s.criteria.slice(0, 3).map((c) => c.passed), [false, false, false]);
    assert.match(s.criteria[1]!.detail, /2 of 8 queries regress/);
    assert.equal(k.ship, false);
    // A candidate identical to the baseline gains nothing: criterion 1 fails, 2 and 3 pass; same latencies: p95 within
    // budget; no errored queries (criterion 6).
    const same = shippingCriteria(base!, base!);
    assert.deepEqual(same.criteria.map((c) => c.passed), [false, true, true, null, true, true], 'same latencies: p95 within budget; no errors');
    assert.equal(same.criteria.length, 6);
  });

  it('significance per column from src/metrics (paired by golden id)', () => {
    const r = compareResultColumns(readResultsFile(out), 'trec_recall_at_10');
    assert.equal(r.significance.baseline, 'fixture hybrid rrf60');
    assert.equal(r.significance.queries.length, 8);
    const [kw, sem] = r.significance.comparisons;
    assert.equal(kw!.run, 'fixture keyword-only');
    assert.deepEqual([kw!.wins, kw!.ties, kw!.losses], [1, 6, 1]);
    assert.ok(close(kw!.diff, 0.0625));
    assert.deepEqual([sem!.wins, sem!.ties, sem!.losses], [0, 6, 2]);
    assert.ok(close(sem!.diff, -0.1875));
  });

  it('rankgate compare --results prints the table and the shipping verdicts; bad metric exits 2', async () => {
    const r = await rankgate(['compare', '--results', out, '-m', 'recall_at_3']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /recall_at_3 over 8 queries/);
    assert.match(r.stdout, /fixture keyword-only\s+0\.6250\s+\+0\.1250/);
    assert.match(r.stdout, /blind-test shipping criteria: fixture semantic-only vs fixture hybrid rrf60: ship no/);
    // The honest estimate of picking the best of the three columns (seeded, so the figures are stable).
    assert.match(r.stdout, /Pick-the-best, cross-validated \(5-fold x 20 seeded repeats, seed 42, 8 queries, 3 columns\), recall_at_3:/);
    assert.match(r.stdout, /in-sample best: fixture keyword-only 0\.6250 -> optimism/);
    const j = JSON.parse((await rankgate(['compare', '--results', out, '-m', 'recall_at_3', '--json', '--folds', '4', '--repeats', '3'])).stdout);
    assert.deepEqual([j.selection.folds, j.selection.repeats, j.selection.queries, j.selection.inSampleBest], [4, 3, 8, 'fixture keyword-only']);
    assert.ok(j.selection.heldOutMean <= j.selection.inSampleMean + 1e-12);
    const badFolds = await rankgate(['compare', '--results', out, '--folds', '1']);
    assert.equal(badFolds.code, 2);
    assert.match(badFolds.stderr, /--folds must be an integer >= 2, got '1'/);
    const md = await rankgate(['compare', '--results', out, '--markdown']);
    assert.match(md.stdout, /^## ndcg_at_10: each column against `fixture hybrid rrf60` \(8 queries\)/);
    const bad = await rankgate(['compare', '--results', out, '-m', 'recall@3']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown results metric 'recall@3'/);
  });
});

describe("the demo's RANKGATE_SWEEP=expansion through promptfoo: A, B (RM3, and a model's rewrites and HyDE on the fake chat API), C", () => {
  const dir = tempDir('harness-expansion-sweep');
  const out = join(dir, 'sweep.json');
  let fake: Awaited<ReturnType<typeof startFakeLlm>>;
  let env: Record<string, string | undefined>;
  let first: Awaited<ReturnType<typeof promptfooEval>>;
  before(async () => {
    await demoIndexInto(join(dir, 'db'));
    fake = await startFakeLlm((req) => (/HyDE/.test(req.text) ? 'Calmness is a flame that does not tremble in a windless place; grief keeps its own calendar.' : 'calm steady mind\n2. grief and mourning\n- quiet flame meditation'));
    env = {
      RANKGATE_SWEEP: 'expansion',
      RANKGATE_DATA_DIR: join(dir, 'db'),
      DATABASE_URL: undefined,
      RANKGATE_GOLDEN: undefined,
      RANKGATE_LANG: undefined,
      RANKGATE_EXPANSION: undefined,
      RANKGATE_JUDGE: 'off',
      RANKGATE_EXPANSION_PROVIDER: 'openai:chat:gpt-fake',
      RANKGATE_EXPANSION_CACHE_DIR: join(dir, 'cache'),
      OPENAI_API_KEY: 'sk-fake',
      OPENAI_BASE_URL: `${fake.url}/v1`,
    };
    first = await promptfooEval('promptfooconfig.sweep.ts', out, env);
  });
  after(async () => {
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('five labelled columns on the blind-test queries; every C query expanded from its golden expansion:', () => {
    assert.equal(first.code, 0, first.stderr.slice(-2000));
    const parsed = readResultsFile(out);
    const base = 'hybrid rrf60 w1:1 c300 use-lite 512-d';
    assert.deepEqual(parsed.columns.map((c) => c.label), [
      `A: ${base}`,
      `B: rm3 10/10/0.5 · ${base}`,
      `B: rewrites x3 openai:chat:gpt-fake · ${base}`,
      `B: hyde openai:chat:gpt-fake · ${base}`,
      `C: golden expansion rrf · ${base}`,
    ]);
    const [a, rm3, rw, hyde, c] = parsed.columns;
    const n = a!.queries.length;
    assert.equal(n, 16, 'datasets/golden/queries.yaml');
    for (const col of parsed.columns) assert.ok(col.queries.every((q) => q.error === null), `${col.label}: ${col.queries.find((q) => q.error)?.error}`);
    assert.ok(a!.queries.every((q) => !q.expansion));
    assert.ok(c!.queries.every((q) => q.expansion?.source === 'golden' && q.expansion.expanded && q.expansion.queries!.length === q.golden.expansion!.length));
    assert.ok(rm3!.queries.every((q) => q.expansion?.source === 'rm3' && q.expansion.feedbackDocs! > 0));
    assert.ok(rw!.queries.every((q) => q.expansion?.queries?.join('|') === 'calm steady mind|grief and mourning|quiet flame meditation'));
    assert.ok(hyde!.queries.every((q) => q.expansion?.kind === 'hyde' && q.expansion.requests === 1));
    // one call per query for the rewrites and one for HyDE, and each model column's warm-up (its provider loaded and
    // called once before the first row, so no query pays the load: providers/search.ts warmupParams)
    assert.equal(fake.requests.length, 2 * n + 2, 'one call per query for the rewrites and one for HyDE, plus one warm-up each');
    assert.equal(fake.requests.filter((r) => /warm up/.test(r.text)).length, 2, 'the warm-up query went through each model column');
    // the column says it: the gate hook's column line, the verdict note
    assert.match(first.stderr, /\[C: golden expansion rrf · [^\]]+\] 16 queries .* · expansion golden rrf: 16 of 16 queries expanded/);
    assert.match(first.stderr, /expansion llm rewrites openai:chat:gpt-fake: 16 of 16 queries expanded · model calls 16, ~\$\d+\.\d{4}(?! · cache)/);
    // the matrix cell
    const d = JSON.parse(readFileSync(out, 'utf8'));
    const cell = d.results.results.find((r: { provider: { label: string } }) => r.provider.label.startsWith('B: rewrites')).response.output as string;
    assert.match(cell.split('\n')[1]!, /^expanded: 3 rewrites by openai:chat:gpt-fake \+ "calm steady mind", "grief and mourning", "quiet flame meditation"$/);
    const cCell = d.results.results.find((r: { provider: { label: string } }) => r.provider.label.startsWith('C: ')).response.output as string;
    assert.match(cCell.split('\n')[1]!, /^expanded: golden rrf \+ "/);
  });

  it('the shipping criteria of every B and C against A print all five points, criterion 4 not evaluated', () => {
    for (const label of ['B: rm3', 'B: rewrites', 'B: hyde', 'C: golden']) {
      const at = first.stderr.indexOf(`  [${label}`, first.stderr.indexOf('shipping criteria'));
      assert.ok(at > 0, label);
      const block = first.stderr.slice(at).split('\n').slice(1, 7).join('\n');
      for (const re of [/1\. Recall@10 \+10 points: mean Recall@10 /, /2\. fewer than 20% of queries regress: /, /3\. no slice down more than 5 points: /, /– 4\. .*not evaluated/, /5\. p95 latency <= min\(3x baseline, 2500 ms\): /]) {
        assert.match(block, re, `${label}\n${block}`);
      }
    }
  });

  it('a re-run sends the model nothing: rewrites and passages from the cache', async () => {
    const before = fake.requests.length;
    const again = await promptfooEval('promptfooconfig.sweep.ts', join(dir, 'again.json'), env);
    assert.equal(again.code, 0, again.stderr.slice(-2000));
    assert.equal(fake.requests.length, before);
    const rw = readResultsFile(join(dir, 'again.json')).columns[2]!;
    assert.ok(rw.queries.every((q) => q.expansion?.cached === true && q.expansion.requests === 0));
    assert.match(again.stderr, /expansion llm rewrites openai:chat:gpt-fake: 16 of 16 queries expanded · model calls 0, ~\$0\.0000 · cache: 16 of 16 \(uncached /);
  });
});
