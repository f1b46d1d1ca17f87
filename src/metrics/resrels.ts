/**
 * trec_eval's per-query view of a ranking (form_res_rels.c's RES_RELS): the relevance value of
 * every retrieved document in rank order plus occurrence counts. Every trec_eval measure is a
 * function of this record alone, so the measure files take a ResRels and never see strings.
 *
 * Relevance values in `list`: the qrels grade (>= 0) of a judged document, RELVALUE_NONPOOL (-1)
 * for a document not in the qrels, RELVALUE_UNJUDGED (-2) for a document in the qrels with a
 * negative grade ("in the pool but unjudged").
 */
export const RELVALUE_NONPOOL = -1;
export const RELVALUE_UNJUDGED = -2;

export interface ResRels {
  /** relevance value per retrieved document, rank order; only the first numRet entries count */
  list: Int32Array;
  numRet: number;
  /** judged documents (whole qrels of the query) with grade >= the relevance level */
  numRel: number;
  /** retrieved documents with grade >= the relevance level */
  numRelRet: number;
  /** retrieved documents not in the qrels */
  numNonpool: number;
  /** retrieved documents in the qrels with a negative grade */
  numUnjudged: number;
  /** relLevels[g] = qrels documents of the query judged with grade g (g >= 0) */
  relLevels: Int32Array | number[];
  /** highest grade with a document, plus one (0 when no grade >= 0) */
  numRelLevels: number;
}

/** Evaluation parameters every measure may read (trec_eval's EPI). */
export interface TrecContext {
  /** -l: grade >= level is relevant (default 1) */
  relevanceLevel: number;
  /** -N: number of documents in the collection (default 0, as trec_eval) */
  numDocsInColl: number;
}

/** trec_eval's MIN_GEO_MEAN and INFAP_EPSILON (trec_eval.h). */
export const MIN_GEO_MEAN = 0.00001;
export const INFAP_EPSILON = 0.00001;

/**
 * Build a ResRels from relevance values in rank order and the query's grade histogram
 * (form_res_rels.c: num_rel sums the histogram from the relevance level up).
 */
export function makeResRels(list: Int32Array, numRet: number, relLevels: Int32Array | number[], relevanceLevel: number): ResRels {
  let numRelRet = 0;
  let numNonpool = 0;
  let numUnjudged = 0;
  for (let i = 0; i < numRet; i++) {
    const r = list[i]!;
    if (r === RELVALUE_NONPOOL) numNonpool++;
    else if (r === RELVALUE_UNJUDGED) numUnjudged++;
    else if (r >= relevanceLevel) numRelRet++;
  }
  let numRelLevels = 0;
  let numRel = 0;
  for (let i = 0; i < relLevels.length; i++) {
    if (relLevels[i]) {
      numRelLevels = i + 1;
      if (i >= relevanceLevel) numRel += relLevels[i]!;
    }
  }
  return { list, numRet, numRel, numRelRet, numNonpool, numUnjudged, relLevels, numRelLevels };
}

/**
 * ResRels of an id ranking against one query's judgments (the API the assertions use). A duplicate
 * id keeps its first occurrence; grades are truncated toward zero as trec_eval's atol does.
 */
export function resRelsOf(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  relevanceLevel: number,
): ResRels {
  const seen = new Set<string>();
  const list = new Int32Array(ranking.length);
  let n = 0;
  for (const id of ranking) {
    if (seen.has(id)) continue;
    seen.add(id);
    const g = judgments.get(id);
    list[n++] = g === undefined ? RELVALUE_NONPOOL : g < 0 ? RELVALUE_UNJUDGED : Math.trunc(g);
  }
  const levels: number[] = [];
  for (const g0 of judgments.values()) {
    if (g0 < 0) continue;
    const g = Math.trunc(g0);
    while (levels.length <= g) levels.push(0);
    levels[g]!++;
  }
  return makeResRels(list, n, levels, relevanceLevel);
}
