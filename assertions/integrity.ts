/**
 * Integrity assertion (seed 003): top results that stop mid-sentence or leave a ``` code fence open.
 * namedScores: integrity (share of clean top results), cut_mid_sentence, open_code_fence (counts).
 *
 *   - type: javascript
 *     value: file://assertions/integrity.ts:integrity
 *     config: { top: 5 }
 */
import { checkIntegrity } from '../src/report/score.ts';
import { outputFrom, type AssertionContext, type GradingResult } from './common.ts';

export function integrity(output: unknown, context: AssertionContext): GradingResult {
  const out = outputFrom(output);
  const top = Number(context.config?.top ?? 5);
  const n = Math.min(top, out.hits.length);
  const issues = checkIntegrity(out, top);
  const bad = new Set(issues.map((i) => i.chunkId)).size;
  return {
    pass: issues.length === 0,
    score: n ? (n - bad) / n : 1,
    reason: issues.length ? issues.map((i) => `#${i.rank} ${i.chunkId}: ${i.issue}`).join('; ') : `top ${n} results intact`,
    namedScores: {
      integrity: n ? (n - bad) / n : 1,
      cut_mid_sentence: issues.filter((i) => i.issue === 'cut_mid_sentence').length,
      open_code_fence: issues.filter((i) => i.issue === 'open_code_fence').length,
    },
  };
}

