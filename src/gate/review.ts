/**
 * Criterion 4 of the blind-test shipping criteria, "human blind review prefers the candidate by at least 0.5 points on
 * a 1-5 scale": the blinding of an export, the checks and statistics of an import, and the criterion itself.
 * (The page is rendered by src/report/html/review.ts; the command is src/cli/review.ts; docs/review.md.)
 *
 * Blinding. Per sampled query the two columns' top results are shown as "X" and "Y". Which one is the candidate comes
 * from HMAC-SHA256(secret, exportId + "\n" + query id), lowest bit: a 256-bit secret drawn fresh for each export and
 * kept only in the key file (review.key.json), never in the page. The sample of queries is seeded (--seed, mulberry32)
 * and reproducible; the X/Y assignment is not derivable from the seed, the page or the code without the secret. The
 * page carries the export's id and the SHA-256 digest of the key file's canonical JSON (a commitment: the digest of a
 * file holding a 256-bit secret tells nothing about the assignment), and each ratings file carries both back, so
 * `import` detects ratings of another export and a key file edited after the export.
 *
 * Statistics. A rating pair (X, Y) unblinds to (baseline, candidate); the preference of one query is candidate -
 * baseline (-4..+4 points). Per reviewer and pooled (per query, the mean over reviewers) the mean preference with a
 * seeded percentile bootstrap 95% CI over queries (bootstrapCI, src/metrics/significance.ts). Agreement between two
 * or more reviewers: Krippendorff's alpha, interval metric, on the per-query preferences (src/metrics/agreement.ts):
 * it takes any number of reviewers, and the interval metric matches the criterion, which averages the same
 * differences as points (a reviewer who prefers B by 3 and one who prefers it by 1 agree more than one who prefers A).
 *
 * The criterion passes when the pooled mean preference is >= 0.5 points (the seed's "prefers B by at least 0.5
 * points", a point estimate like criterion 1's "+10 points"; the CI is reported beside it), from a complete human
 * review (every sampled query rated once by every reviewer: import refuses anything less) of the same two columns
 * (labels and provider configs) as the verdict's. Anything else leaves it "not evaluated"; a judge's ratings never
 * count.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { GoldenQuerySchema } from '../golden/schema.ts';
import { krippendorffAlphaInterval } from '../metrics/agreement.ts';
import { bootstrapCI, mulberry32 } from '../metrics/significance.ts';
import type { Column, ParsedResults } from '../results/read.ts';
import { parseOutput } from '../results/score.ts';
import type { HarnessHit } from '../results/types.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { canonicalJson } from '../util/seal.ts';

/** The criterion's threshold: points on the 1-5 scale. */
export const MIN_PREFERENCE = 0.5;
/** Default number of sampled queries of an export (about an hour of reviewing at a minute a pair). */
export const DEFAULT_REVIEW_QUERIES = 50;
/** Default number of results shown per list. */
export const DEFAULT_REVIEW_HITS = 5;
/** A shown result's text is cut at this many characters (the same cut on both sides). */
const MAX_TEXT = 1500;

export type Side = 'X' | 'Y';

export interface ReviewColumnRef {
  label: string;
  index: number;
  /** SHA-256 of the column's provider config (canonical JSON); null when the results do not say it. */
  configDigest: string | null;
}

/** What a reviewer sees of one result: no rank-fusion detail, score, chunk id, channel or provider anything. */
export interface ShownHit {
  title: string;
  heading?: string;
  text: string;
}

export interface ReviewItem {
  id: string;
  query: string;
  X: ShownHit[];
  Y: ShownHit[];
}

/** Everything the page holds: nothing that tells X from Y. */
export interface ReviewPageData {
  kind: 'rankgate-review-page';
  version: 1;
  exportId: string;
  keyDigest: string;
  hits: number;
  items: ReviewItem[];
}

/** The key file (review.key.json): the unblinding, kept away from the reviewers. */
export interface ReviewKey {
  kind: 'rankgate-review-key';
  version: 1;
  exportId: string;
  created: string;
  results: { file: string; evalId: string | null };
  baseline: ReviewColumnRef;
  candidate: ReviewColumnRef;
  seed: number;
  hits: number;
  /** Queries both columns answered without an error (the sample's population), and how many were left out. */
  eligible: number;
  erroredLeftOut: number;
  /** 64 hex digits: the HMAC key of the X/Y assignment. */
  secret: string;
  /** The sampled queries in page order, with the side the candidate was shown on. */
  assignment: { id: string; candidate: Side }[];
}

export interface RatingEntry {
  query: string;
  x: number;
  y: number;
  note?: string;
}

/** The file the page downloads. */
export interface RatingsDoc {
  kind: 'rankgate-review-ratings';
  version: 1;
  exportId: string;
  keyDigest: string;
  reviewer: string;
  /** 'human' from the page; 'judge' from `review import --judge` (never criterion 4). */
  rater?: 'human' | 'judge';
  ratings: RatingEntry[];
}

export interface PreferenceStat {
  queries: number;
  baselineMean: number;
  candidateMean: number;
  /** mean of candidate - baseline, points on the 1-5 scale */
  preference: number;
  ci95: [number, number];
  /** queries where the candidate was rated higher / the same / lower */
  wins: number;
  ties: number;
  losses: number;
}

export interface ReviewResult {
  kind: 'rankgate-review-result';
  version: 1;
  rater: 'human' | 'judge';
  exportId: string;
  keyDigest: string;
  results: { file: string; evalId: string | null };
  baseline: ReviewColumnRef;
  candidate: ReviewColumnRef;
  queries: number;
  seed: number;
  rule: string;
  reviewers: (PreferenceStat & { name: string; file: string })[];
  pooled: PreferenceStat & { reviewers: number };
  agreement: { statistic: string; alpha: number | null; units: number } | null;
  /** pass/fail of the threshold on the pooled mean (criterion 4 still needs rater 'human' and the same columns). */
  meetsThreshold: boolean;
  perQuery: { id: string; baseline: number[]; candidate: number[]; notes: string[] }[];
}

// ------------------------------------------------------------------------------------------------ shared pieces

export { canonicalJson };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The digest the page and every ratings file carry: SHA-256 of the key file's canonical JSON. */
export function keyDigest(key: ReviewKey): string {
  return sha256(canonicalJson(key));
}

/** The side the candidate is shown on for one query (keyed: not derivable without the secret). */
export function candidateSide(secret: string, exportId: string, queryId: string): Side {
  const mac = createHmac('sha256', Buffer.from(secret, 'hex')).update(`${exportId}\n${queryId}`).digest();
  return (mac[0]! & 1) === 1 ? 'X' : 'Y';
}

export function columnRef(c: Column): ReviewColumnRef {
  return { label: c.label, index: c.index, configDigest: c.configUnknown ? null : sha256(canonicalJson(c.config ?? {})) };
}

/** A seeded sample of n ids (Fisher-Yates on mulberry32 over the ids sorted), in the sampled order. */
export function sampleIds(ids: readonly string[], n: number, seed: number): string[] {
  const a = [...ids].sort();
  const rnd = mulberry32(seed);
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, Math.min(n, a.length));
}

function shown(hits: readonly HarnessHit[], k: number): ShownHit[] {
  return [...hits]
    .sort((a, b) => a.rank - b.rank)
    .slice(0, k)
    .map((h) => {
      const text = String(h.content ?? '').replace(/\s+/g, ' ').trim();
      return {
        title: String(h.title ?? h.path ?? h.documentId ?? ''),
        ...(h.heading ? { heading: String(h.heading) } : {}),
        text: text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text,
      };
    });
}

interface RawRow {
  promptIdx?: number;
  testCase?: { description?: string; metadata?: Record<string, unknown> };
  response?: { output?: unknown; metadata?: unknown; error?: string };
  error?: string | null;
}

function rowId(row: RawRow): string | null {
  const g = GoldenQuerySchema.safeParse(row.testCase?.metadata?.golden);
  if (g.success) return g.data.id;
  const id = row.testCase?.metadata?.id ?? row.testCase?.description;
  return typeof id === 'string' ? id : null;
}

/** The full ranked hits of one column per query id, from the raw rows (the parsed records keep only a top 3). */
function hitsByQuery(rows: Iterable<unknown>, columnIndex: number): Map<string, HarnessHit[]> {
  const out = new Map<string, HarnessHit[]>();
  for (const r of rows) {
    const row = r as RawRow;
    if ((row.promptIdx ?? 0) !== columnIndex || row.response?.error || row.error) continue;
    const id = rowId(row);
    if (id === null) continue;
    try {
      out.set(id, parseOutput(row.response?.output, row.response?.metadata).hits);
    } catch {
      // no ranking in the row: not reviewable
    }
  }
  return out;
}

// ------------------------------------------------------------------------------------------------ export

export interface ExportOptions {
  baseline: Column;
  candidate: Column;
  queries?: number;
  seed?: number;
  hits?: number;
  /** Tests only: a fixed secret and id (else fresh random ones). */
  secret?: string;
  exportId?: string;
  created?: string;
}

export function buildReviewExport(file: string, parsed: ParsedResults, rows: Iterable<unknown>, opts: ExportOptions): { page: ReviewPageData; key: ReviewKey } {
  const { baseline, candidate } = opts;
  if (baseline.index === candidate.index) throw new UserError(`${file}: --baseline and --candidate name the same column '${baseline.label}': a review compares two columns`);
  const seed = opts.seed ?? 42;
  const k = opts.hits ?? DEFAULT_REVIEW_HITS;
  const want = opts.queries ?? DEFAULT_REVIEW_QUERIES;
  const rowList = [...rows];
  const hb = hitsByQuery(rowList, baseline.index);
  const hc = hitsByQuery(rowList, candidate.index);
  const bq = new Map(baseline.queries.map((q) => [q.id, q]));
  let errored = 0;
  const eligible: string[] = [];
  const queryText = new Map<string, string>();
  for (const q of candidate.queries) {
    const b = bq.get(q.id);
    if (!b) continue;
    if (q.error !== null || b.error !== null || !hb.has(q.id) || !hc.has(q.id)) {
      errored++;
      continue;
    }
    eligible.push(q.id);
    queryText.set(q.id, q.query);
  }
  if (!eligible.length) throw new UserError(`${file}: no query that both '${baseline.label}' and '${candidate.label}' answered without an error: nothing to review`);
  const secret = opts.secret ?? randomBytes(32).toString('hex');
  const exportId = opts.exportId ?? randomBytes(16).toString('hex');
  const ids = sampleIds(eligible, want, seed);
  const assignment = ids.map((id) => ({ id, candidate: candidateSide(secret, exportId, id) }));
  const key: ReviewKey = {
    kind: 'rankgate-review-key',
    version: 1,
    exportId,
    created: opts.created ?? new Date().toISOString(),
    results: { file, evalId: parsed.evalId },
    baseline: columnRef(baseline),
    candidate: columnRef(candidate),
    seed,
    hits: k,
    eligible: eligible.length,
    erroredLeftOut: errored,
    secret,
    assignment,
  };
  const items: ReviewItem[] = assignment.map(({ id, candidate: side }) => {
    const c = shown(hc.get(id)!, k);
    const b = shown(hb.get(id)!, k);
    return { id, query: queryText.get(id)!, X: side === 'X' ? c : b, Y: side === 'X' ? b : c };
  });
  return { page: { kind: 'rankgate-review-page', version: 1, exportId, keyDigest: keyDigest(key), hits: k, items }, key };
}

// ------------------------------------------------------------------------------------------------ import

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readRegularFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the ${what} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UserError(`${path}: not JSON (${(e as Error).message.split('\n')[0]}); expected the ${what}`);
  }
}

const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const HEX = (n: number) => new RegExp(`^[0-9a-f]{${n}}$`);

function checkColumnRef(path: string, field: string, x: unknown): ReviewColumnRef {
  if (!isObj(x) || typeof x.label !== 'string' || typeof x.index !== 'number' || !(x.configDigest === null || typeof x.configDigest === 'string'))
    throw new UserError(`${path}: field '${field}': expected {label, index, configDigest}, got ${JSON.stringify(x)?.slice(0, 80)}`);
  return { label: x.label, index: x.index, configDigest: x.configDigest as string | null };
}

/** The key file, checked: its shape, and every query's side against the HMAC of its secret (an edited side is refused). */
export function readReviewKey(path: string): { key: ReviewKey; digest: string } {
  const k = readJson(path, 'review key file written by `rankgate review export`');
  if (!isObj(k) || k.kind !== 'rankgate-review-key') throw new UserError(`${path}: field 'kind': expected "rankgate-review-key" (the key file \`rankgate review export\` wrote beside the page)`);
  if (k.version !== 1) throw new UserError(`${path}: field 'version': expected 1, got ${JSON.stringify(k.version)}`);
  for (const f of ['exportId', 'secret'] as const) {
    if (typeof k[f] !== 'string' || !HEX(f === 'secret' ? 64 : 32).test(k[f] as string)) throw new UserError(`${path}: field '${f}': expected ${f === 'secret' ? 64 : 32} hex digits (the blinding key was edited)`);
  }
  if (!Array.isArray(k.assignment) || !k.assignment.length) throw new UserError(`${path}: field 'assignment': expected the sampled queries (the blinding key was edited)`);
  const seen = new Set<string>();
  k.assignment.forEach((a: unknown, i: number) => {
    if (!isObj(a) || typeof a.id !== 'string' || (a.candidate !== 'X' && a.candidate !== 'Y')) throw new UserError(`${path}: field 'assignment[${i}]': expected {id, candidate: "X"|"Y"}`);
    if (seen.has(a.id)) throw new UserError(`${path}: query '${a.id}': field 'assignment': listed twice (the blinding key was edited)`);
    seen.add(a.id);
    if (candidateSide(k.secret as string, k.exportId as string, a.id) !== a.candidate)
      throw new UserError(`${path}: query '${a.id}': field 'assignment[${i}].candidate': does not match the key's secret (the blinding key was edited)`);
  });
  const key = k as unknown as ReviewKey;
  checkColumnRef(path, 'baseline', key.baseline);
  checkColumnRef(path, 'candidate', key.candidate);
  if (!isObj(key.results) || typeof key.results.file !== 'string') throw new UserError(`${path}: field 'results': expected {file, evalId}`);
  return { key, digest: keyDigest(key) };
}

/** One ratings file, checked against the key: the export, the key's digest, the reviewer, every query rated once, 1-5. */
export function readRatings(path: string, key: ReviewKey, digest: string, keyPath: string): RatingsDoc {
  const d = readJson(path, 'ratings file downloaded from the review page');
  if (!isObj(d) || d.kind !== 'rankgate-review-ratings') throw new UserError(`${path}: field 'kind': expected "rankgate-review-ratings" (the file the review page downloads)`);
  if (d.version !== 1) throw new UserError(`${path}: field 'version': expected 1, got ${JSON.stringify(d.version)}`);
  if (d.exportId !== key.exportId) throw new UserError(`${path}: field 'exportId': these ratings belong to export ${JSON.stringify(d.exportId)}, not ${key.exportId} of ${keyPath}: import each export's ratings with its own key`);
  if (d.keyDigest !== digest) throw new UserError(`${path}: field 'keyDigest': ${JSON.stringify(d.keyDigest)} does not match ${keyPath} (digest ${digest}): the blinding key or this file was edited after the export`);
  if (typeof d.reviewer !== 'string' || !d.reviewer.trim()) throw new UserError(`${path}: field 'reviewer': expected the reviewer's name, got ${JSON.stringify(d.reviewer)}`);
  if (d.rater !== undefined && d.rater !== 'human' && d.rater !== 'judge') throw new UserError(`${path}: field 'rater': expected "human" or "judge", got ${JSON.stringify(d.rater)}`);
  if (!Array.isArray(d.ratings)) throw new UserError(`${path}: field 'ratings': expected a list of {query, x, y}`);
  const inExport = new Set(key.assignment.map((a) => a.id));
  const seen = new Set<string>();
  d.ratings.forEach((r: unknown, i: number) => {
    if (!isObj(r) || typeof r.query !== 'string') throw new UserError(`${path}: ratings[${i}]: field 'query': expected a query id, got ${JSON.stringify(isObj(r) ? r.query : r)}`);
    const q = r.query;
    if (!inExport.has(q)) throw new UserError(`${path}: query '${q}': not a query of export ${key.exportId} (ratings[${i}])`);
    if (seen.has(q)) throw new UserError(`${path}: query '${q}': rated more than once (ratings[${i}]); each reviewer rates each query once`);
    seen.add(q);
    for (const f of ['x', 'y'] as const) {
      const v = r[f];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 5) throw new UserError(`${path}: query '${q}': field '${f}': expected a whole rating from 1 to 5, got ${JSON.stringify(v)}`);
    }
    if (r.note !== undefined && typeof r.note !== 'string') throw new UserError(`${path}: query '${q}': field 'note': expected text, got ${JSON.stringify(r.note)}`);
  });
  const missing = key.assignment.find((a) => !seen.has(a.id));
  if (missing) throw new UserError(`${path}: query '${missing.id}': fields 'x', 'y': not rated (${key.assignment.length - seen.size} of ${key.assignment.length} queries unrated); a review counts only when complete`);
  return d as unknown as RatingsDoc;
}

function preference(base: number[], cand: number[], seed: number): PreferenceStat {
  const ci = bootstrapCI(base, cand, { seed, iterations: 10000 });
  const m = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  let wins = 0;
  let ties = 0;
  let losses = 0;
  base.forEach((b, i) => {
    const c = cand[i]!;
    if (c > b) wins++;
    else if (c < b) losses++;
    else ties++;
  });
  return { queries: base.length, baselineMean: m(base), candidateMean: m(cand), preference: ci.mean, ci95: [ci.low, ci.high], wins, ties, losses };
}

/**
 * Unblind checked ratings files (readRatings) and compute the statistics. Files of one rater kind only (human pages,
 * or the judge stand-in); a reviewer name appears in one file only.
 */
export function importReview(key: ReviewKey, digest: string, files: { path: string; doc: RatingsDoc }[], opts: { seed?: number } = {}): ReviewResult {
  const seed = opts.seed ?? 42;
  if (!files.length) throw new UserError('no ratings file given');
  const byName = new Map<string, string>();
  for (const f of files) {
    const name = f.doc.reviewer.trim();
    const prev = byName.get(name.toLowerCase());
    if (prev !== undefined) throw new UserError(`${f.path}: field 'reviewer': '${name}' already rated this export in ${prev}; each reviewer rates each query once`);
    byName.set(name.toLowerCase(), f.path);
  }
  const raters = new Set(files.map((f) => f.doc.rater ?? 'human'));
  if (raters.size > 1) throw new UserError(`${files.find((f) => (f.doc.rater ?? 'human') === 'judge')!.path}: field 'rater': a judge's ratings are imported on their own, never pooled with human reviewers`);
  const ids = key.assignment.map((a) => a.id);
  const side = new Map(key.assignment.map((a) => [a.id, a.candidate]));
  const perQuery = ids.map((id) => ({ id, baseline: [] as number[], candidate: [] as number[], notes: [] as string[] }));
  const reviewers: ReviewResult['reviewers'] = [];
  for (const f of files) {
    const r = new Map(f.doc.ratings.map((x) => [x.query, x]));
    const base: number[] = [];
    const cand: number[] = [];
    ids.forEach((id, i) => {
      const e = r.get(id)!;
      const candIsX = side.get(id) === 'X';
      const c = candIsX ? e.x : e.y;
      const b = candIsX ? e.y : e.x;
      base.push(b);
      cand.push(c);
      perQuery[i]!.baseline.push(b);
      perQuery[i]!.candidate.push(c);
      if (e.note?.trim()) perQuery[i]!.notes.push(`${f.doc.reviewer.trim()}: ${e.note.trim()}`);
    });
    reviewers.push({ name: f.doc.reviewer.trim(), file: f.path, ...preference(base, cand, seed) });
  }
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  const pooled = { reviewers: files.length, ...preference(perQuery.map((q) => mean(q.baseline)), perQuery.map((q) => mean(q.candidate)), seed) };
  const agreement =
    files.length >= 2
      ? {
          statistic: "Krippendorff's alpha (interval) on the per-query preference, candidate - baseline",
          ...krippendorffAlphaInterval(perQuery.map((q) => q.candidate.map((c, j) => c - q.baseline[j]!))),
        }
      : null;
  return {
    kind: 'rankgate-review-result',
    version: 1,
    rater: [...raters][0] as 'human' | 'judge',
    exportId: key.exportId,
    keyDigest: digest,
    results: key.results,
    baseline: key.baseline,
    candidate: key.candidate,
    queries: ids.length,
    seed,
    rule: `criterion 4 passes when the pooled mean preference of the candidate (candidate - baseline rating, points on the 1-5 scale) is >= ${MIN_PREFERENCE}`,
    reviewers,
    pooled,
    agreement: agreement ? { statistic: agreement.statistic, alpha: agreement.alpha, units: agreement.units } : null,
    meetsThreshold: pooled.preference >= MIN_PREFERENCE - 1e-9,
    perQuery,
  };
}

// ------------------------------------------------------------------------------------------------ criterion 4

export interface LoadedReview {
  path: string;
  result: ReviewResult;
}

/** A review result file (`rankgate review import -o`), checked enough that the verdict can trust it. */
export function readReviewResult(path: string): LoadedReview {
  if (!existsSync(path)) throw new UserError(`${path}: no such review result (write it with rankgate review import ratings.json ... -o ${path})`);
  const r = readJson(path, 'review result written by `rankgate review import`');
  if (!isObj(r) || r.kind !== 'rankgate-review-result') throw new UserError(`${path}: field 'kind': expected "rankgate-review-result" (the file rankgate review import writes)`);
  if (r.version !== 1) throw new UserError(`${path}: field 'version': expected 1, got ${JSON.stringify(r.version)}`);
  if (r.rater !== 'human' && r.rater !== 'judge') throw new UserError(`${path}: field 'rater': expected "human" or "judge"`);
  checkColumnRef(path, 'baseline', r.baseline);
  checkColumnRef(path, 'candidate', r.candidate);
  const p = r.pooled as Record<string, unknown> | undefined;
  const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  if (!isObj(p) || !num(p.preference) || !num(p.queries) || !num(p.reviewers) || !Array.isArray(p.ci95) || !p.ci95.every(num))
    throw new UserError(`${path}: field 'pooled': expected {preference, ci95, queries, reviewers} (numbers)`);
  if (!num(r.queries) || (r.queries as number) < 1 || p.queries !== r.queries) throw new UserError(`${path}: field 'queries': expected the number of rated queries (${JSON.stringify(r.queries)})`);
  return { path, result: r as unknown as ReviewResult };
}

/** The environment variable (a comma-separated list of review result files) every shipping verdict reads. */
export const REVIEW_ENV = 'RANKGATE_REVIEW';

export function reviewsFromEnv(env: NodeJS.ProcessEnv = process.env): LoadedReview[] {
  const v = env[REVIEW_ENV];
  if (!v || !v.trim()) return [];
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(readReviewResult);
}

const signed = (x: number, d = 2) => `${x >= 0 ? '+' : ''}${x.toFixed(d)}`;

/** How to run the review, in the words of the criterion "not evaluated". */
export function howToReview(baseline: string, candidate: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return `run rankgate review export RESULTS --baseline ${q(baseline)} --candidate ${q(candidate)} -o review.html, have reviewers rate the page, then rankgate review import ratings.json ... -o review-result.json and pass --review review-result.json (or ${REVIEW_ENV}); docs/review.md`;
}

/**
 * Criterion 4 for one baseline/candidate pair: pass/fail from a human review of the same two columns, else not
 * evaluated (null) with the way to run one. Never passed on a judge's ratings or another pair's review.
 */
export function reviewCriterion(reviews: readonly LoadedReview[], baseline: Column, candidate: Column): { passed: boolean | null; detail: string } {
  const pair = reviews.filter((r) => r.result.baseline.label === baseline.label && r.result.candidate.label === candidate.label);
  const human = pair.filter((r) => r.result.rater === 'human');
  const judged = pair.find((r) => r.result.rater === 'judge');
  const judgeNote = judged
    ? ` (judge, not human: ${judged.path} rates the candidate ${signed(judged.result.pooled.preference)} points; not counted)`
    : '';
  if (!human.length) {
    const others = reviews.filter((r) => !pair.includes(r)).map((r) => `'${r.result.candidate.label}' vs '${r.result.baseline.label}'`);
    return {
      passed: null,
      detail: `not evaluated: ${howToReview(baseline.label, candidate.label)}${others.length ? ` (the review results given are of ${[...new Set(others)].join(', ')})` : ''}${judgeNote}`,
    };
  }
  const cur = { baseline: columnRef(baseline), candidate: columnRef(candidate) };
  const same = (a: ReviewColumnRef, b: ReviewColumnRef) => a.configDigest === null || b.configDigest === null || a.configDigest === b.configDigest;
  const valid = human.filter((r) => same(r.result.baseline, cur.baseline) && same(r.result.candidate, cur.candidate));
  if (!valid.length) {
    return {
      passed: null,
      detail: `not evaluated: ${human[0]!.path} reviewed another provider config of '${candidate.label}' or '${baseline.label}' than these results: ${howToReview(baseline.label, candidate.label)}`,
    };
  }
  // the most recent export wins when several reviews of the pair are given (the file order)
  const r = valid[valid.length - 1]!.result;
  const p = r.pooled;
  const passed = r.queries > 0 && p.reviewers >= 1 && p.queries === r.queries && p.preference >= MIN_PREFERENCE - 1e-9;
  const alpha = r.agreement ? `; Krippendorff's alpha (interval) ${r.agreement.alpha === null ? 'undefined' : r.agreement.alpha.toFixed(2)}` : '';
  return {
    passed,
    detail: `human blind review (${valid[valid.length - 1]!.path}): candidate preferred by ${signed(p.preference)} points (95% CI [${signed(p.ci95[0])}, ${signed(p.ci95[1])}]) over ${r.queries} queries, ${p.reviewers} reviewer(s)${alpha}; needs mean >= +${MIN_PREFERENCE.toFixed(1)}${judgeNote}`,
  };
}
