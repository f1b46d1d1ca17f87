/**
 * `rankgate report`: one self-contained HTML file (src/report/html/render.ts) from a promptfoo results JSON, and
 * the small Mermaid chart the PR comment carries (GitHub renders ```mermaid blocks inline).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { writeFileAtomic } from '../../util/atomic.ts';
import type { BaselineDelta } from '../baseline.ts';
import type { Des058Report } from '../report.ts';
import type { ParsedResults } from '../results.ts';
import { buildReportData, type ReportData, type ReportDataOptions } from './data.ts';
import { renderHtml } from './render.ts';

export { buildReportData, renderHtml, type ReportData };

/** The minified ECharts bundle, inlined into every report (Apache-2.0; its licence header stays in it). */
export function echartsSource(): string {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve('echarts/dist/echarts.min.js'), 'utf8').replace(/<\/script/gi, '<\\/script');
}

/** Build and write the report atomically (temp file + rename); returns its size in bytes. */
export function writeHtmlReport(path: string, parsed: ParsedResults, opts: ReportDataOptions = {}): { bytes: number; data: ReportData } {
  const data = buildReportData(parsed, opts);
  const html = renderHtml(data, echartsSource());
  writeFileAtomic(path, html);
  return { bytes: Buffer.byteLength(html), data };
}

const label = (s: string) => `"${s.replace(/"/g, "'")}"`;

/**
 * A Mermaid xychart of per-category Recall@3, base vs head (bars: head; line: base), for the PR comment. Without a
 * baseline, the head's bars alone. Empty string when no category has a Recall@3.
 */
export function mermaidCategoryChart(report: Des058Report, delta?: BaselineDelta | null): string {
  const cats = Object.entries(report.categories)
    .filter(([, c]) => typeof c.recall_at_3 === 'number')
    .map(([k]) => k);
  if (!cats.length) return '';
  const head = cats.map((c) => +(report.categories[c]!.recall_at_3! * 100).toFixed(1));
  const base = delta ? cats.map((c) => delta.categories[c]?.recall_at_3?.[0]) : null;
  const lines = [
    '```mermaid',
    'xychart-beta',
    `  title "Recall@3 per category (%)${base ? ': bars = this PR, line = baseline' : ''}"`,
    `  x-axis [${cats.map(label).join(', ')}]`,
    '  y-axis "Recall@3 (%)" 0 --> 100',
    `  bar [${head.join(', ')}]`,
  ];
  if (base && base.some((v) => typeof v === 'number')) lines.push(`  line [${base.map((v) => (typeof v === 'number' ? +(v * 100).toFixed(1) : 0)).join(', ')}]`);
  lines.push('```');
  return lines.join('\n');
}
