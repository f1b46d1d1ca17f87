/**
 * One self-contained HTML file from ReportData: inline CSS, the data as JSON, and Apache ECharts (echarts 6,
 * Apache-2.0) inlined from node_modules, so the file opens offline and can be mailed or uploaded as a CI artifact.
 *
 * Why a chart library and not hand-written SVG: the report needs grouped bars with CI whiskers, heatmaps with a
 * colour scale, box plots and a forest plot, each with tooltips and legends that name the columns. ECharts has
 * all of them, is maintained by the Apache foundation, renders to SVG (crisp, searchable, printable) and needs no
 * build step; its minified bundle (~1.1 MB) is the cost. Hand-written SVG would be ~0 KB but mean writing and
 * testing axes, scales, legends, tooltips and layout ourselves for five chart kinds. (docs/view.md)
 *
 * Every chart section holds exactly one chart element (`.chart`); tables sit beside it.
 */
import type { ReportData } from './data.ts';
import { KEY_METRICS } from './data.ts';
import { BUCKETS, bucketLabel } from '../../results/types.ts';
import { metricName } from '../verdict-text.ts';
import { rerankCacheNote, rerankUncachedNote } from '../../results/summary.ts';

const esc = (s: unknown) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const f = (x: number | null | undefined, d = 3) => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d));

/** JSON safe inside <script>. */
function scriptJson(x: unknown): string {
  return JSON.stringify(x).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function overallTable(d: ReportData): string {
  const head = KEY_METRICS.map((m) => `<th>${esc(m.label)}</th>`).join('');
  const rows = d.columns
    .map(
      (c) =>
        `<tr><td class="label">${esc(c.label)}</td><td>${c.queries}${c.errors ? ` <span class="bad">(${c.errors} of ${c.queries} errored: left out)</span>` : ''}</td>` +
        KEY_METRICS.map((m) => {
          const e = c.overall[m.key];
          return `<td>${f(e.mean)} <span class="ci">[${f(e.lo, 2)}, ${f(e.hi, 2)}] n=${e.n}</span></td>`;
        }).join('') +
        '</tr>',
    )
    .join('');
  return scroll(`<table><thead><tr><th>column</th><th>queries</th>${head}</tr></thead><tbody>${rows}</tbody></table>`);
}

/** Failure buckets per column (the blind-test framework's names), then the rerank stage of reranked columns. */
function bucketsHtml(d: ReportData): string {
  const used = BUCKETS.filter((b) => d.columns.some((c) => c.buckets[b] > 0));
  const head = used.map((b) => `<th>${esc(bucketLabel(b))}</th>`).join('');
  const rows = d.columns.map((c) => `<tr><td class="label">${esc(c.label)}</td>${used.map((b) => `<td>${c.buckets[b]}</td>`).join('')}</tr>`).join('');
  const buckets = used.length ? scroll(`<table class="buckets"><thead><tr><th>column</th>${head}</tr></thead><tbody>${rows}</tbody></table>`) : '<p>No ranked queries.</p>';
  const rr = d.columns.filter((c) => c.rerank);
  const sg = (x: number | null) => (x === null ? '–' : `${x >= 0 ? '+' : ''}${x.toFixed(3)}`);
  const rerank = rr.length
    ? `<h3>Rerank stage</h3><p>First-stage Success@budget: a relevant result among the candidates the reranker saw (the ceiling it can reach). Gain: the final ranking's measure minus the first stage's, per query. Latency: the rerank stage's own; the whole pipeline's is above. Rows the score cache answered are counted (<i>cache: N of M</i>): their latency is a cache read and their cost nothing; the uncached estimate is what they would cost at list price.</p>` +
      scroll(
        `<table class="rerank"><thead><tr><th>column</th><th>reranker</th><th>budget</th><th>queries</th><th>first-stage Success@budget</th><th>gain nDCG@10</th><th>gain Success@3</th><th>rerank p50 ms</th><th>rerank p95 ms</th><th>pipeline p95 ms</th><th>cost per query</th><th>from the cache</th></tr></thead><tbody>${rr
          .map((c) => {
            const r = c.rerank!;
            const cache = rerankCacheNote(r);
            const uncached = rerankUncachedNote(r);
            return `<tr><td class="label">${esc(c.label)}</td><td class="label">${esc(r.reranker ?? '–')}</td><td>${r.budget ?? 'mixed'}</td><td>${r.queries}</td><td>${f(r.first_stage_recall_at_budget)}</td><td>${sg(r.rerank_gain_ndcg_at_10)}</td><td>${sg(r.rerank_gain_recall_at_3)}</td><td>${f(r.latency_ms.p50, 1)}</td><td>${f(r.latency_ms.p95, 1)}${cache ? ` <span class="warn">(${esc(cache)})</span>` : ''}</td><td>${f(c.latency?.p95, 1)}</td><td>${r.cost_per_query_usd === null ? '–' : `$${r.cost_per_query_usd.toFixed(6)}`}${uncached ? ` <span class="warn">(${esc(uncached)})</span>` : ''}</td><td>${cache ? esc(cache) : 'none'}</td></tr>`;
          })
          .join('')}</tbody></table>`,
      )
    : '';
  return `<section id="buckets"><h2>Failure buckets per column</h2>${buckets}${rerank}</section>`;
}

function significanceTable(d: ReportData): string {
  if (!d.significance.length) return '<p>One column and no baseline: nothing to compare.</p>';
  const rows = d.significance
    .flatMap((m) =>
      m.comparisons.map((c, i) => {
        const cls = c.p_holm < 0.05 ? (c.diff > 0 ? 'good' : 'bad') : '';
        return `<tr class="${cls}"><td class="label">${i === 0 ? `<b>${esc(m.label)}</b> <span class="ci">${m.queries} shared queries</span>` : ''}</td><td class="label">${esc(c.run)}</td><td>${f(c.mean)}</td><td>${c.diff >= 0 ? '+' : ''}${f(c.diff)}</td><td>[${f(c.ci_low)}, ${f(c.ci_high)}]</td><td>${f(c.p_randomization, 4)}</td><td>${f(c.p_holm, 4)}</td><td>${c.wins}/${c.ties}/${c.losses}</td></tr>`;
      }),
    )
    .join('');
  return scroll(`<table><thead><tr><th>metric</th><th class="label">column</th><th>mean</th><th>diff</th><th>95% CI of diff</th><th>p (randomization)</th><th>p (Holm)</th><th>W/T/L</th></tr></thead><tbody>${rows}</tbody></table>`);
}

/**
 * A table in its own box: on a phone (<= 600 px) its rows stack (every cell on its own line, labelled with its
 * column's header via data-label), so nothing scrolls sideways, neither the page nor the table.
 */
const scroll = (table: string) => `<div class="scroll">${stackable(table)}</div>`;

/** Class "stack" on the table and data-label="<its header>" on every body cell (the narrow layout's labels). */
export function stackable(table: string): string {
  const head = /<thead>([\s\S]*?)<\/thead>/.exec(table)?.[1] ?? '';
  const labels = [...head.matchAll(/<th[^>]*>([\s\S]*?)<\/th>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').replace(/"/g, '&quot;').trim());
  const body = table.replace(/<tbody>([\s\S]*?)<\/tbody>/, (_m, rows: string) =>
    `<tbody>${rows.replace(/<tr([^>]*)>([\s\S]*?)<\/tr>/g, (_r, attrs: string, cells: string) => {
      let i = 0;
      return `<tr${attrs}>${cells.replace(/<td(?=[\s>])/g, () => `<td data-label="${labels[i++] ?? ''}"`)}</tr>`;
    })}</tbody>`,
  );
  return body.replace(/^<table(?: class="([^"]*)")?/, (_m, cls?: string) => `<table class="stack${cls ? ` ${cls}` : ''}"`);
}

const STATUS_CLASS: Record<string, string> = { pass: 'good', fail: 'bad', 'not measured': 'bad', 'not checked': 'warn' };

/** The gate's verdict, first thing in the report (decided by src/gate/verdict.ts; rendered here only). */
function verdictHtml(d: ReportData): string {
  const g = d.gate;
  if (!g) return '';
  const floors = g.floors.length
    ? scroll(
        `<table class="floors"><thead><tr><th>floor</th><th>measured</th><th>result</th></tr></thead><tbody>${g.floors
          .map(
            (x) =>
              `<tr><td class="label">${esc(x.scope)} ${esc(metricName(x.metric))} &ge; ${x.min}</td><td>${f(x.value, 4)}</td><td class="${STATUS_CLASS[x.status]}">${esc(x.status)}</td></tr>`,
          )
          .join('')}</tbody></table>`,
      )
    : '<p>No floor configured.</p>';
  const reg = g.regression;
  const regHtml = `<h3>Regression check: ${reg.state === 'on' ? (reg.failed ? `<span class="bad">${reg.failed} significant drop(s)</span>` : reg.unconfirmed ? `<span class="warn">${reg.unconfirmed} unconfirmed drop(s) beyond max_drop</span>` : '<span class="good">no significant drop</span>') : reg.state === 'off' ? '<span class="warn">off</span>' : 'not configured'}${
    reg.baseline ? ` <span class="ci">baseline ${esc(reg.baseline)}</span>` : ''
  }</h3><pre class="lines">${reg.lines.map(esc).join('\n')}</pre>`;
  // the floors and the regression check have their own tables: the other reasons (exit 2 above all) stand here
  const other = g.reasons.filter((r) => !r.startsWith('floor: ') && !r.startsWith('regression: '));
  const reasons = other.length ? `<ul class="reasons">${other.map((r) => `<li>${esc(r)}</li>`).join('')}</ul>` : '';
  const notesShown = g.notes.filter((n) => !reg.lines.includes(n));
  const notes = notesShown.length ? `<details><summary>${notesShown.length} note(s)</summary><ul>${notesShown.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></details>` : '';
  const others =
    g.columns.length > 1
      ? `<details><summary>every column against the same floors: ${g.columns.filter((c) => c.code === 0).length} pass, ${g.columns.filter((c) => c.code === 1).length} fail, ${g.columns.filter((c) => c.code === 2).length} error (the eval's exit code: ${g.combined})</summary>${scroll(
          `<table><thead><tr><th>column</th><th>verdict</th><th>first reason</th></tr></thead><tbody>${g.columns
            .map((c) => `<tr><td class="label">${esc(c.label)}</td><td class="${c.code === 0 ? 'good' : 'bad'}">${c.word} (exit ${c.code})</td><td class="label">${esc(c.reason ?? '')}</td></tr>`)
            .join('')}</tbody></table>`,
        )}</details>`
      : '';
  return `<section id="verdict" class="verdict v-${g.word.toLowerCase()}" data-verdict="${g.word}" data-exit-code="${g.code}">
<h2><span class="badge">${g.word}</span> rankgate gate, exit ${g.code}</h2>
<p class="ci">column '${esc(g.column)}' · ${g.evaluated}${g.expected !== null ? ` of ${g.expected}` : ''} queries · floors: ${esc(g.floorsSource)}</p>
<p class="conclusion">${esc(g.conclusion)}</p>
${g.provisional ? `<p class="warn provisional"><b>${esc(g.provisional)}</b></p>` : ''}${reasons}${floors}${regHtml}${notes}${others}</section>`;
}

/**
 * Judged@k per column (ir_measures: the share of the top k with a label), the strict nDCG@10 beside condensed nDCG@10 and
 * bpref, the `+ labels` figures beside the strict ones, and Judged@10 per category; a column whose Judged@10 is well
 * below the reference's is marked a lower bound.
 */
function labelsHtml(d: ReportData): string {
  const cols = d.columns.filter((c) => c.labels?.judged && c.labels.judged.at_10 !== null);
  if (!cols.length) return '';
  const lab = cols.some((c) => c.labels!.labelled);
  const rows = cols
    .map((c) => {
      const l = c.labels!;
      const g = l.gap;
      const x = l.labelled;
      return (
        `<tr${g ? ' class="bad"' : ''}><td class="label">${esc(c.label)}${g ? ` <span class="warn">LOWER BOUND: ${g.gap_pts.toFixed(1)} pts below '${esc(g.reference)}'</span>` : ''}</td>` +
        `<td>${f(l.judged!.at_10, 2)}</td><td>${f(l.judged!.at_3, 2)}</td><td>${f(l.ndcg_at_10)}</td><td>${f(l.condensed_ndcg_at_10)}</td><td>${f(l.bpref)}</td>` +
        (lab
          ? x
            ? `<td>${f(l.strict.recall_at_3)} → ${f(x.metrics.recall_at_3)}</td><td>${f(l.strict.mrr)} → ${f(x.metrics.mrr)}</td><td>${f(l.ndcg_at_10)} → ${f(x.metrics.ndcg_at_10)}</td><td>${f(l.strict.trec_recall_at_10)} → ${f(x.metrics.trec_recall_at_10)}</td><td>${x.labels.applied} (${x.labels.unreviewed} unreviewed)</td>`
            : '<td>–</td><td>–</td><td>–</td><td>–</td><td>–</td>'
          : '') +
        '</tr>'
      );
    })
    .join('');
  const labHead = lab ? '<th>Success@3 strict → + labels</th><th>MRR@10 strict → + labels</th><th>nDCG@10 strict → + labels</th><th>Recall@10 strict → + labels</th><th>labels applied</th>' : '';
  const cats = d.categories.filter((k) => cols.some((c) => typeof c.labels!.categories[k] === 'number'));
  const catTable = cats.length
    ? scroll(
        `<table><thead><tr><th>Judged@10</th>${cats.map((k) => `<th>${esc(k)}</th>`).join('')}</tr></thead><tbody>${cols
          .map((c) => `<tr><td class="label">${esc(c.label)}</td>${cats.map((k) => `<td>${f(c.labels!.categories[k], 2)}</td>`).join('')}</tr>`)
          .join('')}</tbody></table>`,
      )
    : '';
  const src = cols.map((c) => c.labels!.labelled?.judgments).find((j) => j);
  return `<section id="labels"><h2>Labels: Judged@k, condensed measures, strict and + labels</h2>
<p>Judged@k (ir_measures): the share of a query's top k results that has a label of any grade (a golden reference, a graded entry, a label of the judgments file), averaged over the queries that returned results. A result nobody labelled counts as a miss in the strict figures: where Judged@10 is low, they are a lower bound, and condensed nDCG@10 (unlabelled results removed first) and bpref say how the labelled part ranks. ${lab ? `+ labels: the golden set and the judgments file${src ? ` ${esc(src.file)} (${src.labels} labels)` : ''}, the golden set above every label, grade 2 or 3 relevant. The gate's floors are on the strict figures.` : 'No judgments file was read: the strict figures only.'}</p>
${scroll(`<table><thead><tr><th>column</th><th>Judged@10</th><th>Judged@3</th><th>nDCG@10 (strict)</th><th>condensed nDCG@10</th><th>bpref</th>${labHead}</tr></thead><tbody>${rows}</tbody></table>`)}${catTable}</section>`;
}

function changesHtml(d: ReportData): string {
  if (!d.changes.length) return '<p>Nothing to compare against.</p>';
  const list = (qs: ReportData['changes'][number]['regressed'], kind: string) =>
    qs.length
      ? scroll(`<table class="changes"><thead><tr><th>query</th><th>nDCG@10</th><th>miss: expected, where it ranked</th><th>top results: ${esc(d.reference)}</th><th>top results: this column</th></tr></thead><tbody>${qs
          .map(
            (q) =>
              `<tr><td><b>${esc(q.id)}</b> <span class="cat">${esc(q.category)}</span><br>${esc(q.query)}</td><td class="${kind === 'regressed' ? 'bad' : 'good'}">${f(q.before)} → ${f(q.after)}</td><td class="miss">${esc(q.miss)}</td><td>${q.beforeTop.length ? q.beforeTop.map(esc).join('<br>') : '<span class="ci">(not kept: the baseline stores per-query values only)</span>'}</td><td>${q.afterTop.map(esc).join('<br>')}</td></tr>`,
          )
          .join('')}</tbody></table>`)
      : `<p>No ${kind} queries.</p>`;
  return d.changes
    .map(
      (c) =>
        `<h3>${esc(c.column)} vs ${esc(d.reference)}</h3><h4>regressed (${c.regressed.length})</h4>${list(c.regressed, 'regressed')}<h4>improved (${c.improved.length})</h4>${list(c.improved, 'improved')}`,
    )
    .join('');
}

function selectionHtml(d: ReportData): string {
  const s = d.selection;
  if (!s) return '';
  const top = s.wins
    .slice(0, 5)
    .map((w) => `<li>${esc(w.name)}: chosen in ${(100 * w.share).toFixed(0)}% of the folds</li>`)
    .join('');
  return `<section id="selection"><h2>Picking the best column, honestly</h2>
<p>Choosing the best of ${s.columns} columns on the same ${s.queries} queries flatters the winner. Cross-validated
(${s.folds}-fold × ${s.repeats} seeded repeats, seed ${s.seed}): the column with the best nDCG@10 on ${s.folds - 1} folds is
scored on the held-out fold.</p>
<p class="big">held-out nDCG@10 of the chosen column: <b>${f(s.heldOutMean, 4)}</b> (sd ${f(s.heldOutSd, 4)}) ·
in-sample best ${esc(s.inSampleBest)} ${f(s.inSampleMean, 4)} (optimism ${s.optimism >= 0 ? '+' : ''}${f(s.optimism, 4)}) ·
first column ${f(s.baselineMean, 4)} · the in-sample best wins ${(100 * s.stability).toFixed(0)}% of the folds</p><ul>${top}</ul></section>`;
}

export function renderHtml(d: ReportData, echartsSource: string): string {
  const sweep = d.sweep.length
    ? `<section class="chart-section" id="sweep"><h2>Sweep: nDCG@10 by RRF k × weights</h2><p>One panel per chunk size × embedder; hybrid columns only.</p><div class="chart" id="chart-sweep"></div></section>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(d.title)}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1400px;padding:16px 24px;color:#1f2328}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #d0d7de;padding-bottom:4px}h3{font-size:15px;margin:18px 0 4px}h4{margin:10px 0 4px;font-size:13px}
.meta{color:#57606a}.chart{width:100%;height:380px}table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:right;vertical-align:top}
td.label,th.label,th:first-child{text-align:left}.changes td{text-align:left;max-width:420px}.ci{color:#6e7781;font-size:11px}.bad{color:#cf222e}.good{color:#1a7f37}tr.bad td,tr.good td{font-weight:600}
.cat{color:#6e7781;font-size:11px}.big{font-size:15px}.note{background:#f6f8fa;border:1px solid #d0d7de;padding:8px 12px;border-radius:6px}
.warn{color:#9a6700}.scroll{overflow-x:auto;max-width:100%;margin:8px 0}.scroll table{margin:0}p,li,pre,summary,h2,h3{overflow-wrap:anywhere}th,td:not(.label){white-space:nowrap}
.verdict{border:2px solid #d0d7de;border-radius:8px;padding:4px 16px 12px;margin:12px 0 20px}.verdict h2{border:0;margin:10px 0 6px}
.v-pass{border-color:#1a7f37;background:#f0fff4}.v-fail{border-color:#cf222e;background:#fff5f5}.v-error{border-color:#9a6700;background:#fff8e6}
.badge{display:inline-block;padding:1px 10px;border-radius:6px;color:#fff;font-weight:700;letter-spacing:.04em}.v-pass .badge{background:#1a7f37}.v-fail .badge{background:#cf222e}.v-error .badge{background:#9a6700}
.conclusion{font-size:15px;margin:6px 0 10px}.reasons{margin:6px 0;padding-left:20px}.reasons li{color:#cf222e}
pre.lines{white-space:pre-wrap;font-size:12px;margin:4px 0;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:6px 8px}
table.floors td.good,table.floors td.bad,table.floors td.warn{font-weight:600}details{margin:6px 0}summary{cursor:pointer}
@media (max-width:600px){body{padding:10px 12px}h1{font-size:19px}.verdict{padding:2px 10px 10px}
.scroll{overflow-x:visible}table.stack{width:100%}table.stack thead{display:none}table.stack tr{display:block;border:1px solid #d0d7de;border-radius:6px;margin:6px 0;padding:2px 0}
table.stack td{display:block;border:0;text-align:left;white-space:normal;overflow-wrap:anywhere;max-width:none;padding:2px 8px}table.stack td[data-label]:not([data-label=""])::before{content:attr(data-label) ": ";color:#57606a;font-weight:600}}
</style></head><body>
<h1>${esc(d.title)}</h1>
${verdictHtml(d)}
<p class="meta">results of ${esc(d.generated)} · ${d.columns.length} column(s) · reference: <b>${esc(d.reference)}</b>${d.baselineFile ? ` (baseline file ${esc(d.baselineFile)})` : ' (the first column)'}</p>
<p class="note"><b>Query success rate</b> is what promptfoo's view calls "% passing": the share of queries that met their golden expectation
(a relevant reference in the top 3, and the stated route where the golden entry states one). Success@3 (DES-058's "Recall@3": a relevant
reference in the top 3), MRR@10 and nDCG@10 are means over queries with a relevant reference; routing accuracy over queries whose golden entry
states a route. Every figure is over the measured queries: an errored query is counted beside them, never as a miss or a latency.
Whiskers: 95% bootstrap CI over queries.</p>
<section class="chart-section" id="overall"><h2>Overall, per column</h2><div class="chart" id="chart-overall"></div>${overallTable(d)}</section>
<section class="chart-section" id="categories"><h2>Success@3 per category</h2><div class="chart" id="chart-categories"></div></section>
${sweep}
<section class="chart-section" id="latency"><h2>Latency per column (ms)</h2><p>Box: quartiles; whiskers: min and max; dot: p95. The whole pipeline per measured query (a reranker's stage included; an errored query's wait is not a latency).</p><div class="chart" id="chart-latency"></div></section>
${bucketsHtml(d)}
${labelsHtml(d)}
<section class="chart-section" id="significance"><h2>Significance against ${esc(d.reference)}: ${d.significance.length ? d.significance.map((m) => esc(m.label)).join(', ') : 'the gated metrics'}</h2><p>The difference of each gated metric per column with its 95% bootstrap CI (one line per column, one colour per metric), paired over the shared queries; p from a paired randomization test, Holm-adjusted across the ${d.significance[0]?.comparisons.length ?? 0} comparison(s) of each metric; bold = p(Holm) &lt; 0.05.</p><div class="chart" id="chart-significance"></div>${significanceTable(d)}</section>
${selectionHtml(d)}
<section id="changes"><h2>Regressed and improved queries</h2>${changesHtml(d)}</section>
<script>${echartsSource}</script>
<script>
const D = ${scriptJson(d)};
${CLIENT_JS}
</script>
</body></html>
`;
}

/** Browser code: builds the charts from D (runs in the report, offline). */
const CLIENT_JS = String.raw`
(function () {
  // No animation: a static report (and a screenshot right after load shows the final bars).
  const init = (id, h) => { const el = document.getElementById(id); if (!el) return null; if (h) el.style.height = h + 'px'; const c = echarts.init(el, null, { renderer: 'svg' }); c.setOption({ animation: false }); return c; };
  const labels = D.columns.map((c) => c.label);
  // A phone (390 px): narrower label gutters, one sweep panel per row, rotated category labels.
  const narrow = document.documentElement.clientWidth < 600;
  const LEFT = narrow ? 100 : 260;
  const MAXLABEL = narrow ? 14 : 34;
  const short = (s) => (s.length > MAXLABEL ? s.slice(0, MAXLABEL - 2) + '…' : s);
  // labels of a category axis of columns: cut on a wide screen, wrapped in the narrow gutter of a phone
  const colLabels = narrow ? { width: LEFT - 8, overflow: 'break', fontSize: 10, lineHeight: 11 } : { formatter: short };
  const ROW = narrow ? 40 : 22;
  const whisker = (seriesIndex, count, getter) => ({
    type: 'custom', name: 'CI', silent: true, z: 10,
    renderItem: (params, api) => {
      const x = api.value(0), lo = api.value(1), hi = api.value(2);
      if (lo === null || hi === null || Number.isNaN(lo)) return null;
      const bw = api.size([1, 0])[0] * 0.8 / count;
      const cx = api.coord([x, 0])[0] - api.size([1, 0])[0] * 0.4 + bw * (seriesIndex + 0.5);
      const y1 = api.coord([x, lo])[1], y2 = api.coord([x, hi])[1], w = Math.min(8, bw / 3);
      const st = { stroke: '#24292f', lineWidth: 1.2 };
      return { type: 'group', children: [
        { type: 'line', shape: { x1: cx, y1, x2: cx, y2 }, style: st },
        { type: 'line', shape: { x1: cx - w, y1, x2: cx + w, y2: y1 }, style: st },
        { type: 'line', shape: { x1: cx - w, y1: y2, x2: cx + w, y2 }, style: st }] };
    },
    data: getter, encode: { x: 0, y: [1, 2] },
  });
  // Overall: metrics on the x axis, one bar per column, CI whiskers.
  const metrics = [['success', 'query success'], ['recall_at_3', 'Success@3'], ['mrr', 'MRR@10'], ['ndcg_at_10', 'nDCG@10'], ['routing', 'routing acc.']];
  const many = D.columns.length > 8;
  const ov = init('chart-overall', many ? Math.min(2400, 120 + D.columns.length * ROW) : 380);
  if (ov) {
    if (!many) {
      const series = [];
      D.columns.forEach((c, i) => {
        series.push({ type: 'bar', name: c.label, data: metrics.map(([k]) => c.overall[k].mean), barGap: '0%' });
      });
      D.columns.forEach((c, i) => series.push(whisker(i, D.columns.length, metrics.map(([k], x) => [x, c.overall[k].lo, c.overall[k].hi]))));
      ov.setOption({ tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } }, legend: { data: labels, type: 'scroll', top: 0 }, grid: { left: 40, right: 10, top: 50, bottom: narrow ? 60 : 30 },
        xAxis: { type: 'category', data: metrics.map((m) => m[1]), axisLabel: { interval: 0, rotate: narrow ? 35 : 0 } }, yAxis: { type: 'value', min: 0, max: 1 }, series });
    } else {
      // Many columns (a sweep): one row per column, the four quality metrics side by side.
      const keys = metrics.slice(1, 4);
      const series = keys.map(([k, name]) => ({ type: 'bar', name, data: D.columns.map((c) => c.overall[k].mean) }));
      ov.setOption({ tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } }, legend: { data: keys.map((k) => k[1]) }, grid: { left: LEFT, right: 20, top: 40, bottom: 30 },
        yAxis: { type: 'category', data: labels, inverse: true, axisLabel: colLabels }, xAxis: { type: 'value', min: 0, max: 1 }, series });
    }
  }
  // Per category: categories on x, one bar per column (Success@3), CI whiskers; at most 8 columns (the first ones).
  const cats = D.categories;
  const cc = D.columns.slice(0, 8);
  const cat = init('chart-categories');
  if (cat) {
    const series = cc.map((c) => ({ type: 'bar', name: c.label, barGap: '0%', data: cats.map((k) => (c.categories[k] ? c.categories[k].recall_at_3.mean : null)) }));
    cc.forEach((c, i) => series.push(whisker(i, cc.length, cats.map((k, x) => [x, c.categories[k] ? c.categories[k].recall_at_3.lo : null, c.categories[k] ? c.categories[k].recall_at_3.hi : null]))));
    cat.setOption({ tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } }, legend: { data: cc.map((c) => c.label), type: 'scroll', top: 0 },
      grid: { left: 40, right: 10, top: 50, bottom: narrow ? 90 : 40 }, xAxis: { type: 'category', data: cats, axisLabel: { interval: 0, rotate: narrow ? 45 : 0 } }, yAxis: { type: 'value', min: 0, max: 1 }, series });
  }
  // Sweep: one heatmap panel per chunk size x embedder, 3 per row (1 on a phone).
  const perRow = narrow ? 1 : 3;
  const sw = init('chart-sweep', Math.max(1, Math.ceil(D.sweep.length / perRow)) * 300 + 80);
  if (sw) {
    const grid = [], xAxis = [], yAxis = [], series = [], title = [];
    const all = D.sweep.flatMap((p) => p.ndcg.map((v) => v[2]));
    D.sweep.forEach((p, i) => {
      const col = i % perRow, row = Math.floor(i / perRow);
      const left = narrow ? 100 : 8 + col * 32 + '%', top = 40 + row * 300;
      title.push({ text: p.title, left: narrow ? 10 : 8 + col * 32 + 12 + '%', top: top - 30, textStyle: { fontSize: 13 } });
      grid.push(narrow ? { left, right: 10, top, height: 220, containLabel: false } : { left, width: '26%', top, height: 220, containLabel: false });
      xAxis.push({ type: 'category', gridIndex: i, data: p.rrfK.map((k) => 'k ' + k), name: 'RRF k', nameLocation: 'middle', nameGap: 24 });
      yAxis.push({ type: 'category', gridIndex: i, data: p.weights, axisLabel: { fontSize: 10 } });
      series.push({ type: 'heatmap', xAxisIndex: i, yAxisIndex: i, data: p.ndcg, label: { show: true, formatter: (v) => v.value[2].toFixed(3) }, name: p.title });
    });
    sw.setOption({ title, tooltip: { formatter: (x) => x.seriesName + ': nDCG@10 ' + x.value[2].toFixed(4) }, grid, xAxis, yAxis, series,
      visualMap: { min: Math.min(...all), max: Math.max(...all), precision: 3, calculable: true, orient: 'horizontal', left: 'center', bottom: 0, itemWidth: 12, text: ['nDCG@10 high', 'low'] } });
  }
  // Latency: box plot per column, p95 as a scatter dot.
  const lc = D.columns.filter((c) => c.latency);
  const lat = init('chart-latency', Math.max(320, 80 + lc.length * ROW));
  if (lat) {
    lat.setOption({ tooltip: { trigger: 'item' }, grid: { left: LEFT, right: 30, top: 20, bottom: 40 },
      yAxis: { type: 'category', data: lc.map((c) => c.label), inverse: true, axisLabel: colLabels }, xAxis: { type: 'value', name: 'ms', nameLocation: 'middle', nameGap: 26 },
      series: [
        { type: 'boxplot', name: 'latency', data: lc.map((c) => [c.latency.min, c.latency.q1, c.latency.median, c.latency.q3, c.latency.max]) },
        { type: 'scatter', name: 'p95', symbolSize: 7, data: lc.map((c, i) => [c.latency.p95, i]) }] });
  }
  // Significance: a forest plot of every gated metric's difference per column with its 95% CI; one colour per
  // metric, the metrics side by side within a column's row; a filled dot = p(Holm) < 0.05.
  const sg = D.significance;
  const runs = sg.length ? sg[0].comparisons.map((c) => c.run) : [];
  const sig = init('chart-significance', sg.length ? Math.max(260, 90 + runs.length * 20 * sg.length) : 120);
  if (sig && sg.length) {
    const colours = ['#0969da', '#8250df', '#bf3989', '#9a6700'];
    const series = sg.map((m, j) => ({
      type: 'custom', name: m.label, itemStyle: { color: colours[j % colours.length] },
      renderItem: (params, api) => {
        const band = api.size([0, 1])[1];
        const y = api.coord([0, api.value(2)])[1] + (j - (sg.length - 1) / 2) * (band / (sg.length + 1));
        const a = api.coord([api.value(0), 0])[0], b = api.coord([api.value(1), 0])[0], x = api.coord([api.value(3), 0])[0];
        const colour = colours[j % colours.length];
        return { type: 'group', children: [
          { type: 'line', shape: { x1: a, y1: y, x2: b, y2: y }, style: { stroke: colour, lineWidth: 2 } },
          { type: 'circle', shape: { cx: x, cy: y, r: 4.5 }, style: { fill: api.value(4) < 0.05 ? colour : '#fff', stroke: colour, lineWidth: 2 } }] };
      },
      encode: { x: [0, 1, 3], y: 2 },
      data: m.comparisons.map((c, i) => [c.ci_low, c.ci_high, runs.indexOf(c.run) >= 0 ? runs.indexOf(c.run) : i, c.diff, c.p_holm, c.run]),
    }));
    series.push({ type: 'line', name: 'zero', silent: true, data: [], markLine: { silent: true, symbol: 'none', data: [{ xAxis: 0 }], lineStyle: { color: '#24292f', type: 'dashed' } } });
    sig.setOption({
      tooltip: { trigger: 'item', formatter: (x) => { const v = x.value; return v ? x.seriesName + ' · ' + v[5] + '<br>diff ' + v[3].toFixed(4) + ' [' + v[0].toFixed(4) + ', ' + v[1].toFixed(4) + ']<br>p(Holm) ' + v[4].toFixed(4) : ''; } },
      legend: { data: sg.map((m) => m.label), top: 0 },
      grid: { left: LEFT, right: 20, top: narrow ? 56 : 36, bottom: 40 }, yAxis: { type: 'category', data: runs, inverse: true, axisLabel: colLabels },
      xAxis: { type: 'value', name: 'difference against the reference', nameLocation: 'middle', nameGap: 26 },
      series });
  }
  window.__rankgateCharts = document.querySelectorAll('.chart svg').length;
  // a state tests (and people's scripts) can wait on instead of a fixed time
  document.documentElement.dataset.chartsDrawn = String(window.__rankgateCharts);
  window.addEventListener('resize', () => document.querySelectorAll('.chart').forEach((el) => { const c = echarts.getInstanceByDom(el); if (c) c.resize(); }));
})();
`;
