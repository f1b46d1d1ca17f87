/**
 * `rankgate report`: one self-contained HTML file (src/report/html/render.ts) from a promptfoo results JSON, and
 * the small Mermaid chart the PR comment carries (GitHub renders ```mermaid blocks inline).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { writeFileAtomic } from '../../util/atomic.ts';
import { redactText } from '../../util/redact.ts';
import type { ParsedResults } from '../../results/read.ts';
import { buildReportData, type ReportData, type ReportDataOptions } from './data.ts';
import { renderHtml } from './render.ts';

export { buildReportData, renderHtml, type ReportData };

/**
 * The minified ECharts bundle, inlined into every report (Apache-2.0; its licence header stays in it). `common`: the
 * smaller build of the common charts (line, bar, scatter, pie, with tooltips, legends, mark lines and areas), which is
 * all the trend page draws.
 */
export function echartsSource(bundle: 'full' | 'common' = 'full'): string {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve(bundle === 'common' ? 'echarts/dist/echarts.common.min.js' : 'echarts/dist/echarts.min.js'), 'utf8').replace(/<\/script/gi, '<\\/script');
}

/** Build and write the report atomically (temp file + rename); returns its size in bytes. */
export function writeHtmlReport(path: string, parsed: ParsedResults, opts: ReportDataOptions = {}): { bytes: number; data: ReportData } {
  const data = buildReportData(parsed, opts);
  const html = redactText(renderHtml(data, echartsSource()));
  writeFileAtomic(path, html);
  return { bytes: Buffer.byteLength(html), data };
}

export { mermaidCategoryChart } from './mermaid.ts';
