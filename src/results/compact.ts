/**
 * Compact rows: what a row's metadata.harness keeps of each hit's content, so a row stays a few KB whatever the
 * chunk size (promptfoo writes every row into its results file; ~35 KB rows made a 10k-row eval unwritable as JSON).
 *
 * Kept in full: the hits matching a golden reference (the re-scoring matches passage_substring references without
 * a resolution on content, answer_contains reads it, `rankgate judge agreement` sends exactly these hits to the
 * judge); the top 3 of a no_results query (agreement's items there); the top 10 when the row runs a judge
 * assertion (assertions/judge.ts reads content while the row is graded). Every other hit of the top SHOWN_HITS (5,
 * the blind review's default: src/review) keeps the text the review shows, `shownText(content)` (whitespace collapsed,
 * cut at SHOWN_CHARS at a word with "…"), its title and heading; the rest no content. The review applies the same
 * `shownText` to every hit it shows, and `shownText` of a kept snippet is the snippet itself, so a hit kept whole and
 * one kept as a snippet show the same text: nothing on the review page tells the expected document from the others.
 * The harness records the rule it was compacted with (`textKept`); rows of an older rankgate have none, and the review
 * refuses them. A hit that matched nothing still matches nothing on a prefix of its content, so re-scoring gives the
 * same scores. The integrity of the top results (which reads the end of each chunk) is computed on the full content
 * first and kept as `integrity`.
 *
 * No hit keeps its per-channel ranks (`channels`: `rankgate search` prints them; no reader of a results file reads
 * them), and a hit without full content keeps only what the readers of a row take (rank, ids, score, the snippet,
 * path; title and heading in the top SHOWN_HITS, which the review shows).
 *
 * The first-stage candidates (metadata.diagnostics) only diagnose a query whose ranking returned nothing relevant
 * (src/results/score.ts bucketOf): every other row drops them.
 *
 * promptfoo then copies the test's and the response's metadata into the row's own `metadata`
 * ({...testCase.metadata, ...response.metadata}): the afterEach hook (assertions/gate.ts) drops those copies
 * (dedupeRowMetadata), so each is carried once. It also drops two copies promptfoo makes in the row's grading result
 * (compactGrading): each assertion's own `namedScores` (the row's `namedScores` hold them) and the weights of 1 it
 * records for every named score; neither changes a column sum (see compactGrading).
 */
import type { GoldenQuery } from '../golden/schema.ts';
import type { SearchDiagnostics } from '../search/types.ts';
import { checkIntegrity, refMatchesHit, scoreRanking } from './score.ts';
import type { HarnessMetadata, HarnessOutput } from './types.ts';

/**
 * Characters of text the blind review shows per hit, and that every non-matching hit of the top SHOWN_HITS keeps (the
 * report's top results read the same). 300: about two sentences, enough to judge a result by. The cost against the
 * former 200 characters for the top 3: +885 bytes a demo row (12,003 -> 12,888 JSONL bytes; docs/scale.md).
 */
export const SHOWN_CHARS = 300;
/** Hits with the shown text: the blind review's default number of results per list (src/review DEFAULT_REVIEW_HITS). */
export const SHOWN_HITS = 5;

/**
 * The one text rule of the blind review's shown hits: whitespace collapsed, and a text longer than `max` characters cut
 * to at most `max` with "…" (at the last space when it is past 60% of the cut, never inside a surrogate pair).
 * Idempotent (a result is at most `max` long and unchanged by a second cut), so the snippet a compact row keeps shows
 * exactly what the hit's full content would.
 */
export function shownText(s: string, max = SHOWN_CHARS): string {
  const t = s.replace(/\s+/g, ' ').trim();
  if (t.length <= max) return t;
  let c = t.slice(0, max - 1);
  const sp = c.lastIndexOf(' ');
  if (sp > max * 0.6) c = c.slice(0, sp);
  if (/[\ud800-\udbff]$/.test(c)) c = c.slice(0, -1);
  return `${c.trimEnd()}…`;
}

export interface CompactOptions {
  /** Keep the full content of the top 10 (a judge assertion grades this row). */
  judged?: boolean;
  /** Another golden entry of the query whose references keep their hits too (a pull request's base: metadata.baseGolden). */
  alsoFor?: GoldenQuery;
}

export function compactHarness(output: HarnessOutput, golden: GoldenQuery | undefined, meta: HarnessMetadata | undefined, opts: CompactOptions = {}): HarnessOutput {
  const integrity = output.integrity ?? checkIntegrity(output, 10);
  const refs = [...(golden?.expected ?? []), ...(opts.alsoFor?.expected ?? [])];
  const noResults = golden?.expected_routing === 'no_results' && refs.length === 0;
  const byPath = refs.some((r) => r.path !== undefined);
  const order = [...output.hits].sort((a, b) => a.rank - b.rank);
  const pos = new Map(order.map((h, i) => [h, i]));
  const hits = output.hits.map((h) => {
    const p = pos.get(h)!;
    const full = (opts.judged && p < 10) || (noResults && p < 3) || refs.some((r) => refMatchesHit(r, h, meta));
    const { channels: _c, ...kept } = h;
    if (full) return kept;
    if (p < SHOWN_HITS) {
      // what QueryRecord.top (src/results/read.ts) and the blind review take: rank, ids, score, the shown text, path, title, heading
      return {
        rank: h.rank,
        chunkId: h.chunkId,
        documentId: h.documentId,
        score: h.score,
        content: shownText(h.content ?? ''),
        ...(h.path !== undefined ? { path: h.path } : {}),
        ...(h.title !== undefined ? { title: h.title } : {}),
        ...(h.heading !== undefined ? { heading: h.heading } : {}),
      };
    }
    // below the shown hits: what scoring and the ranking need (a path reference matches on path); the readable cell has the rest
    return { rank: h.rank, chunkId: h.chunkId, documentId: h.documentId, score: h.score, content: '', ...(byPath && h.path !== undefined ? { path: h.path } : {}) };
  });
  // the rule of the first compaction (a fresh output has no integrity yet); a re-compaction (the re-gate record) keeps
  // what the row says, and a row of an older rankgate stays without one (its snippets were shorter)
  const textKept = output.textKept ?? (output.integrity === undefined ? { hits: SHOWN_HITS, chars: SHOWN_CHARS } : undefined);
  return { ...output, hits, integrity, ...(textKept ? { textKept } : {}) };
}

/** The row's diagnostics without the candidate lists when its failure bucket cannot need them (a relevant result was returned, or none is expected). */
export function compactDiagnostics(output: HarnessOutput, golden: GoldenQuery | undefined, meta: HarnessMetadata | undefined): SearchDiagnostics | null | undefined {
  const d = meta?.diagnostics;
  if (!d || !golden || (!d.keywordCandidates?.length && !d.vectorCandidates?.length)) return d;
  const s = scoreRanking(golden, output, meta);
  if (s !== null && s.best_rank === null) return d;
  return { ...d, keywordCandidates: [], vectorCandidates: [] };
}

/** Keys of a test's metadata that are large and read only from testCase.metadata (src/results/read.ts, merge). */
const TEST_COPIES = ['golden', 'selection', 'baseGolden', 'labels', 'judgments'] as const;

/**
 * Drop from a promptfoo row's own `metadata` what it copies from elsewhere: every object-valued key of
 * response.metadata whose value is the same (the harness, diagnostics, params, resolution...), and the golden query
 * and selection of testCase.metadata. Small test keys (id, category, language, tags: the view filters rows by them)
 * and anything else stay. Mutates `metadata` (promptfoo hands the afterEach hook its own copy); returns the keys dropped.
 */
export function dedupeRowMetadata(row: { metadata?: Record<string, unknown> | null; response?: { metadata?: Record<string, unknown> | null } | null; testCase?: { metadata?: Record<string, unknown> | null } | null }): string[] {
  const m = row.metadata;
  if (!m || typeof m !== 'object') return [];
  const dropped: string[] = [];
  const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);
  const drop = (k: string, from: Record<string, unknown> | null | undefined) => {
    if (!from || typeof from !== 'object' || !(k in m) || !(k in from)) return;
    if (m[k] === null || typeof m[k] !== 'object' || !same(m[k], from[k])) return;
    delete m[k];
    dropped.push(k);
  };
  const rm = row.response?.metadata;
  if (rm && typeof rm === 'object') for (const k of Object.keys(rm)) drop(k, rm);
  for (const k of TEST_COPIES) drop(k, row.testCase?.metadata);
  return dropped;
}

interface GradingLike {
  namedScores?: Record<string, number> | null;
  namedScoreWeights?: Record<string, number> | null;
  componentResults?: ({ namedScores?: Record<string, number> | null; assertion?: { metric?: unknown } | null } | null)[] | null;
}

/**
 * Drop what promptfoo writes in a row's `gradingResult` that is only a copy, each named score then being written
 * twice a row (the row's `namedScores` and `gradingResult.namedScores`) instead of four times:
 *
 * - an assertion's own `namedScores` when every one of them is in the row's `namedScores` with the same value;
 * - a `namedScoreWeights` entry of 1 for a metric that at most one assertion names as its `metric`.
 *
 * Neither changes what promptfoo adds to the column (promptfoo 0.121 and 0.123, getNamedMetricContribution): it
 * counts a metric's assertions from `componentResults[].assertion.metric` only (none naming it counts as 1), and
 * without a weight it adds the value itself with weight = that count, i.e. 1 x value, as with the weight of 1;
 * `rankgate merge` counts rows the same way. Templated metric names (`{{...}}`, rendered per row by promptfoo) keep
 * their weights. Mutates the grading result (the afterEach hook is handed the row's own object, persisted after it);
 * returns how many entries it dropped.
 */
export function compactGrading(row: { namedScores?: Record<string, number> | null; gradingResult?: GradingLike | null }): number {
  const g = row.gradingResult;
  if (!g || typeof g !== 'object') return 0;
  let dropped = 0;
  const own = row.namedScores ?? g.namedScores ?? {};
  for (const c of g.componentResults ?? []) {
    const ns = c?.namedScores;
    if (!c || !ns || typeof ns !== 'object') continue;
    const keys = Object.keys(ns);
    if (keys.every((k) => Object.is(own[k], ns[k]))) {
      delete c.namedScores;
      dropped += keys.length;
    }
  }
  const w = g.namedScoreWeights;
  if (w && typeof w === 'object') {
    const metrics = (g.componentResults ?? []).map((c) => c?.assertion?.metric);
    if (!metrics.some((m) => typeof m === 'string' && m.includes('{{'))) {
      for (const k of Object.keys(w)) {
        if (w[k] === 1 && metrics.filter((m) => m === k).length <= 1) {
          delete w[k];
          dropped++;
        }
      }
      if (Object.keys(w).length === 0) delete g.namedScoreWeights;
    }
  }
  return dropped;
}
