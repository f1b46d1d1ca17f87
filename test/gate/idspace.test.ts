/**
 * Id spaces checked before a verdict (src/gate/idspace.ts, in-process): results whose ids can never match the golden
 * set's are exit 2 with one golden id and one returned id side by side, never "recall_at_3 = 0.0000 is below the
 * floor"; real misses with matching ids stay quality results.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GoldenQuerySchema, type Reference } from '../../src/golden/schema.ts';
import type { Floors } from '../../src/gate/floors.ts';
import { idForm } from '../../src/gate/idspace.ts';
import { boundHits, maxHitContent, multiDocumentHits } from '../../src/results/evidence.ts';
import { gateColumn, verdictLines } from '../../src/gate/verdict.ts';
import type { Column, QueryRecord } from '../../src/results/read.ts';

const floors: Floors = { overall: { recall_at_3: 0.6 }, categories: {}, metric_family: 'strict' };

type Hit = { chunkId: string; documentId: string; path?: string };

/** A query with `refs`, the service's hits, and whether an expected id was found among them. */
function q(id: string, refs: Partial<Reference>[], hits: Hit[], found: boolean): QueryRecord {
  const r = found ? 1 : 0;
  return {
    id, query: id, category: 'c', language: 'en', tags: [], error: null,
    golden: GoldenQuerySchema.parse({ id, query: id, language: 'en', category: 'c', expected: refs.map((x) => ({ grade: 3, relevant: true, ...x })) }),
    retrieval: { recall_at_1: r, recall_at_3: r, recall_at_5: r, recall_at_10: r, trec_recall_at_10: r, mrr: r, ndcg_at_10: r, precision_at_5: r / 5, ap_at_10: r, found: r, best_rank: found ? 1 : null, last_expected_rank: null, answerable_at_10: null, relevant_refs: refs.length, level: 'document', bucket: found ? 'rank1_hit' : 'not_diagnosed' },
    routing: null, integrity: [], latencyMs: 1,
    top: hits.map((h, i) => ({ rank: i + 1, score: 1 - i / 10, content: '', ...h })),
    promptfooPass: found, judged: false,
  };
}
const col = (queries: QueryRecord[]): Column => ({ index: 0, label: 'svc', providerId: 'p', config: { url: 'http://127.0.0.1:9/search' }, namedScores: {}, queries, counts: null, selection: { id: 's', size: queries.length }, identity: null });
const slugHit = (s: string): Hit => ({ chunkId: `${s}-0`, documentId: s });

describe('id spaces', () => {
  it('forms: chunk ids, paths, numbers, names', () => {
    assert.equal(idForm('brakes/disc-brake-squeal.md'), 'path');
    assert.equal(idForm('disc-brake-squeal.md'), 'path');
    assert.equal(idForm('disc-brake-squeal'), 'name');
    assert.equal(idForm('disc-brake-squeal#c300-2'), 'chunk id');
    assert.equal(idForm('4711'), 'number');
    assert.equal(idForm('v1.2'), 'name');
  });

  it('a slug-returning service against a golden set of paths: exit 2, the pair side by side, no floor line', () => {
    const qs = [
      q('brake-squeal', [{ path: 'brakes/disc-brake-squeal.md' }], [slugHit('pad-wear'), slugHit('disc-brake-squeal'), slugHit('rotor')], false),
      q('tyre', [{ path: 'tyres/pressure.md' }], [slugHit('pressure'), slugHit('rotor')], false),
    ];
    const v = gateColumn(col(qs), { floors, floorsSource: 'gate.yaml' });
    assert.equal(v.code, 2);
    const text = verdictLines(v).join('\n');
    assert.match(v.reasons[0]!, /^ids: no expected id of any of the 2 queries with results appears in their results: the golden set names documents by paths, the service by names; nothing was measured/);
    assert.match(text, /golden set {2}path {9}brakes\/disc-brake-squeal\.md {2}\(query brake-squeal\)/);
    assert.match(text, /service {5}document_id {2}disc-brake-squeal {12}\(rank 2, the same document by its name\?\)/);
    assert.match(text, /docs\/adopting\.md, section "How returned ids are matched to the golden set"/);
    assert.doesNotMatch(text, /below the floor|on this incomplete evidence/);
  });

  it('chunk ids against document ids, and numbers against names, are other spaces too', () => {
    const chunks = gateColumn(col([q('a', [{ chunk_id: 'kb-12#c300-0' }], [{ chunkId: 'chunk_000017', documentId: 'kb-12' }], false)]), { floors, floorsSource: 'gate.yaml' });
    assert.equal(chunks.code, 2);
    assert.match(chunks.reasons[0]!, /by chunk ids, the service by names/);
    const nums = gateColumn(col([q('a', [{ doc_id: '4711' }], [{ chunkId: 'x', documentId: 'doc-4711' }], false)]), { floors, floorsSource: 'gate.yaml' });
    assert.equal(nums.code, 2);
    assert.match(verdictLines(nums).join('\n'), /golden set {2}doc_id {7}4711 +\(query a\)\n {4}service {5}document_id {2}doc-4711 {2}\(rank 1, the same document/);
  });

  it('ids of the same form that never match: exit 2 from 3 queries on; fewer are left to the floors', () => {
    const prefixed = (n: number) => Array.from({ length: n }, (_, i) => q(`q${i}`, [{ path: `brakes/doc-${i}.md` }], [{ chunkId: `c${i}`, documentId: `kb/brakes/doc-${i}`, path: `kb/brakes/doc-${i}` }], false));
    const three = gateColumn(col(prefixed(3)), { floors, floorsSource: 'gate.yaml' });
    assert.equal(three.code, 2);
    assert.match(three.reasons[0]!, /the golden ids and the returned ids have the same form \(paths\) but never match/);
    const two = gateColumn(col(prefixed(2)), { floors, floorsSource: 'gate.yaml' });
    assert.equal(two.code, 1, 'two real misses are a quality result');
    assert.match(two.reasons[0]!, /recall_at_3 = 0\.0000 is below the floor 0\.6/);
  });

  it('per query: ids of the golden form for 1 query of 5 is no alibi for the other 4 (exit 2, named); passages, empty results and path fields are not id mismatches', () => {
    const mixed = [q('hit', [{ path: 'a/x.md' }], [{ chunkId: 'x#0', documentId: 'x', path: 'a/x.md' }], true), ...Array.from({ length: 4 }, (_, i) => q(`m${i}`, [{ path: `a/m${i}.md` }], [slugHit('zzz')], false))];
    const v = gateColumn(col(mixed), { floors, floorsSource: 'gate.yaml' });
    assert.equal(v.code, 2);
    assert.match(v.reasons[0]!, /^ids: 4 of the 5 queries with results got ids of another form than the golden set's \(the golden set names their documents by paths, the service by names\): m0, m1, m2, m3; they cannot score/);
    assert.doesNotMatch(verdictLines(v).join('\n'), /below the floor/);
    const passages = Array.from({ length: 4 }, (_, i) => q(`p${i}`, [{ passage_substring: 'squeal comes from glazed pads' }], [slugHit('zzz')], false));
    assert.equal(gateColumn(col(passages), { floors, floorsSource: 'gate.yaml' }).code, 1, 'passages match by content, not by id');
    const empty = Array.from({ length: 4 }, (_, i) => q(`e${i}`, [{ path: `a/e${i}.md` }], [], false));
    assert.ok(!gateColumn(col(empty), { floors, floorsSource: 'gate.yaml' }).reasons.some((r) => r.startsWith('ids:')), 'no results is not an id mismatch');
  });

  it('wrong documents in the right form are measured (exit 1 by the floors), not refused: corpus paths, known ids, the golden form', () => {
    // a service returning paths of the corpus (the golden ids of other queries), never the expected one, for every query
    const paths = ['brakes/pads.md', 'brakes/rotor.md', 'tyres/pressure.md', 'tyres/tread.md', 'oil/change.md'];
    const wrong = paths.map((p, i) => q(`w${i}`, [{ path: p }], [{ chunkId: `${paths[(i + 1) % 5]}#c300-0`, documentId: paths[(i + 1) % 5]! }, { chunkId: `${paths[(i + 2) % 5]}#c300-0`, documentId: paths[(i + 2) % 5]! }], false));
    const v = gateColumn(col(wrong), { floors, floorsSource: 'gate.yaml' });
    assert.equal(v.code, 1, v.reasons.join('\n'));
    assert.match(v.reasons[0]!, /recall_at_3 = 0\.0000 is below the floor 0\.6/);
    // paths of the run's corpus that no golden entry names are known too
    const other = paths.map((p, i) => q(`o${i}`, [{ path: p }], [{ chunkId: `x${i}`, documentId: `unrelated-${i}` }], false));
    const docs = Object.fromEntries(paths.map((_, i) => [`unrelated-${i}`, {}]));
    assert.equal(gateColumn(col(other), { floors, floorsSource: 'gate.yaml' }).code, 2, 'names against paths, corpus unknown: another id space');
    assert.equal(gateColumn(col(other), { floors, floorsSource: 'gate.yaml', corpus: { known: true, corpus: 'c', corpusId: 'x', documents: docs as never } }).code, 1);
  });

  it('bounded evidence: content over 16 characters per chunk token is cut and counted; one hit holding the passages of several golden documents is exit 2', () => {
    const { hits, cut } = boundHits([{ content: 'x'.repeat(5000) }, { content: 'short' }], 300);
    assert.equal(maxHitContent(300), 4800);
    assert.equal(maxHitContent(undefined), 4800);
    assert.equal(hits[0]!.content.length, 4800);
    assert.deepEqual(cut, { hits: 1, maxChars: 4800, longest: 5000 });
    assert.equal(boundHits([{ content: 'y'.repeat(16000) }], 1000).cut, null, 'a column declaring 1000-token chunks allows 16,000 characters');
    const pa = 'the lamp was covered by a clay pot for a long time';
    const pb = 'the river carries sorrow down to the open sea at last';
    const g = (id: string, passage: string, book: string, content: string, found: boolean): QueryRecord => {
      const r = q(id, [{ passage_substring: passage, book_slug: book }], [{ chunkId: `${id}-c`, documentId: 'd' }], found);
      return { ...r, top: [{ ...r.top[0]!, content }] };
    };
    const dump = `Intro. ${pa}. More text. ${pb}. End.`;
    const qs = [g('a', pa, 'lamp', dump, true), g('b', pb, 'river', dump, true), g('c', pa, 'lamp', `Only ${pa}.`, true)];
    const v = gateColumn({ ...col(qs), queries: qs.map((x, i) => (i === 0 ? { ...x, contentCut: { hits: 1, maxChars: 4800, longest: 208000 } } : x)) }, { floors, floorsSource: 'gate.yaml' });
    assert.equal(v.code, 2);
    assert.match(v.reasons[0]!, /^evidence: 2 hit\(s\) of 2 queries each contain the expected passages of several distinct golden documents \(query a rank 1 'a-c': book lamp, book river\): a hit is one chunk/);
    assert.match(verdictLines(v).join('\n'), /note: LOUD: content cut: 1 hit\(s\) of 1 queries \(a\) returned content longer than the maximum per hit, 4800 characters .*the longest had 208000/);
    assert.deepEqual(multiDocumentHits(qs.slice(2)), [], 'one document: nothing to flag');
  });
});

describe('id spaces with a baseline present', () => {
  it('the id hint comes first, before "another corpus"; no regression FAIL line and no drop drawn from the zeros', async () => {
    const { baselineFrom } = await import('../../src/gate/baseline.ts');
    const { buildReport } = await import('../../src/results/summary.ts');
    const { deltaSection } = await import('../../src/report/markdown.ts');
    const good = [q('brake-squeal', [{ path: 'brakes/disc-brake-squeal.md' }], [{ chunkId: 'c1', documentId: 'brakes/disc-brake-squeal.md' }], true), q('tyre', [{ path: 'tyres/pressure.md' }], [{ chunkId: 'c2', documentId: 'tyres/pressure.md' }], true)];
    const baseCol: Column = { ...col(good), identity: { corpus: 'kb', corpusId: 'abc', engine: 'pglite', variant: 'c300' } };
    const baseline = baselineFrom(baseCol, buildReport(baseCol));
    const slugs = [
      q('brake-squeal', [{ path: 'brakes/disc-brake-squeal.md' }], [slugHit('pad-wear'), slugHit('disc-brake-squeal')], false),
      q('tyre', [{ path: 'tyres/pressure.md' }], [slugHit('pressure')], false),
    ];
    const v = gateColumn(col(slugs), { floors: { ...floors, regression: { baseline: 'b.json', max_drop: 0.02, alpha: 0.05, metrics: ['recall_at_3'], accept_mismatch: false } }, floorsSource: 'gate.yaml', baseline: { path: 'b.json', data: baseline } });
    assert.equal(v.code, 2);
    assert.match(v.reasons[0]!, /^ids: no expected id/);
    assert.ok(v.reasons.some((r) => /another corpus/.test(r)), 'the corpus mismatch is still said, after the id hint');
    const text = verdictLines(v).join('\n');
    assert.doesNotMatch(text, /FAIL overall|regression:/);
    assert.match(text, /^rankgate gate ERROR \(exit 2\) for 'svc': .*nothing measured: ids: no expected id/);
    assert.equal(v.regression, null);
    assert.equal(v.delta!.regressed.length, 0);
    assert.match(deltaSection(v.delta), /nothing to compare: the result ids cannot match the golden set's/);
  });
});
