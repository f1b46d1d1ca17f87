/**
 * The cost of a batch of relevance labels before any call (`rankgate judge pool`, docs/judgments.md "Pooling"): the
 * prompts of the inputs the verdict cache cannot answer, counted in o200k tokens (the prompt's system and user text,
 * plus a few tokens of chat framing each), the answer at the judge's maximum output tokens, times the model's list price
 * (MODEL_PRICES or RANKGATE_JUDGE_PRICE). An estimate of the order of magnitude: a vendor's tokenizer counts a little
 * differently, and the answer is one digit; null when the model's price is unknown.
 */
import { countTokens } from '../util/tokens.ts';
import { gradePrompt, type GradeInput } from './prompt.ts';
import type { Judge } from './judge.ts';

/** Tokens of chat framing per message pair (roles, separators), added to the counted text. */
const FRAMING_TOKENS = 8;

export interface GradeEstimate {
  /** Inputs the cache cannot answer: one call each. */
  calls: number;
  /** Inputs the cache answers: no call, no cost. */
  cached: number;
  inputTokens: number;
  outputTokens: number;
  /** USD at list price; null when the price is unknown. */
  costUsd: number | null;
  price: { input: number; output: number } | null;
}

export function estimateGrades(judge: Judge, inputs: readonly GradeInput[], maxOutputTokens = 10): GradeEstimate {
  let calls = 0;
  let cached = 0;
  let inputTokens = 0;
  let system: number | undefined;
  for (const x of inputs) {
    if (judge.gradeCached(x)) {
      cached++;
      continue;
    }
    calls++;
    const p = gradePrompt(x);
    system ??= countTokens(p.system);
    inputTokens += system + countTokens(p.user) + FRAMING_TOKENS;
  }
  const outputTokens = calls * maxOutputTokens;
  const price = judge.price ?? null;
  return { calls, cached, inputTokens, outputTokens, costUsd: price ? (inputTokens * price.input + outputTokens * price.output) / 1e6 : null, price };
}
