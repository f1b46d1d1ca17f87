/**
 * The relevance judge (issue 7). Three modes:
 *
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
 * A judge call never throws for a model failure: it returns `{ verdict: null, error }` and counts the
 * error in `stats.errors`. Callers treat an error as a judge error, never as relevant.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConverseCommand, type BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { UserError } from '../errors.ts';
import { createBedrockClient, describeError, withRetries, type BedrockClientOptions, type RetryInfo } from '../embeddings/bedrock-client.ts';
import { createEmbedder } from '../embeddings/index.ts';
import type { Embedder } from '../embeddings/types.ts';
import { cosine } from '../embeddings/vector.ts';
import { JudgeCache, DEFAULT_JUDGE_CACHE_DIR } from './cache.ts';
import {
  COMPACTNESS_PROMPT_VERSION,
  RELEVANCE_PROMPT_VERSION,
  RELEVANCE_VERDICTS,
  SEEKER_FIT_PROMPT_VERSION,
  SEEKER_FIT_VERDICTS,
  compactnessPrompt,
  parseCompactness,
  parseExact,
  relevancePrompt,
  seekerFitPrompt,
  type JudgePrompt,
  type RelevanceInput,
  type RelevanceVerdict,
  type SeekerFitVerdict,
} from './prompt.ts';

export type JudgeMode = 'bedrock' | 'similarity' | 'off';
export const JUDGE_MODES: readonly JudgeMode[] = ['bedrock', 'similarity', 'off'];

export const DEFAULT_JUDGE_MODEL = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';

/**
 * USD per million tokens (input, output), list prices of Claude Haiku 4.5 on Bedrock when this was
 * written. Estimates only: override with the `price` option or RANKGATE_JUDGE_PRICE="<in>,<out>".
 */
export const MODEL_PRICES: Record<string, { input: number; output: number }> = {
  'anthropic.claude-haiku-4-5-20251001-v1:0': { input: 1.0, output: 5.0 },
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
  /** `auto` (default): `bedrock` when AWS is configured (see awsConfigured), else `off`. */
  mode?: JudgeMode | 'auto';
  /** Bedrock model or inference-profile id. Default RANKGATE_JUDGE_MODEL or Claude Haiku 4.5 (us profile). */
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
  /** "judge: off", "judge: bedrock us.anthropic... (relevance-v1)", "judge: similarity (HEURISTIC, use-lite ...)". */
  readonly label: string;
  readonly stats: JudgeStats;
  relevance(input: RelevanceInput): Promise<Judgement<RelevanceVerdict>>;
  /** Dark Night rubric (bedrock only). */
  seekerFit(input: { query: string; result: string; rank: number }): Promise<Judgement<SeekerFitVerdict>>;
  /** Seed 003 compactness 1-5 (bedrock only). */
  compactness(input: { query: string; result: string }): Promise<Judgement<number>>;
  /** Whether a rubric needs a model this mode does not have. */
  supportsRubrics: boolean;
}

/** Is there any standard AWS configuration (env or a region in the shared config file)? */
export function awsConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.AWS_REGION || env.AWS_DEFAULT_REGION || env.AWS_BEDROCK_REGION || env.AWS_PROFILE) return true;
  if (env.AWS_ACCESS_KEY_ID || env.AWS_BEARER_TOKEN_BEDROCK || env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME) return true;
  const cfg = env.AWS_CONFIG_FILE || join(homedir(), '.aws', 'config');
  try {
    return existsSync(cfg) && /^\s*region\s*=/m.test(readFileSync(cfg, 'utf8'));
  } catch {
    return false;
  }
}

/** Resolve the mode: explicit option, else RANKGATE_JUDGE, else auto. Bad values are a UserError. */
export function resolveJudgeMode(mode?: string, env: NodeJS.ProcessEnv = process.env): JudgeMode {
  const m = mode ?? env.RANKGATE_JUDGE ?? 'auto';
  if (m === 'auto') return awsConfigured(env) ? 'bedrock' : 'off';
  if ((JUDGE_MODES as readonly string[]).includes(m)) return m as JudgeMode;
  throw new UserError(`judge mode "${m}" (RANKGATE_JUDGE or config.mode): expected one of bedrock, similarity, off, auto`);
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
  return { calls: 0, cacheHits: 0, inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0, errors: 0, judged: 0, attempts: 0, retries: 0, throttled: 0 };
}

export async function createJudge(opts: JudgeOptions = {}): Promise<Judge> {
  const mode = resolveJudgeMode(opts.mode);
  if (mode === 'off') return offJudge();
  if (mode === 'similarity') return similarityJudge(opts);
  return bedrockJudge(opts);
}

function offJudge(): Judge {
  const off = async (): Promise<never> => {
    throw new Error('judge: off (no AWS configuration; set RANKGATE_JUDGE=bedrock with AWS configured, or RANKGATE_JUDGE=similarity)');
  };
  return {
    mode: 'off',
    model: null,
    promptVersion: RELEVANCE_PROMPT_VERSION,
    label: 'judge: off',
    stats: { ...newStats(), estimatedCostUsd: 0 },
    relevance: off,
    seekerFit: off,
    compactness: off,
    supportsRubrics: false,
  };
}

function bedrockJudge(opts: JudgeOptions): Judge {
  const model = opts.model ?? process.env.RANKGATE_JUDGE_MODEL ?? DEFAULT_JUDGE_MODEL;
  const client: BedrockRuntimeClient = createBedrockClient({ timeoutMs: 30_000, ...opts });
  const cache = opts.cacheDir === false ? null : new JudgeCache(opts.cacheDir ?? DEFAULT_JUDGE_CACHE_DIR);
  const refresh = opts.refresh ?? process.env.RANKGATE_JUDGE_REFRESH === '1';
  const limit = semaphore(Math.max(1, opts.concurrency ?? 4));
  const price = priceFor(model, opts.price);
  const stats = newStats();
  if (!price) stats.estimatedCostUsd = null;
  const maxTokens = opts.maxTokens ?? 10;

  async function ask<V>(
    promptVersion: string,
    prompt: JudgePrompt,
    key: { query: string; context: readonly string[]; passage: string },
    parse: (text: string | undefined) => V | null,
    expected: string,
  ): Promise<Judgement<V>> {
    const parts = { model, promptVersion, ...key };
    if (cache && !refresh) {
      const hit = cache.get(parts);
      const v = hit ? parse(hit.verdict) : null;
      if (hit && v !== null) {
        stats.cacheHits++;
        stats.judged++;
        return { verdict: v, cached: true, raw: hit.raw, heuristic: false };
      }
    }
    return limit(async () => {
      let text: string | undefined;
      let inTok = 0;
      let outTok = 0;
      let cost: number | null = null;
      let called = false;
      try {
        const res = await withRetries(
          model,
          opts,
          () =>
            client.send(
              new ConverseCommand({
                modelId: model,
                system: [{ text: prompt.system }],
                messages: [{ role: 'user', content: [{ text: prompt.user }] }],
                inferenceConfig: { temperature: 0, maxTokens },
              }),
            ),
          stats,
        );
        stats.calls++;
        called = true;
        inTok = res.usage?.inputTokens ?? 0;
        outTok = res.usage?.outputTokens ?? 0;
        stats.inputTokens += inTok;
        stats.outputTokens += outTok;
        cost = price ? (inTok * price.input + outTok * price.output) / 1e6 : null;
        if (cost !== null && stats.estimatedCostUsd !== null) stats.estimatedCostUsd += cost;
        const content = res.output?.message?.content;
        text = Array.isArray(content) ? content.map((c) => ('text' in c && typeof c.text === 'string' ? c.text : '')).join('') : undefined;
      } catch (e) {
        stats.errors++;
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

  return {
    mode: 'bedrock',
    model,
    promptVersion: RELEVANCE_PROMPT_VERSION,
    label: `judge: bedrock ${model} (${RELEVANCE_PROMPT_VERSION})`,
    stats,
    supportsRubrics: true,
    relevance: (input) =>
      ask(
        RELEVANCE_PROMPT_VERSION,
        relevancePrompt(input),
        { query: input.query, context: input.expected, passage: input.result },
        (t) => parseExact(t, RELEVANCE_VERDICTS),
        RELEVANCE_VERDICTS.join(' | '),
      ),
    seekerFit: (input) =>
      ask(
        SEEKER_FIT_PROMPT_VERSION,
        seekerFitPrompt(input),
        { query: input.query, context: [], passage: input.result },
        (t) => parseExact(t, SEEKER_FIT_VERDICTS),
        SEEKER_FIT_VERDICTS.join(' | '),
      ),
    compactness: (input) =>
      ask(COMPACTNESS_PROMPT_VERSION, compactnessPrompt(input), { query: input.query, context: [], passage: input.result }, parseCompactness, '1-5'),
  };
}

async function similarityJudge(opts: JudgeOptions): Promise<Judge> {
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
    throw new Error('rubric judging needs the bedrock judge: the similarity heuristic cannot grade it');
  };
  return {
    mode: 'similarity',
    model: embedder.id,
    promptVersion: `similarity-${embedder.id}-${th.high}-${th.partial}`,
    label: `judge: similarity (HEURISTIC: ${embedder.id} cosine, HIGH >= ${th.high}, PARTIAL >= ${th.partial})`,
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
  };
}
