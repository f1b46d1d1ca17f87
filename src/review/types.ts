/**
 * The shapes of the blind review (criterion 4 of the shipping criteria): the page's data, the key file, a ratings file
 * and the review result, and the review's constants. Pure types and numbers; docs/review.md says what each field means.
 */
import { SHOWN_CHARS, SHOWN_HITS } from '../results/compact.ts';

/** The criterion's threshold: points on the 1-5 scale. */
export const MIN_PREFERENCE = 0.5;
/** Default number of sampled queries of an export (about an hour of reviewing at a minute a pair). */
export const DEFAULT_REVIEW_QUERIES = 50;
/** Default number of results shown per list: the hits every compact row keeps the shown text of (src/results/compact.ts). */
export const DEFAULT_REVIEW_HITS = SHOWN_HITS;
/** Every shown hit's text is shownText(content, REVIEW_TEXT_CHARS) (src/results/compact.ts): one rule for every hit of both lists. */
export const REVIEW_TEXT_CHARS = SHOWN_CHARS;
/** A shown title or heading: the same rule, at this many characters. */
export const REVIEW_TITLE_CHARS = 200;
/** The version of the page, key, ratings and result files this rankgate writes and reads. */
export const REVIEW_FORMAT = 2;

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

/** One blinded pair of the page: a neutral item number (1-based, page order), never the golden query's id. */
export interface ReviewItem {
  item: number;
  query: string;
  X: ShownHit[];
  Y: ShownHit[];
}

/** Everything the page holds: nothing that tells X from Y, nor the expected document, nor a query id. */
export interface ReviewPageData {
  kind: 'rankgate-review-page';
  version: typeof REVIEW_FORMAT;
  exportId: string;
  keyDigest: string;
  hits: number;
  chars: number;
  /** Pairs of the sample whose two lists are the same (on the page, or left out with --skip-identical). */
  identical: { count: number; of: number; skipped: boolean };
  items: ReviewItem[];
}

/** A query of the sample that is left out: no ranking in a column (a provider or response error, an unreadable output). */
export interface LeftOut {
  id: string;
  column: 'baseline' | 'candidate' | 'both';
  reason: string;
}

/** The key file (review.key.json): the unblinding, kept away from the reviewers (written 0600). */
export interface ReviewKey {
  kind: 'rankgate-review-key';
  version: typeof REVIEW_FORMAT;
  exportId: string;
  created: string;
  results: { file: string; evalId: string | null };
  baseline: ReviewColumnRef;
  candidate: ReviewColumnRef;
  seed: number;
  hits: number;
  chars: number;
  /** Queries both columns answered with a ranking (the sample's population), and the ones left out, named. */
  answered: number;
  leftOut: LeftOut[];
  /** The reviewers who must rate (`--reviewers`), as given; null: any names. */
  reviewers: string[] | null;
  /** 64 hex digits: the HMAC key of the X/Y assignment, of the key's own MAC and of a judge's ratings. */
  secret: string;
  /** The page's items in order: the query each stands for and the side the candidate was shown on. */
  assignment: { item: number; id: string; candidate: Side; identical: boolean }[];
  /** Sampled queries whose two lists were the same, left out of the page by --skip-identical (no preference). */
  skippedIdentical: string[];
  /** HMAC-SHA256(secret) of everything above: an edit of the key (labels swapped, a query dropped) is refused. */
  mac: string;
  /** Digests of every ratings set `rankgate review judge` produced for this export (appended; outside keyDigest and mac). */
  judged?: string[];
}

export interface RatingEntry {
  item: number;
  x: number;
  y: number;
  note?: string;
}

/** The file the page downloads (rater human), or `rankgate review judge` writes (rater judge, with a MAC). */
export interface RatingsDoc {
  kind: 'rankgate-review-ratings';
  version: typeof REVIEW_FORMAT;
  exportId: string;
  keyDigest: string;
  reviewer: string;
  rater: 'human' | 'judge';
  ratings: RatingEntry[];
  /** A judge's ratings only: HMAC-SHA256 with the export's secret over exportId, reviewer and ratings. */
  mac?: string;
}

export interface PreferenceStat {
  /** queries in the statistics: the rated ones and the identical pairs skipped (each a preference of 0) */
  queries: number;
  /** identical pairs left out of the page and counted as no preference (0) */
  identical: number;
  /** means of the rated queries' ratings */
  baselineMean: number;
  candidateMean: number;
  /** mean of candidate - baseline, points on the 1-5 scale (an identical pair skipped: 0) */
  preference: number;
  ci95: [number, number];
  /** queries where the candidate was rated higher / the same (identical pairs included) / lower */
  wins: number;
  ties: number;
  losses: number;
}

/** A file the result was derived from: its path relative to the result file, and the SHA-256 of its text. */
export interface SourceFile {
  file: string;
  sha256: string;
}

export interface ReviewResult {
  kind: 'rankgate-review-result';
  version: typeof REVIEW_FORMAT;
  rater: 'human' | 'judge';
  exportId: string;
  keyDigest: string;
  /** The key file and the ratings files the result was computed from: the verdict re-derives it from them. */
  key: SourceFile;
  ratings: SourceFile[];
  results: { file: string; evalId: string | null };
  baseline: ReviewColumnRef;
  candidate: ReviewColumnRef;
  /** rated queries (the page's items) */
  queries: number;
  seed: number;
  rule: string;
  reviewers: (PreferenceStat & { name: string; file: string })[];
  pooled: PreferenceStat & { reviewers: number };
  agreement: { statistic: string; alpha: number | null; units: number } | null;
  /** pass/fail of the threshold on the pooled mean (criterion 4 still needs rater 'human', the same columns, and evidence). */
  meetsThreshold: boolean;
  perQuery: { id: string; identical: boolean; skipped: boolean; baseline: number[]; candidate: number[]; notes: string[] }[];
  /** sealText('review-result', canonicalJson(the result without seal)): keyed with RANKGATE_SEAL_KEY at import, else unkeyed. */
  seal?: string;
}
