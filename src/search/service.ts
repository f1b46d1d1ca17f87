/**
 * rankgate's own hybrid search service (the system under test of the bundled demo).
 *
 * Channels (SQL in the .sql files beside this module, parameterised, runnable in psql):
 *   keyword  BM25 over a postings table (k1, b; Lucene idf) or ts_rank_cd, per-language text config
 *   vector   cosine similarity, exact scan or the variant's HNSW index (ef_search >= candidates)
 * Fusion: weighted Reciprocal Rank Fusion, score(d) = sum_c w_c / (rrfK + rank_c(d)), ranks 1-based,
 * over the first `candidates` of each channel; ties broken by chunk id (ascending) everywhere.
 * Routing (practice_bridge / no_results / safety) is delegated to src/search/routing.ts.
 */
import type pg from 'pg';
import { loadSql, openDatabase, readOnlyByEnv, availableTextConfigs, textConfigFor, type Db } from '../db/index.ts';
import { UserError } from '../errors.ts';
import type { Embedder } from '../embeddings/types.ts';
import { parseEmbedderId } from '../embeddings/catalog.ts';
import type {
  ChannelHit,
  RoutingDecision,
  SearchFilters,
  SearchHit,
  SearchParams,
  SearchResponse,
  SearchServiceLike,
} from './types.ts';
import type { RoutingConfig, Router } from './routing.ts';
import { parseRerankSetting, RerankStage } from './rerank-step.ts';
import { ExpansionStage, mergeCandidates, parseExpansionSetting, type ChannelRunner, type QueryLists, type WeightedTerm } from './expand.ts';
import type { RerankerOptions } from '../rerank/index.ts';
import { DEFAULT_SEARCH_PARAMS } from './settings.ts';
import { MAX_QUERY_CHARS, count } from '../util/limits.ts';

export { DEFAULT_SEARCH_PARAMS };

const SQL = {
  bm25: loadSql(import.meta.url, 'keyword_bm25.sql'),
  tsRankCd: loadSql(import.meta.url, 'keyword_ts_rank_cd.sql'),
  vectorExact: loadSql(import.meta.url, 'vector_exact.sql'),
  vectorHnsw: loadSql(import.meta.url, 'vector_hnsw.sql'),
  fetchChunks: loadSql(import.meta.url, 'fetch_chunks.sql'),
  resolvePassage: loadSql(import.meta.url, 'resolve_passage.sql'),
  variant: loadSql(import.meta.url, 'variant.sql'),
  rm3Feedback: loadSql(import.meta.url, 'rm3_feedback.sql'),
};

export interface VariantInfo {
  id: number;
  name: string;
  chunkSize: number;
  embedder: string;
  dimension: number;
  chunkCount: number;
  documentCount: number;
  n: number;
  avgdl: number;
  corpusId: string | null;
  corpus: string | null;
}

export interface AutoIngestOptions {
  /** Corpus folder or file (read with readCorpus from src/ingest/readers.ts). */
  corpus: string;
  /** false: only check that the index variant was built from this corpus (error otherwise), never ingest. */
  ingest?: boolean;
  format?: 'markdown' | 'jsonl' | 'beir' | 'nq';
  overlap?: number;
}

export interface CreateSearchServiceOptions {
  db?: Db;
  databaseUrl?: string;
  dataDir?: string;
  /** Embedder for query vectors; created by id with createEmbedder() (src/embeddings) when absent. */
  embedder?: Embedder;
  /** Extra embedders by id (variant selection by `params.embedder`). */
  embedders?: Embedder[];
  defaults?: Partial<SearchParams>;
  /** Routing config object or YAML path; none (or false): no routing, every query routes 'search' (routing rules are corpus-specific). */
  routing?: RoutingConfig | string | false;
  /** Ingest this corpus when the requested variant is missing (prints progress to stderr). */
  autoIngest?: AutoIngestOptions;
  /** Default: 'write' with autoIngest, else 'read' (see openDatabase). */
  access?: 'read' | 'write';
  /** The rerank score cache's folder (default RANKGATE_RERANK_CACHE_DIR, else .rankgate/cache/rerank); false: none. */
  rerankCacheDir?: string | false;
  /** Options for the rerankers (timeouts, Bedrock region and endpoint, env). */
  rerankerOptions?: RerankerOptions;
  /** The LLM expansion cache's folder (default RANKGATE_EXPANSION_CACHE_DIR, else .rankgate/cache/expansion); false: none. */
  expansionCacheDir?: string | false;
}

/** Escape `\`, `%` and `_` for LIKE ... ESCAPE '\'. */
export function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (m) => '\\' + m);
}

export interface FusedHit {
  id: string;
  score: number;
  keyword?: ChannelHit;
  vector?: ChannelHit;
}

/** Weighted RRF over ranked channel lists (ranks 1-based); ties by id ascending. */
export function fuseRrf(
  keyword: readonly { id: string; score: number }[],
  vector: readonly { id: string; score: number }[],
  k: number,
  weights: { keyword: number; vector: number },
): FusedHit[] {
  return fuseRrfLists([{ keyword, vector }], k, weights);
}

/**
 * Weighted RRF over the channel lists of one or more queries (the query and its expansions, src/search/expand.ts):
 * score(d) = sum over queries q and channels c of w_c / (k + rank_{q,c}(d)); ties by id ascending. A hit's channel
 * entry is its best rank in that channel over the queries.
 */
export function fuseRrfLists(
  lists: readonly { keyword: readonly { id: string; score: number }[]; vector: readonly { id: string; score: number }[] }[],
  k: number,
  weights: { keyword: number; vector: number },
): FusedHit[] {
  const m = new Map<string, FusedHit>();
  const get = (id: string) => {
    let h = m.get(id);
    if (!h) m.set(id, (h = { id, score: 0 }));
    return h;
  };
  // fixed summation order (each query in order, keyword then vector) so equal inputs give bit-equal scores
  const parts = new Map<string, number[]>();
  const add = (id: string, x: number) => {
    const p = parts.get(id);
    if (p) p.push(x);
    else parts.set(id, [x]);
  };
  for (const l of lists) {
    l.keyword.forEach((r, i) => {
      const h = get(r.id);
      if (!h.keyword || i + 1 < h.keyword.rank) h.keyword = { rank: i + 1, score: r.score };
      add(r.id, weights.keyword / (k + i + 1));
    });
    l.vector.forEach((r, i) => {
      const h = get(r.id);
      if (!h.vector || i + 1 < h.vector.rank) h.vector = { rank: i + 1, score: r.score };
      add(r.id, weights.vector / (k + i + 1));
    });
  }
  // per query: keyword before vector, as the single-query sum always was
  for (const h of m.values()) h.score = parts.get(h.id)!.reduce((s, x) => s + x, 0);
  return [...m.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function validateParams(p: SearchParams): void {
  const bad = (field: string, expected: string, got: unknown) => {
    throw new UserError(`search params: field "${field}" must be ${expected} (got ${JSON.stringify(got)})`);
  };
  if (!['keyword', 'semantic', 'hybrid'].includes(p.mode)) bad('mode', 'keyword, semantic or hybrid', p.mode);
  if (!['bm25', 'ts_rank_cd'].includes(p.keywordScorer)) bad('keywordScorer', 'bm25 or ts_rank_cd', p.keywordScorer);
  if (!['exact', 'hnsw'].includes(p.vectorSearch)) bad('vectorSearch', 'exact or hnsw', p.vectorSearch);
  if (!(Number.isFinite(p.bm25K1) && p.bm25K1 >= 0)) bad('bm25K1', 'a number >= 0', p.bm25K1);
  if (!(Number.isFinite(p.bm25B) && p.bm25B >= 0 && p.bm25B <= 1)) bad('bm25B', 'a number in [0, 1]', p.bm25B);
  if (!(Number.isFinite(p.rrfK) && p.rrfK >= 0)) bad('rrfK', 'a number >= 0', p.rrfK);
  if (!(Number.isInteger(p.topK) && p.topK >= 1 && p.topK <= 1000)) bad('topK', 'an integer in 1..1000', p.topK);
  if (!(Number.isInteger(p.candidates) && p.candidates >= 1 && p.candidates <= 1000)) {
    bad('candidates', 'an integer in 1..1000', p.candidates);
  }
  if (!(Number.isInteger(p.chunkSize) && p.chunkSize > 0)) bad('chunkSize', 'a positive integer', p.chunkSize);
  if (typeof p.embedder !== 'string' || !p.embedder) bad('embedder', 'an embedder id', p.embedder);
  const w = p.weights;
  if (!w || !Number.isFinite(w.keyword) || !Number.isFinite(w.vector) || w.keyword < 0 || w.vector < 0) {
    bad('weights', '{keyword, vector} numbers >= 0', w);
  }
  if (p.efSearch !== undefined && !(Number.isInteger(p.efSearch) && p.efSearch >= 1 && p.efSearch <= 1000)) {
    bad('efSearch', 'an integer in 1..1000', p.efSearch);
  }
  if (p.rerank) p.rerank = parseRerankSetting(p.rerank, 'search params: field "rerank"');
  if (p.expansion) {
    const queries = p.expansion.source === 'golden' ? p.expansion.queries : undefined;
    if (queries !== undefined && !(Array.isArray(queries) && queries.every((q) => typeof q === 'string'))) bad('expansion.queries', 'a list of strings', queries);
    // llm settings arrive resolved (an absolute prompt path); a caller's object is checked the same way
    const { queries: _q, ...rest } = p.expansion as { queries?: unknown };
    p.expansion = { ...parseExpansionSetting(rest, 'search params: field "expansion"')!, ...(queries !== undefined ? { queries } : {}) } as typeof p.expansion;
  }
}

function filterArgs(f: SearchFilters | undefined): (string | string[] | null)[] {
  return [
    f?.language ?? null,
    f?.book ?? null,
    f?.pathPrefix ? escapeLike(f.pathPrefix) + '%' : null,
    f?.tags && f.tags.length ? f.tags : null,
  ];
}

/** The canonical id of an embedder id or alias (`titan-v2-512` -> `bedrock:embeddings:...@512`); a caller's own id as it is. */
export function canonicalEmbedderId(id: string): string {
  try {
    return parseEmbedderId(id).id;
  } catch {
    return id;
  }
}

/** pgvector HNSW: `vector` up to 2,000 dimensions, `halfvec` up to 4,000, none above (the ingest's vectorIndexKind). */
function hnswType(dimension: number): 'vector' | 'halfvec' | undefined {
  return dimension <= 2000 ? 'vector' : dimension <= 4000 ? 'halfvec' : undefined;
}

const NO_ROUTING: RoutingDecision = { route: 'search', safety: false, reasons: [] };

export class SearchService implements SearchServiceLike {
  readonly db: Db;
  readonly defaults: SearchParams;
  private readonly ownsDb: boolean;
  private readonly embedders = new Map<string, Promise<Embedder>>();
  private readonly ownedEmbedders: Embedder[] = [];
  private readonly variants = new Map<string, Promise<VariantInfo>>();
  private router?: Promise<Router | undefined>;
  private readonly routingOpt?: RoutingConfig | string | false;
  private readonly autoIngest?: AutoIngestOptions;
  /** Variants whose corpus was checked against the autoIngest corpus. */
  private readonly verified = new Set<number>();
  private corpusPromise?: Promise<{ documents: import('../ingest/types.ts').CorpusDocument[]; identity: import('../ingest/identity.ts').CorpusIdentity }>;

  constructor(db: Db, ownsDb: boolean, opts: CreateSearchServiceOptions) {
    this.db = db;
    this.ownsDb = ownsDb;
    this.defaults = { ...DEFAULT_SEARCH_PARAMS, ...(opts.defaults ?? {}) } as SearchParams;
    validateParams(this.defaults);
    for (const e of [opts.embedder, ...(opts.embedders ?? [])]) if (e) this.embedders.set(e.id, Promise.resolve(e));
    this.routingOpt = opts.routing;
    this.autoIngest = opts.autoIngest;
    this.rerankStage = new RerankStage({ cacheDir: opts.rerankCacheDir, rerankerOptions: opts.rerankerOptions });
    this.expansionStage = new ExpansionStage({ cacheDir: opts.expansionCacheDir });
    // an unknown reranker, a missing key or base URL: refused here, before any query
    if (this.defaults.rerank) this.rerankStage.reranker(this.defaults.rerank);
  }

  private readonly rerankStage: RerankStage;
  private readonly expansionStage: ExpansionStage;

  /** The embedder for an id: given at construction, else createEmbedder(id) from src/embeddings. */
  embedderFor(rawId: string): Promise<Embedder> {
    const id = this.embedders.has(rawId) ? rawId : canonicalEmbedderId(rawId);
    let p = this.embedders.get(id);
    if (!p) {
      p = (async () => {
        const embeddingsModule = '../embeddings/index.ts'; // provided by the embeddings engineer
        const mod = (await import(embeddingsModule).catch((e: NodeJS.ErrnoException) => {
          if (e?.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('embeddings')) return undefined;
          throw e;
        })) as
          | { createEmbedder?: (id: string) => Promise<Embedder> }
          | undefined;
        if (!mod?.createEmbedder) throw new UserError(`embedder "${id}": src/embeddings/index.ts (createEmbedder) is not available`);
        const e = await mod.createEmbedder(id);
        this.ownedEmbedders.push(e);
        return e;
      })();
      p.catch(() => this.embedders.delete(id));
      this.embedders.set(id, p);
    }
    return p;
  }

  private getRouter(): Promise<Router | undefined> {
    if (!this.router) {
      this.router = (async () => {
        if (this.routingOpt === false) return undefined;
        const mod = (await import('./routing.ts').catch(() => undefined)) as typeof import('./routing.ts') | undefined;
        if (!mod?.createRouter) return undefined;
        let config: RoutingConfig | undefined;
        if (typeof this.routingOpt === 'string') config = mod.loadRoutingConfig(this.routingOpt);
        else if (this.routingOpt) config = this.routingOpt;
        if (!config) return undefined;
        // The router embeds exemplars with the default embedder when it can; without one, patterns only.
        const emb = await this.embedderFor(this.defaults.embedder).catch(() => undefined);
        return mod.createRouter(config, emb);
      })();
    }
    return this.router;
  }

  /**
   * Index variant for (chunk size, embedder), looked up on every call (one indexed row: a variant
   * re-ingested by another process gets a new id); ingests the autoIngest corpus when missing.
   */
  async variant(chunkSize: number, rawEmbedder: string): Promise<VariantInfo> {
    const embedder = this.embedders.has(rawEmbedder) ? rawEmbedder : canonicalEmbedderId(rawEmbedder);
    const found = await this.queryVariant(chunkSize, embedder);
    if (found && (!this.autoIngest || this.verified.has(found.id))) return found;
    const key = `${chunkSize}:${embedder}`;
    let p = this.variants.get(key);
    if (!p) {
      p = this.loadVariant(chunkSize, embedder);
      this.variants.set(key, p);
      p.finally(() => this.variants.delete(key)).catch(() => {});
    }
    return p;
  }

  private async queryVariant(chunkSize: number, embedder: string): Promise<VariantInfo | undefined> {
    const r = await this.db.pool.query(SQL.variant, [chunkSize, embedder]);
    if (!r.rowCount) return undefined;
    const v = r.rows[0];
    return {
      id: v.id,
      name: v.name,
      chunkSize: v.chunk_size,
      embedder: v.embedder,
      dimension: v.dimension,
      chunkCount: v.chunk_count,
      documentCount: v.document_count,
      n: v.n ?? 0,
      avgdl: v.avgdl ?? 0,
      corpusId: v.corpus_id ?? null,
      corpus: v.corpus ?? null,
    };
  }

  /** The autoIngest corpus, read once: its documents and identity. */
  private corpusDocs(): Promise<{ documents: import('../ingest/types.ts').CorpusDocument[]; identity: import('../ingest/identity.ts').CorpusIdentity }> {
    this.corpusPromise ??= (async () => {
      const { readCorpus } = await import('../ingest/readers.ts');
      const { corpusIdentity } = await import('../ingest/identity.ts');
      const documents = await readCorpus(this.autoIngest!.corpus, this.autoIngest!.format);
      return { documents, identity: corpusIdentity(documents, this.autoIngest!.corpus) };
    })();
    this.corpusPromise.catch(() => (this.corpusPromise = undefined));
    return this.corpusPromise;
  }

  /** An embedder id that exists (given to this service, or one createEmbedder knows): checked before any ingest. */
  private async checkEmbedderId(id: string): Promise<void> {
    if (this.embedders.has(id)) return;
    const mod = (await import('../embeddings/index.ts')) as typeof import('../embeddings/index.ts');
    try {
      mod.resolveEmbedderId(id);
    } catch (e) {
      const { didYouMean } = await import('../util/suggest.ts');
      const known = [...mod.EMBEDDER_IDS, ...this.embedders.keys()];
      throw new UserError(`embedder "${id}" does not exist: expected one of ${[...new Set(known)].join(', ')}${didYouMean(id, known)}`);
    }
  }

  /**
   * loadVariant, with the check and the ingest under one lock per variant on a server: two services (two columns of
   * one eval with other service identities, or two processes) that find the same variant missing or stale never both
   * ingest it. Without the lock the second ingest replaced the variant the first had just built while the first was
   * already searching it, and the first column's queries that ran across that commit found no chunks (issue 38).
   * The one waiting re-checks the variant once it holds the lock and uses the one just built. A PGlite directory has
   * one writer process already (its own lock), so only a server takes this one.
   */
  private async loadVariant(chunkSize: number, embedder: string): Promise<VariantInfo> {
    if (!(this.autoIngest && this.autoIngest.ingest !== false && this.db.kind === 'postgres')) return this.checkOrIngestVariant(chunkSize, embedder);
    const client = await this.db.pool.connect();
    const key = `rankgate_autoingest:${chunkSize}:${embedder}`;
    let locked = false;
    try {
      await client.query('SELECT pg_advisory_lock(hashtext(current_schema() || $1))', [key]);
      locked = true;
      return await this.checkOrIngestVariant(chunkSize, embedder);
    } finally {
      // a session lock stays with its connection: one that could not be unlocked is closed, never pooled again
      const unlocked = !locked || (await client.query('SELECT pg_advisory_unlock(hashtext(current_schema() || $1))', [key]).then(() => true, () => false));
      client.release(!unlocked);
    }
  }

  private async checkOrIngestVariant(chunkSize: number, embedder: string): Promise<VariantInfo> {
    const found = await this.queryVariant(chunkSize, embedder);
    if (found && !this.autoIngest) return found;
    if (!found) await this.checkEmbedderId(embedder);
    if (this.autoIngest && found) {
      const { shortCorpusId } = await import('../ingest/identity.ts');
      const { identity } = await this.corpusDocs();
      if (found.corpusId === identity.id) {
        this.verified.add(found.id);
        return found;
      }
      // never evaluate against the index of another corpus: rebuild it when it is an earlier state of this corpus
      // (same place, files edited since) and ingesting is allowed, else stop with one line
      if (!(found.corpusId && found.corpus === identity.path)) {
        const built = found.corpusId
          ? `was built from ${found.corpus ?? 'another corpus'} (corpus ${shortCorpusId(found.corpusId)})`
          : 'records no corpus (built before rankgate recorded corpus ids)';
        throw new UserError(
          `index variant ${found.name} in ${this.db.dataDir ?? this.db.describe} ${built}, not ${identity.path} (corpus ${shortCorpusId(identity.id)}): ` +
            `rankgate will not evaluate against it nor replace it on its own; rebuild it with: rankgate ingest --corpus ${identity.path} --chunk-size ${chunkSize} --embedder ${embedder} --replace` +
            `${this.db.dataDir ? ` --db ${this.db.dataDir}` : ''}, or point dataDir / RANKGATE_DATA_DIR at another directory`,
        );
      }
      if (this.autoIngest.ingest === false) {
        throw new UserError(
          `index variant ${found.name} in ${this.db.dataDir ?? this.db.describe} was built from an earlier state of ${identity.path} ` +
            `(corpus ${shortCorpusId(found.corpusId)}, now ${shortCorpusId(identity.id)}) and autoIngest is off: rebuild it with: rankgate ingest --corpus ${identity.path} --chunk-size ${chunkSize} --embedder ${embedder}`,
        );
      }
      process.stderr.write(
        `rankgate: index variant ${found.name} in ${this.db.describe} was built from an earlier state of ${identity.path} ` +
          `(corpus ${shortCorpusId(found.corpusId)}, now ${shortCorpusId(identity.id)}); rebuilding it\n`,
      );
    } else if (this.autoIngest && this.autoIngest.ingest !== false) {
      process.stderr.write(
        `rankgate: index variant c${chunkSize}:${embedder} is missing in ${this.db.describe}; ingesting ${this.autoIngest.corpus}\n`,
      );
    }
    if (this.autoIngest && this.autoIngest.ingest !== false) {
      const { ingestCorpus, createProgressReporter, formatPlan } = await import('../ingest/pipeline.ts');
      const { documents } = await this.corpusDocs();
      const emb = await this.embedderFor(embedder);
      const stats = await ingestCorpus({
        db: this.db,
        documents,
        chunkSizes: [chunkSize],
        embedder: emb,
        overlap: this.autoIngest.overlap,
        corpusPath: this.autoIngest.corpus,
        onProgress: createProgressReporter(),
        onPlan: (p) => process.stderr.write(`rankgate: ${formatPlan(p)}\n`),
      });
      const s = stats.variants[0];
      process.stderr.write(
        `rankgate: ingested ${s.documents} documents, ${s.chunks} chunks (${s.embedded} embedded, ${s.cached} cached) in ${(stats.totalMs / 1000).toFixed(1)} s\n`,
      );
      const again = await this.queryVariant(chunkSize, embedder);
      if (again) {
        this.verified.add(again.id);
        return again;
      }
    }
    const all = await this.db.pool.query<{ name: string }>('SELECT name FROM index_variants ORDER BY chunk_size, embedder');
    const have = all.rows.map((r) => r.name).join(', ') || 'none';
    throw new UserError(
      `index variant c${chunkSize}:${embedder} not found in ${this.db.describe} (available: ${have}); ` +
        `run: rankgate ingest --chunk-size ${chunkSize} --embedder ${embedder}`,
    );
  }

  async search(query: string, params: Partial<SearchParams> = {}): Promise<SearchResponse> {
    const t0 = performance.now();
    const timings: Record<string, number> = {};
    // a stage that runs more than once (a channel per expanded query) adds up
    const lap = (name: string, since: number) => (timings[name] = +((timings[name] ?? 0) + performance.now() - since).toFixed(3));
    const p: SearchParams = {
      ...this.defaults,
      ...params,
      weights: { ...this.defaults.weights, ...(params.weights ?? {}) },
      filters: params.filters ?? this.defaults.filters,
    };
    validateParams(p);
    if (typeof query !== 'string') throw new UserError('search: query must be a string');
    if (query.includes('\u0000')) throw new UserError('search: the query contains a NUL character (U+0000), which Postgres text cannot hold');
    if (query.length > MAX_QUERY_CHARS) throw new UserError(`search: the query is ${count(query.length)} characters, over the ${count(MAX_QUERY_CHARS)}-character cap (docs/golden-sets.md#query-length)`);
    const v = await this.variant(p.chunkSize, p.embedder);
    const available = await availableTextConfigs(this.db);
    const textConfig = textConfigFor(p.textConfig ?? p.language ?? p.filters?.language ?? 'en', available);
    const fargs = filterArgs(p.filters);
    const useKeyword = p.mode !== 'semantic';
    const useVector = p.mode !== 'keyword';
    // the first stage goes deep enough for the reranker's budget
    const depth = Math.max(p.mode === 'hybrid' ? p.candidates : 0, p.topK, p.rerank?.k ?? 0);

    let queryVector: number[] | undefined;
    const embed = async (text: string): Promise<number[]> => {
      // no text over the cap reaches the embedder (an expansion or a model's passage is checked before; this is the floor)
      if (text.length > MAX_QUERY_CHARS) throw new UserError(`search: a query text of ${count(text.length)} characters to embed, over the ${count(MAX_QUERY_CHARS)}-character cap (docs/golden-sets.md#query-length)`);
      const te = performance.now();
      const emb = await this.embedderFor(p.embedder);
      if (emb.dimension && emb.dimension !== v.dimension) {
        throw new UserError(`embedder ${emb.id} gives ${emb.dimension}-d vectors but variant ${v.name} holds ${v.dimension}-d`);
      }
      const vec = await emb.embedQuery(text);
      if (vec.length !== v.dimension) {
        throw new UserError(`embedder ${emb.id} answered with a ${vec.length}-d query vector but variant ${v.name} holds ${v.dimension}-d`);
      }
      lap('embed', te);
      if (text === query) queryVector = vec; // the router may share the query's own vector
      return vec;
    };

    // Each channel's timing starts once it holds a connection: on PGlite (one connection) the second channel
    // waits for the first, and that wait is not its own cost. Expanded queries add to the same timings.
    const keywordRun = async (text: string, limit: number, weighted?: readonly WeightedTerm[]) => {
      if (!useKeyword) return [];
      const client: pg.PoolClient = await this.db.pool.connect();
      try {
        const tk = performance.now();
        const r = weighted
          ? await client.query<{ id: string; score: number }>(SQL.bm25, [
              v.id, textConfig, text, p.bm25K1, p.bm25B, limit, ...fargs, weighted.map((t) => t.term), weighted.map((t) => t.weight),
            ])
          : p.keywordScorer === 'bm25'
            ? await client.query<{ id: string; score: number }>(SQL.bm25, [v.id, textConfig, text, p.bm25K1, p.bm25B, limit, ...fargs, null, null])
            : await client.query<{ id: string; score: number }>(SQL.tsRankCd, [v.id, textConfig, text, p.bm25K1, p.bm25B, limit, ...fargs]);
        lap('keyword', tk);
        return r.rows.map((x) => ({ id: x.id, score: Number(x.score) }));
      } finally {
        client.release();
      }
    };
    const vectorRun = async (text: string, limit: number) => {
      if (!useVector) return [];
      const vec = '[' + (await embed(text)).join(',') + ']';
      const client: pg.PoolClient = await this.db.pool.connect();
      try {
        const tv = performance.now();
        let rows: { id: string; score: number }[];
        if (p.vectorSearch === 'exact' || !hnswType(v.dimension)) {
          const r = await client.query<{ id: string; score: number }>(SQL.vectorExact, [v.id, vec, limit, ...fargs]);
          rows = r.rows;
        } else {
          rows = await this.hnswQuery(client, v, vec, limit, Math.max(p.efSearch ?? 40, limit), fargs);
        }
        lap('vector', tv);
        return rows.map((x) => ({ id: x.id, score: Number(x.score) }));
      } finally {
        client.release();
      }
    };
    let lists: QueryLists[];
    let expansionDiag: import('./types.ts').ExpansionDiagnostics | undefined;
    if (p.expansion) {
      if (p.expansion.source === 'rm3' && p.keywordScorer !== 'bm25' && useKeyword) {
        throw new UserError('search params: field "expansion": RM3 expands the BM25 channel; keywordScorer is ts_rank_cd');
      }
      const runner: ChannelRunner = {
        keyword: keywordRun,
        vector: vectorRun,
        feedback: async (text, ids) => {
          const r = await this.db.pool.query<{ kind: string; chunk: string | null; term: string; tf: number; df: number | null; n: number | null }>(SQL.rm3Feedback, [v.id, textConfig, text, ids]);
          const q = new Map<string, number>();
          const docs = new Map<string, Map<string, { tf: number; df: number }>>();
          let n = 0;
          for (const x of r.rows) {
            if (x.kind === 'q') q.set(x.term, Number(x.tf));
            else {
              let d = docs.get(x.chunk!);
              if (!d) docs.set(x.chunk!, (d = new Map()));
              d.set(x.term, { tf: Number(x.tf), df: Number(x.df) });
              n = Number(x.n);
            }
          }
          return { query: q, docs, n };
        },
      };
      const te = performance.now();
      const out = await this.expansionStage.run(query, p.expansion, runner, depth);
      lap('expand', te);
      lists = out.lists;
      expansionDiag = out.diagnostics;
    } else {
      // On a server the two channels run on two connections at once; PGlite's pool (size 1) serialises them.
      const [keyword, vector] = await Promise.all([keywordRun(query, depth), vectorRun(query, depth)]);
      lists = [{ keyword, vector }];
    }
    const kw = lists.length === 1 ? lists[0]!.keyword : mergeCandidates(lists.map((l) => l.keyword)).map((id) => ({ id, score: 0 }));
    const vec = lists.length === 1 ? lists[0]!.vector : mergeCandidates(lists.map((l) => l.vector)).map((id) => ({ id, score: 0 }));

    const tf = performance.now();
    let fused: FusedHit[];
    if (p.mode === 'hybrid' || lists.length > 1) fused = fuseRrfLists(lists, p.rrfK, p.weights);
    else if (p.mode === 'keyword') fused = kw.map((h, i) => ({ id: h.id, score: h.score, keyword: { rank: i + 1, score: h.score } }));
    else fused = vec.map((h, i) => ({ id: h.id, score: h.score, vector: { rank: i + 1, score: h.score } }));
    lap('fuse', tf);

    const tc = performance.now();
    const fetchRows = async (ids: string[]) => (ids.length ? (await this.db.pool.query(SQL.fetchChunks, [v.id, ids])).rows : []);
    let rerankScores: Map<string, number> | undefined;
    let rerankDiag: import('./types.ts').RerankDiagnostics | undefined;
    let rows: any[];
    if (p.rerank) {
      // the reranker reads the budget's text; the final top K comes from its order
      const budgetRows = await fetchRows(fused.slice(0, p.rerank.k).map((h) => h.id));
      const text = new Map(budgetRows.map((r) => [r.id as string, (r.content as string) ?? '']));
      lap('fetch', tc);
      const tr = performance.now();
      const out = await this.rerankStage.run(query, fused.map((h) => ({ id: h.id, content: text.get(h.id) ?? '' })), p.rerank, p.topK);
      lap('rerank', tr);
      rerankScores = out.scores;
      rerankDiag = out.diagnostics;
      const byFused = new Map(fused.map((h) => [h.id, h]));
      fused = out.order.slice(0, p.topK).map((id) => byFused.get(id)!);
      const have = new Map(budgetRows.map((r) => [r.id as string, r]));
      const rest = await fetchRows(fused.map((h) => h.id).filter((id) => !have.has(id)));
      rows = [...budgetRows, ...rest];
    } else {
      fused = fused.slice(0, p.topK);
      rows = await fetchRows(fused.map((h) => h.id));
    }
    const byId = new Map(rows.map((r) => [r.id as string, r]));
    const hits: SearchHit[] = fused.map((h, i) => {
      const r = byId.get(h.id);
      const hit: SearchHit = {
        chunkId: h.id,
        documentId: r?.document ?? '',
        rank: i + 1,
        // a reranked hit's score is the reranker's; a hit past the budget keeps its fused score
        score: rerankScores?.get(h.id) ?? h.score,
        content: r?.content ?? '',
        channels: {},
      };
      if (r?.path != null) hit.path = r.path;
      if (r?.book_slug != null) hit.bookSlug = r.book_slug;
      if (r?.chapter != null) hit.chapterNumber = r.chapter;
      if (r?.language != null) hit.language = r.language;
      if (h.keyword) hit.channels.keyword = h.keyword;
      if (h.vector) hit.channels.vector = h.vector;
      return hit;
    });
    if (!p.rerank) lap('fetch', tc);

    let routing: RoutingDecision = NO_ROUTING;
    if (p.routing !== false) {
      const router = await this.getRouter();
      if (router) {
        const tr = performance.now();
        // the router's exemplars are embedded with the default embedder: share the query vector only then
        const qv = p.embedder === this.defaults.embedder ? queryVector : undefined;
        routing = await router.route(query, hits, qv, p.language ?? p.filters?.language);
        lap('routing', tr);
      }
    }
    lap('total', t0);
    return {
      hits,
      routing: { ...routing, reasons: [...routing.reasons] },
      diagnostics: {
        variant: v.name,
        index: { engine: this.db.kind, variant: v.name, corpusId: v.corpusId, corpus: v.corpus },
        keywordCandidates: kw.map((h) => h.id),
        vectorCandidates: vec.map((h) => h.id),
        timings,
        ...(rerankDiag ? { rerank: rerankDiag } : {}),
        ...(expansionDiag ? { expansion: expansionDiag } : {}),
      },
    };
  }

  private async hnswQuery(
    client: pg.PoolClient,
    v: VariantInfo,
    vec: string,
    limit: number,
    efSearch: number,
    fargs: (string | string[] | null)[],
  ): Promise<{ id: string; score: number }[]> {
    const sql = SQL.vectorHnsw.replaceAll('{{dim}}', String(Math.trunc(v.dimension))).replaceAll('{{type}}', hnswType(v.dimension)!);
    // Session settings, set once per pooled connection (one round trip per query instead of four):
    // ef_search >= LIMIT (else HNSW returns at most ef_search rows); strict_order iterative scans keep
    // going until enough rows pass the filters (without filters they stop at LIMIT as before).
    const ef = Math.min(1000, efSearch);
    if (sessionEf.get(client) !== ef) {
      await client.query(`SELECT set_config('hnsw.ef_search', $1, false), set_config('hnsw.iterative_scan', 'strict_order', false)`, [String(ef)]);
      sessionEf.set(client, ef);
    }
    const r = await client.query<{ id: string; score: number }>(sql, [v.id, vec, limit, ...fargs]);
    // deterministic order among equal scores (the index returns them in graph order)
    return r.rows
      .map((x) => ({ id: x.id, score: Number(x.score) }))
      .sort((a, b) => round6(b.score) - round6(a.score) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async resolvePassages(
    substrings: string[],
    variant: { chunkSize: number; embedder: string },
  ): Promise<Map<string, string[]>> {
    const v = await this.variant(variant.chunkSize, variant.embedder);
    const out = new Map<string, string[]>();
    for (const s of substrings) {
      if (out.has(s)) continue;
      if (s.includes('\u0000')) {
        out.set(s, []); // Postgres text cannot hold NUL, so no chunk contains it
        continue;
      }
      const pattern = '%' + escapeLike(s.replace(/\s+/g, ' ').trim()) + '%';
      const r = await this.db.pool.query<{ id: string }>(SQL.resolvePassage, [v.id, pattern]);
      out.set(s, r.rows.map((x) => x.id));
    }
    return out;
  }

  /**
   * The stored text of chunks of an index variant, by chunk id (ids the variant does not hold are absent): the passages
   * `rankgate judge pool` sends the judge when the results kept only a snippet of them (src/judgments/pool.ts).
   */
  async chunkTexts(ids: readonly string[], variant: { chunkSize: number; embedder: string }): Promise<Map<string, string>> {
    const v = await this.variant(variant.chunkSize, variant.embedder);
    const out = new Map<string, string>();
    for (let i = 0; i < ids.length; i += 1000) {
      const r = await this.db.pool.query<{ id: string; content: string }>(SQL.fetchChunks, [v.id, ids.slice(i, i + 1000)]);
      for (const row of r.rows) out.set(row.id, row.content);
    }
    return out;
  }

  /** All index variants in the database. */
  async listVariants(): Promise<{ name: string; chunkSize: number; embedder: string; chunks: number }[]> {
    const r = await this.db.pool.query(
      'SELECT name, chunk_size, embedder, chunk_count FROM index_variants ORDER BY chunk_size, embedder',
    );
    return r.rows.map((x) => ({ name: x.name, chunkSize: x.chunk_size, embedder: x.embedder, chunks: x.chunk_count }));
  }

  async close(): Promise<void> {
    for (const e of this.ownedEmbedders) await e.close?.().catch(() => {});
    if (this.ownsDb) await this.db.close();
  }
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const sessionEf = new WeakMap<object, number>();

export async function createSearchService(opts: CreateSearchServiceOptions = {}): Promise<SearchService> {
  // A service that may ingest (autoIngest) is a writer; otherwise it only reads and never creates, initialises,
  // migrates or repairs the database it is pointed at. RANKGATE_DB_READONLY=1 makes every service a reader: the
  // corpus is still compared with the index's, never ingested.
  if (readOnlyByEnv() && !opts.db) {
    opts = { ...opts, access: 'read', ...(opts.autoIngest ? { autoIngest: { ...opts.autoIngest, ingest: false } } : {}) };
  }
  const db =
    opts.db ??
    (await openDatabase({
      url: opts.databaseUrl,
      dataDir: opts.dataDir,
      access: opts.access ?? (opts.autoIngest && opts.autoIngest.ingest !== false ? 'write' : 'read'),
    }));
  try {
    return new SearchService(db, !opts.db, opts);
  } catch (e) {
    if (!opts.db) await db.close();
    throw e;
  }
}
