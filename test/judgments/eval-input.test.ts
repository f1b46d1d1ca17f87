/**
 * The judgments file as an eval input: each selected query's effective labels on its test case (chair over bootstrap
 * over llm), the file's backlog, labels of queries outside the golden set counted and said (not fatal), a bad file one
 * line before any query; through the tests loader (RANKGATE_JUDGMENTS) and the rank assertion.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { attachLabels, judgmentsSetting, loadEvalLabels, outsideLine } from '../../src/judgments/eval-input.ts';
import { generateTests } from '../../datasets/tests.ts';
import { rank } from '../../assertions/rank.ts';
import { UserError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'rg-eval-input-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const line = (o: Record<string, unknown>) => JSON.stringify(o);
const llm = { source: 'llm', provider: 'openai:chat:m', model: 'm', prompt: 'grade-v1' };
function judgments(name: string, extra: string[] = []): string {
  const p = join(dir, name);
  writeFileSync(
    p,
    [
      '{"rankgate_judgments":1}',
      line({ query: 'q1', doc: 'c5', grade: 0, ...llm, time: '2026-11-03T10:00:00Z' }),
      line({ query: 'q1', doc: 'c5', grade: 3, source: 'chair', reviewer: 'dafna', time: '2026-11-04T10:00:00Z', was: { source: 'llm', grade: 0 } }),
      line({ query: 'q1', doc: 'c7', grade: 2, ...llm, time: '2026-11-02T10:00:00Z' }),
      line({ query: 'q1', doc: 'c8', grade: 1, source: 'bootstrap', evidence: { feedback: 2 }, time: '2026-11-05T10:00:00Z' }),
      line({ query: 'gone-7', doc: 'c1', grade: 3, ...llm, time: '2026-11-01T10:00:00Z' }),
      ...extra,
      '',
    ].join('\n'),
  );
  return p;
}

test("each query's effective labels (chair over llm), the backlog, and labels of queries not in the golden set counted", async () => {
  const p = judgments('j.jsonl');
  const { byQuery, info } = await loadEvalLabels(p, new Set(['q1', 'q2']));
  assert.deepEqual(byQuery.get('q1'), [
    { doc: 'c5', grade: 3, source: 'chair' },
    { doc: 'c7', grade: 2, source: 'llm' },
    { doc: 'c8', grade: 1, source: 'bootstrap' },
  ]);
  assert.equal(byQuery.get('q2'), undefined);
  assert.equal(info.labels, 5);
  assert.deepEqual(info.sources, { chair: 1, bootstrap: 1, llm: 3 });
  // pending: c7 (llm), c8 (bootstrap), gone-7's; c5's llm label was reviewed by the chair
  assert.equal(info.pending, 3);
  assert.equal(info.oldest_pending, '2026-11-01T10:00:00.000Z');
  assert.match(info.digest, /^[0-9a-f]{16}$/);
  assert.deepEqual(info.outside, { labels: 1, queries: 1, examples: ['gone-7'], scope: 'golden set' });
  assert.equal(outsideLine(info), `judgments ${p}: 1 label(s) of 1 query in no selected golden file (renamed or deleted queries?), e.g. gone-7: not used`);
});

test('a bad judgments file is one line naming the file, the line and the field', async () => {
  const p = judgments('bad.jsonl', [line({ query: 'q1', doc: 'c9', grade: 4, ...llm, time: '2026-11-01T00:00:00Z' })]);
  await assert.rejects(loadEvalLabels(p, new Set(['q1'])), (e: unknown) => e instanceof UserError && e.message === `${p}:7: field 'grade': expected a whole grade from 0 to 3 (3 direct answer … 0 irrelevant), got 4`);
  const dup = judgments('dup.jsonl', [line({ query: 'q1', doc: 'c7', grade: 1, ...llm, time: '2026-11-01T00:00:00Z' })]);
  await assert.rejects(loadEvalLabels(dup, new Set(['q1'])), /dup\.jsonl:7: query 'q1' doc 'c7' source llm: labelled twice \(also line 4\)/);
});

test('RANKGATE_JUDGMENTS wins over the loader config; the loader puts labels and the file on every test case', async () => {
  assert.equal(judgmentsSetting({ judgments: 'a.jsonl' }, {}), 'a.jsonl');
  assert.equal(judgmentsSetting({ judgments: 'a.jsonl' }, { RANKGATE_JUDGMENTS: 'b.jsonl' }), 'b.jsonl');
  assert.equal(judgmentsSetting(undefined, {}), undefined);
  const golden = join(dir, 'golden.yaml');
  writeFileSync(golden, ['- id: q1', '  query: reset my password', '  expected_paths: [a.md]', '- id: q2', '  query: change my email', '  expected_paths: [b.md]', ''].join('\n'));
  const p = join(dir, 'paths.jsonl');
  writeFileSync(p, ['{"rankgate_judgments":1}', line({ query: 'q1', doc: 'c.md', grade: 3, ...llm, time: '2026-11-01T00:00:00Z' }), ''].join('\n'));
  const saved = { g: process.env.RANKGATE_GOLDEN, j: process.env.RANKGATE_JUDGMENTS };
  process.env.RANKGATE_GOLDEN = golden;
  process.env.RANKGATE_JUDGMENTS = p;
  try {
    const tests = await generateTests();
    const m = tests.map((t) => t.metadata as unknown as { id: string; labels: unknown[]; judgments: { file: string; labels: number } });
    assert.deepEqual(m.map((x) => [x.id, x.labels]), [
      ['q1', [{ doc: 'c.md', grade: 3, source: 'llm' }]],
      ['q2', []],
    ]);
    assert.equal(m[0]!.judgments.file, p);
    // the rank assertion scores the + labels figures from metadata.labels: c.md at rank 1 (label 3), a.md at rank 2
    const hits = ['c.md', 'a.md'].map((path, i) => ({ rank: i + 1, chunkId: `${path}#0`, documentId: path, path, score: 1, content: 'x' }));
    const r = rank({ ids: hits.map((h) => h.chunkId), hits, routing: null, practice_bridge: false, safety: false, latencyMs: 1 }, { test: { metadata: m[0] as unknown as Record<string, unknown> } });
    assert.equal(r.namedScores!.mrr, 1 / 2, 'strict: a.md at rank 2');
    assert.equal(r.namedScores!.labelled_mrr, 1, '+ labels: c.md at rank 1 has grade 3');
    assert.equal(r.namedScores!.share_judged_at_10, 1);
    // a bad file under the promptfoo CLI is exit 2 from the loader; called from code, the UserError
    writeFileSync(p, '{"rankgate_judgments":1}\n{"query":"q1"}\n');
    await assert.rejects(generateTests(), (e: unknown) => e instanceof UserError && /paths\.jsonl:2: field 'doc': expected a non-empty string/.test(e.message));
  } finally {
    for (const [k, v] of [['RANKGATE_GOLDEN', saved.g], ['RANKGATE_JUDGMENTS', saved.j]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});

test('attachLabels says "outside this selection" when a filter or shard left queries out', async () => {
  const p = judgments('sel.jsonl');
  const tests = [{ vars: { query: 'x' }, metadata: { id: 'q1', category: 'c', language: 'en', tags: '', golden: {} as never, selection: { id: 's', size: 1, files: [], filter: { category: ['c'], of: 3 } } } }];
  const { info } = await attachLabels(tests, p);
  assert.equal(info.outside.scope, 'selection');
  assert.match(outsideLine(info)!, /outside this selection \(filtered or sharded out, or in no golden file\)/);
});
