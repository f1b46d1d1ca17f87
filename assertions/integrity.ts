/**
 * Integrity assertion (the chunking spec): top results that stop mid-sentence or leave a ``` code fence open.
 * Recorded as metrics; the row fails on it only with `failRow: true` (the row's pass is its golden expectation).
 * namedScores: integrity (share of clean top results), cut_mid_sentence, open_code_fence (counts).
 *
 *   - type: javascript
 *     value: file://assertions/integrity.ts:integrity
 *     config: { top: 5, failRow: false }
 */
import { checkIntegrity } from '../src/results/score.ts';
import { failsRow, outputFrom, type AssertionContext, type GradingResult } from './common.ts';

export function integrity(output: unknown, context: AssertionContext): GradingResult {
  const out = outputFrom(output, context);
  const top = Number(context.config?.top ?? 5);
  const n = Math.min(top, out.hits.length);
  const issues = checkIntegrity(out, top);
  const bad = new Set(issues.map((i) => i.chunkId)).size;
  const detail = issues.length ? issues.map((i) => `#${i.rank} ${i.chunkId}: ${i.issue}`).join('; ') : `top ${n} results intact`;
  const gate = failsRow(context);
  return {
    pass: gate ? issues.length === 0 : true,
    score: n ? (n - bad) / n : 1,
    reason: issues.length && !gate ? `integrity (recorded, does not fail the row): ${detail}` : detail,
    namedScores: {
      integrity: n ? (n - bad) / n : 1,
      cut_mid_sentence: issues.filter((i) => i.issue === 'cut_mid_sentence').length,
      open_code_fence: issues.filter((i) => i.issue === 'open_code_fence').length,
    },
  };
}
