/**
 * The contract between the harness (providers/, assertions/) and any search service under test.
 * rankgate's own SearchService (src/search/service.ts) implements it; a team's own in-process
 * module (`module:` in the provider config) exports `createSearchService(config)` returning the same.
 */
export type SearchMode = 'keyword' | 'semantic' | 'hybrid';
export type Route = 'search' | 'practice_bridge' | 'no_results';

export interface SearchFilters {
  language?: string;
  book?: string;
  pathPrefix?: string;
  tags?: string[];
}

export interface SearchParams {
  mode: SearchMode;
  /** Keyword channel scorer: BM25 in SQL over a postings table, or Postgres ts_rank_cd (no IDF). */
  keywordScorer: 'bm25' | 'ts_rank_cd';
  bm25K1: number;
  bm25B: number;
  /** Vector channel: exact (sequential scan, ground truth) or the HNSW index. */
  vectorSearch: 'exact' | 'hnsw';
  /** hnsw.ef_search; raised to at least `candidates`. */
  efSearch?: number;
  /** RRF constant k: score = sum_c w_c / (k + rank_c), ranks 1-based. */
  rrfK: number;
  weights: { keyword: number; vector: number };
  /** Candidate depth per channel before fusion. */
  candidates: number;
  topK: number;
  filters?: SearchFilters;
  /** Index variant: chunk size in tokens and embedder id. */
  chunkSize: number;
  embedder: string;
  /** Query language (selects the text-search config); defaults to the filter language or 'en'. */
  language?: string;
  /** Override the text-search config (english, spanish, hindi, simple). */
  textConfig?: string;
  /** Apply routing rules (practice_bridge, no_results, safety). */
  routing?: boolean;
  /** Rerank the first `k` fused candidates (src/search/rerank-step.ts); null or absent: no rerank stage. */
  rerank?: RerankSettings | null;
  /** Query expansion before the channels (src/search/expand.ts); null or absent: the query as it is. */
  expansion?: ExpansionSettings | null;
}

/**
 * Query expansion (src/search/expand.ts, docs/search.md "Query expansion"):
 * - golden: the golden entry's hand-written `expansion:` strings (config C of the blind-test framework), each run as
 *   its own query and fused with the original by RRF (`rrf`), or appended to the query text (`append`); `queries` is
 *   filled per query by the caller (the promptfoo provider, from the test's golden entry);
 * - rm3: RM3 pseudo-relevance feedback on the BM25 channel with Anserini/Pyserini's parameters;
 * - llm: a chat model (any promptfoo chat provider id) writes `n` rewrites (each its own query, fused by RRF, or
 *   appended) or one hypothetical answer passage (`hyde`: embedded for the vector channel) from a prompt file.
 */
export type ExpansionSettings =
  | { source: 'golden'; mode: 'rrf' | 'append'; queries?: string[] }
  | { source: 'rm3'; fbDocs: number; fbTerms: number; originalQueryWeight: number }
  | { source: 'llm'; provider: string; kind: 'rewrites' | 'hyde'; n: number; mode: 'rrf' | 'append'; prompt: string };

/** What the expansion stage did for one query (`diagnostics.expansion`). */
export interface ExpansionDiagnostics {
  source: 'golden' | 'rm3' | 'llm';
  /** Did this query search anything besides its own text (false: a golden entry without `expansion:`, RM3 with no feedback)? */
  expanded: boolean;
  mode?: 'rrf' | 'append';
  /** golden / llm rewrites: the texts searched besides the query; hyde: the passage embedded for the vector channel. */
  queries?: string[];
  kind?: 'rewrites' | 'hyde';
  /** rm3: the weighted query that scored the BM25 channel (weights sum to 1), and the feedback chunks used. */
  terms?: { term: string; weight: number }[];
  feedbackDocs?: number;
  /** llm: the model, its calls for this query (0: from the cache), and their cost. */
  provider?: string;
  requests?: number;
  cached?: boolean;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number | null;
  /** llm, read from the cache: what the call cost when it was made (null: unknown); the query's cost uncached. */
  uncachedCostUsd?: number | null;
  /** The stage's time, ms: its channel searches, RM3's feedback query, the model's call (timings.expand is the same). */
  ms?: number;
}

/** The rerank stage's settings: a reranker id (src/rerank/catalog.ts) and its candidate budget. */
export interface RerankSettings {
  provider: string;
  /** How many first-stage candidates the reranker sees (default 50). */
  k: number;
  /** Cohere's max_tokens_per_doc; other APIs: each passage cut to this many tokens. */
  maxTokensPerDoc?: number;
  /** Natural-language instructions sent before the query. */
  instructions?: string;
}

/**
 * What a reranked search reports (rankgate's service always; a team's service may, as documented in docs/search.md):
 * the first-stage order and the reranker's budget are what tell a rerank-budget miss from a reranker-ordering miss.
 */
export interface RerankDiagnostics {
  /** The reranker's id (a team's service: any name). */
  reranker?: string;
  /** Candidates the reranker saw: the first `budget` of firstStage. */
  budget: number;
  /** Result ids in first-stage (fused) order, at least `budget` deep when the first stage had that many. */
  firstStage: string[];
  /** The budget's ids in the reranker's order (rankgate's service; optional for a team's). */
  reranked?: string[];
  /** The stage's own time, ms (the reranker's calls, or 0 when every score came from the cache). */
  ms?: number;
  /** Requests sent to the reranker for this query (0: every score from the cache). */
  requests?: number;
  /** Passages whose score came from the cache. */
  cached?: number;
  searchUnits?: number;
  tokens?: number;
  /** USD for this query's rerank calls, when the price is known. */
  costUsd?: number;
  /**
   * When some scores came from the cache: what scoring the whole budget would have cost without it, at the reranker's
   * list price (an estimate: search units or tokens counted here, not billed); absent when no list price is known.
   */
  uncachedCostUsd?: number;
}

export interface ChannelHit {
  rank: number;
  score: number;
}

export interface SearchHit {
  chunkId: string;
  documentId: string;
  rank: number;
  score: number;
  content: string;
  path?: string;
  bookSlug?: string;
  chapterNumber?: number;
  language?: string;
  channels: { keyword?: ChannelHit; vector?: ChannelHit };
}

export interface RoutingDecision {
  route: Route;
  /** Crisis-adjacent query: the caller must show the safety interstitial. */
  safety: boolean;
  reasons: string[];
  /** Best normalised relevance (0..1) that the no_results rule compared with its threshold. */
  topRelevance?: number;
}

/** Which index answered (rankgate's own service only): engine, variant and the corpus it was built from. */
export interface IndexIdentity {
  engine: 'pglite' | 'postgres';
  /** The index variant's name, e.g. 'c300:use-lite'. */
  variant: string;
  /** sha256 over the corpus's sorted document ids and content hashes (src/ingest/identity.ts); null: unknown
   *  (a variant built before rankgate recorded it). */
  corpusId: string | null;
  /** Where the corpus was read from (repo-relative when inside the working directory); null: unknown. */
  corpus: string | null;
}

export interface SearchDiagnostics {
  variant: string;
  /** Present on rankgate's own service (absent for url: and module: services). */
  index?: IndexIdentity;
  /** Candidate ids per channel in channel rank order (first stage, before fusion and topK). */
  keywordCandidates: string[];
  vectorCandidates: string[];
  timings: Record<string, number>;
  /** The rerank stage, when the search reranked (absent: no reranker ran). */
  rerank?: RerankDiagnostics;
  /** The expansion stage, when expansion was asked for (absent: none). */
  expansion?: ExpansionDiagnostics;
}

export interface SearchResponse {
  hits: SearchHit[];
  routing: RoutingDecision;
  diagnostics: SearchDiagnostics;
  /** The service's own time for this query in ms, when it measures it (the search worker does: from the moment
   * the query starts, so queueing behind other queries is excluded). The provider reports it as latencyMs. */
  serviceMs?: number;
  /** A generated answer, when the service gives one (the NQ evaluation spec's agent answer): graded against the golden
   * short answer by the answer judge (assertions/judge.ts:answer). */
  answer?: string;
}

export interface SearchServiceLike {
  search(query: string, params?: Partial<SearchParams>): Promise<SearchResponse>;
  /** Resolve verbatim passage substrings to the chunk ids of an index variant (LIKE, escaped, parameterised). */
  resolvePassages?(
    substrings: string[],
    variant: { chunkSize: number; embedder: string },
  ): Promise<Map<string, string[]>>;
  close(): Promise<void>;
}
