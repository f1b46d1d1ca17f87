/**
 * The judge assertions' `config:` (assertions/judge.ts): closed. An unknown key or judge setting is a UserError with
 * a did-you-mean, raised by the gate's beforeAll hook before any query runs (exit 2), never a silent "judge: off".
 */
import { UserError } from '../errors.ts';
import { unknownKeyMessage } from '../util/suggest.ts';
import { resolveJudgeSpec, type JudgeSpec } from './spec.ts';

/** Keys that configure the judge itself (one judge per distinct set of these per process). */
export const JUDGE_OPTION_KEYS = [
  'mode',
  'model',
  'region',
  'endpoint',
  'concurrency',
  'timeoutMs',
  'callTimeoutMs',
  'budgetSeconds',
  'unreachableAfter',
  'maxAttempts',
  'retries',
  'retryBaseMs',
  'cacheDir',
  'refresh',
  'maxTokens',
  'thresholds',
  'embedder',
] as const;

/** Keys the assertions read for their own rule (pass threshold, failRow, top k, minimum, answer sample). */
export const JUDGE_ASSERTION_KEYS = ['passAt', 'failRow', 'k', 'min', 'sample', 'seed'] as const;

export const JUDGE_CONFIG_KEYS: readonly string[] = [...JUDGE_OPTION_KEYS, ...JUDGE_ASSERTION_KEYS];

/**
 * Checks one judge assertion's config (`where` names it, e.g. "promptfooconfig.yaml defaultTest.assert[3]
 * (assertions/judge.ts:judged)") and returns the judge it names. Throws a one-line UserError.
 */
export function validateJudgeConfig(config: unknown, where: string, env: NodeJS.ProcessEnv = process.env): JudgeSpec {
  if (config !== undefined && config !== null && (typeof config !== 'object' || Array.isArray(config))) {
    throw new UserError(`${where}: config: expected a mapping of judge settings, got ${JSON.stringify(config)}`);
  }
  const c = (config ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(c)) {
    if (!JUDGE_CONFIG_KEYS.includes(k)) throw new UserError(unknownKeyMessage(where, 'config', k, JUDGE_CONFIG_KEYS));
  }
  if (c.mode !== undefined && typeof c.mode !== 'string') throw new UserError(`${where}: config.mode: expected a judge setting (string), got ${JSON.stringify(c.mode)}`);
  for (const k of ['sample', 'seed'] as const) {
    const v = c[k];
    if (v !== undefined && !(typeof v === 'number' && Number.isInteger(v) && v >= (k === 'sample' ? 1 : 0))) {
      throw new UserError(`${where}: config.${k}: expected an integer >= ${k === 'sample' ? 1 : 0}, got ${JSON.stringify(v)}`);
    }
  }
  try {
    return resolveJudgeSpec(c.mode as string | undefined, env, `${where}: config.mode`);
  } catch (e) {
    if (e instanceof UserError) throw new UserError(c.mode === undefined ? `${where}: ${e.message}` : e.message);
    throw e;
  }
}
