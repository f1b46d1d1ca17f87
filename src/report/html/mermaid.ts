/** The small chart of the PR comment: a Mermaid xychart GitHub renders inline. Pure. */
import type { BaselineDelta } from '../../gate/baseline.ts';
import type { Des058Report } from '../../results/summary.ts';
import { mermaidLabel } from '../escape.ts';

/**
 * A Mermaid xychart of per-category Success@3 (DES-058 Recall@3), base vs head (bars: head; line: base), for the PR comment. Without a
 * baseline, the head's bars alone. Empty string when no category has a Success@3.
 */
export function mermaidCategoryChart(report: Des058Report, delta?: BaselineDelta | null): string {
  const cats = Object.entries(report.categories)
    .filter(([, c]) => typeof c.recall_at_3 === 'number')
    .map(([k]) => k);
  if (!cats.length) return '';
  const head = cats.map((c) => +(report.categories[c]!.recall_at_3! * 100).toFixed(1));
  // with errored queries the bars are over the measured queries only: no baseline line (over other queries) to read a drop from
  const base = delta && !delta.errored && !delta.unmeasured ? cats.map((c) => delta.categories[c]?.recall_at_3?.[0]) : null;
  const lines = [
    '```mermaid',
    'xychart-beta',
    `  title "Success@3 per category (%)${base ? ': bars = this PR, line = baseline' : ''}"`,
    `  x-axis [${cats.map(mermaidLabel).join(', ')}]`,
    '  y-axis "Success@3 (%)" 0 --> 100',
    `  bar [${head.join(', ')}]`,
  ];
  if (base && base.some((v) => typeof v === 'number')) lines.push(`  line [${base.map((v) => (typeof v === 'number' ? +(v * 100).toFixed(1) : 0)).join(', ')}]`);
  lines.push('```');
  return lines.join('\n');
}
