/**
 * `createReranker(id, opts)`: the one way to get a Reranker (ids: catalog.ts), and `scorePassages`, which scores a
 * query's candidates through the score cache so that a re-run sends nothing.
 *
 * The rerank step itself (which candidates go in, the final order) is the search service's (src/search/rerank-step.ts).
 */
import { parseRerankerId, type RerankerSpec } from './catalog.ts';
import { createHttpReranker, type HttpRerankerOptions } from './http.ts';
import { createBedrockReranker, type BedrockRerankerOptions } from './bedrock.ts';
import { createLlmReranker } from './llm.ts';
import { RerankCache } from './cache.ts';
import type { Reranker, RerankUsage } from './types.ts';

export { parseRerankerId, rerankerLabel, RERANKER_EXAMPLES, type RerankerSpec } from './catalog.ts';
export { RerankCache, DEFAULT_RERANK_CACHE_DIR, type RerankScoreRange } from './cache.ts';
export { RerankerCallError, type Reranker, type RerankAnswer, type RerankUsage } from './types.ts';

export interface RerankerOptions extends HttpRerankerOptions, BedrockRerankerOptions {
  maxTokensPerDoc?: number;
  instructions?: string;
}

/** Build the reranker an id names; throws UserError for an unknown id, RerankerCallError (code Config) for a missing key or base URL. */
export function createReranker(id: string, opts: RerankerOptions = {}): Reranker {
  const spec: RerankerSpec = parseRerankerId(id);
  if (spec.family === 'bedrock') return createBedrockReranker(spec, opts);
  if (spec.family === 'llm') return createLlmReranker(spec, opts);
  return createHttpReranker(spec, opts);
}

export interface ScoredPassages {
  /** One score per passage, in input order. */
  scores: number[];
  /** What the API reported for the passages sent (zero requests when every score came from the cache). */
  usage: RerankUsage;
  /** Passages whose score came from the cache. */
  cached: number;
}

/**
 * Score `passages` for `query`: cached scores are used, only the others are sent (in one call of the reranker, which
 * batches within its limits), and the new scores are kept. `settings` are what else changes a score (instructions,
 * max tokens per passage, a prompt's hash): part of the cache key.
 */
export async function scorePassages(
  reranker: Reranker,
  query: string,
  passages: readonly string[],
  cache: RerankCache | undefined,
  settings: readonly unknown[] = [],
): Promise<ScoredPassages> {
  // the producer of a cached score: the reranker (its configured model), endpoint, the model the server reports (TEI's
  // /info, once per process; a vendor's answer's `model`, once it answered), the settings, and its documented range
  const served = cache && reranker.servedModel ? await reranker.servedModel() : undefined;
  const scope = { reranker: reranker.id, endpoint: reranker.endpoint, served, answered: reranker.answeredModel, settings: [...settings, ...(reranker.scoreKey ?? [])], range: reranker.range };
  const have = cache ? cache.get(scope, query, passages) : passages.map(() => undefined);
  const missing = passages.map((_, i) => i).filter((i) => have[i] === undefined);
  const scores = have.slice() as (number | undefined)[];
  let usage: RerankUsage = { requests: 0, documents: 0 };
  if (missing.length) {
    const sent = missing.map((i) => passages[i]!);
    const answer = await reranker.score(query, sent);
    missing.forEach((i, j) => (scores[i] = answer.scores[j]!));
    usage = answer.usage;
    if (answer.model) reranker.answeredModel = answer.model;
    cache?.put({ ...scope, answered: answer.model ?? scope.answered }, query, sent, answer.scores);
  }
  return { scores: scores as number[], usage, cached: passages.length - missing.length };
}
