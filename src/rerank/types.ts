/**
 * One interface for every reranker (the shape of AnswerDotAI/rerankers and of src/embeddings): a reranker scores
 * passages against a query, and its answer is normalised to one score per passage, in the passages' order.
 */

/** What a reranker API reports it used for one call (summed over a query's batches). */
export interface RerankUsage {
  /** HTTP requests / InvokeModel calls that answered. */
  requests: number;
  /** Passages sent. */
  documents: number;
  /** Cohere's billed search units (Cohere API), or the search units Bedrock bills (one per 100 passages a call). */
  searchUnits?: number;
  /** Tokens the API reported (Voyage, Jina, vLLM `usage.total_tokens`; an LLM's input + output tokens). */
  tokens?: number;
  /** USD, when the price is known (list prices in catalog.ts, or promptfoo's estimate for an LLM). */
  costUsd?: number;
}

export interface RerankAnswer {
  /** One finite score per passage, in input order (higher = more relevant). */
  scores: number[];
  usage: RerankUsage;
}

export interface Reranker {
  /** Canonical id in promptfoo's style: `cohere:rerank:rerank-v3.5`, `bedrock:rerank:amazon.rerank-v1:0`, `llm:openai:chat:M`. */
  readonly id: string;
  /** 'cohere' | 'voyage' | 'jina' | 'openai' | 'tei' | 'bedrock' | 'llm' */
  readonly family: string;
  readonly model: string;
  /** scheme://host[:port]/path the calls go to ('' when the SDK picks it): part of the score cache key. */
  readonly endpoint: string;
  /** Passages per call at most (the vendor's documented limit). */
  readonly maxBatch: number;
  /** Anything else that changes a score and belongs in the score cache's key (an LLM reranker's prompt hash). */
  readonly scoreKey?: readonly unknown[];
  /** Score `passages` against `query`; a call that fails throws a RerankerCallError. */
  score(query: string, passages: readonly string[]): Promise<RerankAnswer>;
  close?(): Promise<void>;
}

/** A reranker call that failed for good, or answered with something rankgate cannot use. */
export class RerankerCallError extends Error {
  readonly reranker: string;
  /** 'Config' | 'NoAnswer' | 'HttpError' | 'MalformedResponse' */
  readonly code: string;
  readonly status?: number;
  constructor(message: string, info: { reranker: string; code: string; status?: number }) {
    super(message);
    this.name = 'RerankerCallError';
    this.reranker = info.reranker;
    this.code = info.code;
    this.status = info.status;
  }
}
