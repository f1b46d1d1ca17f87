/**
 * Shapes shared by the harness: what providers/search.ts returns to promptfoo (output + metadata),
 * and the per-query scores that assertions turn into namedScores and src/gate and src/report turn into verdicts and reports.
 * Pure types, no I/O.
 */
import type { RoutingDecision, SearchDiagnostics, SearchParams } from '../search/types.ts';

/** One ranked result as the provider returns it (ranks 1-based, in rank order). */
export interface HarnessHit {
  rank: number;
  chunkId: string;
  documentId: string;
  score: number;
  content: string;
  path?: string;
  bookSlug?: string;
  chapterNumber?: number;
  /** Document title and section heading, when the service returns them (shown in the readable output). */
  title?: string;
  heading?: string;
  channels?: { keyword?: { rank: number; score: number }; vector?: { rank: number; score: number } };
}

/**
 * The structured ranking of one row: `metadata.harness` of providers/search.ts (whose `output` is readable text);
 * older results carry it as `output` itself. Read it with parseOutput(output, metadata) (src/results/score.ts).
 */
export interface HarnessOutput {
  /** Chunk ids in rank order. */
  ids: string[];
  hits: HarnessHit[];
  routing: RoutingDecision | null;
  practice_bridge: boolean;
  safety: boolean;
  latencyMs: number;
  /** Index variant the column searched, e.g. "c300/use-lite", when the service says. */
  variant?: string;
  /** The service's generated answer (a module:/url: service's `answer`), graded by assertions/judge.ts:answer. */
  answer?: string;
  /** Integrity of the top results computed on the full content before the row was compacted (src/results/compact.ts). */
  integrity?: IntegrityIssue[];
  /**
   * What the row's compaction kept (src/results/compact.ts): each of the top `hits` hits keeps at least shownText(content,
   * `chars`), the blind review's text; absent on rows of an older rankgate (shorter snippets, no text below rank 3).
   */
  textKept?: { hits: number; chars: number };
  /** Hits whose content was longer than the maximum per hit and was cut to it (src/results/evidence.ts). */
  contentCut?: { hits: number; maxChars: number; longest: number };
}

/** `metadata` of the provider response (context.metadata in assertions; response.metadata in results JSON). */
export interface HarnessMetadata {
  /** The structured ranking (contract C); absent in results written before the readable output. */
  harness?: HarnessOutput;
  /** First-stage candidates per channel; null when the service does not report them (url:, most module:). */
  diagnostics?: SearchDiagnostics | null;
  /**
   * passage_substring -> chunk ids of the searched index variant (DES-058 LIKE resolution). Present only when
   * the service implements resolvePassages; otherwise scoring falls back to substring matching on hit content.
   */
  resolution?: Record<string, string[]>;
  params?: Partial<SearchParams>;
  service?: string;
  /** rankgate's version (src/version.ts): shards of different versions are never merged. */
  rankgate?: string;
  /** false on every row of a `promptfoo eval --no-write` run: never a baseline (src/results/nowrite.ts). */
  promptfooWrite?: false;
  /**
   * The provider's config as the config file gave it (redacted, without promptfoo's basePath): what the row was
   * measured on. promptfoo's JSONL output has no config, so a baseline written from JSONL reads it here.
   */
  providerConfig?: Record<string, unknown>;
  /** The eval's run id (src/results/record.ts RUN_KEY). */
  rankgateRun?: string;
}

/**
 * The blind-test framework's failure buckets (src/results/score.ts bucketOf), in its order of stages. The two rerank
 * buckets need the row's `diagnostics.rerank`; first_stage_top10_miss is the no-reranker bucket that results written
 * before the rerank buckets called `candidate_budget_miss` (LEGACY_BUCKETS: still read).
 */
export const BUCKETS = [
  'rank1_hit',
  'topk_ordering_gap',
  'first_stage_top10_miss',
  'rerank_budget_miss',
  'reranker_ordering_miss',
  'filtered_candidate_miss',
  'candidate_generation_miss',
  'missing_expected_source',
  'not_diagnosed',
] as const;
export type FailureBucket = (typeof BUCKETS)[number];

/** Each bucket as the blind-test framework names it, for people: the PR comment, the HTML report, the matrix cell. */
export const BUCKET_LABELS: Readonly<Record<FailureBucket, string>> = {
  rank1_hit: 'rank-1 hit',
  topk_ordering_gap: 'top-10 ordering gap',
  first_stage_top10_miss: 'first-stage top-10 miss',
  rerank_budget_miss: 'rerank-budget miss',
  reranker_ordering_miss: 'reranker-ordering miss',
  filtered_candidate_miss: 'filtered-vector miss',
  candidate_generation_miss: 'candidate-generation miss',
  missing_expected_source: 'missing expected source',
  not_diagnosed: 'not diagnosed',
};

/** A bucket's label ("rerank-budget miss"); an old or unknown name as it is. */
export function bucketLabel(b: string): string {
  const now = (LEGACY_BUCKETS as Record<string, FailureBucket>)[b] ?? b;
  return (BUCKET_LABELS as Record<string, string>)[now] ?? b;
}

/** Bucket names of older results files -> today's (a column's `bucket_<old>` sum counts as `bucket_<new>`). */
export const LEGACY_BUCKETS: Readonly<Record<string, FailureBucket>> = { candidate_budget_miss: 'first_stage_top10_miss' };

/**
 * Per-stage scores of a reranked row (src/results/score.ts scoreStages; docs/metrics.md "Per-stage metrics"): the
 * first stage's order (diagnostics.rerank.firstStage) scored as the final ranking is, and the reranker's gain = the
 * final ranking's measure minus the first stage's.
 */
export interface StageScores {
  /** The reranker's candidate budget (diagnostics.rerank.budget). */
  budget: number;
  /** Recall@budget of the first stage (binary, as recall_at_k): the ceiling the reranker can reach. */
  first_stage_recall_at_budget: number;
  first_stage_recall_at_3: number;
  first_stage_ndcg_at_10: number;
  /** recall_at_3 - first_stage_recall_at_3 (-1, 0 or 1 per query). */
  rerank_gain_recall_at_3: number;
  /** ndcg_at_10 - first_stage_ndcg_at_10. */
  rerank_gain_ndcg_at_10: number;
}

/** Ranking metrics of one query (only when it has at least one relevant reference). */
export interface RetrievalScores {
  recall_at_1: number;
  recall_at_3: number;
  recall_at_5: number;
  recall_at_10: number;
  trec_recall_at_10: number;
  mrr: number;
  ndcg_at_10: number;
  precision_at_5: number;
  ap_at_10: number;
  /** 1 when a relevant reference is anywhere in the returned ranking. */
  found: number;
  /** Rank of the best relevant reference in the (possibly document-collapsed) ranking; null when not found. */
  best_rank: number | null;
  /** Rank at which the last relevant reference appears, when all were returned; null otherwise. */
  last_expected_rank: number | null;
  /** 1/0 when some reference carries answer_contains; null otherwise. */
  answerable_at_10: number | null;
  /** Number of relevant references (the denominator of trec recall). */
  relevant_refs: number;
  /** 'chunk' or 'document' (document/path judgements: ranking collapsed to documents, best chunk first). */
  level: 'chunk' | 'document';
  bucket: FailureBucket;
  /** Present only on a reranked row whose first stage could be scored (every candidate id matched or not). */
  stages?: StageScores;
  /**
   * ir_measures Judged@10 and Judged@3 of the ranking (src/metrics/judged.ts): the share of the top k that has a label
   * of any grade, grade 0 included: a golden reference (relevant, graded or `relevance: 0`) or a label of the judgments
   * file the row was scored with. null when the ranking is empty (ir_measures gives such a query no value). Absent on
   * records of an older rankgate's rows: never a 0.
   */
  judged_at_10?: number | null;
  judged_at_3?: number | null;
  /** Condensed-list nDCG@10 (Sakai; trec_eval -J) and bpref over the same labels: unjudged results removed, not counted as misses. */
  condensed_ndcg_at_10?: number;
  bpref?: number;
  /** The `+ labels` figures (golden set + the judgments file's labels, the golden set above them); absent without a judgments file. */
  labelled?: LabelledScores;
}

/**
 * One label of a query as an eval reads it (src/judgments/eval-input.ts): the effective label of (query, doc) after
 * chair > bootstrap > llm, carried in the test case's metadata.labels; and the judgments file an eval read (or the one
 * `rankgate gate --judgments` re-scored with): what it holds and its review backlog.
 */
export type { EvalLabel as QueryLabel, JudgmentsInfo } from '../judgments/eval-input.ts';
/** A label's grade from which it counts as relevant for the binary measures (Success@k, MRR@10, Recall@10): 2 of 0-3. */
export const LABEL_RELEVANT_GRADE = 2;

/**
 * The `+ labels` measures of one query: the golden references as in the strict figures, and every label of a document no
 * golden reference names (relevant when grade >= LABEL_RELEVANT_GRADE; nDCG gain = grade), retrieved or not (a label of a
 * document this column did not return still counts in Recall@10's denominator and nDCG's ideal, as a TREC qrel does).
 */
export interface LabelledScores {
  recall_at_3: number;
  recall_at_10: number;
  trec_recall_at_10: number;
  mrr: number;
  ndcg_at_10: number;
  /** Relevant items with the labels (golden relevant references + labels of grade >= 2 no reference names). */
  relevant: number;
  /** Labels that entered these figures: labels of documents no golden reference names, returned or not. */
  applied: number;
  /** Of those, labels a person has not reviewed (source llm or bootstrap). */
  unreviewed: number;
}

export interface RoutingScores {
  /** The stated route, or 'any' when the golden entry states only expect_safety. */
  expected: string;
  actual: string;
  practice_bridge: boolean;
  ok: boolean;
  /** Set when the golden query expects the safety flag. */
  safety_expected: boolean;
  safety_ok: boolean | null;
  reason: string;
}

export interface IntegrityIssue {
  rank: number;
  chunkId: string;
  issue: 'cut_mid_sentence' | 'open_code_fence';
}

/** The response metadata key rankgate's provider sets to false on every row of a `promptfoo eval --no-write` run
 * (src/results/nowrite.ts): here, so that read.ts and nowrite.ts do not import each other. */
export const PROMPTFOO_WRITE_KEY = 'promptfooWrite';
