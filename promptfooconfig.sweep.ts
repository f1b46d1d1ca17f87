/**
 * rankgate parameter sweep (the portal DES-058 spec's "Parameter Evaluation" + the NQ search API's keyword / semantic / hybrid):
 * one promptfoo matrix column per configuration, each labelled with its parameters.
 *
 *   npx promptfoo eval -c promptfooconfig.sweep.ts --output sweep.json     # RANKGATE_SWEEP=quick (default)
 *   RANKGATE_SWEEP=full npx promptfoo eval -c promptfooconfig.sweep.ts      # the whole grid
 *   npx promptfoo view                                                      # columns side by side
 *   npx rankgate compare --results sweep.json                               # significance vs the first column,
 *                                                                           # and the cross-validated pick-the-best estimate
 *   npx rankgate report sweep.json --html sweep.html                        # one HTML file: bars, heatmaps, latency
 *
 * quick (7 columns, one index variant c300/use-lite): keyword-only, semantic-only, hybrid defaults
 *   (RRF k 60, equal weights), RRF k 40 and 80, weights 60/40 vector and 60/40 BM25.
 * embedders (the DES-058 spec's embedding-model parameter as written): per embedder a semantic-only and a hybrid
 *   (RRF k 60, equal weights) column at c300, plus keyword-only once. Embedders: use-lite, and every one of the
 *   spec's whose credentials are present: voyage:voyage-3-large (VOYAGE_API_KEY), cohere:embedding:embed-english-v3.0
 *   (COHERE_API_KEY), BGE-M3 on an OpenAI-compatible server (openai:embedding:BAAI/bge-m3 with OPENAI_BASE_URL; the
 *   model name from RANKGATE_SWEEP_BGE_M3_MODEL) or on Ollama (ollama:embeddings:bge-m3 with OLLAMA_BASE_URL), OpenAI's
 *   text-embedding-3-large (OPENAI_API_KEY without OPENAI_BASE_URL), and on Bedrock Cohere Embed v3 and Titan v2 512
 *   (AWS region and credentials or a profile). The ones skipped are named, with the reason, in one line on stderr.
 * full: RRF k {40, 60, 80} x weights {equal, 60/40 vector, 60/40 BM25} x chunk size {200, 300, 500} x embedder (the
 *   list above), plus keyword-only and semantic-only per chunk size and embedder.
 *   RANKGATE_SWEEP_EMBEDDERS=use-lite,voyage:voyage-3.5 overrides the list (any embedder id). Missing index variants
 *   are ingested on first use (autoIngest; a paid embedder prints its token and cost estimate first), so the full grid
 *   needs time for three chunk sizes per embedder. Column labels carry each embedder's model and dimension.
 * The first column is the baseline of `rankgate compare` and of the blind-test shipping criteria printed after the run.
 * In `promptfoo view`, "% passing" is each column's query success rate (docs/view.md); the chips "#1 Recall@3",
 * "#2 MRR@10", "#3 nDCG@10", "#4 routing" come first.
 * No gate here: the sweep deliberately includes weak configurations (RANKGATE_GATE=off for the afterAll hook).
 */

import { embedderLabel } from './src/embeddings/catalog.ts';

type Weights = { keyword: number; vector: number };
interface Column {
  label: string;
  config: Record<string, unknown>;
}

const WEIGHTS: [string, Weights][] = [
  ['w1:1', { keyword: 1, vector: 1 }],
  ['vec60/bm25-40', { keyword: 0.4, vector: 0.6 }],
  ['bm25-60/vec40', { keyword: 0.6, vector: 0.4 }],
];

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

/** Embedders of the sweep: use-lite plus every candidate whose credentials are present (or RANKGATE_SWEEP_EMBEDDERS). */
export function embeddersFor(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.RANKGATE_SWEEP_EMBEDDERS) return env.RANKGATE_SWEEP_EMBEDDERS.split(',').map((s) => s.trim()).filter(Boolean);
  return ['use-lite', ...embedderCandidates(env).filter(([, missing]) => !missing).map(([id]) => id)];
}

/** The one line naming the embedders left out and why (undefined when none is). */
export function skippedEmbeddersLine(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.RANKGATE_SWEEP_EMBEDDERS) return undefined;
  const skipped = embedderCandidates(env).filter(([, missing]) => missing);
  return skipped.length ? `rankgate sweep: embedders skipped: ${skipped.map(([id, why]) => `${id} (${why})`).join('; ')}` : undefined;
}

const base = { keywordScorer: 'bm25', vectorSearch: 'hnsw', candidates: 50, topK: 10, routing: true, routingConfig: 'datasets/routing.yaml', corpus: 'datasets/corpus' };

/** The embedder in a column label: `use-lite` in the quick sweep (its labels are baselines' keys), else model and dimension. */
const embName = (embedder: string, withDim: boolean) => (withDim ? embedderLabel(embedder) : embedder);

function hybrid(rrfK: number, wName: string, weights: Weights, chunkSize: number, embedder: string, withDim = true): Column {
  return {
    label: `hybrid rrf${rrfK} ${wName} c${chunkSize} ${embName(embedder, withDim)}`,
    config: { ...base, mode: 'hybrid', rrfK, weights, chunkSize, embedder },
  };
}

function single(mode: 'keyword' | 'semantic', chunkSize: number, embedder: string, withDim = true): Column {
  return {
    label:
      mode === 'keyword'
        ? `keyword-only bm25 c${chunkSize}` + (embedder === 'use-lite' ? '' : ` (${embName(embedder, withDim)} index)`)
        : `semantic-only c${chunkSize} ${embName(embedder, withDim)}`,
    config: { ...base, mode, chunkSize, embedder },
  };
}

/** The sweep's columns for RANKGATE_SWEEP=quick|full (exported for tests). */
export function sweepColumns(env: NodeJS.ProcessEnv = process.env): Column[] {
  const size = (env.RANKGATE_SWEEP ?? 'quick').toLowerCase();
  if (size === 'quick') {
    return [
      hybrid(60, 'w1:1', WEIGHTS[0]![1], 300, 'use-lite', false),
      single('keyword', 300, 'use-lite', false),
      single('semantic', 300, 'use-lite', false),
      hybrid(40, 'w1:1', WEIGHTS[0]![1], 300, 'use-lite', false),
      hybrid(80, 'w1:1', WEIGHTS[0]![1], 300, 'use-lite', false),
      hybrid(60, WEIGHTS[1]![0], WEIGHTS[1]![1], 300, 'use-lite', false),
      hybrid(60, WEIGHTS[2]![0], WEIGHTS[2]![1], 300, 'use-lite', false),
    ];
  }
  if (size === 'embedders') {
    const list = embeddersFor(env);
    const cols: Column[] = [single('keyword', 300, 'use-lite')];
    for (const embedder of list) cols.push(single('semantic', 300, embedder), hybrid(60, 'w1:1', WEIGHTS[0]![1], 300, embedder));
    return [cols[2]!, cols[0]!, ...cols.slice(1, 2), ...cols.slice(3)]; // first column (the baseline): hybrid use-lite
  }
  if (size !== 'full') throw new Error(`RANKGATE_SWEEP must be quick, embedders or full, got '${env.RANKGATE_SWEEP}'`);
  const cols: Column[] = [hybrid(60, 'w1:1', WEIGHTS[0]![1], 300, 'use-lite')];
  for (const embedder of embeddersFor(env)) {
    for (const chunkSize of [200, 300, 500]) {
      // Keyword-only does not depend on the embedder; one column per chunk size is enough.
      if (embedder === embeddersFor(env)[0]) cols.push(single('keyword', chunkSize, embedder));
      cols.push(single('semantic', chunkSize, embedder));
      for (const rrfK of [40, 60, 80]) for (const [wName, w] of WEIGHTS) cols.push(hybrid(rrfK, wName, w, chunkSize, embedder));
    }
  }
  const seen = new Set<string>();
  return cols.filter((c) => (seen.has(c.label) ? false : (seen.add(c.label), true)));
}

// named once, when promptfoo loads this config (not when a test imports it)
const skipped = (process.env.RANKGATE_SWEEP ?? 'quick').toLowerCase() !== 'quick' ? skippedEmbeddersLine() : undefined;
if (skipped && !process.env.NODE_TEST_CONTEXT) process.stderr.write(skipped + '\n');

export default {
  description: `rankgate sweep (${(process.env.RANKGATE_SWEEP ?? 'quick').toLowerCase()}, ${sweepColumns().length} configurations; % passing = query success rate)`,
  prompts: [{ raw: '{{query}}', label: 'golden query' }],
  providers: sweepColumns().map((c) => ({ id: 'file://providers/search.ts', label: c.label, config: c.config })),
  tests: 'file://datasets/tests.ts',
  defaultTest: {
    assert: [
      { type: 'javascript', value: 'file://assertions/rank.ts:rank', config: { passAt: 3 } },
      { type: 'javascript', value: 'file://assertions/routing.ts:routing' },
    ],
  },
  extensions: ['file://assertions/gate.ts:beforeAll', 'file://assertions/gate.ts:afterEach', 'file://assertions/gate.ts:afterAll'],
  env: {
    PROMPTFOO_DISABLE_TELEMETRY: '1',
    PROMPTFOO_DISABLE_UPDATE: '1',
    PROMPTFOO_DISABLE_SHARING: '1',
    PROMPTFOO_PASS_RATE_THRESHOLD: '0',
    RANKGATE_GATE: 'off',
  },
  evaluateOptions: { maxConcurrency: 4 }, // the search worker serves one query at a time: latencyMs has no queueing (see promptfooconfig.yaml)
};
