/**
 * rankgate's rank-metric core (pure: no I/O, no promptfoo). Measures are exported under their
 * trec_eval names; every measure has the signature `(ranking, judgments, k?, opts?) => number`.
 */
export type { Judgments, Measure, MeasureOptions, Ranking } from './types.ts';
export { num_ret, num_rel, num_rel_ret } from './counts.ts';
export { P_k, recall_k, success_k, judged_k } from './precision.ts';
export { map, map_cut_k, Rprec } from './ap.ts';
export { recip_rank, mrr_cut_k } from './rr.ts';
export { bpref } from './bpref.ts';
export { ndcg, ndcg_cut_k, ndcg_exp_cut_k } from './ndcg.ts';
export { Judged_k } from './judged.ts';
export { condensed_ndcg_cut_k } from './condensed.ts';
export { dedupe } from './common.ts';
export {
  parseQrels,
  parseRun,
  orderRun,
  formatQrels,
  formatRun,
  sortedQueryIds,
  type Qrels,
  type Run,
  type RunEntry,
  type RunOrder,
} from './trec.ts';
export {
  FAMILIES,
  parseMeasureSpecs,
  columns,
  measureColumn,
  evaluateRun,
  scoreRanking,
  formatEvaluation,
  formatFixed4,
  MeasureSpecError,
  type MeasureFamily,
  type MeasureRequest,
  type MeasureColumn,
  type Evaluation,
  type EvaluateOptions,
} from './evaluate.ts';
export { Qrels as TrecQrels, RunReader as TrecRunReader, parseSim } from './trecfast.ts';
export {
  TREC_MEASURES,
  NICKNAMES,
  selectMeasures,
  trecEval,
  perQueryValues,
  ZScores,
  TrecEvalError,
  TrecMeasureError,
  fmt4,
  type Selection,
  type TrecEvalOptions,
} from './treceval.ts';
export { makeResRels, resRelsOf, type ResRels, type TrecContext } from './resrels.ts';
export { rrf, combSum, combMnz, minMaxNormalise, type Fused, type ScoredRun } from './fusion.ts';
export {
  pairedTTest,
  randomizationTest,
  bootstrapCI,
  holm,
  compareRuns,
  compareVectors,
  mulberry32,
  quantile,
  CompareInputError,
  type TTestResult,
  type RandomizationOptions,
  type RandomizationResult,
  type BootstrapOptions,
  type BootstrapResult,
  type CompareOptions,
  type RunComparison,
  type NamedVector,
  type VectorComparison,
  type CompareVectorsOptions,
  type CompareVectorsResult,
} from './significance.ts';
