/**
 * Renderings of a results comparison (src/gate/compare.ts): the pick-the-best estimate in a few lines and the
 * Markdown table of `rankgate compare --results --markdown`.
 */
import type { SelectionResult } from '../metrics/selection.ts';
import type { ResultsComparison } from '../gate/compare.ts';
import { shippingSection } from './markdown.ts';

const pctOf = (x: number) => `${(100 * x).toFixed(0)}%`;

/** The selection estimate in a few lines (text and Markdown alike). */
export function selectionLines(metric: string, s: SelectionResult): string[] {
  const top = s.wins.slice(0, 3).map((w) => `${w.name} ${pctOf(w.share)}`).join(', ');
  return [
    `Pick-the-best, cross-validated (${s.folds}-fold x ${s.repeats} seeded repeats, seed ${s.seed}, ${s.queries} queries, ${s.columns} columns), ${metric}:`,
    `  held-out mean of the column chosen on the other folds: ${s.heldOutMean.toFixed(4)} (sd over repeats ${s.heldOutSd.toFixed(4)})`,
    `  in-sample best: ${s.inSampleBest} ${s.inSampleMean.toFixed(4)} -> optimism of picking it on these queries: ${s.optimism >= 0 ? '+' : ''}${s.optimism.toFixed(4)}`,
    `  first column (baseline): ${s.baselineMean.toFixed(4)}; the in-sample best wins ${pctOf(s.stability)} of the folds; chosen: ${top}`,
  ];
}

const f4 = (x: number, signed = false) => (signed && x >= 0 ? '+' : '') + x.toFixed(4);

export function comparisonMarkdown(r: ResultsComparison): string {
  const s = r.significance;
  const lines = [
    `## ${r.metric}: each column against \`${s.baseline}\` (${s.queries.length} queries)`,
    '',
    '| column | mean | diff | 95% CI | p (t-test) | p (randomization) | p (Holm) | W/T/L |',
    '|---|---:|---:|---|---:|---:|---:|---|',
    `| ${s.baseline} (baseline) | ${f4(s.comparisons[0]?.baseline_mean ?? 0)} | | | | | | |`,
  ];
  for (const c of s.comparisons) {
    lines.push(
      `| ${c.run} | ${f4(c.mean)} | ${f4(c.diff, true)} | [${f4(c.ci_low, true)}, ${f4(c.ci_high, true)}] | ${f4(c.p_ttest)} | ${f4(c.p_randomization)} | ${f4(c.p_holm)} | ${c.wins}/${c.ties}/${c.losses} |`,
    );
  }
  if (r.selection) lines.push('', ...selectionLines(r.metric, r.selection).map((l, i) => (i === 0 ? `**${l}**` : `- ${l.trim()}`)));
  for (const v of r.shipping) lines.push('', shippingSection(v));
  return lines.join('\n') + '\n';
}
