/**
 * The rerank stage of rankgate's hybrid service, after fusion (../shared/notes/architecture.md: keyword BM25 + vector
 * + RRF -> [rerank top k] -> routing):
 *
 *   first stage   the fused list (RRF, or one channel's order in keyword/semantic mode), deep enough to hold k
 *   budget        its first `k` candidates (default 50): what the reranker sees
 *   rerank        each budget passage scored by the reranker (src/rerank, through the score cache)
 *   final         the budget in the reranker's order (score descending, ties by fused rank), then the rest of the
 *                 first stage in fused order; the top K of that
 *
 * Every response of a reranked search carries `diagnostics.rerank` (RerankDiagnostics): the reranker, the budget, the
 * first-stage order up to max(k, topK), the reranked order of the budget, the stage's latency, requests, cache hits
 * and cost. That is what the failure buckets (src/results/score.ts) need to tell a rerank-budget miss (in the first
 * stage, outside the budget) from a reranker-ordering miss (in the budget, not in the top K), and what the per-stage
 * metrics are computed from. A team's own service may return the same block (docs/search.md: "a reranked service").
 */
import { UserError } from '../errors.ts';
import { createReranker, parseRerankerId, RerankCache, RerankerCallError, scorePassages, type Reranker, type RerankerOptions } from '../rerank/index.ts';
import { countTokens } from '../util/tokens.ts';
import type { RerankDiagnostics, RerankSettings } from './types.ts';
import { RERANK_K } from './settings.ts';

export const DEFAULT_RERANK_K = RERANK_K;
const KEYS = ['provider', 'k', 'maxTokensPerDoc', 'instructions'];

/**
 * The `rerank:` setting as written (provider config, --rerank/--rerank-k, a sweep column): `false`/`null`/absent is no
 * reranker, a string is a reranker id with the default budget, an object `{provider, k?, maxTokensPerDoc?,
 * instructions?}`. A wrong value is one UserError line naming `where` and the field.
 */
export function parseRerankSetting(v: unknown, where: string): RerankSettings | null {
  if (v === undefined || v === null || v === false) return null;
  const obj = typeof v === 'string' ? { provider: v } : v;
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new UserError(`${where}: expected a reranker id or {provider, k, maxTokensPerDoc, instructions}, or false, got ${JSON.stringify(v)}`);
  }
  const o = obj as Record<string, unknown>;
  for (const k of Object.keys(o)) if (!KEYS.includes(k)) throw new UserError(`${where}.${k}: unknown key (expected ${KEYS.join(', ')})`);
  if (typeof o.provider !== 'string' || !o.provider.trim()) throw new UserError(`${where}.provider: expected a reranker id such as cohere:rerank:rerank-v3.5, got ${JSON.stringify(o.provider)}`);
  let provider: string;
  try {
    provider = parseRerankerId(o.provider).id;
  } catch (e) {
    throw new UserError(`${where}.provider: ${(e as Error).message}`);
  }
  const int = (key: string, min: number, max: number): number | undefined => {
    const x = o[key];
    if (x === undefined) return undefined;
    if (typeof x !== 'number' || !Number.isInteger(x) || x < min || x > max) throw new UserError(`${where}.${key}: expected an integer from ${min} to ${max}, got ${JSON.stringify(x)}`);
    return x;
  };
  const k = int('k', 1, 1000) ?? DEFAULT_RERANK_K;
  const maxTokensPerDoc = int('maxTokensPerDoc', 1, 100_000);
  if (o.instructions !== undefined && typeof o.instructions !== 'string') throw new UserError(`${where}.instructions: expected a string, got ${JSON.stringify(o.instructions)}`);
  return { provider, k, ...(maxTokensPerDoc !== undefined ? { maxTokensPerDoc } : {}), ...(o.instructions ? { instructions: o.instructions as string } : {}) };
}

/**
 * Build the reranker these settings name without calling it: an unknown id, a missing key or a base URL that is not
 * http(s) throws a UserError naming the setting (`where`: `rerank.provider` in a provider config, which the config
 * check prefixes with `config.`; `--rerank` or `RANKGATE_RERANK (--rerank)` on a command line) and the environment
 * variable to set, before any query.
 */
export function checkReranker(s: RerankSettings, env: NodeJS.ProcessEnv = process.env, where = 'rerank.provider'): void {
  try {
    createReranker(s.provider, { env, maxTokensPerDoc: s.maxTokensPerDoc, instructions: s.instructions });
  } catch (e) {
    if (e instanceof RerankerCallError) throw new UserError(`${where}: ${e.message}`);
    throw e;
  }
}

/**
 * One probe of the reranker before any row (through the score cache, so a re-run sends nothing): a 401/403/404, an
 * endpoint nothing listens on, or an answer of the wrong shape is one UserError line. A slow answer or a 5xx is left to
 * the rows.
 */
export async function probeReranker(s: RerankSettings, cacheDir?: string | false, opts: RerankerOptions = {}): Promise<void> {
  const r = createReranker(s.provider, { ...opts, maxTokensPerDoc: s.maxTokensPerDoc, instructions: s.instructions, attempts: 1, timeoutMs: opts.timeoutMs ?? 5_000 });
  const cache = cacheDir === false ? undefined : new RerankCache(cacheDir ?? process.env.RANKGATE_RERANK_CACHE_DIR ?? undefined);
  try {
    await scorePassages(r, 'rankgate preflight probe', ['a probe passage'], cache, [s.maxTokensPerDoc ?? null, s.instructions ?? null]);
  } catch (e) {
    if (!(e instanceof RerankerCallError)) throw e;
    const refused = e.code === 'Config' || e.code === 'MalformedResponse' || (e.code === 'NoAnswer' && !/timed out|within \d+ ms/.test(e.message)) || [401, 403, 404, 405].includes(e.status ?? 0);
    if (refused) throw new UserError(`rerank.provider: ${e.message}; no query can be reranked`);
  }
}

const probes = new Map<string, Promise<void>>();

/** probeReranker once per settings in this process (columns with the same reranker share the probe). */
export function probeRerankerOnce(s: RerankSettings): Promise<void> {
  const key = JSON.stringify(s);
  let p = probes.get(key);
  if (!p) {
    p = probeReranker(s);
    probes.set(key, p);
  }
  return p;
}

/**
 * The rerank setting the environment gives (`rankgate eval|search --rerank ID --rerank-k N --no-rerank` set
 * RANKGATE_RERANK and RANKGATE_RERANK_K), which beats the config's: RANKGATE_RERANK=off (or none) is no reranker; an
 * id is that reranker with the config's other settings; RANKGATE_RERANK_K alone changes the configured reranker's
 * budget and is an error without one. undefined: the environment says nothing. `teamService`: a url:/module: column,
 * which has no rerank stage of rankgate's (RANKGATE_RERANK=off is accepted and changes nothing).
 */
export function rerankFromEnv(configured: unknown, env: NodeJS.ProcessEnv, teamService = false): RerankSettings | null | undefined {
  const id = env.RANKGATE_RERANK?.trim();
  const kRaw = env.RANKGATE_RERANK_K?.trim();
  if (!id && !kRaw) return undefined;
  if (id && /^(off|none|false|0)$/i.test(id)) return null;
  if (id && id.includes(',')) throw new UserError(`RANKGATE_RERANK=${id} (--rerank): one reranker per column; a list is for the rerank sweep (--sweep rerank, or RANKGATE_SWEEP_RERANKERS)`);
  if (teamService) throw new UserError(`RANKGATE_RERANK${id ? `=${id}` : '_K'}: the rerank stage is rankgate's own service's; a url:/module: service reranks itself (docs/search.md#a-reranked-service)`);
  const base = parseRerankSetting(configured, 'rerank');
  let k: number | undefined;
  if (kRaw) {
    k = Number(kRaw);
    if (!Number.isInteger(k) || k < 1 || k > 1000) throw new UserError(`RANKGATE_RERANK_K="${kRaw}" (--rerank-k): expected an integer from 1 to 1000`);
  }
  if (!id && !base) throw new UserError(`RANKGATE_RERANK_K=${kRaw} (--rerank-k): no reranker is configured; name one with --rerank ID (RANKGATE_RERANK) or rerank: in the provider config`);
  const provider = id ?? base!.provider;
  const out = parseRerankSetting({ ...(base ?? {}), provider, ...(k !== undefined ? { k } : {}) }, id ? 'RANKGATE_RERANK (--rerank)' : 'rerank');
  if (out) checkReranker(out, env, id ? 'RANKGATE_RERANK (--rerank)' : 'rerank.provider');
  return out;
}

/** A column label part: `rerank-v3.5@50`, or `no-rerank`. */
export function rerankLabel(s: RerankSettings | null | undefined): string {
  if (!s) return 'no-rerank';
  const id = parseRerankerId(s.provider);
  const name = id.family === 'tei' && id.model === 'tei' ? 'tei' : id.model.split('/').pop()!.replace(/:\d+$/, '');
  return `${name}@${s.k}`;
}

/** Rerankers and their cache, shared by the queries of one service (one instance per settings). */
export class RerankStage {
  private readonly rerankers = new Map<string, Reranker>();
  private readonly cache: RerankCache | undefined;

  private readonly noAnswerRun = new Map<string, number>();
  private readonly unreachable = new Map<string, string>();
  private readonly unreachableAfter: number;

  constructor(opts: { cacheDir?: string | false; rerankerOptions?: RerankerOptions; unreachableAfter?: number } = {}) {
    this.cache = opts.cacheDir === false ? undefined : new RerankCache(opts.cacheDir ?? process.env.RANKGATE_RERANK_CACHE_DIR ?? undefined);
    this.opts = opts.rerankerOptions ?? {};
    const env = process.env.RANKGATE_RERANK_UNREACHABLE_AFTER;
    const n = opts.unreachableAfter ?? (env === undefined || env === '' ? 2 : Number(env));
    if (!(Number.isInteger(n) && n >= 0)) throw new UserError(`RANKGATE_RERANK_UNREACHABLE_AFTER="${env}": expected an integer >= 0 (0: never)`);
    this.unreachableAfter = n;
  }

  private readonly opts: RerankerOptions;

  /** The reranker for these settings (built once; a missing key or base URL throws here, before any query). */
  reranker(s: RerankSettings): Reranker {
    const key = JSON.stringify([s.provider, s.maxTokensPerDoc ?? null, s.instructions ?? null]);
    let r = this.rerankers.get(key);
    if (!r) {
      r = createReranker(s.provider, { ...this.opts, maxTokensPerDoc: s.maxTokensPerDoc, instructions: s.instructions });
      this.rerankers.set(key, r);
    }
    return r;
  }

  /**
   * Rerank the first `k` of `pool` (ids in first-stage order, with their text). Returns the final order of the whole
   * pool (reranked budget, then the rest in first-stage order), the reranker's scores by id, and the diagnostics.
   */
  async run(
    query: string,
    pool: readonly { id: string; content: string }[],
    s: RerankSettings,
    topK: number,
  ): Promise<{ order: string[]; scores: Map<string, number>; diagnostics: RerankDiagnostics }> {
    const t0 = performance.now();
    const reranker = this.reranker(s);
    const budget = pool.slice(0, s.k);
    // the dead-service deadline of url: services, for a reranker: after `unreachableAfter` queries in a row got no
    // answer at all, the rest fail at once (error rows) instead of each waiting out the call timeout
    const dead = this.unreachable.get(reranker.id);
    if (dead) throw new RerankerCallError(dead, { reranker: reranker.id, code: 'NoAnswer' });
    let scored: Awaited<ReturnType<typeof scorePassages>>;
    try {
      scored = await scorePassages(reranker, query, budget.map((p) => p.content), this.cache, [s.maxTokensPerDoc ?? null, s.instructions ?? null]);
      this.noAnswerRun.set(reranker.id, 0);
    } catch (e) {
      if (e instanceof RerankerCallError && e.code === 'NoAnswer') {
        const run = (this.noAnswerRun.get(reranker.id) ?? 0) + 1;
        this.noAnswerRun.set(reranker.id, run);
        if (this.unreachableAfter > 0 && run >= this.unreachableAfter) {
          this.unreachable.set(
            reranker.id,
            `${reranker.id} at ${reranker.endpoint || 'its endpoint'} unreachable: ${run} queries in a row got no answer (last: ${e.message}); not reranked (RANKGATE_RERANK_UNREACHABLE_AFTER)`,
          );
        }
      }
      throw e;
    }
    const rankOf = new Map(pool.map((p, i) => [p.id, i]));
    const scores = new Map(budget.map((p, i) => [p.id, scored.scores[i]!]));
    const reranked = budget
      .map((p) => p.id)
      .sort((a, b) => scores.get(b)! - scores.get(a)! || rankOf.get(a)! - rankOf.get(b)!);
    const order = [...reranked, ...pool.slice(s.k).map((p) => p.id)];
    const u = scored.usage;
    const uncached = scored.cached > 0 ? listCostUsd(reranker.id, query, budget.map((p) => p.content)) : undefined;
    return {
      order,
      scores,
      diagnostics: {
        reranker: reranker.id,
        budget: s.k,
        firstStage: pool.slice(0, Math.max(s.k, topK)).map((p) => p.id),
        reranked,
        ms: +(performance.now() - t0).toFixed(3),
        requests: u.requests,
        cached: scored.cached,
        ...(u.searchUnits !== undefined ? { searchUnits: u.searchUnits } : {}),
        ...(u.tokens !== undefined ? { tokens: u.tokens } : {}),
        ...(u.costUsd !== undefined ? { costUsd: u.costUsd } : {}),
        ...(uncached !== undefined ? { uncachedCostUsd: uncached } : {}),
      },
    };
  }
}

/**
 * What scoring `passages` against `query` in one go would cost at the reranker's list price (src/rerank/catalog.ts),
 * an estimate for the rows the score cache answered: search units as the vendors bill them (one per query of up to
 * 100 documents; documents taken as under 500 tokens), or tokens counted with o200k (the query with every passage, as
 * Voyage counts them). undefined when no list price is known (TEI, vLLM, an LLM reranker).
 */
export function listCostUsd(rerankerId: string, query: string, passages: readonly string[]): number | undefined {
  let price: ReturnType<typeof parseRerankerId>['price'];
  try {
    price = parseRerankerId(rerankerId).price;
  } catch {
    return undefined;
  }
  if (!price || !passages.length) return undefined;
  if (price.perThousandSearchUnits !== undefined) return (Math.ceil(passages.length / 100) * price.perThousandSearchUnits) / 1000;
  if (price.perMTok !== undefined) {
    const q = countTokens(query);
    const tokens = passages.reduce((a, p) => a + q + countTokens(p), 0);
    return (tokens * price.perMTok) / 1e6;
  }
  return undefined;
}
