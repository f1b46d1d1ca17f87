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
 * full: RRF k {40, 60, 80} x weights {equal, 60/40 vector, 60/40 BM25} x chunk size {200, 300, 500} x embedder,
 *   plus keyword-only and semantic-only per chunk size and embedder. Embedders: use-lite; with Bedrock configured
 *   (AWS_REGION or AWS_BEDROCK_REGION, and credentials or a profile) also titan-v2-512 and cohere-v3-english.
 *   RANKGATE_SWEEP_EMBEDDERS=use-lite,titan-v2-1024 overrides the list. Missing index variants are ingested on
 *   first use (autoIngest), so the full grid needs time for three chunk sizes per embedder.
 * The first column is the baseline of `rankgate compare` and of the blind-test shipping criteria printed after the run.
 * In `promptfoo view`, "% passing" is each column's query success rate (docs/view.md); the chips "#1 Recall@3",
 * "#2 MRR@10", "#3 nDCG@10", "#4 routing" come first.
 * No gate here: the sweep deliberately includes weak configurations (RANKGATE_GATE=off for the afterAll hook).
 */

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

export function embeddersFor(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.RANKGATE_SWEEP_EMBEDDERS) return env.RANKGATE_SWEEP_EMBEDDERS.split(',').map((s) => s.trim()).filter(Boolean);
  return bedrockConfigured(env) ? ['use-lite', 'titan-v2-512', 'cohere-v3-english'] : ['use-lite'];
}

const base = { keywordScorer: 'bm25', vectorSearch: 'hnsw', candidates: 50, topK: 10, routing: true, routingConfig: 'datasets/routing.yaml', corpus: 'datasets/corpus' };

function hybrid(rrfK: number, wName: string, weights: Weights, chunkSize: number, embedder: string): Column {
  return {
    label: `hybrid rrf${rrfK} ${wName} c${chunkSize} ${embedder}`,
    config: { ...base, mode: 'hybrid', rrfK, weights, chunkSize, embedder },
  };
}

function single(mode: 'keyword' | 'semantic', chunkSize: number, embedder: string): Column {
  return {
    label: mode === 'keyword' ? `keyword-only bm25 c${chunkSize}` + (embedder === 'use-lite' ? '' : ` (${embedder} index)`) : `semantic-only c${chunkSize} ${embedder}`,
    config: { ...base, mode, chunkSize, embedder },
  };
}

/** The sweep's columns for RANKGATE_SWEEP=quick|full (exported for tests). */
export function sweepColumns(env: NodeJS.ProcessEnv = process.env): Column[] {
  const size = (env.RANKGATE_SWEEP ?? 'quick').toLowerCase();
  if (size === 'quick') {
    return [
      hybrid(60, 'w1:1', WEIGHTS[0]![1], 300, 'use-lite'),
      single('keyword', 300, 'use-lite'),
      single('semantic', 300, 'use-lite'),
      hybrid(40, 'w1:1', WEIGHTS[0]![1], 300, 'use-lite'),
      hybrid(80, 'w1:1', WEIGHTS[0]![1], 300, 'use-lite'),
      hybrid(60, WEIGHTS[1]![0], WEIGHTS[1]![1], 300, 'use-lite'),
      hybrid(60, WEIGHTS[2]![0], WEIGHTS[2]![1], 300, 'use-lite'),
    ];
  }
  if (size !== 'full') throw new Error(`RANKGATE_SWEEP must be quick or full, got '${env.RANKGATE_SWEEP}'`);
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
  extensions: ['file://assertions/gate.ts:beforeAll', 'file://assertions/gate.ts:afterAll'],
  env: {
    PROMPTFOO_DISABLE_TELEMETRY: '1',
    PROMPTFOO_DISABLE_UPDATE: '1',
    PROMPTFOO_DISABLE_SHARING: '1',
    PROMPTFOO_PASS_RATE_THRESHOLD: '0',
    RANKGATE_GATE: 'off',
  },
  evaluateOptions: { maxConcurrency: 4 }, // the search worker serves one query at a time: latencyMs has no queueing (see promptfooconfig.yaml)
};
