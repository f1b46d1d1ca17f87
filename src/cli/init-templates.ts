/**
 * The files `rankgate init` writes into a team's own repository, as text. Kept in TypeScript (not asset files)
 * so they ship in any build of the package without a copy step.
 *
 * Every template is a pure function of an InitPlan: the paths (relative to the team's repo, POSIX separators),
 * the golden set's figures and the floors chosen from its size (src/cli/init.ts).
 */
import yaml from 'js-yaml';
import { sweepNames } from '../search/sweep.ts';

export interface GoldenFigures {
  /** queries in the golden set */
  n: number;
  /** queries per category, largest first */
  categories: [string, number][];
  languages: string[];
  /** queries expecting each non-default route */
  routes: { no_results: number; practice_bridge: number };
  /** queries expecting the safety flag */
  safety: number;
}

export interface InitPlan {
  /** how rankgate's own files are reached from the team's repo, e.g. node_modules/rankgate */
  pkg: string;
  golden: string;
  goldenFormat?: string;
  /** exactly one of corpus / url / module */
  corpus?: string;
  corpusFormat?: string;
  url?: string;
  module?: string;
  figures: GoldenFigures;
  /** overall Success@3 floor, per-category floors (categories big enough for one), routing floor */
  /** maxDrop: in the metric's 0..1 units, like the floors (0.02 = 2 points) */
  floors: { overall: number; categories: [string, number][]; routing?: number; maxDrop: number };
  /** keys of gate.yaml this rankgate's gate understands (regression / max_error_rate arrive with the regression gate) */
  gateKeys: { regression: boolean; maxErrorRate: boolean };
  /** true: write config/routing.yaml and check routes */
  routing: boolean;
  chunkSize: number;
  embedder: string;
  /** repo-relative paths the workflow watches */
  watch: string[];
  baseline: string;
  today: string;
  /** the Node line the workflow sets up, and why (src/util/toolchain.ts ciNodeFor: what the installed promptfoo accepts) */
  node: { major: number; why: string };
}

const q = (s: string) => JSON.stringify(s);
/** A string literal inside a GitHub Actions expression: single quotes, doubled to escape. */
const expr = (s: string) => `'${s.replace(/'/g, "''")}'`;

function providerBlock(p: InitPlan): string {
  if (p.url) {
    return `  - id: file://${p.pkg}/providers/search.ts
    label: ${q(`your service (${new URL(p.url).host})`)}
    config:
      # Your search over HTTP: POST {query, limit} -> {results: [{chunk_id, document_id, content, score}]}
      # (the portal shape), or a /search/v1/{mode} URL (the NQ shape). Routing is your service's own.
      url: ${q(p.url)}
      topK: 10
      timeoutMs: 10000`;
  }
  if (p.module) {
    return `  - id: file://${p.pkg}/providers/search.ts
    label: ${q(`your service (${p.module})`)}
    config:
      # Your search in-process: the module exports createSearchService(config) -> { search(query, params) }.
      module: ${q(p.module)}
      topK: 10`;
  }
  const routing = p.routing
    ? `      routing: true
      routingConfig: config/routing.yaml   # written by rankgate init: your golden set states expected routes`
    : `      # Your golden set states no expected route (no_results, practice_bridge, safety), so no routing rules:
      # every query is plain search. Add config/routing.yaml and set these two when it does.
      routing: false
      routingConfig: false`;
  return `  - id: file://${p.pkg}/providers/search.ts
    label: ${q(`hybrid rrf60 c${p.chunkSize} ${p.embedder}`)}
    config:
      # rankgate's own hybrid search (BM25 + vector, RRF) over an embedded PGlite index in .rankgate/db
      # (or Postgres with pgvector: set DATABASE_URL). The index of ${p.corpus} is built on first use.
      corpus: ${q(p.corpus!)}${p.corpusFormat ? `\n      corpusFormat: ${p.corpusFormat}` : ''}
      mode: hybrid
      rrfK: 60
      topK: 10
      chunkSize: ${p.chunkSize}
      embedder: ${p.embedder}
${routing}`;
}

export function promptfooConfig(p: InitPlan): string {
  const f = p.figures;
  const golden = p.goldenFormat ? `{ golden: ${q(p.golden)}, format: ${p.goldenFormat} }` : `{ golden: ${q(p.golden)} }`;
  const routingAssert = p.routing
    ? `
    # Routes and the safety flag, for the queries whose golden entry states one.
    - type: javascript
      value: file://${p.pkg}/assertions/routing.ts:routing`
    : '';
  return `# Search-quality eval of ${p.golden} (${f.n} queries), written by \`rankgate init\` on ${p.today}.
#
#   npx promptfoo eval -o results.jsonl      # the eval; the gate (config/gate.yaml) sets the exit code
#   npx rankgate gate results.jsonl          # the verdict again, with the per-category table
#   npx promptfoo view -y                    # the matrix in a browser (-y opens it, -n only serves it)
#
# Exit codes: 0 every floor passes, 1 a floor (or a significant regression) fails, 2 bad input or a broken
# setup. A single query failing its own assertions does not fail the run; the floors decide.
description: ${q(`search quality: ${p.golden}`)}

prompts:
  - '{{query}}'

# One entry = one column of the matrix. Copy an entry and change its config to compare settings
# (chunkSize, rrfK, weights, mode: keyword | semantic | hybrid); give every entry its own label.
providers:
${providerBlock(p)}

# Your golden set, read by rankgate's loader (format detected from the file; every problem is one line).
tests:
  - path: file://${p.pkg}/datasets/tests.ts
    config: ${golden}

defaultTest:
  assert:
    # Success@k (keys recall_at_k), Recall@10, MRR, nDCG per query (overall and per category) as named scores.
    - type: javascript
      value: file://${p.pkg}/assertions/rank.ts:rank
      config: { passAt: 3 }${routingAssert}
    # Top-5 results cut mid-sentence or inside an open code fence.
    - type: javascript
      value: file://${p.pkg}/assertions/integrity.ts:integrity
    # The relevance judge for top-10 results that match no expected passage: OFF until you configure it (rows pass
    # with "judge: off"). Turn it on for a run with RANKGATE_JUDGE (or \`rankgate eval --judge\`), which always wins
    # over this setting: openai:chat:MODEL, anthropic:messages:MODEL, bedrock (AWS configured), similarity (a
    # heuristic); or set mode here (auto: Bedrock when AWS is configured, else Anthropic or OpenAI by their API keys).
    - type: javascript
      value: file://${p.pkg}/assertions/judge.ts:judged
      config: { mode: off }

# Means (avg_recall_at_3, routing_accuracy, per category...): computed by the gate hooks from the column sums.
extensions:
  - file://${p.pkg}/assertions/gate.ts:beforeAll
  - file://${p.pkg}/assertions/gate.ts:afterEach
  - file://${p.pkg}/assertions/gate.ts:afterAll

env:
  PROMPTFOO_DISABLE_TELEMETRY: '1'
  PROMPTFOO_DISABLE_UPDATE: '1'
  PROMPTFOO_DISABLE_SHARING: '1'
  PROMPTFOO_PASS_RATE_THRESHOLD: '0'

evaluateOptions:
  maxConcurrency: 4
`;
}

const pct = (x: number) => x.toFixed(2);

export function gateConfig(p: InitPlan): string {
  const f = p.figures;
  const fl = p.floors;
  const small = f.categories.filter(([c]) => !fl.categories.some(([k]) => k === c));
  const lines = [
    `# Search-quality gate for ${p.golden} (${f.n} queries), written by \`rankgate init\` on ${p.today}.`,
    '# Applied by the afterAll hook of promptfooconfig.yaml (a bare `npx promptfoo eval` exits 1 when a floor fails)',
    '# and by `npx rankgate gate results.jsonl`. A single query failing its own assertions never fails the gate.',
    '#',
    `# recall_at_3 is Success@3 (DES-058's "Recall@3": a relevant result in the top 3; docs/metrics.md "Names").`,
    `# Floors from the golden set's size: the 0.80 Success@3 target less the one-sided 95% sampling margin of n`,
    `# queries (1.645 * sqrt(0.8 * 0.2 / n)), rounded down to 0.01. With ${f.n} queries one query moves Success@3 by`,
    `# ${pct(1 / f.n)}. Grow the set to tighten them; raise them once you know where your search stands.`,
    'version: 1   # the format of this file (docs/compatibility.md)',
    'metric_family: strict',
    'overall:',
    `  recall_at_3: ${pct(fl.overall)}`,
  ];
  if (fl.routing !== undefined) lines.push(`  routing_accuracy: ${pct(fl.routing)}   # ${f.routes.no_results + f.routes.practice_bridge} queries expect a route other than search, ${f.safety} the safety flag`);
  if (fl.categories.length) {
    lines.push('# Categories with at least 10 queries get their own floor (same rule, n = the category size).');
    lines.push('categories:');
    for (const [c, v] of fl.categories) lines.push(`  ${q(c)}:`, `    recall_at_3: ${pct(v)}`);
  } else {
    lines.push('# No category has the 10 queries a floor of its own needs; categories are reported, not gated.');
    lines.push('categories: {}');
  }
  if (small.length) lines.push(`# Reported, not gated (under 10 queries): ${small.map(([c, n]) => `${c} (${n})`).join(', ')}.`);
  if (p.gateKeys.regression) {
    lines.push(
      '# Regression check against the baseline below (`npx rankgate gate results.jsonl --update-baseline` writes it; off',
      '# while the file does not exist): fails when a metric drops by more than max_drop (0..1 units like',
      `# the floors; here ${fl.maxDrop.toFixed(2)}: at least one query's worth of Success@3) AND a paired test over the same queries gives p < alpha.`,
      'regression:',
      `  baseline: ${p.baseline}`,
      `  max_drop: ${fl.maxDrop.toFixed(2)}`,
      '  alpha: 0.05',
    );
  }
  if (p.gateKeys.maxErrorRate) lines.push('# Rows that errored (service down, timeout) measured nothing: exit 2 above this share (figures are over the others).', 'max_error_rate: 0');
  return lines.join('\n') + '\n';
}

/** Routing rules for a golden set that states routes: only the parts it checks are on, with neutral defaults. */
export function routingConfig(p: InitPlan, defaults: { stopwordsEn: string[]; safetyEn: string[] }): string {
  const f = p.figures;
  const body = {
    version: 1,
    practice_bridge: { enabled: f.routes.practice_bridge > 0, patterns: [] as string[], exemplars: [] as string[], similarity_threshold: 0.8 },
    no_results: {
      enabled: f.routes.no_results > 0,
      consider_top: 5,
      cosine_floor: 0.2,
      cosine_ceiling: 0.6,
      weights: { vector: 0.6, keyword: 0.4 },
      thresholds: { both: 0.35, vector_only: 0.35, keyword_only: 0.6 },
      vector_languages_by_embedder: { 'use-lite': ['en'] },
      min_term_length: 3,
      stem_prefix: 5,
      stopwords: { en: defaults.stopwordsEn },
    },
    safety: { enabled: f.safety > 0, check_all_languages: true, suppress_no_results: true, lexicon: { en: defaults.safetyEn }, patterns: {} },
  };
  return `# Routing rules for ${p.golden}, written by \`rankgate init\` on ${p.today} because the golden set states routes:
# ${f.routes.no_results} queries expect no_results, ${f.routes.practice_bridge} practice_bridge, ${f.safety} the safety flag.
# Only those parts are enabled. The thresholds are neutral starting points, not tuned on your data: run the eval,
# look at the routing failures (npx promptfoo view -y), and adjust. Each field is described in rankgate's
# docs (routing); practice_bridge needs your own patterns or exemplars before it can route anything.
${yaml.dump(body, { lineWidth: 120, flowLevel: 3 })}`;
}

/**
 * What both GitHub workflows init writes start with: the name, the triggers (pull requests touching the watched paths,
 * the weekly history schedule, a manual run with a sweep or the history), the token's permissions, one run per ref.
 */
function workflowHead(p: InitPlan): string {
  const paths = p.watch.map((w) => `      - ${q(w)}`).join('\n');
  return `name: search-eval

on:
  pull_request:
    paths:
${paths}
${SCHEDULE}
  # Run by hand (Actions -> search-eval -> Run workflow): the eval, and a parameter sweep when one is chosen; or, on the
  # default branch with "history" ticked, the history job below instead.
  workflow_dispatch:
    inputs:
      sweep:
        description: 'A parameter sweep to run too (rankgate eval --sweep; none: the eval only)'
        type: choice
        default: none
        options: [${['none', ...sweepNames()].join(', ')}]
${HISTORY_INPUT}

permissions:
  contents: read
  pull-requests: write

concurrency:
  group: search-eval-\${{ github.ref }}
  cancel-in-progress: true
`;
}

export function workflow(p: InitPlan): string {
  const ours = !!p.corpus;
  // The model caches (rerank scores, expansion text, judge verdicts) come from the workflow's cache, never from files in
  // the repository (rankgate refuses cache files tracked by git in CI): keyed by branch, event and run, so a run on the
  // base branch (a push or a manual run) saves its own, and a pull request restores the base branch's latest (restore-keys:
  // never a pull request's own) and writes only into its own scope (GitHub never gives a pull request's cache to the
  // base branch). docs/gate.md "Caches".
  const modelCache = `
      - name: Model caches from the base branch (rerank, expansion, judge), never from the repository
        uses: actions/cache@v4
        with:
          path: .rankgate/cache
          key: rankgate-model-cache-\${{ github.base_ref || github.ref_name }}-\${{ github.event_name }}-\${{ github.run_id }}
          restore-keys: |
            rankgate-model-cache-\${{ github.base_ref || github.ref_name }}-push-
            rankgate-model-cache-\${{ github.base_ref || github.ref_name }}-schedule-
            rankgate-model-cache-\${{ github.base_ref || github.ref_name }}-workflow_dispatch-`;
  const cache = ours
    ? `
      # The PGlite index and the embedding cache, keyed by corpus x chunk size x embedder: a PR that does not
      # touch the corpus reuses the index instead of re-embedding every document.
      - uses: actions/cache@v4
        with:
          path: .rankgate/db
          key: rankgate-index-\${{ hashFiles(${expr(corpusGlob(p.corpus!))}) }}-c${p.chunkSize}-${p.embedder}
          restore-keys: |
            rankgate-index-${modelCache}`
    : modelCache;
  const service = p.url
    ? `
      # Your service must answer at ${p.url} here: start it (or point url: at a staging deployment) before the eval.`
    : '';
  // the steps before the eval, the same in the pull-request job and the history job
  const setup = `${checkoutSteps(p)}
      - run: npm ci${cache}${service}`;
  return `# Search-quality gate, written by \`rankgate init\` on ${p.today}: runs the golden-set eval on pull requests that
# can change search results, writes the table to the job summary and one PR comment, and fails the job when
# the gate fails (exit 1: a floor or a significant regression; exit 2: bad input or a broken setup). Weekly, the
# history job evaluates the default branch and keeps the run on the branch rankgate-history (docs/history.md).
${workflowHead(p)}
env:
  PROMPTFOO_DISABLE_TELEMETRY: '1'
  PROMPTFOO_DISABLE_UPDATE: '1'
  PROMPTFOO_DISABLE_SHARING: '1'
  PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1'
  PROMPTFOO_DISABLE_DEBUG_LOG: '1'

jobs:
  eval:
    if: \${{ ${EVAL_IF} }}
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
${setup}
      # A pull request is judged by its BASE branch: the gate reads the floors (config/gate.yaml), the golden set's
      # expectations and the baseline (${p.baseline}) at the pull request's base commit (github.event.pull_request.base.sha: fetch-depth: 0 above fetches it), never the
      # pull request's own versions; every change the pull request makes to them is said LOUD at the top of the gate
      # and of the PR comment, with before and after, and applies after the merge (docs/gate.md, "What a pull request
      # can change"). Require a review of those files too: a CODEOWNERS line (.github/CODEOWNERS) such as
      #   /config/ /${p.golden} /promptfooconfig.yaml /package.json /package-lock.json /.github/workflows/  @your-org/search-owners
      # and protect the branch (docs/adopting.md).
      - name: Eval (promptfoo)
        id: eval
        continue-on-error: true
        env:
          RANKGATE_BASE_REF: \${{ github.event.pull_request.base.sha || 'none' }}
        run: npx promptfoo eval -c promptfooconfig.yaml --no-cache --no-progress-bar --output results.jsonl
      # The gate's exit code is the job's: 1 a floor or a significant regression, 2 bad input or a broken setup. An eval
      # that did not start (a promptfoo that needs another Node, a missing install) or wrote no results is 2, never 1.
      - name: Gate
        id: gate
        if: always()
        env:
          # the pull request's base (none on a manual run: judged by this branch's own files)
          BASE_REF: \${{ github.event.pull_request.base.sha || 'none' }}
        run: |
          if [ ! -s results.jsonl ]; then
            echo "::error::promptfoo eval did not start or wrote no results (eval step: \${{ steps.eval.outcome }}): a broken setup (exit 2), not a quality result; see the Eval step's log (a promptfoo that needs another Node than node-version above, or a failed install)"
            echo "code=2" >> "$GITHUB_OUTPUT"
            exit 0
          fi
          code=0
          npx rankgate gate results.jsonl --base-ref "$BASE_REF" --comment comment.md || code=$?
          echo "code=$code" >> "$GITHUB_OUTPUT"
      # On demand: the sweep's columns around this config's first provider (docs/adopting.md, "Sweeps"). No gate
      # (it deliberately includes weak configurations): its report and summary are uploaded with the results.
      - name: Sweep
        if: always() && github.event_name == 'workflow_dispatch' && inputs.sweep != 'none'
        continue-on-error: true
        env:
          # an input through the environment, never pasted into the script
          SWEEP: \${{ inputs.sweep }}
        run: npx rankgate eval --sweep "$SWEEP" --out-dir sweep-results
      - name: Job summary
        if: always() && hashFiles('comment.md') != ''
        run: cat comment.md >> "$GITHUB_STEP_SUMMARY"
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: search-eval-results
          path: |
            results.jsonl
            results.jsonl.rankgate.jsonl
            comment.md
            sweep-results/
          if-no-files-found: warn
      # A pull request from a fork gets a read-only token: the comment is skipped there (the table is in the job
      # summary), and an API failure is never a job failure. The gate step alone decides the job.
      - name: Post or update the PR comment
        if: always() && github.event_name == 'pull_request' && github.event.pull_request.head.repo.full_name == github.repository && hashFiles('comment.md') != ''
        continue-on-error: true
        uses: actions/github-script@v7
        with:
          script: |
            const fs = require('fs');
            const marker = '<!-- rankgate:search-eval -->';
            const body = fs.readFileSync('comment.md', 'utf8');
            const { owner, repo } = context.repo;
            const issue_number = context.issue.number;
            const comments = await github.paginate(github.rest.issues.listComments, { owner, repo, issue_number });
            const mine = comments.find((c) => c.body && c.body.includes(marker));
            if (mine) await github.rest.issues.updateComment({ owner, repo, comment_id: mine.id, body });
            else await github.rest.issues.createComment({ owner, repo, issue_number, body });
      - name: Fail when the gate fails
        if: always() && steps.gate.outputs.code != '0'
        run: |
          code="\${{ steps.gate.outputs.code }}"
          if [ "$code" = "1" ]; then
            echo "Search-quality gate failed: a floor or a significant regression (exit 1; see the job summary and the search-eval-results artifact)."
          else
            echo "Search-quality gate measured nothing trustworthy: bad input or a broken setup (exit 2; see the Gate and Eval steps' logs)."
            code=2
          fi
          exit "$code"
${historyJob(p, setup)}`;
}

/** The weekly trigger of the history job (docs/history.md): its minute, hour (UTC) and weekday are the team's to change. */
const SCHEDULE = `  # The history job below, weekly on the default branch: minute hour day-of-month month weekday (UTC; here Mondays
  # 04:17). Change it here (e.g. '17 4 * * *' for every day); GitHub may start a scheduled run some minutes late.
  schedule:
    - cron: '17 4 * * 1'`;
const HISTORY_INPUT = `      history:
        description: 'Evaluate the default branch and append the run to the history (branch rankgate-history)'
        type: boolean
        default: false`;
/** The pull-request job: not on the schedule, nor on a manual run that asks for the history job. */
const EVAL_IF = "github.event_name != 'schedule' && !(github.event_name == 'workflow_dispatch' && inputs.history)";
/** The history job: on the schedule, or by hand on the default branch. */
const HISTORY_IF =
  "github.event_name == 'schedule' || (github.event_name == 'workflow_dispatch' && inputs.history && github.ref == format('refs/heads/{0}', github.event.repository.default_branch))";

/**
 * The scheduled job of init's workflow (docs/history.md): evaluate the default branch, gate it against the baseline
 * (never updating it) and append one line to history.jsonl on the branch rankgate-history, pushed with the job's own
 * token: `contents: write` on this job only. The push step is rankgate's own script (action/history-push.sh): a
 * fork or a read-only token skips the push with a notice, never failing the run; the gate (and max_drift) decides.
 */
function historyJob(p: InitPlan, setup: string): string {
  return `
  history:
    # The quality of the default branch over time, kept where pull requests cannot change it (docs/history.md): every
    # run appends one line (run, commit, date, the gate's exit code, the figures per metric and category, the
    # per-query values compressed, corpus, golden set, judge, latency, cost) to history.jsonl on the branch
    # rankgate-history. \`npx rankgate history\` reads it with the baseline's git history; --html draws the trend page.
    # The drift over the last runs is said here and in pull requests' comments; regression.max_drift in
    # config/gate.yaml makes it fail this job (never a pull request).
    if: \${{ ${HISTORY_IF} }}
    runs-on: ubuntu-latest
    timeout-minutes: 30
    permissions:
      contents: write
    steps:
${setup}
      - name: Eval (promptfoo)
        id: eval
        continue-on-error: true
        env:
          RANKGATE_BASE_REF: none
        run: npx promptfoo eval -c promptfooconfig.yaml --no-cache --no-progress-bar --output results.jsonl
      # Gate against the baseline (never updating it), append the line, push the branch with this job's token; a fork or
      # a read-only token: a notice, not a failure. Its exit code is the next step's.
      - name: Gate and append to the history
        id: history
        if: always()
        env:
          RESULTS: results.jsonl
        run: bash ${p.pkg}/action/history-push.sh
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: search-eval-history-run
          path: |
            results.jsonl
            results.jsonl.rankgate.jsonl
          if-no-files-found: warn
      - name: Fail when the gate or the drift fails
        if: always() && steps.history.outputs.exit-code != '0'
        run: |
          code="\${{ steps.history.outputs.exit-code }}"
          if [ "$code" = "1" ]; then
            echo "Search-quality gate failed on the default branch: a floor, a significant regression or the drift beyond max_drift (exit 1)."
          else
            echo "Search-quality gate measured nothing trustworthy on the default branch (exit 2; see the Eval and history steps' logs)."
            code=2
          fi
          exit "$code"
`;
}

/** The checkout with the whole history (the base branch, the baseline's git history) and the Node the plan chose. */
function checkoutSteps(p: InitPlan): string {
  return `      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      # Node ${p.node.major}: ${p.node.why}.
      - uses: actions/setup-node@v4
        with:
          node-version: ${p.node.major}
          cache: npm`;
}

/** A hashFiles() pattern for a corpus path: a folder's files, or the file itself. */
export function corpusGlob(corpus: string): string {
  return /\.[A-Za-z0-9]+$/.test(corpus) ? corpus : `${corpus.replace(/\/+$/, '')}/**`;
}

/** The major-version tag of the GitHub Action a workflow pins (`rankgate/rankgate@v0`): the release moves it. */
export function actionRef(version: string): string {
  return `rankgate/rankgate@v${version.split('.')[0]}`;
}

/** init --action: the pull-request gate as a few lines around the published GitHub Action (action.yml). */
export function actionWorkflow(p: InitPlan, version: string): string {
  const setup = checkoutSteps(p);
  return `# Search-quality gate, written by \`rankgate init --action\` on ${p.today}: rankgate's GitHub Action evaluates the
# golden set on pull requests that can change search results, judges them by the BASE branch's floors, golden
# expectations and baseline, writes the table to the job summary and one PR comment, uploads the results and the HTML
# report, and fails the job when the gate fails (exit 1: a floor or a significant regression; exit 2: bad input or a
# broken setup); weekly it keeps the default branch's run on the branch rankgate-history (docs/history.md). Its inputs
# and outputs: docs/adopting.md ("The GitHub Action"). Require a review of the files a pull
# request is judged by with a CODEOWNERS line (.github/CODEOWNERS):
#   /config/ /${p.golden} /promptfooconfig.yaml /package.json /package-lock.json /.github/workflows/  @your-org/search-owners
${workflowHead(p)}
jobs:
  eval:
    if: \${{ ${EVAL_IF} }}
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
${setup}
      - uses: ${actionRef(version)}
        with:
          config: promptfooconfig.yaml
          floors: config/gate.yaml
          sweep: \${{ inputs.sweep || 'none' }}

  # The quality of the default branch over time (docs/history.md): weekly (the cron above) and by hand with "history"
  # ticked, the Action evaluates, gates against the baseline (never updating it) and appends the run to history.jsonl
  # on the branch rankgate-history, pushed with this job's token (contents: write on this job only; a fork or a
  # read-only token skips the push with a notice). regression.max_drift in config/gate.yaml makes the drift fail it.
  history:
    if: \${{ ${HISTORY_IF} }}
    runs-on: ubuntu-latest
    timeout-minutes: 30
    permissions:
      contents: write
    steps:
${setup}
      - uses: ${actionRef(version)}
        with:
          config: promptfooconfig.yaml
          floors: config/gate.yaml
          comment: false
          history: true
`;
}

/**
 * init --ci gitlab: the merge-request gate as a GitLab CI job (included from .gitlab-ci.yml). Judged by the target
 * branch (fetched, RANKGATE_BASE_REF); the index cache is written by the default branch only and read by merge requests
 * (policy pull), so a merge request never brings its own cache; the Markdown comment, the results and the report are
 * the job's artifacts (a comment on the merge request needs a token of yours: docs/adopting.md).
 */
export function gitlabJob(p: InitPlan): string {
  const changes = p.watch.map((w) => `        - ${q(w)}`).join('\n');
  return `# Search-quality gate, written by \`rankgate init --ci gitlab\` on ${p.today}: included from .gitlab-ci.yml
# (include: - local: .gitlab/rankgate.gitlab-ci.yml). On merge requests that can change search results it evaluates
# the golden set, judges it by the TARGET branch's floors, golden expectations and baseline, and fails the job when the
# gate fails (exit 1: a floor or a significant regression; exit 2: bad input or a broken setup). The verdict with the
# per-category table is comment.md in the job's artifacts. A scheduled pipeline keeps the default branch's runs as
# history (search-eval-history below).
search-eval:
  image: node:${p.node.major}-bookworm
  rules:
    - if: '$CI_PIPELINE_SOURCE == "merge_request_event"'
      changes:
${changes}
    - if: '$CI_PIPELINE_SOURCE == "web"'
  variables:
    GIT_DEPTH: "0"
    PROMPTFOO_DISABLE_TELEMETRY: "1"
    PROMPTFOO_DISABLE_UPDATE: "1"
    PROMPTFOO_DISABLE_SHARING: "1"
    PROMPTFOO_DISABLE_RUNTIME_WARNINGS: "1"
  cache:
    # written on the default branch only: a merge request reads the target's index, never brings its own
    - key: rankgate-index
      paths: [.rankgate/]
      policy: pull
  script:
    - npm ci
    - |
      if [ -n "\${CI_MERGE_REQUEST_TARGET_BRANCH_NAME:-}" ]; then
        git fetch --no-tags origin "$CI_MERGE_REQUEST_TARGET_BRANCH_NAME"
        # the merge request's base as a commit id (which no script of the job can move), else the fetched target branch
        export RANKGATE_BASE_REF="\${CI_MERGE_REQUEST_DIFF_BASE_SHA:-origin/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME}"
      else
        export RANKGATE_BASE_REF=none
      fi
    - npx promptfoo eval -c promptfooconfig.yaml --no-cache --no-progress-bar --output results.jsonl || echo "promptfoo eval exit $? (the gate decides)"
    - npx rankgate gate results.jsonl --base-ref "$RANKGATE_BASE_REF" --comment comment.md --report gate-report.json
  artifacts:
    when: always
    paths: [results.jsonl, results.jsonl.rankgate.jsonl, comment.md, gate-report.json]
    expire_in: 30 days

# The index cache, refreshed on the default branch (the one cache merge requests read).
search-eval-index:
  extends: search-eval
  rules:
    - if: '$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE != "schedule"'
  cache:
    - key: rankgate-index
      paths: [.rankgate/]
      policy: pull-push

# The quality of the default branch over time (docs/history.md): a scheduled pipeline (Build -> Pipeline schedules,
# e.g. weekly "17 4 * * 1" on the default branch) evaluates, gates against the baseline (never updating it) and appends
# the run to history.jsonl on the branch rankgate-history. The job token cannot push: give a project access token with
# write_repository as the masked CI variable RANKGATE_HISTORY_TOKEN; without it the push is skipped with a notice and the
# verdict stands. regression.max_drift in config/gate.yaml makes the drift fail this job (never a merge request).
search-eval-history:
  extends: search-eval
  rules:
    - if: '$CI_PIPELINE_SOURCE == "schedule" && $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH'
  cache:
    - key: rankgate-index
      paths: [.rankgate/]
      policy: pull-push
  script:
    - npm ci
    - export RANKGATE_BASE_REF=none
    - npx promptfoo eval -c promptfooconfig.yaml --no-cache --no-progress-bar --output results.jsonl || echo "promptfoo eval exit $? (the gate decides)"
    - |
      if [ -n "\${RANKGATE_HISTORY_TOKEN:-}" ]; then
        # the token as an HTTP header of this script's git calls only (never written into .git/config on the runner)
        export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraHeader
        GIT_CONFIG_VALUE_0="Authorization: Basic $(printf 'oauth2:%s' "$RANKGATE_HISTORY_TOKEN" | base64 | tr -d '\\n')"
        export GIT_CONFIG_VALUE_0
        # a remote without the clone's job-token credentials in its URL: the header above is the only authorisation
        git remote add rankgate-push "https://\${CI_SERVER_HOST}/\${CI_PROJECT_PATH}.git" 2>/dev/null || git remote set-url rankgate-push "https://\${CI_SERVER_HOST}/\${CI_PROJECT_PATH}.git"
        export HISTORY_REMOTE=rankgate-push
      fi
      export GIT_AUTHOR_NAME="rankgate history" GIT_AUTHOR_EMAIL="\${GITLAB_USER_EMAIL:-rankgate@localhost}"
      RESULTS=results.jsonl bash ${p.pkg}/action/history-push.sh
  artifacts:
    when: always
    paths: [results.jsonl, results.jsonl.rankgate.jsonl]
    expire_in: 30 days
`;
}
