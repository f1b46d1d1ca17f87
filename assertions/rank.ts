/**
 * Rank assertion (thin; math in src/metrics via src/results/score.ts). Records every ranking measure as
 * namedScores (overall and `_<category>`, with n_ranked / n_<category> counters) and the failure bucket, Judged@10 and
 * Judged@3 (share_judged_at_*), condensed nDCG@10 and bpref, and with a judgments file the `+ labels` figures
 * (labelled_*, counter n_labelled: docs/judgments.md); on a reranked
 * row (diagnostics.rerank) the per-stage measures and the rerank stage's rerank_ms / rerank_requests / rerank_cost_usd.
 *
 *   - type: javascript
 *     value: file://assertions/rank.ts:rank
 *     config: { passAt: 3 }     # the row passes when a relevant reference is in the top passAt (default 3)
 *
 * Queries without a relevant reference (routing-only: adversarial, technique_boundary) pass with no
 * ranking scores. A failing row never fails the gate by itself: the gate reads the means.
 */
import { queryLabelsOf, rankNamedScores, rerankCostOf, rerankNamedScores, scoreRanking } from '../src/results/score.ts';
import { expectedLabel } from '../src/report/output-text.ts';
import { goldenFrom, metadataFrom, outputFrom, type AssertionContext, type GradingResult } from './common.ts';

export function rank(output: unknown, context: AssertionContext): GradingResult {
  const golden = goldenFrom(context);
  const out = outputFrom(output, context);
  const passAt = Number(context.config?.passAt ?? 3);
  const meta = metadataFrom(context);
  // the query's labels of the judgments file (RANKGATE_JUDGMENTS / the loader's judgments:): the `+ labels` figures
  const labels = queryLabelsOf(context.test?.metadata?.labels, `test ${golden.id} metadata.labels`);
  const s = scoreRanking(golden, out, meta, labels ? { labels } : {});
  // a reranked row's stage latency, requests and cost (every row with diagnostics.rerank, routing-only ones too)
  const rerank = rerankNamedScores(rerankCostOf(meta));
  if (!s) return { pass: true, score: 1, reason: 'no relevant reference: ranking not scored (routing-only query)', ...(Object.keys(rerank).length ? { namedScores: rerank } : {}) };
  const pass = s.best_rank !== null && s.best_rank <= passAt;
  // a miss says what was expected and where it ranked (the reason shows in the view's failed cell)
  const reason =
    `${s.bucket}: ` +
    (s.best_rank === null
      ? `no relevant reference returned: expected ${expectedLabel(golden)}, not in the ${out.hits.length ? `top ${out.hits.length}` : 'results (none returned)'}`
      : `best relevant rank ${s.best_rank}${pass ? '' : ` (expected ${expectedLabel(golden)} in the top ${passAt})`}`) +
    ` · Success@3 ${s.recall_at_3} · Recall@10 ${+s.trec_recall_at_10.toFixed(3)} · MRR@10 ${s.mrr.toFixed(3)} · nDCG@10 ${s.ndcg_at_10.toFixed(3)} (${s.level} level, ${s.relevant_refs} relevant)` +
    (s.stages ? ` · first stage Success@${s.stages.budget} ${s.stages.first_stage_recall_at_budget}, rerank gain nDCG@10 ${s.stages.rerank_gain_ndcg_at_10 >= 0 ? '+' : ''}${s.stages.rerank_gain_ndcg_at_10.toFixed(3)}` : '');
  return {
    pass,
    score: s.mrr,
    reason,
    namedScores: { ...rankNamedScores(golden.category, s), ...rerank },
    metadata: { bucket: s.bucket, best_rank: s.best_rank },
  };
}

