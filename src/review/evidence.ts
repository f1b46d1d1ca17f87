/**
 * Criterion 4 of the shipping criteria from review results, and what a review result must show to be counted.
 *
 * A review result (`rankgate review import -o`) records the key file and the ratings files it was computed from (paths
 * relative to the result, and their SHA-256). The verdict never trusts the result's own numbers: loadReviewEvidence
 * reads those files through a reader, checks their digests, RE-DERIVES the result with the same function import ran
 * (deriveReview, deterministic with its seed) and compares; anything that does not re-derive is "not counted" with the
 * reason. The reader is a parameter so the gate can read the key and ratings of a pull request's BASE branch; the
 * default reads the working tree.
 *
 * Seals (src/util/seal.ts). With RANKGATE_SEAL_KEY set at import, the result carries a keyed seal over its canonical
 * JSON; at the verdict:
 * - a keyed seal is verified with the key; one that does not verify is not counted; one that cannot be verified (no key
 *   here: a fork's pull request) says so and is not counted;
 * - with a key configured here, a result with no keyed seal is not counted (anyone could have written it), unless the
 *   reader reads a trusted source (the base branch);
 * - with no key anywhere, re-derivation from the files is all there is: counted, and the verdict says it is an
 *   accident check (a hand-written or hand-edited result is caught; a consistent forgery by someone holding the key
 *   file is not).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UserError } from '../errors.ts';
import type { Column } from '../results/read.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import type { RefReader } from '../util/git.ts';
import { canonicalJson, checkSeal, sealKey, sealPhrase, sealText, sha256Hex, SEAL_KEY_ENV } from '../util/seal.ts';
import { deriveReview } from './import.ts';
import { checkColumnRef, checkVersion, columnRef, isObj, parseJson } from './key.ts';
import { MIN_PREFERENCE, type ReviewColumnRef, type ReviewResult } from './types.ts';

/** The purpose label of a review result's seal. */
export const REVIEW_SEAL_PURPOSE = 'review-result';

/** A file reader: the text of a path, or null when there is no such file. */
export type FileReader = (path: string) => string | null;

/** The working tree: regular files only (a fifo or device is refused, never waited on). */
export const workingTreeReader: FileReader = (path) => {
  if (!existsSync(path)) return null;
  return readRegularFileSync(path, 'utf8');
};

/** The result sealed for writing: keyed when RANKGATE_SEAL_KEY is set, else the unkeyed accident check. */
export function sealResult(result: ReviewResult, key: Buffer | null): ReviewResult {
  const { seal: _s, ...rest } = result;
  return { ...rest, seal: sealText(REVIEW_SEAL_PURPOSE, canonicalJson(rest), key) };
}

export interface ReviewEvidence {
  path: string;
  /** The result as the file says (null: not readable as a review result). */
  result: ReviewResult | null;
  /** true: re-derived (and its seal verified where one applies); the criterion may use it. */
  counted: boolean;
  /** Why it is not counted (one phrase), or what it rests on when counted. */
  detail: string;
}

/** The name the shipping verdict and the CLI use for a loaded review result. */
export type LoadedReview = ReviewEvidence;

export interface EvidenceOptions {
  /** The seal key (default: RANKGATE_SEAL_KEY of the environment). */
  sealKey?: Buffer | null;
  /** Where `read` reads, for the verdict's words (default "the working tree"). */
  source?: string;
  /** The reader reads a source a pull request cannot edit (its base branch): re-derivation from it is enough. */
  trusted?: boolean;
}

/**
 * A review result and the files it names, re-derived and checked (pure: every byte comes through `read`). Never
 * throws for a result that is wrong: it is "not counted" with the reason.
 */
export function loadReviewEvidence(resultPath: string, read: FileReader = workingTreeReader, opts: EvidenceOptions = {}): ReviewEvidence {
  const source = opts.source ?? 'the working tree';
  const notCounted = (result: ReviewResult | null, why: string): ReviewEvidence => ({ path: resultPath, result, counted: false, detail: why });
  let text: string | null;
  try {
    text = read(resultPath);
  } catch (e) {
    return notCounted(null, `cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  if (text === null) return notCounted(null, `no such file in ${source}`);
  let r: ReviewResult;
  try {
    r = checkResultShape(parseJson(text, resultPath, 'review result written by `rankgate review import`'), resultPath);
  } catch (e) {
    return notCounted(null, (e as Error).message.replace(`${resultPath}: `, ''));
  }
  if (!isObj(r.key) || typeof r.key.file !== 'string' || !Array.isArray(r.ratings) || !r.ratings.length)
    return notCounted(r, 'it names no key file and ratings files to re-derive it from (a review result counts only as `rankgate review import` writes it)');
  // the seal
  let key: Buffer | null;
  try {
    key = opts.sealKey === undefined ? sealKey() : opts.sealKey;
  } catch (e) {
    return notCounted(r, (e as Error).message);
  }
  const { seal, ...rest } = r;
  const check = checkSeal(REVIEW_SEAL_PURPOSE, canonicalJson(rest), seal, key);
  if (check.status === 'mismatch') return notCounted(r, `its ${sealPhrase(check)}`);
  if (check.status === 'unverifiable' && !opts.trusted) return notCounted(r, `its ${sealPhrase(check)}`);
  if (key && check.status !== 'verified' && !opts.trusted)
    return notCounted(r, `it has ${check.status === 'missing' ? 'no seal' : 'only an unkeyed seal'} while ${SEAL_KEY_ENV} is set: anyone could have written it (run rankgate review import where ${SEAL_KEY_ENV} is set)`);
  // the files it names, by digest, and the result re-derived from them
  const dir = dirname(resultPath);
  const at = (file: string) => join(dir, file);
  const readSource = (what: string, f: { file?: unknown; sha256?: unknown }): { path: string; file: string; text: string } | string => {
    if (typeof f.file !== 'string' || typeof f.sha256 !== 'string') return `its field '${what}' is not {file, sha256}`;
    const p = at(f.file);
    let t: string | null;
    try {
      t = read(p);
    } catch (e) {
      return `cannot read its ${what} ${p} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
    }
    if (t === null) return `its ${what} ${p} is not in ${source} (paths are relative to the result)`;
    if (sha256Hex(Buffer.from(t, 'utf8')) !== f.sha256) return `its ${what} ${p} changed since the import (SHA-256 differs${what === 'key file' ? '; a `review judge` run appends to the key' : ''}): run rankgate review import again`;
    return { path: p, file: f.file, text: t };
  };
  const k = readSource('key file', r.key);
  if (typeof k === 'string') return notCounted(r, k);
  const ratings: { path: string; file: string; text: string }[] = [];
  for (const f of r.ratings) {
    const x = readSource('ratings file', isObj(f) ? f : {});
    if (typeof x === 'string') return notCounted(r, x);
    ratings.push(x);
  }
  let derived: ReviewResult;
  try {
    derived = deriveReview({ key: k, ratings, seed: r.seed });
  } catch (e) {
    return notCounted(r, `re-deriving it from its files fails: ${(e as Error).message}`);
  }
  if (canonicalJson(derived) !== canonicalJson(rest)) {
    const field = (Object.keys({ ...derived, ...rest }) as (keyof ReviewResult)[]).find((f) => canonicalJson(derived[f]) !== canonicalJson(rest[f as keyof typeof rest]));
    return notCounted(r, `it does not re-derive from its key and ratings files (field '${String(field)}' differs): it was edited after the import`);
  }
  const proof =
    check.status === 'verified'
      ? `re-derived from ${ratings.length} ratings file(s) and its key; ${sealPhrase(check)}`
      : opts.trusted
        ? `re-derived from ${ratings.length} ratings file(s) and the key as ${source} has them`
        : `re-derived from ${ratings.length} ratings file(s) and its key: an accident check, not proof (set ${SEAL_KEY_ENV} in CI for keyed seals)`;
  return { path: resultPath, result: r, counted: true, detail: proof };
}

/** Enough of a result's shape to tell its pair and print it; everything else is re-derived. */
function checkResultShape(r: unknown, path: string): ReviewResult {
  if (!isObj(r) || r.kind !== 'rankgate-review-result') throw new UserError(`${path}: field 'kind': expected "rankgate-review-result" (the file rankgate review import writes)`);
  checkVersion(path, r.version, 'the review result');
  if (r.rater !== 'human' && r.rater !== 'judge') throw new UserError(`${path}: field 'rater': expected "human" or "judge"`);
  checkColumnRef(path, 'baseline', r.baseline);
  checkColumnRef(path, 'candidate', r.candidate);
  const p = r.pooled as Record<string, unknown> | undefined;
  const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  if (!isObj(p) || !num(p.preference) || !num(p.queries) || !num(p.reviewers) || !Array.isArray(p.ci95) || !p.ci95.every(num))
    throw new UserError(`${path}: field 'pooled': expected {preference, ci95, queries, reviewers} (numbers)`);
  if (!num(r.queries) || (r.queries as number) < 1) throw new UserError(`${path}: field 'queries': expected the number of rated queries (${JSON.stringify(r.queries)})`);
  if (!Number.isInteger(r.seed)) throw new UserError(`${path}: field 'seed': expected the import's seed`);
  return r as unknown as ReviewResult;
}

/**
 * A review result named on the command line (`--review FILE`) or in RANKGATE_REVIEW: a missing file or one that is not
 * a review result is a user error (exit 2); a result that is wrong is loaded as "not counted".
 */
export function readReviewResult(path: string, opts: EvidenceOptions = {}): LoadedReview {
  if (!existsSync(path)) throw new UserError(`${path}: no such review result (write it with rankgate review import ratings.json ... -o ${path})`);
  let text: string;
  try {
    text = readRegularFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the review result (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  checkResultShape(parseJson(text, path, 'review result written by `rankgate review import`'), path);
  return loadReviewEvidence(path, workingTreeReader, opts);
}

/** The environment variable (a comma-separated list of review result files) every shipping verdict reads. */
export const REVIEW_ENV = 'RANKGATE_REVIEW';

export function reviewsFromEnv(env: NodeJS.ProcessEnv = process.env, base: RefReader | null = null): LoadedReview[] {
  const v = env[REVIEW_ENV];
  if (!v || !v.trim()) return [];
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((p) => reviewForGate(p, base));
}

/**
 * A review result as a gate reads it. On a pull request (`base`: src/util/git.ts) the result, its key and its ratings
 * are read at the base branch, which the pull request cannot edit: re-derived from there, it counts. One the base does
 * not have (a review the pull request brings) does not count, keyed or not: the pull request's own code runs in the
 * job before the gate (its eval), with whatever secrets that step holds. Merge the review first. Without a base: the
 * working tree (readReviewResult).
 */
export function reviewForGate(path: string, base: RefReader | null): LoadedReview {
  if (!base) return readReviewResult(path);
  const source = `the base branch ${base.name}`;
  const atBase = loadReviewEvidence(path, (p) => base.read(p), { trusted: true, source });
  if (atBase.counted || atBase.result !== null || !/^no such file in /.test(atBase.detail)) return atBase;
  const own = existsSync(path) ? loadReviewEvidence(path, workingTreeReader, { source: 'this pull request' }) : atBase;
  return { ...own, counted: false, detail: `it is not on ${source}: a review counts on a pull request once it is on the base branch (merge the review first; the pull request's own files and steps cannot vouch for it)` };
}

const signed = (x: number, d = 2) => `${x >= 0 ? '+' : ''}${x.toFixed(d)}`;
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** How to run the review, in the words of the criterion "not evaluated" (the results path when the caller knows it). */
export function howToReview(baseline: string, candidate: string, resultsPath?: string): string {
  return `run rankgate review export ${resultsPath ? q(resultsPath) : 'RESULTS'} --baseline ${q(baseline)} --candidate ${q(candidate)} -o review.html, have reviewers rate the page, then rankgate review import ratings.json ... -o review-result.json and pass --review review-result.json (or ${REVIEW_ENV}); docs/review.md`;
}

/** The same provider config: both digests known and equal (an unknown config matches nothing: fail closed). */
const sameConfig = (a: ReviewColumnRef, b: ReviewColumnRef) => a.configDigest !== null && a.configDigest === b.configDigest;

/**
 * Criterion 4 for one baseline/candidate pair: pass/fail from a counted human review of the same two columns (labels
 * and provider configs), else not evaluated (null) with the way to run one and why each given review was not counted.
 * Never passed on a judge's ratings, another pair's review or a result that does not re-derive.
 */
export function reviewCriterion(reviews: readonly LoadedReview[], baseline: Column, candidate: Column, opts: { resultsPath?: string } = {}): { passed: boolean | null; detail: string } {
  const how = howToReview(baseline.label, candidate.label, opts.resultsPath);
  const ofPair = (r: LoadedReview) => r.result !== null && r.result.baseline.label === baseline.label && r.result.candidate.label === candidate.label;
  const pair = reviews.filter(ofPair);
  const unreadable = reviews.filter((r) => r.result === null).map((r) => ` (${r.path} not counted: ${r.detail})`);
  const judged = pair.find((r) => r.result!.rater === 'judge' && r.counted);
  const judgeNote = judged ? ` (judge, not human: ${judged.path} rates the candidate ${signed(judged.result!.pooled.preference)} points; not counted)` : '';
  const human = pair.filter((r) => r.result!.rater === 'human');
  const refused = human.filter((r) => !r.counted).map((r) => ` (${r.path} not counted: ${r.detail})`);
  const counted = human.filter((r) => r.counted);
  if (!counted.length) {
    const others = reviews.filter((r) => r.result !== null && !ofPair(r)).map((r) => `'${r.result!.candidate.label}' vs '${r.result!.baseline.label}'`);
    return {
      passed: null,
      detail: `not evaluated: ${how}${others.length ? ` (the review results given are of ${[...new Set(others)].join(', ')})` : ''}${refused.join('')}${unreadable.join('')}${judgeNote}`,
    };
  }
  const cur = { baseline: columnRef(baseline), candidate: columnRef(candidate) };
  const valid = counted.filter((r) => sameConfig(r.result!.baseline, cur.baseline) && sameConfig(r.result!.candidate, cur.candidate));
  if (!valid.length) {
    const r0 = counted[0]!.result!;
    const unknown = [r0.baseline, r0.candidate, cur.baseline, cur.candidate].some((c) => c.configDigest === null);
    return {
      passed: null,
      detail: `not evaluated: ${counted[0]!.path} reviewed ${unknown ? 'columns whose provider config is unknown on one side (a JSONL results file of an older rankgate): it cannot be matched to' : 'another provider config of'} '${candidate.label}' or '${baseline.label}' than these results: ${how}`,
    };
  }
  // the most recent export wins when several reviews of the pair are given (the file order)
  const last = valid[valid.length - 1]!;
  const r = last.result!;
  const p = r.pooled;
  const passed = r.queries > 0 && p.reviewers >= 1 && p.preference >= MIN_PREFERENCE - 1e-9;
  const alpha = r.agreement ? `; Krippendorff's alpha (interval) ${r.agreement.alpha === null ? 'undefined' : r.agreement.alpha.toFixed(2)}` : '';
  const identical = p.identical ? ` (+${p.identical} identical pairs counted as no preference)` : '';
  return {
    passed,
    detail: `human blind review (${last.path}; ${last.detail}): candidate preferred by ${signed(p.preference)} points (95% CI [${signed(p.ci95[0])}, ${signed(p.ci95[1])}]) over ${r.queries} queries${identical}, ${p.reviewers} reviewer(s)${alpha}; needs mean >= +${MIN_PREFERENCE.toFixed(1)}${refused.join('')}${judgeNote}`,
  };
}
