/** One interface for every embedder: the offline default (USE-lite) and Bedrock's Titan v2 / Cohere v3. */
export interface Embedder {
  /** Stable id recorded with the index variant and in the cache key, e.g. 'use-lite', 'titan-v2-512'. */
  readonly id: string;
  readonly dimension: number;
  /** Most texts per underlying call. */
  readonly maxBatch: number;
  /** Embed passages for indexing (Cohere: input_type search_document). */
  embedDocuments(texts: string[]): Promise<number[][]>;
  /** Embed a query (Cohere: input_type search_query). */
  embedQuery(text: string): Promise<number[]>;
  close?(): Promise<void>;
}
