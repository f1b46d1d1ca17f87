/**
 * Reranker ids in promptfoo's style of naming (promptfoo has no rerankers of its own), and what rankgate knows about
 * each API. Pure: no I/O.
 *
 *   cohere:rerank:MODEL              Cohere v2 POST {COHERE_BASE_URL}/v2/rerank (rerank-v3.5, rerank-v4.0-pro, …)
 *   voyage:rerank:MODEL              Voyage POST {VOYAGE_API_BASE_URL}/rerank (rerank-2.5, rerank-2.5-lite, …)
 *   jina:rerank:MODEL                Jina POST {JINA_BASE_URL}/rerank (jina-reranker-v2-base-multilingual, …)
 *   openai:rerank:MODEL              any server with the Jina/Cohere-shaped POST {OPENAI_BASE_URL}/rerank
 *   vllm:rerank:MODEL                the same at {VLLM_BASE_URL}/rerank (vLLM's `vllm serve --task score`)
 *   infinity:rerank:MODEL            the same at {INFINITY_BASE_URL}/rerank (michaelfeil/infinity)
 *   tei:rerank[:MODEL]               Hugging Face text-embeddings-inference POST {TEI_BASE_URL}/rerank (BGE-reranker,
 *                                    mxbai-rerank; TEI serves one model: MODEL only names it in labels and the cache)
 *   bedrock:rerank:MODEL             Amazon Bedrock InvokeModel: cohere.rerank-v3-5:0, amazon.rerank-v1:0
 *   llm:PROVIDER_ID                  any promptfoo chat provider id as a pointwise reranker (src/rerank/llm.ts)
 *
 * Limits are the vendors' documented figures; list prices (USD, November 2026) are used only for the cost estimate.
 */
import { UserError } from '../errors.ts';
import { didYouMean } from '../util/suggest.ts';

export type RerankerFamily = 'cohere' | 'voyage' | 'jina' | 'openai' | 'tei' | 'bedrock' | 'llm';

export interface RerankFamilyInfo {
  family: RerankerFamily;
  /** Passages per request (the vendor's documented maximum, or what rankgate sends where none is documented). */
  maxBatch: number;
  /** Environment variables for the base URL, first set wins, and the default base. */
  baseEnv?: readonly string[];
  defaultBase?: string;
  /** Path appended to the base. */
  path?: string;
  /** Environment variable of the API key, and whether the vendor's own service needs one. */
  keyEnv?: string;
  keyRequired?: boolean;
  /** The request/response shape: cohere-like {model, query, documents, top_n} -> {results: [{index, relevance_score}]}. */
  shape?: 'cohere' | 'voyage' | 'tei';
}

export const RERANK_FAMILIES: Record<string, RerankFamilyInfo> = {
  // https://docs.cohere.com/reference/rerank (v2): documents as strings, top_n, max_tokens_per_doc (default 4096);
  // billed per search unit (a query with up to 100 documents). Cohere recommends at most 1,000 documents a request.
  'cohere:rerank:': { family: 'cohere', maxBatch: 1000, baseEnv: ['COHERE_BASE_URL'], defaultBase: 'https://api.cohere.com', path: '/v2/rerank', keyEnv: 'COHERE_API_KEY', keyRequired: true, shape: 'cohere' },
  // https://docs.voyageai.com/reference/reranker-api: <= 1,000 documents; query tokens x documents + document tokens
  // <= 600K (rerank-2.5, rerank-2.5-lite, rerank-2, rerank-2-lite); `truncation: true` fits each pair to the context.
  'voyage:rerank:': { family: 'voyage', maxBatch: 1000, baseEnv: ['VOYAGE_API_BASE_URL'], defaultBase: 'https://api.voyageai.com/v1', path: '/rerank', keyEnv: 'VOYAGE_API_KEY', keyRequired: true, shape: 'voyage' },
  // https://jina.ai/reranker: POST /v1/rerank {model, query, documents, top_n} -> {results: [{index, relevance_score}], usage}
  'jina:rerank:': { family: 'jina', maxBatch: 1000, baseEnv: ['JINA_BASE_URL', 'JINA_API_BASE_URL'], defaultBase: 'https://api.jina.ai/v1', path: '/rerank', keyEnv: 'JINA_API_KEY', keyRequired: true, shape: 'cohere' },
  // vLLM (`/v1/rerank`, `/rerank`) and Infinity (`/rerank`) serve the Jina/Cohere shape; no documented cap: 128 a request.
  'openai:rerank:': { family: 'openai', maxBatch: 128, baseEnv: ['OPENAI_BASE_URL', 'OPENAI_API_BASE_URL'], defaultBase: 'https://api.openai.com/v1', path: '/rerank', keyEnv: 'OPENAI_API_KEY', shape: 'cohere' },
  'vllm:rerank:': { family: 'openai', maxBatch: 128, baseEnv: ['VLLM_BASE_URL'], defaultBase: 'http://127.0.0.1:8000/v1', path: '/rerank', keyEnv: 'VLLM_API_KEY', shape: 'cohere' },
  'infinity:rerank:': { family: 'openai', maxBatch: 128, baseEnv: ['INFINITY_BASE_URL'], defaultBase: 'http://127.0.0.1:7997', path: '/rerank', keyEnv: 'INFINITY_API_KEY', shape: 'cohere' },
  // https://huggingface.github.io/text-embeddings-inference: POST /rerank {query, texts, truncate} -> [{index, score}];
  // at most --max-client-batch-size texts a request (default 32).
  'tei:rerank': { family: 'tei', maxBatch: 32, baseEnv: ['TEI_BASE_URL'], defaultBase: 'http://127.0.0.1:8080', path: '/rerank', keyEnv: 'TEI_API_KEY', shape: 'tei' },
  // https://docs.aws.amazon.com/bedrock/latest/userguide/rerank-supported.html: InvokeModel {query, documents, top_n}
  // (Cohere also api_version: 2) -> {results: [{index, relevance_score}]}; <= 1,000 documents; billed per query of
  // up to 100 documents.
  'bedrock:rerank:': { family: 'bedrock', maxBatch: 1000 },
  // one passage a call, graded 0-3 by the model (src/rerank/llm.ts)
  'llm:': { family: 'llm', maxBatch: 1 },
};

/** List prices: per 1,000 search units (Cohere, Bedrock) or per million tokens (Voyage, Jina). */
const PRICES: Record<string, { perThousandSearchUnits?: number; perMTok?: number }> = {
  'cohere:rerank-v3.5': { perThousandSearchUnits: 2 },
  'cohere:rerank-english-v3.0': { perThousandSearchUnits: 2 },
  'cohere:rerank-multilingual-v3.0': { perThousandSearchUnits: 2 },
  'voyage:rerank-2.5': { perMTok: 0.05 },
  'voyage:rerank-2.5-lite': { perMTok: 0.02 },
  'voyage:rerank-2': { perMTok: 0.05 },
  'voyage:rerank-2-lite': { perMTok: 0.02 },
  'bedrock:cohere.rerank-v3-5:0': { perThousandSearchUnits: 2 },
  'bedrock:amazon.rerank-v1:0': { perThousandSearchUnits: 1 },
};

export const BEDROCK_RERANK_MODELS = ['cohere.rerank-v3-5:0', 'amazon.rerank-v1:0'] as const;

export const RERANKER_EXAMPLES = [
  'cohere:rerank:rerank-v3.5',
  'voyage:rerank:rerank-2.5',
  'jina:rerank:jina-reranker-v2-base-multilingual',
  'vllm:rerank:BAAI/bge-reranker-v2-m3',
  'infinity:rerank:mixedbread-ai/mxbai-rerank-large-v1',
  'tei:rerank:BAAI/bge-reranker-large',
  'bedrock:rerank:cohere.rerank-v3-5:0',
  'bedrock:rerank:amazon.rerank-v1:0',
  'llm:openai:chat:gpt-4.1-mini',
] as const;

export interface RerankerSpec {
  /** Canonical id (what columns, rows and the score cache record). */
  id: string;
  /** The id's prefix (a key of RERANK_FAMILIES). */
  prefix: string;
  family: RerankerFamily;
  /** The model as its API knows it (TEI: a label; llm: the promptfoo provider id). */
  model: string;
  info: RerankFamilyInfo;
  price?: { perThousandSearchUnits?: number; perMTok?: number };
}

function bad(id: string, why: string): never {
  throw new UserError(
    `unknown reranker "${id}": ${why}${didYouMean(id, [...RERANKER_EXAMPLES], '"')} (expected cohere:rerank:MODEL, voyage:rerank:MODEL, ` +
      `jina:rerank:MODEL, openai:rerank:MODEL, vllm:rerank:MODEL, infinity:rerank:MODEL, tei:rerank[:MODEL], ` +
      `bedrock:rerank:${BEDROCK_RERANK_MODELS.join('|')} or llm:PROVIDER_ID (a promptfoo chat provider id))`,
  );
}

/** Parse a reranker id into its spec; throws a UserError naming what was expected. parseRerankerId(s.id).id === s.id. */
export function parseRerankerId(raw: unknown): RerankerSpec {
  if (typeof raw !== 'string' || !raw.trim()) bad(String(raw), 'a reranker id is a non-empty string');
  const id = (raw as string).trim();
  const prefix = Object.keys(RERANK_FAMILIES)
    .sort((a, b) => b.length - a.length)
    .find((p) => id.startsWith(p));
  if (!prefix) bad(id, 'no such reranker family');
  const info = RERANK_FAMILIES[prefix]!;
  let model = id.slice(prefix.length);
  if (info.family === 'tei') {
    if (model && !model.startsWith(':')) bad(id, 'tei:rerank takes an optional :MODEL label');
    model = model.slice(1);
    return { id: model ? `tei:rerank:${model}` : 'tei:rerank', prefix, family: 'tei', model: model || 'tei', info };
  }
  if (!model) bad(id, `${prefix} needs a ${info.family === 'llm' ? 'promptfoo chat provider id' : 'model name'} after it`);
  if (/\s/.test(model)) bad(id, 'a model name has no spaces');
  if (info.family === 'bedrock' && !(BEDROCK_RERANK_MODELS as readonly string[]).includes(model)) {
    bad(id, `Bedrock rerank models: ${BEDROCK_RERANK_MODELS.join(', ')}`);
  }
  if (info.family === 'llm' && !/^[a-z][\w.-]*:/i.test(model)) bad(id, `llm:${model}: a promptfoo provider id looks like openai:chat:MODEL or anthropic:messages:MODEL`);
  const priceKey = `${info.family === 'bedrock' ? 'bedrock' : info.family}:${model}`;
  return { id: `${prefix}${model}`, prefix, family: info.family, model, info, price: PRICES[priceKey] };
}

/** A short column label: `rerank-v3.5`, `bge-reranker-v2-m3`, `llm gpt-4.1-mini`. */
export function rerankerLabel(id: string): string {
  const s = parseRerankerId(id);
  if (s.family === 'llm') return `llm ${s.model.split(':').pop()}`;
  if (s.family === 'bedrock') return s.model.replace(/:\d+$/, '');
  return s.model.split('/').pop()!;
}
