/**
 * Rank assertion (thin; math in src/metrics via src/results/score.ts). Records every ranking measure as
 * namedScores (overall and `_<category>`, with n_ranked / n_<category> counters) and the failure bucket.
 *
 *   - type: javascript
 *     value: file://assertions/rank.ts:rank
 *     config: { passAt: 3 }     # the row passes when a relevant reference is in the top passAt (default 3)
 *
 * Queries without a relevant reference (routing-only: adversarial, technique_boundary) pass with no
 * ranking scores. A failing row never fails the gate by itself: the gate reads the means.
 */
import { rankNamedScores, scoreRanking } from '../src/results/score.ts';
import { expectedLabel } from '../src/report/output-text.ts';
import { goldenFrom, metadataFrom, outputFrom, type AssertionContext, type GradingResult } from './common.ts';

export function rank(output: unknown, context: AssertionContext): GradingResult {
  const golden = goldenFrom(context);
  const out = outputFrom(output, context);
  const passAt = Number(context.config?.passAt ?? 3);
  const s = scoreRanking(golden, out, metadataFrom(context));
  if (!s) return { pass: true, score: 1, reason: 'no relevant reference: ranking not scored (routing-only query)' };
  const pass = s.best_rank !== null && s.best_rank <= passAt;
  // a miss says what was expected and where it ranked (the reason shows in the view's failed cell)
  const reason =
    `${s.bucket}: ` +
    (s.best_rank === null
      ? `no relevant reference returned: expected ${expectedLabel(golden)}, not in the ${out.hits.length ? `top ${out.hits.length}` : 'results (none returned)'}`
      : `best relevant rank ${s.best_rank}${pass ? '' : ` (expected ${expectedLabel(golden)} in the top ${passAt})`}`) +
    ` · R@3 ${s.recall_at_3} · MRR@10 ${s.mrr.toFixed(3)} · nDCG@10 ${s.ndcg_at_10.toFixed(3)} (${s.level} level, ${s.relevant_refs} relevant)`;
  return {
    pass,
    score: s.mrr,
    reason,
    namedScores: rankNamedScores(golden.category, s),
    metadata: { bucket: s.bucket, best_rank: s.best_rank },
  };
}

