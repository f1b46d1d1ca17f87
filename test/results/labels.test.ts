/**
 * A judgments file's labels in scoring (docs/judgments.md "Labels in an eval"): the strict figures never change, the
 * `+ labels` figures computed by hand, the golden set above every label, Judged@k / condensed nDCG@10 / bpref counting
 * labels as judgments; document-level golden sets key labels by path.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scoreRanking, rankNamedScores, queryLabelsOf } from '../../src/results/score.ts';
import type { GoldenQuery } from '../../src/golden/schema.ts';
import type { HarnessOutput, QueryLabel } from '../../src/results/types.ts';

const close = (a: number | null | undefined, b: number, what: string) => assert.ok(typeof a === 'number' && Math.abs(a - b) < 1e-12, `${what}: ${a} != ${b}`);

function golden(expected: GoldenQuery['expected']): GoldenQuery {
  return { id: 'q1', query: 'how to reset', language: 'en', category: 'direct', tags: [], slices: {}, expected, expected_routing: 'search' } as GoldenQuery;
}
function output(ids: string[], path = false): HarnessOutput {
  const hits = ids.map((id, i) => ({ rank: i + 1, chunkId: path ? `${id}#c300-0` : id, documentId: id, score: 1 - i / 10, content: `text ${id}`, ...(path ? { path: `docs/${id}.md` } : {}) }));
  return { ids: hits.map((h) => h.chunkId), hits, routing: null, practice_bridge: false, safety: false, latencyMs: 1 };
}

// golden: c1 (grade 3, relevant), c9 (grade 1, graded only); returned: c5 c1 c7 c8
const g = golden([
  { chunk_id: 'c1', grade: 3, relevant: true },
  { chunk_id: 'c9', grade: 1, relevant: false },
]);
const out = output(['c5', 'c1', 'c7', 'c8']);
const labels: QueryLabel[] = [
  { doc: 'c5', grade: 3, source: 'llm' },
  { doc: 'c7', grade: 1, source: 'chair' },
  { doc: 'c1', grade: 0, source: 'llm' }, // names a golden reference: the golden set wins
  { doc: 'c20', grade: 2, source: 'llm' }, // not returned: in Recall@10's denominator and nDCG's ideal
];

test('strict figures unchanged by labels; + labels computed by hand', () => {
  const strict = scoreRanking(g, out)!;
  const lab = scoreRanking(g, out, undefined, { labels })!;
  for (const k of ['recall_at_3', 'mrr', 'trec_recall_at_10', 'ndcg_at_10', 'recall_at_10', 'ap_at_10'] as const) assert.equal(lab[k], strict[k], k);
  assert.equal(strict.recall_at_3, 1);
  assert.equal(strict.mrr, 1 / 2);
  close(strict.ndcg_at_10, 3 / Math.log2(3) / (3 + 1 / Math.log2(3)), 'strict nDCG@10');
  assert.equal(strict.labelled, undefined, 'no judgments file: no + labels figures');
  const l = lab.labelled!;
  // relevant with labels: c1 (golden), c5 (label 3), c20 (label 2, not returned); c7 (label 1) is judged non-relevant
  assert.equal(l.relevant, 3);
  assert.equal(l.recall_at_3, 1);
  assert.equal(l.mrr, 1, 'c5 at rank 1 is relevant by its label');
  close(l.trec_recall_at_10, 2 / 3, 'Recall@10: c5 and c1 of c1, c5, c20');
  const dcg = 3 + 3 / Math.log2(3) + 1 / Math.log2(4);
  const ideal = 3 + 3 / Math.log2(3) + 2 / Math.log2(4) + 1 / Math.log2(5) + 1 / Math.log2(6);
  close(l.ndcg_at_10, dcg / ideal, '+ labels nDCG@10');
  assert.equal(l.applied, 3, 'c5, c7, c20; the label of c1 gives way to the golden reference');
  assert.equal(l.unreviewed, 2, 'c5 and c20 are llm labels; c7 is a chair label');
});

test('Judged@k, condensed nDCG@10 and bpref count labels (grade 0 included) as judgments', () => {
  const strict = scoreRanking(g, out)!;
  assert.equal(strict.judged_at_10, 1 / 4, 'only c1 of c5 c1 c7 c8 has a golden label');
  assert.equal(strict.judged_at_3, 1 / 3);
  const lab = scoreRanking(g, out, undefined, { labels })!;
  assert.equal(lab.judged_at_10, 3 / 4, 'c5, c1, c7 labelled; c8 not');
  assert.equal(lab.judged_at_3, 1);
  close(lab.condensed_ndcg_at_10, lab.labelled!.ndcg_at_10, 'c8 removed changes nothing here: it has no gain');
  // bpref: R = 3 (c1, c5, c20), N = 2 judged non-relevant (c9, c7); c5 and c1 ranked with no judged non-relevant above
  close(lab.bpref, 2 / 3, 'bpref');
  // a label of grade 0 is a judgment too
  const zero = scoreRanking(g, out, undefined, { labels: [{ doc: 'c8', grade: 0, source: 'llm' }] })!;
  assert.equal(zero.judged_at_10, 2 / 4);
  assert.equal(zero.labelled!.recall_at_3, strict.recall_at_3);
  // an empty ranking has no Judged@k (ir_measures gives it no value): null, not 0
  assert.equal(scoreRanking(g, output([]))!.judged_at_10, null);
});

test('an empty label list: the + labels figures equal the strict ones', () => {
  const strict = scoreRanking(g, out)!;
  const l = scoreRanking(g, out, undefined, { labels: [] })!.labelled!;
  assert.deepEqual([l.recall_at_3, l.mrr, l.ndcg_at_10, l.trec_recall_at_10], [strict.recall_at_3, strict.mrr, strict.ndcg_at_10, strict.trec_recall_at_10]);
  assert.equal(l.applied, 0);
});

test('document-level golden sets key labels by path; the named scores carry both families', () => {
  const gp = golden([{ path: 'docs/a.md', grade: 3, relevant: true }]);
  const o = output(['b', 'a', 'c'], true);
  const s = scoreRanking(gp, o, undefined, { labels: [{ doc: 'docs/b.md', grade: 3, source: 'chair' }, { doc: 'b', grade: 0, source: 'llm' }] })!;
  assert.equal(s.level, 'document');
  assert.equal(s.recall_at_3, 1);
  assert.equal(s.mrr, 1 / 2, 'strict: a at rank 2');
  assert.equal(s.labelled!.mrr, 1, 'the label of docs/b.md (its path) makes rank 1 relevant; the one naming its id matches nothing');
  assert.equal(s.judged_at_10, 2 / 3);
  const ns = rankNamedScores('direct', s);
  assert.equal(ns.share_judged_at_10, 2 / 3);
  assert.equal(ns.n_share_judged, 1);
  assert.equal(ns.share_judged_at_10_direct, 2 / 3);
  assert.equal(ns.labelled_mrr, 1);
  assert.equal(ns.n_labelled, 1);
  assert.equal(ns.mrr, 1 / 2);
  assert.ok(!Object.keys(ns).some((k) => /^judged_/.test(k)), 'no key of the relevance judge family (judged_*)');
});

test('labels on a row are checked: a grade out of range is an error naming it', () => {
  assert.equal(queryLabelsOf(undefined), undefined);
  assert.deepEqual(queryLabelsOf([{ doc: 'a', grade: 2, source: 'llm' }]), [{ doc: 'a', grade: 2, source: 'llm' }]);
  assert.throws(() => queryLabelsOf([{ doc: 'a', grade: 7, source: 'llm' }], 'results[3].testCase.metadata.labels'), /results\[3\]\.testCase\.metadata\.labels\[0\]: expected \{doc, grade 0-3/);
});
