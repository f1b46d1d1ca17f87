/**
 * `rankgate review import`, as a pure function of the key file's and the ratings files' texts (deriveReview): the
 * checks of every ratings file against the key, the unblinding and the statistics. The verdict runs the same function on
 * the files a review result names, so a result is counted only when it re-derives (src/review/evidence.ts).
 *
 * Statistics. A rating pair (X, Y) unblinds to (baseline, candidate); the preference of one query is candidate -
 * baseline (-4..+4 points); an identical pair left off the page (--skip-identical) is a preference of 0. Per reviewer
 * and pooled (per query, the mean over reviewers) the mean preference with a seeded percentile bootstrap 95% CI over
 * queries (bootstrapCI, src/metrics/significance.ts). Agreement between two or more reviewers: Krippendorff's alpha,
 * interval metric, on the rated queries' preferences (src/metrics/agreement.ts).
 *
 * Refused, each in one line naming the file and the field: ratings of another export or of an edited key; a partial
 * review; one reviewer twice under names that normalise alike (src/review/names.ts); a name not on the export's
 * --reviewers list, or a listed reviewer missing; a judge's ratings mixed with human ones; a file marked human that
 * carries a judge's MAC or whose ratings are a set `review judge` produced (the key records their digests); a file
 * marked judge without a valid MAC.
 */
import { UserError } from '../errors.ts';
import { krippendorffAlphaInterval } from '../metrics/agreement.ts';
import { bootstrapCI } from '../metrics/significance.ts';
import { sha256Hex } from '../util/seal.ts';
import { checkVersion, isObj, judgeMacOk, judgeSetDigest, parseJson, parseReviewKey } from './key.ts';
import { normaliseReviewer, shownName } from './names.ts';
import { MIN_PREFERENCE, REVIEW_FORMAT, type PreferenceStat, type RatingsDoc, type ReviewKey, type ReviewResult } from './types.ts';

/** One ratings file's text, checked against the key: the export, the key's digest, the reviewer, every item rated once, 1-5. */
export function parseRatings(text: string, path: string, key: ReviewKey, digest: string, keyPath: string): RatingsDoc {
  const d = parseJson(text, path, 'ratings file downloaded from the review page');
  if (!isObj(d) || d.kind !== 'rankgate-review-ratings') throw new UserError(`${path}: field 'kind': expected "rankgate-review-ratings" (the file the review page downloads)`);
  checkVersion(path, d.version, 'the ratings file');
  if (d.exportId !== key.exportId) throw new UserError(`${path}: field 'exportId': these ratings belong to export ${JSON.stringify(d.exportId)}, not ${key.exportId} of ${keyPath}: import each export's ratings with its own key`);
  if (d.keyDigest !== digest) throw new UserError(`${path}: field 'keyDigest': ${JSON.stringify(d.keyDigest)} does not match ${keyPath} (digest ${digest}): the blinding key or this file was edited after the export`);
  if (typeof d.reviewer !== 'string' || !normaliseReviewer(d.reviewer)) throw new UserError(`${path}: field 'reviewer': expected the reviewer's name, got ${JSON.stringify(d.reviewer)}`);
  if (d.rater !== 'human' && d.rater !== 'judge') throw new UserError(`${path}: field 'rater': expected "human" or "judge", got ${JSON.stringify(d.rater)}`);
  if (d.mac !== undefined && typeof d.mac !== 'string') throw new UserError(`${path}: field 'mac': expected the judge's MAC (hex), got ${JSON.stringify(d.mac)?.slice(0, 40)}`);
  if (!Array.isArray(d.ratings)) throw new UserError(`${path}: field 'ratings': expected a list of {item, x, y}`);
  const n = key.assignment.length;
  const seen = new Set<number>();
  d.ratings.forEach((r: unknown, i: number) => {
    if (!isObj(r) || typeof r.item !== 'number' || !Number.isInteger(r.item)) throw new UserError(`${path}: ratings[${i}]: field 'item': expected an item number of the page, got ${JSON.stringify(isObj(r) ? r.item : r)}`);
    const it = r.item;
    if (it < 1 || it > n) throw new UserError(`${path}: item ${it}: not an item of export ${key.exportId} (1 to ${n}; ratings[${i}])`);
    if (seen.has(it)) throw new UserError(`${path}: item ${it}: rated more than once (ratings[${i}]); each reviewer rates each item once`);
    seen.add(it);
    for (const f of ['x', 'y'] as const) {
      const v = r[f];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 5) throw new UserError(`${path}: item ${it}: field '${f}': expected a whole rating from 1 to 5, got ${JSON.stringify(v)}`);
    }
    if (r.note !== undefined && typeof r.note !== 'string') throw new UserError(`${path}: item ${it}: field 'note': expected text, got ${JSON.stringify(r.note)}`);
  });
  if (seen.size < n) {
    const missing = key.assignment.find((a) => !seen.has(a.item))!;
    throw new UserError(`${path}: item ${missing.item}: fields 'x', 'y': not rated (${n - seen.size} of ${n} items unrated); a review counts only when complete`);
  }
  return d as unknown as RatingsDoc;
}

function preference(base: number[], cand: number[], identical: number, seed: number): PreferenceStat {
  const zeros = Array<number>(identical).fill(0);
  const ci = bootstrapCI([...base, ...zeros], [...cand, ...zeros], { seed, iterations: 10000 });
  const m = (xs: number[]) => (xs.length ? xs.reduce((a, x) => a + x, 0) / xs.length : 0);
  let wins = 0;
  let ties = identical;
  let losses = 0;
  base.forEach((b, i) => {
    const c = cand[i]!;
    if (c > b) wins++;
    else if (c < b) losses++;
    else ties++;
  });
  return { queries: base.length + identical, identical, baselineMean: m(base), candidateMean: m(cand), preference: ci.mean, ci95: [ci.low, ci.high], wins, ties, losses };
}

export interface SourceText {
  /** the path read (for messages) */
  path: string;
  /** the path recorded in the result: relative to the result file */
  file: string;
  text: string;
}

/**
 * The review result of a key file and ratings files (their texts), checked; deterministic (the bootstrap is seeded), so
 * the verdict can re-derive a result and compare. The seal is the caller's (src/review/evidence.ts sealResult).
 */
export function deriveReview(input: { key: SourceText; ratings: SourceText[]; seed?: number }): ReviewResult {
  const seed = input.seed ?? 42;
  const { key, digest } = parseReviewKey(input.key.text, input.key.path);
  if (!input.ratings.length) throw new UserError('no ratings file given');
  const files = input.ratings.map((r) => ({ ...r, doc: parseRatings(r.text, r.path, key, digest, input.key.path) }));
  // one reviewer, one file: names compared normalised
  const byName = new Map<string, { path: string; name: string }>();
  for (const f of files) {
    const norm = normaliseReviewer(f.doc.reviewer);
    const prev = byName.get(norm);
    if (prev)
      throw new UserError(
        `${f.path}: field 'reviewer': ${shownName(f.doc.reviewer)} is the same reviewer as ${shownName(prev.name)} in ${prev.path} (names are compared after Unicode NFKC, case folding and removing invisible characters); each reviewer rates each item once`,
      );
    byName.set(norm, { path: f.path, name: f.doc.reviewer });
  }
  if (key.reviewers) {
    const expected = new Map(key.reviewers.map((n) => [normaliseReviewer(n), n]));
    const stranger = files.find((f) => !expected.has(normaliseReviewer(f.doc.reviewer)) && f.doc.rater === 'human');
    if (stranger) throw new UserError(`${stranger.path}: field 'reviewer': ${shownName(stranger.doc.reviewer)} is not one of the export's reviewers (${key.reviewers.join(', ')})`);
    const missing = [...expected].filter(([n]) => !byName.has(n)).map(([, n]) => n);
    if (missing.length && files.every((f) => f.doc.rater === 'human'))
      throw new UserError(`${input.key.path}: field 'reviewers': no ratings of ${missing.join(', ')} (the export's reviewers: ${key.reviewers.join(', ')}); a review counts only when every named reviewer rated`);
  }
  const judged = new Set(key.judged ?? []);
  for (const f of files) {
    if (f.doc.rater === 'judge') {
      if (!judgeMacOk(key.secret, f.doc)) throw new UserError(`${f.path}: field 'mac': missing or not this export's (a judge's ratings carry the MAC rankgate review judge writes with the export's key)`);
    } else {
      if (f.doc.mac !== undefined) throw new UserError(`${f.path}: field 'mac': a judge's MAC in ratings marked "rater": "human": a judge's ratings are never a human review`);
      if (judged.has(judgeSetDigest(key.exportId, f.doc.ratings)))
        throw new UserError(`${f.path}: field 'rater': these ratings are a set rankgate review judge produced for this export (${input.key.path} records its digest): a judge's ratings are never a human review`);
    }
  }
  const raters = new Set(files.map((f) => f.doc.rater));
  if (raters.size > 1) throw new UserError(`${files.find((f) => f.doc.rater === 'judge')!.path}: field 'rater': a judge's ratings are imported on their own, never pooled with human reviewers`);
  const skipped = key.skippedIdentical.length;
  const perQuery: ReviewResult['perQuery'] = key.assignment.map((a) => ({ id: a.id, identical: a.identical, skipped: false, baseline: [], candidate: [], notes: [] }));
  const reviewers: ReviewResult['reviewers'] = [];
  for (const f of files) {
    const r = new Map(f.doc.ratings.map((x) => [x.item, x]));
    const base: number[] = [];
    const cand: number[] = [];
    key.assignment.forEach((a, i) => {
      const e = r.get(a.item)!;
      const candIsX = a.candidate === 'X';
      const c = candIsX ? e.x : e.y;
      const b = candIsX ? e.y : e.x;
      base.push(b);
      cand.push(c);
      perQuery[i]!.baseline.push(b);
      perQuery[i]!.candidate.push(c);
      if (e.note?.trim()) perQuery[i]!.notes.push(`${f.doc.reviewer.trim()}: ${e.note.trim()}`);
    });
    reviewers.push({ name: f.doc.reviewer.trim(), file: f.file, ...preference(base, cand, skipped, seed) });
  }
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  const rated = perQuery.slice();
  const pooled = { reviewers: files.length, ...preference(rated.map((q) => mean(q.baseline)), rated.map((q) => mean(q.candidate)), skipped, seed) };
  const alpha = files.length >= 2 ? krippendorffAlphaInterval(rated.map((q) => q.candidate.map((c, j) => c - q.baseline[j]!))) : null;
  for (const id of key.skippedIdentical) perQuery.push({ id, identical: true, skipped: true, baseline: [], candidate: [], notes: [] });
  const sha = (t: string) => sha256Hex(Buffer.from(t, 'utf8'));
  return {
    kind: 'rankgate-review-result',
    version: REVIEW_FORMAT,
    rater: [...raters][0]!,
    exportId: key.exportId,
    keyDigest: digest,
    key: { file: input.key.file, sha256: sha(input.key.text) },
    ratings: files.map((f) => ({ file: f.file, sha256: sha(f.text) })),
    results: key.results,
    baseline: key.baseline,
    candidate: key.candidate,
    queries: key.assignment.length,
    seed,
    rule: `criterion 4 passes when the pooled mean preference of the candidate (candidate - baseline rating, points on the 1-5 scale) is >= ${MIN_PREFERENCE}${skipped ? `; the ${skipped} identical pairs left off the page count as no preference (0)` : ''}`,
    reviewers,
    pooled,
    agreement: alpha
      ? { statistic: "Krippendorff's alpha (interval) on the rated queries' preference, candidate - baseline", alpha: alpha.alpha, units: alpha.units }
      : null,
    meetsThreshold: pooled.preference >= MIN_PREFERENCE - 1e-9,
    perQuery,
  };
}
