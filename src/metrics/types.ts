/**
 * Shared types of the rank-metric core. Everything in src/metrics is pure: no I/O, no promptfoo.
 *
 * A measure is `(ranking, judgments, k?, opts?) => number`:
 * - `ranking`: document ids already in rank order (best first). A duplicate id keeps its FIRST
 *   occurrence; later copies are dropped before anything is counted (trec_eval refuses duplicates).
 * - `judgments`: id -> grade for ONE query (trec_eval's qrels). Grades are integers in TREC files but
 *   any finite number works. A negative grade means "in the pool but unjudged" (trec_eval's
 *   convention): never relevant, zero gain, and skipped by bpref.
 * - `k`: the cutoff for `*_k` measures (a positive integer; required there, ignored elsewhere).
 * - `opts.relevanceLevel` (trec_eval `-l`, default 1): a grade >= level counts as relevant for the
 *   binary measures. Graded measures (ndcg*) use the raw grade as gain and ignore the level,
 *   exactly like trec_eval.
 */
export type Ranking = readonly string[];
export type Judgments = ReadonlyMap<string, number>;

export interface MeasureOptions {
  /** trec_eval `-l`: minimum grade that counts as relevant for binary measures. Default 1. */
  relevanceLevel?: number;
}

export type Measure = (ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions) => number;
