/**
 * promptfoo extension hooks (thin; rules in src/results and src/gate):
 *
 *   extensions:
 *     - file://assertions/gate.ts:beforeAll   # adds derived means per category (and conditional ones) for the tests present,
 *                                             # and the judged means (avg_judged_*, or avg_heuristic_judged_*) when a
 *                                             # judge assertion (assertions/judge.ts:judged) runs with the judge on
 *     - file://assertions/gate.ts:afterEach   # carries each row's metadata once: drops the row's own copies of
 *                                             # response.metadata and of the golden query, and the grading result's
 *                                             # copies of the named scores and their unit weights (src/results/compact.ts)
 *     - file://assertions/gate.ts:afterAll    # applies the floors of config/gate.yaml to every column
 *
 * beforeAll also validates the floors file (a bad gate.yaml: one line, exit 2, before any query runs).
 * afterAll puts the verdict in front of the eval's description (the title `promptfoo view` shows above the matrix;
 * src/report/verdict-text.ts), prints the per-column summary, and LAST (from a process 'exit' handler, after promptfoo's own summary)
 * the verdict with its reasons, setting the exit code of `npx promptfoo eval` by the one contract (src/gate/verdict.ts):
 * 0 pass, 1 a floor or a significant regression fails, 2 nothing trustworthy measured or bad input. A single query
 * failing its own assertions does not fail the run (PROMPTFOO_PASS_RATE_THRESHOLD=0; the gate replaces promptfoo's
 * code 100 anyway). It also records latency p50/p95 per column (latency_p50_ms, latency_p95_ms; a reranked column also
 * its per-stage means, rerank_latency_p50_ms / _p95_ms and rerank_cost_per_query_usd) and, when promptfoo
 * kept no rows (--no-write), the golden selection size (rankgate_selection_size) as namedScores.
 *
 * Environment: RANKGATE_GATE_FLOORS (default config/gate.yaml; the built-in floors of the portal's DES-058 spec when absent),
 * RANKGATE_GATE=off (report only, never set the exit code), RANKGATE_ALLOW_PARTIAL=1 (accept partial runs),
 * RANKGATE_ACCEPT_BASELINE_MISMATCH=1 (compare with a baseline of another corpus or golden set).
 */
import { chmodSync, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { EvalFunction } from 'mathjs';
import { GoldenQuerySchema, type GoldenQuery } from '../src/golden/schema.ts';
import { validateJudgeConfig } from '../src/judge/config.ts';
import { resolveJudgeSpec, type JudgeSpec } from '../src/judge/spec.ts';
import { judgeSetupProblem } from '../src/judge/setup.ts';
import { ANSWER_PROMPT_VERSION } from '../src/judge/prompt.ts';
import { applyDerivedMetrics, compileOwnDerived, derivedMetricsFor, type DerivedMetric } from '../src/results/derived.ts';
import { UserError, isUserError } from '../src/errors.ts';
import { baselineColumn } from '../src/gate/baseline.ts';
import { expectationsAtBase, gateInputs, readAtBase, restrictToBase } from '../src/gate/base-ref.ts';
import { baseRefFrom, noBaseNote, refReader } from '../src/util/git.ts';
import { runCorpusFor } from '../src/gate/corpus-change.ts';
import { loadFloors } from '../src/gate/floors.ts';
import { expansionSummary, labelledText, percentile, rerankColumnMetrics, rerankGainText } from '../src/results/summary.ts';
import { bucketsPart, judgedAtPart, latencyPart, queriesPart, rerankPart } from '../src/report/column-line.ts';
import { SELECTION_SIZE_KEY, parseResultsObject, type SelectionInfo } from '../src/results/read.ts';
import { shippingCriteria } from '../src/gate/shipping.ts';
import { reviewsFromEnv } from '../src/review/evidence.ts';
import { outputPathsOf, recordPathOf, regatePathFor, writeRegateFile } from '../src/results/regate.ts';
import { compactGrading, dedupeRowMetadata } from '../src/results/compact.ts';
import { currentRunId, digestRows, startRun } from '../src/results/record.ts';
import { promptfooWrites } from '../src/results/nowrite.ts';
import { weightUnitMeans } from '../src/report/view.ts';
import { combinedCode, gateColumn, verdictLines, type ColumnVerdict, type ExitCode } from '../src/gate/verdict.ts';
import { describeWithVerdict, labelWithVerdict } from '../src/report/verdict-text.ts';
import { redactConfig, redactFile, redactText } from '../src/util/redact.ts';
import { runningToolchain } from '../src/util/toolchain.ts';
import { envFlag } from '../src/util/env.ts';
import { gateDrift } from '../src/history/run.ts';
import { safeTerminalLines } from '../src/util/terminal.ts';

interface AssertionLike {
  type?: string;
  value?: unknown;
  config?: Record<string, unknown>;
}

interface Suite {
  tests?: { metadata?: Record<string, unknown>; assert?: AssertionLike[] }[];
  defaultTest?: { assert?: AssertionLike[]; options?: Record<string, unknown> } | string;
  derivedMetrics?: { name: string; value: unknown }[];
  [k: string]: unknown;
}

export async function beforeAll(context: { suite: Suite }): Promise<{ suite: Suite }> {
  // this eval's run id: providers/search.ts puts it on every row, afterAll in the record beside the results
  startRun();
  // A bad gate.yaml is rejected once, before any query runs (exit 2), not after the eval.
  const floorsPath = String(process.env.RANKGATE_GATE_FLOORS ?? (context.suite?.env as Record<string, unknown> | undefined)?.RANKGATE_GATE_FLOORS ?? 'config/gate.yaml');
  try {
    if (existsSync(floorsPath)) loadFloors(floorsPath);
  } catch (e) {
    if (!isUserError(e)) throw e;
    process.stderr.write(`rankgate gate ERROR (exit 2): ${redactText(e.message)}\n`);
    process.exit(2);
  }
  // Judge settings are checked here too: an unknown RANKGATE_JUDGE, judge mode or judge config key is exit 2 before
  // any query (a misspelt judge never silently runs as "judge: off"). The judge picked, and why, is said first.
  // RANKGATE_JUDGE is checked even when no judge assertion reads it: a setting that names no judge is never ignored.
  let found: FoundJudge[];
  try {
    resolveJudgeSpec(undefined);
    found = judgeSpecs(context.suite);
  } catch (e) {
    if (!isUserError(e)) throw e;
    process.stderr.write(`rankgate gate ERROR (exit 2): ${e.message}\n`);
    process.exit(2);
  }
  // one progress line per kind of judge and judge picked: the relevance judge ("judge:") and the answer judge
  // ("answer judge:", its own prompt) each say what runs, so an answer judge never reads as "judge: off"
  const said = new Set<string>();
  for (const { spec: j, kind } of found) {
    const line = `rankgate: ${kind === 'answer' ? 'answer judge' : 'judge'}: ${j.mode === 'off' ? 'off' : j.mode === 'similarity' ? 'similarity (HEURISTIC)' : j.mode === 'bedrock' ? `bedrock ${j.model}` : j.model}${kind === 'answer' && (j.mode === 'bedrock' || j.mode === 'model') ? ` (${ANSWER_PROMPT_VERSION})` : ''} (${j.reason})\n`;
    if (!said.has(line)) process.stderr.write(line);
    said.add(line);
  }
  // A configured model judge that cannot run (its provider cannot be built, no API key, a key its endpoint refuses) is
  // a setup error before any row: one line naming the variable to set, exit 2 (src/judge/setup.ts)
  const checked = new Set<string>();
  for (const { spec: j, endpoint } of found) {
    const key = `${j.model}|${endpoint ?? ''}`;
    if (j.mode !== 'model' || checked.has(key)) continue;
    checked.add(key);
    const problem = await judgeSetupProblem(j, j.reason.replace(/^configured \((.*)\)$/, '$1'), { endpoint });
    if (problem) {
      process.stderr.write(`rankgate gate ERROR (exit 2): ${redactText(problem)}\n`);
      process.exit(2);
    }
  }
  const judges = found.map((f) => f.spec);
  const suite = withGraderOfJudge(context.suite, judges);
  const goldens: GoldenQuery[] = [];
  for (const t of context.suite.tests ?? []) {
    const g = GoldenQuerySchema.safeParse(t?.metadata?.golden);
    if (g.success) goldens.push(g.data);
  }
  const existing = context.suite.derivedMetrics ?? [];
  // a judgments file (RANKGATE_JUDGMENTS / the loader's judgments:) gave the tests labels: the `+ labels` means too
  const labelled = (context.suite.tests ?? []).some((t) => Array.isArray(t?.metadata?.labels));
  const added = derivedMetricsFor(goldens, existing, judgeFamilies(judges), labelled);
  // promptfoo imports mathjs (through its TypeScript loader: ~1.4 CPU-s, a third of a small eval) whenever the suite
  // has derivedMetrics, even functions. So when the config declares none, rankgate's own means are computed in
  // afterAll from the final column sums, exactly as promptfoo would after the last row (src/results/derived.ts), and the
  // suite goes on without derivedMetrics. A config with its own derivedMetrics keeps them all in promptfoo's hands.
  if (!existing.length && added.every((m) => compileOwnDerived(m.value))) {
    ownDerived = added;
    return { suite: { ...suite, derivedMetrics: undefined } };
  }
  ownDerived = [];
  return { suite: { ...suite, derivedMetrics: compileDerivedMetrics([...existing, ...added]) } };
}

/** The derived means beforeAll left to afterAll (same module instance: promptfoo loads gate.ts once per eval). */
let ownDerived: DerivedMetric[] = [];

/**
 * promptfoo evaluates every derived metric after every row; a string value is parsed by mathjs each time
 * (`math.evaluate(value, scope)`), ~0.1 ms per metric, so the ~90 per-category means of the demo cost several ms
 * per row. Compiled once here with the same mathjs, a string metric becomes a function over the same scope that
 * gives the same value (and throws where evaluate throws, which promptfoo catches the same way). A metric whose
 * expression does not compile is left as it is, for promptfoo to report.
 */
export function compileDerivedMetrics(metrics: { name: string; value: unknown }[]): { name: string; value: unknown }[] {
  // mathjs's CommonJS build through require: not through promptfoo's ESM loader hooks (the same version, same results)
  const { compile } = createRequire(import.meta.url)('mathjs') as typeof import('mathjs');
  return metrics.map((m) => {
    if (typeof m.value !== 'string') return m;
    let code: EvalFunction;
    try {
      code = compile(m.value) as EvalFunction;
    } catch {
      return m;
    }
    const expr = m.value;
    const value = (scope: Record<string, number>) => code.evaluate(scope);
    Object.defineProperty(value, 'toString', { value: () => expr });
    return { ...m, value };
  });
}

interface FoundJudge {
  spec: JudgeSpec;
  /** `answer` for assertions/judge.ts:answer (the answer judge), `relevance` for the others. */
  kind: 'relevance' | 'answer';
  /** The assertion's config.endpoint (the judge's base URL), when it sets one. */
  endpoint?: string;
}

/** The judge of every judge assertion of the suite (assertions/judge.ts), validated: a UserError names the first bad one. */
function judgeSpecs(suite: Suite): FoundJudge[] {
  const found: { a: AssertionLike; where: string }[] = [];
  if (suite.defaultTest && typeof suite.defaultTest === 'object') (suite.defaultTest.assert ?? []).forEach((a, i) => found.push({ a, where: `defaultTest.assert[${i}]` }));
  (suite.tests ?? []).forEach((t, ti) => (t?.assert ?? []).forEach((a, i) => found.push({ a, where: `tests[${ti}].assert[${i}]` })));
  return found
    .filter(({ a }) => typeof a?.value === 'string' && /assertions\/judge\.ts:\w+$/.test(a.value))
    .map(({ a, where }) => ({
      spec: validateJudgeConfig(a.config, `promptfoo config ${where} (${String(a.value).replace(/^.*assertions\//, 'assertions/')})`),
      kind: /judge\.ts:answer$/.test(String(a.value)) ? ('answer' as const) : ('relevance' as const),
      ...(typeof a.config?.endpoint === 'string' ? { endpoint: a.config.endpoint } : {}),
    }));
}

/** promptfoo's model-graded assertion types (they call a grading provider). */
const MODEL_GRADED = /^(not-)?(llm-rubric|model-graded-closedqa|model-graded-factuality|factuality|g-eval|answer-relevance|context-faithfulness|context-recall|context-relevance|select-best|search-rubric)$/;

/**
 * promptfoo's own model-graded assertions (llm-rubric, …) grade with the same judge as rankgate's: when the suite has
 * one and sets no grader (defaultTest.options.provider), the judge's model becomes the grader. A judge that is off or
 * the similarity heuristic sets nothing (promptfoo then picks its own default, as without rankgate).
 */
function withGraderOfJudge(suite: Suite, judges: readonly JudgeSpec[]): Suite {
  const asserts: AssertionLike[] = [];
  if (suite.defaultTest && typeof suite.defaultTest === 'object') asserts.push(...(suite.defaultTest.assert ?? []));
  for (const t of suite.tests ?? []) asserts.push(...(t?.assert ?? []));
  if (!asserts.some((a) => typeof a?.type === 'string' && MODEL_GRADED.test(a.type))) return suite;
  const dt = (suite.defaultTest && typeof suite.defaultTest === 'object' ? suite.defaultTest : {}) as { options?: { provider?: unknown }; assert?: AssertionLike[] };
  if (dt.options?.provider !== undefined) return suite;
  let j = judges.find((x) => x.mode === 'model' || x.mode === 'bedrock');
  if (!j) {
    try {
      const s = resolveJudgeSpec(undefined);
      if (s.mode === 'model' || s.mode === 'bedrock') j = s;
    } catch {
      /* an unknown RANKGATE_JUDGE was refused above */
    }
  }
  if (!j) return suite;
  const provider = j.mode === 'bedrock' ? `bedrock:converse:${j.model}` : j.model!;
  process.stderr.write(`rankgate: promptfoo's model-graded assertions grade with the judge: ${provider}\n`);
  return { ...suite, defaultTest: { ...dt, options: { ...(dt.options ?? {}), provider } } };
}

/** The judged families the suite's judge assertions will produce: '' (a model judge), 'heuristic_' (similarity); none when off. */
function judgeFamilies(judges: readonly JudgeSpec[]): ('' | 'heuristic_')[] {
  const out = new Set<'' | 'heuristic_'>();
  for (const j of judges) {
    if (j.mode === 'bedrock' || j.mode === 'model') out.add('');
    else if (j.mode === 'similarity') out.add('heuristic_');
  }
  return [...out];
}

interface AfterAllContext {
  prompts: {
    provider?: string;
    label?: string;
    raw?: string;
    metrics?: { namedScores?: Record<string, number>; namedScoresCount?: Record<string, number>; namedScoreWeights?: Record<string, number>; testPassCount?: number; testFailCount?: number; testErrorCount?: number };
  }[];
  results: unknown[];
  suite?: { env?: Record<string, string>; tests?: { metadata?: Record<string, unknown> }[] };
  evalId?: string;
  /** The eval's stored config (promptfoo saves it after this hook: its description titles the eval in the view). */
  config?: { providers?: unknown; env?: Record<string, unknown>; description?: string };
}

/**
 * Each row's metadata once: promptfoo stores a row's own `metadata` as {...testCase.metadata, ...response.metadata},
 * so the harness (the ranking), the diagnostics and the golden query were written twice a row (to its database and to
 * --output). The row's copies go; testCase.metadata and response.metadata, which every reader reads, stay. Runs
 * after the row is graded (the assertions read context.metadata before), on promptfoo's own copy of the metadata.
 */
export async function afterEach(context: { result?: Parameters<typeof dedupeRowMetadata>[0] & Parameters<typeof compactGrading>[0] }): Promise<void> {
  if (!context?.result) return;
  dedupeRowMetadata(context.result);
  compactGrading(context.result);
}

/**
 * The gate over every column (src/gate/verdict.ts, the same code as `rankgate gate`). The detail is printed at
 * once; the verdict with its reasons is printed LAST, from a process 'exit' handler (promptfoo prints its own
 * summary after this hook), which also sets the exit code: 0 pass, 1 floor or significant regression, 2 nothing
 * trustworthy measured / bad input. promptfoo keeps no rows with --no-write: the gate then reads its column sums.
 */
export async function afterAll(context: AfterAllContext): Promise<void> {
  // the config's env: (promptfoo keeps it out of process.env for extensions), e.g. the demo's expansion sweep's floors
  const floorsPath = String(process.env.RANKGATE_GATE_FLOORS ?? context.config?.env?.RANKGATE_GATE_FLOORS ?? context.suite?.env?.RANKGATE_GATE_FLOORS ?? 'config/gate.yaml');
  const gateMode = String(process.env.RANKGATE_GATE ?? context.config?.env?.RANKGATE_GATE ?? context.suite?.env?.RANKGATE_GATE ?? 'on');
  const lines: string[] = [''];
  const final: string[] = [];
  let code: ExitCode = 0;
  // the Node and promptfoo of this eval: in every column's verdict and in the re-gate record
  const toolchain = runningToolchain();
  // rankgate's derived means (see beforeAll), before anything reads the column sums
  if (ownDerived.length) {
    for (const p of context.prompts) {
      const m = p.metrics;
      if (!m?.namedScores) continue;
      applyDerivedMetrics(m.namedScores, ownDerived, (m.testPassCount ?? 0) + (m.testFailCount ?? 0) + (m.testErrorCount ?? 0));
    }
  }
  try {
    // on a pull request (RANKGATE_BASE_REF, or GitHub's pull_request event), the floors, the baseline and the golden
    // expectations are the base branch's (src/gate/base-ref.ts), the pull request's changes to them said LOUD first
    // the base ref from the process's environment only: the promptfoo config's env: is the pull request's own file
    const baseRef = baseRefFrom(undefined, process.env);
    const inputs = gateInputs({ floorsPath, base: baseRef ? refReader(baseRef) : null });
    const floors = inputs.floors;
    lines.push(
      `rankgate gate (floors: ${inputs.base || existsSync(floorsPath) ? inputs.floorsSource : "the built-in floors of the portal's DES-058 spec"}, metric family: ${floors.metric_family ?? 'strict'}${inputs.base ? `; judged by the base branch ${inputs.base.name}` : ''})`,
    );
    const loud = [...inputs.loud];
    const baseNotes = [...inputs.notes];
    const noBase = noBaseNote(undefined, process.env);
    if (noBase) loud.push(noBase);
    // The golden selection the suite was given (contract A), recorded in the column sums when promptfoo kept no rows
    // (--no-write), so that such a results file still says how many queries the run should have had.
    const selectionHint = selectionOfSuite(context.suite?.tests);
    // Only then: rows carry their selection themselves (and `rankgate merge` sums every other named score).
    if (selectionHint && context.results.length === 0)
      for (const p of context.prompts) if (p.metrics?.namedScores) p.metrics.namedScores[SELECTION_SIZE_KEY] = selectionHint.shardSize ?? selectionHint.size;
    const doc = { evalId: context.evalId, results: { prompts: context.prompts, results: context.results }, config: context.config };
    let parsed = parseResultsObject(doc, 'eval results');
    if (inputs.base && parsed.columns[0]) {
      // as rankgate gate: no rows (--no-write) means the expectations cannot be checked against the base: exit 2
      if (!parsed.columns[0].queries.length) throw new UserError(`the golden expectations cannot be checked against the base branch ${inputs.base.name}: promptfoo kept no rows (--no-write); a pull request is gated on its rows`, 2);
      const exp = await expectationsAtBase(inputs.base, parsed.columns[0], { allowPartial: envFlag('RANKGATE_ALLOW_PARTIAL'), baseline: inputs.baseline?.data });
      loud.push(...exp.loud);
      baseNotes.push(...exp.notes);
      const again = readAtBase(exp, {});
      if (again) parsed = parseResultsObject(doc, 'eval results', again);
      if (exp.added.size) parsed = { ...parsed, columns: parsed.columns.map((c) => restrictToBase(c, exp.added)) };
    }
    const baseline = inputs.baseline;
    // The baseline's column: the one whose provider config it records (a sweep's other columns are compared with the
    // first by the shipping criteria); the first when none has it, where the differences are said.
    const bcol = baseline ? baselineColumn(baseline.data, parsed.columns) : null;
    const codes: ExitCode[] = [];
    const verdicts: ColumnVerdict[] = [];
    final.push(...loud);
    const resultsPath = outputPathsOf(process.argv, (context.config as { outputPath?: unknown } | undefined)?.outputPath)[0] ?? null;
    for (const col of parsed.columns) {
      const mine = bcol !== null && col.index === bcol.index;
      // Judged@10 against the first column (a sweep's reference), or, for the first, against what the baseline recorded
      const first = verdicts[0];
      const judgedReference = first
        ? { label: first.column, at_10: first.report.share_judged?.at_10 ?? null }
        : mine && baseline?.data.share_judged
          ? { label: `baseline ${baseline.path}`, at_10: baseline.data.share_judged.at_10 }
          : null;
      const v = gateColumn(col, {
        floors,
        floorsSource: inputs.floorsSource,
        allowPartial: envFlag('RANKGATE_ALLOW_PARTIAL'),
        acceptMismatch: envFlag('RANKGATE_ACCEPT_BASELINE_MISMATCH'),
        baseline: mine ? baseline : null,
        noBaseline:
          baseline && bcol && !mine
            ? `regression check: the baseline ${baseline.path} applies to column '${parsed.columns.find((c) => c.index === bcol.index)?.label}' (${bcol.matched ? 'whose provider config it records' : 'the first: no column has the provider config it records'}); '${col.label}' is compared with '${parsed.columns[0]!.label}' by the shipping criteria`
            : undefined,
        corpus: mine || (!baseline && col.index === 0) ? await runCorpusFor(col, baseline?.data) : undefined,
        selectionHint,
        report: { evalId: context.evalId ?? null },
        toolchain,
        judgedReference,
        resultsPath,
      });
      if (col.index === parsed.columns[0]!.index) v.notes.unshift(...baseNotes);
      // the drift over the baseline's history with this run as the newest point (one line, never the exit code)
      if (mine && baseline && floors.regression) {
        const drift = gateDrift(col, v, { baseline: floors.regression.baseline, ref: inputs.base?.commit, regression: floors.regression });
        if (drift?.headline) v.notes.push(drift.headline);
      }
      codes.push(v.code);
      verdicts.push(v);
      const report = v.report;
      // the measured queries' latencies (an errored row's wait is not one: src/results/summary.ts)
      const lat = col.queries.filter((q) => q.error === null).map((q) => q.latencyMs).filter((x): x is number => x !== null);
      const metrics = context.prompts[col.index]?.metrics;
      if (metrics?.namedScores && lat.length) {
        metrics.namedScores.latency_p50_ms = percentile(lat, 50)!;
        metrics.namedScores.latency_p95_ms = percentile(lat, 95)!;
      }
      // a reranked column: its per-stage means, rerank latency p50/p95 and cost per query (none for a column without)
      if (metrics?.namedScores) Object.assign(metrics.namedScores, rerankColumnMetrics(col.queries));
      const r3 = report.overall_recall_at_3;
      const jr3 = report.overall_judged_recall_at_3;
      const judgedPart = report.judge_stats
        ? ` · ${report.judge_stats.heuristic ? 'HEURISTIC judged' : 'judged'} Success@3 ${jr3 === null ? 'n/a' : jr3.toFixed(4)}, MRR@10 ${report.overall_judged_mrr_at_10?.toFixed(4) ?? 'n/a'}` +
          ` (judge calls ${report.judge_stats.calls}, cache hits ${report.judge_stats.cache_hits}, errors ${report.judge_stats.errors}, ~$${report.judge_stats.estimated_cost_usd.toFixed(4)})`
        : '';
      lines.push(
        `  [${col.label}] ${queriesPart(report)} · Success@3 ${r3 === null ? 'n/a' : r3.toFixed(4)} · MRR@10 ${report.overall_mrr_at_10?.toFixed(4) ?? 'n/a'}${judgedPart} · routing ${report.routing.accuracy?.toFixed(4) ?? 'n/a'}${judgedAtPart(report)} · ${latencyPart(report)}${rerankPart(report.rerank)} · ${report.judge}${expansionSummary(col) ? ` · ${expansionSummary(col)}` : ''}`,
      );
      // the + labels figures beside the strict ones, and what no person reviewed
      const lab = labelledText(report);
      if (lab) lines.push(`    ${lab}`);
      if (v.provisional) lines.push(`    ${v.provisional}`);
      // every column's failure buckets (the rerank buckets tell a reranked column's misses apart)
      const buckets = bucketsPart(report);
      if (buckets) lines.push(`    ${buckets}`);
      const vl = verdictLines(v);
      // RANKGATE_GATE=off: the same verdict, said as a report (the exit code is left to promptfoo)
      if (gateMode === 'off')
        vl[0] = vl[0]!.replace(/^rankgate gate (PASSED|FAILED|ERROR) \(exit (\d)\)/, (_m, _w, c: string) => `rankgate gate: ${c === '0' ? 'floors met' : c === '1' ? 'floors not met' : 'nothing trustworthy measured'} (report only) — the contract would exit ${c} —`);
      final.push(...vl);
    }
    weightUnitMeans(context.prompts); // promptfoo view: derived means read as their value, not "Pass 0.00%" (src/report/view.ts)
    if (parsed.columns.length > 1) {
      const base = parsed.columns[0]!;
      lines.push(`shipping criteria (the blind-test shipping criteria) against '${base.label}':`);
      const reviews = reviewsFromEnv(process.env, inputs.base);
      for (const cand of parsed.columns.slice(1)) {
        const v = shippingCriteria(base, cand, { reviews, resultsPath: outputPathsOf(process.argv, (context.config as { outputPath?: unknown } | undefined)?.outputPath)[0] });
        lines.push(`  [${cand.label}] ship: ${v.ship ? 'yes' : 'no'} (${v.queries} queries)`);
        v.criteria.forEach((c, i) => lines.push(`    ${c.passed === null ? '–' : c.passed ? '✓' : '✗'} ${i < 5 ? `${i + 1}. ` : ''}${c.name}: ${c.detail}`));
      }
    }
    code = combinedCode(codes);
    // promptfoo view: the eval's title (its description, saved after this hook) starts with the verdict, and each
    // column's header its own (the prompt label under the chips; the rows keep theirs, rankgate reads neither)
    if (context.config) context.config.description = describeWithVerdict(context.config.description, verdicts, code, gateMode === 'off', verdicts.length === 1 ? provisionalShort(verdicts[0]!) : '');
    parsed.columns.forEach((c, i) => {
      const p = context.prompts[c.index];
      if (p) p.label = labelWithVerdict(p.label ?? p.raw, verdicts[i]!, gateMode === 'off', viewExtra(verdicts[i]!));
    });
  } catch (e) {
    if (!isUserError(e)) throw e;
    code = 2;
    final.push(`rankgate gate ERROR (exit 2): ${safeTerminalLines(e.message)}`);
    if (context.config) context.config.description = describeWithVerdict(context.config.description, e.message, 2, gateMode === 'off');
  }
  console.error(redactText(lines.join('\n')));
  // promptfoo saves the eval's config after this hook, into its database and the --output file: the providers'
  // config keys that hold credentials (a databaseUrl's password, an apiKey) are redacted in place first. The
  // providers were built long ago from their own copy, so nothing they do changes.
  const providers = context.config?.providers;
  if (Array.isArray(providers)) {
    providers.forEach((p, i) => {
      if (p && typeof p === 'object' && 'config' in p && (p as { config?: unknown }).config) (providers[i] as { config: unknown }).config = redactConfig((p as { config: unknown }).config);
    });
  }
  if (gateMode === 'off') final.push('rankgate gate: report only (RANKGATE_GATE=off): the exit code is left to promptfoo');
  // Before promptfoo writes its output: the verdict and the per-query scores to re-gate from (src/results/regate.ts).
  const hookAt = Date.now();
  const outputs = outputPathsOf(process.argv, (context.config as { outputPath?: unknown } | undefined)?.outputPath);
  let regatePath = context.results.length ? regatePathFor(outputs) : null;
  if (regatePath) {
    try {
      // written: false when promptfoo keeps no record of the eval (--no-write): never a baseline (src/results/nowrite.ts)
      const written = promptfooWrites(process.argv, (context.config as { commandLineOptions?: unknown } | undefined)?.commandLineOptions);
      // the run id, row count and digest of the rows: the gate refuses rows of other runs or edited rows (src/results/record.ts)
      const { rows, digest } = digestRows(context.results);
      const header = { evalId: context.evalId ?? null, timestamp: new Date(hookAt).toISOString(), output: outputs[0] ?? null, outputs, code, verdict: final, toolchain, ...(written ? {} : { written }), runId: currentRunId(), rows, digest };
      // one record under each results file's full name (-o a.json a.jsonl: both), so neither is another eval's
      const paths = new Set([regatePath, ...outputs.filter((o) => /\.jsonl?$/i.test(o)).map((o) => recordPathOf(o)!).filter(Boolean)]);
      for (const p of paths) writeRegateFile(p, header, context.results);
    } catch (e) {
      console.error(`rankgate: could not write the re-gate record ${regatePath} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      regatePath = null;
    }
  }
  process.once('exit', (pfCode: number) => {
    let out = code;
    // promptfoo writes its output with the process's umask (0666 under umask 000) and quotes what rows and graders
    // said: never writable by others, and redacted (a judge answer quoting a key), whichever command ran the eval
    for (const o of outputs) if (writtenSince(o, hookAt)) tightenOutput(o);
    if (regatePath) tightenOutput(regatePath, false);
    const unwritten = outputs.filter((o) => !writtenSince(o, hookAt));
    if (regatePath && unwritten.length)
      final.push(
        `rankgate: promptfoo did not write ${unwritten.join(', ')}; this eval's verdict and per-query scores are in ${regatePath}: re-gate with \`npx rankgate gate ${regatePath}\``,
      );
    // promptfoo's own failure after this hook (not its failed-rows code 100, which the gate replaces) is not a pass.
    if (out === 0 && pfCode !== 0 && pfCode !== 100) {
      out = 2;
      final.push(`rankgate gate ERROR (exit 2): promptfoo itself exited with code ${pfCode} after the gate (see its output above)`);
    }
    process.stderr.write(redactText('\n' + final.join('\n') + '\n'));
    if (gateMode !== 'off') process.exitCode = out;
  });
}

/**
 * What a column's header says beside its verdict in promptfoo's view (none of it a named score, which the view would
 * colour as a pass rate): the reranker's gain, Judged@10 (a lower bound said so), the provisional share.
 */
function viewExtra(v: ColumnVerdict): string {
  const r = v.report;
  const j = r.share_judged?.at_10;
  const judged = typeof j === 'number' ? `Judged@10 ${j.toFixed(2)}${r.judged_gap ? ` (${r.judged_gap.gap_pts.toFixed(1)} pts below '${r.judged_gap.reference}': strict figures a lower bound)` : ''}` : '';
  return [judged, provisionalShort(v), rerankGainText(r.rerank)].filter(Boolean).join(' · ');
}

/** "provisional 54/77 bootstrap-only, backlog 380" (the view's header; the verdict has the full line), or ''. */
function provisionalShort(v: ColumnVerdict): string {
  const p = v.report.provisional;
  if (!p || !v.provisional) return '';
  return [p.bootstrap_only ? `provisional ${p.bootstrap_only}/${p.gated} bootstrap-only` : '', p.backlog ? `review backlog ${p.backlog.pending}` : ''].filter(Boolean).join(', ');
}

/** Results files larger than this are not re-read to redact them at exit (the rows were redacted as they were made). */
const REDACT_AT_EXIT_MAX_BYTES = 256 * 1024 * 1024;

/** An output file: group/other write bits off whatever the umask (0666 -> 0644, a private 0600 stays), redacted. */
function tightenOutput(path: string, redact = true): void {
  try {
    const st = statSync(path);
    if (!st.isFile()) return;
    if (st.mode & 0o133) chmodSync(path, st.mode & 0o644);
    if (redact && st.size <= REDACT_AT_EXIT_MAX_BYTES) redactFile(path);
  } catch (e) {
    process.stderr.write(`rankgate: could not tighten ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})\n`);
  }
}

/** Did promptfoo write this output file after the hook ran (a file, modified since)? */
function writtenSince(path: string, since: number): boolean {
  try {
    const st = statSync(path);
    return st.isFile() && st.mtimeMs >= since - 2000;
  } catch {
    return false;
  }
}

function selectionOfSuite(tests: { metadata?: Record<string, unknown> }[] | undefined): SelectionInfo | null {
  for (const t of tests ?? []) {
    const s = t?.metadata?.selection as Partial<SelectionInfo> | undefined;
    if (s && typeof s === 'object' && typeof s.size === 'number') return { id: typeof s.id === 'string' ? s.id : null, size: s.size, ...(typeof s.shardSize === 'number' ? { shardSize: s.shardSize } : {}) };
  }
  return null;
}
