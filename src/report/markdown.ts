/** Markdown renderings of a report: the eval summary, the gate output and the PR comment body. */
import type { BaselineDelta } from '../gate/baseline.ts';
import type { CorpusChange } from '../gate/corpus-change.ts';
import { measuredNote, provisionalText, rerankCacheNote, rerankUncachedNote, type Des058Report } from '../results/summary.ts';
import type { ShippingVerdict } from '../gate/shipping.ts';
import { mermaidCategoryChart } from './html/mermaid.ts';
import { errorLines, regressionLines, unconfirmedText, type ColumnVerdict } from '../gate/verdict.ts';
import { mdCode, mdFence, mdText } from './escape.ts';
import { bucketLabel } from '../results/types.ts';

/** Marker the CI workflow uses to find and update its one PR comment in place. */
export const COMMENT_MARKER = '<!-- rankgate:search-eval -->';

const f = (x: number | null | undefined, d = 3) => (x === null || x === undefined ? 'n/a' : x.toFixed(d));
const pct = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)}%`);
const arrow = (a: number | null, b: number | null) =>
  a === null || b === null ? '' : b > a + 1e-9 ? ` (▲ ${((b - a) * 100).toFixed(1)} pts)` : b < a - 1e-9 ? ` (▼ ${((a - b) * 100).toFixed(1)} pts)` : ' (=)';
/** Every user-supplied string (ids, categories, labels, error texts) goes through mdText / mdCode (src/report/escape.ts). */
const cell = (s: unknown) => mdText(s).replace(/\s+/g, ' ').trim();

const signed = (x: number | null | undefined, d = 3) => (x === null || x === undefined ? 'n/a' : `${x >= 0 ? '+' : ''}${x.toFixed(d)}`);

/** The failure buckets with a query, as the blind-test framework names them: "- rerank-budget miss (`rerank_budget_miss`): 2". */
export function bucketLines(report: Des058Report): string {
  return (
    Object.entries(report.failure_buckets)
      .filter(([, n]) => n > 0)
      .map(([b, n]) => `- ${cell(bucketLabel(b))} (${mdCode(b)}): ${n}`)
      .join('\n') || '- none'
  );
}

/**
 * A reranked column's stage line (report.rerank; '' without a reranker): the first stage's Success@budget (the ceiling
 * the reranker can reach), the reranker's gain on nDCG@10 and Success@3, its own latency p50/p95 and cost per query;
 * rows read from the score cache are said beside the latency and the cost (`cache: 13 of 13`), with the uncached
 * estimate at list price.
 */
export function rerankLine(report: Des058Report): string {
  const r = report.rerank;
  if (!r) return '';
  const cache = rerankCacheNote(r);
  const uncached = rerankUncachedNote(r);
  return (
    `Rerank stage${r.reranker ? ` ${mdCode(r.reranker)}` : ''}${r.budget !== null ? ` (budget ${r.budget})` : ''}, ${r.queries} queries: ` +
    `first-stage Success@budget ${pct(r.first_stage_recall_at_budget)} · gain nDCG@10 ${signed(r.rerank_gain_ndcg_at_10)}, Success@3 ${signed(r.rerank_gain_recall_at_3 === null ? null : r.rerank_gain_recall_at_3 * 100, 1)} pts` +
    ` · rerank latency p50 ${f(r.latency_ms.p50, 1)} ms, p95 ${f(r.latency_ms.p95, 1)} ms${cache ? ` (**${cache}**: a cache read, not the reranker's time)` : ''} (whole pipeline p95 ${f(report.latency_ms.p95, 1)} ms)` +
    ` · ${r.cost_per_query_usd === null ? 'cost n/a' : `$${r.cost_per_query_usd.toFixed(6)} per query`}${uncached ? ` (${cache}; ${uncached})` : ''}${r.requests_per_query !== null ? ` · ${r.requests_per_query} requests per query` : ''}`
  );
}

/** " (**3 of 12 queries errored**: left out of every figure)" or '' (the measured-only rule, said beside the figures). */
function erroredNote(report: Des058Report): string {
  return report.errors ? ` (**${report.errors} of ${report.total_queries} queries errored**: left out of every figure)` : '';
}

/**
 * The failure buckets of every column that has a ranked query (one column: its list; several: a heading each, with
 * a reranked column's stage line under its buckets).
 */
export function bucketsSection(reports: readonly Des058Report[]): string {
  if (reports.length <= 1) return [bucketLines(reports[0]!), ...(reports[0]?.rerank ? ['', rerankLine(reports[0])] : [])].join('\n');
  const out: string[] = [];
  for (const r of reports) {
    if (!Object.values(r.failure_buckets).some((n) => n > 0) && !r.rerank) continue;
    out.push(`**${cell(r.column)}**`, '', bucketLines(r), ...(r.rerank ? ['', rerankLine(r)] : []), '');
  }
  return out.join('\n').trim() || '- none';
}

/** "judged" or "judged, HEURISTIC" (similarity mode), for column headers. */
export function judgedTag(report: Des058Report): string {
  return report.judge_stats?.heuristic ? 'judged, HEURISTIC' : 'judged';
}

/** One line: the judged family beside the strict one, and the judge's bill; or the plain "judge: off". */
export function judgeSection(report: Des058Report): string {
  const j = report.judge_stats;
  if (!j && report.judge.startsWith('judge: FAILED')) return `**${cell(report.judge)}**: no judged metrics; strict metrics only.`;
  if (!j) return `${cell(report.judge)}: strict metrics only (results not matching an expected passage were not judged).`;
  const tag = judgedTag(report);
  return [
    `${j.heuristic ? '**HEURISTIC** (similarity thresholds, not a model judge) · ' : ''}${cell(report.judge)}`,
    '',
    `| metric | strict | ${tag} |`,
    '|---|---:|---:|',
    `| Success@3 (DES-058 Recall@3) | ${pct(report.overall_recall_at_3)} | ${pct(report.overall_judged_recall_at_3)} |`,
    `| MRR@10 | ${f(report.overall_mrr_at_10)} | ${f(report.overall_judged_mrr_at_10)} |`,
    `| nDCG@10 | ${f(report.metrics.ndcg_at_10)} | ${f(report.judged_metrics?.judged_ndcg_at_10)} |`,
    `| Success@10 | ${pct(report.metrics.recall_at_10)} | ${pct(report.judged_metrics?.judged_recall_at_10)} |`,
    '',
    // failed judgements are named as such, never counted as judged results
    `Judge: ${j.errors ? `**judge: FAILED on ${j.errors} of ${j.judged_results} results**` : `${j.judged_results} results judged`} (${j.high} HIGH, ${j.partial} PARTIAL, ${j.not_relevant} NOT_RELEVANT) over ${j.judged_queries} queries · ` +
      `calls ${j.calls} · cache hits ${j.cache_hits} · tokens ${j.input_tokens} in / ${j.output_tokens} out · estimated cost $${j.estimated_cost_usd.toFixed(4)} · ` +
      (j.errors ? `**judge errors ${j.errors}**` : 'judge errors 0'),
  ].join('\n');
}

/**
 * Judged@k and the `+ labels` figures beside the strict ones (docs/judgments.md): a table strict | + labels when the
 * rows were scored with a judgments file, Judged@10 / Judged@3, and, for a column whose Judged@10 is well below its
 * reference's, the warning that its strict figures are a lower bound with condensed nDCG@10 and bpref beside them.
 */
export function labelsSection(report: Des058Report): string {
  const j = report.share_judged;
  const l = report.labelled;
  const out: string[] = [];
  if (j && j.at_10 !== null)
    out.push(
      `**Judged@10 ${f(j.at_10, 2)}** · Judged@3 ${f(j.at_3, 2)} (ir_measures Judged@k: the share of the top k that has a label of any grade; over ${j.n} queries) · condensed nDCG@10 ${f(report.metrics.condensed_ndcg_at_10)} · bpref ${f(report.metrics.bpref)}`,
    );
  const g = report.judged_gap;
  if (g)
    out.push(
      '',
      `**⚠️ Judged@10 is ${g.gap_pts.toFixed(1)} points below ${mdCode(g.reference)} (${f(g.reference_at_10, 2)}): the strict figures of this column are a lower bound** (a result nobody labelled counts as a miss). Beside the strict nDCG@10 ${f(report.metrics.ndcg_at_10)}: condensed nDCG@10 ${f(report.metrics.condensed_ndcg_at_10)}, bpref ${f(report.metrics.bpref)}. Judge the gap: ${mdCode('rankgate judge pool RESULTS')}.`,
    );
  if (l) {
    const src = l.judgments ? `${mdCode(l.judgments.file)} (${l.judgments.labels} labels: ${l.judgments.sources.chair} chair, ${l.judgments.sources.bootstrap} bootstrap, ${l.judgments.sources.llm} llm)` : 'the labels the rows carry';
    out.push(
      '',
      `| measure | strict | + labels |`,
      '|---|---:|---:|',
      `| Success@3 (DES-058 Recall@3) | ${pct(report.overall_recall_at_3)} | ${pct(l.metrics.recall_at_3)} |`,
      `| MRR@10 | ${f(report.overall_mrr_at_10)} | ${f(l.metrics.mrr)} |`,
      `| nDCG@10 | ${f(report.metrics.ndcg_at_10)} | ${f(l.metrics.ndcg_at_10)} |`,
      `| Recall@10 | ${f(report.metrics.trec_recall_at_10)} | ${f(l.metrics.trec_recall_at_10)} |`,
      `| Success@10 | ${pct(report.metrics.recall_at_10)} | ${pct(l.metrics.recall_at_10)} |`,
      '',
      `+ labels: the golden set and ${src} over the same ${l.queries} queries; the golden set above every label, a label of grade 2 or 3 relevant; ${l.labels.applied} labels entered the figures, ${l.labels.unreviewed} of them not reviewed by a person. The floors are on the strict figures.`,
    );
  }
  return out.join('\n').trim() || '_No Judged@k: these results are from an older rankgate._';
}

export function categoryTable(report: Des058Report, delta?: BaselineDelta | null): string {
  const judged = report.judge_stats !== null && report.judge_stats !== undefined;
  const tag = judged ? judgedTag(report) : '';
  const shares = Object.values(report.categories).some((c) => c.share_judged_at_10 !== undefined);
  const lab = !!report.labelled;
  const lines = [
    `| category | queries | Success@3 | MRR@10 | nDCG@10 | routing accuracy |${judged ? ` Success@3 (${tag}) | MRR@10 (${tag}) |` : ''}${shares ? ' Judged@10 |' : ''}${lab ? ' Success@3 (+ labels) | nDCG@10 (+ labels) |' : ''}`,
    `|---|---:|---:|---:|---:|---:|${judged ? '---:|---:|' : ''}${shares ? '---:|' : ''}${lab ? '---:|---:|' : ''}`,
  ];
  for (const [cat, c] of Object.entries(report.categories)) {
    // the cells are over the measured queries (the errored ones counted beside them); with errored queries the
    // baseline's side of an arrow would be over other queries than the cell: no arrows then (the change section has them)
    const d = delta?.errored || delta?.unmeasured ? undefined : delta?.categories[cat];
    const jc =
      (judged ? ` ${c.judged_recall_at_3 === undefined ? '–' : pct(c.judged_recall_at_3)} | ${c.judged_mrr_at_10 === undefined ? '–' : f(c.judged_mrr_at_10)} |` : '') +
      (shares ? ` ${c.share_judged_at_10 === undefined ? '–' : f(c.share_judged_at_10, 2)} |` : '') +
      (lab ? ` ${c.labelled_recall_at_3 === undefined ? '–' : pct(c.labelled_recall_at_3)} | ${c.labelled_ndcg_at_10 === undefined ? '–' : f(c.labelled_ndcg_at_10)} |` : '');
    lines.push(
      `| ${cell(cat)} | ${c.count}${c.errors ? ` (${c.errors} errored)` : ''} | ${c.recall_at_3 === undefined ? '–' : pct(c.recall_at_3) + (d?.recall_at_3 ? arrow(d.recall_at_3[0], d.recall_at_3[1]) : '')} | ${
        c.mrr_at_10 === undefined ? '–' : f(c.mrr_at_10)
      } | ${c.ndcg_at_10 === undefined ? '–' : f(c.ndcg_at_10)} | ${
        c.routing_accuracy === undefined ? '–' : pct(c.routing_accuracy) + (d?.routing_accuracy ? arrow(d.routing_accuracy[0], d.routing_accuracy[1]) : '')
      } |${jc}`,
    );
  }
  return lines.join('\n');
}

/**
 * Why a verdict has no comparison with a baseline, from its notes ("regression check off: no baseline at X …",
 * "regression check not run: --update-baseline makes this run the baseline …"); null when it does not say.
 */
export function noDeltaReason(v: ColumnVerdict | undefined): string | null {
  if (!v) return null;
  return v.notes.find((n) => /^regression check (off|not run)/.test(n)) ?? (v.regression === null && !v.delta ? 'no regression check against a baseline for this column' : null);
}

/**
 * `change`: the corpus changed since the baseline; regressed and improved queries whose expected documents changed say
 * so. `none`: why there is no comparison (noDeltaReason), said instead of "this is the first run" when known.
 */
export function deltaSection(delta: BaselineDelta | null | undefined, change?: CorpusChange | null, none?: string | null): string {
  if (!delta) return none ? `_Nothing compared: ${mdText(none)}._` : '_No baseline: this is the first run (nothing to compare with)._';
  if (delta.unmeasured) return `Against the baseline of ${cell(delta.baseline_created)} (${mdCode(delta.baseline_column)}): nothing to compare: ${cell(delta.unmeasured)}.`;
  const e = delta.errored;
  // errored queries measured nothing: left out of every comparison below, and said as errors instead
  const errLine = e ? `**${e.count} of ${e.total} queries errored**: ${cell(e.reasons.join('; '))} (left out of the comparison: nothing was measured for them, so they are neither regressed nor improved).` : null;
  if (e && delta.overall_recall_at_3[1] === null && delta.overall_mrr_at_10[1] === null)
    return [`Against the baseline of ${cell(delta.baseline_created)} (${mdCode(delta.baseline_column)}): nothing to compare.`, '', errLine!, ...(change ? ['', corpusChangeSection(change)] : [])].join('\n');
  const out = [
    `Against the baseline of ${cell(delta.baseline_created)} (${mdCode(delta.baseline_column)})${e ? `, on the ${e.total - e.count} queries measured` : ''}: overall Success@3 ${pct(delta.overall_recall_at_3[0])} → ${pct(delta.overall_recall_at_3[1])}${arrow(...delta.overall_recall_at_3)}, MRR@10 ${f(delta.overall_mrr_at_10[0])} → ${f(delta.overall_mrr_at_10[1])}.`,
    ...(errLine ? ['', errLine] : []),
    '',
    `**${delta.regressed.length} regressed, ${delta.improved.length} improved**, ${delta.unchanged} unchanged` +
      (delta.added.length ? `, ${delta.added.length} new` : '') +
      (delta.removed.length ? `, ${delta.removed.length} no longer in the set` : '') +
      '.',
  ];
  const touched = new Map((change?.queries ?? []).map((q) => [q.id, q.documents]));
  const list = (title: string, xs: BaselineDelta['regressed']) => {
    if (!xs.length) return;
    out.push('', `${title}:`, '');
    for (const q of xs.slice(0, 25)) {
      const ch = Object.entries(q.changes)
        .map(([k, [a, b]]) => `${k} ${f(a, 2)} → ${f(b, 2)}`)
        .join(', ');
      const docs = touched.get(q.id);
      out.push(`- ${mdCode(q.id)} (${cell(q.category)}): ${ch}${docs ? ` · **expected document changed: ${docs.map((d) => mdCode(d)).join(', ')}**` : ''}`);
    }
    if (xs.length > 25) out.push(`- … and ${xs.length - 25} more`);
  };
  list('Regressed', delta.regressed);
  list('Improved', delta.improved);
  if (change) out.push('', corpusChangeSection(change));
  return out.join('\n');
}

/** The documents added, changed and removed since the baseline (the same corpus source, edited), LOUD. */
export function corpusChangeSection(c: CorpusChange): string {
  const head = `**⚠️ The corpus ${mdCode(c.corpus)} changed since the baseline**: the shared queries were compared per query, on the new content.`;
  if (!c.known) return `${head} Which documents changed is unknown: ${mdText(c.reason)}.`;
  const docs = (xs: string[]) => (xs.length ? xs.slice(0, 50).map((x) => mdCode(x)).join(', ') + (xs.length > 50 ? `, … and ${xs.length - 50} more` : '') : 'none');
  const out = [head, '', `- changed (${c.changed.length}): ${docs(c.changed)}`, `- added (${c.added.length}): ${docs(c.added)}`, `- removed (${c.removed.length}): ${docs(c.removed)}`];
  out.push(
    c.queries.length
      ? `- golden queries whose expected documents changed (${c.queries.length}): ${c.queries.slice(0, 50).map((q) => `${mdCode(q.id)} (${mdText(q.documents.join(', '))})`).join(', ')}`
      : '- no golden query expects a document that changed',
  );
  return out.join('\n');
}

export function gateSection(report: Des058Report): string {
  const lines = [`**Gate: ${report.gate_passed ? 'PASSED ✅' : 'FAILED ❌'}**`, ''];
  for (const c of report.gate) {
    lines.push(`- ${c.unmeasured ? (c.passed ? '➖' : '⚠️') : c.passed ? '✅' : '❌'} ${cell(c.scope)} ${c.metric} ${c.value === null ? 'n/a' : f(c.value, 4)} (floor ${c.min})${c.note ? ` — ${cell(c.note)}` : ''}`);
  }
  return lines.join('\n');
}

/** The verdict with its reasons, errored queries grouped by reason, and the regression check. */
export function verdictSection(v: ColumnVerdict): string {
  const word = v.code === 0 ? 'PASSED ✅' : v.code === 1 ? 'FAILED ❌' : 'ERROR ⚠️ (nothing trustworthy measured)';
  const lines = [`**Verdict: ${word}** (exit ${v.code}) · ${v.evaluated}${v.expected !== null ? ` of ${v.expected}` : ''} queries${v.evidence === 'sums' ? ' · from the column sums (no rows)' : ''}`, ''];
  // how much of the gated evidence no person reviewed (docs/judgments.md "Provisional evidence")
  const prov = v.provisional ?? provisionalText(v.report.provisional);
  if (prov) lines.push(`- ⚠️ **${cell(prov)}**`);
  for (const r of v.reasons) lines.push(`- ❌ ${cell(r)}`);
  for (const n of v.notes) lines.push(`- ℹ️ ${cell(n)}`);
  // a drop beyond max_drop the test cannot confirm: named, never read as "ok" (the exit code is the test's)
  for (const t of v.regression?.tests.filter((x) => x.unconfirmed) ?? []) lines.push(`- ⚠️ ${cell(`${t.scope} ${t.metric}: ${unconfirmedText(t)}`)}`);
  if (v.errors) {
    lines.push('', `**${v.errors.count} of ${v.errors.total} queries errored**:`, '');
    for (const l of errorLines(v.errors, 10)) lines.push(`- ${cell(l)}`);
  }
  if (v.regression) lines.push('', ...mdFence(regressionLines(v.regression)));
  return lines.join('\n');
}

export function shippingSection(v: ShippingVerdict): string {
  const lines = [`### Shipping criteria: ${mdCode(v.candidate)} vs ${mdCode(v.baseline)} (${v.queries} queries)`, ''];
  for (const c of v.criteria) lines.push(`- ${c.passed === null ? '➖' : c.passed ? '✅' : '❌'} ${c.name}: ${cell(c.detail)}`);
  const human = v.criteria.find((c) => c.name.startsWith('human blind review'));
  lines.push('', v.ship ? (human?.passed ? '**Ship: yes** (every criterion met, the human blind review included)' : '**Ship: yes** (all automatable criteria met; human review still required)') : '**Ship: no**');
  return lines.join('\n');
}

/** `others`: the reports of the other columns of the results (a sweep): their failure buckets are listed too. */
export function renderMarkdown(report: Des058Report, delta?: BaselineDelta | null, shipping?: ShippingVerdict[], verdict?: ColumnVerdict, others: readonly Des058Report[] = []): string {
  const out = [
    `# Search quality: ${cell(report.column)}`,
    '',
    `${cell(report.timestamp)} · language ${cell(report.language)} · ${report.total_queries} queries · ${cell(report.judge)}` + (report.errors ? ` · **${report.errors} errored**` : ''),
    '',
    `Overall **Success@3 ${pct(report.overall_recall_at_3)}** (DES-058 Recall@3) · MRR@10 ${f(report.overall_mrr_at_10)} · nDCG@10 ${f(report.metrics.ndcg_at_10)} · Success@10 ${pct(report.metrics.recall_at_10)} · Recall@10 ${f(report.metrics.trec_recall_at_10, 4)} · routing ${pct(report.routing.accuracy)} · latency p50 ${f(report.latency_ms.p50, 1)} ms, p95 ${f(report.latency_ms.p95, 1)} ms${report.errors ? ` (${measuredNote(report.measured_queries, report.errors)})` : ''}${erroredNote(report)}`,
    '',
    'Success@k: a relevant result in the top k (the share of queries); Recall@10: the share of the expected documents found in the top 10 (docs/metrics.md).',
    '',
    ...(verdict ? [verdictSection(verdict), ''] : []),
    gateSection(report),
    '',
    '## Judge: strict and judged metrics',
    '',
    judgeSection(report),
    '',
    '## Labels: Judged@k, strict and + labels',
    '',
    labelsSection(report),
    '',
    '## Categories',
    '',
    categoryTable(report, delta),
    '',
    '## Change against the baseline',
    '',
    deltaSection(delta, verdict?.corpusChange, noDeltaReason(verdict)),
    '',
    '## Failure buckets',
    '',
    bucketsSection([report, ...others]),
  ];
  if (report.failures.length) {
    out.push('', `## Failures (${report.failures.length})`, '', '| id | category | bucket | best rank | top result |', '|---|---|---|---:|---|');
    for (const x of report.failures.slice(0, 50)) {
      out.push(`| ${mdCode(x.id, { table: true })} | ${cell(x.category)} | ${cell(bucketLabel(x.bucket))} | ${x.best_match_rank ?? '–'} | ${cell((x.top_3_results[0] ?? '(none)').slice(0, 100))} |`);
    }
  }
  for (const s of shipping ?? []) out.push('', shippingSection(s));
  return out.join('\n') + '\n';
}

/** The PR comment: marker, headline, per-category table, regressions/improvements. */
export function renderComment(report: Des058Report, delta?: BaselineDelta | null, verdict?: ColumnVerdict): string {
  const title = verdict ? (verdict.code === 0 ? 'passed ✅' : verdict.code === 1 ? 'FAILED ❌' : 'ERROR ⚠️') : report.gate_passed ? 'passed ✅' : 'FAILED ❌';
  return [
    COMMENT_MARKER,
    `## Search quality gate: ${title}`,
    '',
    `Overall **Success@3 ${pct(report.overall_recall_at_3)}** (DES-058 Recall@3)${delta && !delta.errored && !delta.unmeasured ? arrow(...delta.overall_recall_at_3) : ''} · MRR@10 ${f(report.overall_mrr_at_10)}` +
      (report.judge_stats ? ` · ${judgedTag(report)} Success@3 ${pct(report.overall_judged_recall_at_3)}, MRR@10 ${f(report.overall_judged_mrr_at_10)}` : '') +
      (report.labelled ? ` · + labels Success@3 ${pct(report.labelled.metrics.recall_at_3)}, MRR@10 ${f(report.labelled.metrics.mrr)}` : '') +
      (report.share_judged?.at_10 !== null && report.share_judged?.at_10 !== undefined ? ` · Judged@10 ${f(report.share_judged.at_10, 2)}` : '') +
      ` · ${report.total_queries} queries${erroredNote(report)} · ${cell(report.judge)}`,
    '',
    ...(verdict ? [verdictSection(verdict), ''] : []),
    gateSection(report),
    '',
    ...(report.labelled || report.judged_gap ? [labelsSection(report), ''] : []),
    categoryTable(report, delta),
    '',
    mermaidCategoryChart(report, delta),
    '',
    deltaSection(delta, verdict?.corpusChange, noDeltaReason(verdict)),
    '',
    '### Failure buckets',
    '',
    bucketLines(report),
    ...(report.rerank ? ['', rerankLine(report)] : []),
    '',
  ].join('\n');
}
