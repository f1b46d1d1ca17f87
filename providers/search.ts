/**
 * promptfoo provider: runs one golden query (context.vars.query) through a search service and returns the
 * ranking as an object. One providers[] entry = one matrix column; `config` says which service and which
 * parameters:
 *
 *   config:
 *     # every SearchParams field (src/search/types.ts): mode, keywordScorer, bm25K1, bm25B, vectorSearch,
 *     # efSearch, rrfK, weights {keyword, vector}, candidates, topK, filters, chunkSize, embedder,
 *     # language, textConfig, routing, rerank, expansion
 *     rerank: {provider: cohere:rerank:rerank-v3.5, k: 50, maxTokensPerDoc, instructions}   # ours: rerank the top k
 *                                # fused candidates (src/search/rerank-step.ts; an id string = {provider: ID, k: 50});
 *                                # RANKGATE_RERANK (--rerank ID | off) and RANKGATE_RERANK_K (--rerank-k N) beat it
 *     expansion: golden          # query expansion before the channels (src/search/expand.ts, docs/search.md "Query expansion"):
 *                                # golden (the golden entry's expansion: strings, each fused by RRF) | golden-append | rm3 |
 *                                # {source: rm3, fbDocs: 10, fbTerms: 10, originalQueryWeight: 0.5} |
 *                                # {source: llm, provider: openai:chat:MODEL, kind: rewrites|hyde, n: 3, mode: rrf|append,
 *                                #  prompt: my-prompt.txt}; RANKGATE_EXPANSION (--expansion) beats it
 *     module: ./my-search.ts     # a team's own in-process module exporting createSearchService(config)
 *     url: http://host/api/v1/search   # or http://host/search/v1 (NQ style: /search/v1/{mode})
 *     urlShape: portal | nq      # default: from the url path
 *     timeoutMs: 10000           # per query; default 10000 for url:, 60000 in-process (module: and ours)
 *     unreachableAfter: 3        # url: after this many queries in a row got no answer (timeout, refused, reset),
 *                                # the rest fail at once instead of each waiting timeoutMs; 0: never
 *     corpus: datasets/corpus    # ours: ingest this corpus when the index variant is missing (autoIngest)
 *     corpusFormat: markdown     # markdown | jsonl | beir | nq
 *     autoIngest: true           # default true when corpus is set
 *     databaseUrl / dataDir      # ours: Postgres server (default env DATABASE_URL), or PGlite data dir
 *                                # (default env RANKGATE_DATA_DIR, else .rankgate/db)
 *     routingConfig: config/routing.yaml | false
 *     queryFilters: true         # pass the golden query's filters (folder/tags/language/book) to the search
 *     warmup: true               # one untimed search per column first, through its whole pipeline (expansion and
 *                                # rerank included): index build, model and provider loads stay out of latencyMs
 *     worker: true               # ours and module: run in a worker thread of this process (src/search/worker.ts):
 *                                # the search overlaps promptfoo's own per-row work, and latencyMs is the
 *                                # query's own time there (no queueing); false: in promptfoo's thread
 *     preflight: true            # at the eval's start, before any row: corpus: and module: must exist (module: with
 *                                # a createSearchService export), url: must not refuse one probe search request
 *                                # (src/search/preflight.ts), a rerank: reranker must answer one probe (through
 *                                # its score cache); a failure is one line and exit 2; false: skip
 *     sweep: rerank              # set by the sweep grid (src/search/sweep.ts) on the columns it builds
 *
 * Unknown keys and values are refused when promptfoo constructs the provider, before any query: one line naming the
 * config file, the providers[] entry and the key, with a did-you-mean (src/search/provider-config.ts); promptfoo's
 * CLI then exits 2. With module:, keys the provider does not know go to the module (unless a near miss of its own).
 *
 * Without module: or url: it is rankgate's own SearchService (src/search). Services are built lazily, once,
 * and shared by every column with the same service settings (columns differ only in search params).
 * Errors, timeouts and malformed responses become `{ error }` rows; the provider never throws.
 *
 * Output: readable text for people (src/report/output-text.ts): the route and flags, then the ranked list with
 * title, chapter/section, a snippet and a mark on results matching the golden references of the test
 * (context.test.metadata.golden). metadata: { harness: { ids, hits[{rank, chunkId, documentId, score, content,
 * path?, channels}], routing, practice_bridge, safety, latencyMs, variant } (the structured ranking that
 * assertions and reports read through parseOutput(output, metadata)), diagnostics (first-stage candidates),
 * resolution (passage_substring -> chunk ids of this column's index variant), params, service }.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { GoldenQuerySchema, type GoldenQuery } from '../src/golden/schema.ts';
import { isUserError } from '../src/errors.ts';
import { acquireService, openService, releaseService, serviceKey, type ServiceTarget } from '../src/search/open.ts';
import { SEARCH_PARAM_KEYS, underPromptfooCli, validateProviderConfig } from '../src/search/provider-config.ts';
import { parseRerankSetting, probeRerankerOnce, rerankFromEnv } from '../src/search/rerank-step.ts';
import { expansionFromEnv, parseExpansionSetting } from '../src/search/expand.ts';
import { preflightOnce } from '../src/search/preflight.ts';
import { withServiceRerank } from '../src/search/service-rerank.ts';
import { WorkerSearchService } from '../src/search/worker.ts';
import { renderOutputText } from '../src/report/output-text.ts';
import { compactDiagnostics, compactHarness } from '../src/results/compact.ts';
import { boundHits } from '../src/results/evidence.ts';
import { RUN_KEY, currentRunId } from '../src/results/record.ts';
import { PROMPTFOO_WRITE_KEY, noWriteInArgv } from '../src/results/nowrite.ts';
import { validateJudgeConfig } from '../src/judge/config.ts';
import type { HarnessHit, HarnessMetadata, HarnessOutput } from '../src/results/types.ts';
import type { SearchFilters, SearchParams, SearchResponse, SearchServiceLike } from '../src/search/types.ts';
import { RANKGATE_VERSION } from '../src/version.ts';
import { redactConfig, redactText } from '../src/util/redact.ts';
import { trackedCacheFiles } from '../src/util/cache-files.ts';
import { DEFAULT_RERANK_CACHE_DIR } from '../src/rerank/cache.ts';
import { DEFAULT_EXPANSION_CACHE_DIR } from '../src/search/expand.ts';
import { DEFAULT_JUDGE_CACHE_DIR } from '../src/judge/cache.ts';

const PARAM_KEYS = SEARCH_PARAM_KEYS satisfies readonly (keyof SearchParams)[];

export interface SearchProviderConfig extends Partial<SearchParams>, ServiceTarget {
  queryFilters?: boolean;
  warmup?: boolean;
  basePath?: string;
  [k: string]: unknown;
}

interface ProviderResponse {
  output?: string;
  error?: string;
  /** HarnessMetadata on a ranked row; NoRetry (only) on an error row. */
  metadata?: Partial<HarnessMetadata> & Partial<NoRetry>;
  latencyMs?: number;
}

/**
 * On every error row. promptfoo (0.121) reads any provider error whose text contains "429" or "rate limit" as a
 * rate limit: it retries the query with backoff and holds the provider's whole queue (every column of this
 * file://providers/search.ts) for 60 s a time. A url on port 34290 or a module whose message says "rate limit"
 * stalled an eval for minutes that way. promptfoo's "quota" kind means "fail fast, do not retry": this provider
 * already bounds every query (timeoutMs) and an errored query is an error row that the gate counts (exit 2), so a
 * retry could only hide a failing service or stall the gate.
 */
interface NoRetry {
  rateLimitKind: 'quota';
}
const NO_RETRY: NoRetry = { rateLimitKind: 'quota' };

interface CallContext {
  vars?: Record<string, unknown>;
  test?: { metadata?: Record<string, unknown>; assert?: { value?: unknown; config?: unknown }[] };
}

/** Per-query limit for in-process services (ours, module:) when the config sets no timeoutMs. */
const IN_PROCESS_TIMEOUT_MS = 60_000;
/** The untimed warm-up search per column may build an index on first use: a generous bound. */
const WARMUP_TIMEOUT_MS = 15 * 60_000;

function timeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  if (!(ms > 0)) return p;
  let t: NodeJS.Timeout;
  return Promise.race([
    p,
    new Promise<T>((_, rej) => {
      // not unref'd: when the search under test never settles, this timer is all that keeps promptfoo's event
      // loop alive; unref'd, Node exited with code 13 mid-eval and wrote no results at all
      t = setTimeout(() => rej(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(t));
}

/** title / heading of a hit when the service returns them (optional fields beyond SearchHit). */
function titleFields(h: object): { title?: string; heading?: string } {
  const x = h as { title?: unknown; heading?: unknown };
  return { ...(typeof x.title === 'string' && x.title ? { title: x.title } : {}), ...(typeof x.heading === 'string' && x.heading ? { heading: x.heading } : {}) };
}

/**
 * The warm-up search's params: the column's own (its rerank: and expansion: stages included, so their providers are
 * loaded and exercised), without a query's filters; golden expansion gets one expansion string, so its extra channel
 * searches run too (no model behind it).
 */
export function warmupParams(params: Partial<SearchParams>): Partial<SearchParams> {
  const e = params.expansion;
  return { ...params, filters: undefined, ...(e?.source === 'golden' ? { expansion: { ...e, queries: ['warm up expansion'] } } : {}) };
}

/** The test's golden query for the marks in the readable output, when it is one (else no marks). */
/** Does this judge assertion judge (its content is then kept for it)? A setting that does not validate: keep content. */
function judgeOn(config: unknown): boolean {
  try {
    return validateJudgeConfig(config, 'judge').mode !== 'off';
  } catch {
    return true;
  }
}

function validGolden(g: unknown): GoldenQuery | undefined {
  const r = GoldenQuerySchema.safeParse(g);
  return r.success ? r.data : undefined;
}

/**
 * Unknown keys and values are refused before any query runs (src/search/provider-config.ts). promptfoo 0.121.20
 * prints a thrown constructor error as an uncaught exception (source line, stack) and exits 1, the code of a
 * failed gate; so under promptfoo's CLI the one line goes to stderr and the process exits 2 (bad configuration)
 * at once, before promptfoo builds the next column. Elsewhere (tests, promptfoo.evaluate()) it is a UserError.
 */
function checkConfig(config: SearchProviderConfig, basePath: string, providerId: string, extraKeys: readonly string[]): void {
  try {
    validateProviderConfig(config, { basePath, providerId, extraKeys });
  } catch (e) {
    exitUnderCli(e);
    throw e;
  }
}

function exitUnderCli(e: unknown): void {
  if (isUserError(e) && underPromptfooCli()) {
    process.stderr.write(`rankgate: ${redactText(e.message)}\n`);
    process.exit(2);
  }
}

export default class SearchProvider {
  /** Config keys a subclass reads itself, accepted besides the provider's own (see checkConfig). */
  static extraConfigKeys: readonly string[] = [];
  readonly config: SearchProviderConfig;
  readonly params: Partial<SearchParams>;
  label?: string;
  private readonly providerId: string;
  private readonly basePath: string;
  /** The config as written (redacted, no basePath), on every row: what a JSONL results file was measured on. */
  private readonly recordedConfig: Record<string, unknown>;
  private readonly serviceKey: string;
  private acquired = false;
  private readonly resolutionCache = new Map<string, Promise<string[] | undefined>>();
  private warm?: Promise<void>;
  /** Under promptfoo's CLI: the corpus / module / url checks (src/search/preflight.ts), started at construction. */
  private readonly ready?: Promise<void>;

  constructor(options: { id?: string; config?: SearchProviderConfig; env?: Record<string, string> } = {}) {
    this.config = { ...(options.config ?? {}) };
    this.providerId = options.id ?? 'rankgate-search';
    this.basePath = this.config.basePath || process.cwd();
    const { basePath: _basePath, ...written } = this.config;
    this.recordedConfig = redactConfig(written as Record<string, unknown>);
    checkConfig(this.config, this.basePath, this.providerId, (new.target as typeof SearchProvider).extraConfigKeys ?? []);
    // DATABASE_URL / RANKGATE_DATA_DIR: resolved by src/db (resolveDatabaseTarget), the same rule as every CLI
    const params: Partial<SearchParams> = {};
    for (const k of PARAM_KEYS) if (this.config[k] !== undefined) (params as Record<string, unknown>)[k] = this.config[k];
    try {
      // --rerank / --rerank-k / --no-rerank (RANKGATE_RERANK, RANKGATE_RERANK_K) beat the config's rerank:
      // (a column of the rerank sweep keeps its own: the sweep built its columns from those settings)
      const rerank = this.config.sweep === 'rerank' ? undefined : rerankFromEnv(this.config.rerank, process.env, this.config.url !== undefined || this.config.module !== undefined);
      if (rerank !== undefined) params.rerank = rerank;
      else if (params.rerank !== undefined) params.rerank = parseRerankSetting(params.rerank, 'rerank');
      // --expansion / --expansion-provider (RANKGATE_EXPANSION, RANKGATE_EXPANSION_PROVIDER) beat the config's expansion:
      const teamService = this.config.url !== undefined || this.config.module !== undefined;
      const expansion = expansionFromEnv(this.config.expansion, process.env, teamService, this.basePath);
      if (expansion !== undefined) params.expansion = expansion;
      else if (params.expansion !== undefined) params.expansion = parseExpansionSetting(params.expansion, 'expansion', { basePath: this.basePath });
      // caches are never evidence from the repository: cache folders holding files git tracks are refused in CI (one
      // line, exit 2, before any query) and ignored elsewhere (src/util/cache-files.ts); the judge's folder too, as the
      // judge assertion would only fail its rows
      if (!teamService) {
        if (params.rerank) trackedCacheFiles(process.env.RANKGATE_RERANK_CACHE_DIR || DEFAULT_RERANK_CACHE_DIR, 'rerank');
        if (params.expansion?.source === 'llm') trackedCacheFiles(process.env.RANKGATE_EXPANSION_CACHE_DIR || DEFAULT_EXPANSION_CACHE_DIR, 'expansion');
      }
      trackedCacheFiles(DEFAULT_JUDGE_CACHE_DIR, 'judge');
      // rankgate's own index (its embedding cache inside) is built from the corpus, never taken from the repository
      if (!teamService && !this.config.databaseUrl && !process.env.DATABASE_URL) trackedCacheFiles(String(this.config.dataDir ?? process.env.RANKGATE_DATA_DIR ?? join('.rankgate', 'db')), 'index');
    } catch (e) {
      exitUnderCli(e);
      throw e;
    }
    this.params = params;
    this.serviceKey = serviceKey(this.config, this.basePath);
    // Setup checked before any query: a wrong target is one line and exit 2 while promptfoo is still starting, not an
    // error in every row. Only under promptfoo's CLI (programmatic callers get the same reasons as error rows).
    if (underPromptfooCli()) {
      const rr = params.rerank;
      this.ready = preflightOnce(this.serviceKey, this.config, this.basePath, this.providerId)
        .then(() => (rr && this.config.preflight !== false ? probeRerankerOnce(rr) : undefined))
        .catch((e) => {
          exitUnderCli(e);
        });
    }
  }

  id(): string {
    return this.providerId;
  }

  toString(): string {
    return `[rankgate search ${this.label ?? this.providerId}]`;
  }

  /** The shared service of this provider's service identity (built on first use, src/search/open.ts). */
  service(): Promise<SearchServiceLike> {
    const first = !this.acquired;
    this.acquired = true;
    return acquireService(this.serviceKey, () => openService(this.config, this.basePath), first);
  }

  /** The worker takes the timeout too, so a hung query frees it for the next one (see src/search/worker.ts). */
  private searchOn(svc: SearchServiceLike, query: string, params: Partial<SearchParams>, timeoutMs: number): Promise<SearchResponse> {
    return svc instanceof WorkerSearchService ? svc.search(query, params, { timeoutMs }) : svc.search(query, params);
  }

  private async resolve(svc: SearchServiceLike, substrings: string[]): Promise<Record<string, string[]> | undefined> {
    if (!svc.resolvePassages || !substrings.length) return undefined;
    const variant = {
      chunkSize: this.params.chunkSize ?? 300,
      embedder: this.params.embedder ?? 'use-lite',
    };
    const out: Record<string, string[]> = {};
    const missing = substrings.filter((s) => !this.resolutionCache.has(s));
    if (missing.length) {
      const batch = svc.resolvePassages(missing, variant).then(
        (m) => m,
        () => undefined,
      );
      for (const s of missing) this.resolutionCache.set(s, batch.then((m) => m?.get(s)));
    }
    for (const s of substrings) {
      const ids = await this.resolutionCache.get(s)!;
      if (ids === undefined) return undefined;
      out[s] = ids;
    }
    return out;
  }

  async callApi(prompt: string, context?: CallContext): Promise<ProviderResponse> {
    const r = await this.run(prompt, context);
    // an error row's text may quote a URL with credentials or a configured secret: it is written to the results
    // every row carries the eval's run id (src/results/record.ts): rows of several runs are never gated as one
    const run = { [RUN_KEY]: currentRunId() };
    return r.error === undefined ? { ...r, metadata: { ...r.metadata, ...run } } : { ...r, error: redactText(r.error), metadata: { ...r.metadata, ...NO_RETRY, ...run } };
  }

  private async run(_prompt: string, context?: CallContext): Promise<ProviderResponse> {
    const query = context?.vars?.query;
    if (typeof query !== 'string' || !query.trim()) return { error: 'test has no vars.query (a non-empty string)' };
    const golden = context?.test?.metadata?.golden as GoldenQuery | undefined;
    const params: Partial<SearchParams> = { ...this.params };
    // config C: the golden entry's own expansion strings (none: the query runs unchanged, and says so)
    if (params.expansion?.source === 'golden') params.expansion = { ...params.expansion, queries: golden?.expansion ?? [] };
    if (golden?.language && params.language === undefined) params.language = golden.language;
    if (golden?.filters && this.config.queryFilters !== false) {
      const f = golden.filters;
      const filters: SearchFilters = { ...(params.filters ?? {}) };
      if (f.language) filters.language = f.language;
      if (f.book) filters.book = f.book;
      if (f.folder) filters.pathPrefix = f.folder;
      if (f.tags?.length) filters.tags = f.tags;
      params.filters = filters;
    }
    if (this.ready) await this.ready;
    const refs = await this.expectedDocumentsChecked(context);
    const missing = refs && golden?.id !== undefined ? refs.get(String(golden.id)) : undefined;
    if (missing) return { error: missing };
    let svc: SearchServiceLike;
    try {
      svc = await this.service();
    } catch (e) {
      return { error: `search service unavailable: ${(e as Error).message}` };
    }
    if (this.config.warmup !== false) {
      // First call of this column: one untimed search through the column's WHOLE pipeline (its expansion and its
      // reranker too: their models and providers are loaded and called once, through their caches), so an index
      // build, a model load or a provider's first connection is no query's latency. It is not a row: nothing of it
      // is measured or recorded.
      // Bounded too, so a service that never answers cannot hang the eval here (the first use may build an index).
      // rankgate's own service builds a missing variant here (corpus:): a setup error it meets on the way (an embedding
      // API's malformed answer, a corpus that is not the index's, a variant that does not exist) is one line and exit 2
      // under promptfoo's CLI before any row is measured, not the same error in every row. Everything else (a timeout,
      // a lost connection) and every error of a url: or module: service stays with the rows.
      const own = !this.config.url && !this.config.module;
      this.warm ??= timeout(this.searchOn(svc, 'warm up', warmupParams(this.params), WARMUP_TIMEOUT_MS), WARMUP_TIMEOUT_MS, 'warm-up').then(
        () => undefined,
        (e: unknown) => {
          if (own) exitUnderCli(e);
        },
      );
      await this.warm;
    }
    const t0 = performance.now();
    let res: SearchResponse;
    try {
      // url: has its own fetch timeout; in-process services get one here (a hung module must not hang the eval).
      const ms = this.config.url ? 0 : (this.config.timeoutMs ?? IN_PROCESS_TIMEOUT_MS);
      res = await timeout(this.searchOn(svc, query, params, ms), ms, 'search');
    } catch (e) {
      return { error: `search failed: ${(e as Error).message}` };
    }
    // The worker's own timing when there is one (no queueing behind other rows, no wait for promptfoo's thread).
    const latencyMs = +(typeof res?.serviceMs === 'number' ? res.serviceMs : performance.now() - t0).toFixed(3);
    if (!res || !Array.isArray(res.hits)) return { error: 'search returned no hits[] array' };
    if (this.config.module) {
      // a team's module may report its rerank stage (docs/search.md#a-reranked-service): checked, never trusted blindly
      try {
        res = withServiceRerank(res, `module ${this.config.module}: search() diagnostics`, this.config.timeoutMs ?? IN_PROCESS_TIMEOUT_MS);
      } catch (e) {
        return { error: (e as Error).message };
      }
    }
    let resolution: Record<string, string[]> | undefined;
    // a pull request's base expectations of this query (src/golden/promptfoo.ts): resolved and kept too, for the gate
    const baseGolden = validGolden(context?.test?.metadata?.baseGolden as GoldenQuery | undefined);
    const subs = [...new Set([...(golden?.expected ?? []), ...(baseGolden?.expected ?? [])].map((r) => r.passage_substring).filter((s): s is string => !!s))];
    try {
      resolution = await this.resolve(svc, subs);
    } catch {
      resolution = undefined;
    }
    const raw: HarnessHit[] = res.hits.map((h, i) => ({
      rank: typeof h.rank === 'number' ? h.rank : i + 1,
      chunkId: String(h.chunkId),
      documentId: String(h.documentId ?? h.chunkId),
      score: h.score,
      content: h.content ?? '',
      ...(h.path !== undefined ? { path: h.path } : {}),
      ...(h.bookSlug !== undefined ? { bookSlug: h.bookSlug } : {}),
      ...(h.chapterNumber !== undefined ? { chapterNumber: h.chapterNumber } : {}),
      ...titleFields(h),
      channels: h.channels ?? {},
    }));
    // bounded evidence (src/results/evidence.ts): a hit's content is at most 16 characters per token of the chunk
    // size before anything matches on it; the row counts the hits cut
    const { hits, cut } = boundHits(raw, params.chunkSize);
    const routing = res.routing ?? null;
    const output: HarnessOutput = {
      ids: hits.map((h) => h.chunkId),
      hits,
      routing,
      practice_bridge: routing?.route === 'practice_bridge',
      safety: routing?.safety === true,
      latencyMs,
      ...(res.diagnostics?.variant ? { variant: res.diagnostics.variant } : {}),
      ...(typeof res.answer === 'string' ? { answer: res.answer } : {}),
      ...(cut ? { contentCut: cut } : {}),
    };
    const g = validGolden(golden);
    // A compact row (src/results/compact.ts): full content only where a reader of the row needs it.
    const judged = (context?.test?.assert ?? []).some((a) => typeof a?.value === 'string' && /assertions\/judge\.ts:/.test(a.value) && judgeOn(a.config));
    const full: HarnessMetadata = { harness: output, diagnostics: res.diagnostics ?? null, ...(resolution ? { resolution } : {}) };
    const rendered = renderOutputText(output, g, full, { expansion: res.diagnostics?.expansion });
    const metadata: HarnessMetadata = {
      harness: compactHarness(output, g, full, { judged, ...(baseGolden ? { alsoFor: baseGolden } : {}) }),
      diagnostics: compactDiagnostics(output, g, full) ?? null,
      ...(resolution ? { resolution } : {}),
      params,
      service: this.config.url ? 'url' : this.config.module ? 'module' : 'rankgate',
      rankgate: RANKGATE_VERSION,
      providerConfig: this.recordedConfig,
      ...(noWriteInArgv(process.argv) ? { [PROMPTFOO_WRITE_KEY]: false as const } : {}),
    };
    return { output: rendered, latencyMs, metadata };
  }

  /**
   * rankgate's own search with `corpus:` knows the corpus: the golden files of the selection are checked against it
   * once, at the first query (src/golden/corpus-refs.ts); an expected document no document has makes the row of
   * that query an error with that line (the gate: exit 2), never a quiet 0; the other queries are measured.
   */
  private expectedDocumentsChecked(context?: CallContext): Promise<Map<string, string>> | null {
    const c = this.config;
    const files = (context?.test?.metadata?.selection as { files?: unknown } | undefined)?.files;
    if (c.url || c.module || !c.corpus || !Array.isArray(files) || !files.length) return null;
    const corpus = isAbsolute(c.corpus) ? c.corpus : resolve(this.basePath, c.corpus);
    return import('../src/golden/corpus-refs.ts').then((m) => m.evalStartCheck(corpus, c.corpusFormat, files.map(String), c.corpus!));
  }

  /** promptfoo calls cleanup() after the eval: close the shared service when its last column is done. */
  async cleanup(): Promise<void> {
    if (!this.acquired) return;
    this.acquired = false;
    await releaseService(this.serviceKey);
  }
}
