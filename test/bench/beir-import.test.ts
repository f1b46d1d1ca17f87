/**
 * The BEIR benchmark (bench/beir.ts): BEIR folder -> promptfoo test cases, the column grid, the
 * document-collapsed Recall@100, and one real end-to-end run (ingest into PGlite + the promptfoo CLI) on
 * test/fixtures/beir, whose keyword figures are worked by hand in test/fixtures/beir/README.md.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importBeir, readAnchors } from '../../bench/beir/import.ts';
import { buildConfig, columnsFor, percentile, bestHybrid, summarize, type ColumnSummary, type PfOutput } from '../../bench/beir/run.ts';
import { documentRanking, recall100 } from '../../bench/beir/assert.ts';
import { benchPaths, ensureIndex } from '../../bench/beir/index-corpus.ts';
import { main } from '../../bench/beir.ts';
import { openDatabase } from '../../src/db/index.ts';
import { REPO } from '../../bench/beir/run.ts';
import type { HarnessOutput } from '../../src/results/types.ts';

const FIXTURE = join(REPO, 'test', 'fixtures', 'beir');
const close = (a: number, b: number, eps = 1e-4) => Math.abs(a - b) <= eps;
const L3 = 1 / Math.log2(3);

describe('BEIR folder -> promptfoo test cases', () => {
  it('keeps only queries judged in the split, in queries.jsonl order, with document-level judgements', () => {
    const imp = importBeir(FIXTURE);
    assert.equal(imp.name, 'beir');
    assert.equal(imp.split, 'test');
    assert.equal(imp.judgedQueries, 2);
    assert.equal(imp.judgements, 3);
    assert.deepEqual(imp.tests.map((t) => [t.metadata.id, t.vars.query]), [['q1', 'aspirin heart'], ['q2', 'vitamin bone']]);
    const t2 = imp.tests[1]!;
    assert.deepEqual(t2.vars, { query: 'vitamin bone' });
    assert.deepEqual([t2.metadata.category, t2.metadata.language], ['beir', 'en']);
    assert.deepEqual(
      t2.metadata.golden.expected.map((r) => [r.doc_id, r.grade, r.relevant]),
      [
        ['d2', 1, true],
        ['d1', 1, true],
      ],
    );
    assert.ok(Object.values(t2.vars).every((v) => typeof v === 'string'), 'vars are strings only (no promptfoo var expansion)');
  });

  it('--queries N takes the first N judged queries', () => {
    const imp = importBeir(FIXTURE, { queries: 1 });
    assert.deepEqual(imp.tests.map((t) => t.metadata.id), ['q1']);
    assert.equal(imp.judgedQueries, 2);
    assert.equal(imp.judgements, 1);
  });

  it('names the missing file for a missing split or a folder that is not BEIR', async () => {
    assert.throws(() => importBeir(FIXTURE, { split: 'dev' }), (e: Error) => e.name === 'UserError' && /qrels\/dev\.tsv: file not found.*--split/.test(e.message));
    await assert.rejects(main([join(FIXTURE, 'qrels')]), (e: Error) => e.name === 'UserError' && /corpus\.jsonl: file not found, expected a BEIR folder/.test(e.message));
    await assert.rejects(main([FIXTURE, '--sweep', 'big']), /--sweep: got 'big', expected none or small/);
    await assert.rejects(main([FIXTURE, '--depth', '50']), /--depth: got '50', expected an integer >= 100/);
  });

  it('reads the published anchors of the named section only', () => {
    const a = readAnchors(join(FIXTURE, 'README.md'), 'beir');
    assert.deepEqual(a, [
      { system: 'a published system', ndcg10: 0.5, recall100: 0.9 },
      { system: 'another, nDCG only', ndcg10: 0.4, recall100: null },
    ]);
    assert.deepEqual(readAnchors(join(FIXTURE, 'README.md'), 'scifact'), []);
    assert.deepEqual(readAnchors(join(FIXTURE, 'no-such-readme.md'), 'beir'), []);
  });
});

describe('bench/scifact-train-like.ts: a train-sized folder from a test split', () => {
  it('adds title queries judged to their own abstract, keeps every judged abstract, and builds the same folder twice', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rankgate-trainlike-'));
    try {
      const src = join(dir, 'src');
      mkdirSync(join(src, 'qrels'), { recursive: true });
      const docs = Array.from({ length: 8 }, (_, i) => ({ _id: `d${i}`, title: i === 7 ? '' : `Title of abstract ${i}`, text: `text ${i}` }));
      writeFileSync(join(src, 'corpus.jsonl'), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
      writeFileSync(join(src, 'queries.jsonl'), ['q1', 'q2', 'q3'].map((id) => JSON.stringify({ _id: id, text: `claim ${id}` })).join('\n') + '\n');
      writeFileSync(join(src, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\nq1\td0\t1\nq2\td1\t1\n');
      const build = (out: string, ...extra: string[]) =>
        spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'bench', 'scifact-train-like.ts'), out, '--from', src, ...extra], { encoding: 'utf8', cwd: REPO });
      const a = build(join(dir, 'a'), '--titles', '3', '--docs', '6');
      assert.equal(a.status, 0, a.stderr);
      assert.match(a.stdout, /6 abstracts, 5 queries \(2 test claims \+ 3 titles\), 5 judgements/);
      const imp = importBeir(join(dir, 'a'), { split: 'train' });
      assert.equal(imp.tests.length, 5, 'q3 is judged nowhere: not a query');
      const titled = imp.tests.filter((t) => t.metadata.id.startsWith('t'));
      assert.equal(titled.length, 3);
      for (const t of titled) {
        const doc = t.metadata.id.slice(1);
        assert.equal(t.vars.query, `Title of abstract ${doc.slice(1)}`);
        assert.deepEqual(t.metadata.golden.expected.map((r) => r.doc_id), [doc]);
      }
      const corpus = readFileSync(join(dir, 'a', 'corpus.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)._id);
      assert.equal(corpus.length, 6);
      for (const id of ['d0', 'd1', ...titled.map((t) => t.metadata.id.slice(1))]) assert.ok(corpus.includes(id), id);
      assert.ok(!corpus.includes('d7') || !titled.some((t) => t.metadata.id === 'td7'), 'an abstract without a title is never a title query');
      const b = build(join(dir, 'b'), '--titles', '3', '--docs', '6');
      for (const f of ['corpus.jsonl', 'queries.jsonl', join('qrels', 'train.tsv')]) assert.equal(readFileSync(join(dir, 'b', f), 'utf8'), readFileSync(join(dir, 'a', f), 'utf8'), f);
      const bad = build(join(dir, 'c'), '--titles', '9');
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /only 5 unjudged abstracts with a title, --titles 9/);
      assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
      // a bad corpus line: one line naming the file, the line and the field; nothing written
      const broken = join(dir, 'broken');
      mkdirSync(join(broken, 'qrels'), { recursive: true });
      for (const f of ['queries.jsonl', join('qrels', 'test.tsv')]) writeFileSync(join(broken, f), readFileSync(join(src, f)));
      writeFileSync(join(broken, 'corpus.jsonl'), readFileSync(join(src, 'corpus.jsonl'), 'utf8') + '{"title": "no id"}\n{not json\n');
      const e = spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'bench', 'scifact-train-like.ts'), join(dir, 'e'), '--from', broken], { encoding: 'utf8', cwd: REPO });
      assert.equal(e.status, 2);
      assert.match(e.stderr, /broken\/corpus\.jsonl: line 9: field _id: expected a string/);
      assert.doesNotMatch(e.stderr, /\n\s+at /, 'no stack trace');
      assert.ok(!existsSync(join(dir, 'e')), 'nothing written');
      const missing = build(join(dir, 'd'), '--from', join(dir, 'nowhere'));
      assert.equal(missing.status, 2);
      assert.match(missing.stderr, /corpus\.jsonl is missing: --from must be a BEIR SciFact folder/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('columns, config and measures', () => {
  it('small sweep: keyword (two BM25 settings), semantic, hybrid default and 8 more RRF cells (k 20/60/100 x 3 weightings)', () => {
    const cols = columnsFor('small');
    assert.equal(cols.length, 12);
    assert.equal(new Set(cols.map((c) => c.label)).size, 12, 'labels distinguish the promptfoo columns');
    assert.deepEqual(cols.filter((c) => c.kind === 'keyword').map((c) => [c.params.bm25K1, c.params.bm25B]), [[undefined, undefined], [0.9, 0.4]]);
    const hybrid = cols.filter((c) => c.params.mode === 'hybrid').map((c) => `${c.params.rrfK}:${c.params.weights!.keyword}/${c.params.weights!.vector}`);
    assert.deepEqual(hybrid.sort(), ['100:0.4/0.6', '100:0.6/0.4', '100:1/1', '20:0.4/0.6', '20:0.6/0.4', '20:1/1', '60:0.4/0.6', '60:0.6/0.4', '60:1/1']);
    assert.equal(columnsFor('none').length, 4);
  });

  it('every column retrieves at least 100 chunks per channel, without routing, from the bench data dir', () => {
    const cfg = buildConfig({ name: 'x', tests: importBeir(FIXTURE).tests, columns: columnsFor('none'), dataDir: '/d', chunkSize: 512, embedder: 'use-lite', depth: 120 });
    const providers = cfg.providers as { label: string; config: Record<string, unknown> }[];
    for (const p of providers) {
      assert.equal(p.config.topK, 120);
      assert.equal(p.config.candidates, 120);
      assert.equal(p.config.routing, false);
      assert.equal(p.config.dataDir, '/d');
    }
    assert.equal((cfg.tests as unknown[]).length, 2);
  });

  it('Recall@100 collapses chunks to documents at their best rank before cutting at 100', () => {
    const hits = [];
    // 101 documents; doc "rel" appears at chunk ranks 1 and 150 (once after collapse), doc "late" is document 101
    hits.push({ rank: 1, chunkId: 'rel#c1', documentId: 'rel', score: 1, content: '' });
    for (let i = 0; i < 99; i++) hits.push({ rank: i + 2, chunkId: `o${i}#c`, documentId: `o${i}`, score: 0, content: '' });
    hits.push({ rank: 101, chunkId: 'late#c', documentId: 'late', score: 0, content: '' });
    hits.push({ rank: 150, chunkId: 'rel#c2', documentId: 'rel', score: 0, content: '' });
    const out: HarnessOutput = { ids: [], hits, routing: null, practice_bridge: false, safety: false, latencyMs: 3 };
    assert.equal(documentRanking(out).length, 101);
    const golden = importBeir(FIXTURE).tests[0]!.metadata.golden;
    const g = { ...golden, expected: [{ doc_id: 'rel', grade: 1, relevant: true }, { doc_id: 'late', grade: 2, relevant: true }, { doc_id: 'o5', grade: 0, relevant: false }] };
    const r = recall100(JSON.stringify(out), { test: { metadata: { golden: g } } });
    assert.equal(r.namedScores!.recall_at_100, 0.5, 'late is document 101: outside the top 100');
    assert.equal(r.namedScores!.docs_returned, 101);
    assert.equal(r.namedScores!.latency_ms, 3);
  });

  it('a row that only FAILED an assertion keeps its scores; a provider error or a missing row counts 0 and as an error', () => {
    const cols = columnsFor('none').slice(0, 1);
    const label = cols[0]!.label;
    const pf: PfOutput = {
      results: {
        results: [
          // promptfoo sets `error` to the failure reason when an assertion fails (relevant document below rank 10)
          { testIdx: 0, provider: { label }, error: 'topk_ordering_gap: best relevant rank 12', namedScores: { ndcg_at_10: 0, mrr: 0, recall_at_100: 1, docs_returned: 150 }, response: { output: { latencyMs: 7 } } },
          { testIdx: 1, provider: { label }, error: 'search failed: boom', response: { error: 'search failed: boom' } },
          { testIdx: 2, provider: { label }, namedScores: { ndcg_at_10: 0.5, mrr: 1, recall_at_100: 0.5, docs_returned: 40 }, response: { output: { latencyMs: 9 } } },
        ],
      },
    };
    const [c] = summarize(pf, cols, 4, 5183);
    assert.equal(c!.errors, 2, 'test 1 errored, test 3 has no row');
    assert.deepEqual(c!.perQuery.recall100, [1, 0, 0.5, 0]);
    assert.equal(c!.recall100, 0.375);
    assert.equal(c!.ndcg10, 0.125);
    assert.equal(c!.short, 1, 'test 2 returned 40 documents of a 5183-document corpus');
    assert.equal(c!.latencyP50, 8);
  });

  it('percentiles interpolate linearly (numpy default) and the best hybrid cell wins by nDCG@10, ties to the earlier', () => {
    assert.equal(percentile([4, 1, 3, 2], 50), 2.5);
    assert.ok(close(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95), 9.55, 1e-9));
    const col = (label: string, kind: ColumnSummary['kind'], ndcg10: number) => ({ label, kind, ndcg10 }) as ColumnSummary;
    const best = bestHybrid([col('kw', 'keyword', 0.9), col('h', 'hybrid', 0.5), col('s1', 'sweep', 0.6), col('s2', 'sweep', 0.6)]);
    assert.equal(best?.label, 's1');
  });
});

describe('end to end: ingest + promptfoo eval of test/fixtures/beir', () => {
  let work: string;
  let run: { code: number; stdout: string; stderr: string };
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'rankgate-beir-test-'));
    run = await new Promise((resolve, reject) => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', join(REPO, 'bench', 'beir.ts'), FIXTURE, '--sweep', 'none', '--work-dir', work, '--anchors', join(FIXTURE, 'README.md')],
        { cwd: REPO, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const t = setTimeout(() => child.kill('SIGKILL'), 240_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(t);
        resolve({ code: code ?? -1, stdout, stderr });
      });
    });
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('exits 0 and prints the Markdown table with the anchors beside our columns', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\| keyword \(BM25\) \| 0\.6220 \| 0\.7500 \| 0\.7500 \|/);
    assert.match(run.stdout, /\| \*published:\* a published system \| 0\.5000 \| 0\.9000 \|/);
    const md = readFileSync(join(work, '.rankgate', 'bench', 'beir-beir.md'), 'utf8');
    assert.equal(md, run.stdout, 'the written report is the printed one');
  });

  it('keyword column equals the hand-computed nDCG@10, MRR@10 and Recall@100; deep columns return every document', () => {
    const s = JSON.parse(readFileSync(join(work, '.rankgate', 'bench', 'beir-beir.json'), 'utf8'));
    const by = Object.fromEntries(s.columns.map((c: ColumnSummary) => [c.kind === 'keyword' ? c.label : c.kind, c]));
    const kw = by['keyword (BM25)'] as ColumnSummary;
    // the same two rankings under Anserini's k1/b (d1 holds both q1 terms, only d2 holds q2's)
    assert.deepEqual((by['keyword (BM25 k1=0.9 b=0.4)'] as ColumnSummary).perQuery.mrr10, [0.5, 1]);
    assert.equal(kw.errors, 0);
    // q1: relevant d3 at rank 2 of [d1, d3]; q2: d2 at rank 1, d1 (relevant) not returned
    assert.ok(close(kw.perQuery.ndcg10[0]!, L3), `q1 nDCG@10 ${kw.perQuery.ndcg10[0]}`);
    assert.ok(close(kw.perQuery.ndcg10[1]!, 1 / (1 + L3)), `q2 nDCG@10 ${kw.perQuery.ndcg10[1]}`);
    assert.ok(close(kw.ndcg10, (L3 + 1 / (1 + L3)) / 2));
    assert.deepEqual(kw.perQuery.mrr10, [0.5, 1]);
    assert.equal(kw.mrr10, 0.75);
    assert.deepEqual(kw.perQuery.recall100, [1, 0.5]);
    for (const kind of ['semantic', 'hybrid']) {
      const c = by[kind] as ColumnSummary;
      assert.equal(c.errors, 0);
      assert.deepEqual(c.perQuery.recall100, [1, 1], `${kind} returns all 3 documents`);
      assert.equal(c.perQuery.latencyMs.length, 2);
    }
    assert.equal(s.ingest.documents, 3);
    assert.equal(s.reusedIndex, false);
    const rows = readFileSync(join(work, '.rankgate', 'bench', 'beir', 'results.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(rows.length, 8, '2 queries x 4 promptfoo columns, as JSONL (one row a line)');
  });

  it('a rerun on the same corpus reuses the index (and keeps the first ingest time)', async () => {
    const p = benchPaths(work, 'beir');
    assert.ok(existsSync(p.recordFile));
    const before = JSON.parse(readFileSync(p.recordFile, 'utf8'));
    const db = await openDatabase({ dataDir: p.dataDir });
    try {
      const r = await ensureIndex({ db, corpus: join(FIXTURE, 'corpus.jsonl'), recordFile: p.recordFile, chunkSize: 512, embedder: 'use-lite', log: () => {}, quiet: true });
      assert.equal(r.ingested, false);
      assert.equal(r.record.ingestMs, before.ingestMs);
      // a different chunk size is a different index: not reused
      const r2 = await ensureIndex({ db, corpus: join(FIXTURE, 'corpus.jsonl'), recordFile: p.recordFile, chunkSize: 64, embedder: 'use-lite', log: () => {}, quiet: true });
      assert.equal(r2.ingested, true);
      assert.equal(r2.record.cached, 3, 'unchanged text comes from the embedding cache');
    } finally {
      await db.close();
    }
  });
});
