/**
 * Per-query scoring of one provider output against one golden query: ranking metrics, failure bucket,
 * routing and result integrity. Pure (no I/O, no promptfoo): the assertions call it per row, the
 * report recomputes it from a results JSON, so both always agree.
 *
 * Judgement unit. Every golden reference is ONE judged item (`ref:<index>`), whatever it names:
 * - chunk_id / passage_substring references are matched at chunk level (a substring matches the chunk
 *   ids it resolved to in the searched index variant, or, when the service cannot resolve, a hit whose
 *   content contains it, whitespace-normalised);
 * - when every reference names a document (doc_id or path: BEIR, NQ documents, blind-test paths), the
 *   ranking is first collapsed to documents, each at the rank of its best chunk.
 * The ranking given to src/metrics replaces each unit that matches a not-yet-credited reference by
 * that reference's id (highest grade first, then list order); other units keep their own id. So a
 * passage split over two overlapping chunks counts once, at its best rank.
 *
 * Measures (cut at 10 unless named otherwise), all from src/metrics:
 * - recall_at_k (k = 1, 3, 5, 10): Success@k (ir_measures; trec_eval success_k), what DES-058 and the NQ eval call
 *   "Recall@k": binary per query, 1 when at least one RELEVANT reference (DES-058: relevance "high") is in the top k.
 *   The keys keep DES-058's spelling (gate.yaml, baselines, named scores); every name shown says Success@k.
 * - trec_recall_at_10: Recall@10 (ir_measures R@10; trec_eval recall_10) = relevant references in the top 10 /
 *   relevant references (the Recall@10 of the blind-test framework's shipping criteria).
 * - mrr: mrr_cut_k(10) (MRR@10); precision_at_5: P_5; ap_at_10: map_cut_10;
 *   ndcg_at_10: ndcg_cut_10 with gain = grade (partial references count here, grade 1).
 * - found / best_rank: a relevant reference anywhere in the returned ranking, and its rank (NQ eval's
 *   not-found rate and average rank when found); last_expected_rank: rank of the last relevant
 *   reference when all are returned.
 * - answerable_at_10: 1 when a top-10 hit that matches a reference with answer_contains contains that
 *   phrase (case-insensitive).
 */
import { Judged_k, P_k, bpref, condensed_ndcg_cut_k, map_cut_k, mrr_cut_k, ndcg_cut_k, recall_k, success_k } from '../metrics/index.ts';
import { docKey } from '../judgments/file.ts';
import type { GoldenQuery, Reference } from '../golden/schema.ts';
import { LABEL_RELEVANT_GRADE } from './types.ts';
import type {
  FailureBucket,
  HarnessHit,
  HarnessMetadata,
  HarnessOutput,
  IntegrityIssue,
  LabelledScores,
  QueryLabel,
  RetrievalScores,
  RoutingScores,
  StageScores,
} from './types.ts';

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * The structured provider output of a row (contract C). providers/search.ts returns readable text as `output` (the
 * ranked list a person reads in `promptfoo view`) and the structured HarnessOutput in `metadata.harness`; older
 * results carry the structure as `output` itself (an object from the CLI, a JSON string from programmatic
 * evaluate). Every consumer calls this with the row's metadata: assertions with `context.metadata`, reports with
 * `response.metadata`.
 */
export function parseOutput(output: unknown, metadata?: unknown): HarnessOutput {
  const h = (metadata as { harness?: unknown } | null | undefined)?.harness;
  if (h && typeof h === 'object' && Array.isArray((h as HarnessOutput).hits)) return h as HarnessOutput;
  let o = output;
  if (typeof output === 'string') {
    try {
      o = JSON.parse(output);
    } catch {
      throw new Error(
        `provider output is text and the row has no metadata.harness (the structured ranking): is the provider providers/search.ts? Output starts: ${output.slice(0, 80)}`,
      );
    }
  }
  if (!o || typeof o !== 'object' || !Array.isArray((o as HarnessOutput).hits)) {
    throw new Error('provider output has no hits[] (and the row no metadata.harness): is the provider providers/search.ts?');
  }
  return o as HarnessOutput;
}

/** The hit's document key for document-level judgements. */
function docOf(hit: HarnessHit): string {
  return hit.documentId;
}

/** Does a golden reference match a returned hit (chunk id, resolved passage substring, document id or path)? */
export function refMatchesHit(ref: Reference, hit: HarnessHit, meta: HarnessMetadata | undefined): boolean {
  if (ref.chunk_id !== undefined) return hit.chunkId === ref.chunk_id;
  if (ref.passage_substring !== undefined) {
    const resolved = meta?.resolution?.[ref.passage_substring];
    if (resolved) return resolved.includes(hit.chunkId);
    return norm(hit.content ?? '').includes(norm(ref.passage_substring));
  }
  if (ref.doc_id !== undefined) return hit.documentId === ref.doc_id;
  if (ref.path !== undefined) return hit.path === ref.path || hit.documentId === ref.path;
  return false;
}

/** Does the reference match a first-stage candidate id (no hit object: only its id is known)? null: cannot tell. */
function refMatchesCandidate(
  ref: Reference,
  id: string,
  level: 'chunk' | 'document',
  hitsById: Map<string, HarnessHit>,
  meta: HarnessMetadata | undefined,
): boolean | null {
  const hit = hitsById.get(id);
  if (hit) return refMatchesHit(ref, hit, meta);
  if (ref.chunk_id !== undefined) return id === ref.chunk_id;
  if (ref.passage_substring !== undefined) {
    const resolved = meta?.resolution?.[ref.passage_substring];
    return resolved ? resolved.includes(id) : null; // unknown content: cannot tell
  }
  const doc = candidateDoc(id, hitsById);
  if (doc === null) return level === 'document' ? null : false;
  if (ref.doc_id !== undefined) return doc === ref.doc_id;
  if (ref.path !== undefined) return doc === ref.path;
  return false;
}

/**
 * The document of a candidate id that is not among the returned hits: our service's chunk ids are
 * `<documentId>#c<size>-<index>`; a service whose every returned hit has chunkId = documentId (a team's service ranking
 * documents) names documents by id. Otherwise (prechunked ids) null: unknown.
 */
function candidateDoc(id: string, hitsById: Map<string, HarnessHit>): string | null {
  const h = hitsById.get(id);
  if (h) return h.documentId;
  if (id.includes('#')) return id.slice(0, id.lastIndexOf('#'));
  if (hitsById.size > 0 && [...hitsById.values()].every((x) => x.chunkId === x.documentId)) return id;
  return null;
}

/** true: a relevant reference matches one of `ids`; null: none does for sure but some could not be told; false: none. */
function anyMatch(ids: readonly string[], rel: Reference[], level: 'chunk' | 'document', hitsById: Map<string, HarnessHit>, meta: HarnessMetadata | undefined): boolean | null {
  let unknown = false;
  for (const id of ids) {
    for (const r of rel) {
      const m = refMatchesCandidate(r, id, level, hitsById, meta);
      if (m === true) return true;
      if (m === null) unknown = true;
    }
  }
  return unknown ? null : false;
}

/**
 * Credit references along a ranking of units, each reference once at its best unit (highest grade first, then list
 * order): `ref:<i>` for a unit that takes reference i, `unit:<id>` otherwise. The ranking src/metrics scores.
 * `matches(ref, unit)` may answer null (cannot tell): then the ranking is null.
 */
function creditRanking(
  refs: Reference[],
  units: readonly string[],
  matches: (r: Reference, unitPos: number) => boolean | null,
): { ranking: string[]; credited: Map<number, number> } | null {
  const credited = new Map<number, number>(); // ref index -> 1-based unit rank
  const ranking: string[] = [];
  for (let pos = 0; pos < units.length; pos++) {
    const candidates: { r: Reference; i: number }[] = [];
    for (let i = 0; i < refs.length; i++) {
      if (credited.has(i)) continue;
      const m = matches(refs[i]!, pos);
      if (m === null) return null;
      if (m) candidates.push({ r: refs[i]!, i });
    }
    candidates.sort((a, b) => Number(b.r.relevant) - Number(a.r.relevant) || b.r.grade - a.r.grade || a.i - b.i);
    const pick = candidates[0];
    if (pick) {
      credited.set(pick.i, pos + 1);
      ranking.push(`ref:${pick.i}`);
    } else ranking.push(`unit:${units[pos]}`);
  }
  return { ranking, credited };
}

/**
 * A test case's metadata.labels (src/judgments/eval-input.ts) checked: undefined when the row carries none (no judgments
 * file), else the labels; a malformed entry is an Error naming it (the rows were edited: never scored as unlabelled).
 */
export function queryLabelsOf(raw: unknown, where = 'metadata.labels'): QueryLabel[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) throw new Error(`${where}: expected a list of {doc, grade, source}, got ${JSON.stringify(raw).slice(0, 80)}`);
  return raw.map((x, i) => {
    const l = x as Partial<QueryLabel> | null;
    if (
      !l ||
      typeof l.doc !== 'string' ||
      !l.doc ||
      typeof l.grade !== 'number' ||
      !Number.isInteger(l.grade) ||
      l.grade < 0 ||
      l.grade > 3 ||
      !['chair', 'bootstrap', 'llm'].includes(l.source as string)
    )
      throw new Error(`${where}[${i}]: expected {doc, grade 0-3, source chair|bootstrap|llm}, got ${JSON.stringify(x).slice(0, 120)}`);
    return { doc: l.doc, grade: l.grade, source: l.source! };
  });
}

export interface RankOptions {
  /** Cutoff of the ordering-gap bucket and the measures; default 10. */
  k?: number;
  /**
   * The query's labels from a judgments file (the test case's metadata.labels: src/judgments/eval-input.ts), each the
   * effective label of its document (chair > bootstrap > llm). Given (even empty): the `+ labels` figures are computed
   * beside the strict ones; the strict figures never change. Judged@k, condensed nDCG@10 and bpref count them as judged.
   */
  labels?: readonly QueryLabel[];
}

/**
 * Ranking metrics of one query, or null when the query has no relevant reference (routing-only queries:
 * adversarial, technique_boundary; a graded-only query has no binary relevant item either).
 */
export function scoreRanking(
  golden: GoldenQuery,
  output: HarnessOutput,
  meta?: HarnessMetadata,
  opts: RankOptions = {},
): RetrievalScores | null {
  const refs = golden.expected ?? [];
  const relevantIdx = refs.map((r, i) => (r.relevant ? i : -1)).filter((i) => i >= 0);
  if (relevantIdx.length === 0) return null;
  const k = opts.k ?? 10;
  const level: 'chunk' | 'document' = refs.every((r) => r.chunk_id === undefined && r.passage_substring === undefined)
    ? 'document'
    : 'chunk';
  const hits = [...output.hits].sort((a, b) => a.rank - b.rank);

  // Units in rank order: chunks, or documents at the rank of their best chunk.
  const units: { id: string; hits: HarnessHit[] }[] = [];
  if (level === 'document') {
    const byDoc = new Map<string, { id: string; hits: HarnessHit[] }>();
    for (const h of hits) {
      const d = docOf(h);
      let u = byDoc.get(d);
      if (!u) {
        u = { id: d, hits: [] };
        byDoc.set(d, u);
        units.push(u);
      }
      u.hits.push(h);
    }
  } else {
    const seen = new Set<string>();
    for (const h of hits) {
      if (seen.has(h.chunkId)) continue;
      seen.add(h.chunkId);
      units.push({ id: h.chunkId, hits: [h] });
    }
  }

  // Credit each reference once, at the best-ranked unit that matches it.
  const { ranking, credited } = creditRanking(
    refs,
    units.map((u) => u.id),
    (r, pos) => units[pos]!.hits.some((h) => refMatchesHit(r, h, meta)),
  )!;

  const binary = new Map<string, number>(refs.map((r, i) => [`ref:${i}`, r.relevant ? 1 : 0]));
  const graded = new Map<string, number>(refs.map((r, i) => [`ref:${i}`, Math.max(0, r.grade)]));

  const relRanks = relevantIdx.map((i) => credited.get(i)).filter((x): x is number => x !== undefined);
  const bestRank = relRanks.length ? Math.min(...relRanks) : null;
  const lastRank = relRanks.length === relevantIdx.length ? Math.max(...relRanks) : null;

  // answer_contains: a top-k hit matching a labelled reference contains the phrase.
  let answerable: number | null = null;
  const labelled = refs.map((r, i) => ({ r, i })).filter(({ r }) => r.answer_contains !== undefined);
  if (labelled.length) {
    answerable = 0;
    outer: for (const u of units.slice(0, k)) {
      for (const h of u.hits) {
        for (const { r } of labelled) {
          if (refMatchesHit(r, h, meta) && (h.content ?? '').toLowerCase().includes(r.answer_contains!.toLowerCase())) {
            answerable = 1;
            break outer;
          }
        }
      }
    }
  }

  const scores: RetrievalScores = {
    recall_at_1: success_k(ranking, binary, 1),
    recall_at_3: success_k(ranking, binary, 3),
    recall_at_5: success_k(ranking, binary, 5),
    recall_at_10: success_k(ranking, binary, 10),
    trec_recall_at_10: recall_k(ranking, binary, 10),
    mrr: mrr_cut_k(ranking, binary, 10),
    ndcg_at_10: ndcg_cut_k(ranking, graded, 10),
    precision_at_5: P_k(ranking, binary, 5),
    ap_at_10: map_cut_k(ranking, binary, 10),
    found: bestRank === null ? 0 : 1,
    best_rank: bestRank,
    last_expected_rank: lastRank,
    answerable_at_10: answerable,
    relevant_refs: relevantIdx.length,
    level,
    bucket: bucketOf(golden, refs, relevantIdx, bestRank, level, hits, meta, k),
  };
  const stages = scoreStages(refs, level, hits, meta, binary, graded, scores);
  if (stages) scores.stages = stages;
  Object.assign(scores, labelScores(refs, units, ranking, level, meta, opts.labels));
  return scores;
}

/** The key a label of this query names its documents by: a path, a document id or a chunk id (src/judgments/file.ts docKey). */
export function labelKeyLevel(refs: readonly Reference[]): 'path' | 'doc' | 'chunk' {
  if (!refs.every((r) => r.chunk_id === undefined && r.passage_substring === undefined)) return 'chunk';
  return refs.some((r) => r.path !== undefined) ? 'path' : 'doc';
}

/**
 * Does a golden reference name this document key (a document not returned, so no hit to match)? A passage reference
 * without a resolution cannot tell: taken as yes, so a label never stands where the golden set may already say.
 */
function goldenNames(refs: readonly Reference[], doc: string, meta: HarnessMetadata | undefined): boolean {
  return refs.some((r) => {
    if (r.chunk_id !== undefined) return r.chunk_id === doc;
    if (r.passage_substring !== undefined) return meta?.resolution?.[r.passage_substring]?.includes(doc) ?? true;
    return r.doc_id === doc || r.path === doc;
  });
}

/**
 * Judged@10 / Judged@3 (ir_measures), condensed-list nDCG@10 and bpref over every label the row has, and, when a
 * judgments file was given, the `+ labels` measures (docs/judgments.md "Labels in an eval"):
 * - judged: each golden reference (any grade), a returned unit that matches a golden reference already credited at a
 *   better rank (judged by the golden set: no gain, as in the strict figures), and a returned unit whose document has a
 *   label of the judgments file (any grade, 0 included);
 * - the golden set above every label: a unit that matches a golden reference takes the reference's grade, never the
 *   label's; a label of a document no golden reference names counts with its grade (relevant for the binary measures
 *   from LABEL_RELEVANT_GRADE), returned or not (a label of a document this column did not return stays in Recall@10's
 *   denominator and nDCG's ideal, as a TREC qrel does).
 */
function labelScores(
  refs: readonly Reference[],
  units: readonly { id: string; hits: HarnessHit[] }[],
  ranking: readonly string[],
  level: 'chunk' | 'document',
  meta: HarnessMetadata | undefined,
  labels: readonly QueryLabel[] | undefined,
): Pick<RetrievalScores, 'judged_at_10' | 'judged_at_3' | 'condensed_ndcg_at_10' | 'bpref' | 'labelled'> {
  const key = level === 'chunk' ? 'chunk' : labelKeyLevel(refs);
  const byDoc = new Map((labels ?? []).map((l) => [l.doc, l]));
  const graded = new Map<string, number>();
  const binary = new Map<string, number>();
  refs.forEach((r, i) => {
    graded.set(`ref:${i}`, Math.max(0, r.grade));
    binary.set(`ref:${i}`, r.relevant ? 1 : 0);
  });
  const applied: QueryLabel[] = [];
  /** documents the golden set or a returned unit has already answered for */
  const taken = new Set<string>();
  units.forEach((u, pos) => {
    const id = ranking[pos]!;
    const doc = docKey(u.hits[0]!, key);
    taken.add(doc);
    if (id.startsWith('ref:')) return;
    if (u.hits.some((h) => refs.some((r) => refMatchesHit(r, h, meta)))) {
      graded.set(id, 0);
      binary.set(id, 0);
      return;
    }
    const l = byDoc.get(doc);
    if (!l) return;
    graded.set(id, l.grade);
    binary.set(id, l.grade >= LABEL_RELEVANT_GRADE ? 1 : 0);
    applied.push(l);
  });
  for (const l of labels ?? []) {
    if (taken.has(l.doc) || goldenNames(refs, l.doc, meta)) continue;
    graded.set(`label:${l.doc}`, l.grade);
    binary.set(`label:${l.doc}`, l.grade >= LABEL_RELEVANT_GRADE ? 1 : 0);
    applied.push(l);
  }
  const j = (k: number) => {
    const v = Judged_k(ranking, graded, k);
    return Number.isNaN(v) ? null : v;
  };
  const out: ReturnType<typeof labelScores> = {
    judged_at_10: j(10),
    judged_at_3: j(3),
    condensed_ndcg_at_10: condensed_ndcg_cut_k(ranking, graded, 10),
    bpref: bpref(ranking, binary),
  };
  if (labels) {
    const lab: LabelledScores = {
      recall_at_3: success_k(ranking, binary, 3),
      recall_at_10: success_k(ranking, binary, 10),
      trec_recall_at_10: recall_k(ranking, binary, 10),
      mrr: mrr_cut_k(ranking, binary, 10),
      ndcg_at_10: ndcg_cut_k(ranking, graded, 10),
      relevant: [...binary.values()].filter((v) => v === 1).length,
      applied: applied.length,
      unreviewed: applied.filter((l) => l.source !== 'chair').length,
    };
    out.labelled = lab;
  }
  return out;
}

/**
 * Per-stage scores of a reranked row (docs/metrics.md "Per-stage metrics"), from `diagnostics.rerank.firstStage` (the
 * first stage's order: fused, before the reranker), credited exactly as the final ranking is (document level: each
 * document at its best chunk):
 * - first_stage_recall_at_budget = success_k(first stage, budget): 1 when a relevant reference is among the
 *   candidates the reranker saw (at document level: the documents of the first `budget` candidate ids). The ceiling
 *   the reranker can reach: no order of the budget puts a relevant reference first when none is in it;
 * - first_stage_recall_at_3 = success_k(first stage, 3), first_stage_ndcg_at_10 = ndcg_cut_k(first stage, 10);
 * - rerank_gain_recall_at_3 = recall_at_3 - first_stage_recall_at_3 and rerank_gain_ndcg_at_10 = ndcg_at_10 -
 *   first_stage_ndcg_at_10: what the reranker's order changed, final minus first stage, on the same query.
 * null without a rerank block, or when some candidate id cannot be matched (an id that is neither a returned hit nor
 * resolvable: no number rather than a wrong one).
 */
function scoreStages(
  refs: Reference[],
  level: 'chunk' | 'document',
  hits: HarnessHit[],
  meta: HarnessMetadata | undefined,
  binary: Map<string, number>,
  graded: Map<string, number>,
  final: RetrievalScores,
): StageScores | null {
  const rr = meta?.diagnostics?.rerank;
  if (!rr || !Array.isArray(rr.firstStage) || !(rr.budget >= 1)) return null;
  const hitsById = new Map(hits.map((h) => [h.chunkId, h]));
  let units: string[];
  if (level === 'document') {
    units = [];
    const seen = new Set<string>();
    for (const id of rr.firstStage) {
      const d = candidateDoc(id, hitsById);
      if (d === null) return null;
      if (!seen.has(d)) units.push(d);
      seen.add(d);
    }
  } else units = [...new Set(rr.firstStage)];
  // a document unit's matching: through a returned hit of that document, else through the document id itself
  const repOf = new Map<string, string>(); // document -> one of its candidate ids
  if (level === 'document') for (const id of rr.firstStage) if (!repOf.has(candidateDoc(id, hitsById)!)) repOf.set(candidateDoc(id, hitsById)!, id);
  const byDoc = new Map<string, HarnessHit[]>();
  for (const h of hits) byDoc.set(h.documentId, [...(byDoc.get(h.documentId) ?? []), h]);
  const credited = creditRanking(refs, units, (r, pos) => {
    const u = units[pos]!;
    if (level === 'chunk') return refMatchesCandidate(r, u, level, hitsById, meta);
    const docHits = byDoc.get(u);
    if (docHits?.length) return docHits.some((h) => refMatchesHit(r, h, meta));
    return refMatchesCandidate(r, repOf.get(u)!, level, hitsById, meta);
  });
  if (!credited) return null;
  // the budget in units: the documents of the first `budget` candidate ids
  const budgetUnits = level === 'document' ? new Set(rr.firstStage.slice(0, rr.budget).map((id) => candidateDoc(id, hitsById)!)).size : Math.min(rr.budget, units.length);
  const fr = credited.ranking;
  const r3 = success_k(fr, binary, 3);
  const nd = ndcg_cut_k(fr, graded, 10);
  return {
    budget: rr.budget,
    first_stage_recall_at_budget: success_k(fr, binary, Math.max(1, budgetUnits)),
    first_stage_recall_at_3: r3,
    first_stage_ndcg_at_10: nd,
    rerank_gain_recall_at_3: final.recall_at_3 - r3,
    rerank_gain_ndcg_at_10: final.ndcg_at_10 - nd,
  };
}

/**
 * The blind-test framework's failure buckets ("Use failure_bucket first"), each row in exactly one:
 * - rank1_hit: a relevant reference at rank 1;
 * - topk_ordering_gap: a relevant reference in the top k (10) but not at rank 1;
 * - missing_expected_source: not in the top k, and every relevant passage substring resolves to no chunk of this index
 *   variant (the expected source is not in the index at all);
 * With a reranker (the row's diagnostics.rerank: firstStage in fused order, budget, optionally reranked):
 * - reranker_ordering_miss: the expected note reached the reranker's candidate budget (the first `budget` of
 *   firstStage) but did not land in the top k;
 * - rerank_budget_miss: the expected note is in the first-stage results (firstStage past the budget, a returned hit
 *   past the top k, or a channel's candidates) but not inside the reranker's candidate budget;
 * Without a reranker:
 * - first_stage_top10_miss: reranking is disabled and the expected note is below the top-k output (returned below
 *   rank k, or among a channel's first-stage candidates but cut before the returned list). Results files before the
 *   rerank buckets called this `candidate_budget_miss` (LEGACY_BUCKETS);
 * Either way:
 * - filtered_candidate_miss (filtered-vector miss): in no first-stage candidates, and the query used filters;
 * - candidate_generation_miss: in no first-stage candidates (neither BM25 nor vector found it, nor a team's first stage);
 * - not_diagnosed: the service reports no first stage (url:/module: services without diagnostics), or a candidate id
 *   cannot be matched to the references (prechunked ids at document level, passage substrings without resolution).
 */
function bucketOf(
  golden: GoldenQuery,
  refs: Reference[],
  relevantIdx: number[],
  bestRank: number | null,
  level: 'chunk' | 'document',
  hits: HarnessHit[],
  meta: HarnessMetadata | undefined,
  k = 10,
): FailureBucket {
  if (bestRank === 1) return 'rank1_hit';
  if (bestRank !== null && bestRank <= k) return 'topk_ordering_gap';
  const rel = relevantIdx.map((i) => refs[i]!);
  const res = meta?.resolution;
  if (
    bestRank === null &&
    res &&
    rel.every((r) => r.passage_substring !== undefined && r.chunk_id === undefined && (res[r.passage_substring]?.length ?? -1) === 0)
  ) {
    return 'missing_expected_source';
  }
  const d = meta?.diagnostics;
  const hitsById = new Map(hits.map((h) => [h.chunkId, h]));
  const channels = [...(d?.keywordCandidates ?? []), ...(d?.vectorCandidates ?? [])];
  const f = golden.filters;
  const filtered = !!f && Object.values(f).some((v) => (Array.isArray(v) ? v.length > 0 : v !== undefined && v !== ''));
  const rr = d?.rerank;
  if (rr && Array.isArray(rr.firstStage)) {
    const inBudget = anyMatch(rr.firstStage.slice(0, rr.budget), rel, level, hitsById, meta);
    if (inBudget === true) return 'reranker_ordering_miss';
    if (inBudget === null) return 'not_diagnosed';
    // returned below the top k but outside the budget: the final list is the reranked budget, then the first stage
    if (bestRank !== null) return 'rerank_budget_miss';
    const inFirst = anyMatch(rr.firstStage.slice(rr.budget), rel, level, hitsById, meta);
    if (inFirst === true) return 'rerank_budget_miss';
    if (inFirst === null) return 'not_diagnosed';
    const inChannels = anyMatch(channels, rel, level, hitsById, meta);
    if (inChannels === true) return 'rerank_budget_miss';
    if (inChannels === null) return 'not_diagnosed';
    return filtered ? 'filtered_candidate_miss' : 'candidate_generation_miss';
  }
  if (bestRank !== null) return 'first_stage_top10_miss';
  if (!channels.length) return 'not_diagnosed';
  const inChannels = anyMatch(channels, rel, level, hitsById, meta);
  if (inChannels === true) return 'first_stage_top10_miss';
  if (inChannels === null) return 'not_diagnosed';
  return filtered ? 'filtered_candidate_miss' : 'candidate_generation_miss';
}

export interface RoutingOptions {
  /**
   * no_results also passes when the service's best normalised relevance (routing.topRelevance) is below
   * this threshold (DES-058: "no results exceed a relevance threshold").
   */
  noResultsThreshold?: number;
}

/** Golden formats that have no routing field: their readers fill in `search`, which states nothing. */
const FORMATS_WITHOUT_ROUTING = new Set(['nq-csv', 'nq-json', 'beir', 'trec']);

/**
 * The route the golden entry states, or null when it states none: the reader filled the field in
 * (`origin.derived` lists expected_routing: a blind-test YAML or gold-set JSONL entry without it, a DES-058
 * entry without it), or the format has no routing field at all (NQ, BEIR, TREC). A DES-058 category with a
 * routing convention (technique_boundary, adversarial) keeps its route only when the entry carries it.
 * Entries built in code (no `origin`) state what they carry.
 */
export function statedRoute(golden: GoldenQuery): GoldenQuery['expected_routing'] | null {
  const origin = golden.origin;
  if (origin?.derived?.includes('expected_routing')) return null;
  if (origin && FORMATS_WITHOUT_ROUTING.has(origin.format) && golden.expected_routing === 'search') return null;
  return golden.expected_routing;
}

/** True when the golden entry states a routing expectation (a route, or expect_safety: true). */
export function routingChecked(golden: GoldenQuery): boolean {
  return statedRoute(golden) !== null || golden.expect_safety === true;
}

/**
 * Routing check of one query (DES-058), only where the golden entry states an expectation (else null: the
 * query's routing is not scored and counts in no routing accuracy). practice_bridge must route to the
 * Practice Bridge; no_results must return nothing, route to no_results, or stay below the threshold; search
 * must route to search with results. A query with expect_safety must also carry the safety flag.
 */
export function scoreRouting(golden: GoldenQuery, output: HarnessOutput, opts: RoutingOptions = {}): RoutingScores | null {
  const stated = statedRoute(golden);
  const safetyExpected = golden.expect_safety === true;
  if (stated === null && !safetyExpected) return null;
  const nHits = output.hits.length;
  const actual = output.routing?.route ?? (output.practice_bridge ? 'practice_bridge' : nHits ? 'search' : 'no_results');
  const bridge = output.practice_bridge === true || actual === 'practice_bridge';
  let ok = true;
  let reason: string;
  if (stated === null) {
    reason = `route ${actual} (no route stated)`;
  } else if (stated === 'practice_bridge') {
    ok = bridge;
    reason = ok ? 'routed to practice_bridge' : `expected practice_bridge, got ${actual}`;
  } else if (stated === 'no_results') {
    const top = output.routing?.topRelevance;
    const below = opts.noResultsThreshold !== undefined && top !== undefined && top < opts.noResultsThreshold;
    ok = actual === 'no_results' || nHits === 0 || below;
    reason = ok
      ? actual === 'no_results' || nHits === 0
        ? 'no results'
        : `top relevance ${top} below threshold ${opts.noResultsThreshold}`
      : `expected no_results, got ${actual} with ${nHits} hits` + (top !== undefined ? ` (top relevance ${top})` : '');
  } else {
    ok = actual === 'search' && !bridge && nHits > 0;
    reason = ok ? 'search results' : `expected search results, got ${actual} with ${nHits} hits`;
  }
  const safetyOk = safetyExpected ? output.safety === true : null;
  if (safetyExpected) reason += safetyOk ? '; safety flag raised' : '; safety flag missing';
  return {
    expected: stated ?? 'any',
    actual,
    practice_bridge: bridge,
    ok: ok && safetyOk !== false,
    safety_expected: safetyExpected,
    safety_ok: safetyOk,
    reason,
  };
}

const SENTENCE_END = /[.!?;:…。！？।॥"'”’»)\]*_`]$/u;

/**
 * Integrity of the top results (the docs-search promptfoo design): a chunk that stops mid-sentence (its last character is not
 * sentence-final punctuation or a closing bracket/quote) or leaves a ``` code fence open.
 */
export function checkIntegrity(output: HarnessOutput, top = 5): IntegrityIssue[] {
  // computed on the full content of the top 10 before the row was compacted (src/results/compact.ts)
  if (Array.isArray(output.integrity) && top <= 10) return output.integrity.filter((i) => i.rank <= top);
  const issues: IntegrityIssue[] = [];
  for (const h of [...output.hits].sort((a, b) => a.rank - b.rank).slice(0, top)) {
    const text = (h.content ?? '').trimEnd();
    const fences = text.split('\n').filter((l) => /^\s*(```|~~~)/.test(l)).length;
    if (fences % 2 === 1) issues.push({ rank: h.rank, chunkId: h.chunkId, issue: 'open_code_fence' });
    else if (text.length > 0 && !SENTENCE_END.test(text)) issues.push({ rank: h.rank, chunkId: h.chunkId, issue: 'cut_mid_sentence' });
  }
  return issues;
}

/** Category -> a key suffix mathjs can parse ("technique-boundary" -> "technique_boundary"). */
export function categoryKey(category: string): string {
  const k = category.toLowerCase().replace(/[^a-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  return /^[a-z]/.test(k) ? k : `c_${k || 'none'}`;
}

/** The ranking measures that get per-category keys and derived means. */
export const RANK_KEYS = [
  'recall_at_1',
  'recall_at_3',
  'recall_at_5',
  'recall_at_10',
  'trec_recall_at_10',
  'mrr',
  'ndcg_at_10',
  'precision_at_5',
  'ap_at_10',
  'found',
] as const;

/**
 * namedScores of the rank assertion (SUMS per column in promptfoo; derived metrics divide by the counters):
 * every RANK_KEYS measure overall and `<key>_<category>`, `n_ranked` and `n_<category>` (queries scored),
 * found_rank / last_expected_rank with their counters, answerable_at_10 with n_answerable, and one
 * `bucket_<name>` = 1; on a reranked row the per-stage measures (STAGE_KEYS) with n_rerank_ranked = 1 (a row without a
 * reranker has none of them, not zeros).
 */
export function rankNamedScores(category: string, s: RetrievalScores): Record<string, number> {
  const c = categoryKey(category);
  const out: Record<string, number> = {
    [VIEW_KEYS.recall_at_3]: s.recall_at_3,
    [VIEW_KEYS.mrr]: s.mrr,
    [VIEW_KEYS.ndcg_at_10]: s.ndcg_at_10,
    [VIEW_KEYS.trec_recall_at_10]: s.trec_recall_at_10,
    n_ranked: 1,
    [`n_${c}`]: 1,
    [`bucket_${s.bucket}`]: 1,
  };
  for (const key of RANK_KEYS) {
    out[key] = s[key];
    out[`${key}_${c}`] = s[key];
  }
  if (s.best_rank !== null) out.found_rank = s.best_rank;
  if (s.last_expected_rank !== null) {
    out.last_expected_rank = s.last_expected_rank;
    out.n_all_found = 1;
  }
  if (s.answerable_at_10 !== null) {
    out.answerable_at_10 = s.answerable_at_10;
    out.n_answerable = 1;
  }
  // Judged@10 / Judged@3 (ir_measures) over the queries with a non-empty ranking (n_share_judged), overall and per
  // category; not `judged_*` (that prefix is the relevance judge's family: src/results/read.ts tells rows judged by it)
  if (typeof s.judged_at_10 === 'number' && typeof s.judged_at_3 === 'number') {
    out.share_judged_at_10 = s.judged_at_10;
    out.share_judged_at_3 = s.judged_at_3;
    out.n_share_judged = 1;
    out[`share_judged_at_10_${c}`] = s.judged_at_10;
    out[`share_judged_at_3_${c}`] = s.judged_at_3;
    out[`n_share_judged_${c}`] = 1;
  }
  if (typeof s.condensed_ndcg_at_10 === 'number') out.condensed_ndcg_at_10 = s.condensed_ndcg_at_10;
  if (typeof s.bpref === 'number') out.bpref = s.bpref;
  // the `+ labels` figures (a judgments file was given), beside the strict ones, with their own counter
  if (s.labelled) {
    for (const k of LABELLED_KEYS) out[`labelled_${k}`] = s.labelled[k];
    out.n_labelled = 1;
  }
  if (s.stages) {
    for (const key of STAGE_KEYS) out[key] = s.stages[key];
    // the final measures of the reranked rows beside the first stage's: the gain is their difference. A gain is not
    // recorded as a named score: promptfoo's metrics dialog shows every named score as a pass rate, coloured red below
    // 50%, and a gain of -0.03 read as a red "Pass -2.71%" (the column header says the gain, signed: assertions/gate.ts)
    out.reranked_recall_at_3 = s.recall_at_3;
    out.reranked_ndcg_at_10 = s.ndcg_at_10;
    out.n_rerank_ranked = 1;
  }
  return out;
}

/** The `+ labels` measures recorded as `labelled_<key>` named scores (counter n_labelled) and in the report. */
export const LABELLED_KEYS = ['recall_at_3', 'recall_at_10', 'trec_recall_at_10', 'mrr', 'ndcg_at_10'] as const;

/**
 * The first stage's measures of a reranked row (StageScores) recorded as named scores with the counter n_rerank_ranked,
 * beside reranked_recall_at_3 / reranked_ndcg_at_10 (the same row's final measures): every one a 0..1 share. The gains
 * (final minus first stage) are computed from them (src/results/summary.ts), never recorded.
 */
export const STAGE_KEYS = ['first_stage_recall_at_budget', 'first_stage_recall_at_3', 'first_stage_ndcg_at_10'] as const;

/**
 * The key metrics under names that sort before every other namedScore (promptfoo's web UI lists metric chips
 * with localeCompare and shows the first 10 of a row or column before "Show more..."; its metrics dialog sorts with
 * tanstack's alphanumeric order, where a leading digit sorts LAST): `#` then a digit comes first in both, in the
 * reading order Success@3, MRR@10, nDCG@10, routing, Recall@10. Sums per column with their counts, so the column header
 * shows e.g. "#1 Success@3 57.81% (37.00/64.00)" = the mean. One name per measure (docs/metrics.md "Names"): Success@3
 * is DES-058's "Recall@3" (a relevant result in the top 3), Recall@10 the share of the expected documents in the top 10
 * (the shipping criteria's). Never used in derivedMetrics (they are not mathjs names); the avg_* keys stay for the gate.
 */
export const VIEW_KEYS = { recall_at_3: '#1 Success@3', mrr: '#2 MRR@10', ndcg_at_10: '#3 nDCG@10', routing_ok: '#4 routing', trec_recall_at_10: '#5 Recall@10' } as const;

/**
 * namedScores of the routing assertion: routing_ok overall and per category with n_routing counters and
 * safety_ok / n_safety, only for queries whose golden entry states a routing expectation (r non-null); the
 * provider's latency_ms / n_latency for every query (the whole pipeline: rerank included; the rerank stage's own time
 * is rerankNamedScores').
 */
export function routingNamedScores(category: string, r: RoutingScores | null, latencyMs?: number): Record<string, number> {
  const c = categoryKey(category);
  const out: Record<string, number> = {};
  if (r) {
    out.routing_ok = r.ok ? 1 : 0;
    out.n_routing = 1;
    out[`routing_ok_${c}`] = r.ok ? 1 : 0;
    out[`n_routing_${c}`] = 1;
    out[VIEW_KEYS.routing_ok] = r.ok ? 1 : 0;
  }
  if (r?.safety_expected) {
    out.safety_ok = r.safety_ok ? 1 : 0;
    out.n_safety = 1;
  }
  if (latencyMs !== undefined && Number.isFinite(latencyMs)) {
    out.latency_ms = latencyMs;
    out.n_latency = 1;
  }
  return out;
}

/**
 * namedScores of a reranked row's rerank stage (the rank assertion records them on every row with diagnostics.rerank,
 * routing-only queries too): rerank_ms and rerank_requests with the counter n_reranked, rerank_cost_usd with
 * n_rerank_cost when the price is known; n_rerank_cached (every score from the score cache) or n_rerank_partly_cached,
 * and on such a row rerank_uncached_cost_usd with n_rerank_uncached_cost (what it would have cost uncached, at list price).
 * {} without a reranker.
 */
export function rerankNamedScores(rerank: RerankCost | null): Record<string, number> {
  const out: Record<string, number> = {};
  if (!rerank) return out;
  out.n_reranked = 1;
  if (rerank.ms !== undefined) out.rerank_ms = rerank.ms;
  if (rerank.requests !== undefined) out.rerank_requests = rerank.requests;
  if (rerank.costUsd !== undefined) {
    out.rerank_cost_usd = rerank.costUsd;
    out.n_rerank_cost = 1;
  }
  // read from the score cache: wholly (no request sent: the stage's time is a cache read) or partly
  const cached = (rerank.cached ?? 0) > 0;
  if (cached && rerank.requests === 0) out.n_rerank_cached = 1;
  else if (cached) out.n_rerank_partly_cached = 1;
  // a row that read the cache: what it would have cost without it, at list price
  if (cached && rerank.uncachedCostUsd !== undefined) {
    out.rerank_uncached_cost_usd = rerank.uncachedCostUsd;
    out.n_rerank_uncached_cost = 1;
  }
  return out;
}

/** The rerank stage's own latency, requests and cost of one row (diagnostics.rerank), as the report and named scores read them. */
export interface RerankCost {
  reranker: string | null;
  budget: number;
  ms?: number;
  requests?: number;
  cached?: number;
  costUsd?: number;
  /** The cached passages' rerank at list price, as if sent (diagnostics.rerank.uncachedCostUsd). */
  uncachedCostUsd?: number;
}

/** The row's rerank latency and cost, or null when no reranker ran (no diagnostics.rerank). */
export function rerankCostOf(meta: HarnessMetadata | null | undefined): RerankCost | null {
  const rr = meta?.diagnostics?.rerank;
  if (!rr || typeof rr !== 'object' || typeof rr.budget !== 'number') return null;
  const num = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : undefined);
  const out: RerankCost = { reranker: typeof rr.reranker === 'string' ? rr.reranker : null, budget: rr.budget };
  const ms = num(rr.ms);
  const requests = num(rr.requests);
  const cached = num(rr.cached);
  const cost = num(rr.costUsd);
  const uncached = num((rr as { uncachedCostUsd?: unknown }).uncachedCostUsd);
  if (ms !== undefined) out.ms = ms;
  if (requests !== undefined) out.requests = requests;
  if (cached !== undefined) out.cached = cached;
  if (cost !== undefined) out.costUsd = cost;
  if (uncached !== undefined) out.uncachedCostUsd = uncached;
  return out;
}
