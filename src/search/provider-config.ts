/**
 * Validation of the promptfoo provider's `config` (providers/search.ts), before any query runs: unknown keys
 * and values are ONE line naming the config file, the providers[] entry and the key, with the valid ones and a
 * did-you-mean (`rrfk: 60` -> did you mean 'rrfK'?; `mode: hybird`; `embedder: use-light`).
 *
 * What counts as unknown depends on the service:
 * - rankgate's own service and `url:`: every key must be a search parameter or a provider setting.
 * - `module:`: keys that are neither go to the team's createSearchService(config) as its own settings, so only a
 *   near miss of a known key (one the did-you-mean would suggest, e.g. `rrfk`, `topk`) is refused there.
 * Embedder ids and chunk sizes are checked only for rankgate's own service (a module has its own embedders).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve } from 'node:path';
import { UserError } from '../errors.ts';
import { EMBEDDER_ALIASES, EMBEDDER_IDS, isEmbedderId } from '../embeddings/index.ts';
import { loadYaml } from '../util/yaml.ts';
import { SECRET_PARAM, isSecretKey } from '../util/redact.ts';
import { suggest, unknownKeyMessage, unknownValueMessage } from '../util/suggest.ts';
import { checkReranker, parseRerankSetting } from './rerank-step.ts';
import { parseExpansionSetting } from './expand.ts';

export const SEARCH_PARAM_KEYS = [
  'mode',
  'keywordScorer',
  'bm25K1',
  'bm25B',
  'vectorSearch',
  'efSearch',
  'rrfK',
  'weights',
  'candidates',
  'topK',
  'filters',
  'chunkSize',
  'embedder',
  'language',
  'textConfig',
  'routing',
  'rerank',
  'expansion',
] as const;

/** Provider settings that are not search parameters (see the header of providers/search.ts). */
export const PROVIDER_SETTING_KEYS = [
  'module',
  'url',
  'urlShape',
  'timeoutMs',
  'unreachableAfter',
  'maxResponseBytes',
  'corpus',
  'corpusFormat',
  'autoIngest',
  'databaseUrl',
  'dataDir',
  'routingConfig',
  'queryFilters',
  'warmup',
  'worker',
  'preflight',
  'sweep',
  'basePath',
] as const;

export const PROVIDER_CONFIG_KEYS: readonly string[] = [...SEARCH_PARAM_KEYS, ...PROVIDER_SETTING_KEYS];

const ENUMS: Record<string, readonly string[]> = {
  mode: ['hybrid', 'keyword', 'semantic'],
  keywordScorer: ['bm25', 'ts_rank_cd'],
  vectorSearch: ['hnsw', 'exact'],
  urlShape: ['portal', 'nq'],
  corpusFormat: ['markdown', 'jsonl', 'beir', 'nq'],
};
const BOOLEANS = ['autoIngest', 'queryFilters', 'warmup', 'worker', 'routing', 'preflight'];
const STRINGS = ['module', 'url', 'corpus', 'databaseUrl', 'dataDir', 'language', 'textConfig', 'sweep'];
const FILTER_KEYS = ['language', 'book', 'pathPrefix', 'tags'];
const WEIGHT_KEYS = ['keyword', 'vector'];

/** Numeric settings: [min, max, integer]. */
const NUMBERS: Record<string, [number, number, boolean]> = {
  bm25K1: [0, 100, false],
  bm25B: [0, 1, false],
  rrfK: [0, 1e6, false],
  efSearch: [1, 1000, true],
  candidates: [1, 1000, true],
  topK: [1, 1000, true],
  chunkSize: [1, 1e6, true],
  timeoutMs: [1, 24 * 3600 * 1000, false],
  unreachableAfter: [0, 1e6, true],
  maxResponseBytes: [1024, 2 ** 31, true],
};

/**
 * The config file promptfoo loaded, as the user would name it: `-c/--config FILE` on promptfoo's command line
 * (relative to the working directory when inside it), else the promptfooconfig.* in basePath, else
 * "promptfooconfig.yaml".
 */
export function promptfooConfigFile(basePath: string, argv: readonly string[] = process.argv): string {
  let given: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-c' || a === '--config') given = argv[i + 1];
    else if (a.startsWith('--config=')) given = a.slice('--config='.length);
  }
  const shown = (p: string) => {
    const abs = resolve(p);
    const rel = relative(process.cwd(), abs);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
  };
  if (given) return shown(given.split(',')[0]!);
  for (const name of ['promptfooconfig.yaml', 'promptfooconfig.yml', 'promptfooconfig.json', 'promptfooconfig.ts', 'promptfooconfig.js']) {
    const p = join(basePath, name);
    if (existsSync(p)) return shown(p);
  }
  return 'promptfooconfig.yaml';
}

/**
 * "providers[2] (label 'hybrid rrf60')" when the YAML/JSON config file can be read and exactly one
 * rankgate-provider entry carries `key` with `value`; else "provider <id>".
 */
/** Does a connection string (URL or libpq keyword form) carry a password? */
export function databaseUrlHasPassword(url: string): boolean {
  if (/(^|[\s?&;])(ssl)?password\s*=/i.test(url)) return true;
  try {
    return new URL(url).password !== '';
  } catch {
    return /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]+@/i.test(url);
  }
}

function entryName(file: string, providerId: string, key: string, value: unknown): string {
  const fallback = `provider ${providerId}`;
  if (!/\.(ya?ml|json)$/i.test(file)) return fallback;
  try {
    const doc = loadYaml(readFileSync(file, 'utf8'), file) as { providers?: unknown };
    const list = Array.isArray(doc?.providers) ? (doc.providers as Record<string, unknown>[]) : [];
    const hits = list
      .map((p, i) => ({ p, i }))
      .filter(({ p }) => {
        const cfg = p && typeof p === 'object' ? (p.config as Record<string, unknown> | undefined) : undefined;
        return cfg && key in cfg && JSON.stringify(cfg[key]) === JSON.stringify(value);
      });
    if (hits.length < 1) return fallback;
    const { p, i } = hits[0]!;
    const label = typeof p.label === 'string' ? ` (label '${p.label}')` : '';
    return hits.length === 1 ? `providers[${i}]${label}` : `providers[${hits.map((h) => h.i).join(', ')}]`;
  } catch {
    return fallback;
  }
}

/** "promptfooconfig.yaml: providers[1] (label 'x'): config.KEY" for a message about one key's value. */
export function configKeyWhere(basePath: string, providerId: string, key: string, value: unknown, argv?: readonly string[]): string {
  const file = promptfooConfigFile(basePath, argv);
  return `${file}: ${entryName(file, providerId, key, value)}: config.${key}`;
}

export interface ProviderConfigIssueContext {
  /** Where promptfoo found the config (the provider's config.basePath). */
  basePath: string;
  /** The provider id, e.g. file://providers/search.ts. */
  providerId: string;
  argv?: readonly string[];
  /** Keys a subclass of the provider reads itself (e.g. the BEIR bench's benchRows). */
  extraKeys?: readonly string[];
}

/** Throws one UserError line for the first unknown key or bad value of a provider config. */
export function validateProviderConfig(config: Record<string, unknown>, ctx: ProviderConfigIssueContext): void {
  const file = promptfooConfigFile(ctx.basePath, ctx.argv);
  const fail = (key: string, value: unknown, msg: (where: string) => string): never => {
    throw new UserError(msg(`${entryName(file, ctx.providerId, key, value)}: config`));
  };
  const kind = config.url !== undefined ? 'url' : config.module !== undefined ? 'module' : 'rankgate';
  const keys = [...PROVIDER_CONFIG_KEYS, ...(ctx.extraKeys ?? [])];
  // A url: service's credentials never sit in the config: promptfoo stores every provider's config in its own database
  // (promptfoo.db, with the eval) before any hook can redact it, so they come from the environment (src/search/url.ts).
  if (kind === 'url') {
    const envForm = 'leave it out of the config and pass it from the environment: RANKGATE_URL_PASSWORD=… (HTTP Basic, with the url\'s user name: http://user@host/…), RANKGATE_URL_API_KEY=… (Authorization: Bearer) or RANKGATE_URL_HEADERS=\'{"x-api-key": "…"}\' (docs/configuration.md: url:)';
    for (const k of Object.keys(config)) {
      if (isSecretKey(k) || /^(headers?|auth|basicauth|bearer)$/i.test(k.replace(/[-_]/g, ''))) {
        fail(k, config[k], (where) => `${file}: ${where}.${k}: a url: service's credentials (promptfoo would store them in its own database with the eval): ${envForm}`);
      }
    }
    let u: URL | undefined;
    try {
      u = new URL(String(config.url));
    } catch {
      u = undefined;
    }
    if (u?.password) fail('url', config.url, (where) => `${file}: ${where}.url holds a password (promptfoo would store it in its own database with the eval): ${envForm}`);
    const param = u ? [...u.searchParams.keys()].find((p) => SECRET_PARAM.test(p)) : undefined;
    if (param) fail('url', config.url, (where) => `${file}: ${where}.url holds a secret in its query (${param}=…; promptfoo would store it in its own database with the eval): ${envForm}`);
  }
  const shownKeys = keys.filter((k) => k !== 'basePath'); // set by promptfoo, not by the user
  for (const [k, v] of Object.entries(config)) {
    if (keys.includes(k)) continue;
    if (kind === 'module' && suggest(k, keys) === undefined) continue; // the module's own setting
    fail(k, v, (where) => unknownKeyMessage(file, where, k, shownKeys));
  }
  if (config.url !== undefined && config.module !== undefined) {
    fail('url', config.url, (where) => `${file}: ${where}: set either 'url' or 'module', not both`);
  }
  const expect = (k: string, v: unknown, what: string): never => fail(k, v, (where) => `${file}: ${where}.${k}: expected ${what}, got ${JSON.stringify(v)}`);
  for (const [k, valid] of Object.entries(ENUMS)) {
    const v = config[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !valid.includes(v)) fail(k, v, (where) => unknownValueMessage(file, `${where}.${k}`, String(v), valid));
  }
  if (kind === 'rankgate' && config.embedder !== undefined) {
    const v = config.embedder;
    // any id of a family (openai:embedding:MODEL, voyage:MODEL, ...) is valid; the examples feed the did-you-mean
    const valid = [...EMBEDDER_IDS, ...Object.keys(EMBEDDER_ALIASES)];
    if (!isEmbedderId(v)) {
      fail('embedder', v, (where) =>
        `${unknownValueMessage(file, `${where}.embedder`, String(v), valid)} (any openai:embedding:MODEL, voyage:MODEL, cohere:embedding:MODEL, ollama:embeddings:MODEL or bedrock:embeddings:MODEL id, optionally ID@DIMENSIONS)`,
      );
    }
  }
  for (const k of BOOLEANS) if (config[k] !== undefined && typeof config[k] !== 'boolean') expect(k, config[k], 'true or false');
  for (const k of STRINGS) if (config[k] !== undefined && (typeof config[k] !== 'string' || !config[k])) expect(k, config[k], 'a non-empty string');
  if (config.routingConfig !== undefined && config.routingConfig !== false && (typeof config.routingConfig !== 'string' || !config.routingConfig)) {
    expect('routingConfig', config.routingConfig, 'a path to a routing YAML or false');
  }
  for (const [k, [min, max, int]] of Object.entries(NUMBERS)) {
    const v = config[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (int && !Number.isInteger(v))) {
      expect(k, v, `${int ? 'an integer' : 'a number'} from ${min} to ${max}`);
    }
  }
  if (typeof config.databaseUrl === 'string' && databaseUrlHasPassword(config.databaseUrl)) {
    // promptfoo stores every provider's config in its own database (~/.promptfoo or PROMPTFOO_CONFIG_DIR) before any
    // hook can redact it: a password there is never written anywhere, it comes from the environment
    fail('databaseUrl', config.databaseUrl, (where) =>
      `${file}: ${where}.databaseUrl holds a password (promptfoo would store it in its own database with the eval): leave it out of the config and pass it from the environment: PGPASSWORD=… with this databaseUrl without its password, or DATABASE_URL=… with no databaseUrl`,
    );
  }
  if (config.url !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(String(config.url));
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) expect('url', config.url, 'an http:// or https:// URL');
  }
  const obj = (k: string, allowed: readonly string[]) => {
    const v = config[k];
    if (v === undefined) return undefined;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return expect(k, v, `an object with ${allowed.join(', ')}`);
    for (const sub of Object.keys(v)) {
      if (!allowed.includes(sub)) fail(k, v, (where) => unknownKeyMessage(file, `${where}.${k}`, sub, allowed));
    }
    return v as Record<string, unknown>;
  };
  const w = obj('weights', WEIGHT_KEYS);
  if (w) for (const sub of WEIGHT_KEYS) {
    const n = w[sub];
    if (n !== undefined && !(typeof n === 'number' && Number.isFinite(n) && n >= 0)) expect(`weights.${sub}`, n, 'a number >= 0');
  }
  const f = obj('filters', FILTER_KEYS);
  if (f?.tags !== undefined && !(Array.isArray(f.tags) && f.tags.every((t) => typeof t === 'string'))) expect('filters.tags', f.tags, 'a list of strings');
  if (config.rerank !== undefined && config.rerank !== false && config.rerank !== null) {
    if (kind !== 'rankgate') {
      fail('rerank', config.rerank, (where) =>
        `${file}: ${where}.rerank: the rerank stage is rankgate's own service's; a ${kind === 'url' ? 'url:' : 'module:'} service that reranks reports its first stage and budget in diagnostics.rerank (docs/search.md#a-reranked-service)`,
      );
    }
    let s: ReturnType<typeof parseRerankSetting> = null;
    try {
      s = parseRerankSetting(config.rerank, 'rerank');
      // an unknown id, a missing key or base URL: one line now, not an error in every row
      if (s) checkReranker(s);
    } catch (e) {
      fail('rerank', config.rerank, (where) => `${file}: ${where}.${(e as Error).message}`);
    }
  }
  if (config.expansion !== undefined && config.expansion !== false && config.expansion !== null) {
    if (kind !== 'rankgate') {
      fail('expansion', config.expansion, (where) => `${file}: ${where}.expansion: query expansion is a stage of rankgate's own service; a ${kind === 'url' ? 'url:' : 'module:'} service expands queries itself`);
    }
    try {
      parseExpansionSetting(config.expansion, 'expansion', { basePath: ctx.basePath });
    } catch (e) {
      fail('expansion', config.expansion, (where) => `${file}: ${where}.${(e as Error).message}`);
    }
  }
}

/** Is this process promptfoo's own CLI (where a thrown constructor error becomes a stack trace and exit 1)? */
export function underPromptfooCli(argv: readonly string[] = process.argv): boolean {
  const main = argv[1] ?? '';
  return /promptfoo/i.test(basename(main)) || /[\\/]promptfoo[\\/]dist[\\/]/.test(main);
}
