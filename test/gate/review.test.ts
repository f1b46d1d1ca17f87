/** The blind review (criterion 4): blinding of an export, import's checks, the statistics, and the shipping verdict. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseResultsObject, type ParsedResults } from '../../src/results/read.ts';
import {
  buildReviewExport,
  candidateSide,
  importReview,
  keyDigest,
  readRatings,
  readReviewKey,
  readReviewResult,
  sampleIds,
  type RatingsDoc,
  type ReviewKey,
} from '../../src/gate/review.ts';
import { krippendorffAlphaInterval } from '../../src/metrics/agreement.ts';
import { shippingCriteria } from '../../src/gate/shipping.ts';
import { renderReviewPage } from '../../src/report/html/review.ts';
import { leaks, reviewResultsDoc } from '../helpers/review-fixture.ts';

const SECRET = 'ab'.repeat(32);
const EXPORT_ID = '0123456789abcdef0123456789abcdef';

function exportOf(doc: unknown, opts: { queries?: number; seed?: number; secret?: string; exportId?: string } = {}) {
  const parsed: ParsedResults = parseResultsObject(doc, 'r.json');
  const rows = (doc as { results: { results: unknown[] } }).results.results;
  return { parsed, ...buildReviewExport('r.json', parsed, rows, { baseline: parsed.columns[0]!, candidate: parsed.columns[1]!, secret: SECRET, exportId: EXPORT_ID, created: '2026-01-01T00:00:00Z', ...opts }) };
}

test('blinding: a seeded sample, X/Y per query from the keyed HMAC, the lists unblind to the right columns', () => {
  const doc = reviewResultsDoc(40);
  const a = exportOf(doc, { queries: 10, seed: 7 });
  const b = exportOf(doc, { queries: 10, seed: 7 });
  assert.deepEqual(a.page, b.page, 'same seed and key: the same page');
  assert.equal(a.page.items.length, 10);
  assert.deepEqual(a.page.items.map((i) => i.id), sampleIds(a.parsed.columns[0]!.queries.map((q) => q.id), 10, 7));
  assert.notDeepEqual(exportOf(doc, { queries: 10, seed: 8 }).page.items.map((i) => i.id), a.page.items.map((i) => i.id), 'another seed, another sample');
  // the side comes from the secret, not from the seed: another secret changes some sides of the same sample
  const other = exportOf(doc, { queries: 40, seed: 7, secret: 'cd'.repeat(32) });
  const same = exportOf(doc, { queries: 40, seed: 7 });
  assert.notDeepEqual(other.key.assignment, same.key.assignment);
  const sides = same.key.assignment.map((x) => x.candidate);
  assert.ok(sides.includes('X') && sides.includes('Y'), 'both orders occur over 40 queries');
  for (const { id, candidate } of same.key.assignment) assert.equal(candidate, candidateSide(SECRET, EXPORT_ID, id));
  // X and Y are the candidate's and the baseline's top-5 (titles of column 1 contain ".1.")
  for (const it of same.page.items) {
    const side = same.key.assignment.find((x) => x.id === it.id)!.candidate;
    const other = side === 'X' ? 'Y' : 'X';
    assert.equal(it[side].length, 5);
    assert.ok(it[side].every((h) => /^Lamp note \d+\.1\.\d$/.test(h.title)), `${it.id}: the candidate on ${side}`);
    assert.ok(it[other].every((h) => /^Lamp note \d+\.0\.\d$/.test(h.title)), `${it.id}: the baseline on ${other}`);
    assert.deepEqual(Object.keys(it[side][0]!).sort(), ['text', 'title'], 'a shown hit is its title and text only');
  }
  assert.equal(same.page.keyDigest, keyDigest(same.key));
  // --queries beyond the population: every eligible query, errored ones left out
  const errored = exportOf(reviewResultsDoc(6, { errored: [2] }), { queries: 50 });
  assert.equal(errored.page.items.length, 5);
  assert.equal(errored.key.erroredLeftOut, 1);
  assert.ok(!errored.page.items.some((i) => i.id === 'q02'));
});

test('the page holds no column label, provider id, config parameter, chunk id, score or key: nothing that unblinds it', () => {
  const { page, key } = exportOf(reviewResultsDoc(12));
  const html = renderReviewPage(page);
  assert.deepEqual(leaks(html), [], 'the page holds nothing of either column (labels, provider id, parameters)');
  assert.ok(!html.includes(key.secret), 'no secret');
  assert.ok(!/"candidate"|"assignment"/.test(html), 'no side mapping');
  assert.ok(html.includes(page.keyDigest) && html.includes(page.exportId), 'the export id and the key digest are in the page');
  // result text is data, escaped for <script> (no "</b>" closing anything), never markup
  assert.ok(!html.includes('<b>bold?</b>'), 'hit text is escaped');
  assert.ok(html.includes('\\u003cb>bold?\\u003c/b>'));
  // nothing fetched from elsewhere
  assert.ok(!/(src|href)=["']?(https?:)?\/\//i.test(html), 'no external resource');
  assert.match(html, /Content-Security-Policy" content="default-src 'none'/);
});

// ------------------------------------------------------------------------------------------------ import's checks

function setup(n = 4) {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-'));
  const { key } = exportOf(reviewResultsDoc(n), { queries: n });
  const keyPath = join(dir, 'review.key.json');
  writeFileSync(keyPath, JSON.stringify(key, null, 2));
  const ratings = (reviewer: string, byQuery: (id: string, i: number) => { x: number; y: number }): RatingsDoc => ({
    kind: 'rankgate-review-ratings',
    version: 1,
    exportId: key.exportId,
    keyDigest: keyDigest(key),
    reviewer,
    rater: 'human',
    ratings: key.assignment.map((a, i) => ({ query: a.id, ...byQuery(a.id, i) })),
  });
  const write = (name: string, doc: unknown) => {
    const p = join(dir, name);
    writeFileSync(p, JSON.stringify(doc));
    return p;
  };
  /** ratings where the candidate gets cand[i] and the baseline base[i] (sides per the key) */
  const unblinded = (reviewer: string, cand: number[], base: number[]) =>
    ratings(reviewer, (id, i) => (key.assignment[i]!.candidate === 'X' ? { x: cand[i]!, y: base[i]! } : { x: base[i]!, y: cand[i]! }));
  const load = () => readReviewKey(keyPath);
  return { dir, key, keyPath, ratings, unblinded, write, load, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test("import refuses another export's ratings, a tampered file and an edited key: one line naming the file, query and field", () => {
  const s = setup(4);
  try {
    const { key, digest } = s.load();
    const ok = s.unblinded('ann', [5, 4, 3, 4], [3, 3, 3, 4]);
    const check = (name: string, doc: unknown, re: RegExp) => {
      const p = s.write(name, doc);
      assert.throws(() => readRatings(p, key, digest, s.keyPath), (e: Error) => e.name === 'UserError' && re.test(e.message) && !e.message.includes('\n') && e.message.startsWith(p), `${name}: ${re}`);
    };
    assert.equal(readRatings(s.write('ok.json', ok), key, digest, s.keyPath).reviewer, 'ann');
    check('other-export.json', { ...ok, exportId: 'f'.repeat(32) }, /field 'exportId': these ratings belong to export "f{32}", not 0123/);
    const q1 = key.assignment[1]!.id;
    check('six.json', { ...ok, ratings: ok.ratings.map((r, i) => (i === 1 ? { ...r, x: 6 } : r)) }, new RegExp(`query '${q1}': field 'x': expected a whole rating from 1 to 5, got 6`));
    check('zero.json', { ...ok, ratings: ok.ratings.map((r, i) => (i === 1 ? { ...r, y: 0 } : r)) }, new RegExp(`query '${q1}': field 'y': expected a whole rating from 1 to 5, got 0`));
    check('half.json', { ...ok, ratings: ok.ratings.map((r, i) => (i === 1 ? { ...r, y: 2.5 } : r)) }, /field 'y': expected a whole rating from 1 to 5, got 2.5/);
    check('text.json', { ...ok, ratings: ok.ratings.map((r, i) => (i === 1 ? { ...r, y: '4' } : r)) }, /field 'y': expected a whole rating from 1 to 5, got "4"/);
    check('missing.json', { ...ok, ratings: ok.ratings.slice(0, 3) }, new RegExp(`query '${key.assignment[3]!.id}': fields 'x', 'y': not rated \\(1 of 4 queries unrated\\)`));
    check('repeated.json', { ...ok, ratings: [...ok.ratings, ok.ratings[0]] }, new RegExp(`query '${key.assignment[0]!.id}': rated more than once`));
    check('stranger.json', { ...ok, ratings: [...ok.ratings, { query: 'q99', x: 3, y: 3 }] }, /query 'q99': not a query of export/);
    check('noname.json', { ...ok, reviewer: ' ' }, /field 'reviewer'/);
    check('digest.json', { ...ok, keyDigest: '0'.repeat(64) }, /field 'keyDigest': .* the blinding key or this file was edited/);

    // the key edited: a side flipped (no longer the secret's HMAC), or any other field (the digest no longer matches)
    const flipped: ReviewKey = JSON.parse(readFileSync(s.keyPath, 'utf8'));
    flipped.assignment[2]!.candidate = flipped.assignment[2]!.candidate === 'X' ? 'Y' : 'X';
    writeFileSync(s.keyPath, JSON.stringify(flipped));
    assert.throws(() => readReviewKey(s.keyPath), new RegExp(`review.key.json: query '${flipped.assignment[2]!.id}': field 'assignment\\[2\\].candidate': does not match the key's secret \\(the blinding key was edited\\)`));
    const relabelled = { ...key, baseline: { ...key.baseline, label: 'something else' } };
    writeFileSync(s.keyPath, JSON.stringify(relabelled));
    const k2 = readReviewKey(s.keyPath);
    assert.throws(() => readRatings(s.write('ok2.json', ok), k2.key, k2.digest, s.keyPath), /field 'keyDigest': .* the blinding key or this file was edited after the export/);
    writeFileSync(s.keyPath, JSON.stringify(key));

    // one reviewer, two files
    const again = s.unblinded('Ann', [1, 1, 1, 1], [1, 1, 1, 1]);
    const files = [ok, again].map((d, i) => ({ path: `f${i}.json`, doc: d }));
    assert.throws(() => importReview(key, digest, files), /f1\.json: field 'reviewer': 'Ann' already rated this export in f0\.json/);
  } finally {
    s.done();
  }
});

test('statistics, checked by hand: mean preference per reviewer and pooled, bootstrap CI, Krippendorff alpha', () => {
  // alpha (interval), by hand: units [1,2] and [2,1]: n = 4, D_o = (2 + 2) / 4 = 1, D_e = 8 ordered pairs of
  // squared difference 1 / (4 * 3) = 2/3, alpha = 1 - 1 / (2/3) = -0.5
  assert.equal(krippendorffAlphaInterval([[1, 2], [2, 1]]).alpha, -0.5);
  assert.equal(krippendorffAlphaInterval([[1, 1], [2, 2], [3]]).alpha, 1);
  assert.equal(krippendorffAlphaInterval([[2, 2], [2, 2]]).alpha, null, 'no variation: undefined');
  // [2,1],[1,1],[0,0],[0,-1]: n = 8, sum 4, sum sq 8; D_o = (1+1+0+1... ) -> per unit 2*(d^2) / 1: 2, 0, 0, 2 -> 4/8 = 0.5
  // D_e = 2 (8*8 - 16) / (8*7) = 96/56 = 12/7; alpha = 1 - 0.5 / (12/7) = 1 - 7/24 = 17/24
  assert.ok(Math.abs(krippendorffAlphaInterval([[2, 1], [1, 1], [0, 0], [0, -1]]).alpha! - 17 / 24) < 1e-12);

  const s = setup(4);
  try {
    const { key, digest } = s.load();
    // ann: candidate 5,4,3,4 vs baseline 3,3,3,4 -> preferences 2,1,0,0 (mean 0.75)
    // bob: candidate 4,4,3,3 vs baseline 3,3,3,4 -> preferences 1,1,0,-1 (mean 0.25)
    const ann = s.unblinded('ann', [5, 4, 3, 4], [3, 3, 3, 4]);
    const bob = s.unblinded('bob', [4, 4, 3, 3], [3, 3, 3, 4]);
    const r = importReview(key, digest, [
      { path: 'ann.json', doc: ann },
      { path: 'bob.json', doc: bob },
    ]);
    assert.equal(r.reviewers[0]!.preference, 0.75);
    assert.equal(r.reviewers[1]!.preference, 0.25);
    assert.deepEqual([r.reviewers[0]!.wins, r.reviewers[0]!.ties, r.reviewers[0]!.losses], [2, 2, 0]);
    assert.equal(r.pooled.preference, 0.5, 'pooled: per-query means 1.5, 1, 0, -0.5 -> 0.5');
    assert.equal(r.pooled.baselineMean, 3.25);
    assert.equal(r.pooled.candidateMean, 3.75);
    assert.ok(r.pooled.ci95[0] <= 0.5 && r.pooled.ci95[1] >= 0.5 && r.pooled.ci95[0] >= -0.5 && r.pooled.ci95[1] <= 1.5, `CI ${r.pooled.ci95}`);
    assert.deepEqual(r.pooled.ci95, importReview(key, digest, [{ path: 'ann.json', doc: ann }, { path: 'bob.json', doc: bob }]).pooled.ci95, 'seeded');
    assert.equal(r.meetsThreshold, true, 'mean 0.5 meets >= 0.5');
    assert.ok(Math.abs(r.agreement!.alpha! - 17 / 24) < 1e-12, "alpha of the preference pairs (2,1) (1,1) (0,0) (0,-1)");
    assert.match(r.agreement!.statistic, /Krippendorff's alpha \(interval\)/);
    assert.equal(importReview(key, digest, [{ path: 'ann.json', doc: ann }]).agreement, null, 'one reviewer: no agreement');
    const judge = { ...bob, reviewer: 'judge', rater: 'judge' as const };
    assert.throws(() => importReview(key, digest, [{ path: 'ann.json', doc: ann }, { path: 'j.json', doc: judge }]), /j\.json: field 'rater': a judge's ratings are imported on their own/);
  } finally {
    s.done();
  }
});

test('criterion 4 of the shipping verdict: not evaluated without a review, pass/fail from a human review of the same pair, never from a judge', () => {
  const s = setup(4);
  try {
    const parsed = parseResultsObject(reviewResultsDoc(4), 'r.json');
    const [base, cand] = parsed.columns as [typeof parsed.columns[0], typeof parsed.columns[0]];
    const c4 = (reviews: Parameters<typeof shippingCriteria>[2]) => shippingCriteria(base!, cand!, reviews).criteria[3]!;
    const none = c4({});
    assert.equal(none.passed, null);
    assert.match(none.detail, /^not evaluated: run rankgate review export RESULTS --baseline 'zqBaselineLabel hybrid rrf6161' --candidate 'zqCandidateLabel rm3 fb7717' -o review\.html/);

    const { key, digest } = s.load();
    const save = (name: string, reviewers: [string, number[], number[]][], rater?: 'judge') => {
      const r = importReview(key, digest, reviewers.map(([n, c, b]) => ({ path: `${n}.json`, doc: { ...s.unblinded(n, c, b), ...(rater ? { rater } : {}) } })));
      return readReviewResult(s.write(name, r));
    };
    const pass = save('pass.json', [['ann', [5, 4, 3, 4], [3, 3, 3, 4]], ['bob', [4, 4, 3, 3], [3, 3, 3, 4]]]);
    const fail = save('fail.json', [['bob', [4, 4, 3, 3], [3, 3, 3, 4]]]);
    const judged = save('judge.json', [['judge', [5, 5, 5, 5], [1, 1, 1, 1]]], 'judge');
    assert.equal(c4({ reviews: [pass] }).passed, true);
    assert.match(c4({ reviews: [pass] }).detail, /human blind review \(.*pass\.json\): candidate preferred by \+0\.50 points \(95% CI \[.*\]\) over 4 queries, 2 reviewer\(s\); Krippendorff's alpha \(interval\) 0\.71; needs mean >= \+0\.5/);
    assert.equal(c4({ reviews: [fail] }).passed, false);
    assert.equal(shippingCriteria(base!, cand!, { reviews: [fail] }).ship, false, 'a failed review stops the ship');
    const j = c4({ reviews: [judged] });
    assert.equal(j.passed, null, 'a judge never decides criterion 4');
    assert.match(j.detail, /^not evaluated: .*\(judge, not human: .*judge\.json rates the candidate \+4\.00 points; not counted\)/);
    // another pair's review: not evaluated, and says whose it is
    const swapped = shippingCriteria(cand!, base!, { reviews: [pass] }).criteria[3]!;
    assert.equal(swapped.passed, null);
    assert.match(swapped.detail, /the review results given are of 'zqCandidateLabel rm3 fb7717' vs 'zqBaselineLabel hybrid rrf6161'/);
    // the candidate's provider config changed since the export: not evaluated
    const changed = { ...cand!, config: { ...cand!.config, rrfK: 1 } };
    const ch = shippingCriteria(base!, changed, { reviews: [pass] }).criteria[3]!;
    assert.equal(ch.passed, null);
    assert.match(ch.detail, /reviewed another provider config/);
    // a result file edited into nonsense is refused
    const bad = JSON.parse(readFileSync(pass.path, 'utf8'));
    delete bad.pooled.preference;
    assert.throws(() => readReviewResult(s.write('bad.json', bad)), /bad\.json: field 'pooled': expected \{preference, ci95, queries, reviewers\}/);
  } finally {
    s.done();
  }
});

// ------------------------------------------------------------------------------------------------ the judge stand-in
import { rankgate } from '../harness/helpers.ts';
import { startFakeLlm } from '../helpers/fake-llm.ts';
import { renderReviewPage as render } from '../../src/report/html/review.ts';
import { parseReviewAnswer } from '../../src/judge/review-prompt.ts';

test('the judge stand-in rates the blinded pairs through a chat provider: "judge, not human", never criterion 4', async () => {
  assert.deepEqual(parseReviewAnswer('X=4 Y=2'), { x: 4, y: 2 });
  assert.deepEqual(parseReviewAnswer('x: 5, y: 1'), { x: 5, y: 1 });
  assert.equal(parseReviewAnswer('X=6 Y=2'), null);
  const s = setup(4);
  const llm = await startFakeLlm(() => 'X=4 Y=2');
  try {
    const { page, key } = exportOf(reviewResultsDoc(4), { queries: 4 });
    const html = join(s.dir, 'review.html');
    writeFileSync(html, render(page));
    const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${llm.url}/v1`, PROMPTFOO_CONFIG_DIR: join(s.dir, '.promptfoo'), PROMPTFOO_DISABLE_TELEMETRY: '1', PROMPTFOO_DISABLE_UPDATE: '1', PROMPTFOO_CACHE_ENABLED: 'false' };
    const out = join(s.dir, 'ratings-judge.json');
    const j = await rankgate(['review', 'judge', html, '--judge', 'openai:chat:gpt-4.1-mini', '-o', out], env);
    assert.equal(j.code, 0, j.stderr);
    assert.match(j.stdout, /judge, not human: openai:chat:gpt-4.1-mini rated 4 blinded pairs/);
    assert.equal(llm.requests.length, 4);
    for (const r of llm.requests) assert.deepEqual(leaks(r.text), [], 'the prompt holds nothing of either column');
    const im = await rankgate(['review', 'import', out, '--key', s.keyPath, '-o', join(s.dir, 'review-judge.json')]);
    assert.equal(im.code, 0, im.stderr);
    assert.match(im.stdout, /^judge, not human: /);
    assert.match(im.stdout, /criterion 4: not counted/);
    const parsed = parseResultsObject(reviewResultsDoc(4), 'r.json');
    const c4 = shippingCriteria(parsed.columns[0]!, parsed.columns[1]!, { reviews: [readReviewResult(join(s.dir, 'review-judge.json'))] }).criteria[3]!;
    assert.equal(c4.passed, null);
    assert.match(c4.detail, /\(judge, not human: .* not counted\)/);
    // the X side is always 4: the unblinded preference follows the key's sides
    const expected = key.assignment.reduce((a, x) => a + (x.candidate === 'X' ? 2 : -2), 0) / 4;
    assert.equal(JSON.parse(readFileSync(join(s.dir, 'review-judge.json'), 'utf8')).pooled.preference, expected);
    // a judge that fails: one line naming the query, exit 2, nothing written
    llm.reply = () => 'I think X is better';
    const bad = await rankgate(['review', 'judge', html, '--judge', 'openai:chat:gpt-4.1-mini', '-o', join(s.dir, 'bad.json')], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, new RegExp(`^rankgate review: .*review\\.html: query '${key.assignment[0]!.id}': the judge openai:chat:gpt-4.1-mini answered "I think X is better", not "X=<1-5> Y=<1-5>"; no ratings written\\n$`));
  } finally {
    await llm.close();
    s.done();
  }
});
