/**
 * rankgate's search defaults, and which settings of a provider config change what is searched: the "another provider
 * config" note of a baseline (src/gate/baseline.ts) and the column a baseline applies to compare only those. A default
 * made explicit (a sweep writes `weights: {keyword: 1, vector: 1}`), a label, the sweep's marker and run-time settings
 * (time-outs, workers, where the index lives) are the same search.
 */
import type { SearchParams } from './types.ts';

export const DEFAULT_SEARCH_PARAMS: Readonly<SearchParams> = Object.freeze({
  mode: 'hybrid',
  keywordScorer: 'bm25',
  bm25K1: 1.2,
  bm25B: 0.75,
  vectorSearch: 'hnsw',
  efSearch: 100,
  rrfK: 60,
  weights: Object.freeze({ keyword: 1, vector: 1 }) as SearchParams['weights'],
  candidates: 50,
  topK: 10,
  chunkSize: 300,
  embedder: 'use-lite',
  routing: true,
});

/** The rerank stage's default budget (src/search/rerank-step.ts DEFAULT_RERANK_K, which re-exports this one). */
export const RERANK_K = 50;

/** Provider settings (and report keys) that never change what is searched. */
const NOT_SEARCHED = new Set([
  'label',
  'sweep',
  'basePath',
  'timeoutMs',
  'unreachableAfter',
  'maxResponseBytes',
  'corpusFormat',
  'autoIngest',
  'databaseUrl',
  'dataDir',
  'warmup',
  'worker',
  'preflight',
]);

/** "No reranker" and "no expansion" spelled any way rankgate accepts. */
const isOff = (v: unknown) => v === undefined || v === null || v === false || v === 'off' || v === 'none';

/**
 * The settings of a provider config (or a report's `{provider, label, ...config}`) that decide what is searched, with
 * rankgate's defaults filled in for its own service (a `module:` or `url:` service has its own defaults: only what is
 * given counts there). The provider id of rankgate's provider counts as one, however its path is spelled.
 */
export function searchedSettings(config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) {
    if (NOT_SEARCHED.has(k)) continue;
    if ((k === 'rerank' || k === 'expansion') && isOff(v)) continue;
    out[k] = v;
  }
  if (typeof out.provider === 'string' && /(^|[\\/:])providers[\\/]search\.(ts|js)$/.test(out.provider)) out.provider = 'rankgate:providers/search';
  const ours = out.module === undefined && out.url === undefined;
  if (ours) for (const [k, v] of Object.entries(DEFAULT_SEARCH_PARAMS)) if (out[k] === undefined) out[k] = v;
  if (ours && out.weights && typeof out.weights === 'object') out.weights = { ...DEFAULT_SEARCH_PARAMS.weights, ...(out.weights as object) };
  // a reranker named by its id alone is {provider, k: the default budget}
  if (typeof out.rerank === 'string') out.rerank = { provider: out.rerank, k: RERANK_K };
  else if (out.rerank && typeof out.rerank === 'object' && (out.rerank as { k?: unknown }).k === undefined) out.rerank = { ...(out.rerank as object), k: RERANK_K };
  return out;
}
