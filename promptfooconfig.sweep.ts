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
 * rrf (RRF k x weights), chunk (200/300/500) and modes (keyword / semantic / hybrid) vary one parameter each.
 * expansion: the blind-test framework's configs A (the demo's hybrid), B (RM3 on BM25, offline; with
 *   RANKGATE_EXPANSION_PROVIDER=openai:chat:MODEL also LLM rewrites and HyDE by that model) and C (the golden entries'
 *   hand-written expansion:, fused by RRF), on the demo's blind-test queries (datasets/golden/queries.yaml, which have
 *   expansion: strings) unless RANKGATE_GOLDEN names others; the shipping criteria of B and C against A print last. The grid is
 *   src/search/sweep.ts, shared with `rankgate eval --sweep NAME`, which runs the same sweeps on a team's own
 *   promptfooconfig.yaml (docs/adopting.md). An unknown RANKGATE_SWEEP is one line naming the sweeps, exit 2.
 * The first column is the baseline of `rankgate compare` and of the blind-test shipping criteria printed after the run.
 * In `promptfoo view`, "% passing" is each column's query success rate (docs/view.md); the chips "#1 Success@3",
 * "#2 MRR@10", "#3 nDCG@10", "#4 routing", "#5 Recall@10" come first.
 * No gate here: the sweep deliberately includes weak configurations (RANKGATE_GATE=off for the afterAll hook).
 */

import { embedderCandidates, embeddersFor, skippedEmbeddersLine, sweepGrid, type SweepColumn } from './src/search/sweep.ts';
import { isUserError } from './src/errors.ts';

export { embedderCandidates, embeddersFor, skippedEmbeddersLine };

/** The demo's base column (promptfooconfig.yaml's provider config): every sweep varies around it. */
const base = { keywordScorer: 'bm25', vectorSearch: 'hnsw', candidates: 50, topK: 10, routing: true, routingConfig: 'datasets/routing.yaml', corpus: 'datasets/corpus' };

/** The sweep's columns for RANKGATE_SWEEP (default quick; the grid is src/search/sweep.ts, exported for tests). */
export function sweepColumns(env: NodeJS.ProcessEnv = process.env): SweepColumn[] {
  return sweepGrid(env.RANKGATE_SWEEP ?? 'quick', base, env);
}

let columns: SweepColumn[] = [];
const sweepName = (process.env.RANKGATE_SWEEP ?? 'quick').trim().toLowerCase();
// promptfoo's own process (a test that imports this file for sweepColumns is not; NODE_TEST_CONTEXT is inherited by children)
const loadedByPromptfoo = process.argv.slice(1).some((a) => /promptfoo/.test(a));
try {
  columns = sweepColumns();
} catch (e) {
  // an unknown RANKGATE_SWEEP is one line and exit 2, never promptfoo's stack trace of a config that failed to load
  if (!isUserError(e) || !loadedByPromptfoo) throw e;
  process.stderr.write(`rankgate sweep: ${e.message}\n`);
  process.exit(2);
}

// named once, when promptfoo loads this config (not when a test imports it)
const skipped = (process.env.RANKGATE_SWEEP ?? 'quick').toLowerCase() !== 'quick' ? skippedEmbeddersLine() : undefined;
if (skipped && loadedByPromptfoo) process.stderr.write(skipped + '\n');

export default {
  description: `rankgate sweep (${(process.env.RANKGATE_SWEEP ?? 'quick').toLowerCase()}, ${columns.length} configurations; % passing = query success rate)`,
  prompts: [{ raw: '{{query}}', label: 'golden query' }],
  providers: columns.map((c) => ({ id: 'file://providers/search.ts', label: c.label, config: c.config })),
  // the expansion sweep needs golden entries with expansion: (config C): the demo's blind-test YAML
  tests:
    sweepName === 'expansion' && !process.env.RANKGATE_GOLDEN
      ? [{ path: 'file://datasets/tests.ts', config: { golden: ['datasets/golden/queries.yaml'] } }]
      : 'file://datasets/tests.ts',
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
    // the blind-test queries have no technique_boundary category and no baseline of their own (config/gate.blind-test.yaml)
    ...(sweepName === 'expansion' && !process.env.RANKGATE_GOLDEN && !process.env.RANKGATE_GATE_FLOORS ? { RANKGATE_GATE_FLOORS: 'config/gate.blind-test.yaml' } : {}),
  },
  evaluateOptions: { maxConcurrency: 4 }, // the search worker serves one query at a time: latencyMs has no queueing (see promptfooconfig.yaml)
};
