/**
 * The trend page (`rankgate history --html OUT`, `rankgate report --history --html OUT`; docs/history.md "The page"):
 * one self-contained HTML file, no network (the Content Security Policy of the review pages, ECharts inlined as the
 * report inlines it: its smaller common build). On top the drift finding; then one chart per gated metric with a
 * line for overall (bold) and one per category over time, a marker where the corpus, the golden set, the judge or the
 * provider settings changed (hover says what changed), the provisional share and the review backlog on a second axis
 * when the points record them; then the newest points as a table and what could not be read. Readable at 390 px.
 *
 * The numbers travel compactly: dates as seconds from the one before, each line's values in ten-thousandths as the
 * difference from its previous value, so 10,000 points of 16 lines stay well under 2 MB with the chart library.
 * Renderings only: the series and the drift are src/history.
 */
import { redactText } from '../../util/redact.ts';
import { writeFileAtomic } from '../../util/atomic.ts';
import { driftLines, metricLabel, pointName, pointValue, type DriftReport } from '../../history/drift.ts';
import { OVERALL } from '../../history/line.ts';
import { pointChanges, type Series } from '../../history/series.ts';
import { CSP, esc, scriptJson } from './page-kit.ts';
import { echartsSource } from './index.ts';
import { stackable } from './render.ts';

export interface TrendData {
  title: string;
  generated: string;
  read: string;
  headline: string | null;
  failed: boolean;
  drift: string[];
  notes: string[];
  /** Seconds since 1970 of the first point, then each point's difference from the one before. */
  t: number[];
  /** Each point's name (commit or run) and kind ('b' baseline commit, 'r' run), one character each. */
  label: string[];
  kind: string;
  charts: { metric: string; title: string; series: { name: string; scope: string; v: (number | null)[] }[] }[];
  /** Point index -> what changed there. */
  markers: [number, string][];
  provisional: (number | null)[] | null;
  backlog: (number | null)[] | null;
  /** The drift's span on the chart of its metric: [metric, from point, to point]. */
  span: [string, number, number] | null;
}

/** A line's values as ten-thousandths, each the difference from the line's previous value (null: no value there). */
export function deltaCode(vals: readonly (number | null)[], scale = 1e4): (number | null)[] {
  let prev = 0;
  return vals.map((v) => {
    if (v === null) return null;
    const q = Math.round(v * scale);
    const d = q - prev;
    prev = q;
    return d;
  });
}

export function trendData(s: Series, d: DriftReport, opts: { metrics: readonly string[]; title?: string }): TrendData {
  const pts = s.points;
  const t: number[] = [];
  let prev = 0;
  for (const p of pts) {
    const sec = Math.round(Date.parse(p.date) / 1000);
    t.push(sec - prev);
    prev = sec;
  }
  const newest = pts[pts.length - 1];
  const charts = opts.metrics.map((metric) => {
    const scopes = [OVERALL, ...[...new Set(pts.flatMap((p) => p.summary.scopes.slice(1)))].sort()];
    const series = scopes
      .map((scope) => ({ name: scope === OVERALL ? 'overall' : scope, scope, v: pts.map((p) => pointValue(p, metric, scope)) }))
      .filter((x) => x.v.some((y) => y !== null))
      .map((x) => ({ ...x, v: deltaCode(x.v) }));
    return { metric, title: `${metricLabel(metric)} over time`, series };
  });
  const markers: [number, string][] = [];
  pts.forEach((p, i) => {
    if (i === 0) return;
    const c = pointChanges(pts[i - 1]!, p);
    if (c.length) markers.push([i, c.join('; ')]);
  });
  const prov = pts.some((p) => p.provisional !== null) ? deltaCode(pts.map((p) => p.provisional)) : null;
  const backlog = pts.some((p) => p.backlog !== null) ? deltaCode(pts.map((p) => p.backlog), 1) : null;
  const f = d.findings[0];
  const read = [
    s.baseline ? `${s.baseline.path}: ${s.baseline.commits} commit(s) at ${s.baseline.ref}` : null,
    s.history ? `${s.history.name}: ${s.history.points} of ${s.history.lines} line(s)` : 'no history file',
  ]
    .filter(Boolean)
    .join(' · ');
  return {
    title: opts.title ?? `rankgate: search quality over time${s.repo ? ` (${s.repo})` : ''}`,
    generated: new Date().toISOString(),
    read: `${pts.length} points, ${pts[0]?.date.slice(0, 10) ?? ''} .. ${newest?.date.slice(0, 10) ?? ''} · ${read}`,
    headline: d.headline,
    failed: d.failed,
    drift: driftLines(d),
    notes: s.notes,
    t,
    label: pts.map((p) => pointName(p)),
    kind: pts.map((p) => (p.kind === 'baseline' ? 'b' : 'r')).join(''),
    charts,
    markers,
    provisional: prov,
    backlog,
    span: f ? [f.metric, pts.indexOf(f.ref), pts.indexOf(f.newest)] : null,
  };
}

function recentTable(s: Series, metrics: readonly string[], n = 30): string {
  const pts = s.points;
  const rows = pts
    .slice(-n)
    .reverse()
    .map((p) => {
      const i = pts.indexOf(p);
      const changes = i > 0 ? pointChanges(pts[i - 1]!, p) : [];
      return `<tr><td>${esc(p.date.slice(0, 10))}</td><td class="label">${esc(pointName(p))}${p.subject ? ` <span class="ci">${esc(p.subject.slice(0, 80))}</span>` : ''}</td><td>${p.kind === 'baseline' ? 'baseline' : 'run'}</td><td>${p.code ?? '–'}</td>${metrics
        .map((m) => `<td>${pointValue(p, m, OVERALL)?.toFixed(4) ?? '–'}</td>`)
        .join('')}<td>${p.summary.counts[0]}</td><td class="label">${esc(changes.join('; '))}</td></tr>`;
    })
    .join('');
  const head = `<th>date</th><th class="label">point</th><th>kind</th><th>exit</th>${metrics.map((m) => `<th>${esc(metricLabel(m))}</th>`).join('')}<th>queries</th><th class="label">changed</th>`;
  return `<div class="scroll">${stackable(`<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`)}</div>`;
}

export function renderTrend(data: TrendData, s: Series, metrics: readonly string[], echarts: string): string {
  const drift = data.headline
    ? `<section id="drift" class="drift ${data.failed ? 'bad' : 'warn'}"><p class="headline">${esc(data.headline)}</p><details><summary>the window and every finding</summary><pre class="lines">${esc(data.drift.join('\n'))}</pre></details></section>`
    : `<section id="drift" class="drift good"><p class="headline">${esc(data.drift.join(' '))}</p></section>`;
  const notes = data.notes.length ? `<section id="notes"><h2>Not read, or read in part</h2><ul>${data.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul></section>` : '';
  const charts = data.charts.map((c) => `<section class="chart-section"><h2>${esc(c.title)}</h2><div class="chart" id="chart-${esc(c.metric)}" data-metric="${esc(c.metric)}"></div></section>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<title>${esc(data.title)}</title>
<style>
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0 auto;max-width:1400px;padding:16px 24px;color:#1f2328}
h1{font-size:21px;margin:0 0 4px}h2{font-size:17px;margin:24px 0 6px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.meta{color:#57606a;overflow-wrap:anywhere}.chart{width:100%;height:380px}
.drift{border:2px solid #d0d7de;border-radius:8px;padding:8px 14px;margin:12px 0}.drift .headline{font-size:16px;font-weight:600;margin:2px 0;overflow-wrap:anywhere}
.drift.bad{border-color:#cf222e;background:#fff5f5}.drift.warn{border-color:#9a6700;background:#fff8e6}.drift.good{border-color:#1a7f37;background:#f0fff4}
pre.lines{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:6px 8px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:right;vertical-align:top}
td.label,th.label,th:first-child{text-align:left}.ci{color:#6e7781;font-size:11px}.scroll{overflow-x:auto;max-width:100%}li{overflow-wrap:anywhere}
@media (max-width:600px){body{padding:10px 10px}h1{font-size:18px}.chart{height:320px}
.scroll{overflow-x:visible}table.stack{width:100%}table.stack thead{display:none}table.stack tr{display:block;border:1px solid #d0d7de;border-radius:6px;margin:6px 0;padding:2px 0}
table.stack td{display:block;border:0;text-align:left;white-space:normal;overflow-wrap:anywhere;padding:2px 8px}table.stack td[data-label]:not([data-label=""])::before{content:attr(data-label) ": ";color:#57606a;font-weight:600}}
</style></head><body>
<h1>${esc(data.title)}</h1>
<p class="meta">${esc(data.read)} · written ${esc(data.generated.slice(0, 16).replace('T', ' '))} UTC</p>
${drift}
${charts}
<section id="points"><h2>The newest points</h2>${recentTable(s, metrics)}</section>
${notes}
<script>${echarts}</script>
<script>
const D = ${scriptJson(data)};
${CLIENT_JS}
</script>
</body></html>
`;
}

/** Build and write the page atomically; its size in bytes. */
export function writeTrendPage(path: string, s: Series, d: DriftReport, opts: { metrics: readonly string[]; title?: string }): number {
  const data = trendData(s, d, opts);
  const html = redactText(renderTrend(data, s, opts.metrics, echartsSource('common')));
  writeFileAtomic(path, html);
  return Buffer.byteLength(html);
}

/** Browser code: decodes D and draws one chart per gated metric (runs in the page, offline). */
const CLIENT_JS = String.raw`
(function () {
  const narrow = document.documentElement.clientWidth < 600;
  // dates: seconds, each from the one before; values: ten-thousandths, each from the line's previous value
  let acc = 0;
  const T = D.t.map((d) => (acc += d) * 1000);
  const undelta = (v, scale) => { let a = 0; return v.map((d) => (d === null ? null : (a += d) / scale)); };
  const changes = new Map(D.markers);
  const prov = D.provisional ? undelta(D.provisional, 1e4) : null;
  const backlog = D.backlog ? undelta(D.backlog, 1) : null;
  const fmtDate = (ms) => new Date(ms).toISOString().slice(0, 10);
  // category names, run ids and what changed come from files: never markup in the tooltip
  const h = (s) => String(s).replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]);
  const charts = [];
  D.charts.forEach((c, ci) => {
    const el = document.getElementById('chart-' + c.metric);
    if (!el) return;
    const chart = echarts.init(el, null, { renderer: 'svg' });
    const lines = c.series.map((s) => {
      const v = undelta(s.v, 1e4);
      const data = [];
      v.forEach((y, i) => { if (y !== null) data.push([T[i], y, i]); });
      return { type: 'line', name: s.name, data, showSymbol: false, symbolSize: 5, sampling: 'lttb', connectNulls: true,
        lineStyle: { width: s.scope === '*' ? 3 : 1.2 }, z: s.scope === '*' ? 5 : 2 };
    });
    const overall = lines.find((l) => l.name === 'overall');
    // where the corpus, the golden set, the judge or the provider settings changed: a pin on the overall line
    const marks = [];
    for (const [i, text] of D.markers) {
      const y = overall ? (overall.data.find((d) => d[2] === i) || [])[1] : null;
      marks.push([T[i], y === undefined || y === null ? null : y, i, text]);
    }
    const series = [...lines];
    series.push({ type: 'scatter', name: 'changes', data: marks.filter((m) => m[1] !== null), symbol: 'pin', symbolSize: narrow ? 20 : 26, z: 10,
      itemStyle: { color: '#8250df' }, tooltip: { show: true } });
    const yAxis = [{ type: 'value', scale: true, name: c.title.replace(/ over time$/, ''), nameTextStyle: { align: 'left' }, axisLabel: { formatter: (x) => x.toFixed(2) } }];
    const second = ci === 0 && (prov || backlog);
    if (second && prov) {
      yAxis.push({ type: 'value', min: 0, max: 1, name: 'prov.', position: 'right', axisLabel: { formatter: (x) => Math.round(x * 100) + '%' }, splitLine: { show: false } });
      const data = []; prov.forEach((y, i) => { if (y !== null) data.push([T[i], y, i]); });
      series.push({ type: 'line', name: 'provisional share', yAxisIndex: yAxis.length - 1, data, showSymbol: false, lineStyle: { type: 'dashed', width: 1.5, color: '#9a6700' }, itemStyle: { color: '#9a6700' } });
    }
    if (second && backlog) {
      yAxis.push({ type: 'value', min: 0, name: 'backlog', position: 'right', offset: prov ? (narrow ? 34 : 56) : 0, splitLine: { show: false } });
      const data = []; backlog.forEach((y, i) => { if (y !== null) data.push([T[i], y, i]); });
      series.push({ type: 'line', name: 'review backlog', yAxisIndex: yAxis.length - 1, step: 'end', data, showSymbol: false, lineStyle: { type: 'dotted', width: 1.5, color: '#6e7781' }, itemStyle: { color: '#6e7781' } });
    }
    // the drift's span, shaded on its metric's chart
    if (D.span && D.span[0] === c.metric && overall) overall.markArea = { silent: true, itemStyle: { color: 'rgba(207,34,46,0.08)' }, data: [[{ xAxis: T[D.span[1]] }, { xAxis: T[D.span[2]] }]] };
    const rightAxes = yAxis.length - 1;
    chart.setOption({
      animation: false,
      legend: { type: 'scroll', top: 0, textStyle: { fontSize: narrow ? 11 : 12 } },
      grid: { left: narrow ? 44 : 60, right: rightAxes ? (narrow ? 40 + 34 * (rightAxes - 1) : 70 + 56 * (rightAxes - 1)) : 16, top: narrow ? 64 : 56, bottom: narrow ? 52 : 40 },
      xAxis: { type: 'time', axisLabel: { hideOverlap: true, fontSize: narrow ? 10 : 12 } },
      yAxis,
      dataZoom: T.length > 60 ? [{ type: 'inside' }, { type: 'slider', height: 16, bottom: 6 }] : [],
      tooltip: {
        trigger: 'axis',
        confine: true,
        axisPointer: { type: 'line', snap: true },
        formatter: (params) => {
          if (!params.length) return '';
          const i = params[0].value[2];
          const out = [fmtDate(T[i]) + ' · ' + h(D.label[i]) + ' (' + (D.kind[i] === 'b' ? 'baseline commit' : 'run') + ')'];
          for (const p of params) {
            if (p.seriesName === 'changes') continue;
            if (p.value[2] !== i) continue;
            const v = p.value[1];
            out.push(p.marker + h(p.seriesName) + ': ' + (p.seriesName === 'review backlog' ? v : p.seriesName === 'provisional share' ? Math.round(v * 100) + '%' : v.toFixed(4)));
          }
          if (changes.has(i)) out.push('<b>changed: ' + h(changes.get(i)) + '</b>');
          return out.join('<br>');
        },
      },
      series,
    });
    charts.push(chart);
  });
  window.__trendCharts = charts;
  document.documentElement.dataset.chartsDrawn = String(document.querySelectorAll('.chart svg').length);
  window.addEventListener('resize', () => charts.forEach((c) => c.resize()));
})();
`;
