/**
 * `rankgate review export`: which queries a review compares, what the page shows of each hit, and the blinded pairs.
 *
 * The sample's population is every query BOTH columns answered with a ranking, whatever its metrics: a query that
 * failed its golden expectation on one side is exactly what a review is for (promptfoo marks such a row `error` with
 * failureReason 1, "assertion failed"; that is not an error of the search). Left out, and named in the export's line
 * and the key, are only queries without a ranking in a column: a provider or response error (failureReason 2,
 * response.error, the read record's error) or an output that holds no ranking.
 *
 * What the page shows of a hit is one rule for every hit of both lists: its title (title, else path, else document
 * id) and heading, and shownText(content) of src/results/compact.ts (whitespace collapsed, cut at REVIEW_TEXT_CHARS with
 * "…"), whatever the row kept: a hit kept whole because it matches the golden reference shows the same cut as any
 * other. A row that does not hold that text for a shown rank (an older rankgate's compaction, or --hits beyond what
 * the rows keep) is refused in one line: unequal texts would point at the expected document.
 *
 * Pairs whose two lists are the same (same titles, headings and texts in the same order) are counted: the review cannot
 * tell such a pair's columns apart. `--skip-identical` leaves them off the page; import counts them as no preference.
 */
import { randomBytes } from 'node:crypto';
import { UserError } from '../errors.ts';
import { GoldenQuerySchema } from '../golden/schema.ts';
import { shownText } from '../results/compact.ts';
import type { Column, ParsedResults } from '../results/read.ts';
import { parseOutput } from '../results/score.ts';
import type { HarnessHit } from '../results/types.ts';
import { canonicalJson } from '../util/seal.ts';
import { candidateSide, columnRef, keyDigest, sampleIds, sealKeyFile } from './key.ts';
import { normaliseReviewer, shownName } from './names.ts';
import {
  DEFAULT_REVIEW_HITS,
  DEFAULT_REVIEW_QUERIES,
  REVIEW_FORMAT,
  REVIEW_TEXT_CHARS,
  REVIEW_TITLE_CHARS,
  type LeftOut,
  type ReviewItem,
  type ReviewKey,
  type ReviewPageData,
  type ShownHit,
} from './types.ts';

interface RawRow {
  promptIdx?: number;
  testCase?: { description?: string; metadata?: Record<string, unknown> };
  response?: { output?: unknown; metadata?: unknown; error?: string } | null;
  error?: string | null;
  failureReason?: number;
}

/** A column's ranking of one query, as the row holds it. */
interface Ranking {
  hits: HarnessHit[];
  /** the ranking is a compact row's metadata.harness (not a whole older output) */
  compacted: boolean;
  kept: { hits: number; chars: number } | null;
}

function rowId(row: RawRow): string | null {
  const g = GoldenQuerySchema.safeParse(row.testCase?.metadata?.golden);
  if (g.success) return g.data.id;
  const id = row.testCase?.metadata?.id ?? row.testCase?.description;
  return typeof id === 'string' ? id : null;
}

const firstLine = (s: unknown) => String(s ?? '').split('\n')[0]!.slice(0, 160);

/** The ranking of a row, or why it has none (promptfoo's failureReason 1, an assertion failed, is not a reason). */
function rankingOf(row: RawRow): Ranking | { error: string } {
  if (row.response?.error) return { error: firstLine(row.response.error) };
  if (row.failureReason === 2) return { error: firstLine(row.error ?? 'error') };
  const meta = row.response?.metadata as { harness?: { hits?: unknown; textKept?: unknown } } | undefined;
  if (row.response?.output === undefined && !meta?.harness) return { error: firstLine(row.error ?? 'no provider output') };
  try {
    const h = parseOutput(row.response?.output, row.response?.metadata);
    const compacted = !!meta?.harness && Array.isArray(meta.harness.hits);
    const k = h.textKept;
    const kept = k && typeof k.hits === 'number' && typeof k.chars === 'number' ? { hits: k.hits, chars: k.chars } : null;
    return { hits: h.hits, compacted, kept };
  } catch (e) {
    return { error: `no ranking in the output (${firstLine((e as Error).message)})` };
  }
}

function rankingsByQuery(rows: readonly unknown[], columnIndex: number): Map<string, Ranking | { error: string }> {
  const out = new Map<string, Ranking | { error: string }>();
  for (const r of rows) {
    const row = r as RawRow;
    if (!row || typeof row !== 'object' || (row.promptIdx ?? 0) !== columnIndex) continue;
    const id = rowId(row);
    if (id !== null) out.set(id, rankingOf(row));
  }
  return out;
}

/** The shown hits of a ranking: the same rule for every hit (src/results/compact.ts shownText). */
export function shownHits(hits: readonly HarnessHit[], k: number): ShownHit[] {
  return [...hits]
    .sort((a, b) => a.rank - b.rank)
    .slice(0, k)
    .map((h) => ({
      title: shownText(String(h.title ?? h.path ?? h.documentId ?? ''), REVIEW_TITLE_CHARS),
      ...(h.heading ? { heading: shownText(String(h.heading), REVIEW_TITLE_CHARS) } : {}),
      text: shownText(String(h.content ?? ''), REVIEW_TEXT_CHARS),
    }));
}

/** Refuse a ranking that does not hold the shown text of every shown rank (one line: file, query, column). */
function checkText(file: string, id: string, label: string, r: Ranking, k: number): void {
  const shown = Math.min(k, r.hits.length);
  if (!r.compacted || shown === 0) return; // a whole output (rows before compaction, a test's rows) holds every text
  const where = `${file}: query '${id}' (column '${label}')`;
  if (!r.kept)
    throw new UserError(
      `${where}: the row was written by an older rankgate, which kept text for its top 3 only and the expected document whole: the page would show unequal texts; run the eval again with this rankgate`,
    );
  if (r.kept.chars !== REVIEW_TEXT_CHARS)
    throw new UserError(`${where}: the row kept ${r.kept.chars} characters a hit, the review shows ${REVIEW_TEXT_CHARS}: run the eval again with this rankgate`);
  if (shown > r.kept.hits) throw new UserError(`${where}: the rows keep the review's text for the top ${r.kept.hits} hits only, not ${shown}: --hits ${r.kept.hits} or fewer`);
}

export interface ExportOptions {
  baseline: Column;
  candidate: Column;
  queries?: number;
  seed?: number;
  hits?: number;
  /** Leave pairs whose two lists are the same off the page (import counts them as no preference). */
  skipIdentical?: boolean;
  /** The reviewers who must rate (import refuses other names and says who is missing). */
  reviewers?: string[];
  /** Tests only: a fixed secret and id (else fresh random ones). */
  secret?: string;
  exportId?: string;
  created?: string;
}

export interface ReviewExport {
  page: ReviewPageData;
  key: ReviewKey;
  /** Sampled pairs whose two lists are the same (on the page, or skipped), of the sample. */
  identical: number;
  sampled: number;
}

export function buildReviewExport(file: string, parsed: ParsedResults, rows: Iterable<unknown>, opts: ExportOptions): ReviewExport {
  const { baseline, candidate } = opts;
  if (baseline.index === candidate.index) throw new UserError(`${file}: --baseline and --candidate name the same column '${baseline.label}': a review compares two columns`);
  const seed = opts.seed ?? 42;
  const k = opts.hits ?? DEFAULT_REVIEW_HITS;
  const want = opts.queries ?? DEFAULT_REVIEW_QUERIES;
  const reviewers = opts.reviewers ? checkReviewerList(opts.reviewers) : null;
  const rowList = [...rows];
  const rb = rankingsByQuery(rowList, baseline.index);
  const rc = rankingsByQuery(rowList, candidate.index);
  const bq = new Map(baseline.queries.map((q) => [q.id, q]));
  const cq = new Map(candidate.queries.map((q) => [q.id, q]));
  const leftOut: LeftOut[] = [];
  const eligible: string[] = [];
  const queryText = new Map<string, string>();
  const ids = [...new Set([...bq.keys(), ...cq.keys()])].sort();
  for (const id of ids) {
    const why = (col: Column, rec: typeof bq, rk: typeof rb): string | null => {
      const q = rec.get(id);
      if (!q) return `not in column '${col.label}'`;
      const r = rk.get(id);
      if (q.error !== null) return firstLine(q.error);
      if (!r) return 'no row';
      return 'error' in r ? r.error : null;
    };
    const wb = why(baseline, bq, rb);
    const wc = why(candidate, cq, rc);
    if (wb !== null || wc !== null) {
      const reason = [wb !== null ? `'${baseline.label}': ${wb}` : null, wc !== null ? `'${candidate.label}': ${wc}` : null].filter(Boolean).join('; ');
      leftOut.push({ id, column: wb !== null && wc !== null ? 'both' : wb !== null ? 'baseline' : 'candidate', reason });
      continue;
    }
    eligible.push(id);
    queryText.set(id, cq.get(id)!.query);
  }
  if (!eligible.length) throw new UserError(`${file}: no query that both '${baseline.label}' and '${candidate.label}' answered with a ranking: nothing to review`);
  const secret = opts.secret ?? randomBytes(32).toString('hex');
  const exportId = opts.exportId ?? randomBytes(16).toString('hex');
  const sample = sampleIds(eligible, want, seed);
  const pairs = sample.map((id) => {
    const b = rb.get(id) as Ranking;
    const c = rc.get(id) as Ranking;
    checkText(file, id, baseline.label, b, k);
    checkText(file, id, candidate.label, c, k);
    const sb = shownHits(b.hits, k);
    const sc = shownHits(c.hits, k);
    return { id, b: sb, c: sc, identical: canonicalJson(sb) === canonicalJson(sc) };
  });
  const identical = pairs.filter((p) => p.identical);
  const onPage = opts.skipIdentical ? pairs.filter((p) => !p.identical) : pairs;
  if (!onPage.length)
    throw new UserError(`${file}: all ${pairs.length} sampled pairs of '${candidate.label}' and '${baseline.label}' are the same list: nothing a review could tell apart (--skip-identical left every pair out)`);
  const refs = { baseline: columnRef(baseline), candidate: columnRef(candidate) };
  const assignment = onPage.map((p, i) => ({ item: i + 1, id: p.id, candidate: candidateSide(secret, exportId, refs.baseline, refs.candidate, p.id), identical: p.identical }));
  const key = sealKeyFile({
    kind: 'rankgate-review-key',
    version: REVIEW_FORMAT,
    exportId,
    created: opts.created ?? new Date().toISOString(),
    results: { file, evalId: parsed.evalId },
    ...refs,
    seed,
    hits: k,
    chars: REVIEW_TEXT_CHARS,
    answered: eligible.length,
    leftOut,
    reviewers,
    secret,
    assignment,
    skippedIdentical: opts.skipIdentical ? identical.map((p) => p.id) : [],
  });
  const items: ReviewItem[] = assignment.map(({ item, candidate: side }, i) => {
    const p = onPage[i]!;
    return { item, query: queryText.get(p.id)!, X: side === 'X' ? p.c : p.b, Y: side === 'X' ? p.b : p.c };
  });
  const page: ReviewPageData = {
    kind: 'rankgate-review-page',
    version: REVIEW_FORMAT,
    exportId,
    keyDigest: keyDigest(key),
    hits: k,
    chars: REVIEW_TEXT_CHARS,
    identical: { count: identical.length, of: pairs.length, skipped: !!opts.skipIdentical },
    items,
  };
  return { page, key, identical: identical.length, sampled: pairs.length };
}

/** --reviewers: names that stay distinct after normalisation (src/review/names.ts). */
export function checkReviewerList(names: readonly string[]): string[] {
  const seen = new Map<string, string>();
  const out: string[] = [];
  for (const n of names) {
    const norm = normaliseReviewer(n);
    if (!norm) throw new UserError(`--reviewers: ${shownName(n)} is not a name (nothing visible in it)`);
    const prev = seen.get(norm);
    if (prev !== undefined) throw new UserError(`--reviewers: ${shownName(n)} and ${shownName(prev)} are the same reviewer (names are compared after Unicode NFKC, case folding and removing invisible characters)`);
    seen.set(norm, n);
    out.push(n.trim());
  }
  return out;
}
