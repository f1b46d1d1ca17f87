/**
 * The review queue for people (src/review/queue.ts, `rankgate judge review export | import`): what is pending, what the
 * page shows (the query, the document's text from the chunk a label names, the results or the corpus; never the
 * label's grade nor its source), and what a person's grades do on import: chair labels with `was`, reviewer and time,
 * accept/change/reject, the model's kappa as src/metrics/agreement.ts computes it, bootstrap entries promoted line by
 * line (every other line byte for byte), partial and all-irrelevant entries left bootstrap, disagreeing files refused.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { run as judge } from '../../src/cli/judge.ts';
import { loadGolden } from '../../src/golden/index.ts';
import { readCorpus } from '../../src/ingest/readers.ts';
import { readJudgments, writeJudgments, type Judgment } from '../../src/judgments/file.ts';
import { readGoldLines } from '../../src/judgments/goldlines.ts';
import { agreement } from '../../src/metrics/agreement.ts';
import { renderQueuePage } from '../../src/report/html/queue.ts';
import { applyDecisions, buildQueue, outcomeOf, parseDecisions, pendingPairs, type DecisionsDoc } from '../../src/review/queue.ts';
import { runCli } from '../helpers/capture.ts';

const T = '2026-11-29T10:00:00.000Z';
const llm = (query: string, doc: string, grade: number, chunk?: string): Judgment => ({ query, doc, grade, source: 'llm', provider: 'openai:chat:m', model: 'm', prompt: 'relevance-v1', time: T, ...(chunk ? { chunk } : {}) });
const boot = (query: string, doc: string, grade: number): Judgment => ({ query, doc, grade, source: 'bootstrap', evidence: { feedback: 2, below: 0 }, time: T });

const QUERIES = '{"id":"q1","query":"how do I calm my mind","relevant_case_law_ids":["E"],"source":"chair"}\n{"id":"q2","query":"what is devotion","relevant_case_law_ids":["E"]}\n{"id":"q3","query":"reviewed already","relevant_case_law_ids":["E"]}\n';
const CHAIR = '{ "id":"c1", "query":"kept as typed",  "relevant_case_law_ids":["E"], "source":"chair" }';
const B1 = '{"id":"log-b1","query":"a bootstrap query","relevant_case_law_ids":["A","B"],"source":"bootstrap","note":"from logs","category":"from_logs"}';
const B2 = '{"id":"log-b2","query":"another bootstrap query","relevant_case_law_ids":["C"],"source":"bootstrap"}';
const HAND = '{"id":"h1","query":"hand written","relevant_case_law_ids":["D"]}';

function fixture(t: { after: (f: () => void) => void }) {
  const dir = mkdtempSync(join(tmpdir(), 'rg-queue-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const corpus = join(dir, 'corpus');
  mkdirSync(corpus);
  for (const id of ['A', 'B', 'C', 'D', 'E'])
    writeFileSync(join(corpus, `${id}.md`), `---\ntitle: Book ${id}\nslug: ${id}\n---\n\n## Chapter 1: On ${id}\n\nThe text of book ${id} says something about calm and devotion, zqText${id}.\n`);
  const queries = join(dir, 'queries.jsonl');
  writeFileSync(queries, QUERIES);
  const gold = join(dir, 'gold.jsonl');
  writeFileSync(gold, `${CHAIR}\n${B1}\n${B2}\n${HAND}\n`);
  const judgments = join(dir, 'judgments.jsonl');
  writeJudgments(judgments, [
    llm('q1', 'A', 3, 'A#c300-0'),
    llm('q1', 'B', 1),
    boot('q1', 'B', 2),
    llm('q2', 'C', 2),
    llm('q2', 'D', 0),
    llm('q2', 'X', 1),
    llm('q3', 'E', 2),
    { query: 'q3', doc: 'E', grade: 3, source: 'chair', reviewer: 'ann', time: T },
  ]);
  return { dir, corpus, queries, gold, judgments };
}

test('pending: model and bootstrap labels without a chair label, bootstrap entries of gold-set JSONL; the page shows texts and never a grade or a source', async (t) => {
  const f = fixture(t);
  const labels = await readJudgments(f.judgments);
  const golden = [f.queries, f.gold].map((p) => ({ path: p, format: 'jsonl', queries: loadGolden(p).queries }));
  const p = pendingPairs({ labels, golden });
  assert.deepEqual(
    p.pairs.map((x) => `${x.query}/${x.doc}`),
    ['log-b1/A', 'log-b1/B', 'log-b2/C', 'q1/A', 'q1/B', 'q2/C', 'q2/D', 'q2/X'],
    'q3/E has a chair label; the chair and hand-written entries are not pending',
  );
  assert.deepEqual([p.fromLabels, p.fromEntries], [5, 3]);
  // a results row: q2's hit for D carries the text the judge saw
  const rows = [
    {
      promptIdx: 0,
      testCase: { metadata: { golden: { id: 'q2', query: 'what is devotion', language: 'en', category: 'c', expected: [{ doc_id: 'E', grade: 3, relevant: true }] } } },
      response: { output: { hits: [{ rank: 1, chunkId: 'D#c300-0', documentId: 'D', score: 1, content: 'zqHitTextD: what the judge saw', title: 'Book D' }] } },
    },
  ];
  const q = buildQueue({ labels, golden, rows, corpus: await readCorpus(f.corpus) });
  assert.equal(q.page.items.length, 7);
  assert.deepEqual(q.leftOut, [{ query: 'q2', doc: 'X', why: 'no text of the document (in neither --results nor --corpus)' }]);
  const byPair = new Map(q.page.items.map((i) => [`${i.query}/${i.doc}`, i]));
  assert.match(byPair.get('q1/A')!.text, /zqTextA/, 'the chunk the label names, recomputed from the corpus');
  assert.equal(byPair.get('q1/A')!.heading, 'Chapter 1: On A');
  assert.equal(byPair.get('q2/D')!.text, 'zqHitTextD: what the judge saw', 'the hit in the results');
  assert.equal(byPair.get('q1/B')!.queryText, 'how do I calm my mind');
  for (const it of q.page.items) assert.deepEqual(Object.keys(it).filter((k) => !['item', 'query', 'doc', 'queryText', 'title', 'heading', 'text'].includes(k)), []);
  const html = renderQueuePage(q.page);
  const data = html.slice(html.indexOf('id="review-data">'), html.indexOf('</script>', html.indexOf('id="review-data">')));
  for (const s of ['"grade"', '"source"', 'llm', 'bootstrap query"', 'openai', 'relevance-v1', 'evidence']) if (s !== 'bootstrap query"') assert.ok(!data.includes(s), `the page data holds ${s}`);
  assert.ok(html.includes("default-src 'none'"), 'no network');
  assert.equal(buildQueue({ labels, golden, rows, corpus: await readCorpus(f.corpus) }).page.exportId, q.page.exportId, 'the same queue, the same export id (a re-export keeps the reviewer\'s work)');
  const sample = buildQueue({ labels, golden, corpus: await readCorpus(f.corpus), limit: 3, seed: 7 });
  assert.equal(sample.page.items.length, 3);
  assert.deepEqual(buildQueue({ labels, golden, corpus: await readCorpus(f.corpus), limit: 3, seed: 7 }).page, sample.page, 'seeded');
  assert.throws(() => buildQueue({ labels: [], golden: [] }), /nothing to review/);
});

const decisions = (reviewer: string, ds: [string, string, number][]): DecisionsDoc => ({
  kind: 'rankgate-judgments-decisions',
  version: 1,
  exportId: 'e1',
  reviewer,
  decisions: ds.map(([query, doc, grade], i) => ({ item: i + 1, query, doc, grade, time: `2026-12-0${1 + (i % 8)}T09:00:00.000Z` })),
});

test('import: chair labels with was, reviewer and time; accept/change/reject; kappa as agreement() computes it; entries promoted line by line', async (t) => {
  const f = fixture(t);
  const labels = await readJudgments(f.judgments);
  const before = readFileSync(f.gold, 'utf8');
  const doc = decisions('Dafna', [
    ['q1', 'A', 3],
    ['q1', 'B', 2],
    ['q2', 'C', 0],
    ['q2', 'D', 0],
    ['log-b1', 'A', 3],
    ['log-b1', 'B', 2],
    ['log-b2', 'C', 1],
    ['nope', 'Z', 1],
  ]);
  const r = applyDecisions({ decisions: [{ path: 'd.json', doc }], labels, golden: [readGoldLines(f.gold)], seed: 42, resamples: 500 });
  assert.deepEqual(
    r.chair.map((j) => [j.query, j.doc, j.grade, j.reviewer, j.was, j.chunk]),
    [
      ['q1', 'A', 3, 'Dafna', { source: 'llm', grade: 3 }, 'A#c300-0'],
      ['q1', 'B', 2, 'Dafna', { source: 'bootstrap', grade: 2 }, undefined],
      ['q2', 'C', 0, 'Dafna', { source: 'llm', grade: 2 }, undefined],
      ['q2', 'D', 0, 'Dafna', { source: 'llm', grade: 0 }, undefined],
    ],
    'was: the label that counted (bootstrap over llm)',
  );
  assert.equal(r.chair[0]!.time, '2026-12-01T09:00:00.000Z');
  assert.deepEqual(r.outcomes.labels, { accepted: 3, changed: 0, rejected: 1 });
  assert.deepEqual(r.outcomes.entries, { accepted: 1, changed: 2, rejected: 0 });
  assert.deepEqual([outcomeOf(2, 2), outcomeOf(1, 3), outcomeOf(2, 0), outcomeOf(0, 0)], ['accepted', 'changed', 'rejected', 'accepted']);
  const want = agreement(
    [
      { truth: 3, rated: 3 },
      { truth: 2, rated: 1 },
      { truth: 0, rated: 2 },
      { truth: 0, rated: 0 },
    ],
    4,
    { seed: 42, resamples: 500 },
  );
  assert.deepEqual(r.agreement.llm, want, 'the model against the person: the agreement code that exists, linear weights on 0-3');
  assert.equal(r.agreement.bootstrap!.n, 1);
  assert.deepEqual(r.unmatched, [{ query: 'nope', doc: 'Z', file: 'd.json' }]);
  // the judgments: the chair labels beside the labels they reviewed; nothing pending for those pairs any more
  const merged = r.labels;
  assert.equal(merged.filter((j) => j.source === 'chair').length, 5);
  assert.equal(merged.filter((j) => j.source === 'llm').length, 6, 'the model labels stay (their agreement is measured on them)');
  // the gold set: log-b1 promoted (its id kept), log-b2 left (no document graded 2 or 3), every other line its bytes
  const g = r.golden[0]!;
  assert.deepEqual([g.promoted, g.noneRelevant, g.partial], [['log-b1'], ['log-b2'], []]);
  const lines = g.text.split('\n');
  const old = before.split('\n');
  assert.deepEqual([lines[0], lines[2], lines[3], lines[4]], [old[0], old[2], old[3], old[4]], 'the chair row, log-b2, the hand-written row and the end: the same bytes');
  const promoted = JSON.parse(lines[1]!);
  assert.deepEqual(promoted, {
    id: 'log-b1',
    query: 'a bootstrap query',
    relevant_case_law_ids: ['A'],
    source: 'chair',
    note: 'from logs; reviewed by Dafna 2026-12-06',
    category: 'from_logs',
    expected_passages: [{ doc_id: 'B', relevance: 'high', grade: 2 }],
  });
  writeFileSync(f.gold, g.text);
  const q = loadGolden(f.gold).queries.find((x) => x.id === 'log-b1')!;
  assert.equal(q.source, 'reviewed');
  assert.deepEqual(
    q.expected.map((e) => [e.doc_id, e.grade, e.relevant]),
    [
      ['A', 3, true],
      ['B', 2, true],
    ],
  );

  // a partial review leaves the entry bootstrap; two files that disagree are refused
  writeFileSync(f.gold, before);
  const part = applyDecisions({ decisions: [{ path: 'p.json', doc: decisions('Bo', [['log-b1', 'A', 3]]) }], labels, golden: [readGoldLines(f.gold)] });
  assert.deepEqual(part.golden[0]!.partial, [{ id: 'log-b1', decided: 1, of: 2 }]);
  assert.equal(part.golden[0]!.changed, false);
  assert.throws(
    () =>
      applyDecisions({
        decisions: [
          { path: 'a.json', doc: decisions('Ann', [['q1', 'A', 3]]) },
          { path: 'b.json', doc: decisions('Bo', [['q1', 'A', 1]]) },
        ],
        labels,
        golden: [],
      }),
    /b\.json: query 'q1' doc 'A': graded 1 by "Bo", but 3 by "Ann" in a\.json: settle it/,
  );
});

test('decisions files are checked: one line naming the file, the decision and the field', () => {
  const ok = JSON.stringify(decisions('Ann', [['q1', 'A', 3]]));
  assert.equal(parseDecisions(ok, 'd.json').decisions.length, 1);
  const bad = (mut: (d: Record<string, unknown>) => void, re: RegExp) => {
    const d = JSON.parse(ok) as Record<string, unknown>;
    mut(d);
    assert.throws(() => parseDecisions(JSON.stringify(d), 'd.json'), re);
  };
  bad((d) => (d.kind = 'rankgate-review-ratings'), /d\.json: field 'kind': expected "rankgate-judgments-decisions"/);
  bad((d) => ((d.decisions as { grade: number }[])[0]!.grade = 4), /d\.json: decisions\[0\]: field 'grade': expected a whole grade from 0 to 3, got 4/);
  bad((d) => (d.reviewer = '\u200b'), /d\.json: field 'reviewer': expected the reviewer's name/);
  bad((d) => (d.decisions = [...(d.decisions as unknown[]), ...(d.decisions as unknown[])]), /decisions\[1\]: query 'q1' doc 'A': decided twice in one file/);
  assert.throws(() => parseDecisions('{', 'd.json'), /d\.json: not JSON/);
});

const cli = (...args: string[]) => runCli('judge', judge, args);

test('the commands: export writes the page, import writes the files and prints the outcomes and the kappa', async (t) => {
  const f = fixture(t);
  const page = join(f.dir, 'queue.html');
  const ex = await cli('review', 'export', '--judgments', f.judgments, '--golden', f.queries, '--golden', f.gold, '--corpus', f.corpus, '-o', page);
  assert.equal(ex.code, 0, ex.err);
  assert.match(ex.out, /review queue: .*queue\.html \(7 documents for 4 queries; export [0-9a-f]{16}\)/);
  assert.match(ex.out, /pending: 8 pairs \(5 from labels of .*judgments\.jsonl, 3 from bootstrap entries of /);
  assert.match(ex.out, /left out: 1 \(q2 X: no text of the document/);
  const d = join(f.dir, 'decisions.json');
  writeFileSync(d, JSON.stringify(decisions('Dafna', [['q1', 'A', 3], ['q1', 'B', 1], ['q2', 'C', 0], ['log-b1', 'A', 3], ['log-b1', 'B', 3]])));
  const before = readFileSync(f.gold, 'utf8').split('\n');
  const yaml = join(f.dir, 'texts.yaml');
  writeFileSync(yaml, '- id: y1\n  query: a yaml query\n  expected_paths: [E]\n');
  const im = await cli('review', 'import', d, '--judgments', f.judgments, '--golden', f.gold, '--golden', yaml, '--resamples', '200');
  assert.equal(im.code, 0, im.err);
  assert.match(im.out, /judge review import: 5 decisions by Dafna/);
  assert.match(im.out, /judgments\.jsonl: 3 chair labels \(1 accepted, 1 changed, 1 rejected; each keeps the label it replaced in 'was'\)/);
  assert.match(im.out, /model \(llm\) vs person: weighted kappa \(linear, 0-3\) -?\d\.\d{3}.* · accuracy 0\.667 · n 3/);
  assert.match(im.out, /gold\.jsonl: 1 entry promoted to chair \(ids kept, no other line rewritten\): log-b1/);
  const after = readFileSync(f.gold, 'utf8').split('\n');
  assert.deepEqual(after.filter((_, i) => i !== 1), before.filter((_, i) => i !== 1), 'only the promoted line changed');
  const labels = await readJudgments(f.judgments);
  assert.equal(labels.filter((j) => j.source === 'chair').length, 4);
  const none = await cli('review', 'import', d, '--golden', f.queries);
  assert.equal(none.code, 2);
  assert.match(none.err, /none of the 5 decisions matches a pending label or bootstrap entry of .*queries\.jsonl: nothing written/);
});
