/**
 * Pooled judging (`rankgate judge pool`): the union of every column's unlabelled top-k pairs, deduplicated across columns,
 * each judged once by a fake chat API that counts its requests; golden-matched and labelled pairs never sent; a re-run
 * sends 0 requests; the cost cap refuses before any call; a depth past the text the rows kept is refused in one line;
 * a bad judgments file is one line with nothing written.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { planPool, textProblem } from '../../src/results/pool.ts';
import { run } from '../../src/cli/judge.ts';
import { run as gate } from '../../src/cli/gate.ts';
import { readJudgments, type Judgment } from '../../src/judgments/file.ts';
import { UserError } from '../../src/errors.ts';
import { capture } from '../helpers/capture.ts';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.ts';

const dir = mkdtempSync(join(tmpdir(), 'rg-pool-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Two columns of a module: service (no index named in the rows), 3 queries; q0 and q1 expect d<i>-2 (document level),
 * q2 is routing-only. Column A returns d-1 d-2 d-3, column B d-3 d-4 d-1 (and with `deep`, 5 more hits without text).
 */
function resultsDoc(deep = false) {
  const rows: unknown[] = [];
  const labels = ['A', 'B'];
  for (const promptIdx of [0, 1]) {
    for (let i = 0; i < 3; i++) {
      const golden =
        i < 2
          ? { id: `q${i}`, query: `how do lamps burn ${i}`, language: 'en', category: 'direct', expected: [{ doc_id: `d${i}-2`, grade: 3, relevant: true }] }
          : { id: 'q2', query: 'weather today', language: 'en', category: 'adversarial', expected: [], expected_routing: 'no_results', origin: { format: 'des058' } };
      const order = promptIdx === 0 ? [1, 2, 3] : [3, 4, 1];
      const hits = order.map((k, r) => ({ rank: r + 1, chunkId: `d${i}-${k}#c300-0`, documentId: `d${i}-${k}`, score: 1 - r / 10, content: `text of document ${i}-${k} about lamps` }));
      if (deep) for (let r = 4; r <= 8; r++) hits.push({ rank: r, chunkId: `d${i}-x${r}#c300-0`, documentId: `d${i}-x${r}`, score: 0.1, content: r <= 5 ? `short ${r}…` : '' });
      rows.push({
        promptIdx,
        testIdx: i,
        success: true,
        testCase: { vars: { query: golden.query }, metadata: { golden } },
        provider: { id: 'file://providers/search.ts', label: labels[promptIdx] },
        response: { output: 'x', metadata: { harness: { ids: hits.map((h) => h.chunkId), hits, routing: null, practice_bridge: false, safety: false, latencyMs: 1, textKept: { hits: 5, chars: 300 } } } },
      });
    }
  }
  return { evalId: 'pool-test', results: { version: 3, timestamp: '2026-11-28T00:00:00Z', prompts: labels.map((l) => ({ provider: l })), results: rows }, config: { providers: labels.map((l) => ({ id: 'file://providers/search.ts', label: l, config: { module: './search.mts' } })) } };
}

const chair: Judgment = { query: 'q1', doc: 'd1-4', grade: 2, source: 'chair', reviewer: 'dafna', time: '2026-11-01T00:00:00.000Z' };

test('the pool: every column\'s unlabelled top k, deduplicated; golden, labelled and routing-only results never pairs', () => {
  const doc = resultsDoc();
  const plan = planPool(doc.results.results, [chair], 10);
  assert.deepEqual(
    plan.pairs.map((p) => `${p.query} ${p.doc} x${p.columns}`),
    ['q0 d0-1 x2', 'q0 d0-3 x2', 'q0 d0-4 x1', 'q1 d1-1 x2', 'q1 d1-3 x2'],
  );
  assert.equal(plan.rows, 4, 'q0 and q1 in two columns');
  assert.equal(plan.routingOnly, 2, "q2 expects no results: no ranking figure, not pooled");
  assert.equal(plan.golden, 2, "column A's d0-2 and d1-2 match the golden references");
  assert.equal(plan.labelled, 1, "column B's d1-4 has a chair label");
  assert.equal(plan.unlabelled, 9, '9 unlabelled results before deduplication, 5 distinct pairs');
  // the text of the best-ranked chunk (d0-3: rank 1 in column B, rank 3 in A)
  const d03 = plan.pairs.find((p) => p.doc === 'd0-3')!;
  assert.equal(d03.rank, 1);
  assert.equal(d03.column, 1);
  assert.equal(d03.text, 'text of document 0-3 about lamps');
  assert.deepEqual(planPool(doc.results.results, [chair], 1).pairs.map((p) => p.doc), ['d0-1', 'd0-3', 'd1-1', 'd1-3'], 'depth 1: the first result of each column');
});

test('a depth past the text the rows kept (another service than rankgate\'s own) is one line naming a depth that works', () => {
  const plan = planPool(resultsDoc(true).results.results, [], 10);
  assert.ok(plan.pairs.some((p) => p.snippet), 'a 300-character snippet is a text, judged as a snippet');
  const why = textProblem(plan, 'r.json')!;
  assert.match(why, /^r\.json: --depth 10: \d+ unlabelled result\(s\) have no text in the results \(e\.g\. query q0 rank 6 'd0-x6#c300-0' of column '[AB]'\): .* pool with --depth 5,/);
  assert.equal(textProblem(planPool(resultsDoc(true).results.results, [], 5), 'r.json'), null);
});

let fake: FakeLlm;
const env = { ...process.env };
before(async () => {
  fake = await startFakeLlm(() => '2');
  process.env.OPENAI_BASE_URL = `${fake.url}/v1`;
  process.env.OPENAI_API_KEY = 'sk-test';
});
after(async () => {
  await fake.close();
  for (const k of ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'PROMPTFOO_CACHE_ENABLED']) if (env[k] === undefined) delete process.env[k];
});

const pool = (file: string, judgments: string, cache: string, ...more: string[]) =>
  capture(() => run(['pool', file, '--judgments', judgments, '--judge', 'openai:chat:gpt-4.1-mini', '--cache-dir', cache, ...more]));

test('rankgate judge pool: one call per distinct pair, labels written once; a re-run sends 0 requests; the cache answers a fresh file', async () => {
  const file = join(dir, 'results.json');
  writeFileSync(file, JSON.stringify(resultsDoc()));
  const jpath = join(dir, 'judgments.jsonl');
  writeFileSync(jpath, `{"rankgate_judgments":1}\n${JSON.stringify(chair)}\n`);
  const cache = join(dir, 'cache');
  const r1 = await pool(file, jpath, cache);
  assert.equal(r1.code, 0, r1.out + r1.err);
  assert.equal(fake.requests.length, 5, 'the 5 distinct unlabelled pairs, each once (9 results before deduplication)');
  assert.match(r1.out, /pairs: 5 distinct unlabelled \(query, document\) pairs \(9 before deduplication across columns\)/);
  assert.match(r1.out, /calls 5 · cache hits 0 · errors 0 · cost ~\$/);
  assert.ok(fake.requests.every((r) => /<passage>text of document \d-\d about lamps<\/passage>/.test(r.text) && !/#\d/.test(r.text)), 'the passage, never a rank');
  const labels = await readJudgments(jpath);
  assert.equal(labels.length, 6);
  assert.deepEqual(labels.find((l) => l.source === 'chair'), chair, 'the chair label kept as it was');
  const llm = labels.filter((l) => l.source === 'llm');
  assert.deepEqual(llm.map((l) => `${l.query} ${l.doc} ${l.grade}`), ['q0 d0-1 2', 'q0 d0-3 2', 'q0 d0-4 2', 'q1 d1-1 2', 'q1 d1-3 2']);
  for (const l of llm) {
    assert.equal(l.provider, 'openai:chat:gpt-4.1-mini');
    assert.equal(l.model, 'gpt-4.1-mini');
    assert.equal(l.prompt, 'grade-v1');
    assert.ok(!Number.isNaN(Date.parse(l.time)));
  }
  const bytes = readFileSync(jpath, 'utf8');
  const r2 = await pool(file, jpath, cache);
  assert.equal(r2.code, 0);
  assert.equal(fake.requests.length, 5, 'a re-run: every pair labelled, 0 requests');
  assert.match(r2.out, /nothing to judge: every top-10 result has a label; .* unchanged · calls 0 · cache hits 0/);
  assert.equal(readFileSync(jpath, 'utf8'), bytes);
  const fresh = join(dir, 'fresh.jsonl');
  writeFileSync(fresh, `{"rankgate_judgments":1}\n${JSON.stringify(chair)}\n`);
  const r3 = await pool(file, fresh, cache);
  assert.equal(r3.code, 0);
  assert.equal(fake.requests.length, 5, 'a fresh judgments file: the verdict cache answers, 0 requests');
  assert.match(r3.out, /calls 0 · cache hits 5 · errors 0/);
  assert.equal((await readJudgments(fresh)).length, 6);
  // rankgate gate re-scores the same rows with the labels: strict and + labels side by side, the backlog said
  const g = await capture(() => gate([file, '--judgments', jpath]));
  const all = g.out + g.err;
  assert.match(all, /Judged@10 1\.00, Judged@3 1\.00/);
  assert.match(all, new RegExp(`\\+ labels \\(${jpath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, 6 labels applied, 5 not reviewed\\): Success@3 1\\.0000 \\(strict 1\\.0000\\) · MRR@10 1\\.0000 \\(strict 0\\.5000\\)`));
  assert.match(all, /review backlog: 5 pending, oldest \d{4}-\d\d-\d\d/);
  const plain = await capture(() => gate([file]));
  assert.match(plain.out + plain.err, /Judged@10 0\.33, Judged@3 0\.33/, 'without labels: the golden set only (d-2 of d-1 d-2 d-3)');
  assert.ok(!/\+ labels/.test(plain.out + plain.err));
});

test('the cost cap: over --max-cost, one line with the estimate, exit 2 before any call, nothing written', async () => {
  const file = join(dir, 'results-cap.json');
  writeFileSync(file, JSON.stringify(resultsDoc()));
  const jpath = join(dir, 'cap.jsonl');
  const before = fake.requests.length;
  await assert.rejects(pool(file, jpath, join(dir, 'cache-cap'), '--max-cost', '0.000001'), (e: unknown) => {
    assert.ok(e instanceof UserError);
    assert.equal(e.exitCode, 2);
    assert.match(e.message, /^--max-cost 0\.000001: the estimate ~\$0\.\d{4} for 6 call\(s\) \(6 pairs, 0 cached; ~[\d,]+ input tokens at \$0\.40\/M input, \$1\.60\/M output tokens\) exceeds it: nothing sent$/);
    return true;
  });
  assert.equal(fake.requests.length, before, 'no request');
  assert.equal(existsSync(jpath), false, 'nothing written');
  // a generous cap passes
  const ok = await pool(file, jpath, join(dir, 'cache-cap'), '--max-cost', '1');
  assert.equal(ok.code, 0);
  assert.equal(fake.requests.length, before + 6, 'without the chair label, d1-4 is a pair too');
});

test('hostile input: a grade out of range in the judgments file, a depth past the kept text: one line, exit 2, nothing written', async () => {
  const file = join(dir, 'results-bad.json');
  writeFileSync(file, JSON.stringify(resultsDoc(true)));
  const jpath = join(dir, 'bad.jsonl');
  const text = `{"rankgate_judgments":1}\n{"query":"q0","doc":"d0-1","grade":5,"source":"llm","provider":"p","model":"m","prompt":"v","time":"2026-11-01T00:00:00Z"}\n`;
  writeFileSync(jpath, text);
  const before = fake.requests.length;
  await assert.rejects(pool(file, jpath, join(dir, 'cache-bad')), (e: unknown) => e instanceof UserError && /bad\.jsonl:2: field 'grade': expected a whole grade from 0 to 3/.test(e.message) && !e.message.includes('\n'));
  assert.equal(readFileSync(jpath, 'utf8'), text, 'the file untouched');
  const deep = join(dir, 'deep.jsonl');
  await assert.rejects(pool(file, deep, join(dir, 'cache-bad')), (e: unknown) => e instanceof UserError && e.exitCode === 2 && /--depth 10: \d+ unlabelled result\(s\) have no text/.test(e.message));
  assert.equal(existsSync(deep), false);
  assert.equal(fake.requests.length, before, 'no request');
});
