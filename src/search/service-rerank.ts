/**
 * The `diagnostics.rerank` block a team's own service may return (docs/search.md#a-reranked-service): a url: service in
 * its JSON answer (`diagnostics.rerank`, camelCase or snake_case keys), a module: service on its SearchResponse. With it,
 * a reranked service's misses get the same failure buckets (rerank-budget miss, reranker-ordering miss) and per-stage
 * metrics as rankgate's own rerank stage (src/search/rerank-step.ts); without it, today's behaviour.
 *
 * Never trusted blindly: every field is checked, and a wrong one is one line naming the field (the row then errors,
 * never a pass or a quality drop). Only the documented fields are kept (ids, no contents).
 */
import type { RerankDiagnostics, SearchResponse } from './types.ts';

/** Most ids a first stage may report (a bigger pool is a bug in the service, not a first stage). */
export const MAX_FIRST_STAGE = 10_000;
const MAX_ID_CHARS = 1_000;
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
export function parseServiceRerank(raw: unknown, where = 'diagnostics.rerank'): RerankDiagnostics | undefined {
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
  if (typeof budget !== 'number' || !Number.isInteger(budget) || budget < 1 || budget > MAX_FIRST_STAGE) bad('budget', `a positive integer of at most ${MAX_FIRST_STAGE} (the candidates the reranker saw)`, budget);
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
  for (const k of ['ms', 'requests', 'cached', 'searchUnits', 'tokens', 'costUsd', 'uncachedCostUsd'] as const) {
    const v = o[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(k, 'a finite number >= 0', v);
    if (k !== 'ms' && k !== 'costUsd' && k !== 'uncachedCostUsd' && k !== 'searchUnits' && !Number.isInteger(v)) bad(k, 'a whole number >= 0', v);
    out[k] = v as number;
  }
  return out;
}

/**
 * A module: service's response with its `diagnostics` checked: an object or nothing, and its `rerank` block validated
 * (parseServiceRerank) and kept as validated. `where` names the service in the one-line error.
 */
export function withServiceRerank(res: SearchResponse, where: string): SearchResponse {
  const d = res.diagnostics as unknown;
  if (d === undefined || d === null) return res;
  if (typeof d !== 'object' || Array.isArray(d)) throw new Error(`${where}: expected an object such as {rerank: {...}}, got ${show(d)} (${DOC})`);
  const rerank = parseServiceRerank((d as { rerank?: unknown }).rerank, `${where}.rerank`);
  if (!rerank) return res;
  return { ...res, diagnostics: { ...res.diagnostics, rerank } };
}
