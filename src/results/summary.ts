/**
 * The DES-058 report of one results column: overall and per-category Recall@3 / MRR@10 (or routing
 * accuracy), failures with their top 3 results, failure buckets, latency, gate verdict, judge status.
 *
 * Definitions (documented in the README "Running evals"):
 * Every figure is over the MEASURED queries: a query whose search errored (service down, timeout, a dead reranker)
 * measured nothing and is left out of every mean, rate and percentile, never counted as a miss or as a latency;
 * `errors` and `measured_queries` (and `errors` per category) say how many were left out, and the gate's
 * `max_error_rate` decides separately whether that many errors are acceptable (src/gate/verdict.ts).
 * - overall_recall_at_3 / categories[c].recall_at_3: DES-058's "Recall@3", which is Success@3 (ir_measures; trec_eval
 *   success_3): mean of the per-query 1/0 "a relevant = "high" reference is in the top 3" over the measured queries
 *   that have a relevant reference (docs/metrics.md "Names").
 * - mrr_at_10: mean MRR@10 over the same queries.
 * - routing_accuracy: share of the category's measured queries whose routing check passed (every query has one:
 *   expected_routing defaults to search); reported for categories where some query expects a route other
 *   than search or the safety flag, and always in `routing` for the whole set.
 * - latency p50/p95: nearest-rank percentiles of the provider's per-query latencyMs over the measured queries (the
 *   whole pipeline, rerank included; an errored query's wait is not a latency); `rerank` (a reranked column): the
 *   per-stage means, the rerank stage's own latency p50/p95 and the cost per query, with how many of its queries
 *   were read from the score cache and what they would have cost uncached at list price.
 * - judged family (present only when the judge assertion scored queries; issue 7): overall_judged_recall_at_3,
 *   overall_judged_mrr_at_10, judged_metrics (judged_recall_at_{1,3,5,10}, judged_mrr, judged_ndcg_at_10) and
 *   categories[c].judged_* are means over the queries the judge scored (n_judged), like the strict ones
 *   over the ranked queries. `judge_stats` sums calls, cache hits, tokens, estimated cost and judge errors.
 *   In similarity mode the same fields hold the HEURISTIC numbers and judge_stats.heuristic is true.
 *   With the judge off all of these are null and `judge` says "judge: off". A judge assertion that failed on a row
 *   without scoring it (it threw) is a judge error: counted in judge_stats.errors, or, when no query was judged,
 *   `judge` says "judge: FAILED on N of M queries (reason)" (never "off", never a pass of a judged gate); so does a query
 *   the judge scored with some judgements failed (judge_errors > 0: a dead endpoint fails every one), which is never
 *   counted as judged in that line. The answer judge has its own part: "answer judge: openai:chat:M (answer-v1) · K of M
 *   answers graded", or "answer judge: FAILED on N of M queries (reason)".
 */
import type { Column, QueryRecord } from './read.ts';
import { BUCKETS, LEGACY_BUCKETS, type FailureBucket, type JudgmentsInfo } from './types.ts';
import { LABELLED_KEYS, RANK_KEYS } from './score.ts';

export interface CategoryReport {
  count: number;
  /** Errored queries of the category (left out of its figures); absent when none. */
  errors?: number;
  recall_at_3?: number;
  mrr_at_10?: number;
  ndcg_at_10?: number;
  recall_at_10?: number;
  routing_accuracy?: number;
  /** Judged family (when the judge scored queries of this category). */
  judged_recall_at_3?: number;
  judged_mrr_at_10?: number;
  judged_ndcg_at_10?: number;
  n_judged?: number;
  /** Mean answer grade 1-5 (the NQ spec's answer judge) over the graded queries of this category. */
  answer_score?: number;
  /** Judged@10 / Judged@3 (ir_measures) of the category's ranked queries with results. */
  share_judged_at_10?: number;
  share_judged_at_3?: number;
  /** The `+ labels` figures of the category (with a judgments file). */
  labelled_recall_at_3?: number;
  labelled_mrr_at_10?: number;
  labelled_ndcg_at_10?: number;
}

/** Judged@k of a column: means over the `n` measured ranked queries that returned something (ir_measures gives an empty ranking no value). */
export interface JudgedShare {
  at_10: number | null;
  at_3: number | null;
  n: number;
}

/** The `+ labels` figures of a column (docs/judgments.md "Labels in an eval"), beside the strict ones. */
export interface LabelledReport {
  /** The judgments file the labels came from (null: the rows carry labels but not the file's description). */
  judgments: JudgmentsInfo | null;
  /** Queries the figures are over: the same measured ranked queries as the strict ones. */
  queries: number;
  /** recall_at_3 (Success@3), recall_at_10 (Success@10), trec_recall_at_10 (Recall@10), mrr (MRR@10), ndcg_at_10. */
  metrics: Record<(typeof LABELLED_KEYS)[number], number | null>;
  /** Labels that entered the figures (documents no golden reference names), and those no person reviewed. */
  labels: { applied: number; unreviewed: number };
}

/**
 * How much of a column's gated evidence rests on what no person reviewed (docs/judgments.md "Provisional evidence"):
 * the measured queries whose golden entry is `source: bootstrap` (unless a chair label of the judgments file covers
 * every relevant reference of it), the labels the `+ labels` figures rest on, and the judgments file's review backlog.
 */
export interface ProvisionalStatus {
  /** Measured queries: every floor is over these. */
  gated: number;
  /** Of them, bootstrap-only golden entries. */
  bootstrap_only: number;
  /** (gated - bootstrap_only) / gated; null when nothing was measured. */
  reviewed_share: number | null;
  /** Up to 3 bootstrap-only query ids. */
  examples: string[];
  /** The labels the `+ labels` figures rest on; null without a judgments file. */
  labels: { applied: number; unreviewed: number } | null;
  /** The judgments file's review backlog; null without a judgments file. */
  backlog: { file: string; pending: number; oldest_pending: string | null } | null;
}

/**
 * A column whose Judged@10 is well below the reference column's (src/gate/verdict.ts JUDGED_GAP): its strict figures
 * are a lower bound; the condensed measures are said beside them.
 */
export interface JudgedGap {
  reference: string;
  reference_at_10: number;
  at_10: number;
  /** reference_at_10 - at_10, in points (0..100). */
  gap_pts: number;
}

export interface JudgeStats {
  /** True when the judged numbers come from the similarity heuristic (HEURISTIC, not a model judge). */
  heuristic: boolean;
  judged_queries: number;
  judged_results: number;
  high: number;
  partial: number;
  not_relevant: number;
  errors: number;
  calls: number;
  cache_hits: number;
  input_tokens: number;
  output_tokens: number;
  estimated_cost_usd: number;
}

export interface FailureEntry {
  id: string;
  query: string;
  category: string;
  expected_passage: string | null;
  best_match_rank: number | null;
  bucket: FailureBucket | 'routing' | 'error';
  reason: string;
  top_3_results: string[];
  top_3_ids: string[];
}

export interface GateCheck {
  name: string;
  scope: string;
  metric: string;
  value: number | null;
  min: number;
  passed: boolean;
  /** Nothing in the results measures this floor (exit 2 unless allow_partial). */
  unmeasured?: boolean;
  note?: string;
}

export interface Des058Report {
  timestamp: string;
  language: string;
  column: string;
  total_queries: number;
  overall_recall_at_3: number | null;
  overall_mrr_at_10: number | null;
  /** Judged family beside the strict one; null when no query was judged (judge off). */
  overall_judged_recall_at_3: number | null;
  overall_judged_mrr_at_10: number | null;
  judged_metrics: Record<string, number | null> | null;
  judge_stats: JudgeStats | null;
  categories: Record<string, CategoryReport>;
  failures: FailureEntry[];
  gate_passed: boolean;
  gate: GateCheck[];
  judge: string;
  metrics: Record<string, number | null>;
  routing: { accuracy: number | null; count: number };
  failure_buckets: Record<string, number>;
  /** Errored queries: nothing measured for them, left out of every figure of this report. */
  errors: number;
  /** Queries without an error: every figure of this report is over these (total_queries - errors). */
  measured_queries: number;
  /** The provider's per-query latency over the measured queries (n of them): the whole pipeline (rerank included). */
  latency_ms: { p50: number | null; p95: number | null; mean: number | null; n?: number };
  /** The rerank stage of the column (rerankReport); absent or null when no row reranked. */
  rerank?: RerankReport | null;
  /** Judged@10 / Judged@3 (absent: a report of an older rankgate). metrics.condensed_ndcg_at_10 and metrics.bpref beside. */
  share_judged?: JudgedShare;
  /** The `+ labels` figures; null/absent without a judgments file. */
  labelled?: LabelledReport | null;
  /** What the gated evidence rests on that no person reviewed; null when unknown (column sums only). */
  provisional?: ProvisionalStatus | null;
  /** Set by the gate when Judged@10 is well below the reference column's: the strict figures are a lower bound. */
  judged_gap?: JudgedGap | null;
  config: Record<string, unknown>;
  eval_id: string | null;
  queries?: QueryDetail[];
}

/**
 * A reranked column's stage report (docs/metrics.md "Per-stage metrics", "Rerank latency and cost"): means of the
 * per-stage measures over the ranked queries whose first stage could be scored, the rerank stage's own latency
 * percentiles and requests per query over the reranked rows, and the cost per query over the priced rows.
 */
export interface RerankReport {
  /** Rows that reranked (a diagnostics.rerank block). */
  queries: number;
  /** The reranker(s) named by the rows, comma-joined; null when no row names one. */
  reranker: string | null;
  /** The largest budget a row reported (a query whose first stage had fewer candidates reports the fewer its reranker
   * saw: src/search/service-rerank.ts); null without rows. */
  budget: number | null;
  /** Ranked queries with per-stage scores (the means below are over these). */
  stage_queries: number;
  first_stage_recall_at_budget: number | null;
  first_stage_recall_at_3: number | null;
  first_stage_ndcg_at_10: number | null;
  rerank_gain_recall_at_3: number | null;
  rerank_gain_ndcg_at_10: number | null;
  /** The rerank stage's own time per query (diagnostics.rerank.ms); the pipeline's is latency_ms. */
  latency_ms: { p50: number | null; p95: number | null; mean: number | null };
  requests_per_query: number | null;
  /** Mean USD per reranked query over the rows whose price is known (priced_queries); null when none is. */
  cost_per_query_usd: number | null;
  priced_queries: number;
  /** Rows whose every score came from the rerank score cache (no request sent): their stage latency is a cache read. */
  cached_queries?: number;
  /** Rows with some scores from the cache and some requested. */
  partly_cached_queries?: number;
  /**
   * What a query read from the cache would have cost without it, at list price (diagnostics.rerank.uncachedCostUsd),
   * mean over uncached_priced_queries (the cached rows with a list price); null when no price is known.
   */
  uncached_cost_per_query_usd?: number | null;
  uncached_priced_queries?: number;
}

export interface QueryDetail {
  id: string;
  category: string;
  query: string;
  recall_at_3: number | null;
  mrr: number | null;
  ndcg_at_10: number | null;
  best_rank: number | null;
  bucket: string | null;
  routing: string | null;
  latency_ms: number | null;
  error: string | null;
}

/**
 * What each measure key of a report (and of gate.yaml, the baseline and the named scores) is called, and its
 * definition in one line (docs/metrics.md "Names"): the keys keep DES-058's and the NQ eval's spelling (`recall_at_k`
 * for a binary measure); the names say which measure it is, as ir_measures names it. Written into the JSON reports.
 */
export const MEASURE_NAMES: Readonly<Record<string, string>> = {
  recall_at_1: 'Success@1: 1 when a relevant reference is in the top 1 (ir_measures Success@1, trec_eval success_1)',
  recall_at_3: 'Success@3 (DES-058 "Recall@3"): 1 when a relevant reference is in the top 3 (ir_measures Success@3)',
  recall_at_5: 'Success@5: 1 when a relevant reference is in the top 5 (ir_measures Success@5, trec_eval success_5)',
  recall_at_10: 'Success@10: 1 when a relevant reference is in the top 10 (ir_measures Success@10, trec_eval success_10)',
  trec_recall_at_10: 'Recall@10: relevant references in the top 10 / relevant references (ir_measures R@10, trec_eval recall_10)',
  mrr: 'MRR@10: 1 / rank of the first relevant reference in the top 10, else 0 (ir_measures RR@10)',
  ndcg_at_10: 'nDCG@10: gain = grade (ir_measures nDCG@10, trec_eval ndcg_cut_10)',
  precision_at_5: 'P@5 (ir_measures P@5, trec_eval P_5)',
  ap_at_10: 'AP@10 (ir_measures AP@10, trec_eval map_cut_10)',
  found: 'a relevant reference anywhere in the returned ranking (1/0)',
  first_stage_recall_at_budget: 'Success@budget of the first stage (the candidates the reranker saw)',
  share_judged_at_10:
    'Judged@10 (ir_measures Judged@10): share of the top min(10, n) results that have a label of any grade (golden reference, graded relevance, a judgments-file label); not a quality measure',
  share_judged_at_3: 'Judged@3 (ir_measures Judged@3): the same over the top 3',
  condensed_ndcg_at_10: "condensed-list nDCG@10 (Sakai 2007; trec_eval -J -m ndcg_cut.10): nDCG@10 with unlabelled results removed",
  bpref: 'bpref (ir_measures Bpref, trec_eval bpref): judged relevant above judged non-relevant, unlabelled results skipped',
  'labelled_*': '+ labels: the same measures with the golden set and the judgments file\'s labels (grade >= 2 relevant; the golden set above every label)',
};

/**
 * The status line of a column's unreviewed evidence, or null when nothing is provisional and no judgments file was read:
 * `provisional: 54 of 77 gated queries are bootstrap-only (reviewed share 0.30) · the + labels figures rest on 412 labels,
 * 380 not reviewed by a person · review backlog: 380 pending, oldest 2026-11-02 (judgments.jsonl)`.
 */
export function provisionalText(p: ProvisionalStatus | null | undefined): string | null {
  if (!p) return null;
  const parts: string[] = [];
  if (p.bootstrap_only > 0)
    parts.push(
      `${p.bootstrap_only} of ${p.gated} gated queries are bootstrap-only (reviewed share ${p.reviewed_share === null ? 'n/a' : p.reviewed_share.toFixed(2)}; e.g. ${p.examples.join(', ')}${p.bootstrap_only > p.examples.length ? ', …' : ''})`,
    );
  else if (p.labels || p.backlog) parts.push(`0 of ${p.gated} gated queries are bootstrap-only`);
  if (p.labels) parts.push(`the + labels figures rest on ${p.labels.applied} labels, ${p.labels.unreviewed} not reviewed by a person`);
  if (p.backlog) parts.push(`review backlog: ${p.backlog.pending} pending${p.backlog.oldest_pending ? `, oldest ${p.backlog.oldest_pending.slice(0, 10)}` : ''} (${p.backlog.file})`);
  return parts.length ? `provisional: ${parts.join(' · ')}` : null;
}

/**
 * The `+ labels` figures beside the strict ones, one line (null without a judgments file): `+ labels (judgments.jsonl,
 * 412 labels applied, 380 not reviewed): Success@3 0.6111 (strict 0.5741) · MRR@10 … · nDCG@10 … · Recall@10 …`.
 */
export function labelledText(r: Des058Report): string | null {
  const l = r.labelled;
  if (!l) return null;
  const n4 = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : x.toFixed(4));
  const pair = (name: string, lab: number | null, strict: number | null | undefined) => `${name} ${n4(lab)} (strict ${n4(strict)})`;
  const src = [l.judgments?.file, l.judgments || l.labels.applied ? `${l.labels.applied} labels applied, ${l.labels.unreviewed} not reviewed` : null].filter(Boolean).join(', ');
  return (
    `+ labels${src ? ` (${src})` : ''}: ` +
    [
      pair('Success@3', l.metrics.recall_at_3, r.overall_recall_at_3),
      pair('MRR@10', l.metrics.mrr, r.overall_mrr_at_10),
      pair('nDCG@10', l.metrics.ndcg_at_10, r.metrics.ndcg_at_10),
      pair('Recall@10', l.metrics.trec_recall_at_10, r.metrics.trec_recall_at_10),
    ].join(' · ') +
    ` over ${l.queries} queries`
  );
}

/** The chair-reviewed document keys of a row's labels. */
function chairDocs(q: QueryRecord): Set<string> {
  return new Set((q.labels ?? []).filter((l) => l.source === 'chair').map((l) => l.doc));
}

/** A measured query whose golden entry rests on a bootstrap only: `source: bootstrap`, not every relevant reference chair-labelled. */
function bootstrapOnly(q: QueryRecord): boolean {
  if (q.golden.source !== 'bootstrap') return false;
  const chair = chairDocs(q);
  const rel = q.golden.expected.filter((r) => r.relevant);
  return !(rel.length > 0 && rel.every((r) => {
    const k = r.path ?? r.doc_id ?? r.chunk_id;
    return k !== undefined && chair.has(k);
  }));
}

/** The column's provisional status from its records (see ProvisionalStatus). */
export function provisionalOf(col: Pick<Column, 'queries' | 'judgments'>): ProvisionalStatus {
  const measured = col.queries.filter((q) => q.error === null);
  const boot = measured.filter(bootstrapOnly);
  const lab = measured.filter((q) => q.retrieval?.labelled);
  const labelled = lab.length || col.judgments || measured.some((q) => q.labels);
  const j = col.judgments ?? null;
  return {
    gated: measured.length,
    bootstrap_only: boot.length,
    reviewed_share: measured.length ? round((measured.length - boot.length) / measured.length) : null,
    examples: boot.slice(0, 3).map((q) => q.id),
    labels: labelled ? { applied: lab.reduce((a, q) => a + q.retrieval!.labelled!.applied, 0), unreviewed: lab.reduce((a, q) => a + q.retrieval!.labelled!.unreviewed, 0) } : null,
    backlog: j ? { file: j.file, pending: j.pending, oldest_pending: j.oldest_pending } : null,
  };
}

/** The judged means of the report (judged_metrics keys). */
export const JUDGED_KEYS = ['judged_recall_at_1', 'judged_recall_at_3', 'judged_recall_at_5', 'judged_recall_at_10', 'judged_mrr', 'judged_ndcg_at_10'] as const;

/** The rerank stage report of a column's queries (errored rows have none), or null when no query reranked. */
export function rerankReport(qs: QueryRecord[]): RerankReport | null {
  const rq = qs.filter((q) => q.rerank && q.error === null);
  if (!rq.length) return null;
  const staged = rq.filter((q) => q.retrieval?.stages).map((q) => q.retrieval!.stages!);
  const m = (k: keyof Omit<import('./types.ts').StageScores, 'budget'>) => round(mean(staged.map((x) => x[k])));
  const ms = rq.map((q) => q.rerank!.ms).filter((x): x is number => x !== undefined);
  const req = rq.map((q) => q.rerank!.requests).filter((x): x is number => x !== undefined);
  const cost = rq.map((q) => q.rerank!.costUsd).filter((x): x is number => x !== undefined);
  const names = [...new Set(rq.map((q) => q.rerank!.reranker).filter((x): x is string => !!x))];
  const budgets = rq.map((q) => q.rerank!.budget).filter((b) => typeof b === 'number' && Number.isFinite(b));
  const fromCache = (q: QueryRecord) => (q.rerank!.cached ?? 0) > 0 && q.rerank!.requests === 0;
  const cachedQ = rq.filter(fromCache).length;
  const partly = rq.filter((q) => (q.rerank!.cached ?? 0) > 0 && (q.rerank!.requests ?? 0) > 0).length;
  // the rows that read the cache: what each would have cost without it, at list price
  const uncached = rq
    .filter((q) => (q.rerank!.cached ?? 0) > 0)
    .map((q) => q.rerank!.uncachedCostUsd)
    .filter((x): x is number => typeof x === 'number');
  return {
    queries: rq.length,
    reranker: names.length ? names.join(', ') : null,
    budget: budgets.length ? Math.max(...budgets) : null,
    stage_queries: staged.length,
    first_stage_recall_at_budget: m('first_stage_recall_at_budget'),
    first_stage_recall_at_3: m('first_stage_recall_at_3'),
    first_stage_ndcg_at_10: m('first_stage_ndcg_at_10'),
    rerank_gain_recall_at_3: m('rerank_gain_recall_at_3'),
    rerank_gain_ndcg_at_10: m('rerank_gain_ndcg_at_10'),
    latency_ms: { p50: round(percentile(ms, 50), 2), p95: round(percentile(ms, 95), 2), mean: round(mean(ms), 2) },
    requests_per_query: round(mean(req), 2),
    cost_per_query_usd: round(mean(cost), 8),
    priced_queries: cost.length,
    cached_queries: cachedQ,
    partly_cached_queries: partly,
    uncached_cost_per_query_usd: round(mean(uncached), 8),
    uncached_priced_queries: uncached.length,
  };
}

/** The reranker's gain, signed, for a column header: "rerank gain nDCG@10 −0.0271, Success@3 −6.3 pts"; '' without one. */
export function rerankGainText(r: RerankReport | null | undefined): string {
  if (!r || (r.rerank_gain_ndcg_at_10 === null && r.rerank_gain_recall_at_3 === null)) return '';
  const s = (x: number, d: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(d)}`;
  const parts = [
    ...(r.rerank_gain_ndcg_at_10 !== null ? [`nDCG@10 ${s(r.rerank_gain_ndcg_at_10, 4)}`] : []),
    ...(r.rerank_gain_recall_at_3 !== null ? [`Success@3 ${s(r.rerank_gain_recall_at_3 * 100, 1)} pts`] : []),
  ];
  return `rerank gain ${parts.join(', ')}`;
}

/**
 * `cache: 13 of 13` (rows of the rerank stage read from the score cache: its latency is a cache read and its cost
 * nothing) and, when some were, `uncached ~$0.002000 per query at list price` (or `uncached cost n/a: no list price`);
 * '' when no row read the cache.
 */
export function rerankCacheNote(r: RerankReport): string {
  const n = r.cached_queries ?? 0;
  const partly = r.partly_cached_queries ?? 0;
  if (!n && !partly) return '';
  return `cache: ${n} of ${r.queries}${partly ? ` (+${partly} partly)` : ''}`;
}

/** The uncached estimate of a rerank stage that read the cache: `uncached ~$0.002000 per query at list price`. */
export function rerankUncachedNote(r: RerankReport): string {
  if (!(r.cached_queries ?? 0) && !(r.partly_cached_queries ?? 0)) return '';
  const u = r.uncached_cost_per_query_usd;
  return u === null || u === undefined ? 'uncached cost n/a: no list price for this reranker' : `uncached ~$${u.toFixed(6)} per query at list price`;
}

/**
 * What a figure over the measured queries leaves out: '' when nothing errored, else `over 9 measured queries; 3
 * errored left out` (`what`: the measured queries' noun phrase, e.g. "p95" before it is the caller's).
 */
export function measuredNote(measured: number, errored: number): string {
  return errored ? `over ${measured} measured ${measured === 1 ? 'query' : 'queries'}; ${errored} errored left out` : '';
}

/**
 * The column metrics the gate hook (assertions/gate.ts afterAll) records beside latency_p50_ms / latency_p95_ms for a
 * column with reranked rows, and `rankgate merge` recomputes from the merged rows: the per-stage means
 * (avg_first_stage_recall_at_budget, ..., avg_rerank_gain_ndcg_at_10), rerank_latency_p50_ms / rerank_latency_p95_ms and
 * rerank_cost_per_query_usd. Empty for a column without a reranker (no zeros that read as a measured 0).
 */
export function rerankColumnMetrics(qs: QueryRecord[]): Record<string, number> {
  const r = rerankReport(qs);
  if (!r) return {};
  const out: Record<string, number> = {};
  const put = (k: string, v: number | null) => {
    if (v !== null) out[k] = v;
  };
  if (r.stage_queries) {
    // shares side by side (the first stage's, the reranked rows' final ones): the gain is their difference, said in the
    // column header signed (rerankGainText), never a named score: promptfoo's dialog colours every named score as a
    // pass rate, and a gain of -0.0271 read "Pass -2.71%" in red
    put('avg_first_stage_recall_at_budget', r.first_stage_recall_at_budget);
    put('avg_first_stage_recall_at_3', r.first_stage_recall_at_3);
    put('avg_first_stage_ndcg_at_10', r.first_stage_ndcg_at_10);
    put('avg_reranked_recall_at_3', r.first_stage_recall_at_3 === null || r.rerank_gain_recall_at_3 === null ? null : round(r.first_stage_recall_at_3 + r.rerank_gain_recall_at_3));
    put('avg_reranked_ndcg_at_10', r.first_stage_ndcg_at_10 === null || r.rerank_gain_ndcg_at_10 === null ? null : round(r.first_stage_ndcg_at_10 + r.rerank_gain_ndcg_at_10));
  }
  put('rerank_latency_p50_ms', r.latency_ms.p50);
  put('rerank_latency_p95_ms', r.latency_ms.p95);
  put('rerank_cost_per_query_usd', r.cost_per_query_usd);
  return out;
}

const numOrNull = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? round(x, 2) : null);

/** The rerank block of a column known only by its sums (a --no-write run): means from the row sums, percentiles as the hook wrote them. */
function rerankFromSums(ns: Record<string, number>): RerankReport | null {
  const n = ns.n_reranked;
  if (typeof n !== 'number' || n <= 0) return null;
  const staged = typeof ns.n_rerank_ranked === 'number' ? ns.n_rerank_ranked : 0;
  const m = (k: string) => (staged > 0 && typeof ns[k] === 'number' ? round(ns[k]! / staged) : null);
  // the gain: the reranked rows' final mean minus their first stage's (results written before: its own sum)
  const gain = (k: 'recall_at_3' | 'ndcg_at_10') => {
    const fin = m(`reranked_${k}`);
    const first = m(`first_stage_${k}`);
    return fin !== null && first !== null ? round(fin - first) : m(`rerank_gain_${k}`);
  };
  return {
    queries: n,
    reranker: null,
    budget: null,
    stage_queries: staged,
    first_stage_recall_at_budget: m('first_stage_recall_at_budget'),
    first_stage_recall_at_3: m('first_stage_recall_at_3'),
    first_stage_ndcg_at_10: m('first_stage_ndcg_at_10'),
    rerank_gain_recall_at_3: gain('recall_at_3'),
    rerank_gain_ndcg_at_10: gain('ndcg_at_10'),
    latency_ms: { p50: numOrNull(ns.rerank_latency_p50_ms), p95: numOrNull(ns.rerank_latency_p95_ms), mean: typeof ns.rerank_ms === 'number' ? round(ns.rerank_ms / n, 2) : null },
    requests_per_query: typeof ns.rerank_requests === 'number' ? round(ns.rerank_requests / n, 2) : null,
    cost_per_query_usd: typeof ns.rerank_cost_usd === 'number' && ns.n_rerank_cost ? round(ns.rerank_cost_usd / ns.n_rerank_cost, 8) : null,
    priced_queries: typeof ns.n_rerank_cost === 'number' ? ns.n_rerank_cost : 0,
    cached_queries: ns.n_rerank_cached ?? 0,
    partly_cached_queries: ns.n_rerank_partly_cached ?? 0,
    uncached_cost_per_query_usd: typeof ns.rerank_uncached_cost_usd === 'number' && ns.n_rerank_uncached_cost ? round(ns.rerank_uncached_cost_usd / ns.n_rerank_uncached_cost, 8) : null,
    uncached_priced_queries: ns.n_rerank_uncached_cost ?? 0,
  };
}

/** The names rerankColumnMetrics may write (derived: no row sums them). */
export const RERANK_COLUMN_KEYS = [
  'avg_first_stage_recall_at_budget',
  'avg_first_stage_recall_at_3',
  'avg_first_stage_ndcg_at_10',
  'avg_reranked_recall_at_3',
  'avg_reranked_ndcg_at_10',
  'rerank_latency_p50_ms',
  'rerank_latency_p95_ms',
  'rerank_cost_per_query_usd',
] as const;

export function mean(xs: number[]): number | null {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

/** Nearest-rank percentile (p in 0..100) of the finite values; null when empty. */
export function percentile(xs: number[], p: number): number | null {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return null;
  const idx = Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1));
  return v[idx]!;
}

const round = (x: number | null, d = 4) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d);

/** Queries whose routing was checked (the golden entry states a route or expect_safety; src/results/score.ts). */
function routed(qs: QueryRecord[]): QueryRecord[] {
  return qs.filter((q) => q.routing !== null);
}

/** A row the judge scored with every judgement answered (judge_errors 0): the only rows the judged means are over. */
function judgedClean(q: QueryRecord): boolean {
  return q.judgedScores != null && !((q.judgedScores.judge_errors ?? 0) > 0);
}

export function isFailure(q: QueryRecord): boolean {
  return q.error !== null || (q.retrieval !== null && q.retrieval.recall_at_3 === 0) || (q.routing !== null && !q.routing.ok);
}

function failureOf(q: QueryRecord): FailureEntry {
  const firstRel = q.golden.expected.find((r) => r.relevant);
  const expected = firstRel ? (firstRel.passage_substring ?? firstRel.chunk_id ?? firstRel.doc_id ?? firstRel.path ?? null) : null;
  let bucket: FailureEntry['bucket'];
  let reason: string;
  if (q.error) {
    bucket = 'error';
    reason = q.error;
  } else if (q.routing && !q.routing.ok) {
    bucket = 'routing';
    reason = q.routing.reason;
  } else {
    bucket = q.retrieval!.bucket;
    reason = q.retrieval!.best_rank === null ? 'no relevant passage in the results' : `best relevant rank ${q.retrieval!.best_rank} > 3`;
  }
  return {
    id: q.id,
    query: q.query,
    category: q.category,
    expected_passage: expected,
    best_match_rank: q.retrieval?.best_rank ?? null,
    bucket,
    reason,
    top_3_results: q.top.map((h) => h.content),
    top_3_ids: q.top.map((h) => h.chunkId),
  };
}

export interface ReportOptions {
  language?: string;
  verbose?: boolean;
  evalId?: string | null;
  timestamp?: string;
}

/** Build the report (gate fields filled by applyGate in src/gate/floors.ts; here gate_passed = true, gate = []). */
export function buildReport(col: Column, opts: ReportOptions = {}): Des058Report {
  const qs = col.queries;
  // errored queries measured nothing: every figure below is over the others (they are counted, and named as failures)
  const measured = qs.filter((q) => q.error === null);
  const ranked = measured.filter((q) => q.retrieval !== null);
  const byCat = new Map<string, QueryRecord[]>();
  // push, not a copy a query: copying the category's array each time was quadratic (100k rows: minutes, ~1 GB)
  for (const q of qs) {
    const c = byCat.get(q.category);
    if (c) c.push(q);
    else byCat.set(q.category, [q]);
  }
  const categories: Record<string, CategoryReport> = {};
  for (const [cat, all] of [...byCat.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const cqs = all.filter((q) => q.error === null);
    const r = cqs.filter((q) => q.retrieval !== null);
    const entry: CategoryReport = { count: all.length };
    if (all.length > cqs.length) entry.errors = all.length - cqs.length;
    if (r.length) {
      entry.recall_at_3 = round(mean(r.map((q) => q.retrieval!.recall_at_3)))!;
      entry.mrr_at_10 = round(mean(r.map((q) => q.retrieval!.mrr)))!;
      entry.ndcg_at_10 = round(mean(r.map((q) => q.retrieval!.ndcg_at_10)))!;
      entry.recall_at_10 = round(mean(r.map((q) => q.retrieval!.recall_at_10)))!;
      const js = r.filter((q) => typeof q.retrieval!.judged_at_10 === 'number');
      if (js.length) {
        entry.share_judged_at_10 = round(mean(js.map((q) => q.retrieval!.judged_at_10!)))!;
        entry.share_judged_at_3 = round(mean(js.map((q) => q.retrieval!.judged_at_3!)))!;
      }
      const lq = r.filter((q) => q.retrieval!.labelled);
      if (lq.length) {
        entry.labelled_recall_at_3 = round(mean(lq.map((q) => q.retrieval!.labelled!.recall_at_3)))!;
        entry.labelled_mrr_at_10 = round(mean(lq.map((q) => q.retrieval!.labelled!.mrr)))!;
        entry.labelled_ndcg_at_10 = round(mean(lq.map((q) => q.retrieval!.labelled!.ndcg_at_10)))!;
      }
    }
    const jq = cqs.filter(judgedClean);
    if (jq.length) {
      entry.judged_recall_at_3 = round(mean(jq.map((q) => q.judgedScores!.judged_recall_at_3 ?? 0)))!;
      entry.judged_mrr_at_10 = round(mean(jq.map((q) => q.judgedScores!.judged_mrr ?? 0)))!;
      entry.judged_ndcg_at_10 = round(mean(jq.map((q) => q.judgedScores!.judged_ndcg_at_10 ?? 0)))!;
      entry.n_judged = jq.length;
    }
    if (routed(cqs).length) entry.routing_accuracy = round(mean(routed(cqs).map((q) => (q.routing!.ok ? 1 : 0))))!;
    const aq = cqs.filter((q) => typeof q.answerScore === 'number');
    if (aq.length) entry.answer_score = round(mean(aq.map((q) => q.answerScore!)))!;
    categories[cat] = entry;
  }
  const metrics: Record<string, number | null> = {};
  for (const k of RANK_KEYS) metrics[k] = round(mean(ranked.map((q) => q.retrieval![k])));
  metrics.not_found_rate = ranked.length ? round(1 - metrics.found!) : null;
  // completeness of the labels (ir_measures Judged@k over the rankings that returned something) and the measures built
  // for incomplete labels, beside the strict ones
  const js = ranked.filter((q) => typeof q.retrieval!.judged_at_10 === 'number');
  const shareJudged: JudgedShare = { at_10: round(mean(js.map((q) => q.retrieval!.judged_at_10!))), at_3: round(mean(js.map((q) => q.retrieval!.judged_at_3!))), n: js.length };
  const cn = ranked.filter((q) => typeof q.retrieval!.condensed_ndcg_at_10 === 'number');
  metrics.condensed_ndcg_at_10 = round(mean(cn.map((q) => q.retrieval!.condensed_ndcg_at_10!)));
  metrics.bpref = round(mean(cn.map((q) => q.retrieval!.bpref!)));
  const lq = ranked.filter((q) => q.retrieval!.labelled);
  const labelled: LabelledReport | null =
    lq.length || col.judgments
      ? {
          judgments: col.judgments ?? null,
          queries: lq.length,
          metrics: Object.fromEntries(LABELLED_KEYS.map((k) => [k, round(mean(lq.map((q) => q.retrieval!.labelled![k])))])) as LabelledReport['metrics'],
          labels: { applied: lq.reduce((a, q) => a + q.retrieval!.labelled!.applied, 0), unreviewed: lq.reduce((a, q) => a + q.retrieval!.labelled!.unreviewed, 0) },
        }
      : null;
  const foundRanks = ranked.map((q) => q.retrieval!.best_rank).filter((x): x is number => x !== null);
  metrics.avg_rank_when_found = round(mean(foundRanks));
  const answ = ranked.map((q) => q.retrieval!.answerable_at_10).filter((x): x is number => x !== null);
  metrics.answerable_at_10 = round(mean(answ));
  const graded = qs.map((q) => q.answerScore).filter((x): x is number => typeof x === 'number');
  if (graded.length) {
    metrics.answer_score = round(mean(graded));
    metrics.n_answer = graded.length;
  }
  const buckets: Record<string, number> = {};
  for (const b of BUCKETS) buckets[b] = 0;
  for (const q of ranked) buckets[q.retrieval!.bucket] = (buckets[q.retrieval!.bucket] ?? 0) + 1;
  // an errored query's wait (a timeout, a dead reranker's retries) is not a latency of the search
  const lat = measured.map((q) => q.latencyMs).filter((x): x is number => x !== null);
  // the judge's bill covers every row it scored; the judged MEANS only the queries it judged without an error: a query
  // whose judgements failed has no judged figure (its results matching an expected passage alone would read as the
  // strict figure), so with every judgement failed the judged metrics are n/a, never the strict ones
  const scored = qs.filter((q) => q.judgedScores != null);
  const jq = scored.filter(judgedClean);
  const judged = jq.length;
  let judgedMetrics: Record<string, number | null> | null = null;
  let judgeStats: JudgeStats | null = null;
  if (scored.length) {
    judgedMetrics = {};
    for (const k of JUDGED_KEYS) judgedMetrics[k] = round(mean(jq.map((q) => q.judgedScores![k] ?? 0)));
    const sum = (k: string) => scored.reduce((a, q) => a + (q.judgedScores![k] ?? 0), 0);
    judgeStats = {
      heuristic: scored.some((q) => q.judgeHeuristic),
      judged_queries: judged,
      judged_results: sum('judged_results'),
      high: sum('judged_high'),
      partial: sum('judged_partial'),
      not_relevant: sum('judged_not_relevant'),
      errors: sum('judge_errors'),
      calls: sum('judge_calls'),
      cache_hits: sum('judge_cache_hits'),
      input_tokens: sum('judge_input_tokens'),
      output_tokens: sum('judge_output_tokens'),
      estimated_cost_usd: round(sum('judge_cost_usd'), 6)!,
    };
  }
  const failedJudge = qs.filter((q) => typeof q.judgeFailure === 'string');
  if (judgeStats && failedJudge.length) judgeStats.errors += failedJudge.length;
  const label = qs.map((q) => q.judgeLabel).find((l): l is string => typeof l === 'string' && l !== 'judge: off') ?? null;
  // a query some of whose judgements failed (a dead endpoint: every one) is a failed query, never "judged"
  const erroredJudge = scored.filter((q) => typeof q.judgeErrors === 'string');
  const failedN = failedJudge.length + erroredJudge.length;
  const failReason = failedJudge[0]?.judgeFailure ?? erroredJudge[0]?.judgeErrors ?? '';
  const relevanceText = failedN
    ? `judge: FAILED on ${failedN} of ${qs.length} queries${label ? ` (${label.replace(/^judge: /, '')})` : ''} (${failReason})`
    : judged
      ? `${label ?? 'judge: on'}${judgeStats!.heuristic && !/HEURISTIC/.test(label ?? '') ? ' (HEURISTIC)' : ''} · ${judged} of ${qs.length} queries judged`
      : null;
  // the answer judge (assertions/judge.ts:answer) has its own label and count: it never reads as "judge: off"
  const answerLabel = qs.map((q) => q.answerJudgeLabel).find((l): l is string => typeof l === 'string') ?? null;
  const answerFailed = qs.filter((q) => typeof q.answerFailure === 'string');
  const answered = qs.filter((q) => typeof q.answerScore === 'number').length;
  const answerText = answerFailed.length
    ? `answer judge: FAILED on ${answerFailed.length} of ${qs.length} queries (${answerFailed[0]!.answerFailure})`
    : answerLabel || answered
      ? `answer ${answerLabel ?? 'judge: on'} · ${answered} of ${qs.length} answers graded`
      : null;
  const judgeText = [relevanceText, answerText].filter((t): t is string => t !== null).join(' · ') || 'judge: off';
  const langs = [...new Set(qs.map((q) => q.language))].sort();
  const report: Des058Report = {
    timestamp: opts.timestamp ?? new Date().toISOString(),
    language: opts.language ?? (langs.length === 1 ? langs[0]! : langs.length ? 'all' : 'en'),
    column: col.label,
    total_queries: qs.length,
    overall_recall_at_3: metrics.recall_at_3 ?? null,
    overall_mrr_at_10: metrics.mrr ?? null,
    overall_judged_recall_at_3: judgedMetrics?.judged_recall_at_3 ?? null,
    overall_judged_mrr_at_10: judgedMetrics?.judged_mrr ?? null,
    judged_metrics: judgedMetrics,
    judge_stats: judgeStats,
    categories,
    failures: qs.filter(isFailure).map(failureOf),
    gate_passed: true,
    gate: [],
    judge: judgeText,
    metrics,
    routing: { accuracy: round(mean(routed(measured).map((q) => (q.routing!.ok ? 1 : 0)))), count: routed(measured).length },
    failure_buckets: buckets,
    errors: qs.length - measured.length,
    measured_queries: measured.length,
    latency_ms: { p50: round(percentile(lat, 50), 2), p95: round(percentile(lat, 95), 2), mean: round(mean(lat), 2), n: lat.length },
    rerank: rerankReport(qs),
    share_judged: shareJudged,
    labelled,
    provisional: provisionalOf(col),
    config: { provider: col.providerId, label: col.label, ...col.config },
    eval_id: opts.evalId ?? null,
  };
  if (opts.verbose) {
    report.queries = qs.map((q) => ({
      id: q.id,
      category: q.category,
      query: q.query,
      recall_at_3: q.retrieval?.recall_at_3 ?? null,
      mrr: q.retrieval ? round(q.retrieval.mrr) : null,
      ndcg_at_10: q.retrieval ? round(q.retrieval.ndcg_at_10) : null,
      best_rank: q.retrieval?.best_rank ?? null,
      bucket: q.retrieval?.bucket ?? null,
      routing: q.routing ? `${q.routing.ok ? 'ok' : 'FAIL'} (${q.routing.reason})` : null,
      latency_ms: q.latencyMs,
      error: q.error,
    }));
  }
  return report;
}

/**
 * The report of a column that has no rows but promptfoo's per-column SUMS (a `promptfoo eval --no-write` results
 * file, or the afterAll hook of such a run: promptfoo then keeps no rows). Means = sum / counter exactly as the
 * derived metrics compute them (recall_at_3 / n_ranked, routing_ok / n_routing, `<k>_<cat>` / `n_<cat>`); categories
 * are keyed by their namedScores key (src/results/score.ts categoryKey). Errored rows have no sums (promptfoo runs no
 * assertion on them): the figures are over the measured rows already; they are counted by promptfoo (testErrorCount)
 * and reported as errors, never as scores. No per-query detail, no failures list.
 */
export function buildReportFromSums(col: Column, opts: ReportOptions = {}): Des058Report {
  const ns = col.namedScores;
  const div = (a: string, b: string): number | null => {
    const x = ns[a];
    const y = ns[b];
    return typeof x === 'number' && typeof y === 'number' && y > 0 ? round(x / y) : null;
  };
  const metrics: Record<string, number | null> = {};
  for (const k of RANK_KEYS) metrics[k] = div(k, 'n_ranked');
  metrics.not_found_rate = metrics.found === null || metrics.found === undefined ? null : round(1 - metrics.found);
  metrics.answerable_at_10 = div('answerable_at_10', 'n_answerable');
  if (typeof ns.n_answer === 'number' && ns.n_answer > 0) {
    metrics.answer_score = div('answer_score', 'n_answer');
    metrics.n_answer = ns.n_answer;
  }
  const categories: Record<string, CategoryReport> = {};
  for (const key of Object.keys(ns)) {
    const m = /^n_routing_(.+)$/.exec(key);
    if (!m) continue;
    const c = m[1]!;
    const entry: CategoryReport = { count: ns[key]! };
    const r3 = div(`recall_at_3_${c}`, `n_${c}`);
    if (r3 !== null) {
      entry.recall_at_3 = r3;
      entry.mrr_at_10 = div(`mrr_${c}`, `n_${c}`)!;
      entry.ndcg_at_10 = div(`ndcg_at_10_${c}`, `n_${c}`)!;
      entry.recall_at_10 = div(`recall_at_10_${c}`, `n_${c}`)!;
    }
    entry.routing_accuracy = div(`routing_ok_${c}`, key)!;
    categories[c] = entry;
  }
  const counted = col.counts ? col.counts.pass + col.counts.fail + col.counts.error : 0;
  const latMean = div('latency_ms', 'n_latency');
  metrics.condensed_ndcg_at_10 = div('condensed_ndcg_at_10', 'n_ranked');
  metrics.bpref = div('bpref', 'n_ranked');
  for (const [c, entry] of Object.entries(categories)) {
    const j10 = div(`share_judged_at_10_${c}`, `n_share_judged_${c}`);
    if (j10 !== null) {
      entry.share_judged_at_10 = j10;
      entry.share_judged_at_3 = div(`share_judged_at_3_${c}`, `n_share_judged_${c}`)!;
    }
  }
  const nLab = ns.n_labelled;
  // the sums cannot tell a query judged cleanly from one whose judgements failed: with any judge error, no judged figure
  const judgedOk = typeof ns.n_judged === 'number' && !((ns.judge_errors ?? 0) > 0);
  const jdiv = (k: string) => (judgedOk ? div(k, 'n_judged') : null);
  return {
    timestamp: opts.timestamp ?? new Date().toISOString(),
    language: opts.language ?? 'unknown',
    column: col.label,
    total_queries: counted,
    overall_recall_at_3: metrics.recall_at_3 ?? null,
    overall_mrr_at_10: metrics.mrr ?? null,
    overall_judged_recall_at_3: jdiv('judged_recall_at_3'),
    overall_judged_mrr_at_10: jdiv('judged_mrr'),
    judged_metrics: typeof ns.n_judged === 'number' ? Object.fromEntries(JUDGED_KEYS.map((k) => [k, jdiv(k)])) : null,
    judge_stats: null,
    categories,
    failures: [],
    gate_passed: true,
    gate: [],
    judge: typeof ns.n_judged === 'number' ? 'judge: on (sums only)' : 'judge: off',
    metrics,
    routing: { accuracy: div('routing_ok', 'n_routing'), count: ns.n_routing ?? 0 },
    // an older results file's bucket names count under today's (LEGACY_BUCKETS)
    failure_buckets: Object.fromEntries(
      BUCKETS.map((b) => [b, (ns[`bucket_${b}`] ?? 0) + Object.entries(LEGACY_BUCKETS).reduce((a, [old, now]) => a + (now === b ? (ns[`bucket_${old}`] ?? 0) : 0), 0)]),
    ),
    errors: col.counts?.error ?? 0,
    measured_queries: counted - (col.counts?.error ?? 0),
    latency_ms: { p50: null, p95: null, mean: latMean === null ? null : round(latMean, 2), n: ns.n_latency ?? 0 },
    rerank: rerankFromSums(ns),
    share_judged: { at_10: div('share_judged_at_10', 'n_share_judged'), at_3: div('share_judged_at_3', 'n_share_judged'), n: ns.n_share_judged ?? 0 },
    labelled:
      typeof nLab === 'number' && nLab > 0
        ? {
            judgments: null,
            queries: nLab,
            metrics: Object.fromEntries(LABELLED_KEYS.map((k) => [k, div(`labelled_${k}`, 'n_labelled')])) as LabelledReport['metrics'],
            labels: { applied: 0, unreviewed: 0 },
          }
        : null,
    // which golden entries are bootstrap-only is in the rows, not in the sums
    provisional: null,
    config: { provider: col.providerId, label: col.label, ...col.config },
    eval_id: opts.evalId ?? null,
  };
}

/**
 * What query expansion did in a column, in one line (null: no row asked for expansion): the setting, how many queries
 * were expanded (a golden entry without `expansion:` runs unchanged and is counted as such), and for a model its calls,
 * cache hits and cost: `expansion golden rrf: 12 of 16 queries expanded (4 ran unchanged)`.
 */
export function expansionSummary(col: Column): string | null {
  const rows = col.queries.filter((q) => q.expansion);
  if (!rows.length) return null;
  const e = rows[0]!.expansion!;
  const what = e.source === 'llm' ? `llm ${e.kind ?? 'rewrites'} ${e.provider ?? ''}`.trim() : e.source === 'golden' ? `golden ${e.mode ?? 'rrf'}` : e.source;
  const expanded = rows.filter((q) => q.expansion!.expanded).length;
  const errored = col.queries.filter((q) => q.error !== null).length;
  const parts = [`${expanded} of ${col.queries.length} queries expanded`];
  const unchanged = rows.length - expanded;
  if (unchanged) parts.push(`${unchanged} ran unchanged`);
  if (errored) parts.push(`${errored} errored`);
  let line = `expansion ${what}: ${parts[0]}${parts.length > 1 ? ` (${parts.slice(1).join(', ')})` : ''}`;
  if (e.source === 'llm') {
    const calls = rows.reduce((a, q) => a + (q.expansion!.requests ?? 0), 0);
    const cached = rows.filter((q) => q.expansion!.cached).length;
    const cost = rows.reduce((a, q) => a + (q.expansion!.costUsd ?? 0), 0);
    line += ` · model calls ${calls}, ~$${cost.toFixed(4)}`;
    if (cached) {
      // read from the cache: nothing was sent, nothing paid; what those calls cost when they were made is the estimate
      const unc = rows.map((q) => (q.expansion!.cached ? q.expansion!.uncachedCostUsd : q.expansion!.costUsd));
      const known = unc.every((x) => typeof x === 'number');
      line += ` · cache: ${cached} of ${rows.length}${known ? ` (uncached ~$${unc.reduce((a: number, x) => a + (x as number), 0).toFixed(4)})` : ' (uncached cost n/a: the cached calls recorded none)'}`;
    }
  }
  return line;
}
