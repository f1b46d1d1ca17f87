/** One interface for every embedder: the offline default (USE-lite), the HTTP APIs and Bedrock. */
export type EmbedInputType = 'document' | 'query';

export interface Embedder {
  /**
   * Canonical id recorded with the index variant and in the cache key, in promptfoo's vocabulary:
   * 'use-lite', 'voyage:voyage-3-large', 'openai:embedding:text-embedding-3-large@1024', ...
   */
  readonly id: string;
  /** Vector dimension; 0 until known for a model rankgate has no entry for (see `init`). */
  readonly dimension: number;
  /** Most texts per underlying call. */
  readonly maxBatch: number;
  /**
   * embedDocuments calls (of up to maxBatch texts each) worth having in flight at once: the threads of an embedding
   * pool (pool.ts). Absent: 1 (the embedder runs its own requests concurrently, or cannot).
   */
  readonly parallel?: number;
  /** 'use-lite' | 'openai' | 'voyage' | 'cohere' | 'ollama' | 'bedrock' (absent: an embedder given by a caller). */
  readonly family?: string;
  /** The model name as its API knows it. */
  readonly model?: string;
  /** Host (and port) of the endpoint it calls; '' or absent when offline or not known (Bedrock: the SDK's default). */
  readonly endpoint?: string;
  /** List price in USD per million input tokens, when known. */
  readonly pricePerMTok?: number;
  /** Learn what must be known before embedding (the dimension of an unknown model: one short request). */
  init?(): Promise<void>;
  /** Embed passages for indexing (input type document / search_document). */
  embedDocuments(texts: string[]): Promise<number[][]>;
  /** Embed a query (input type query / search_query). */
  embedQuery(text: string): Promise<number[]>;
  close?(): Promise<void>;
}
