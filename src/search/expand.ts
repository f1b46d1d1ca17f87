/**
 * The query-expansion stage of rankgate's hybrid service, before the channels and fusion (../shared/notes/architecture.md:
 * [query expansion] -> keyword BM25 + vector + RRF -> [rerank top k]). docs/search.md "Query expansion" says it for users.
 *
 *   golden  the golden entry's hand-written `expansion:` strings (the blind-test framework's config C). mode rrf (default):
 *           the query and each expansion run as their own query through both channels, and every channel list of
 *           every query is fused by one weighted RRF (score(d) = sum over queries q and channels c of
 *           w_c / (rrfK + rank_{q,c}(d))); mode append: one query, the query text and the expansions joined by spaces.
 *           A query without `expansion:` runs unchanged (diagnostics.expansion.expanded false).
 *   rm3     RM3 pseudo-relevance feedback on the BM25 channel, as Anserini's Rm3Reranker (what Pyserini's
 *           set_rm3(fb_terms=10, fb_docs=10, original_query_weight=0.5) runs) estimates it: see rm3Query below. The
 *           expanded weighted query then scores the whole index with BM25 (keyword_bm25.sql, $11/$12): score(d) =
 *           sum_t w(t) * BM25(t, d), Lucene's score of a BooleanQuery of boosted TermQuerys. The vector channel keeps
 *           the original query; fusion is unchanged.
 *   llm     a chat model (any promptfoo chat provider id, called through src/llm) writes `n` rewrites (multi-query: fused
 *           with the original by RRF as golden rrf, or appended) or one hypothetical answer passage (`hyde`: embedded
 *           for the vector channel in place of the query; the keyword channel keeps the query). The prompt is a file
 *           (default src/search/prompts/expansion-{rewrites,hyde}.txt): the system message, a line `---`, the user
 *           message; {{query}} and {{n}} are filled in. The text is cached on disk by (provider, endpoint, prompt
 *           sha256, query, n) (src/llm/cache.ts, default .rankgate/cache/expansion or RANKGATE_EXPANSION_CACHE_DIR):
 *           a re-run sends nothing. A model that fails or answers nothing usable is an error of that query (an error
 *           row), never a silently unexpanded search.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../errors.ts';
import { GeneratedTextCache, sha256 } from '../llm/cache.ts';
import { chatCall, providerEndpoint, providerFamily } from '../llm/provider.ts';
import type { ExpansionDiagnostics, ExpansionSettings } from './types.ts';
import { MAX_EXPANSION_STRINGS, MAX_QUERY_CHARS, count } from '../util/limits.ts';
import { redactText } from '../util/redact.ts';

/** Pyserini's set_rm3 defaults (Anserini's -rm3.fbDocs, -rm3.fbTerms, -rm3.originalQueryWeight). */
export const RM3_DEFAULTS = Object.freeze({ fbDocs: 10, fbTerms: 10, originalQueryWeight: 0.5 });
export const DEFAULT_REWRITES = 3;
export const DEFAULT_PROMPTS = Object.freeze({
  rewrites: fileURLToPath(new URL('./prompts/expansion-rewrites.txt', import.meta.url)),
  hyde: fileURLToPath(new URL('./prompts/expansion-hyde.txt', import.meta.url)),
});
/** One model call's deadline (RANKGATE_EXPANSION_TIMEOUT_MS, default 60,000) and output budget. */
const LLM_DEADLINE_MS = 60_000;
const MAX_TOKENS = { rewrites: 300, hyde: 400 } as const;

function deadlineMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.RANKGATE_EXPANSION_TIMEOUT_MS?.trim();
  if (!raw) return LLM_DEADLINE_MS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1) throw new UserError(`RANKGATE_EXPANSION_TIMEOUT_MS="${raw}": expected a number of milliseconds >= 1`);
  return n;
}

/**
 * Why a model's texts (fresh, or read back from the cache) are not usable, or undefined: none; more than `n`; an
 * empty one; one over MAX_QUERY_CHARS (a HyDE passage is embedded as the query, a rewrite runs as one); one that holds
 * a known secret (answers are redacted before they are kept, so a cached one that holds a key was not written here).
 */
export function checkGenerated(kind: 'rewrites' | 'hyde', texts: readonly string[], n: number): string | undefined {
  const what = kind === 'hyde' ? 'passage' : 'rewrite';
  if (!texts.length) return `no ${what}`;
  if (texts.length > (kind === 'hyde' ? 1 : n)) return `${texts.length} ${what}s, more than the ${kind === 'hyde' ? 1 : n} asked for`;
  for (const [i, t] of texts.entries()) {
    if (!t.trim()) return `${what} ${i + 1} is empty`;
    if (t.length > MAX_QUERY_CHARS) return `${what}${kind === 'hyde' ? '' : ` ${i + 1}`} is ${count(t.length)} characters, over the ${count(MAX_QUERY_CHARS)}-character cap of one query text (docs/search.md "Query expansion")`;
    if (redactText(t) !== t) return `${what}${kind === 'hyde' ? '' : ` ${i + 1}`} holds a secret (an API key or a password)`;
  }
  return undefined;
}

const SOURCES = ['golden', 'rm3', 'llm'] as const;
const KEYS: Record<(typeof SOURCES)[number], readonly string[]> = {
  golden: ['source', 'mode'],
  rm3: ['source', 'fbDocs', 'fbTerms', 'originalQueryWeight'],
  llm: ['source', 'provider', 'kind', 'n', 'mode', 'prompt'],
};
/** The shorthands a string setting (config, --expansion, RANKGATE_EXPANSION) may be. */
export const EXPANSION_SHORTHANDS = ['golden', 'golden-append', 'rm3', 'rewrites', 'hyde', 'off'] as const;

const show = (v: unknown) => JSON.stringify(v);

/**
 * The `expansion:` setting as written (provider config, a sweep column, RANKGATE_EXPANSION): `false`/`null`/absent or
 * `off` is none; a string is a shorthand (golden, golden-append, rm3, rewrites, hyde: the last two take the model from
 * `provider`); an object `{source: golden, mode}`, `{source: rm3, fbDocs, fbTerms, originalQueryWeight}` or
 * `{source: llm, provider, kind, n, mode, prompt}`. A wrong value is one UserError line naming `where` and the field.
 * A relative `prompt` is resolved against `basePath`, and must exist.
 */
export function parseExpansionSetting(v: unknown, where: string, opts: { basePath?: string; provider?: string } = {}): ExpansionSettings | null {
  if (v === undefined || v === null || v === false) return null;
  let obj: Record<string, unknown>;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (/^(off|none|false|0)$/.test(s)) return null;
    if (s === 'golden') obj = { source: 'golden' };
    else if (s === 'golden-append' || s === 'golden:append') obj = { source: 'golden', mode: 'append' };
    else if (s === 'rm3') obj = { source: 'rm3' };
    else if (s === 'rewrites' || s === 'hyde') obj = { source: 'llm', kind: s, ...(opts.provider ? { provider: opts.provider } : {}) };
    else throw new UserError(`${where}: unknown expansion '${v}': expected one of ${EXPANSION_SHORTHANDS.join(', ')}, or an object {source: golden|rm3|llm, ...}`);
  } else if (v && typeof v === 'object' && !Array.isArray(v)) obj = { ...(v as Record<string, unknown>) };
  else throw new UserError(`${where}: expected ${EXPANSION_SHORTHANDS.join(', ')} or an object {source: golden|rm3|llm, ...}, or false, got ${show(v)}`);
  const source = obj.source;
  if (typeof source !== 'string' || !(SOURCES as readonly string[]).includes(source)) {
    throw new UserError(`${where}.source: expected golden, rm3 or llm, got ${show(source)}`);
  }
  const src = source as (typeof SOURCES)[number];
  for (const k of Object.keys(obj)) if (!KEYS[src].includes(k)) throw new UserError(`${where}.${k}: unknown key for source ${src} (expected ${KEYS[src].join(', ')})`);
  const mode = (): 'rrf' | 'append' => {
    const m = obj.mode ?? 'rrf';
    if (m !== 'rrf' && m !== 'append') throw new UserError(`${where}.mode: expected rrf or append, got ${show(m)}`);
    return m;
  };
  const num = (key: string, min: number, max: number, int: boolean, dflt: number): number => {
    const x = obj[key];
    if (x === undefined) return dflt;
    if (typeof x !== 'number' || !Number.isFinite(x) || x < min || x > max || (int && !Number.isInteger(x))) {
      throw new UserError(`${where}.${key}: expected ${int ? 'an integer' : 'a number'} from ${min} to ${max}, got ${show(x)}`);
    }
    return x;
  };
  if (src === 'golden') return { source: 'golden', mode: mode() };
  if (src === 'rm3') {
    return {
      source: 'rm3',
      fbDocs: num('fbDocs', 1, 1000, true, RM3_DEFAULTS.fbDocs),
      fbTerms: num('fbTerms', 1, 1000, true, RM3_DEFAULTS.fbTerms),
      originalQueryWeight: num('originalQueryWeight', 0, 1, false, RM3_DEFAULTS.originalQueryWeight),
    };
  }
  const provider = obj.provider ?? opts.provider;
  if (typeof provider !== 'string' || !/^[A-Za-z0-9_.-]+:\S/.test(provider.trim())) {
    throw new UserError(`${where}.provider: expected a promptfoo chat provider id such as openai:chat:gpt-4.1-mini or anthropic:messages:claude-3-5-haiku-latest${opts.provider === undefined ? ' (or RANKGATE_EXPANSION_PROVIDER / --expansion-provider)' : ''}, got ${show(provider)}`);
  }
  const kind = obj.kind ?? 'rewrites';
  if (kind !== 'rewrites' && kind !== 'hyde') throw new UserError(`${where}.kind: expected rewrites or hyde, got ${show(kind)}`);
  const n = num('n', 1, 20, true, kind === 'hyde' ? 1 : DEFAULT_REWRITES);
  if (kind === 'hyde' && n !== 1) throw new UserError(`${where}.n: HyDE writes one passage (n: 1), got ${show(n)}`);
  let prompt = DEFAULT_PROMPTS[kind];
  if (obj.prompt !== undefined) {
    if (typeof obj.prompt !== 'string' || !obj.prompt.trim()) throw new UserError(`${where}.prompt: expected the path of a prompt file, got ${show(obj.prompt)}`);
    prompt = isAbsolute(obj.prompt) ? obj.prompt : resolve(opts.basePath ?? process.cwd(), obj.prompt);
  }
  if (!existsSync(prompt)) throw new UserError(`${where}.prompt: no such prompt file ${prompt}`);
  readPromptFile(prompt, `${where}.prompt`); // a malformed file: one line now, not an error per row
  return { source: 'llm', provider: provider.trim(), kind, n, mode: mode(), prompt };
}

/**
 * The expansion the environment gives (`rankgate eval|search --expansion X [--expansion-provider ID]` set
 * RANKGATE_EXPANSION and RANKGATE_EXPANSION_PROVIDER), which beats the config's: RANKGATE_EXPANSION=off is none; a
 * shorthand is that expansion (rewrites/hyde with RANKGATE_EXPANSION_PROVIDER, else the configured llm provider).
 * undefined: the environment says nothing. `teamService`: a url:/module: column, which has no stage of rankgate's.
 */
export function expansionFromEnv(configured: unknown, env: NodeJS.ProcessEnv, teamService = false, basePath?: string): ExpansionSettings | null | undefined {
  const raw = env.RANKGATE_EXPANSION?.trim();
  if (!raw) return undefined;
  if (/^(off|none|false|0)$/i.test(raw)) return null;
  if (teamService) throw new UserError(`RANKGATE_EXPANSION=${raw} (--expansion): query expansion is a stage of rankgate's own service; a url:/module: service expands queries itself`);
  const conf = configured && typeof configured === 'object' && (configured as { source?: unknown }).source === 'llm' ? (configured as { provider?: unknown }).provider : undefined;
  const provider = env.RANKGATE_EXPANSION_PROVIDER?.trim() || (typeof conf === 'string' ? conf : undefined);
  if (!provider && /^(rewrites|hyde)$/i.test(raw)) {
    throw new UserError(`RANKGATE_EXPANSION=${raw} (--expansion ${raw}): a model writes the ${raw.toLowerCase()}; name it with --expansion-provider ID (RANKGATE_EXPANSION_PROVIDER), e.g. openai:chat:gpt-4.1-mini, or expansion.provider in the config`);
  }
  return parseExpansionSetting(raw, 'RANKGATE_EXPANSION (--expansion)', { basePath, provider });
}

/** A column label part: `golden rrf`, `rm3 10/10/0.5`, `rewrites x3 openai:chat:gpt-4.1-mini`, or `no-expansion`. */
export function expansionLabel(s: ExpansionSettings | null | undefined): string {
  if (!s) return 'no-expansion';
  if (s.source === 'golden') return `golden expansion ${s.mode}`;
  if (s.source === 'rm3') return `rm3 ${s.fbDocs}/${s.fbTerms}/${s.originalQueryWeight}`;
  return s.kind === 'hyde' ? `hyde ${s.provider}` : `rewrites x${s.n} ${s.mode === 'append' ? 'append ' : ''}${s.provider}`;
}

// ---------------------------------------------------------------------------------------------------------------
// RM3

export interface WeightedTerm {
  term: string;
  weight: number;
}

/** One feedback document: its first-pass BM25 score and its terms (tf in the document, df in the index). */
export interface FeedbackDoc {
  score: number;
  terms: Map<string, { tf: number; df: number }>;
}

const byWeight = (a: WeightedTerm, b: WeightedTerm) => b.weight - a.weight || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0);

/** Anserini's feedback-term filter: 2-20 characters, letters and digits only, in at most 10% of the documents. */
function feedbackTerm(term: string, df: number, n: number): boolean {
  const len = [...term].length;
  if (len < 2 || len > 20) return false;
  // Anserini: [a-z0-9]+ on its lowercased English analysis; here letters, marks and digits of any script (Spanish,
  // Hindi lexemes are words too)
  if (!/^[\p{L}\p{M}\p{N}]+$/u.test(term)) return false;
  return !(n > 0 && df / n > 0.1);
}

/**
 * RM3 as Anserini's Rm3Reranker estimates it (Pyserini's set_rm3), for the query's term counts and the feedback
 * documents (the first `fbDocs` of the BM25 first pass, with their BM25 scores), in an index of `n` documents:
 *   1. each feedback document's vector: its terms passing the filter above, weight tf; pruned to its `fbTerms`
 *      heaviest; L1-normalised (a vector of L1 norm <= 0.001 is skipped);
 *   2. the relevance model: RM(t) = sum_d score(d) * tf(t,d) / |d|_1, over the union of the pruned vectors; pruned to
 *      the `fbTerms` heaviest; scaled to L1 norm 1;
 *   3. the query vector: each query term's count / the number of query terms (L1 norm 1);
 *   4. the expanded query: w(t) = originalQueryWeight * q(t) + (1 - originalQueryWeight) * RM(t).
 * Ties are broken by term (Anserini leaves them to a hash order). Returns the terms by weight, heaviest first.
 */
export function rm3Query(queryTerms: ReadonlyMap<string, number>, docs: readonly FeedbackDoc[], n: number, s: { fbDocs: number; fbTerms: number; originalQueryWeight: number }): WeightedTerm[] {
  const vectors: { score: number; tf: Map<string, number>; norm: number }[] = [];
  for (const d of docs.slice(0, s.fbDocs)) {
    const kept = [...d.terms]
      .filter(([t, x]) => feedbackTerm(t, x.df, n))
      .map(([term, x]) => ({ term, weight: x.tf }))
      .sort(byWeight)
      .slice(0, s.fbTerms);
    vectors.push({ score: d.score, tf: new Map(kept.map((k) => [k.term, k.weight])), norm: kept.reduce((a, k) => a + k.weight, 0) });
  }
  const vocab = [...new Set(vectors.flatMap((v) => [...v.tf.keys()]))].sort();
  let rm: WeightedTerm[] = vocab.map((term) => {
    let w = 0;
    for (const v of vectors) if (v.norm > 0.001) w += ((v.tf.get(term) ?? 0) / v.norm) * v.score;
    return { term, weight: w };
  });
  rm = rm.sort(byWeight).slice(0, s.fbTerms);
  const rmNorm = rm.reduce((a, t) => a + Math.abs(t.weight), 0);
  const rmW = new Map(rm.map((t) => [t.term, rmNorm > 0 ? t.weight / rmNorm : 0]));
  const qNorm = [...queryTerms.values()].reduce((a, c) => a + c, 0);
  const qW = new Map([...queryTerms].map(([t, c]) => [t, qNorm > 0 ? c / qNorm : 0]));
  const a = s.originalQueryWeight;
  const out: WeightedTerm[] = [];
  for (const term of new Set([...qW.keys(), ...rmW.keys()])) {
    const w = a * (qW.get(term) ?? 0) + (1 - a) * (rmW.get(term) ?? 0);
    if (w > 0) out.push({ term, weight: w });
  }
  return out.sort(byWeight);
}

// ---------------------------------------------------------------------------------------------------------------
// LLM rewrites and HyDE

/** The prompt file: the system message, a line `---`, the user message (no `---`: all of it is the user message). */
export function readPromptFile(path: string, where = path): { system: string; user: string; text: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${where}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const parts = text.split(/^---[ \t]*$/m);
  if (parts.length > 2) throw new UserError(`${where}: ${path} has ${parts.length - 1} '---' lines; one separates the system message from the user message`);
  const [system, user] = parts.length === 2 ? [parts[0]!.trim(), parts[1]!.trim()] : ['', parts[0]!.trim()];
  if (!user.includes('{{query}}')) throw new UserError(`${where}: ${path} never says {{query}}: the model would not see the query`);
  return { system, user, text };
}

/** The model's rewrites: one a line, numbering, bullets and quotes stripped, the query itself and repeats left out. */
export function parseRewrites(text: string, query: string, n: number): string[] {
  const seen = new Set([query.trim().toLowerCase()]);
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const s = line
      .replace(/^\s*(?:[-*\u2022]|\d+[.):])\s*/, '')
      .trim()
      .replace(/^["'\u201c\u2018](.*)["'\u201d\u2019]$/, '$1')
      .trim();
    if (!s || seen.has(s.toLowerCase())) continue;
    seen.add(s.toLowerCase());
    out.push(s);
    if (out.length === n) break;
  }
  return out;
}

export interface Generated {
  texts: string[];
  requests: number;
  cached: boolean;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
  /** A cache hit: what the call cost when it was made (the cache entry's), i.e. this query's cost uncached. */
  uncachedCostUsd?: number | null;
}

export const DEFAULT_EXPANSION_CACHE_DIR = join('.rankgate', 'cache', 'expansion');

/** The model's rewrites or passage for one query, through the cache. */
export class LlmExpander {
  private readonly cacheDir: string | false;
  private readonly caches = new Map<string, GeneratedTextCache>();
  constructor(cacheDir?: string | false) {
    this.cacheDir = cacheDir ?? process.env.RANKGATE_EXPANSION_CACHE_DIR ?? DEFAULT_EXPANSION_CACHE_DIR;
  }

  /** The cache of one kind (its folder checked for files tracked by git once: src/util/cache-files.ts). */
  private cache(dir: string, kind: string): GeneratedTextCache {
    let c = this.caches.get(kind);
    if (!c) {
      c = new GeneratedTextCache(dir, `expansion-${kind}`);
      this.caches.set(kind, c);
    }
    return c;
  }

  async generate(query: string, s: Extract<ExpansionSettings, { source: 'llm' }>): Promise<Generated> {
    const prompt = readPromptFile(s.prompt);
    const fill = (t: string) => t.replaceAll('{{query}}', query).replaceAll('{{n}}', String(s.n));
    // the producer: the provider id (the configured model), the endpoint, the prompt's hash; and the input
    const key = { provider: s.provider, endpoint: providerEndpoint(providerFamily(s.provider)), promptSha256: sha256(prompt.text), input: JSON.stringify([query, s.n]) };
    const cache = this.cacheDir === false ? undefined : this.cache(this.cacheDir, s.kind);
    // a cached entry is checked as a fresh answer is (count, length, no secret): a planted one is refused, not used
    const hit = cache?.get(key, (texts) => checkGenerated(s.kind, texts, s.n));
    if (hit) return { texts: hit.texts, requests: 0, cached: true, inputTokens: 0, outputTokens: 0, costUsd: 0, uncachedCostUsd: typeof hit.costUsd === 'number' ? hit.costUsd : null };
    let answer;
    try {
      answer = await chatCall(s.provider, { system: fill(prompt.system), user: fill(prompt.user) }, { deadlineMs: deadlineMs(), maxTokens: MAX_TOKENS[s.kind] });
    } catch (e) {
      throw new Error(`expansion ${s.kind} by ${s.provider} failed: ${redactText((e as Error).message.split('\n')[0]!)}`);
    }
    // no key the model echoes is kept, cached or searched with (src/util/redact.ts: every known key, and its encodings)
    const text = redactText((answer.text ?? '').trim());
    const what = s.kind === 'hyde' ? 'passage' : 'rewrite';
    if (s.kind === 'hyde' && text.length > MAX_QUERY_CHARS) {
      throw new Error(`expansion hyde by ${s.provider}: the model's passage is ${count(text.length)} characters, over the ${count(MAX_QUERY_CHARS)}-character cap of one query text (docs/search.md "Query expansion")`);
    }
    const texts = s.kind === 'hyde' ? (text ? [text] : []) : parseRewrites(text, query, s.n);
    if (!texts.length) throw new Error(`expansion ${s.kind} by ${s.provider}: the model answered no ${what} (${JSON.stringify(text.slice(0, 120))})`);
    const bad = checkGenerated(s.kind, texts, s.n);
    if (bad && !/holds a secret/.test(bad)) throw new Error(`expansion ${s.kind} by ${s.provider}: ${bad}`);
    const usage = { inputTokens: answer.inputTokens, outputTokens: answer.outputTokens, costUsd: answer.costUsd };
    cache?.set(key, { texts, ...usage });
    return { texts, requests: 1, cached: false, ...usage };
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The stage

export interface Ranked {
  id: string;
  score: number;
}

/** One query's channel lists (a channel the search mode does not use: empty). */
export interface QueryLists {
  keyword: Ranked[];
  vector: Ranked[];
}

/** What the stage needs of the service: its channels (for one text, `limit` deep) and RM3's feedback rows. */
export interface ChannelRunner {
  keyword(text: string, limit: number, weighted?: readonly WeightedTerm[]): Promise<Ranked[]>;
  vector(text: string, limit: number): Promise<Ranked[]>;
  /** rm3_feedback.sql: the query's term counts, and each chunk's terms with tf and df, and n. */
  feedback(query: string, chunkIds: string[]): Promise<{ query: Map<string, number>; docs: Map<string, Map<string, { tf: number; df: number }>>; n: number }>;
}

export class ExpansionStage {
  private readonly llm: LlmExpander;
  constructor(opts: { cacheDir?: string | false } = {}) {
    this.llm = new LlmExpander(opts.cacheDir);
  }

  /** The channel lists to fuse for `query` (the first: the query's own, or its replacement) and what was done. */
  async run(query: string, s: ExpansionSettings, runner: ChannelRunner, depth: number): Promise<{ lists: QueryLists[]; diagnostics: ExpansionDiagnostics }> {
    const t0 = performance.now();
    const both = async (text: string): Promise<QueryLists> => {
      const [keyword, vector] = await Promise.all([runner.keyword(text, depth), runner.vector(text, depth)]);
      return { keyword, vector };
    };
    const ms = () => +(performance.now() - t0).toFixed(3);
    const multi = async (extra: string[], mode: 'rrf' | 'append'): Promise<QueryLists[]> => {
      if (!extra.length) return [await both(query)];
      if (mode === 'append') {
        const joined = [query, ...extra].join(' ');
        if (joined.length > MAX_QUERY_CHARS) throw new UserError(`expansion append: the query and its ${extra.length} expansion(s) join to ${count(joined.length)} characters, over the ${count(MAX_QUERY_CHARS)}-character cap of one query text (docs/golden-sets.md#query-length; mode rrf runs each as its own query)`);
        return [await both(joined)];
      }
      const lists: QueryLists[] = [];
      for (const text of [query, ...extra]) lists.push(await both(text));
      return lists;
    };
    if (s.source === 'golden') {
      const extra = (s.queries ?? []).map((q) => q.trim()).filter(Boolean);
      if (extra.length > MAX_EXPANSION_STRINGS) throw new UserError(`expansion: ${extra.length} golden expansion strings, over the cap of ${MAX_EXPANSION_STRINGS} (docs/golden-sets.md#query-length)`);
      const long = extra.findIndex((q) => q.length > MAX_QUERY_CHARS);
      if (long >= 0) throw new UserError(`expansion[${long}]: ${count(extra[long]!.length)} characters, over the ${count(MAX_QUERY_CHARS)}-character cap (docs/golden-sets.md#query-length)`);
      const lists = await multi(extra, s.mode);
      return { lists, diagnostics: { source: 'golden', mode: s.mode, expanded: extra.length > 0, ...(extra.length ? { queries: extra } : {}) } };
    }
    if (s.source === 'rm3') {
      const [first, vector] = await Promise.all([runner.keyword(query, Math.max(s.fbDocs, 1)), runner.vector(query, depth)]);
      const fb = first.slice(0, s.fbDocs);
      if (!fb.length) return { lists: [{ keyword: first, vector }], diagnostics: { source: 'rm3', expanded: false, feedbackDocs: 0, ms: ms() } };
      const rows = await runner.feedback(query, fb.map((d) => d.id));
      const docs: FeedbackDoc[] = fb.map((d) => ({ score: d.score, terms: rows.docs.get(d.id) ?? new Map() }));
      const terms = rm3Query(rows.query, docs, rows.n, s);
      const expanded = terms.some((t) => !rows.query.has(t.term));
      const keyword = await runner.keyword(query, depth, terms);
      const rounded = terms.map((t) => ({ term: t.term, weight: +t.weight.toFixed(6) }));
      return { lists: [{ keyword, vector }], diagnostics: { source: 'rm3', expanded, terms: rounded, feedbackDocs: fb.length, ms: ms() } };
    }
    const g = await this.llm.generate(query, s);
    const llmDiag = {
      source: 'llm' as const,
      kind: s.kind,
      provider: s.provider,
      requests: g.requests,
      cached: g.cached,
      inputTokens: g.inputTokens,
      outputTokens: g.outputTokens,
      costUsd: g.costUsd,
      ...(g.cached ? { uncachedCostUsd: g.uncachedCostUsd ?? null } : {}),
    };
    if (s.kind === 'hyde') {
      const passage = g.texts[0]!;
      const [keyword, vector] = await Promise.all([runner.keyword(query, depth), runner.vector(passage, depth)]);
      return { lists: [{ keyword, vector }], diagnostics: { ...llmDiag, expanded: true, queries: [passage], ms: ms() } };
    }
    const lists = await multi(g.texts, s.mode);
    return { lists, diagnostics: { ...llmDiag, mode: s.mode, expanded: true, queries: g.texts, ms: ms() } };
  }
}

/** Channel candidates of several queries in one list: by rank, the queries in order at each rank, each id once. */
export function mergeCandidates(lists: readonly (readonly Ranked[])[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const deepest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < deepest; i++) {
    for (const l of lists) {
      const id = l[i]?.id;
      if (id !== undefined && !seen.has(id)) {
        seen.add(id);
        out.push(id);
      }
    }
  }
  return out;
}
