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
  /** The model the answer named (a vendor's `model` field), when it names one. */
  model?: string;
}

/**
 * The scores an API documents, checked on every answer and on every score read from the cache (a score outside is a
 * malformed answer, a cached one a refused file):
 *
 * | family | range | source |
 * |---|---|---|
 * | cohere | [0, 1] | Cohere v2 rerank: `relevance_score`, normalised to [0, 1] |
 * | bedrock | [0, 1] | Bedrock Rerank (Cohere Rerank 3.5, Amazon Rerank 1.0): `relevance_score` in [0, 1] |
 * | tei | [0, 1] | TEI `POST /rerank` with `raw_scores: false` (what rankgate sends): the sigmoid of the logit |
 * | llm | 0, 1, 2, 3 | the grade the prompt asks for (src/rerank/llm.ts parseGrade) |
 * | voyage, jina, openai, vllm, infinity | any finite number | no range documented (a cross-encoder may answer raw logits) |
 */
export type { RerankScoreRange } from './cache.ts';

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
  /** The API's documented score range (see RerankAnswer); absent: any finite number. */
  readonly range?: import('./cache.ts').RerankScoreRange;
  /** The model as the server reports it before any call (TEI `GET /info`: model_id@model_sha), fetched once. */
  servedModel?(): Promise<string | undefined>;
  /** The model the server's last answer in this process named (a vendor's `model` field), once it answered. */
  answeredModel?: string;
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
