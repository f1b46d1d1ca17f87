/**
 * Provisional evidence in every verdict and in the baseline (docs/judgments.md "Provisional evidence"): bootstrap-only
 * golden entries (unless chair labels cover them), the labels the + labels figures rest on, the review backlog;
 * gate.yaml's min_reviewed_share (exit 2 under it); the lower-bound warning when a column's Judged@10 is well below its
 * reference's, with condensed nDCG@10 and bpref beside, in the verdict, the Markdown and the PR comment.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseResultsObject } from '../../src/results/read.ts';
import { gateColumn, verdictLines, JUDGED_GAP } from '../../src/gate/verdict.ts';
import { parseFloors, type Floors } from '../../src/gate/floors.ts';
import { baselineFrom, parseBaselineText, sealBaseline } from '../../src/gate/baseline.ts';
import { renderComment, renderMarkdown } from '../../src/report/markdown.ts';
import { UserError } from '../../src/errors.ts';

const info = { file: 'judgments.jsonl', digest: '0123456789abcdef', labels: 9, sources: { chair: 2, bootstrap: 0, llm: 7 }, pending: 7, oldest_pending: '2026-10-02T08:00:00.000Z', outside: { labels: 0, queries: 0, examples: [], scope: 'golden set' } };

/**
 * Column 'A' (and, with `b`, column 'B'): 4 queries q0..q3, each expecting c<i>-ref; q0..q2 are `source: bootstrap`, and
 * q2's reference has a chair label (reviewed through the judgments file). A returns c<i>-ref, c<i>-x, c<i>-y; B returns
 * c<i>-u, c<i>-v, c<i>-ref. The labels: c<i>-x (llm, grade 3) and c<i>-y (llm, grade 0) of every query.
 */
function doc(b = false, withLabels = true) {
  const cols = b ? ['A', 'B'] : ['A'];
  const rows: unknown[] = [];
  cols.forEach((label, promptIdx) => {
    for (let i = 0; i < 4; i++) {
      const golden = { id: `q${i}`, query: `query ${i}`, language: 'en', category: i % 2 ? 'odd' : 'even', expected: [{ chunk_id: `c${i}-ref`, grade: 3, relevant: true }], ...(i < 3 ? { source: 'bootstrap' } : {}) };
      const ids = promptIdx === 0 ? [`c${i}-ref`, `c${i}-x`, `c${i}-y`] : [`c${i}-u`, `c${i}-v`, `c${i}-ref`];
      const hits = ids.map((id, r) => ({ rank: r + 1, chunkId: id, documentId: id, score: 1 - r / 10, content: `text ${id}` }));
      const labels = [
        { doc: `c${i}-x`, grade: 3, source: 'llm' },
        { doc: `c${i}-y`, grade: 0, source: 'llm' },
        ...(i === 2 ? [{ doc: 'c2-ref', grade: 3, source: 'chair' }] : []),
      ];
      rows.push({
        promptIdx,
        testIdx: i,
        success: true,
        testCase: { vars: { query: golden.query }, metadata: { golden, ...(withLabels ? { labels, judgments: info } : {}) } },
        provider: { id: 'p', label },
        response: { output: 'x', metadata: { harness: { ids, hits, routing: null, practice_bridge: false, safety: false, latencyMs: 3 } } },
      });
    }
  });
  return { evalId: 'prov', results: { version: 3, timestamp: '2026-11-28T00:00:00Z', prompts: cols.map((provider) => ({ provider })), results: rows }, config: { providers: cols.map((l) => ({ id: 'p', label: l, config: {} })) } };
}

const floors = (extra: Record<string, unknown> = {}): Floors => parseFloors({ overall: { recall_at_3: 0.5 }, ...extra }, 'gate.yaml');

test('min_reviewed_share is validated like the other keys', () => {
  assert.equal(floors({ min_reviewed_share: 0.8 }).min_reviewed_share, 0.8);
  assert.throws(() => floors({ min_reviewed_share: 1.5 }), (e: unknown) => e instanceof UserError && /^gate\.yaml: min_reviewed_share: expected a share of the gated queries in \[0, 1\]/.test(e.message));
  assert.throws(() => floors({ min_reviewed_sahre: 0.8 }), /unknown key 'min_reviewed_sahre'; did you mean 'min_reviewed_share'/);
  assert.equal(parseFloors({ min_reviewed_share: 0.5 }, 'g.yaml').min_reviewed_share, 0.5, 'a floors file may hold only this key');
});

test('the verdict says the provisional share and the review backlog; the + labels figures beside the strict ones', () => {
  const col = parseResultsObject(doc()).columns[0]!;
  const v = gateColumn(col, { floors: floors(), floorsSource: 'gate.yaml' });
  assert.equal(v.code, 0);
  const p = v.report.provisional!;
  assert.deepEqual([p.gated, p.bootstrap_only, p.reviewed_share, p.examples], [4, 2, 0.5, ['q0', 'q1']], "q2's reference is chair-labelled: reviewed");
  assert.deepEqual(p.backlog, { file: 'judgments.jsonl', pending: 7, oldest_pending: '2026-10-02T08:00:00.000Z' });
  const lines = verdictLines(v);
  assert.equal(
    lines[1],
    '  provisional: 2 of 4 gated queries are bootstrap-only (reviewed share 0.50; e.g. q0, q1) · the + labels figures rest on 8 labels, 8 not reviewed by a person · review backlog: 7 pending, oldest 2026-10-02 (judgments.jsonl)',
  );
  assert.equal(
    lines[2],
    '  + labels (judgments.jsonl, 8 labels applied, 8 not reviewed): Success@3 1.0000 (strict 1.0000) · MRR@10 1.0000 (strict 1.0000) · nDCG@10 1.0000 (strict 1.0000) · Recall@10 1.0000 (strict 1.0000) over 4 queries; the floors are on the strict figures',
  );
  assert.match(renderComment(v.report, null, v), /- ⚠️ \*\*provisional: 2 of 4 gated queries are bootstrap-only/);
  // without a judgments file nothing about labels is said; the bootstrap share still is
  const plain = gateColumn(parseResultsObject(doc(false, false)).columns[0]!, { floors: floors(), floorsSource: 'gate.yaml' });
  assert.equal(plain.provisional, 'provisional: 3 of 4 gated queries are bootstrap-only (reviewed share 0.25; e.g. q0, q1, q2)');
  assert.equal(plain.report.labelled, null);
});

test('under min_reviewed_share the gate exits 2 (not trustworthy), never 1; the baseline records the status', () => {
  const col = parseResultsObject(doc()).columns[0]!;
  const v = gateColumn(col, { floors: floors({ min_reviewed_share: 0.8 }), floorsSource: 'gate.yaml' });
  assert.equal(v.code, 2);
  assert.match(v.reasons[0]!, /^reviewed evidence: 2 of 4 gated queries reviewed \(share 0\.50\) is below min_reviewed_share 0\.8 in gate\.yaml: 2 rest on a bootstrap only \(source: bootstrap, e\.g\. q0, q1\)/);
  assert.equal(gateColumn(col, { floors: floors({ min_reviewed_share: 0.5 }), floorsSource: 'gate.yaml' }).code, 0, 'at the share: passes');
  // column sums only (--no-write): which entries are bootstrap-only cannot be known: exit 2, said
  const sums = { ...col, queries: [], counts: { pass: 4, fail: 0, error: 0 }, namedScores: { n_ranked: 4, recall_at_3: 4, mrr: 4 } };
  const vs = gateColumn(sums, { floors: floors({ min_reviewed_share: 0.8 }), floorsSource: 'gate.yaml' });
  assert.equal(vs.code, 2);
  assert.ok(vs.reasons.some((r) => /^min_reviewed_share 0\.8 in gate\.yaml cannot be checked: which golden entries are bootstrap-only is in the rows/.test(r)), vs.reasons.join('\n'));
  // the baseline: optional fields, read back; absent in an older baseline (still readable); malformed: one line
  const b = sealBaseline(baselineFrom(col, v.report), null);
  assert.equal(b.rankgate_baseline, 1);
  assert.equal(b.provisional!.bootstrap_only, 2);
  assert.deepEqual(b.share_judged, { at_10: 1, at_3: 1 });
  const back = parseBaselineText(JSON.stringify(b), 'b.json');
  assert.deepEqual(back.provisional, b.provisional);
  const { provisional: _p, share_judged: _s, ...old } = b;
  assert.throws(() => parseBaselineText(JSON.stringify(old), 'old.json'), /identity\.seal does not match/, 'the seal covers the whole file: provisional too');
  assert.equal(parseBaselineText(JSON.stringify(sealBaseline(old, null)), 'old.json').provisional, undefined, 'a baseline without the fields (an older rankgate) reads');
  assert.throws(() => parseBaselineText(JSON.stringify(sealBaseline({ ...b, provisional: { gated: 4, bootstrap_only: 9 } as never }, null)), 'bad.json'), /bad\.json: provisional: expected \{gated, bootstrap_only <= gated/);
  // a later run against that baseline is told its baseline was provisional
  const later = gateColumn(col, { floors: floors({ regression: { baseline: 'b.json' } }), floorsSource: 'gate.yaml', baseline: { path: 'b.json', data: back } });
  assert.ok(later.notes.some((n) => n.startsWith('baseline b.json was written on provisional evidence: 2 of 4 gated queries are bootstrap-only')), later.notes.join('\n'));
});

test('Judged@10 well below the reference column: LOUD, the strict figures a lower bound, condensed nDCG@10 and bpref beside', () => {
  const parsed = parseResultsObject(doc(true));
  const [a, b] = parsed.columns;
  const va = gateColumn(a!, { floors: floors(), floorsSource: 'gate.yaml' });
  // A: c-ref (golden), c-x, c-y (labels): every result judged; B: c-u, c-v unlabelled, c-ref golden
  assert.equal(va.report.share_judged!.at_10, 1);
  const vb = gateColumn(b!, { floors: floors(), floorsSource: 'gate.yaml', judgedReference: { label: 'A', at_10: va.report.share_judged!.at_10 }, resultsPath: 'sweep.jsonl' });
  assert.ok(1 - vb.report.share_judged!.at_10! > JUDGED_GAP);
  assert.equal(vb.report.judged_gap!.gap_pts, 66.7);
  const loud = vb.notes.find((n) => n.startsWith('LOUD: Judged@10'))!;
  assert.match(
    loud,
    /^LOUD: Judged@10 0\.33 is 66\.7 points below 'A' \(1\.00\): the strict figures of 'B' are a lower bound \(a result nobody labelled counts as a miss\); judge the gap: rankgate judge pool sweep\.jsonl · beside the strict nDCG@10 0\.5000: condensed nDCG@10 0\.6131, bpref 0\.5000$/,
  );
  // by hand: B ranks u v ref; condensed: ref at 1, DCG 3, ideal 3 + 3/log2 3 (ref and the label of x, 3) = 0.6131; bpref:
  // R = 2 (ref, x), ref with no judged non-relevant above: 1/2
  assert.equal(vb.code, va.code, 'a note: the exit code is unchanged');
  // + labels beside the strict: the label of x (grade 3, a document B did not return) halves B's Recall@10
  assert.match(renderMarkdown(vb.report, null, undefined, vb), /\| Recall@10 \| 1\.000 \| 0\.500 \|/);
  assert.match(renderMarkdown(vb.report, null, undefined, vb), /\*\*⚠️ Judged@10 is 66\.7 points below `A` \(1\.00\): the strict figures of this column are a lower bound\*\*/);
  // within 10 points, or against itself: nothing said
  const near = gateColumn(b!, { floors: floors(), floorsSource: 'gate.yaml', judgedReference: { label: 'A', at_10: 0.4 } });
  assert.equal(near.report.judged_gap ?? null, null);
  assert.ok(!near.notes.some((n) => n.startsWith('LOUD: Judged@10')));
});
