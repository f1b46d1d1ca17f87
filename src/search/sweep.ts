/**
 * Parameter sweeps (the portal DES-058 spec's "Parameter Evaluation": RRF k, weights, chunk size, embedding model;
 * and the NQ search API's keyword / semantic / hybrid): one promptfoo column per configuration, each labelled with
 * its parameters, built on a BASE provider config (the demo's, or a team's own first column: its corpus, its routing,
 * everything else it sets). ONE grid for `npx promptfoo eval -c promptfooconfig.sweep.ts` (the demo) and
 * `rankgate eval --sweep NAME` (any repo from `rankgate init`).
 *
 * Adding a sweep is one entry of SWEEPS: its name, one line saying what it varies, and its columns.
 * The first column of every sweep is the base configuration (hybrid): the reference of `rankgate compare` and of
 * the shipping criteria.
 */
import { embedderLabel } from '../embeddings/catalog.ts';
import { UserError } from '../errors.ts';
import { parseRerankSetting, rerankLabel } from './rerank-step.ts';
import { expansionLabel, parseExpansionSetting } from './expand.ts';

export type Weights = { keyword: number; vector: number };

export interface SweepColumn {
  label: string;
  /** The column's provider config: the base config with the column's parameters over it. */
  config: Record<string, unknown>;
}

/** What a sweep varies around: the base configuration's own values (or the defaults). */
export interface SweepBase {
  chunkSize: number;
  embedder: string;
  rrfK: number;
  weights: Weights;
  /** The base provider config every column starts from. */
  config: Record<string, unknown>;
}

export const WEIGHTS: [string, Weights][] = [
  ['w1:1', { keyword: 1, vector: 1 }],
  ['vec60/bm25-40', { keyword: 0.4, vector: 0.6 }],
  ['bm25-60/vec40', { keyword: 0.6, vector: 0.4 }],
];
const RRF_K = [40, 60, 80];
/** The rerank sweep's budgets (the blind-test framework's --rerank-k sweep). */
export const RERANK_K = [10, 25, 50, 100];
const CHUNK_SIZES = [200, 300, 500];

function bedrockConfigured(env: NodeJS.ProcessEnv): boolean {
  const region = env.AWS_BEDROCK_REGION ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION;
  const creds = env.AWS_ACCESS_KEY_ID ?? env.AWS_PROFILE ?? env.AWS_WEB_IDENTITY_TOKEN_FILE;
  return !!region && !!creds;
}

const set = (env: NodeJS.ProcessEnv, name: string) => Boolean(env[name]);

/** The DES-058 embedders and what each needs; [id, the missing credential or undefined]. */
export function embedderCandidates(env: NodeJS.ProcessEnv = process.env): [string, string | undefined][] {
  const openaiCompatible = set(env, 'OPENAI_BASE_URL') || set(env, 'OPENAI_API_BASE_URL');
  return [
    ['voyage:voyage-3-large', set(env, 'VOYAGE_API_KEY') ? undefined : 'VOYAGE_API_KEY not set'],
    ['cohere:embedding:embed-english-v3.0', set(env, 'COHERE_API_KEY') ? undefined : 'COHERE_API_KEY not set'],
    [`openai:embedding:${env.RANKGATE_SWEEP_BGE_M3_MODEL || 'BAAI/bge-m3'}`, openaiCompatible ? undefined : 'OPENAI_BASE_URL not set (an OpenAI-compatible server: TEI, vLLM, Infinity, LiteLLM)'],
    ['ollama:embeddings:bge-m3', set(env, 'OLLAMA_BASE_URL') ? undefined : 'OLLAMA_BASE_URL not set'],
    ['openai:embedding:text-embedding-3-large', set(env, 'OPENAI_API_KEY') && !openaiCompatible ? undefined : openaiCompatible ? 'OPENAI_BASE_URL points at another server' : 'OPENAI_API_KEY not set'],
    ['bedrock:embeddings:cohere.embed-english-v3', bedrockConfigured(env) ? undefined : 'no AWS region and credentials'],
    ['bedrock:embeddings:amazon.titan-embed-text-v2:0@512', bedrockConfigured(env) ? undefined : 'no AWS region and credentials'],
  ];
}

/**
 * Embedders of a sweep: the base's own first, then use-lite and every candidate whose credentials are present
 * (or exactly RANKGATE_SWEEP_EMBEDDERS).
 */
export function embeddersFor(env: NodeJS.ProcessEnv = process.env, baseEmbedder = 'use-lite'): string[] {
  if (env.RANKGATE_SWEEP_EMBEDDERS) return env.RANKGATE_SWEEP_EMBEDDERS.split(',').map((s) => s.trim()).filter(Boolean);
  return [...new Set([baseEmbedder, 'use-lite', ...embedderCandidates(env).filter(([, missing]) => !missing).map(([id]) => id)])];
}

/** The one line naming the embedders left out and why (undefined when none is). */
export function skippedEmbeddersLine(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.RANKGATE_SWEEP_EMBEDDERS) return undefined;
  const skipped = embedderCandidates(env).filter(([, missing]) => missing);
  return skipped.length ? `rankgate sweep: embedders skipped: ${skipped.map(([id, why]) => `${id} (${why})`).join('; ')}` : undefined;
}

/** The embedder in a column label: the id as given in the quick sweep (its labels are baselines' keys), else model and dimension. */
const embName = (embedder: string, withDim: boolean) => (withDim ? embedderLabel(embedder) : embedder);

function hybrid(b: SweepBase, rrfK: number, wName: string, weights: Weights, chunkSize: number, embedder: string, withDim = true): SweepColumn {
  return {
    label: `hybrid rrf${rrfK} ${wName} c${chunkSize} ${embName(embedder, withDim)}`,
    config: { ...b.config, mode: 'hybrid', rrfK, weights, chunkSize, embedder },
  };
}

function single(b: SweepBase, mode: 'keyword' | 'semantic', chunkSize: number, embedder: string, withDim = true): SweepColumn {
  return {
    label:
      mode === 'keyword'
        ? `keyword-only bm25 c${chunkSize}` + (embedder === 'use-lite' ? '' : ` (${embName(embedder, withDim)} index)`)
        : `semantic-only c${chunkSize} ${embName(embedder, withDim)}`,
    config: { ...b.config, mode, chunkSize, embedder },
  };
}

/** The base's weights by name (w1:1 when they are one of none of the grid's). */
function baseWeights(b: SweepBase): [string, Weights] {
  return WEIGHTS.find(([, w]) => w.keyword === b.weights.keyword && w.vector === b.weights.vector) ?? [`bm25-${b.weights.keyword}/vec${b.weights.vector}`, b.weights];
}

const baseColumn = (b: SweepBase, withDim = true) => {
  const [wName, w] = baseWeights(b);
  return hybrid(b, b.rrfK, wName, w, b.chunkSize, b.embedder, withDim);
};

/**
 * The rerankers of the rerank sweep: RANKGATE_SWEEP_RERANKERS (a comma list), else --rerank (RANKGATE_RERANK), else the
 * base config's rerank.provider. Each is checked (an unknown id, a missing key or base URL is one line, exit 2).
 */
export function rerankersFor(env: NodeJS.ProcessEnv, config: Record<string, unknown>): string[] {
  const fromEnv = (env.RANKGATE_SWEEP_RERANKERS || (env.RANKGATE_RERANK && !/^(off|none|false|0)$/i.test(env.RANKGATE_RERANK.trim()) ? env.RANKGATE_RERANK : '') || '').trim();
  const source = env.RANKGATE_SWEEP_RERANKERS ? 'RANKGATE_SWEEP_RERANKERS' : 'RANKGATE_RERANK (--rerank)';
  const ids = fromEnv ? fromEnv.split(',').map((x) => x.trim()).filter(Boolean) : [];
  if (!ids.length) {
    const configured = parseRerankSetting(config.rerank, 'providers[0].config.rerank');
    if (configured) ids.push(configured.provider);
  }
  if (!ids.length) {
    throw new UserError(
      `the rerank sweep compares no reranker with each configured reranker: name them with RANKGATE_SWEEP_RERANKERS=ID,ID (or --rerank ID, or rerank: in the provider config), e.g. cohere:rerank:rerank-v3.5, tei:rerank`,
      2,
    );
  }
  return [...new Set(ids.map((id) => parseRerankSetting(id, fromEnv ? source : 'rerank')!.provider))];
}

/** Every sweep: name -> what it varies and its columns (the first one is the base configuration, hybrid). */
export const SWEEPS: Record<string, { varies: string; columns: (b: SweepBase, env: NodeJS.ProcessEnv) => SweepColumn[] }> = {
  quick: {
    varies: 'keyword-only, semantic-only, hybrid with RRF k 40/80 and 60/40 weights (7 columns, one index variant)',
    columns: (b) => [
      baseColumn(b, false),
      single(b, 'keyword', b.chunkSize, b.embedder, false),
      single(b, 'semantic', b.chunkSize, b.embedder, false),
      hybrid(b, 40, WEIGHTS[0]![0], WEIGHTS[0]![1], b.chunkSize, b.embedder, false),
      hybrid(b, 80, WEIGHTS[0]![0], WEIGHTS[0]![1], b.chunkSize, b.embedder, false),
      hybrid(b, 60, WEIGHTS[1]![0], WEIGHTS[1]![1], b.chunkSize, b.embedder, false),
      hybrid(b, 60, WEIGHTS[2]![0], WEIGHTS[2]![1], b.chunkSize, b.embedder, false),
    ],
  },
  embedders: {
    varies: 'the embedding model: per embedder (use-lite and every one whose credentials are set) semantic-only and hybrid, keyword-only once',
    columns: (b, env) => {
      const list = embeddersFor(env, b.embedder);
      const cols: SweepColumn[] = [single(b, 'keyword', b.chunkSize, list[0]!)];
      for (const embedder of list) cols.push(single(b, 'semantic', b.chunkSize, embedder), hybrid(b, b.rrfK, baseWeights(b)[0], b.weights, b.chunkSize, embedder));
      return [cols[2]!, cols[0]!, ...cols.slice(1, 2), ...cols.slice(3)]; // first column (the baseline): hybrid, the base embedder
    },
  },
  rrf: {
    varies: 'RRF k 40/60/80 x weights equal, 60/40 vector, 60/40 BM25 (9 hybrid columns, one index variant)',
    columns: (b) => [baseColumn(b), ...RRF_K.flatMap((k) => WEIGHTS.map(([n, w]) => hybrid(b, k, n, w, b.chunkSize, b.embedder)))],
  },
  chunk: {
    varies: 'the chunk size 200/300/500 tokens (hybrid; one index variant each, built on first use)',
    columns: (b) => [baseColumn(b), ...CHUNK_SIZES.map((c) => hybrid(b, b.rrfK, baseWeights(b)[0], b.weights, c, b.embedder))],
  },
  modes: {
    varies: 'keyword-only (BM25), semantic-only (vector) and hybrid (RRF)',
    columns: (b) => [baseColumn(b), single(b, 'keyword', b.chunkSize, b.embedder), single(b, 'semantic', b.chunkSize, b.embedder)],
  },
  rerank: {
    varies: 'no reranker vs each configured reranker x budget k 10/25/50/100 (RANKGATE_SWEEP_RERANKERS, --rerank or the config\'s rerank:)',
    columns: (b, env) => {
      const base = baseColumn(b);
      const { rerank: configured, ...rest } = base.config;
      // the config's other rerank settings (maxTokensPerDoc, instructions) go with every reranker of the sweep
      const extra = parseRerankSetting(configured ?? null, 'providers[0].config.rerank');
      const { provider: _p, k: _k, ...settings } = extra ?? { provider: '', k: 0 };
      // sweep: 'rerank' marks the columns: --rerank/RANKGATE_RERANK named the sweep's rerankers and do not override them
      const cols: SweepColumn[] = [{ label: `${base.label} no-rerank`, config: { ...rest, rerank: false, sweep: 'rerank' } }];
      for (const provider of rerankersFor(env, b.config)) {
        for (const k of RERANK_K) cols.push({ label: `${base.label} ${rerankLabel({ provider, k })}`, config: { ...rest, rerank: { ...settings, provider, k }, sweep: 'rerank' } });
      }
      return cols;
    },
  },
  full: {
    varies: 'RRF k x weights x chunk size x embedder, plus keyword-only and semantic-only per chunk size and embedder',
    columns: (b, env) => {
      const list = embeddersFor(env, b.embedder);
      const cols: SweepColumn[] = [baseColumn(b)];
      for (const embedder of list) {
        for (const chunkSize of CHUNK_SIZES) {
          // Keyword-only does not depend on the embedder; one column per chunk size is enough.
          if (embedder === list[0]) cols.push(single(b, 'keyword', chunkSize, embedder));
          cols.push(single(b, 'semantic', chunkSize, embedder));
          for (const rrfK of RRF_K) for (const [wName, w] of WEIGHTS) cols.push(hybrid(b, rrfK, wName, w, chunkSize, embedder));
        }
      }
      return cols;
    },
  },
  expansion: {
    varies:
      "the blind-test framework's configs: A the base column, B RM3 on the BM25 channel (Pyserini's defaults; with " +
      'RANKGATE_EXPANSION_PROVIDER also B rewrites and B HyDE by that model), C the golden entries\' expansion: fused by RRF',
    columns: (b, env) => {
      if (env.RANKGATE_EXPANSION) throw new UserError(`RANKGATE_EXPANSION=${env.RANKGATE_EXPANSION} (--expansion) would give every column of the expansion sweep the same expansion; unset it (the sweep sets each column's own)`);
      const a = baseColumn(b);
      const col = (name: string, expansion: unknown): SweepColumn => {
        const s = parseExpansionSetting(expansion, `sweep expansion: ${name}`);
        return { label: `${name}: ${expansionLabel(s)} · ${a.label}`, config: { ...a.config, expansion } };
      };
      const provider = env.RANKGATE_EXPANSION_PROVIDER?.trim();
      return [
        { label: `A: ${a.label}`, config: a.config },
        col('B', 'rm3'),
        ...(provider ? [col('B', { source: 'llm', provider, kind: 'rewrites' }), col('B', { source: 'llm', provider, kind: 'hyde' })] : []),
        col('C', 'golden'),
      ];
    },
  },
};

export const sweepNames = () => Object.keys(SWEEPS);

/** The sweep of that name (case-insensitive), or one line naming the known ones (UserError, exit 2). */
export function sweepName(name: string, source: string): string {
  const n = name.trim().toLowerCase();
  if (!Object.hasOwn(SWEEPS, n)) throw new UserError(`${source}: unknown sweep '${name}'; the sweeps are ${sweepNames().join(', ')}`, 2);
  return n;
}

/** The base of a sweep from a provider config: its chunk size, embedder, RRF k and weights, or rankgate's defaults. */
export function sweepBase(config: Record<string, unknown>): SweepBase {
  const w = config.weights as Partial<Weights> | undefined;
  return {
    chunkSize: typeof config.chunkSize === 'number' ? config.chunkSize : 300,
    embedder: typeof config.embedder === 'string' && config.embedder ? config.embedder : 'use-lite',
    rrfK: typeof config.rrfK === 'number' ? config.rrfK : 60,
    weights: typeof w?.keyword === 'number' && typeof w?.vector === 'number' ? { keyword: w.keyword, vector: w.vector } : { keyword: 1, vector: 1 },
    config,
  };
}

/** The columns of sweep `name` around the base provider config (labels unique; the first is the base configuration). */
export function sweepGrid(name: string, config: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env, source = 'RANKGATE_SWEEP'): SweepColumn[] {
  const cols = SWEEPS[sweepName(name, source)]!.columns(sweepBase(config), env);
  const seen = new Set<string>();
  return cols.filter((c) => (seen.has(c.label) ? false : (seen.add(c.label), true)));
}
