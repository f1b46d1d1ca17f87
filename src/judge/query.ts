/**
 * Judged metrics of one query (issue 7 / DES-058 "Evaluation Judge").
 *
 * The top-10 results are walked in rank order exactly as the strict scorer does (src/results/score.ts):
 * chunk units, or document units (each at its best chunk) when every reference names a document.
 * A unit that matches a not-yet-credited expected reference (chunk id, resolved or verbatim
 * passage substring, doc id, path) keeps the strict credit of that reference. Every other unit goes to
 * the judge with the query, the expected passage substrings and the unit's content (best chunk):
 *   HIGH -> grade 3, relevant; PARTIAL -> grade 1, not relevant (DES-058's high/partial rule);
 *   NOT_RELEVANT -> grade 0; judge error -> grade 0 and counted in `errors` (never relevant).
 * The measures then run over the combined judgments with src/metrics:
 *   judged_recall_at_k = success_k (k = 1, 3, 5, 10), judged_mrr = mrr_cut_k(10),
 *   judged_ndcg_at_10 = ndcg_cut_k(10) with gain = grade (the ideal ranking includes judged items).
 * The strict metrics are untouched: this is a second family beside them.
 */
import { mrr_cut_k, ndcg_cut_k, success_k } from '../metrics/index.ts';
import type { GoldenQuery, Reference } from '../golden/schema.ts';
import type { Judge, Judgement } from './judge.ts';
import type { RelevanceVerdict } from './prompt.ts';

export interface JudgeHit {
  rank: number;
  chunkId: string;
  documentId: string;
  content: string;
  path?: string;
}

export const VERDICT_GRADE: Record<RelevanceVerdict, number> = { HIGH: 3, PARTIAL: 1, NOT_RELEVANT: 0 };

export interface JudgedItem {
  rank: number;
  unit: string;
  /** Matched expected reference index, when the unit matched one (not judged). */
  ref?: number;
  verdict?: RelevanceVerdict | null;
  error?: string;
  cached?: boolean;
  similarity?: number;
}

export interface JudgedScores {
  judged_recall_at_1: number;
  judged_recall_at_3: number;
  judged_recall_at_5: number;
  judged_recall_at_10: number;
  judged_mrr: number;
  judged_ndcg_at_10: number;
  /** Best rank of a relevant unit (strict reference or HIGH verdict) in the top 10, or null. */
  judged_best_rank: number | null;
  judged: number;
  high: number;
  partial: number;
  not_relevant: number;
  errors: number;
  calls: number;
  cache_hits: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  heuristic: boolean;
  items: JudgedItem[];
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

function refMatches(ref: Reference, hit: JudgeHit, resolution?: Record<string, string[]>): boolean {
  if (ref.chunk_id !== undefined) return hit.chunkId === ref.chunk_id;
  if (ref.passage_substring !== undefined) {
    const resolved = resolution?.[ref.passage_substring];
    if (resolved) return resolved.includes(hit.chunkId);
    return norm(hit.content ?? '').includes(norm(ref.passage_substring));
  }
  if (ref.doc_id !== undefined) return hit.documentId === ref.doc_id;
  if (ref.path !== undefined) return hit.path === ref.path || hit.documentId === ref.path;
  return false;
}

/** Judged scores of one query, or null when it has no relevant reference (routing-only queries). */
export async function judgeQuery(
  judge: Judge,
  golden: GoldenQuery,
  hits: readonly JudgeHit[],
  opts: { resolution?: Record<string, string[]>; k?: number } = {},
): Promise<JudgedScores | null> {
  const refs = golden.expected ?? [];
  if (!refs.some((r) => r.relevant)) return null;
  const k = opts.k ?? 10;
  const level = refs.every((r) => r.chunk_id === undefined && r.passage_substring === undefined) ? 'document' : 'chunk';
  const sorted = [...hits].sort((a, b) => a.rank - b.rank || a.chunkId.localeCompare(b.chunkId));
  const units: { id: string; hits: JudgeHit[] }[] = [];
  const byId = new Map<string, { id: string; hits: JudgeHit[] }>();
  for (const h of sorted) {
    const id = level === 'document' ? h.documentId : h.chunkId;
    let u = byId.get(id);
    if (!u) {
      if (units.length >= k) continue;
      u = { id, hits: [] };
      byId.set(id, u);
      units.push(u);
    }
    u.hits.push(h);
  }

  const expectedText = refs.filter((r) => r.passage_substring !== undefined).sort((a, b) => Number(b.relevant) - Number(a.relevant)).map((r) => r.passage_substring!);
  const credited = new Set<number>();
  const items: JudgedItem[] = [];
  const pending: Promise<void>[] = [];
  const byContent = new Map<string, Promise<Judgement<RelevanceVerdict>>>();
  units.forEach((u, pos) => {
    const pick = refs
      .map((r, i) => ({ r, i }))
      .filter(({ r, i }) => !credited.has(i) && u.hits.some((h) => refMatches(r, h, opts.resolution)))
      .sort((a, b) => Number(b.r.relevant) - Number(a.r.relevant) || b.r.grade - a.r.grade || a.i - b.i)[0];
    if (pick) {
      credited.add(pick.i);
      items.push({ rank: pos + 1, unit: u.id, ref: pick.i });
      return;
    }
    const item: JudgedItem = { rank: pos + 1, unit: u.id };
    items.push(item);
    const content = u.hits[0]!.content ?? '';
    // The same text twice (overlapping duplicates) is judged once.
    let p = byContent.get(content);
    if (!p) {
      p = judge.relevance({ query: golden.query, expected: expectedText, result: content, rank: pos + 1 });
      byContent.set(content, p);
    }
    pending.push(
      p.then((j) => {
        item.verdict = j.verdict;
        if (j.error) item.error = j.error;
        item.cached = j.cached;
        if (j.similarity !== undefined) item.similarity = j.similarity;
      }),
    );
  });
  const judgements = [...byContent.values()];
  await Promise.all(pending);
  const done = await Promise.all(judgements);

  const ranking: string[] = [];
  const binary = new Map<string, number>();
  const graded = new Map<string, number>();
  refs.forEach((r, i) => {
    binary.set(`ref:${i}`, r.relevant ? 1 : 0);
    graded.set(`ref:${i}`, Math.max(0, r.grade));
  });
  let best: number | null = null;
  for (const it of items) {
    if (it.ref !== undefined) {
      ranking.push(`ref:${it.ref}`);
      if (refs[it.ref]!.relevant) best ??= it.rank;
      continue;
    }
    const id = `judged:${it.unit}`;
    ranking.push(id);
    const g = it.verdict ? VERDICT_GRADE[it.verdict] : 0;
    graded.set(id, g);
    binary.set(id, it.verdict === 'HIGH' ? 1 : 0);
    if (it.verdict === 'HIGH') best ??= it.rank;
  }
  const judgedItems = items.filter((i) => i.ref === undefined);
  return {
    judged_recall_at_1: success_k(ranking, binary, 1),
    judged_recall_at_3: success_k(ranking, binary, 3),
    judged_recall_at_5: success_k(ranking, binary, 5),
    judged_recall_at_10: success_k(ranking, binary, 10),
    judged_mrr: mrr_cut_k(ranking, binary, 10),
    judged_ndcg_at_10: ndcg_cut_k(ranking, graded, 10),
    judged_best_rank: best,
    judged: judgedItems.length,
    high: judgedItems.filter((i) => i.verdict === 'HIGH').length,
    partial: judgedItems.filter((i) => i.verdict === 'PARTIAL').length,
    not_relevant: judgedItems.filter((i) => i.verdict === 'NOT_RELEVANT').length,
    errors: judgedItems.filter((i) => !i.verdict).length,
    calls: done.filter((j) => j.usage).length,
    cache_hits: done.filter((j) => j.cached).length,
    input_tokens: done.reduce((s, j) => s + (j.usage?.inputTokens ?? 0), 0),
    output_tokens: done.reduce((s, j) => s + (j.usage?.outputTokens ?? 0), 0),
    cost_usd: done.reduce((s, j) => s + (j.usage?.costUsd ?? 0), 0),
    heuristic: judge.mode === 'similarity',
    items,
  };
}
