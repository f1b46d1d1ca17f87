/**
 * Which judge a setting names: `RANKGATE_JUDGE`, `--judge` or an assertion's `config.mode`. Pure but for reading the
 * environment it is given.
 *
 *   off | similarity              no judge; the labelled similarity heuristic
 *   bedrock                       Claude Haiku 4.5 on Amazon Bedrock (RANKGATE_JUDGE_MODEL or the default profile)
 *   bedrock:converse:MODEL        a Bedrock model through rankgate's own Converse client (src/embeddings/bedrock-client.ts)
 *   PROVIDER:…:MODEL              any chat provider promptfoo knows, by its provider id, loaded through promptfoo's own
 *                                 provider loader: anthropic:messages:MODEL, openai:chat:MODEL, azure:chat:DEPLOYMENT,
 *                                 ollama:chat:MODEL, … (src/llm/provider.ts)
 *   auto (default)                follow the environment: RANKGATE_JUDGE when set, else Bedrock when AWS is configured, else Anthropic when
 *                                 ANTHROPIC_API_KEY is set, else OpenAI when OPENAI_API_KEY is set, else off
 *
 * Anything else is a UserError (exit 2) with a did-you-mean: a misspelt judge never silently becomes "off".
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../errors.ts';
import { suggest } from '../util/suggest.ts';

export type JudgeMode = 'bedrock' | 'model' | 'similarity' | 'off';

export const DEFAULT_JUDGE_MODEL = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
/** auto's picks when only an API key is present: the vendors' small, cheap current models. */
export const AUTO_ANTHROPIC = 'anthropic:messages:claude-haiku-4-5-20251001';
export const AUTO_OPENAI = 'openai:chat:gpt-4.1-mini';

/**
 * promptfoo chat provider ids rankgate accepts as a judge (prefix up to the model). The families tested against fakes
 * are anthropic:messages and openai:chat (and every OpenAI-compatible server through OPENAI_BASE_URL); the others are
 * loaded the same way through promptfoo and follow the same protocol.
 */
export const CHAT_PROVIDER_PREFIXES = [
  'anthropic:messages:',
  'openai:chat:',
  'azure:chat:',
  'azureopenai:chat:',
  'ollama:chat:',
  'bedrock:converse:',
  'vertex:',
  'google:',
  'mistral:',
  'groq:',
  'deepseek:',
  'openrouter:',
  'togetherai:',
  'fireworks:',
  'perplexity:',
  'xai:',
  'litellm:',
  'cloudflare-ai:chat:',
  'huggingface:chat:',
  'localai:chat:',
  'llama:',
] as const;

export const JUDGE_KEYWORDS = ['auto', 'bedrock', 'similarity', 'off'] as const;

export interface JudgeSpec {
  mode: JudgeMode;
  /** The promptfoo provider id (mode model), or the Bedrock model id (mode bedrock). */
  model: string | null;
  /** model mode: the provider family, e.g. `openai:chat`. */
  family?: string;
  /** Why this judge: shown in the eval's first lines and the report. */
  reason: string;
  /** The setting it was resolved from (`auto`, `off`, `openai:chat:MODEL`, `bedrock:converse:MODEL`, …). */
  setting?: string;
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

function providerSpec(id: string, reason: string): Omit<JudgeSpec, 'setting'> {
  const prefix = CHAT_PROVIDER_PREFIXES.find((p) => id.startsWith(p) && id.length > p.length);
  if (!prefix) throw new Error('not a provider id');
  if (prefix === 'bedrock:converse:') return { mode: 'bedrock', model: id.slice(prefix.length), reason };
  return { mode: 'model', model: id, family: prefix.replace(/:$/, ''), reason };
}

/**
 * Resolve a judge setting, one rule everywhere (the eval's hook, `rankgate eval --judge`, `rankgate judge agreement`):
 *
 *   RANKGATE_JUDGE (which `--judge` sets)  >  the explicit setting (`value`: config.mode) other than `auto`  >  auto
 *
 * `auto` (or no setting) means "follow the environment". `value` is the explicit setting; `source` names where it came
 * from for messages. An explicit setting is checked even when RANKGATE_JUDGE overrides it: a misspelt config.mode is
 * an error either way, never silently ignored.
 */
export function resolveJudgeSpec(value?: string, env: NodeJS.ProcessEnv = process.env, source = 'config.mode'): JudgeSpec {
  const explicit = value === undefined ? undefined : value.trim();
  const own = explicit !== undefined && explicit !== 'auto' ? parseSetting(explicit, env, source) : null;
  const fromEnv = env.RANKGATE_JUDGE !== undefined && env.RANKGATE_JUDGE.trim() !== '' ? env.RANKGATE_JUDGE.trim() : undefined;
  if (fromEnv !== undefined) {
    const spec = parseSetting(fromEnv, env, 'RANKGATE_JUDGE');
    return own && own.setting !== spec.setting ? { ...spec, reason: spec.reason.replace(/\)$/, `, over ${source}=${explicit})`) } : spec;
  }
  if (own) return own;
  return parseSetting('auto', env, explicit === 'auto' ? source : 'default');
}

/** The judge one setting names (`where` says where it was written); `auto` looks at the environment. */
function parseSetting(raw: string, env: NodeJS.ProcessEnv, where: string): JudgeSpec {
  const configured = `configured (${where === 'default' ? 'default' : `${where}=${raw}`})`;
  const spec = ((): Omit<JudgeSpec, 'setting'> => {
    if (raw === 'off') return { mode: 'off', model: null, reason: configured };
    if (raw === 'similarity') return { mode: 'similarity', model: null, reason: configured };
    if (raw === 'bedrock') return { mode: 'bedrock', model: env.RANKGATE_JUDGE_MODEL || DEFAULT_JUDGE_MODEL, reason: configured };
    if (raw === 'auto') {
      if (awsConfigured(env)) return { mode: 'bedrock', model: env.RANKGATE_JUDGE_MODEL || DEFAULT_JUDGE_MODEL, reason: 'auto: AWS is configured' };
      if (env.ANTHROPIC_API_KEY) return providerSpec(AUTO_ANTHROPIC, 'auto: ANTHROPIC_API_KEY is set');
      if (env.OPENAI_API_KEY) return providerSpec(AUTO_OPENAI, 'auto: OPENAI_API_KEY is set');
      return { mode: 'off', model: null, reason: 'auto: no AWS configuration, ANTHROPIC_API_KEY or OPENAI_API_KEY' };
    }
    try {
      return providerSpec(raw, configured);
    } catch {
      // a did-you-mean against the keywords and the provider families (with the model the user wrote kept)
      const head = raw.includes(':') ? raw.slice(0, raw.lastIndexOf(':') + 1) : raw;
      const near = suggest(head, [...JUDGE_KEYWORDS, ...CHAT_PROVIDER_PREFIXES]);
      const hint = near ? `; did you mean '${near.endsWith(':') ? near + (raw.includes(':') ? raw.slice(raw.lastIndexOf(':') + 1) || 'MODEL' : 'MODEL') : near}'?` : '';
      throw new UserError(
        `judge mode "${raw}" (${where === 'default' ? 'config.mode' : where}): expected one of bedrock, similarity, off, auto, or a promptfoo chat provider id (${CHAT_PROVIDER_PREFIXES.slice(0, 5).join('MODEL, ')}MODEL, …)${hint}`,
      );
    }
  })();
  return { ...spec, setting: raw };
}
