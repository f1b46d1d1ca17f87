/**
 * Bedrock rerankers through the AWS SDK's InvokeModel, with the Bedrock embedder's client, credential chain, region
 * rules, retries and deadlines (src/embeddings/bedrock-client.ts):
 *
 * - `cohere.rerank-v3-5:0`: `{query, documents, top_n, api_version: 2}` -> `{results: [{index, relevance_score}]}`
 * - `amazon.rerank-v1:0`:   `{query, documents, top_n}`                  -> `{results: [{index, relevance_score}]}`
 *
 * At most 1,000 documents a call; Bedrock bills one query per 100 documents of a call (counted as search units).
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import {
  BedrockCallError,
  bedrockEndpoint,
  bedrockSdk,
  createBedrockClient,
  parseJsonBody,
  withRetries,
  type BedrockClientOptions,
} from '../embeddings/bedrock-client.ts';
import { scoresFromRows } from './answer.ts';
import type { RerankerSpec } from './catalog.ts';
import { FAMILY_RANGES, cutTokens, mergeAnswers, rerankAnswerCap, withInstructions } from './http.ts';
import { RerankerCallError, type RerankAnswer, type Reranker } from './types.ts';

export interface BedrockRerankerOptions extends BedrockClientOptions {
  maxTokensPerDoc?: number;
  instructions?: string;
  maxBatch?: number;
}

export function createBedrockReranker(spec: RerankerSpec, opts: BedrockRerankerOptions = {}): Reranker {
  // an answer is read as a capped stream (64 KB + 1 KB a passage), never whole
  const client: BedrockRuntimeClient = createBedrockClient({ maxResponseBytes: rerankAnswerCap(spec.info.maxBatch), ...opts });
  const modelId = spec.model;
  const maxBatch = Math.max(1, Math.min(opts.maxBatch ?? spec.info.maxBatch, spec.info.maxBatch));
  const endpoint = bedrockEndpoint(opts) ?? '';
  const where = endpoint || 'Bedrock';

  const one = async (query: string, docs: string[]): Promise<RerankAnswer> => {
    const body = { query, documents: docs, top_n: docs.length, ...(modelId.startsWith('cohere.') ? { api_version: 2 } : {}) };
    let raw: Uint8Array | undefined;
    try {
      raw = await withRetries(modelId, opts, async (abortSignal) => {
        const res = await client.send(
          new (bedrockSdk().InvokeModelCommand)({ modelId, contentType: 'application/json', accept: 'application/json', body: new TextEncoder().encode(JSON.stringify(body)) }),
          { abortSignal },
        );
        return res.body;
      });
    } catch (e) {
      if (e instanceof BedrockCallError) throw new RerankerCallError(`${spec.id}: ${e.message}`, { reranker: spec.id, code: e.code, status: e.status });
      throw e;
    }
    let json: unknown;
    try {
      json = parseJsonBody(modelId, raw);
    } catch (e) {
      throw new RerankerCallError(`${spec.id}: ${(e as Error).message}`, { reranker: spec.id, code: 'MalformedResponse' });
    }
    const results = (json && typeof json === 'object' ? (json as { results?: unknown }).results : undefined) as unknown;
    const scores = scoresFromRows(spec.id, where, results, docs.length, '"results"', 'relevance_score', FAMILY_RANGES.bedrock);
    return { scores, usage: { requests: 1, documents: docs.length, searchUnits: Math.ceil(docs.length / 100) } };
  };

  return {
    id: spec.id,
    family: 'bedrock',
    model: modelId,
    endpoint,
    maxBatch,
    range: FAMILY_RANGES.bedrock,
    async score(query, passages) {
      if (!passages.length) return { scores: [], usage: { requests: 0, documents: 0 } };
      const q = withInstructions(query, opts.instructions);
      const docs = passages.map((p) => (opts.maxTokensPerDoc ? cutTokens(p, opts.maxTokensPerDoc) : p) || ' ');
      const parts: RerankAnswer[] = [];
      for (let i = 0; i < docs.length; i += maxBatch) parts.push(await one(q, docs.slice(i, i + maxBatch)));
      return mergeAnswers(parts, spec.price);
    },
  };
}
