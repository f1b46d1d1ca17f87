/**
 * The `diagnostics.rerank` block a team's own service may return (docs/search.md#a-reranked-service): a url: service in
 * its JSON answer (`diagnostics.rerank`, camelCase or snake_case keys), a module: service on its SearchResponse. With it,
 * a reranked service's misses get the same failure buckets (rerank-budget miss, reranker-ordering miss) and per-stage
 * metrics as rankgate's own rerank stage (src/search/rerank-step.ts); without it, today's behaviour.
 *
 * Never trusted blindly: every field is checked, and a wrong one is one line naming the field (the row then errors,
 * never a pass or a quality drop). Only the documented fields are kept (ids, no contents). Beyond each field's type,
 * the block must agree with itself and with the results it came with (what the per-stage metrics and the reranker's
 * gain are computed from; a block that contradicts them would forge a gain):
 * - `budget` <= the ids of `firstStage` (the reranker cannot have seen more candidates than the first stage gave it;
 *   0 only for an empty first stage);
 * - `reranked` ids among the first `budget` of `firstStage`, each once;
 * - the returned results are the block's final order: the first min(results, |firstStage|) of them are ids of
 *   `firstStage` (a reranker only reorders its first stage), in the order `reranked` (when given), then the rest of
 *   `firstStage` past the budget in first-stage order;
 * - `ms` <= the call's deadline (a url: service's timeoutMs, else MAX_STAGE_MS), `requests` and `searchUnits` <=
 *   max(budget, 1), `cached` <= budget, `tokens` <= MAX_TOKENS, `costUsd` <= MAX_COST_USD: finite and bounded, never 1e300.
 */
import type { RerankDiagnostics, SearchResponse } from './types.ts';

/** Most ids a first stage may report (a bigger pool is a bug in the service, not a first stage). */
export const MAX_FIRST_STAGE = 10_000;
const MAX_ID_CHARS = 1_000;
/** The longest a rerank stage may report for one query when no call deadline is known (a module:): 10 minutes. */
export const MAX_STAGE_MS = 600_000;
/** Most USD one query's rerank stage may report (a list-price reranker costs ~$0.002 a query; an LLM's, cents). */
export const MAX_COST_USD = 10;
/** Most tokens one query's rerank stage may report. */
export const MAX_TOKENS = 100_000_000;
const MAX_NAME_CHARS = 200;
const DOC = 'docs/search.md#a-reranked-service';

/** snake_case spellings a url: service may use -> the field. */
const ALIASES: Record<string, string> = { first_stage: 'firstStage', search_units: 'searchUnits', cost_usd: 'costUsd', uncached_cost_usd: 'uncachedCostUsd' };
const FIELDS = ['reranker', 'budget', 'firstStage', 'reranked', 'ms', 'requests', 'cached', 'searchUnits', 'tokens', 'costUsd', 'uncachedCostUsd'];

const show = (v: unknown) => {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

/**
 * Validate a service's `diagnostics.rerank` (`where` names it in the message, e.g. "POST http://x/search: diagnostics.rerank").
 * undefined/null: no block (no reranker reported). Throws an Error of one line naming the field otherwise.
 */
export function parseServiceRerank(
  raw: unknown,
  where = 'diagnostics.rerank',
  /** The results the block came with (their chunk and document ids, in order), checked against it; the call's deadline. */
  ctx: { hits?: readonly { chunkId: string; documentId?: string }[]; maxMs?: number } = {},
): RerankDiagnostics | undefined {
  if (raw === undefined || raw === null) return undefined;
  const bad = (field: string, expected: string, got: unknown): never => {
    throw new Error(`${where}${field ? `.${field}` : ''}: expected ${expected}, got ${show(got)} (${DOC})`);
  };
  if (typeof raw !== 'object' || Array.isArray(raw)) bad('', 'an object {firstStage, budget, reranked?, reranker?}', raw);
  const o: Record<string, unknown> = {};
  for (const [k0, v] of Object.entries(raw as Record<string, unknown>)) {
    const k = ALIASES[k0] ?? k0;
    if (!FIELDS.includes(k)) throw new Error(`${where}.${k0}: unknown field (expected ${FIELDS.join(', ')}) (${DOC})`);
    o[k] = v;
  }
  const ids = (field: string, v: unknown, max: number): string[] => {
    if (!Array.isArray(v)) bad(field, 'an array of result ids (strings)', v);
    const a = v as unknown[];
    if (a.length > max) throw new Error(`${where}.${field}: ${a.length} ids, more than ${max} (${DOC})`);
    const seen = new Set<string>();
    a.forEach((id, i) => {
      if (typeof id !== 'string' || !id || id.length > MAX_ID_CHARS) bad(`${field}[${i}]`, `a result id (a non-empty string of at most ${MAX_ID_CHARS} characters)`, id);
      if (seen.has(id as string)) throw new Error(`${where}.${field}[${i}]: id ${show(id)} appears twice (${DOC})`);
      seen.add(id as string);
    });
    return a as string[];
  };
  if (o.firstStage === undefined) throw new Error(`${where}.firstStage: missing (the result ids of the first stage in its order, before the reranker) (${DOC})`);
  const firstStage = ids('firstStage', o.firstStage, MAX_FIRST_STAGE);
  const budget = o.budget;
  // 0 only for an empty first stage (a query with no candidates: the reranker saw none)
  const empty = firstStage.length === 0 && budget === 0;
  if (!empty && (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1 || budget > MAX_FIRST_STAGE)) bad('budget', `a positive integer of at most ${MAX_FIRST_STAGE} (the candidates the reranker saw; 0 only with an empty firstStage)`, budget);
  if ((budget as number) > firstStage.length) {
    throw new Error(`${where}.budget: ${budget} is more than the ${firstStage.length} id${firstStage.length === 1 ? '' : 's'} of firstStage: the reranker cannot have seen more candidates than the first stage gave it (report the number it saw) (${DOC})`);
  }
  const out: RerankDiagnostics = { budget: budget as number, firstStage };
  if (o.reranker !== undefined) {
    if (typeof o.reranker !== 'string' || !o.reranker.trim() || o.reranker.length > MAX_NAME_CHARS) bad('reranker', `a name (a non-empty string of at most ${MAX_NAME_CHARS} characters)`, o.reranker);
    out.reranker = o.reranker as string;
  }
  if (o.reranked !== undefined) {
    const rr = ids('reranked', o.reranked, budget as number);
    const pool = new Set(firstStage.slice(0, budget as number));
    rr.forEach((id, i) => {
      if (!pool.has(id)) throw new Error(`${where}.reranked[${i}]: id ${show(id)} is not among the first ${budget} (budget) ids of firstStage: the reranker can only reorder its budget (${DOC})`);
    });
    out.reranked = rr;
  }
  const maxMs = ctx.maxMs ?? MAX_STAGE_MS;
  const limits: Record<'ms' | 'requests' | 'cached' | 'searchUnits' | 'tokens' | 'costUsd' | 'uncachedCostUsd', [number, string]> = {
    ms: [maxMs, `${maxMs} ms (${ctx.maxMs !== undefined ? "the call's deadline, timeoutMs" : 'MAX_STAGE_MS'}: the stage ran inside the call)`],
    requests: [Math.max(1, budget as number), `the budget (${budget}: at most one request a candidate, or 1)`],
    cached: [budget as number, `the budget (${budget})`],
    searchUnits: [Math.max(1, budget as number), `the budget (${budget}, or 1)`],
    tokens: [MAX_TOKENS, `${MAX_TOKENS}`],
    costUsd: [MAX_COST_USD, `${MAX_COST_USD} (USD for one query)`],
    uncachedCostUsd: [MAX_COST_USD, `${MAX_COST_USD} (USD for one query)`],
  };
  for (const k of ['ms', 'requests', 'cached', 'searchUnits', 'tokens', 'costUsd', 'uncachedCostUsd'] as const) {
    const v = o[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(k, 'a finite number >= 0', v);
    if (k !== 'ms' && k !== 'costUsd' && k !== 'uncachedCostUsd' && k !== 'searchUnits' && !Number.isInteger(v)) bad(k, 'a whole number >= 0', v);
    const [max, what] = limits[k];
    if ((v as number) > max) bad(k, `a number of at most ${what}`, v);
    out[k] = v as number;
  }
  if (ctx.hits) checkFinalOrder(out, ctx.hits, where);
  return out;
}

/**
 * The returned results against the block (see the header): the first min(results, |firstStage|) are first-stage ids,
 * in the block's final order. A result is placed by its chunk id, else by its document id or the part of its chunk id
 * before `#` (a first stage of documents), as the buckets match candidates.
 */
function checkFinalOrder(rr: RerankDiagnostics, hits: readonly { chunkId: string; documentId?: string }[], where: string): void {
  const fsIndex = new Map<string, number>();
  rr.firstStage.forEach((id, i) => fsIndex.has(id) || fsIndex.set(id, i));
  const reIndex = new Map((rr.reranked ?? []).map((id, i) => [id, i]));
  // each first-stage position's place in the final order: [group, index] (group 0: the budget, 1: past it)
  const place = (i: number): [number, number | null] => {
    if (i >= rr.budget) return [1, i];
    const id = rr.firstStage[i]!;
    return [0, rr.reranked ? (reIndex.get(id) ?? null) : null];
  };
  const n = Math.min(hits.length, rr.firstStage.length);
  let last: [number, number | null] = [0, -1];
  let lastAt = -1;
  for (let k = 0; k < n; k++) {
    const h = hits[k]!;
    const i = fsIndex.get(h.chunkId) ?? (h.documentId !== undefined ? fsIndex.get(h.documentId) : undefined) ?? fsIndex.get(h.chunkId.split('#')[0]!);
    if (i === undefined) {
      throw new Error(`${where}: result ${k + 1} (${show(h.chunkId)}) is not among the ids of firstStage: a reranker only reorders its first stage, so the results and the block contradict each other (${DOC})`);
    }
    const p = place(i);
    const back = p[0] < last[0] || (p[0] === last[0] && p[1] !== null && last[1] !== null && p[1] < last[1]);
    if (back) {
      const rule = p[0] < last[0] ? 'a result from inside the budget after one from past it' : p[0] === 1 ? 'the results past the budget out of first-stage order' : 'the budget out of the order of reranked';
      throw new Error(`${where}: results ${lastAt + 1} and ${k + 1} (${show(hits[lastAt]!.chunkId)}, ${show(h.chunkId)}) are not in the block's final order (reranked, then firstStage past the budget): ${rule} (${DOC})`);
    }
    if (p[1] !== null || p[0] !== last[0]) {
      last = p;
      lastAt = k;
    }
  }
}

/**
 * A module: service's response with its `diagnostics` checked: an object or nothing, and its `rerank` block validated
 * (parseServiceRerank) and kept as validated. `where` names the service in the one-line error.
 */
export function withServiceRerank(res: SearchResponse, where: string, maxMs?: number): SearchResponse {
  const d = res.diagnostics as unknown;
  if (d === undefined || d === null) return res;
  if (typeof d !== 'object' || Array.isArray(d)) throw new Error(`${where}: expected an object such as {rerank: {...}}, got ${show(d)} (${DOC})`);
  const rerank = parseServiceRerank((d as { rerank?: unknown }).rerank, `${where}.rerank`, { hits: Array.isArray(res.hits) ? res.hits : [], maxMs });
  if (!rerank) return res;
  return { ...res, diagnostics: { ...res.diagnostics, rerank } };
}
