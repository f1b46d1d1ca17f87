/**
 * `llm:PROVIDER_ID`: any promptfoo chat provider as a pointwise reranker, for teams without a reranker API. Each
 * passage is one call (src/llm/provider.ts chatCall: promptfoo's own client, temperature 0, a few output tokens, a
 * deadline); the model answers a grade 0–3 (the blind-test framework's grades: 3 direct answer, 2 strong supporting
 * context, 1 related, 0 irrelevant), which is the passage's score. Ties keep the fused order (the rerank step breaks
 * them by fused rank), so a coarse grade still reorders only what the model tells apart.
 *
 * The prompt is a file a team can read and override: the system message, a line `---`, the user message, with
 * `{{query}}`, `{{passage}}` and `{{instructions}}` filled in. rankgate ships src/rerank/prompts/llm-pointwise.txt;
 * RANKGATE_RERANK_PROMPT=FILE (or the `prompt` option) names another. The prompt's sha256 is part of the score cache key,
 * so an edited prompt never reuses old scores. An answer that is not exactly one digit 0–3 (parseGrade) is a malformed
 * answer: that query errors, naming the answer.
 * Calls run 4 at a time (RANKGATE_RERANK_LLM_CONCURRENCY); usage counts the model's tokens and promptfoo's cost estimate.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mapLimit } from '../util/map-limit.ts';
import { chatCall, providerEndpoint, providerFamily, type ChatPrompt } from '../llm/provider.ts';
import { malformed } from './answer.ts';
import type { RerankerSpec } from './catalog.ts';
import { cutTokens } from './http.ts';
import { RerankerCallError, type Reranker, type RerankUsage } from './types.ts';

export const DEFAULT_LLM_RERANK_PROMPT = fileURLToPath(new URL('./prompts/llm-pointwise.txt', import.meta.url));

export interface LlmRerankerOptions {
  env?: NodeJS.ProcessEnv;
  /** The prompt file (default RANKGATE_RERANK_PROMPT, else the shipped pointwise prompt). */
  prompt?: string;
  instructions?: string;
  maxTokensPerDoc?: number;
  /** One call's deadline, ms (default RANKGATE_RERANK_TIMEOUT_MS, else 30,000). */
  timeoutMs?: number;
  concurrency?: number;
}

/**
 * The grade of a model's answer: after trimming white space, exactly one digit 0–3, optionally followed by one period
 * (`2`, `2.`: how a model ends a one-word answer). Anything else is no grade (undefined), never a guess: `-1`, `10`,
 * `2.5`, `Out of 3, I give 1`, `0-3: 2`, `3 — no, 0`, `Relevance: 3`. The shipped prompt asks for one digit only.
 */
export function parseGrade(text: string | undefined): number | undefined {
  const m = /^([0-3])\.?$/.exec((text ?? '').trim());
  return m ? Number(m[1]) : undefined;
}

/** The scores an `llm:` reranker gives (and its cache may hold): the grades 0, 1, 2 and 3. */
export const LLM_GRADE_RANGE = { min: 0, max: 3, integer: true } as const;

/** A model's answer in a message: cut at 60 characters, JSON-escaped (control characters and quotes shown, not run). */
function shownAnswer(text: string | undefined): string {
  const t = text ?? '';
  return JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}…` : t);
}

export function createLlmReranker(spec: RerankerSpec, opts: LlmRerankerOptions = {}): Reranker {
  const env = opts.env ?? process.env;
  const providerId = spec.model;
  const file = opts.prompt ?? (env.RANKGATE_RERANK_PROMPT || DEFAULT_LLM_RERANK_PROMPT);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new RerankerCallError(`${spec.id}: the prompt file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); RANKGATE_RERANK_PROMPT names it`, { reranker: spec.id, code: 'Config' });
  }
  const parts = text.split(/^---[ \t]*$/m);
  if (parts.length !== 2 || !parts[1]!.includes('{{passage}}') || !parts[1]!.includes('{{query}}')) {
    throw new RerankerCallError(`${spec.id}: the prompt file ${file} must hold the system message, a line ---, and the user message with {{query}} and {{passage}}`, { reranker: spec.id, code: 'Config' });
  }
  const [system, user] = [parts[0]!.trim(), parts[1]!.trim()];
  const promptSha = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const endpoint = providerEndpoint(providerFamily(providerId), env) ?? providerId;
  const timeoutMs = opts.timeoutMs ?? (Number(env.RANKGATE_RERANK_TIMEOUT_MS) || 30_000);
  const concurrency = opts.concurrency ?? (Number(env.RANKGATE_RERANK_LLM_CONCURRENCY) || 4);
  const fill = (query: string, passage: string): ChatPrompt => ({
    system,
    user: user
      .replaceAll('{{instructions}}', opts.instructions ?? '')
      .replaceAll('{{query}}', query)
      .replaceAll('{{passage}}', opts.maxTokensPerDoc ? cutTokens(passage, opts.maxTokensPerDoc) : passage)
      .replace(/^\n+/, ''),
  });

  return {
    id: spec.id,
    family: 'llm',
    model: providerId,
    endpoint,
    maxBatch: 1,
    scoreKey: [`prompt:${promptSha}`],
    range: LLM_GRADE_RANGE,
    async score(query, passages) {
      const usage: RerankUsage = { requests: 0, documents: passages.length, tokens: 0 };
      let cost: number | undefined;
      const scores = await mapLimit(passages, concurrency, async (p, i) => {
        let answer;
        try {
          answer = await chatCall(providerId, fill(query, p), { deadlineMs: timeoutMs, maxTokens: 5 });
        } catch (e) {
          const msg = (e as Error).message.split('\n')[0];
          throw new RerankerCallError(`${spec.id} at ${endpoint}: ${msg}`, { reranker: spec.id, code: (e as Error).name === 'NoAnswerError' ? 'NoAnswer' : 'HttpError' });
        }
        usage.requests++;
        usage.tokens! += answer.inputTokens + answer.outputTokens;
        if (answer.costUsd !== null) cost = (cost ?? 0) + answer.costUsd;
        const g = parseGrade(answer.text);
        if (g === undefined) malformed(spec.id, endpoint, `passage ${i}: the model answered ${shownAnswer(answer.text)}, not one digit 0, 1, 2 or 3 (an optional final period allowed)`);
        return g!;
      });
      return { scores, usage: { ...usage, ...(cost !== undefined ? { costUsd: cost } : {}) } };
    },
  };
}
