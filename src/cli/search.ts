/**
 * `rankgate search "query" [--mode hybrid|keyword|semantic] [--top-k 10] [--rrf-k 60] [--weights 0.5,0.5]
 *   [--chunk-size 300] [--embedder use-lite] [--candidates 50] [--scorer bm25|ts_rank_cd] [--vector exact|hnsw]
 *   [--language en] [--book SLUG] [--routing PATH | --no-routing] [--rerank ID [--rerank-k N] | --no-rerank]
 *   [--db URL|DIR] [--json]`
 * One query against rankgate's own search service (src/search/service.ts); prints the ranking, each
 * channel's rank and the routing decision.
 */
import { UserError } from '../errors.ts';
import type { SearchParams, SearchResponse } from '../search/types.ts';
import { isConnectionLost } from '../db/connection.ts';
import { parseCliArgs, parseIntFlag, serviceDbOptions } from './args.ts';
import { didYouMean } from '../util/suggest.ts';
import { checkReranker, parseRerankSetting } from '../search/rerank-step.ts';
import { expansionFromEnv } from '../search/expand.ts';
import { expansionLine } from '../report/output-text.ts';
import { safeTerminal } from '../util/terminal.ts';

export const USAGE = `usage: rankgate search "QUERY" [options]

  --mode M           hybrid (default) | keyword | semantic
  --top-k N          results to return (default 10)
  --rrf-k N          RRF constant k (default 60)
  --weights K,V      keyword and vector channel weights for RRF, e.g. 0.5,0.5 (default 1,1)
  --candidates N     candidate depth per channel before fusion (default 50)
  --scorer S         keyword scorer: bm25 (default) | ts_rank_cd
  --vector V         vector search: hnsw (default) | exact
  --chunk-size N     index variant chunk size (default 300)
  --embedder ID      index variant embedder (default use-lite)
  --language L       query language (text-search config) and language filter, e.g. en, es, hi
  --book SLUG        only chunks of this book
  --routing PATH     routing YAML (default config/routing.yaml); --no-routing turns routing off
  --rerank ID        rerank the top k fused results with this reranker (cohere:rerank:MODEL, tei:rerank, …)
  --rerank-k N       the reranker's candidate budget (default 50); --no-rerank: none
  --expansion X      query expansion: rm3, rewrites or hyde (a model: --expansion-provider ID, e.g.
                     openai:chat:gpt-4.1-mini), off; also RANKGATE_EXPANSION (docs/search.md "Query expansion")
  --db URL|DIR       postgres://... or a PGlite data directory
                     (default: $DATABASE_URL, else $RANKGATE_DATA_DIR, else .rankgate/db; opened read-only)
  --json             print the full response as JSON`;

export function parseWeights(value: string): { keyword: number; vector: number } {
  const parts = value.split(',').map((s) => s.trim());
  const nums = parts.map(Number);
  if (parts.length !== 2 || parts.some((p) => p === '') || nums.some((n) => !Number.isFinite(n) || n < 0) || nums[0]! + nums[1]! === 0) {
    throw new UserError(`--weights: expected two non-negative numbers "keyword,vector" (not both 0), e.g. 0.5,0.5; got ${JSON.stringify(value)}`);
  }
  return { keyword: nums[0]!, vector: nums[1]! };
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new UserError(`--${flag}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(value)}${didYouMean(value, allowed)}`);
  }
  return value as T;
}

/** Flags -> SearchParams overrides (validated; nothing opened yet). */
export function searchParamsFromFlags(values: Record<string, unknown>): Partial<SearchParams> {
  const p: Partial<SearchParams> = {};
  const str = (k: string) => values[k] as string | undefined;
  const mode = oneOf('mode', str('mode'), ['hybrid', 'keyword', 'semantic'] as const);
  if (mode) p.mode = mode;
  const topK = parseIntFlag('top-k', str('top-k'), 1, 1000);
  if (topK !== undefined) p.topK = topK;
  const rrfK = parseIntFlag('rrf-k', str('rrf-k'), 0, 100000);
  if (rrfK !== undefined) p.rrfK = rrfK;
  const candidates = parseIntFlag('candidates', str('candidates'), 1, 10000);
  if (candidates !== undefined) p.candidates = candidates;
  const chunkSize = parseIntFlag('chunk-size', str('chunk-size'), 16);
  if (chunkSize !== undefined) p.chunkSize = chunkSize;
  if (str('weights') !== undefined) p.weights = parseWeights(str('weights')!);
  const scorer = oneOf('scorer', str('scorer'), ['bm25', 'ts_rank_cd'] as const);
  if (scorer) p.keywordScorer = scorer;
  const vector = oneOf('vector', str('vector'), ['hnsw', 'exact'] as const);
  if (vector) p.vectorSearch = vector;
  if (str('embedder')) p.embedder = str('embedder')!;
  const language = str('language');
  if (language !== undefined) {
    if (!/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/.test(language)) throw new UserError(`--language: expected a code such as en, es, hi, got ${JSON.stringify(language)}`);
    p.language = language;
  }
  const book = str('book');
  if (language !== undefined || book !== undefined) {
    p.filters = { ...(language !== undefined ? { language } : {}), ...(book !== undefined ? { book } : {}) };
  }
  if (values['no-routing']) p.routing = false;
  if (values['no-rerank'] && (str('rerank') !== undefined || str('rerank-k') !== undefined)) throw new UserError('--no-rerank: not with --rerank or --rerank-k');
  const rerankK = parseIntFlag('rerank-k', str('rerank-k'), 1, 1000);
  if (rerankK !== undefined && str('rerank') === undefined) throw new UserError('--rerank-k: name the reranker with --rerank ID');
  if (str('rerank') !== undefined) {
    const s = parseRerankSetting({ provider: str('rerank'), ...(rerankK !== undefined ? { k: rerankK } : {}) }, '--rerank');
    if (s) {
      checkReranker(s, process.env, '--rerank');
      p.rerank = s;
    }
  }
  if (values['no-rerank']) p.rerank = null;
  // --expansion X [--expansion-provider ID] is RANKGATE_EXPANSION for this search; golden needs a golden entry
  const env = { ...process.env, ...(str('expansion') !== undefined ? { RANKGATE_EXPANSION: str('expansion') } : {}), ...(str('expansion-provider') !== undefined ? { RANKGATE_EXPANSION_PROVIDER: str('expansion-provider') } : {}) };
  const expansion = expansionFromEnv(undefined, env, false, process.cwd());
  if (expansion?.source === 'golden') throw new UserError(`--expansion ${env.RANKGATE_EXPANSION}: the golden expansion strings come from a golden entry; search them as queries, or use rankgate eval --expansion golden`);
  if (expansion) p.expansion = expansion;
  return p;
}

export function formatResponse(query: string, r: SearchResponse): string {
  const ix = r.diagnostics.index;
  const corpus = ix ? `  corpus ${ix.corpus ?? '?'} (${ix.corpusId ? ix.corpusId.slice(0, 12) : 'unknown'})` : '';
  const lines = [`query: ${JSON.stringify(query)}  variant ${r.diagnostics.variant}${corpus}`];
  lines.push(`routing: ${r.routing.route}${r.routing.safety ? '  SAFETY' : ''}${r.routing.topRelevance !== undefined ? `  top relevance ${r.routing.topRelevance.toFixed(3)}` : ''}`);
  for (const reason of r.routing.reasons) lines.push(`  - ${reason}`);
  if (!r.hits.length) lines.push('(no results)');
  for (const h of r.hits) {
    const ch = (c?: { rank: number; score: number }) => (c ? `#${c.rank} ${c.score.toFixed(4)}` : '-');
    const snippet = h.content.replace(/\s+/g, ' ').slice(0, 100);
    lines.push(
      `${String(h.rank).padStart(3)}. ${h.score.toFixed(5)}  ${h.chunkId}  [kw ${ch(h.channels.keyword)} | vec ${ch(h.channels.vector)}]`,
      `     ${snippet}${h.content.length > 100 ? '…' : ''}`,
    );
  }
  const rr = r.diagnostics.rerank;
  if (rr) {
    lines.push(
      `rerank: ${rr.reranker ?? 'the service'} over the first ${rr.budget} of the first stage` +
        `${rr.requests !== undefined ? ` · ${rr.requests} request${rr.requests === 1 ? '' : 's'}${rr.cached ? `, ${rr.cached} scores cached` : ''}` : ''}` +
        `${rr.costUsd !== undefined ? ` · $${rr.costUsd.toFixed(4)}` : ''}`,
    );
  }
  if (r.diagnostics.expansion) lines.push(expansionLine(r.diagnostics.expansion));
  const t = Object.entries(r.diagnostics.timings).map(([k, v]) => `${k} ${v.toFixed(1)} ms`);
  if (t.length) lines.push(`timings: ${t.join(', ')}`);
  // chunk ids, snippets, corpus names and routing reasons come from the corpus and config: each line printed as one
  return lines.map(safeTerminal).join('\n');
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      mode: { type: 'string' },
      'top-k': { type: 'string' },
      'rrf-k': { type: 'string' },
      weights: { type: 'string' },
      candidates: { type: 'string' },
      scorer: { type: 'string' },
      vector: { type: 'string' },
      'chunk-size': { type: 'string' },
      embedder: { type: 'string' },
      language: { type: 'string' },
      book: { type: 'string' },
      routing: { type: 'string' },
      'no-routing': { type: 'boolean' },
      rerank: { type: 'string' },
      'rerank-k': { type: 'string' },
      'no-rerank': { type: 'boolean' },
      db: { type: 'string' },
      expansion: { type: 'string' },
      'expansion-provider': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    } as const,
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new UserError(`${positionals.length ? 'expected one query (quote it)' : 'missing the query'}\n\n${USAGE}`);
  }
  const query = positionals[0]!.trim();
  if (!query) throw new UserError('the query is empty');
  if (query.includes('\u0000')) throw new UserError('the query contains a NUL character');
  const params = searchParamsFromFlags(values as Record<string, unknown>);
  let routing: string | false | undefined = values.routing as string | undefined;
  if (values['no-routing']) routing = false;
  if (typeof routing === 'string') (await import('../search/routing.ts')).loadRoutingConfig(routing); // fail early, clearly

  const { createSearchService } = await import('../search/service.ts');
  const service = await createSearchService({ ...serviceDbOptions(values.db as string | undefined), ...(routing !== undefined ? { routing } : {}) });
  try {
    const r = await service.search(query, params).catch((e: unknown) => {
      if ((e as Error)?.name === 'BedrockCallError') throw new UserError(`query embedding: ${(e as Error).message}`, 1);
      if (isConnectionLost(e)) throw new UserError(`database ${service.db.describe}: connection lost during the search (${(e as Error).message})`, 1);
      // a stage's model or API that failed (no answer by its deadline, an error, a malformed answer): one line, exit 2
      const err = e as Error;
      if (err?.name === 'RerankerCallError' || err?.name === 'EmbedderCallError') throw new UserError(`no ranking: ${err.message.split('\n')[0]}`);
      if (err instanceof Error && /^expansion /.test(err.message)) throw new UserError(`no ranking: ${err.message.split('\n')[0]}`);
      throw e;
    });
    console.log(values.json ? JSON.stringify({ query, params, ...r }, null, 2) : formatResponse(query, r));
    return 0;
  } finally {
    await service.close();
  }
}
