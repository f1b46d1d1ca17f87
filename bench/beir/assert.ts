/**
 * promptfoo assertion of the BEIR benchmark: Recall@100 on the document-collapsed ranking.
 *
 *   - type: javascript
 *     value: file://bench/beir/assert.ts:recall100
 *
 * assertions/rank.ts already records nDCG@10 (ndcg_at_10) and MRR@10 (mrr) with the ranking collapsed to
 * documents (each at the rank of its best chunk) because every BEIR judgement names a document; its
 * measures stop at 10. This adds, on the same collapse (first occurrence of each document in rank order):
 *   recall_at_100   trec_eval recall_100 (src/metrics recall_k): relevant documents in the top 100 /
 *                   relevant documents (grade >= 1), BEIR's Recall@100
 *   docs_returned   distinct documents returned (a column returning < 100 cannot reach full Recall@100)
 *   latency_ms      the provider's search-call time
 */
import { recall_k } from '../../src/metrics/index.ts';
import { goldenFrom, outputFrom, type AssertionContext, type GradingResult } from '../../assertions/common.ts';
import type { HarnessOutput } from '../../src/results/types.ts';

/** Document ids in rank order, each once, at the rank of its best chunk. */
export function documentRanking(out: HarnessOutput): string[] {
  const seen = new Set<string>();
  const docs: string[] = [];
  for (const h of [...out.hits].sort((a, b) => a.rank - b.rank)) {
    const d = h.documentId || h.chunkId;
    if (seen.has(d)) continue;
    seen.add(d);
    docs.push(d);
  }
  return docs;
}

export function recall100(output: unknown, context: AssertionContext): GradingResult {
  const golden = goldenFrom(context);
  const out = outputFrom(output, context);
  const judgments = new Map<string, number>();
  for (const r of golden.expected) if (r.doc_id !== undefined) judgments.set(r.doc_id, r.relevant ? 1 : 0);
  const ranking = documentRanking(out);
  const r100 = recall_k(ranking, judgments, 100);
  return {
    pass: true,
    score: r100,
    reason: `Recall@100 ${r100.toFixed(3)} over ${ranking.length} documents returned`,
    namedScores: { recall_at_100: r100, docs_returned: ranking.length, latency_ms: out.latencyMs, n_beir: 1 },
  };
}
