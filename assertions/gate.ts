/**
 * promptfoo extension hooks (thin; rules in src/report):
 *
 *   extensions:
 *     - file://assertions/gate.ts:beforeAll   # adds derived means per category (and conditional ones) for the tests present,
 *                                             # and the judged means (avg_judged_*, or avg_heuristic_judged_*) when a
 *                                             # judge assertion (assertions/judge.ts:judged) runs with the judge on
 *     - file://assertions/gate.ts:afterAll    # applies the floors of config/gate.yaml to every column
 *
 * afterAll prints the per-column summary and, when a floor fails, a clear message and
 * process.exitCode = 1, so a bare `npx promptfoo eval` fails CI on the gate. A single query failing its own
 * assertions does not: set PROMPTFOO_PASS_RATE_THRESHOLD=0 (promptfooconfig.yaml `env:`) so promptfoo's own
 * exit code 100 for failed rows stays off and the floors decide. It also records latency p50/p95 per column
 * as namedScores (latency_p50_ms, latency_p95_ms).
 *
 * Environment: RANKGATE_GATE_FLOORS (default config/gate.yaml; built-in DES-058 floors when absent),
 * RANKGATE_GATE=off (report only, never set the exit code).
 */
import { existsSync } from 'node:fs';
import { compile, type EvalFunction } from 'mathjs';
import { GoldenQuerySchema, type GoldenQuery } from '../src/golden/schema.ts';
import { resolveJudgeMode } from '../src/judge/judge.ts';
import { derivedMetricsFor } from '../src/report/derived.ts';
import { DEFAULT_FLOORS, applyGate, gateMessage, loadFloors } from '../src/report/gate.ts';
import { buildReport, percentile } from '../src/report/report.ts';
import { parseResultsObject } from '../src/report/results.ts';
import { shippingCriteria } from '../src/report/shipping.ts';
import { weightUnitMeans } from '../src/report/view.ts';

interface AssertionLike {
  type?: string;
  value?: unknown;
  config?: Record<string, unknown>;
}

interface Suite {
  tests?: { metadata?: Record<string, unknown>; assert?: AssertionLike[] }[];
  defaultTest?: { assert?: AssertionLike[] } | string;
  derivedMetrics?: { name: string; value: unknown }[];
  [k: string]: unknown;
}

export async function beforeAll(context: { suite: Suite }): Promise<{ suite: Suite }> {
  const goldens: GoldenQuery[] = [];
  for (const t of context.suite.tests ?? []) {
    const g = GoldenQuerySchema.safeParse(t?.metadata?.golden);
    if (g.success) goldens.push(g.data);
  }
  const existing = context.suite.derivedMetrics ?? [];
  const added = derivedMetricsFor(goldens, existing, judgeFamilies(context.suite));
  return { suite: { ...context.suite, derivedMetrics: compileDerivedMetrics([...existing, ...added]) } };
}

/**
 * promptfoo evaluates every derived metric after every row; a string value is parsed by mathjs each time
 * (`math.evaluate(value, scope)`), ~0.1 ms per metric, so the ~90 per-category means of the demo cost several ms
 * per row. Compiled once here with the same mathjs, a string metric becomes a function over the same scope that
 * gives the same value (and throws where evaluate throws, which promptfoo catches the same way). A metric whose
 * expression does not compile is left as it is, for promptfoo to report.
 */
export function compileDerivedMetrics(metrics: { name: string; value: unknown }[]): { name: string; value: unknown }[] {
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

/** The judged families the suite's judge assertions will produce: '' (bedrock), 'heuristic_' (similarity); none when off. */
function judgeFamilies(suite: Suite): ('' | 'heuristic_')[] {
  const asserts: AssertionLike[] = [];
  if (suite.defaultTest && typeof suite.defaultTest === 'object') asserts.push(...(suite.defaultTest.assert ?? []));
  for (const t of suite.tests ?? []) asserts.push(...(t?.assert ?? []));
  const out = new Set<'' | 'heuristic_'>();
  for (const a of asserts) {
    if (typeof a?.value !== 'string' || !/assertions\/judge\.ts:judged$/.test(a.value)) continue;
    let mode: string;
    try {
      mode = resolveJudgeMode(typeof a.config?.mode === 'string' ? a.config.mode : undefined);
    } catch {
      continue; // the assertion itself reports a bad mode on every row
    }
    if (mode === 'bedrock') out.add('');
    else if (mode === 'similarity') out.add('heuristic_');
  }
  return [...out];
}

interface AfterAllContext {
  prompts: { provider?: string; label?: string; metrics?: { namedScores?: Record<string, number>; namedScoresCount?: Record<string, number>; namedScoreWeights?: Record<string, number> } }[];
  results: unknown[];
  suite?: { env?: Record<string, string> };
  evalId?: string;
  config?: { providers?: unknown; env?: Record<string, unknown> };
}

export async function afterAll(context: AfterAllContext): Promise<void> {
  const floorsPath = process.env.RANKGATE_GATE_FLOORS ?? 'config/gate.yaml';
  const floors = existsSync(floorsPath) ? loadFloors(floorsPath) : DEFAULT_FLOORS;
  const parsed = parseResultsObject(
    { evalId: context.evalId, results: { prompts: context.prompts, results: context.results }, config: context.config },
    'eval results',
  );
  const gateMode = String(process.env.RANKGATE_GATE ?? context.config?.env?.RANKGATE_GATE ?? context.suite?.env?.RANKGATE_GATE ?? 'on');
  let failed = false;
  const lines: string[] = ['', `rankgate gate (floors: ${existsSync(floorsPath) ? floorsPath : 'built-in DES-058'}, metric family: ${floors.metric_family ?? 'strict'})`];
  for (const col of parsed.columns) {
    const report = buildReport(col, { evalId: context.evalId ?? null });
    applyGate(report, floors);
    const lat = col.queries.map((q) => q.latencyMs).filter((x): x is number => x !== null);
    const metrics = context.prompts[col.index]?.metrics;
    if (metrics?.namedScores && lat.length) {
      metrics.namedScores.latency_p50_ms = percentile(lat, 50)!;
      metrics.namedScores.latency_p95_ms = percentile(lat, 95)!;
    }
    const r3 = report.overall_recall_at_3;
    const jr3 = report.overall_judged_recall_at_3;
    const judgedPart = report.judge_stats
      ? ` · ${report.judge_stats.heuristic ? 'HEURISTIC judged' : 'judged'} R@3 ${jr3 === null ? 'n/a' : jr3.toFixed(4)}, MRR@10 ${report.overall_judged_mrr_at_10?.toFixed(4) ?? 'n/a'}` +
        ` (judge calls ${report.judge_stats.calls}, cache hits ${report.judge_stats.cache_hits}, errors ${report.judge_stats.errors}, ~$${report.judge_stats.estimated_cost_usd.toFixed(4)})`
      : '';
    lines.push(
      `  [${col.label}] ${report.total_queries} queries · Recall@3 ${r3 === null ? 'n/a' : r3.toFixed(4)} · MRR@10 ${report.overall_mrr_at_10?.toFixed(4) ?? 'n/a'}${judgedPart} · routing ${report.routing.accuracy?.toFixed(4) ?? 'n/a'} · p95 ${report.latency_ms.p95 ?? 'n/a'} ms · ${report.judge} · ${gateMode === 'off' ? 'floors ' + (report.gate_passed ? 'met' : 'not met') + ' (report only)' : 'gate ' + (report.gate_passed ? 'PASSED' : 'FAILED')}`,
    );
    if (!report.gate_passed && gateMode !== 'off') {
      failed = true;
      lines.push(gateMessage(report).replace(/^/gm, '  '));
    }
  }
  weightUnitMeans(context.prompts); // promptfoo view: derived means read as their value, not "Pass 0.00%" (src/report/view.ts)
  if (parsed.columns.length > 1) {
    const base = parsed.columns[0]!;
    lines.push(`shipping criteria (seed 002) against '${base.label}':`);
    for (const cand of parsed.columns.slice(1)) {
      const v = shippingCriteria(base, cand);
      lines.push(`  [${cand.label}] ship: ${v.ship ? 'yes' : 'no'} · ${v.criteria[0]!.detail} · ${v.criteria[1]!.detail}`);
    }
  }
  console.error(lines.join('\n'));
  if (failed && gateMode !== 'off') {
    console.error('rankgate: the search-quality gate FAILED (exit code 1). Floors: ' + floorsPath);
    process.exitCode = 1;
  }
}
