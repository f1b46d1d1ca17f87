/**
 * Condensed-list nDCG@k (Sakai, SIGIR 2007, "Alternatives to Bpref"): the ranking with every unjudged document removed,
 * then nDCG@k as usual (gain = grade, discount 1/log2(rank+1), ideal from all judged documents of the query). A result
 * nobody judged neither helps nor hurts: the figure says how good the JUDGED part of the ranking is, where the strict
 * nDCG@10 counts every unjudged result as a miss. Unjudged = not in the judgments, or judged with a negative grade
 * ("in the pool but unjudged"), exactly as trec_eval's -J (Judged_docs_only) drops them before any measure, so
 * `condensed_ndcg_cut_k(r, j, 10)` equals `trec_eval -J -m ndcg_cut.10` (checked against rankgate's trec_eval port,
 * itself byte-identical to trec_eval 10: test/metrics/judged.test.ts).
 *
 * Read beside bpref (src/metrics/bpref.ts), the other measure built for incomplete judgments. Both rank systems more
 * fairly when their top results were judged unevenly; neither says whether the unjudged results were relevant: only
 * judging them does (`rankgate judge pool`).
 */
import { cutoff, dedupe, one } from './common.ts';
import type { Judgments, MeasureOptions, Ranking } from './types.ts';
import { calcNdcgCut } from './ndcg.ts';

/** nDCG@k over the condensed list (definition above). 0 when the query's ideal DCG is 0, as nDCG. */
export function condensed_ndcg_cut_k(ranking: Ranking, judgments: Judgments, k?: number, opts?: MeasureOptions): number {
  const kk = cutoff(k, 'condensed_ndcg_cut_k');
  const judged = dedupe(ranking).filter((id) => {
    const g = judgments.get(id);
    return g !== undefined && g >= 0;
  });
  return one(judged, judgments, opts, (rr, _c, o) => calcNdcgCut(rr, [kk], o, 0));
}
