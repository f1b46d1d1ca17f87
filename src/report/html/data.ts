/**
 * The numbers of rankgate's HTML report, from parsed promptfoo results (src/results/read.ts). Pure: no I/O.
 *
 * Every figure is over the MEASURED queries (an errored query measured nothing: it is counted beside the figures,
 * never as a miss or a latency).
 * - per column: query success rate (the row's golden expectation met: what promptfoo calls "% passing"),
 *   Success@3 (DES-058 Recall@3), MRR@10, nDCG@10 (queries with a relevant reference) and routing accuracy (queries
 *   whose golden entry states a route), each with a seeded percentile-bootstrap 95% CI of the mean over queries;
 * - per category and column: Success@3 and nDCG@10 with CIs;
 * - sweep panels: nDCG@10 and Success@3 of the hybrid columns on an RRF k x weights grid, one panel per chunk size x embedder;
 * - latency per column: min, quartiles, p95, max (the whole pipeline);
 * - failure buckets per column, and a reranked column's stage: first-stage Success@budget, the reranker's gain, its own
 *   latency p50/p95 and cost per query, and how many rows its score cache answered (src/results/summary.ts rerankReport);
 * - the gate's verdict (decided by src/gate/verdict.ts gateColumn, passed in): every floor with its value, the
 *   regression check, the reasons, a plain-language conclusion (src/report/verdict-text.ts), every column's code;
 * - significance of every column against the reference (the first column, or the baseline file's first column) for
 *   each gated metric (Success@3, MRR@10, nDCG@10, routing): paired over shared queries, randomization p
 *   Holm-adjusted across the comparisons of that metric (src/metrics compareVectors);
 * - regressed and improved queries (nDCG@10) of the candidate columns against the reference, with their top results;
 * - the cross-validated pick-the-best estimate (src/metrics/selection.ts).
 */
import { CompareInputError, compareVectors, type VectorComparison } from '../../metrics/index.ts';
import { mulberry32, type SelectionResult } from '../../metrics/selection.ts';
import { metricVectors, selectionEstimate } from '../../gate/compare.ts';
import { combinedCode, type ColumnVerdict, type ExitCode } from '../../gate/verdict.ts';
import type { Floors } from '../../gate/floors.ts';
import { baselineAsColumn, type Baseline } from '../../gate/baseline.ts';
import { VERDICT_WORD, floorRows, regressionView, verdictConclusion, type FloorRow, type RegressionView } from '../verdict-text.ts';
import { buildReport, percentile, provisionalText, rerankReport, type JudgedGap, type JudgedShare, type LabelledReport, type RerankReport } from '../../results/summary.ts';
import { BUCKETS, bucketLabel, type FailureBucket } from '../../results/types.ts';
import type { Column, ParsedResults, QueryRecord } from '../../results/read.ts';
import { hitTitle, snippet } from '../output-text.ts';

export interface Estimate {
  mean: number | null;
  lo: number | null;
  hi: number | null;
  n: number;
}

export const KEY_METRICS = [
  { key: 'success', label: 'query success rate' },
  { key: 'recall_at_3', label: 'Success@3' },
  { key: 'mrr', label: 'MRR@10' },
  { key: 'ndcg_at_10', label: 'nDCG@10' },
  { key: 'routing', label: 'routing accuracy' },
] as const;
export type KeyMetric = (typeof KEY_METRICS)[number]['key'];

export interface ColumnData {
  label: string;
  queries: number;
  /** Errored queries: left out of every figure of the column (measured = queries - errors). */
  errors: number;
  overall: Record<KeyMetric, Estimate>;
  categories: Record<string, { recall_at_3: Estimate; ndcg_at_10: Estimate; routing: Estimate }>;
  latency: { min: number; q1: number; median: number; q3: number; p95: number; max: number; n: number } | null;
  /** Ranked queries per failure bucket (every bucket, 0 when none). */
  buckets: Record<FailureBucket, number>;
  /** The rerank stage (per-stage means, rerank latency, cost per query); null without a reranker. */
  rerank: RerankReport | null;
  config: Record<string, unknown>;
  /**
   * How complete the labels of the column's top results are and what they give (docs/judgments.md): Judged@10 / Judged@3
   * overall and per category, the strict nDCG@10 beside condensed nDCG@10 and bpref, the `+ labels` figures (null without a
   * judgments file), and the gate's lower-bound warning (null unless Judged@10 is well below the reference's).
   */
  labels?: {
    judged: JudgedShare | null;
    categories: Record<string, number | null>;
    ndcg_at_10: number | null;
    condensed_ndcg_at_10: number | null;
    bpref: number | null;
    strict: { recall_at_3: number | null; mrr: number | null; trec_recall_at_10: number | null };
    labelled: LabelledReport | null;
    gap: JudgedGap | null;
  };
}

export interface SweepPanel {
  title: string;
  rrfK: number[];
  weights: string[];
  /** [rrfK index, weights index, value] for nDCG@10 and Success@3. */
  ndcg: [number, number, number][];
  recall: [number, number, number][];
}

export interface QueryChange {
  id: string;
  query: string;
  category: string;
  before: number;
  after: number;
  beforeTop: string[];
  afterTop: string[];
  /** The expected documents and where the first of them ranked in this column, or "not in the top 10". */
  miss: string;
}

export interface CandidateChanges {
  column: string;
  regressed: QueryChange[];
  improved: QueryChange[];
}

/** The metrics the gate checks, each tested for significance (metricVectors keys). */
export const SIGNIFICANCE_METRICS = [
  { key: 'recall_at_3', label: 'Success@3' },
  { key: 'mrr', label: 'MRR@10' },
  { key: 'ndcg_at_10', label: 'nDCG@10' },
  { key: 'routing_ok', label: 'routing accuracy' },
] as const;

export interface SignificanceData {
  metric: string;
  label: string;
  queries: number;
  comparisons: VectorComparison[];
}

/** The verdict block of the report: what `rankgate gate` decided for one column, said for people. */
export interface GateData {
  column: string;
  code: ExitCode;
  word: 'PASS' | 'FAIL' | 'ERROR';
  floorsSource: string;
  evaluated: number;
  expected: number | null;
  floors: FloorRow[];
  regression: RegressionView;
  reasons: string[];
  notes: string[];
  conclusion: string;
  /** What the gated evidence rests on that no person reviewed (provisionalText), or null. */
  provisional?: string | null;
  /** Every column against the same floors (the eval's afterAll hook gates each; its exit code is the combined one). */
  columns: { label: string; code: ExitCode; word: string; reason: string | null }[];
  combined: ExitCode;
}

export interface ReportData {
  title: string;
  generated: string;
  reference: string;
  baselineFile: string | null;
  columns: ColumnData[];
  categories: string[];
  sweep: SweepPanel[];
  gate: GateData | null;
  /** One entry per gated metric that has shared queries; empty with one column and no baseline. */
  significance: SignificanceData[];
  changes: CandidateChanges[];
  selection: SelectionResult | null;
}

/** Mean and seeded percentile-bootstrap 95% CI of the mean. */
export function bootstrapMean(xs: number[], opts: { resamples?: number; seed?: number } = {}): Estimate {
  const n = xs.length;
  if (!n) return { mean: null, lo: null, hi: null, n: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const B = opts.resamples ?? 1000;
  const rnd = mulberry32(opts.seed ?? 42);
  const means: number[] = [];
  for (let b = 0; b < B; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += xs[Math.floor(rnd() * n)]!;
    means.push(s / n);
  }
  means.sort((a, b) => a - b);
  return { mean, lo: means[Math.floor(0.025 * (B - 1))]!, hi: means[Math.ceil(0.975 * (B - 1))]!, n };
}

/** The row's golden expectation met (promptfoo's per-row pass when the config lists only rank and routing checks). */
export function querySuccess(q: QueryRecord, passAt = 3): boolean {
  if (q.error) return false;
  const rankOk = q.retrieval === null || (q.retrieval.best_rank !== null && q.retrieval.best_rank <= passAt);
  return rankOk && (q.routing === null || q.routing.ok);
}

function estimates(all: QueryRecord[], seed: number): Record<KeyMetric, Estimate> {
  // over the measured queries: an errored query is neither a miss nor a failed row here (it is counted beside)
  const qs = all.filter((q) => !q.error);
  const ranked = qs.filter((q) => q.retrieval !== null);
  const routed = qs.filter((q) => q.routing !== null);
  return {
    success: bootstrapMean(qs.map((q) => (querySuccess(q) ? 1 : 0)), { seed }),
    recall_at_3: bootstrapMean(ranked.map((q) => q.retrieval!.recall_at_3), { seed }),
    mrr: bootstrapMean(ranked.map((q) => q.retrieval!.mrr), { seed }),
    ndcg_at_10: bootstrapMean(ranked.map((q) => q.retrieval!.ndcg_at_10), { seed }),
    routing: bootstrapMean(routed.map((q) => (q.routing!.ok ? 1 : 0)), { seed }),
  };
}

function columnData(c: Column, seed: number): ColumnData {
  const byCat = new Map<string, QueryRecord[]>();
  for (const q of c.queries) {
    const g = byCat.get(q.category);
    if (g) g.push(q);
    else byCat.set(q.category, [q]);
  }
  const categories: ColumnData['categories'] = {};
  for (const [cat, qs] of [...byCat].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const e = estimates(qs, seed);
    categories[cat] = { recall_at_3: e.recall_at_3, ndcg_at_10: e.ndcg_at_10, routing: e.routing };
  }
  const lat = c.queries.filter((q) => !q.error).map((q) => q.latencyMs).filter((x): x is number => x !== null && Number.isFinite(x));
  return {
    label: c.label,
    queries: c.queries.length,
    errors: c.queries.filter((q) => q.error).length,
    overall: estimates(c.queries, seed),
    categories,
    latency: lat.length
      ? { min: Math.min(...lat), q1: percentile(lat, 25)!, median: percentile(lat, 50)!, q3: percentile(lat, 75)!, p95: percentile(lat, 95)!, max: Math.max(...lat), n: lat.length }
      : null,
    buckets: Object.fromEntries(BUCKETS.map((b) => [b, c.queries.filter((q) => q.retrieval?.bucket === b).length])) as Record<FailureBucket, number>,
    rerank: rerankReport(c.queries),
    config: c.config,
    labels: labelsData(c),
  };
}

/** The column's Judged@k, condensed measures and + labels figures (the same numbers as the gate's report). */
function labelsData(c: Column, gap: JudgedGap | null = null): NonNullable<ColumnData['labels']> {
  const r = buildReport(c);
  return {
    judged: r.share_judged ?? null,
    categories: Object.fromEntries(Object.entries(r.categories).map(([k, v]) => [k, v.share_judged_at_10 ?? null])),
    ndcg_at_10: r.metrics.ndcg_at_10 ?? null,
    condensed_ndcg_at_10: r.metrics.condensed_ndcg_at_10 ?? null,
    bpref: r.metrics.bpref ?? null,
    strict: { recall_at_3: r.overall_recall_at_3, mrr: r.overall_mrr_at_10, trec_recall_at_10: r.metrics.trec_recall_at_10 ?? null },
    labelled: r.labelled ?? null,
    gap,
  };
}

function weightsLabel(w: unknown): string | null {
  const x = w as { keyword?: number; vector?: number } | undefined;
  if (!x || typeof x.keyword !== 'number' || typeof x.vector !== 'number') return null;
  return `bm25 ${x.keyword} : vec ${x.vector}`;
}

/** Hybrid columns on an RRF k x weights grid, one panel per (chunk size, embedder); empty unless some panel has 2+ cells. */
export function sweepPanels(parsed: ParsedResults): SweepPanel[] {
  const groups = new Map<string, { k: number; w: string; col: Column }[]>();
  for (const c of parsed.columns) {
    const cfg = c.config;
    if ((cfg.mode ?? 'hybrid') !== 'hybrid' || typeof cfg.rrfK !== 'number') continue;
    const w = weightsLabel(cfg.weights) ?? 'bm25 1 : vec 1';
    const title = `chunk size ${cfg.chunkSize ?? '?'} · ${cfg.embedder ?? 'default embedder'}`;
    groups.set(title, [...(groups.get(title) ?? []), { k: cfg.rrfK, w, col: c }]);
  }
  const panels: SweepPanel[] = [];
  for (const [title, cells] of groups) {
    if (cells.length < 2) continue;
    const rrfK = [...new Set(cells.map((c) => c.k))].sort((a, b) => a - b);
    const weights = [...new Set(cells.map((c) => c.w))].sort();
    const mean = (c: Column, k: 'ndcg_at_10' | 'recall_at_3') => {
      const r = c.queries.filter((q) => q.retrieval && !q.error);
      return r.length ? +(r.reduce((a, q) => a + q.retrieval![k], 0) / r.length).toFixed(4) : 0;
    };
    panels.push({
      title,
      rrfK,
      weights,
      ndcg: cells.map((c) => [rrfK.indexOf(c.k), weights.indexOf(c.w), mean(c.col, 'ndcg_at_10')]),
      recall: cells.map((c) => [rrfK.indexOf(c.k), weights.indexOf(c.w), mean(c.col, 'recall_at_3')]),
    });
  }
  return panels.sort((a, b) => (a.title < b.title ? -1 : 1));
}

function topTitles(q: QueryRecord): string[] {
  return q.top.map((h) => `#${h.rank} ${hitTitle({ ...h, content: h.content })} — ${snippet(h.content, 80)}`);
}

/** The miss cell: the query's expected documents (path, id or chunk), where the first ranked in this column, and below the top 10 its failure bucket. */
export function missCell(q: QueryRecord): string {
  const refs = (q.golden?.expected ?? []).filter((r) => r.relevant);
  const names = refs.map((r) => r.path ?? r.doc_id ?? r.chunk_id ?? (r.passage_substring !== undefined ? `"${snippet(r.passage_substring, 40)}"` : '?'));
  const what = names.length ? `${names.slice(0, 3).join(', ')}${names.length > 3 ? ` (+${names.length - 3})` : ''}` : '(no expected document)';
  const rank = q.retrieval?.best_rank ?? null;
  const b = q.retrieval?.bucket;
  // below the top 10 the failure bucket says which stage lost it (src/results/score.ts bucketOf)
  const bucket = b && b !== 'rank1_hit' && b !== 'topk_ordering_gap' && b !== 'not_diagnosed' ? ` (${bucketLabel(b)})` : '';
  return `${what}: ${rank === null ? 'not in the top 10' : `rank ${rank}`}${bucket}`;
}

/** Queries whose nDCG@10 (Success@3 for ties on nDCG) moved between the reference and the candidate. */
export function queryChanges(ref: Column, cand: Column, limit = 15): CandidateChanges {
  const refById = new Map(ref.queries.map((q) => [q.id, q]));
  const changes: QueryChange[] = [];
  for (const q of cand.queries) {
    const r = refById.get(q.id);
    if (!r || !q.retrieval || !r.retrieval || q.error || r.error) continue;
    const before = r.retrieval.ndcg_at_10;
    const after = q.retrieval.ndcg_at_10;
    if (typeof before !== 'number' || typeof after !== 'number') continue;
    if (Math.abs(after - before) < 1e-9) continue;
    changes.push({ id: q.id, query: q.query, category: q.category, before, after, beforeTop: topTitles(r), afterTop: topTitles(q), miss: missCell(q) });
  }
  const by = (a: QueryChange, b: QueryChange) => Math.abs(b.after - b.before) - Math.abs(a.after - a.before) || (a.id < b.id ? -1 : 1);
  return {
    column: cand.label,
    regressed: changes.filter((c) => c.after < c.before).sort(by).slice(0, limit),
    improved: changes.filter((c) => c.after > c.before).sort(by).slice(0, limit),
  };
}

export interface ReportDataOptions {
  title?: string;
  baseline?: ParsedResults | null;
  baselineFile?: string | null;
  seed?: number;
  /** Candidate columns listed with their regressed/improved queries (default 3). */
  maxCandidates?: number;
  /**
   * The committed baseline (gate.yaml regression.baseline) as the reference when no baseline results file is given:
   * its per-query values give the significance of every gated metric and the regressed queries.
   */
  committedBaseline?: { path: string; data: Baseline } | null;
  /** The gate's verdict of every column (gateColumn), the one the block shows (`gated`, default 0), and the floors. */
  gate?: { verdicts: ColumnVerdict[]; gated?: number; floors: Floors; floorsSource: string } | null;
}

export function gateData(g: NonNullable<ReportDataOptions['gate']>): GateData | null {
  const v = g.verdicts[g.gated ?? 0];
  if (!v) return null;
  return {
    column: v.column,
    code: v.code,
    word: VERDICT_WORD[v.code],
    floorsSource: g.floorsSource,
    evaluated: v.evaluated,
    expected: v.expected,
    floors: floorRows(v),
    regression: regressionView(v, g.floors),
    reasons: v.reasons,
    notes: v.notes,
    conclusion: verdictConclusion(v, g.floors),
    provisional: v.provisional ?? provisionalText(v.report.provisional),
    columns: g.verdicts.map((x) => ({ label: x.column, code: x.code, word: VERDICT_WORD[x.code], reason: x.reasons[0] ?? null })),
    combined: combinedCode(g.verdicts.map((x) => x.code)),
  };
}

export function buildReportData(parsed: ParsedResults, opts: ReportDataOptions = {}): ReportData {
  const seed = opts.seed ?? 42;
  const baseCol = opts.baseline?.columns[0] ?? null;
  const committed = !baseCol && opts.committedBaseline ? baselineAsColumn(opts.committedBaseline.data, `baseline ${opts.committedBaseline.path}`) : null;
  const ref = baseCol ? { ...baseCol, label: `baseline: ${baseCol.label}` } : (committed ?? parsed.columns[0]!);
  const cands = baseCol || committed ? parsed.columns : parsed.columns.slice(1);
  const columns = parsed.columns.map((c) => columnData(c, seed));
  // the gate's lower-bound warning of each column (its verdict, when the report was gated)
  opts.gate?.verdicts.forEach((v, i) => {
    const l = columns[i]?.labels;
    if (l && v.report.judged_gap) l.gap = v.report.judged_gap;
  });
  const cats = [...new Set(parsed.columns.flatMap((c) => c.queries.map((q) => q.category)))].sort();

  const significance: SignificanceData[] = [];
  if (cands.length) {
    for (const m of SIGNIFICANCE_METRICS) {
      const vectors = metricVectors({ ...parsed, columns: [ref, ...cands] }, m.key);
      try {
        const s = compareVectors(vectors, { missing: 'intersect', randomization: { seed }, bootstrap: { seed } });
        significance.push({ metric: m.key, label: m.label, queries: s.queries.length, comparisons: s.comparisons });
      } catch (e) {
        // no shared query measures this metric (e.g. no routed query): nothing to test; anything else is a bug
        if (!(e instanceof CompareInputError)) throw e;
      }
    }
  }
  // Candidates with their query changes: every column against a baseline file, else the most different columns.
  const ranked = [...cands].sort((a, b) => {
    const m = (c: Column) => {
      const r = c.queries.filter((q) => q.retrieval && !q.error);
      return r.length ? r.reduce((s, q) => s + q.retrieval!.ndcg_at_10, 0) / r.length : 0;
    };
    return m(b) - m(a);
  });
  const picked = baseCol || committed ? cands.slice(0, opts.maxCandidates ?? 3) : ranked.slice(0, opts.maxCandidates ?? 3);
  return {
    title: opts.title ?? 'rankgate report',
    generated: parsed.timestamp,
    reference: ref.label,
    baselineFile: opts.baselineFile ?? (committed ? opts.committedBaseline!.path : null),
    columns: baseCol ? [columnData(ref, seed), ...columns] : columns,
    categories: cats,
    sweep: sweepPanels(parsed),
    gate: opts.gate ? gateData(opts.gate) : null,
    significance,
    changes: picked.map((c) => queryChanges(ref, c)),
    selection: parsed.columns.length > 1 ? selectionEstimate(metricVectors(parsed, 'ndcg_at_10'), { seed }) : null,
  };
}
