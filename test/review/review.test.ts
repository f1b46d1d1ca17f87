/**
 * The blind review (criterion 4), src/review: the population and blinding of an export, the one text rule of the page,
 * import's checks and statistics, the evidence the verdict re-derives, and the reproductions of issue 43 (P6 a
 * hand-written result, P7 one reviewer under three names, P8 a judge's ratings relabelled human, P9 the key's labels
 * swapped, W6 a judge that corrects itself, S3 a world-readable key), each ending in a refusal or "not counted".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseResultsObject, type ParsedResults } from '../../src/results/read.ts';
import { compactHarness, shownText } from '../../src/results/compact.ts';
import { buildReviewExport, shownHits, type ExportOptions } from '../../src/review/export.ts';
import { candidateSide, columnRef, judgeMac, judgeSetDigest, keyDigest, keyMac, parseReviewKey, sampleIds } from '../../src/review/key.ts';
import { deriveReview, parseRatings } from '../../src/review/import.ts';
import { howToReview, loadReviewEvidence, readReviewResult, reviewForGate, sealResult, type FileReader } from '../../src/review/evidence.ts';
import type { RefReader } from '../../src/util/git.ts';
import { normaliseReviewer } from '../../src/review/names.ts';
import type { RatingsDoc, ReviewKey, ReviewResult } from '../../src/review/types.ts';
import { krippendorffAlphaInterval } from '../../src/metrics/agreement.ts';
import { shippingCriteria } from '../../src/gate/shipping.ts';
import { renderReviewPage } from '../../src/report/html/review.ts';
import { sealText, canonicalJson } from '../../src/util/seal.ts';
import { run as reviewCli } from '../../src/cli/review.ts';
import { capture } from '../helpers/capture.ts';
import { leaks, reviewResultsDoc } from '../helpers/review-fixture.ts';

const SECRET = 'ab'.repeat(32);
const EXPORT_ID = '0123456789abcdef0123456789abcdef';
const SEAL = Buffer.from('s'.repeat(40));

function exportOf(doc: unknown, opts: Partial<ExportOptions> = {}) {
  const parsed: ParsedResults = parseResultsObject(doc, 'r.json');
  const rows = (doc as { results: { results: unknown[] } }).results.results;
  return { parsed, ...buildReviewExport('r.json', parsed, rows, { baseline: parsed.columns[0]!, candidate: parsed.columns[1]!, secret: SECRET, exportId: EXPORT_ID, created: '2026-01-01T00:00:00Z', ...opts }) };
}

test('blinding: a seeded sample, X/Y per item from the keyed HMAC bound to the two columns, the lists unblind to the right columns', () => {
  const doc = reviewResultsDoc(40);
  const a = exportOf(doc, { queries: 10, seed: 7 });
  const b = exportOf(doc, { queries: 10, seed: 7 });
  assert.deepEqual(a.page, b.page, 'same seed and key: the same page');
  assert.equal(a.page.items.length, 10);
  assert.deepEqual(a.key.assignment.map((i) => i.id), sampleIds(a.parsed.columns[0]!.queries.map((q) => q.id), 10, 7));
  assert.deepEqual(a.page.items.map((i) => i.item), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'neutral item numbers');
  assert.notDeepEqual(exportOf(doc, { queries: 10, seed: 8 }).key.assignment.map((i) => i.id), a.key.assignment.map((i) => i.id), 'another seed, another sample');
  const other = exportOf(doc, { queries: 40, seed: 7, secret: 'cd'.repeat(32) });
  const same = exportOf(doc, { queries: 40, seed: 7 });
  assert.notDeepEqual(other.key.assignment, same.key.assignment, 'the side comes from the secret, not the seed');
  const sides = same.key.assignment.map((x) => x.candidate);
  assert.ok(sides.includes('X') && sides.includes('Y'), 'both orders occur over 40 queries');
  const refs = { b: columnRef(same.parsed.columns[0]!), c: columnRef(same.parsed.columns[1]!) };
  for (const { id, candidate } of same.key.assignment) assert.equal(candidate, candidateSide(SECRET, EXPORT_ID, refs.b, refs.c, id));
  // the columns are in the MAC input: the same secret with the refs swapped gives other sides
  assert.notDeepEqual(same.key.assignment.map((x) => candidateSide(SECRET, EXPORT_ID, refs.c, refs.b, x.id)), sides);
  for (const it of same.page.items) {
    const side = same.key.assignment[it.item - 1]!.candidate;
    const base = side === 'X' ? 'Y' : 'X';
    assert.equal(it[side].length, 5);
    assert.ok(it[side].every((h) => /^Lamp note \d+\.1\.\d$/.test(h.title)), `item ${it.item}: the candidate on ${side}`);
    assert.ok(it[base].every((h) => /^Lamp note \d+\.0\.\d$/.test(h.title)), `item ${it.item}: the baseline on ${base}`);
    assert.deepEqual(Object.keys(it[side][0]!).sort(), ['text', 'title'], 'a shown hit is its title and text only');
  }
  assert.equal(same.page.keyDigest, keyDigest(same.key));
  assert.equal(same.key.mac, keyMac(same.key));
});

test('the population is every query both columns answered: failed expectations stay in, only rows without a ranking are left out and named; identical pairs counted', () => {
  // q01, q03 FAILED their assertions (promptfoo sets row.error, failureReason 1): they are what a review is for
  const e = exportOf(reviewResultsDoc(6, { failed: [1, 3], errored: [2], identical: [0, 4] }), { queries: 50 });
  const ids = e.key.assignment.map((a) => a.id).sort();
  assert.deepEqual(ids, ['q00', 'q01', 'q03', 'q04', 'q05'], 'the failed queries are in; the errored one is not');
  assert.equal(e.key.answered, 5);
  assert.deepEqual(e.key.leftOut, [{ id: 'q02', column: 'candidate', reason: "'zqCandidateLabel rm3 fb7717': provider error: service down" }]);
  assert.equal(e.identical, 2);
  assert.deepEqual(e.page.identical, { count: 2, of: 5, skipped: false });
  assert.deepEqual(e.key.assignment.filter((a) => a.identical).map((a) => a.id).sort(), ['q00', 'q04']);
  const html = renderReviewPage(e.page);
  assert.match(html, /2 of 5 pairs are the same list: the review can measure at most 3\./);
  // --skip-identical: off the page, named in the key
  const s = exportOf(reviewResultsDoc(6, { failed: [1, 3], errored: [2], identical: [0, 4] }), { queries: 50, skipIdentical: true });
  assert.equal(s.page.items.length, 3);
  assert.deepEqual([...s.key.skippedIdentical].sort(), ['q00', 'q04']);
  assert.match(renderReviewPage(s.page), /2 of the 5 sampled pairs were the same list on both sides and are left out of this page\./);
  // every pair identical and skipped: nothing to review, one line
  assert.throws(() => exportOf(reviewResultsDoc(2, { identical: [0, 1] }), { skipIdentical: true }), /^UserError: r\.json: all 2 sampled pairs .* are the same list: nothing a review could tell apart/);
});

test('the page holds no column label, provider id, config parameter, chunk id, score, key or golden query id', () => {
  const { page, key } = exportOf(reviewResultsDoc(12));
  const html = renderReviewPage(page);
  assert.deepEqual(leaks(html), [], 'the page holds nothing of either column (labels, provider id, parameters)');
  assert.ok(!html.includes(key.secret), 'no secret');
  assert.ok(!html.includes(key.mac), 'no key MAC');
  assert.ok(!/"candidate"|"assignment"/.test(html), 'no side mapping');
  for (const a of key.assignment) assert.ok(!html.includes(a.id), `no golden id (${a.id}) in the page`);
  assert.ok(html.includes(page.keyDigest) && html.includes(page.exportId), 'the export id and the key digest are in the page');
  assert.ok(!html.includes('<b>bold?</b>'), 'hit text is escaped');
  assert.ok(html.includes('\\u003cb>bold?\\u003c/b>'));
  assert.ok(!/(src|href)=["']?(https?:)?\/\//i.test(html), 'no external resource');
  assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
});

test('one text rule for every shown hit: the expected document kept whole shows the same cut as a compacted snippet; older rows are refused', () => {
  const long = (w: string) => Array.from({ length: 120 }, (_, i) => `${w}${i}`).join(' \n ');
  // idempotent: the snippet a compact row keeps shows exactly what the full content shows
  for (const s of [long('alpha'), 'short text', 'x'.repeat(1000), `${'a'.repeat(298)}😀😀 tail`, '']) {
    assert.equal(shownText(shownText(s)), shownText(s));
    assert.ok(shownText(s).length <= 300);
  }
  assert.match(shownText(long('alpha')), /…$/);
  // a compact row: rank 1 matches the golden reference (kept whole), ranks 2-5 snippets, 6 nothing
  const hits = Array.from({ length: 6 }, (_, k) => ({ rank: k + 1, chunkId: `c${k}`, documentId: `d${k}`, score: 1 - k / 10, path: `p${k}.md`, title: `T${k}`, content: long(`w${k}x`) }));
  const out = { ids: hits.map((h) => h.chunkId), hits, routing: null, practice_bridge: false, safety: false, latencyMs: 1 };
  const golden = { id: 'g', query: 'q', language: 'en', category: 'c', expected: [{ chunk_id: 'c0', grade: 3, relevant: true }] } as never;
  const c = compactHarness(out, golden, { harness: out });
  assert.equal(c.hits[0]!.content, hits[0]!.content, 'the expected hit is kept whole in the row');
  assert.deepEqual(c.textKept, { hits: 5, chars: 300 });
  assert.deepEqual(c.hits.map((h) => h.title ?? null), ['T0', 'T1', 'T2', 'T3', 'T4', null], 'titles kept where the review shows them');
  assert.deepEqual(shownHits(c.hits, 5), shownHits(hits, 5), 'the page shows what the full rows would: nothing tells the expected hit apart');
  assert.deepEqual(compactHarness(c, golden, { harness: c }), c, 'a re-compaction (the re-gate record) changes nothing');
  // rows of an older rankgate (compact, no textKept: text for the top 3 only) are refused in one line
  const doc = reviewResultsDoc(3) as { results: { results: { response?: { output?: unknown; metadata?: unknown } }[] } };
  const row = doc.results.results[4]!;
  const h = row.response!.output as { hits: { content: string }[] };
  h.hits.forEach((x, i) => (x.content = i < 3 ? x.content : ''));
  row.response = { output: '', metadata: { harness: h } };
  assert.throws(() => exportOf(doc), /^UserError: r\.json: query 'q01' \(column 'zqCandidateLabel rm3 fb7717'\): the row was written by an older rankgate, which kept text for its top 3 only .*run the eval again with this rankgate$/);
  (h as { textKept?: unknown }).textKept = { hits: 5, chars: 300 };
  assert.throws(() => exportOf(doc, { hits: 6 }), /query 'q01' \(column 'zqCandidateLabel rm3 fb7717'\): the rows keep the review's text for the top 5 hits only, not 6: --hits 5 or fewer/);
  assert.equal(exportOf(doc).page.items.length, 3);
});

// ------------------------------------------------------------------------------------------------ import's checks

function setup(n = 4, opts: Partial<ExportOptions> = {}, doc: unknown = reviewResultsDoc(n)) {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-'));
  const { key } = exportOf(doc, { queries: n, ...opts });
  const keyPath = join(dir, 'review.key.json');
  const writeKey = (k: unknown) => writeFileSync(keyPath, JSON.stringify(k, null, 2));
  writeKey(key);
  const ratings = (reviewer: string, byItem: (i: number) => { x: number; y: number }): RatingsDoc => ({
    kind: 'rankgate-review-ratings',
    version: 2,
    exportId: key.exportId,
    keyDigest: keyDigest(key),
    reviewer,
    rater: 'human',
    ratings: key.assignment.map((a, i) => ({ item: a.item, ...byItem(i) })),
  });
  const write = (name: string, doc: unknown) => {
    const p = join(dir, name);
    writeFileSync(p, typeof doc === 'string' ? doc : JSON.stringify(doc));
    return p;
  };
  /** ratings where the candidate gets cand[i] and the baseline base[i] (sides per the key) */
  const unblinded = (reviewer: string, cand: number[], base: number[]) =>
    ratings(reviewer, (i) => (key.assignment[i]!.candidate === 'X' ? { x: cand[i]!, y: base[i]! } : { x: base[i]!, y: cand[i]! }));
  const src = (p: string) => ({ path: p, file: p.slice(dir.length + 1), text: readFileSync(p, 'utf8') });
  /** import as the CLI does: files written, texts read, result sealed (unkeyed by default) */
  const derive = (files: string[], seal: Buffer | null = null) => sealResult(deriveReview({ key: src(keyPath), ratings: files.map(src) }), seal);
  const load = () => parseReviewKey(readFileSync(keyPath, 'utf8'), keyPath);
  return { dir, key, keyPath, writeKey, ratings, unblinded, write, derive, load, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test("import refuses another export's ratings, a tampered file and an edited key: one line naming the file, item and field", () => {
  const s = setup(4);
  try {
    const { key, digest } = s.load();
    const ok = s.unblinded('ann', [5, 4, 3, 4], [3, 3, 3, 4]);
    const check = (name: string, doc: unknown, re: RegExp) => {
      const p = s.write(name, doc);
      assert.throws(() => parseRatings(readFileSync(p, 'utf8'), p, key, digest, s.keyPath), (e: Error) => e.name === 'UserError' && re.test(e.message) && !e.message.includes('\n') && e.message.startsWith(p), `${name}: ${re}`);
    };
    assert.equal(parseRatings(JSON.stringify(ok), 'ok.json', key, digest, s.keyPath).reviewer, 'ann');
    check('other-export.json', { ...ok, exportId: 'f'.repeat(32) }, /field 'exportId': these ratings belong to export "f{32}", not 0123/);
    check('six.json', { ...ok, ratings: ok.ratings.map((r, i) => (i === 1 ? { ...r, x: 6 } : r)) }, /item 2: field 'x': expected a whole rating from 1 to 5, got 6/);
    check('zero.json', { ...ok, ratings: ok.ratings.map((r, i) => (i === 1 ? { ...r, y: 0 } : r)) }, /item 2: field 'y': expected a whole rating from 1 to 5, got 0/);
    check('half.json', { ...ok, ratings: ok.ratings.map((r, i) => (i === 1 ? { ...r, y: 2.5 } : r)) }, /field 'y': expected a whole rating from 1 to 5, got 2.5/);
    check('missing.json', { ...ok, ratings: ok.ratings.slice(0, 3) }, /item 4: fields 'x', 'y': not rated \(1 of 4 items unrated\)/);
    check('repeated.json', { ...ok, ratings: [...ok.ratings, ok.ratings[0]] }, /item 1: rated more than once/);
    check('stranger.json', { ...ok, ratings: [...ok.ratings, { item: 9, x: 3, y: 3 }] }, /item 9: not an item of export/);
    check('by-id.json', { ...ok, ratings: ok.ratings.map((r) => ({ query: 'q00', x: r.x, y: r.y })) }, /ratings\[0\]: field 'item': expected an item number of the page/);
    check('noname.json', { ...ok, reviewer: ' \u200b ' }, /field 'reviewer'/);
    check('norater.json', { ...ok, rater: undefined }, /field 'rater': expected "human" or "judge"/);
    check('digest.json', { ...ok, keyDigest: '0'.repeat(64) }, /field 'keyDigest': .* the blinding key or this file was edited/);
    check('v1.json', { ...ok, version: 1 }, /field 'version': 1 is the format of an older rankgate/);
    // the key edited: a side flipped, or any other field (its MAC)
    const flipped: ReviewKey = JSON.parse(readFileSync(s.keyPath, 'utf8'));
    flipped.assignment[2]!.candidate = flipped.assignment[2]!.candidate === 'X' ? 'Y' : 'X';
    flipped.mac = keyMac(flipped);
    s.writeKey(flipped);
    assert.throws(() => s.load(), new RegExp(`review.key.json: query '${flipped.assignment[2]!.id}': field 'assignment\\[2\\].candidate': does not match the key's secret and columns \\(the blinding key was edited\\)`));
    s.writeKey({ ...key, seed: 4 });
    assert.throws(() => s.load(), /review\.key\.json: field 'mac': does not match the key's content \(the blinding key was edited after the export/);
  } finally {
    s.done();
  }
});

test('P9: the labels swapped in the key and the ratings\' keyDigest recomputed: refused (the key\'s MAC and its sides are bound to the columns)', () => {
  const s = setup(4);
  try {
    // a review against the candidate: FAIL as exported
    const against = s.write('ann.json', s.unblinded('ann', [1, 1, 1, 1], [5, 5, 5, 5]));
    assert.equal(s.derive([against]).meetsThreshold, false);
    // the reproduction: swap baseline and candidate in the key, recompute the ratings' keyDigest from the edited key
    const swapped = { ...s.key, baseline: s.key.candidate, candidate: s.key.baseline };
    s.writeKey(swapped);
    const forged = s.write('ann-forged.json', { ...JSON.parse(readFileSync(against, 'utf8')), keyDigest: keyDigest(swapped as ReviewKey) });
    assert.throws(() => s.derive([forged]), /review\.key\.json: field 'mac': does not match the key's content \(the blinding key was edited after the export: labels, columns, sample or sides\)/);
    // even with the key's MAC recomputed (which needs the secret), the sides no longer match the columns
    const remac = { ...swapped, mac: keyMac(swapped as ReviewKey) };
    s.writeKey(remac);
    const forged2 = s.write('ann-forged2.json', { ...JSON.parse(readFileSync(against, 'utf8')), keyDigest: keyDigest(remac as ReviewKey) });
    assert.throws(() => s.derive([forged2]), /field 'assignment\[\d\]\.candidate': does not match the key's secret and columns/);
  } finally {
    s.done();
  }
});

test('P7: one reviewer as bob, Bob (2) and bob + a zero-width space: the same name is refused; --reviewers refuses names not on the list and says who is missing', () => {
  assert.equal(normaliseReviewer('bob\u200b'), 'bob');
  assert.equal(normaliseReviewer(' ＢＯＢ '), 'bob');
  assert.equal(normaliseReviewer('Bob (2)'), 'bob (2)', 'a counter is not removed');
  const s = setup(4);
  try {
    const fail = [3, 3, 3, 3];
    const bob = s.write('bob.json', s.unblinded('bob', [4, 4, 4, 4], fail));
    const bob2 = s.write('bob2.json', s.unblinded('Bob (2)', [5, 5, 5, 5], fail));
    const bobZ = s.write('bobz.json', s.unblinded('bob\u200b', [5, 5, 5, 5], fail));
    assert.throws(() => s.derive([bob, bob2, bobZ]), (e: Error) => /bobz\.json: field 'reviewer': "bob\\u200b" is the same reviewer as "bob" in .*bob\.json \(names are compared after Unicode NFKC, case folding and removing invisible characters\)/.test(e.message) && !e.message.includes('\n'));
  } finally {
    s.done();
  }
  const l = setup(4, { reviewers: ['ann', 'bob'] });
  try {
    assert.deepEqual(l.key.reviewers, ['ann', 'bob']);
    const bob = l.write('bob.json', l.unblinded('BOB', [4, 4, 4, 4], [3, 3, 3, 3]));
    const bob2 = l.write('bob2.json', l.unblinded('Bob (2)', [5, 5, 5, 5], [3, 3, 3, 3]));
    assert.throws(() => l.derive([bob, bob2]), /bob2\.json: field 'reviewer': "Bob \(2\)" is not one of the export's reviewers \(ann, bob\)/);
    assert.throws(() => l.derive([bob]), /review\.key\.json: field 'reviewers': no ratings of ann \(the export's reviewers: ann, bob\); a review counts only when every named reviewer rated/);
    const ann = l.write('ann.json', l.unblinded('Ann', [4, 4, 4, 4], [3, 3, 3, 3]));
    assert.equal(l.derive([bob, ann]).pooled.reviewers, 2);
  } finally {
    l.done();
  }
  assert.throws(() => exportOf(reviewResultsDoc(2), { reviewers: ['bob', 'BOB\u200b'] }), /--reviewers: "BOB\\u200b" and "bob" are the same reviewer/);
});

test("P8: a judge's ratings relabelled human are refused (with or without their MAC); a judge's file needs its MAC", () => {
  const s = setup(4);
  try {
    const judgeRatings = s.unblinded('judge openai:chat:m (review-v1)', [5, 5, 5, 5], [1, 1, 1, 1]);
    const judged = { ...judgeRatings, rater: 'judge' as const, mac: judgeMac(s.key.secret, judgeRatings) };
    // `review judge` records the set's digest in the key
    s.writeKey({ ...s.key, judged: [judgeSetDigest(s.key.exportId, judged.ratings)] });
    const j = s.derive([s.write('judge.json', judged)]);
    assert.equal(j.rater, 'judge');
    const relabelled = s.write('human.json', { ...judged, rater: 'human', reviewer: 'carol' });
    assert.throws(() => s.derive([relabelled]), /human\.json: field 'mac': a judge's MAC in ratings marked "rater": "human"/);
    const { mac: _m, ...stripped } = judged;
    const noMac = s.write('human2.json', { ...stripped, rater: 'human', reviewer: 'carol', ratings: stripped.ratings.map((r) => ({ ...r, note: 'looks right' })) });
    assert.throws(() => s.derive([noMac]), /human2\.json: field 'rater': these ratings are a set rankgate review judge produced for this export \(.*review\.key\.json records its digest\): a judge's ratings are never a human review/);
    // a file marked judge without this export's MAC
    assert.throws(() => s.derive([s.write('fake-judge.json', { ...judged, mac: '0'.repeat(64) })]), /fake-judge\.json: field 'mac': missing or not this export's/);
    // the judged list is outside the key digest: ratings of the page still match
    assert.equal(keyDigest({ ...s.key, judged: ['1'.repeat(64)] }), keyDigest(s.key));
  } finally {
    s.done();
  }
});

test('statistics, checked by hand: mean preference per reviewer and pooled, bootstrap CI, Krippendorff alpha; skipped identical pairs count as 0', () => {
  assert.equal(krippendorffAlphaInterval([[1, 2], [2, 1]]).alpha, -0.5);
  assert.equal(krippendorffAlphaInterval([[1, 1], [2, 2], [3]]).alpha, 1);
  assert.equal(krippendorffAlphaInterval([[2, 2], [2, 2]]).alpha, null, 'no variation: undefined');
  assert.ok(Math.abs(krippendorffAlphaInterval([[2, 1], [1, 1], [0, 0], [0, -1]]).alpha! - 17 / 24) < 1e-12);
  const s = setup(4);
  try {
    // ann: candidate 5,4,3,4 vs baseline 3,3,3,4 -> preferences 2,1,0,0 (mean 0.75)
    // bob: candidate 4,4,3,3 vs baseline 3,3,3,4 -> preferences 1,1,0,-1 (mean 0.25)
    const ann = s.write('ann.json', s.unblinded('ann', [5, 4, 3, 4], [3, 3, 3, 4]));
    const bob = s.write('bob.json', s.unblinded('bob', [4, 4, 3, 3], [3, 3, 3, 4]));
    const r = s.derive([ann, bob]);
    assert.equal(r.reviewers[0]!.preference, 0.75);
    assert.equal(r.reviewers[1]!.preference, 0.25);
    assert.deepEqual([r.reviewers[0]!.wins, r.reviewers[0]!.ties, r.reviewers[0]!.losses], [2, 2, 0]);
    assert.equal(r.pooled.preference, 0.5, 'pooled: per-query means 1.5, 1, 0, -0.5 -> 0.5');
    assert.equal(r.pooled.baselineMean, 3.25);
    assert.equal(r.pooled.candidateMean, 3.75);
    assert.ok(r.pooled.ci95[0] <= 0.5 && r.pooled.ci95[1] >= 0.5 && r.pooled.ci95[0] >= -0.5 && r.pooled.ci95[1] <= 1.5, `CI ${r.pooled.ci95}`);
    assert.deepEqual(r.pooled.ci95, s.derive([ann, bob]).pooled.ci95, 'seeded');
    assert.equal(r.meetsThreshold, true, 'mean 0.5 meets >= 0.5');
    assert.ok(Math.abs(r.agreement!.alpha! - 17 / 24) < 1e-12);
    assert.equal(s.derive([ann]).agreement, null, 'one reviewer: no agreement');
    assert.deepEqual(r.ratings.map((x) => x.file), ['ann.json', 'bob.json'], 'paths relative to the result');
    assert.deepEqual(r.key.file, 'review.key.json');
    const judge = s.write('j.json', { ...s.unblinded('judge', [4, 4, 3, 3], [3, 3, 3, 4]), rater: 'judge' });
    assert.throws(() => s.derive([ann, judge]), /j\.json: field 'mac'/);
  } finally {
    s.done();
  }
  // --skip-identical: 2 rated pairs (+2, +2) and 2 identical pairs off the page -> (2 + 2 + 0 + 0) / 4 = 1
  const k = setup(4, { skipIdentical: true }, reviewResultsDoc(4, { identical: [1, 3] }));
  try {
    assert.equal(k.key.assignment.length, 2);
    const r = k.derive([k.write('ann.json', k.unblinded('ann', [5, 5], [3, 3]))]);
    assert.equal(r.pooled.preference, 1);
    assert.equal(r.pooled.queries, 4);
    assert.equal(r.pooled.identical, 2);
    assert.deepEqual([r.pooled.wins, r.pooled.ties, r.pooled.losses], [2, 2, 0]);
    assert.equal(r.pooled.candidateMean, 5, 'means of the rated pairs');
    assert.match(r.rule, /the 2 identical pairs left off the page count as no preference \(0\)/);
    assert.deepEqual(r.perQuery.filter((q) => q.skipped).map((q) => q.id).sort(), ['q01', 'q03']);
  } finally {
    k.done();
  }
});

// ------------------------------------------------------------------------------------------------ evidence

/** A reader over a map (what a base-branch reader looks like to the verdict). */
const mapReader = (files: Map<string, string>): FileReader => (p) => files.get(p) ?? null;

test('P6 and the evidence: the verdict re-derives a result from its key and ratings; a hand-written or edited result is not counted', () => {
  const s = setup(4);
  try {
    const ann = s.write('ann.json', s.unblinded('ann', [5, 4, 3, 4], [3, 3, 3, 4]));
    const resultPath = s.write('review-result.json', s.derive([ann]));
    const ok = loadReviewEvidence(resultPath, undefined, { sealKey: null });
    assert.equal(ok.counted, true, ok.detail);
    assert.match(ok.detail, /re-derived from 1 ratings file\(s\) and its key: an accident check, not proof \(set RANKGATE_SEAL_KEY in CI for keyed seals\)/);
    // P6: a hand-written 5-line result
    const p6 = s.write('p6.json', JSON.stringify({ kind: 'rankgate-review-result', version: 2, rater: 'human', baseline: s.key.baseline, candidate: { ...s.key.candidate, configDigest: null }, queries: 1, seed: 42, pooled: { preference: 4, ci95: [4, 4], queries: 1, reviewers: 1 } }));
    const h = loadReviewEvidence(p6, undefined, { sealKey: null });
    assert.equal(h.counted, false);
    assert.match(h.detail, /names no key file and ratings files to re-derive it from/);
    // the numbers edited (the seal recomputed: it is unkeyed, anyone can)
    const edited = JSON.parse(readFileSync(resultPath, 'utf8')) as ReviewResult;
    edited.pooled.preference = 3;
    const e = loadReviewEvidence(s.write('edited.json', sealResult(edited, null)), undefined, { sealKey: null });
    assert.equal(e.counted, false);
    assert.match(e.detail, /does not re-derive from its key and ratings files \(field 'pooled' differs\): it was edited after the import/);
    // a ratings file changed after the import
    writeFileSync(ann, JSON.stringify(s.unblinded('ann', [5, 5, 5, 5], [1, 1, 1, 1])));
    assert.match(loadReviewEvidence(resultPath, undefined, { sealKey: null }).detail, /its ratings file .*ann\.json changed since the import \(SHA-256 differs\)/);
    // the verdict: not evaluated, with the reason
    const parsed = parseResultsObject(reviewResultsDoc(4), 'r.json');
    const c4 = shippingCriteria(parsed.columns[0]!, parsed.columns[1]!, { reviews: [h] }).criteria[3]!;
    assert.equal(c4.passed, null);
    assert.match(c4.detail, /^not evaluated: .*\(.*p6\.json not counted: it names no key file and ratings files/);
  } finally {
    s.done();
  }
});

test('seals: keyed at import and verified at the verdict; unverifiable without the key (a fork) and unkeyed under a key are not counted; a trusted reader (the base branch) re-derives', () => {
  const s = setup(4);
  try {
    const ann = s.write('ann.json', s.unblinded('ann', [5, 4, 3, 4], [3, 3, 3, 4]));
    const sealed = s.derive([ann], SEAL);
    assert.match(sealed.seal!, /^hmac-sha256:[0-9a-f]{64}$/);
    const { seal: _s, ...rest } = sealed;
    assert.equal(sealed.seal, sealText('review-result', canonicalJson(rest), SEAL));
    const keyed = s.write('keyed.json', sealed);
    const v = loadReviewEvidence(keyed, undefined, { sealKey: SEAL });
    assert.equal(v.counted, true, v.detail);
    assert.match(v.detail, /sealed with RANKGATE_SEAL_KEY \(verified\)/);
    const fork = loadReviewEvidence(keyed, undefined, { sealKey: null });
    assert.equal(fork.counted, false);
    assert.match(fork.detail, /keyed seal NOT VERIFIED: RANKGATE_SEAL_KEY is not set here/);
    assert.match(loadReviewEvidence(keyed, undefined, { sealKey: Buffer.from('o'.repeat(40)) }).detail, /keyed seal does NOT match/);
    const unkeyed = s.write('unkeyed.json', s.derive([ann]));
    const u = loadReviewEvidence(unkeyed, undefined, { sealKey: SEAL });
    assert.equal(u.counted, false);
    assert.match(u.detail, /only an unkeyed seal while RANKGATE_SEAL_KEY is set: anyone could have written it/);
    // a reader of the base branch: the files are read through it, never from the working tree
    const files = new Map([['rev/unkeyed.json', readFileSync(unkeyed, 'utf8')], ['rev/review.key.json', readFileSync(s.keyPath, 'utf8')], ['rev/ann.json', readFileSync(ann, 'utf8')]]);
    const base = loadReviewEvidence('rev/unkeyed.json', mapReader(files), { sealKey: SEAL, trusted: true, source: 'the base branch origin/main' });
    assert.equal(base.counted, true, base.detail);
    assert.match(base.detail, /the key as the base branch origin\/main has them/);
    files.delete('rev/ann.json');
    assert.match(loadReviewEvidence('rev/unkeyed.json', mapReader(files), { sealKey: null, source: 'the base branch' }).detail, /its ratings file rev\/ann\.json is not in the base branch/);
    assert.match(loadReviewEvidence('rev/none.json', mapReader(files), { sealKey: null, source: 'the base branch' }).detail, /no such file in the base branch/);
  } finally {
    s.done();
  }
});

test('criterion 4 of the shipping verdict: not evaluated without a review (the real results path in the hint), pass/fail from a counted human review of the same pair, never from a judge', () => {
  const s = setup(4);
  try {
    const parsed = parseResultsObject(reviewResultsDoc(4), 'r.json');
    const [base, cand] = parsed.columns as [typeof parsed.columns[0], typeof parsed.columns[0]];
    const c4 = (reviews: Parameters<typeof shippingCriteria>[2]) => shippingCriteria(base!, cand!, reviews).criteria[3]!;
    const none = c4({ resultsPath: 'data/eval/results/eval en.json' });
    assert.equal(none.passed, null);
    assert.match(none.detail, /^not evaluated: run rankgate review export 'data\/eval\/results\/eval en\.json' --baseline 'zqBaselineLabel hybrid rrf6161' --candidate 'zqCandidateLabel rm3 fb7717' -o review\.html/);
    assert.match(howToReview('a', 'b'), /export RESULTS --baseline 'a'/, 'RESULTS only when the path is not known');
    const save = (name: string, reviewers: [string, number[], number[]][]) => {
      const files = reviewers.map(([n, c, b]) => s.write(`${name}-${n}.json`, s.unblinded(n, c, b)));
      return readReviewResult(s.write(name, s.derive(files)), { sealKey: null });
    };
    const pass = save('pass.json', [['ann', [5, 4, 3, 4], [3, 3, 3, 4]], ['bob', [4, 4, 3, 3], [3, 3, 3, 4]]]);
    const fail = save('fail.json', [['bob', [4, 4, 3, 3], [3, 3, 3, 4]]]);
    assert.equal(c4({ reviews: [pass] }).passed, true);
    assert.match(c4({ reviews: [pass] }).detail, /human blind review \(.*pass\.json; re-derived from 2 ratings file\(s\) and its key: an accident check, not proof .*\): candidate preferred by \+0\.50 points \(95% CI \[.*\]\) over 4 queries, 2 reviewer\(s\); Krippendorff's alpha \(interval\) 0\.71; needs mean >= \+0\.5/);
    assert.equal(c4({ reviews: [fail] }).passed, false);
    assert.equal(shippingCriteria(base!, cand!, { reviews: [fail] }).ship, false, 'a failed review stops the ship');
    const swapped = shippingCriteria(cand!, base!, { reviews: [pass] }).criteria[3]!;
    assert.equal(swapped.passed, null);
    assert.match(swapped.detail, /the review results given are of 'zqCandidateLabel rm3 fb7717' vs 'zqBaselineLabel hybrid rrf6161'/);
    const changed = { ...cand!, config: { ...cand!.config, rrfK: 1 } };
    assert.match(shippingCriteria(base!, changed, { reviews: [pass] }).criteria[3]!.detail, /reviewed another provider config/);
    // an unknown provider config matches nothing (it used to match any config)
    const unknown = { ...cand!, configUnknown: true };
    const u = shippingCriteria(base!, unknown, { reviews: [pass] }).criteria[3]!;
    assert.equal(u.passed, null);
    assert.match(u.detail, /provider config is unknown on one side/);
    // a file that is not a review result: exit 2 (a bad --review), a wrong result: not counted
    assert.throws(() => readReviewResult(s.write('bad.json', { kind: 'x' })), /bad\.json: field 'kind': expected "rankgate-review-result"/);
    assert.throws(() => readReviewResult(join(s.dir, 'nope.json')), /nope\.json: no such review result/);
  } finally {
    s.done();
  }
});

// ------------------------------------------------------------------------------------------------ the command

test('S3: the key file is written 0600 whatever the umask (and over an older 0644 key), the page and the ratings 0644', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-cli-'));
  const old = process.umask(0);
  try {
    const results = join(dir, 'results.json');
    writeFileSync(results, JSON.stringify(reviewResultsDoc(6, { failed: [1], errored: [2], identical: [3] })));
    const keyPath = join(dir, 'review.key.json');
    writeFileSync(keyPath, '{}', { mode: 0o644 });
    const page = join(dir, 'review.html');
    const ex = await capture(() => reviewCli(['export', results, '--baseline', '0', '--candidate', '1', '-o', page]));
    assert.equal(ex.code, 0);
    assert.equal(statSync(keyPath).mode & 0o777, 0o600, 'the key: 0600');
    assert.equal(statSync(page).mode & 0o777, 0o644, 'the page: 0644');
    assert.match(ex.out, /^review page: .*review\.html \(5 queries of the 5 both columns answered with a ranking; top 5 results per list, every text cut at 300 characters; seed 42\)$/m);
    assert.match(ex.out, /^left out, no ranking in a column: 1 \(q02: 'zqCandidateLabel rm3 fb7717': provider error: service down\)$/m);
    assert.match(ex.out, /^identical: 1 of 5 pairs are the same list: the review can measure at most 4 \(--skip-identical leaves them out, counted as no preference\)$/m);
    assert.match(ex.out, /^key: .*review\.key\.json \(the unblinding, written 0600/m);
  } finally {
    process.umask(old);
    rmSync(dir, { recursive: true, force: true });
  }
});

import { startFakeLlm } from '../helpers/fake-llm.ts';
import { parseReviewAnswer } from '../../src/judge/review-prompt.ts';

test('the judge stand-in: "judge, not human", a MAC and its set in the key; W6: a model that corrects itself, or says more, is an error of that item', async () => {
  assert.deepEqual(parseReviewAnswer(' X=4 Y=2\n'), { x: 4, y: 2 });
  assert.deepEqual(parseReviewAnswer('x: 5, y: 1'), { x: 5, y: 1 });
  for (const bad of ['X=6 Y=2', 'X=4 Y=2 X=2 Y=4', 'X=4 Y=2. Actually, X=2 Y=4', 'X=4 Y=2 because list X has the answer', 'Ratings: X=4 Y=2', 'X=4 Y=2\nX=2 Y=4']) {
    assert.equal(parseReviewAnswer(bad), null, bad);
  }
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-judge-'));
  const llm = await startFakeLlm(() => 'X=4 Y=2');
  const saved = { ...process.env };
  Object.assign(process.env, { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${llm.url}/v1`, PROMPTFOO_CONFIG_DIR: join(dir, '.promptfoo'), PROMPTFOO_DISABLE_TELEMETRY: '1', PROMPTFOO_DISABLE_UPDATE: '1', PROMPTFOO_CACHE_ENABLED: 'false' });
  try {
    const results = join(dir, 'results.json');
    writeFileSync(results, JSON.stringify(reviewResultsDoc(4)));
    const html = join(dir, 'review.html');
    const keyPath = join(dir, 'review.key.json');
    assert.equal((await capture(() => reviewCli(['export', results, '--baseline', '0', '--candidate', '1', '-o', html]))).code, 0);
    const key = JSON.parse(readFileSync(keyPath, 'utf8')) as ReviewKey;
    const out = join(dir, 'ratings-judge.json');
    const j = await capture(() => reviewCli(['judge', html, '--judge', 'openai:chat:gpt-4.1-mini', '-o', out]));
    assert.match(j.out, /judge, not human: openai:chat:gpt-4.1-mini rated 4 blinded pairs/);
    assert.equal(llm.requests.length, 4);
    for (const r of llm.requests) assert.deepEqual(leaks(r.text), [], 'the prompt holds nothing of either column');
    const doc = JSON.parse(readFileSync(out, 'utf8')) as RatingsDoc;
    assert.equal(doc.rater, 'judge');
    assert.equal(doc.mac, judgeMac(key.secret, doc));
    const after = JSON.parse(readFileSync(keyPath, 'utf8')) as ReviewKey;
    assert.deepEqual(after.judged, [judgeSetDigest(key.exportId, doc.ratings)], 'the key records the set');
    assert.equal(statSync(keyPath).mode & 0o777, 0o600, 'the key stays 0600 after the judge appends to it');
    assert.equal(statSync(out).mode & 0o777, 0o644);
    const im = await capture(() => reviewCli(['import', out, '--key', keyPath, '-o', join(dir, 'review-judge.json')]));
    assert.match(im.out, /^judge, not human: /);
    assert.match(im.out, /criterion 4: not counted/);
    const expected = key.assignment.reduce((a, x) => a + (x.candidate === 'X' ? 2 : -2), 0) / 4;
    assert.equal(JSON.parse(readFileSync(join(dir, 'review-judge.json'), 'utf8')).pooled.preference, expected);
    // P8 through the command: the judge's file relabelled human
    const human = join(dir, 'ratings-carol.json');
    writeFileSync(human, JSON.stringify({ ...doc, rater: 'human', reviewer: 'carol', mac: undefined }));
    await assert.rejects(reviewCli(['import', human, '--key', keyPath, '-o', join(dir, 'r2.json')]), /ratings-carol\.json: field 'rater': these ratings are a set rankgate review judge produced/);
    // W6: a model that corrects itself: one line naming the item, nothing written
    llm.reply = () => 'X=4 Y=2. Wait, no: X=2 Y=4';
    await assert.rejects(
      reviewCli(['judge', html, '--judge', 'openai:chat:gpt-4.1-mini', '-o', join(dir, 'bad.json')]),
      (e: Error) => e.name === 'UserError' && /review\.html: item 1: the judge openai:chat:gpt-4.1-mini answered "X=4 Y=2\. Wait, no: X=2 Y=4", not exactly one "X=<1-5> Y=<1-5>"; no ratings written$/.test(e.message) && !e.message.includes('\n'),
    );
  } finally {
    process.env = saved;
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------------------------------------ a real export

import { defaultEvalRun } from '../harness/helpers.ts';
import { realTwoColumnResults } from '../helpers/review-fixture.ts';

test("a real export (the demo's compact rows): the expected document's text and markup are not distinguishable from the others', and no golden id is in the page", async () => {
  const { results } = await defaultEvalRun();
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-real-'));
  try {
    const { file, expected } = realTwoColumnResults(results, dir);
    const page = join(dir, 'review.html');
    const ex = await capture(() => reviewCli(['export', file, '--baseline', '0', '--candidate', '1', '--queries', '66', '-o', page]));
    assert.equal(ex.code, 0);
    const html = readFileSync(page, 'utf8');
    const key = JSON.parse(readFileSync(join(dir, 'review.key.json'), 'utf8')) as ReviewKey;
    const data = JSON.parse(/id="review-data">([\s\S]*?)<\/script>/.exec(html)![1]!) as import('../../src/review/types.ts').ReviewPageData;
    for (const a of key.assignment) assert.ok(!html.includes(a.id), `golden id ${a.id} in the page`);
    const exp: string[] = [];
    const others: string[] = [];
    for (const it of data.items) {
      const a = key.assignment[it.item - 1]!;
      const e = expected.get(a.id)!;
      for (const side of ['X', 'Y'] as const) {
        const whole = side === a.candidate ? e.candidate : e.baseline;
        it[side].forEach((h, i) => {
          assert.deepEqual(Object.keys(h).sort(), ['text', 'title'], 'every hit the same fields (the demo has no headings)');
          assert.ok(h.text.length > 0, `item ${it.item} ${side} rank ${i + 1}: text shown at every rank`);
          (whole.has(i) ? exp : others).push(h.text);
        });
      }
    }
    assert.ok(exp.length >= 20, `expected documents shown: ${exp.length}`);
    const max = (xs: string[]) => Math.max(...xs.map((x) => x.length));
    assert.ok(max(exp) <= 300 && max(others) <= 300, 'one cut for every hit');
    assert.ok(max(others) >= max(exp) - 10, `the expected documents are not the longest texts (${max(exp)} vs ${max(others)})`);
    const cut = (xs: string[]) => xs.filter((x) => x.endsWith('…'));
    assert.ok(cut(exp).length && cut(others).length, 'long texts of both kinds end alike');
    assert.ok(cut(others).every((x) => x.length >= 180), 'a cut text is a cut text, whichever document it is');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a gate on a pull request: a review on the base branch counts; one the pull request brings does not, keyed or not', () => {
  const s = setup(4);
  const saved = process.env.RANKGATE_SEAL_KEY;
  try {
    const ann = s.write('ann.json', s.unblinded('ann', [5, 4, 3, 4], [3, 3, 3, 4]));
    const unkeyed = s.write('review-result.json', s.derive([ann]));
    const files = new Map([unkeyed, s.keyPath, ann].map((p) => [p, readFileSync(p, 'utf8')] as const));
    const base = (present: boolean): RefReader => ({ ref: 'origin/main', commit: 'c'.repeat(40), name: 'origin/main (ccccccc)', read: (p) => (present ? (files.get(p) ?? null) : null), repoPath: (p) => p, materialize: () => null });
    delete process.env.RANKGATE_SEAL_KEY;
    const onBase = reviewForGate(unkeyed, base(true));
    assert.equal(onBase.counted, true, onBase.detail);
    assert.match(onBase.detail, /as the base branch origin\/main \(ccccccc\) has them/);
    // brought by the pull request: not counted, and why
    const own = reviewForGate(unkeyed, base(false));
    assert.equal(own.counted, false);
    assert.match(own.detail, /it is not on the base branch origin\/main \(ccccccc\): a review counts on a pull request once it is on the base branch/);
    // keyed with the CI's key does not change it (the pull request's own steps may hold the key)
    process.env.RANKGATE_SEAL_KEY = SEAL.toString();
    const keyed = s.write('keyed.json', s.derive([ann], SEAL));
    assert.equal(reviewForGate(keyed, base(false)).counted, false);
    assert.equal(loadReviewEvidence(keyed).counted, true, 'outside a pull request the keyed seal verifies');
  } finally {
    if (saved === undefined) delete process.env.RANKGATE_SEAL_KEY;
    else process.env.RANKGATE_SEAL_KEY = saved;
    s.done();
  }
});

