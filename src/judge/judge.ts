/**
 * The relevance judge. Which judge a setting names: src/judge/spec.ts. Four modes:
 *
 * - `model`: any chat provider promptfoo knows, by its provider id (anthropic:messages:MODEL, openai:chat:MODEL,
 *   azure:chat:DEPLOYMENT, ollama:chat:MODEL, …), called through promptfoo's provider loader (src/llm/provider.ts).
 * - `bedrock`: Claude Haiku 4.5 on Amazon Bedrock (default inference profile
 *   `us.anthropic.claude-haiku-4-5-20251001-v1:0`) through the Converse API, temperature 0, a few
 *   output tokens. Region / credentials / endpoint from the standard AWS configuration (or options).
 *   Strict parsing; at most `concurrency` calls in flight; per-request timeout; bounded retries with
 *   backoff on throttling and 5xx (see src/embeddings/bedrock-client.ts); disk cache.
 * - `similarity`: a HEURISTIC, not a judge: cosine similarity of the local embedder (USE-lite) between
 *   the result and the query / expected passages, mapped to HIGH / PARTIAL / NOT_RELEVANT by fixed
 *   thresholds. Its numbers are labelled heuristic wherever they appear.
 * - `off`: nothing is judged; reports say "judge: off".
 *
 * `model` and `bedrock` share one protocol (modelJudge below): the one-token answer, strict parsing, temperature 0,
 * deadlines and the eval budget, an unreachable endpoint ending the judging at once, errors counted and never
 * passed, tokens and cost per call, and the verdict cache keyed by model (or provider id) and resolved endpoint.
 *
 * A judge call never throws for a model failure: it returns `{ verdict: null, error }` and counts the
 * error in `stats.errors`. Callers treat an error as a judge error, never as relevant.
 */
import type { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { UserError } from '../errors.ts';
import {
  BedrockCallError,
  bedrockEndpoint,
  bedrockSdk,
  createBedrockClient,
  describeError,
  envMs,
  withRetries,
  type BedrockClientOptions,
  type RetryInfo,
} from '../embeddings/bedrock-client.ts';
import { createEmbedder } from '../embeddings/index.ts';
import type { Embedder } from '../embeddings/types.ts';
import { cosine } from '../embeddings/vector.ts';
import { JudgeCache, DEFAULT_JUDGE_CACHE_DIR, sha256 } from './cache.ts';
import {
  ANSWER_PROMPT_VERSION,
  COMPACTNESS_PROMPT_VERSION,
  GRADE_PROMPT_VERSION,
  gradePrompt,
  parseGrade,
  type GradeInput,
  RELEVANCE_PROMPT_VERSION,
  RELEVANCE_VERDICTS,
  SEEKER_FIT_PROMPT_VERSION,
  SEEKER_FIT_VERDICTS,
  answerPrompt,
  compactnessPrompt,
  parseCompactness,
  parseExact,
  relevancePrompt,
  seekerFitPrompt,
  type AnswerInput,
  type JudgePrompt,
  type RelevanceInput,
  type RelevanceVerdict,
  type SeekerFitVerdict,
} from './prompt.ts';
import { NoAnswerError, callChatProvider, chatProviderConfig as judgeProviderConfig, loadChatProvider, probeEndpoint, providerEndpoint } from '../llm/provider.ts';
import { DEFAULT_JUDGE_MODEL, resolveJudgeSpec, type JudgeMode, type JudgeSpec } from './spec.ts';
import { envFlag } from '../util/env.ts';

/**
 * USD per million tokens (input, output), list prices of Claude Haiku 4.5 on Bedrock when this was
 * written. Estimates only: override with the `price` option or RANKGATE_JUDGE_PRICE="<in>,<out>".
 */
export const MODEL_PRICES: Record<string, { input: number; output: number }> = {
  'anthropic.claude-haiku-4-5-20251001-v1:0': { input: 1.0, output: 5.0 },
  'anthropic:messages:claude-haiku-4-5-20251001': { input: 1.0, output: 5.0 },
  'anthropic:messages:claude-haiku-4-5': { input: 1.0, output: 5.0 },
  'openai:chat:gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'openai:chat:gpt-4o-mini': { input: 0.15, output: 0.6 },
};

/**
 * Similarity-mode thresholds on max(cos(result, query), cos(result, other expected passages)) with
 * USE-lite. CALIBRATED by `node --import tsx src/judge/calibrate.ts` on the demo set
 * (datasets/golden/golden-set-en.json + datasets/corpus, 300-token chunks, max Youden J):
 *   other "high" passage of the same query  n=44   p10 0.380  p50 0.530  p90 0.660
 *   "partial" passages                      n=20   p10 0.392  p50 0.474  p90 0.648
 *   chunks of other books                   n=4477 p10 0.239  p50 0.366  p90 0.491
 * The distributions overlap: this is a heuristic, not a judge, and is labelled so. Re-run after
 * changing the demo set, the chunk size or the embedder.
 */
export const SIMILARITY_THRESHOLDS = { high: 0.48, partial: 0.4 } as const;

export interface JudgeOptions extends BedrockClientOptions {
  /** A judge setting (src/judge/spec.ts): auto (default), off, similarity, bedrock, or a promptfoo chat provider id. */
  mode?: string;
  /** Bedrock model or inference-profile id (bedrock mode). Default RANKGATE_JUDGE_MODEL or Claude Haiku 4.5 (us profile). */
  model?: string;
  /** Default 10 (the longest answer, NOT_RELEVANT, is a few tokens). */
  maxTokens?: number;
  /** Calls in flight at once. Default 4. */
  concurrency?: number;
  /** Cache directory; default `.rankgate/cache/judge`. `false` disables the cache. */
  cacheDir?: string | false;
  /** Ignore cached verdicts (they are still rewritten). Default RANKGATE_JUDGE_REFRESH=1. */
  refresh?: boolean;
  /** USD per million tokens; default MODEL_PRICES or RANKGATE_JUDGE_PRICE. */
  price?: { input: number; output: number };
  /**
   * Seconds of judging this judge may spend in one eval (one process): wall time with at least one model call in
   * flight. Once spent, every remaining judgement is a judge error at once ("judge budget spent"). Default
   * RANKGATE_JUDGE_BUDGET_S, else 900.
   */
  budgetSeconds?: number;
  /**
   * After this many calls in a row got no answer at all (call timeout, refused or reset connections), the
   * endpoint is taken as unreachable: every remaining judgement is a judge error at once. Default
   * RANKGATE_JUDGE_UNREACHABLE_AFTER, else 2. 0 disables.
   */
  unreachableAfter?: number;
  /** similarity mode: embedder (default use-lite) and thresholds. */
  embedder?: Embedder | string;
  thresholds?: { high: number; partial: number };
}

export interface JudgeStats extends RetryInfo {
  /** Model calls that returned a response (parsed or not). */
  calls: number;
  cacheHits: number;
  inputTokens: number;
  outputTokens: number;
  /** Estimated USD for the calls made (cache hits cost nothing); null when the model's price is unknown. */
  estimatedCostUsd: number | null;
  /** Judge errors: failed calls and unparseable answers. */
  errors: number;
  /** Judgements returned (cached, called or heuristic). */
  judged: number;
  /** Judgements refused without a call: budget spent or endpoint unreachable. */
  skipped: number;
}

export interface Judgement<V> {
  /** null = judge error (never counted as relevant). */
  verdict: V | null;
  error?: string;
  cached: boolean;
  /** The model's raw answer (bedrock) or the similarity (similarity mode). */
  raw?: string;
  /** similarity mode only. */
  similarity?: number;
  heuristic: boolean;
  /** Model call made for this judgement (not cached, not heuristic), with its tokens and estimated USD. */
  usage?: { inputTokens: number; outputTokens: number; costUsd: number | null };
}

export interface Judge {
  readonly mode: JudgeMode;
  readonly model: string | null;
  readonly promptVersion: string;
  /** "judge: off", "judge: bedrock us.anthropic... (relevance-v1)", "judge: openai:chat:gpt-4.1-mini (relevance-v1)", "judge: similarity (HEURISTIC, use-lite ...)". */
  readonly label: string;
  /** The answer judge's label: the same judge with its own prompt ("judge: openai:chat:gpt-4.1-mini (answer-v1)"). */
  readonly answerLabel: string;
  /** Why this judge was picked ("auto: ANTHROPIC_API_KEY is set", "configured (RANKGATE_JUDGE=off)"). */
  readonly reason: string;
  /** The endpoint the model calls go to (model and bedrock modes), for the report. */
  readonly endpoint?: string;
  readonly stats: JudgeStats;
  relevance(input: RelevanceInput): Promise<Judgement<RelevanceVerdict>>;
  /** Dark Night rubric (bedrock only). */
  seekerFit(input: { query: string; result: string; rank: number }): Promise<Judgement<SeekerFitVerdict>>;
  /** The docs-search promptfoo design compactness 1-5 (model judges only). */
  compactness(input: { query: string; result: string }): Promise<Judgement<number>>;
  /** The NQ evaluation spec's answer quality: the service's answer against the reference, 1-5 (model judges only). */
  answer(input: AnswerInput): Promise<Judgement<number>>;
  /** A relevance label 0-3 of a passage for a query (grade-v1, UMBRELA's scale: `rankgate judge pool`; model judges only). */
  grade(input: GradeInput): Promise<Judgement<number>>;
  /** Whether grade(input) would be answered from the verdict cache (no call): the pool's cost estimate counts the others. */
  gradeCached(input: GradeInput): boolean;
  /** USD per million tokens (input, output) of the judge's model, when known (MODEL_PRICES or RANKGATE_JUDGE_PRICE). */
  readonly price?: { input: number; output: number } | null;
  /** Whether a rubric needs a model this mode does not have. */
  supportsRubrics: boolean;
}

/** The judge's mode for a setting (src/judge/spec.ts); bad values are a UserError. */
export function resolveJudgeMode(mode?: string, env: NodeJS.ProcessEnv = process.env): JudgeMode {
  return resolveJudgeSpec(mode, env).mode;
}

function priceFor(model: string, opt?: { input: number; output: number }): { input: number; output: number } | null {
  if (opt) return opt;
  const env = process.env.RANKGATE_JUDGE_PRICE;
  if (env) {
    const [a, b] = env.split(',').map(Number);
    if (Number.isFinite(a) && Number.isFinite(b)) return { input: a!, output: b! };
    throw new UserError(`RANKGATE_JUDGE_PRICE="${env}": expected "<USD per million input tokens>,<USD per million output tokens>"`);
  }
  // Inference profiles (us./eu./apac./global.) price like the model they route to.
  const base = model.replace(/^(us|eu|apac|jp|au|global|us-gov)\./, '');
  return MODEL_PRICES[base] ?? null;
}

/**
 * Hash of each prompt TEMPLATE: the prompt rendered with placeholder inputs, so a change of wording changes the
 * cache key even when someone forgets to bump the prompt version.
 */
const PLACEHOLDER = { query: '\u0001QUERY\u0001', result: '\u0001RESULT\u0001', rank: 0 };
export const TEMPLATE_HASHES = {
  relevance: sha256(JSON.stringify(relevancePrompt({ ...PLACEHOLDER, expected: ['\u0001EXPECTED\u0001'] }))).slice(0, 16),
  seekerFit: sha256(JSON.stringify(seekerFitPrompt(PLACEHOLDER))).slice(0, 16),
  compactness: sha256(JSON.stringify(compactnessPrompt(PLACEHOLDER))).slice(0, 16),
  answer: sha256(JSON.stringify(answerPrompt({ question: PLACEHOLDER.query, reference: ['\u0001REFERENCE\u0001'], answer: PLACEHOLDER.result }))).slice(0, 16),
  grade: sha256(JSON.stringify(gradePrompt({ query: PLACEHOLDER.query, passage: PLACEHOLDER.result }))).slice(0, 16),
};

function semaphore(n: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((r) => waiting.push(r));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

function newStats(): JudgeStats {
  return { calls: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0, errors: 0, judged: 0, skipped: 0, attempts: 0, retries: 0, throttled: 0 };
}

/**
 * The judge of a setting, by the one rule of src/judge/spec.ts (RANKGATE_JUDGE > opts.mode other than auto > auto).
 * `env` is where RANKGATE_JUDGE and the keys are read (a CLI's `--judge` passes it as RANKGATE_JUDGE).
 */
export async function createJudge(opts: JudgeOptions = {}, env: NodeJS.ProcessEnv = process.env): Promise<Judge> {
  const spec = resolveJudgeSpec(opts.mode, env);
  if (spec.mode === 'off') return offJudge(spec.reason);
  if (spec.mode === 'similarity') return similarityJudge(opts, spec.reason);
  if (spec.mode === 'model') return providerJudge(spec, opts);
  // `bedrock` keeps the model option; `bedrock:converse:MODEL` names the model itself
  return bedrockJudge({ ...opts, model: spec.setting?.startsWith('bedrock:converse:') ? spec.model! : (opts.model ?? spec.model ?? DEFAULT_JUDGE_MODEL) }, spec.reason);
}

/** The judge's deadlines, from options, else env, else the defaults (see JudgeOptions and docs/judge.md). */
export function judgeDeadlines(opts: Pick<JudgeOptions, 'timeoutMs' | 'callTimeoutMs' | 'budgetSeconds' | 'unreachableAfter'>) {
  const num = (v: unknown, name: string, min: number): number | undefined => {
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) throw new UserError(`judge config ${name}: expected a number >= ${min}, got ${JSON.stringify(v)}`);
    return v;
  };
  const env = (name: string, scale = 1) => {
    try {
      return envMs(name, scale);
    } catch (e) {
      throw new UserError((e as Error).message);
    }
  };
  const timeoutMs = num(opts.timeoutMs, 'timeoutMs', 1) ?? env('RANKGATE_JUDGE_TIMEOUT_MS') ?? 15_000;
  const callTimeoutMs = num(opts.callTimeoutMs, 'callTimeoutMs', 1) ?? env('RANKGATE_JUDGE_CALL_TIMEOUT_MS') ?? 30_000;
  const budgetMs = (num(opts.budgetSeconds, 'budgetSeconds', 0.001) ?? 0) * 1000 || (env('RANKGATE_JUDGE_BUDGET_S', 1000) ?? 900_000);
  const ua = process.env.RANKGATE_JUDGE_UNREACHABLE_AFTER;
  const envUa = ua === undefined || ua === '' ? undefined : Number(ua);
  if (envUa !== undefined && !(Number.isInteger(envUa) && envUa >= 0)) throw new UserError(`RANKGATE_JUDGE_UNREACHABLE_AFTER="${ua}": expected an integer >= 0`);
  const unreachableAfter = num(opts.unreachableAfter, 'unreachableAfter', 0) ?? envUa ?? 2;
  return { timeoutMs, callTimeoutMs, budgetMs, unreachableAfter };
}

/**
 * Where the judge's calls go, as part of the cache key: the endpoint option, else AWS_ENDPOINT_URL_BEDROCK_RUNTIME,
 * else the regional Bedrock endpoint of the region the client resolved (config, AWS_REGION, profile).
 */
async function resolvedEndpoint(opts: JudgeOptions, client: BedrockRuntimeClient): Promise<string> {
  const given = bedrockEndpoint(opts);
  if (given) return given.replace(/\/+$/, '');
  let region = opts.region;
  if (!region) {
    try {
      const r = client.config.region;
      region = typeof r === 'function' ? await r() : (r as string | undefined);
    } catch {
      region = undefined;
    }
  }
  return `https://bedrock-runtime.${region ?? 'unknown-region'}.amazonaws.com`;
}

function offJudge(reason: string): Judge {
  const off = async (): Promise<never> => {
    throw new Error(`judge: off (${reason}; set RANKGATE_JUDGE to a chat provider id such as anthropic:messages:MODEL or openai:chat:MODEL, to bedrock with AWS configured, or to similarity)`);
  };
  return {
    mode: 'off',
    model: null,
    promptVersion: RELEVANCE_PROMPT_VERSION,
    label: 'judge: off',
    answerLabel: 'judge: off',
    reason,
    stats: { ...newStats(), estimatedCostUsd: 0 },
    relevance: off,
    seekerFit: off,
    compactness: off,
    answer: off,
    grade: off,
    gradeCached: () => false,
    supportsRubrics: false,
  };
}

/** How a model judge reaches its model: one call per judgement attempt sequence, bounded by the caller's signal. */
interface ModelTransport {
  mode: 'bedrock' | 'model';
  /** Bedrock model id, or the promptfoo provider id (cache key, label, messages). */
  model: string;
  /** Where the calls go (cache key, unreachable messages, report). */
  endpoint: string;
  /** USD per million tokens, or null when unknown (a call's own costUsd wins). */
  price: { input: number; output: number } | null;
  call(prompt: JudgePrompt, maxTokens: number, signal: AbortSignal, stats: JudgeStats): Promise<{ text: string | undefined; inputTokens: number; outputTokens: number; costUsd?: number | null }>;
  /** A call that got no answer at all (counts toward unreachableAfter). */
  isNoAnswer(e: unknown): boolean;
  /** Checked once before the first call: why the endpoint cannot be reached, or undefined. */
  preflight?(): Promise<string | undefined>;
}

async function bedrockJudge(opts: JudgeOptions, reason: string): Promise<Judge> {
  const model = opts.model ?? process.env.RANKGATE_JUDGE_MODEL ?? DEFAULT_JUDGE_MODEL;
  const deadlines = judgeDeadlines(opts);
  const callOpts = { ...opts, timeoutMs: deadlines.timeoutMs, callTimeoutMs: deadlines.callTimeoutMs };
  const client: BedrockRuntimeClient = createBedrockClient(callOpts);
  const endpoint = await resolvedEndpoint(opts, client);
  return modelJudge(
    {
      mode: 'bedrock',
      model,
      endpoint,
      price: priceFor(model, opts.price),
      async call(prompt, maxTokens, signal, stats) {
        const res = await withRetries(
          model,
          { ...callOpts, signal },
          (abortSignal) =>
            client.send(
              new (bedrockSdk().ConverseCommand)({
                modelId: model,
                system: [{ text: prompt.system }],
                messages: [{ role: 'user', content: [{ text: prompt.user }] }],
                inferenceConfig: { temperature: 0, maxTokens },
              }),
              { abortSignal },
            ),
          stats,
        );
        const content = res.output?.message?.content;
        return {
          text: Array.isArray(content) ? content.map((c) => ('text' in c && typeof c.text === 'string' ? c.text : '')).join('') : undefined,
          inputTokens: res.usage?.inputTokens ?? 0,
          outputTokens: res.usage?.outputTokens ?? 0,
        };
      },
      isNoAnswer: (e) => e instanceof BedrockCallError && e.code === 'NoAnswer',
    },
    opts,
    deadlines,
    `judge: bedrock ${model} (${RELEVANCE_PROMPT_VERSION})`,
    reason,
  );
}

/** A judge on any chat provider promptfoo knows (src/llm/provider.ts). */
async function providerJudge(spec: JudgeSpec, opts: JudgeOptions): Promise<Judge> {
  const providerId = spec.model!;
  const family = spec.family!;
  const deadlines = judgeDeadlines(opts);
  const endpoint = (opts.endpoint ? opts.endpoint.replace(/\/+$/, '') : null) ?? providerEndpoint(family) ?? `promptfoo ${family}`;
  const maxTokens = opts.maxTokens ?? 10;
  const config = { ...judgeProviderConfig(family, maxTokens), ...(opts.endpoint ? { apiBaseUrl: opts.endpoint } : {}) };
  let provider: Awaited<ReturnType<typeof loadChatProvider>> | undefined;
  return modelJudge(
    {
      mode: 'model',
      model: providerId,
      endpoint,
      price: priceFor(providerId, opts.price),
      async call(prompt, _maxTokens, signal) {
        provider ??= await loadChatProvider(providerId, config);
        return callChatProvider(provider, providerId, prompt, deadlines.callTimeoutMs, signal);
      },
      isNoAnswer: (e) => e instanceof NoAnswerError,
      preflight: /^https?:\/\//.test(endpoint) ? () => probeEndpoint(endpoint) : undefined,
    },
    opts,
    deadlines,
    `judge: ${providerId} (${RELEVANCE_PROMPT_VERSION})`,
    spec.reason,
  );
}

/** The protocol every model judge shares: cache, budget, unreachable endpoint, strict parsing, tokens and cost. */
function modelJudge(t: ModelTransport, opts: JudgeOptions, deadlines: ReturnType<typeof judgeDeadlines>, label: string, reason: string): Judge {
  const { model, endpoint } = t;
  // "seconds of judging": wall time during which at least one model call is in flight (so a long eval's own search
  // time between judgements never spends the judge's budget)
  let busyMs = 0;
  let busySince = 0;
  let inFlight = 0;
  const busyEnter = () => {
    if (inFlight++ === 0) busySince = Date.now();
  };
  const busyLeave = () => {
    if (--inFlight === 0) busyMs += Date.now() - busySince;
  };
  const judgingMs = () => busyMs + (inFlight > 0 ? Date.now() - busySince : 0);
  /** Aborted when the endpoint is shown unreachable: calls still waiting on it end at once. */
  const giveUp = new AbortController();
  let noAnswerRun = 0;
  let unreachable: string | undefined;
  let preflight: Promise<void> | undefined;
  /** Why no call may be made now (budget spent, endpoint unreachable), or undefined. */
  const refusal = (): string | undefined => {
    if (unreachable) return unreachable;
    if (judgingMs() >= deadlines.budgetMs) {
      return `judge budget spent: ${deadlines.budgetMs / 1000} s of judging in this eval (budgetSeconds / RANKGATE_JUDGE_BUDGET_S); not judged`;
    }
    return undefined;
  };
  const cache = opts.cacheDir === false ? null : new JudgeCache(opts.cacheDir ?? DEFAULT_JUDGE_CACHE_DIR);
  const refresh = opts.refresh ?? envFlag('RANKGATE_JUDGE_REFRESH');
  const limit = semaphore(Math.max(1, opts.concurrency ?? 4));
  const price = t.price;
  const stats = newStats();
  const maxTokens = opts.maxTokens ?? 10;
  let costKnown = true;

  /** Everything that can change a verdict: model, endpoint, prompt version and template, inputs (with the rank), and
   * the exact prompt sent (which holds them all). */
  const keyParts = (promptVersion: string, prompt: JudgePrompt, key: { query: string; context: readonly string[]; passage: string; rank?: number }, template: string) => ({
    model,
    endpoint,
    promptVersion,
    template,
    promptSha256: sha256(prompt.system + '\u0000' + prompt.user),
    ...key,
  });

  async function ask<V>(
    promptVersion: string,
    prompt: JudgePrompt,
    key: { query: string; context: readonly string[]; passage: string; rank?: number },
    parse: (text: string | undefined) => V | null,
    expected: string,
    template: string,
  ): Promise<Judgement<V>> {
    const parts = keyParts(promptVersion, prompt, key, template);
    if (cache && !refresh) {
      const hit = cache.get(parts);
      const v = hit ? parse(hit.verdict) : null;
      if (hit && v === null) cache.refuse(parts, hit.verdict);
      if (hit && v !== null) {
        stats.cacheHits++;
        stats.judged++;
        return { verdict: v, cached: true, raw: hit.raw, heuristic: false };
      }
    }
    if (t.preflight && !preflight) {
      preflight = t.preflight().then((why) => {
        if (why && !unreachable) unreachable = `judge endpoint ${endpoint} unreachable (${why}); not judged`;
      });
    }
    await preflight;
    const refused = refusal();
    if (refused) {
      stats.errors++;
      stats.skipped++;
      return { verdict: null, error: refused, cached: false, heuristic: false };
    }
    return limit(async () => {
      // checked again: the budget may have run out, or the endpoint shown dead, while this call waited its turn
      const late = refusal();
      if (late) {
        stats.errors++;
        stats.skipped++;
        return { verdict: null, error: late, cached: false, heuristic: false };
      }
      let text: string | undefined;
      let inTok = 0;
      let outTok = 0;
      let cost: number | null = null;
      let called = false;
      try {
        busyEnter();
        const res = await t.call(prompt, maxTokens, giveUp.signal, stats).finally(busyLeave);
        noAnswerRun = 0;
        stats.calls++;
        called = true;
        inTok = res.inputTokens;
        outTok = res.outputTokens;
        stats.inputTokens += inTok;
        stats.outputTokens += outTok;
        cost = typeof res.costUsd === 'number' ? res.costUsd : price ? (inTok * price.input + outTok * price.output) / 1e6 : null;
        if (cost === null) costKnown = false;
        stats.estimatedCostUsd = costKnown ? (stats.estimatedCostUsd ?? 0) + (cost ?? 0) : null;
        text = res.text;
      } catch (e) {
        stats.errors++;
        if (t.isNoAnswer(e)) {
          noAnswerRun++;
          if (deadlines.unreachableAfter > 0 && noAnswerRun >= deadlines.unreachableAfter && !unreachable) {
            unreachable = `judge endpoint ${endpoint} unreachable: ${noAnswerRun} calls in a row got no answer (last: ${(e as Error).message}); not judged (unreachableAfter / RANKGATE_JUDGE_UNREACHABLE_AFTER)`;
            giveUp.abort();
          }
        } else noAnswerRun = 0;
        if (giveUp.signal.aborted && unreachable && /abandoned by the caller/.test((e as Error).message)) {
          stats.skipped++;
          return { verdict: null, error: unreachable, cached: false, heuristic: false };
        }
        return { verdict: null, error: e instanceof Error ? e.message : describeError(e), cached: false, heuristic: false };
      }
      const usage = called ? { inputTokens: inTok, outputTokens: outTok, costUsd: cost } : undefined;
      const v = parse(text);
      if (v === null) {
        stats.errors++;
        const shown = text === undefined ? 'no text content' : JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
        return { verdict: null, error: `unparseable judge answer from ${model}: ${shown} (expected ${expected})`, cached: false, raw: text, heuristic: false, usage };
      }
      stats.judged++;
      cache?.set(parts, { verdict: String(v), raw: text ?? '', inputTokens: inTok, outputTokens: outTok });
      return { verdict: v, cached: false, raw: text, heuristic: false, usage };
    });
  }

  if (!price) stats.estimatedCostUsd = null;
  return {
    mode: t.mode,
    model,
    promptVersion: RELEVANCE_PROMPT_VERSION,
    label,
    answerLabel: label.replace(`(${RELEVANCE_PROMPT_VERSION})`, `(${ANSWER_PROMPT_VERSION})`),
    reason,
    endpoint,
    stats,
    supportsRubrics: true,
    relevance: (input) =>
      ask(
        RELEVANCE_PROMPT_VERSION,
        relevancePrompt(input),
        { query: input.query, context: input.expected, passage: input.result, rank: input.rank },
        (t) => parseExact(t, RELEVANCE_VERDICTS),
        RELEVANCE_VERDICTS.join(' | '),
        TEMPLATE_HASHES.relevance,
      ),
    seekerFit: (input) =>
      ask(
        SEEKER_FIT_PROMPT_VERSION,
        seekerFitPrompt(input),
        { query: input.query, context: [], passage: input.result, rank: input.rank },
        (t) => parseExact(t, SEEKER_FIT_VERDICTS),
        SEEKER_FIT_VERDICTS.join(' | '),
        TEMPLATE_HASHES.seekerFit,
      ),
    compactness: (input) =>
      ask(
        COMPACTNESS_PROMPT_VERSION,
        compactnessPrompt(input),
        { query: input.query, context: [], passage: input.result },
        parseCompactness,
        '1-5',
        TEMPLATE_HASHES.compactness,
      ),
    answer: (input) =>
      ask(ANSWER_PROMPT_VERSION, answerPrompt(input), { query: input.question, context: input.reference, passage: input.answer }, parseCompactness, '1-5', TEMPLATE_HASHES.answer),
    grade: (input) => ask(GRADE_PROMPT_VERSION, gradePrompt(input), { query: input.query, context: [], passage: input.passage }, parseGrade, '0 | 1 | 2 | 3', TEMPLATE_HASHES.grade),
    gradeCached: (input) => {
      if (!cache || refresh) return false;
      const hit = cache.get(keyParts(GRADE_PROMPT_VERSION, gradePrompt(input), { query: input.query, context: [], passage: input.passage }, TEMPLATE_HASHES.grade));
      return !!hit && parseGrade(hit.verdict) !== null;
    },
    price,
  };
}

async function similarityJudge(opts: JudgeOptions, reason: string): Promise<Judge> {
  const embedder = typeof opts.embedder === 'object' ? opts.embedder : await createEmbedder(opts.embedder ?? 'use-lite');
  const th = opts.thresholds ?? SIMILARITY_THRESHOLDS;
  if (!(th.high > th.partial)) throw new UserError(`similarity thresholds: high (${th.high}) must be above partial (${th.partial})`);
  const stats = newStats();
  const vecCache = new Map<string, number[]>();
  const vec = async (texts: string[]): Promise<number[][]> => {
    const missing = [...new Set(texts.filter((t) => !vecCache.has(t)))];
    if (missing.length) {
      const vs = await embedder.embedDocuments(missing);
      missing.forEach((t, i) => vecCache.set(t, vs[i]!));
    }
    return texts.map((t) => vecCache.get(t)!);
  };
  const rubric = async (): Promise<never> => {
    throw new Error('rubric and answer judging need a model judge: the similarity heuristic cannot grade them');
  };
  return {
    mode: 'similarity',
    model: embedder.id,
    promptVersion: `similarity-${embedder.id}-${th.high}-${th.partial}`,
    label: `judge: similarity (HEURISTIC: ${embedder.id} cosine, HIGH >= ${th.high}, PARTIAL >= ${th.partial})`,
    answerLabel: 'judge: similarity (HEURISTIC): cannot grade answers',
    reason,
    stats,
    supportsRubrics: false,
    async relevance(input) {
      const [r, q, ...ex] = await vec([input.result, input.query, ...input.expected]);
      const sim = Math.max(cosine(r!, q!), ...ex.map((e) => cosine(r!, e)));
      stats.judged++;
      const verdict: RelevanceVerdict = sim >= th.high ? 'HIGH' : sim >= th.partial ? 'PARTIAL' : 'NOT_RELEVANT';
      return { verdict, cached: false, raw: sim.toFixed(4), similarity: sim, heuristic: true };
    },
    seekerFit: rubric,
    compactness: rubric,
    answer: rubric,
    grade: rubric,
    gradeCached: () => false,
  };
}
