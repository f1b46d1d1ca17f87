/**
 * Can a configured model judge run at all? Checked once before any row (the gate's beforeAll hook, assertions/gate.ts):
 * a judge whose promptfoo provider cannot be constructed, that has no API key where its provider needs one, or whose
 * endpoint refuses the key (401/403 at a free auth probe, no tokens spent) is a setup error, one line naming the
 * variable to set, exit 2: not a "JUDGE ERROR: API key is not set" in every row and then a judged figure nothing judged.
 *
 * The auth probe is `GET <base>/models` (OpenAI and every OpenAI-compatible server) or `GET <base>/v1/models`
 * (Anthropic) with the key the provider would send: only a 401 or 403 counts. A server without that route (404), a
 * slow one or a dead one is left to the judge's own dead-endpoint probe and the rows (src/judge/judge.ts), as before.
 * Bedrock judges use the AWS credential chain: not probed here.
 */
import { loadChatProvider, chatProviderConfig, providerEndpoint } from '../llm/provider.ts';
import type { JudgeSpec } from './spec.ts';

/** The environment variable of each family's API key (what to tell the user to set). */
const KEY_ENV: Record<string, string> = {
  'openai:chat': 'OPENAI_API_KEY',
  'anthropic:messages': 'ANTHROPIC_API_KEY',
  'azure:chat': 'AZURE_API_KEY',
  'azureopenai:chat': 'AZURE_API_KEY',
  mistral: 'MISTRAL_API_KEY',
  groq: 'GROQ_API_KEY',
  deepseek: 'DEEPSEEK_API_KEY',
  openrouter: 'OPENROUTER_API_KEY',
  togetherai: 'TOGETHER_API_KEY',
  fireworks: 'FIREWORKS_API_KEY',
  perplexity: 'PERPLEXITY_API_KEY',
  xai: 'XAI_API_KEY',
  google: 'GOOGLE_API_KEY',
};

interface KeyedProvider {
  config?: { apiKeyEnvar?: string; apiKeyRequired?: boolean };
  requiresApiKey?: () => boolean;
  getApiKey?: () => string | undefined;
  getApiUrl?: () => string;
}

/** The family's key variable: the provider's own apiKeyEnvar, else the family's, else the first part of its id. */
function keyEnv(spec: JudgeSpec, p: KeyedProvider | undefined): string {
  const fam = spec.family ?? '';
  return p?.config?.apiKeyEnvar ?? KEY_ENV[fam] ?? KEY_ENV[fam.split(':')[0]!] ?? `${fam.split(':')[0]!.toUpperCase()}_API_KEY`;
}

export interface SetupCheckOptions {
  /** The judge config's `endpoint` (the assertion's), as the judge passes it to the provider. */
  endpoint?: string;
  /** The auth probe's deadline (default 3 s); 0 skips the probe. */
  probeTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * Why this judge cannot run (one line naming the variable to set), or null when nothing says it cannot. Only model
 * judges (`mode: model`) are checked; `where` names the setting in the message (e.g. `RANKGATE_JUDGE=openai:chat:M`).
 */
export async function judgeSetupProblem(spec: JudgeSpec, where: string, opts: SetupCheckOptions = {}): Promise<string | null> {
  if (spec.mode !== 'model' || !spec.model) return null;
  const env = opts.env ?? process.env;
  const id = spec.model;
  const family = spec.family ?? '';
  const endpointSet = opts.endpoint ? opts.endpoint.replace(/\/+$/, '') : null;
  let provider: KeyedProvider;
  try {
    provider = (await loadChatProvider(id, { ...chatProviderConfig(family, 10), ...(endpointSet ? { apiBaseUrl: endpointSet } : {}) })) as KeyedProvider;
  } catch (e) {
    return `judge ${id} (${where}) cannot run: promptfoo cannot construct its provider (${(e as Error).message.split('\n')[0]}); check the provider id and its settings (docs/judge.md)`;
  }
  const needsKey = typeof provider.getApiKey === 'function' && (provider.requiresApiKey ? provider.requiresApiKey() : provider.config?.apiKeyRequired !== false);
  const key = provider.getApiKey?.();
  const base = endpointSet ?? (typeof provider.getApiUrl === 'function' ? safe(() => provider.getApiUrl!()) : null) ?? providerEndpoint(family, env);
  const name = keyEnv(spec, provider);
  if (needsKey && !key) {
    const local = base && !/api\.openai\.com|api\.anthropic\.com/.test(base);
    return (
      `judge ${id} (${where}) cannot run: no API key: set ${name}` +
      (local ? ` (a local server that checks no key still needs one for promptfoo's provider: ${name}=dummy; docs/judge.md)` : '')
    );
  }
  if (!key || !base || !/^https?:\/\//.test(base) || opts.probeTimeoutMs === 0) return null;
  const probe = family === 'anthropic:messages' ? `${base.replace(/\/v1$/, '')}/v1/models` : family === 'openai:chat' ? `${base}/models` : null;
  if (!probe) return null;
  const headers: Record<string, string> = family === 'anthropic:messages' ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` };
  try {
    const res = await fetch(probe, { headers, signal: AbortSignal.timeout(opts.probeTimeoutMs ?? 3000) });
    await res.body?.cancel().catch(() => {});
    if (res.status === 401 || res.status === 403)
      return `judge ${id} (${where}) cannot run: ${base} refused its API key (HTTP ${res.status} to GET ${new URL(probe).pathname}): set a valid ${name}`;
  } catch {
    // unreachable or slow: the judge's dead-endpoint probe and the rows say so, as before
  }
  return null;
}

function safe<T>(f: () => T): T | null {
  try {
    return f();
  } catch {
    return null;
  }
}
