/**
 * The gate: floors from config/gate.yaml applied to a DES-058 report. Used by `rankgate gate` and by the
 * afterAll hook (assertions/gate.ts), so both say the same thing. A single query failing its own
 * assertions never fails the gate; only the floors do.
 *
 * config/gate.yaml:
 *   overall:     { <metric>: <min>, ... }            metrics: recall_at_3, mrr_at_10, routing_accuracy,
 *   categories:  { <category>: { <metric>: <min> } }  and any key of report.metrics (ndcg_at_10, recall_at_10, ...)
 * A floor on a category (or metric) that the results do not have is reported as not applicable and passes.
 *
 *   metric_family: strict | judged   (default strict)
 * `judged` applies the same floors to the judged family (issue 7: recall_at_3 -> overall_judged_recall_at_3,
 * mrr_at_10 -> overall_judged_mrr_at_10, ndcg_at_10 / recall_at_{1,5,10} -> judged_*, per category likewise;
 * routing_accuracy is not judged and stays as is). A judged gate FAILS when the results carry no judged
 * scores (judge off) and when any judge error occurred: a broken judge is never a pass. With the strict
 * family, judge errors are still reported (a passing, informational check).
 */
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { z } from 'zod';
import { UserError } from '../errors.ts';
import type { Des058Report, GateCheck } from './report.ts';

const Floor = z.number().min(0).max(1);
export const FloorsSchema = z
  .object({
    overall: z.record(z.string(), Floor).default({}),
    categories: z.record(z.string(), z.record(z.string(), Floor)).default({}),
    metric_family: z.enum(['strict', 'judged']).default('strict'),
  })
  .strict();
export type Floors = z.infer<typeof FloorsSchema>;

/** DES-058's gate: overall Recall@3 >= 0.80 and technique_boundary routing accuracy = 1.0. */
export const DEFAULT_FLOORS: Floors = {
  overall: { recall_at_3: 0.8 },
  categories: { technique_boundary: { routing_accuracy: 1 } },
  metric_family: 'strict',
};

export function loadFloors(path: string): Floors {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the gate floors (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = yaml.load(text) ?? {};
  } catch (e) {
    throw new UserError(`${path}: not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  const r = FloorsSchema.safeParse(doc);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new UserError(`${path}: ${i.path.join('.') || '(root)'}: ${i.message} (expected overall/categories maps of metric: floor in 0..1, and optional metric_family: strict | judged)`);
  }
  return r.data;
}

function overallValue(report: Des058Report, metric: string, family: Floors['metric_family']): number | null | undefined {
  if (family === 'judged' && metric !== 'routing_accuracy') {
    const k = metric === 'mrr_at_10' || metric === 'mrr' ? 'judged_mrr' : metric.startsWith('judged_') ? metric : `judged_${metric}`;
    return report.judged_metrics?.[k];
  }
  if (metric === 'recall_at_3') return report.overall_recall_at_3;
  if (metric === 'mrr_at_10' || metric === 'mrr') return report.overall_mrr_at_10;
  if (metric === 'routing_accuracy') return report.routing.accuracy;
  return report.metrics[metric];
}

/** Apply the floors; returns the checks and sets report.gate / report.gate_passed. */
export function applyGate(report: Des058Report, floors: Floors): GateCheck[] {
  const checks: GateCheck[] = [];
  const family = floors.metric_family ?? 'strict';
  const js = report.judge_stats ?? null;
  if (family === 'judged') {
    if (!js) {
      checks.push({
        name: 'judged scores present',
        scope: 'judge',
        metric: 'n_judged',
        value: 0,
        min: 1,
        passed: false,
        note: `metric_family: judged, but the results have no judged scores (${report.judge}); run the eval with the judge on (RANKGATE_JUDGE=bedrock with AWS configured, or similarity) or set metric_family: strict`,
      });
    } else {
      checks.push({
        name: 'judge errors = 0',
        scope: 'judge',
        metric: 'judge_errors',
        value: js.errors,
        min: 0,
        passed: js.errors === 0,
        ...(js.errors ? { note: `${js.errors} judge error(s): results the judge could not grade; a judged gate never passes on a broken judge` } : {}),
      });
    }
  } else if (js && js.errors > 0) {
    checks.push({ name: 'judge errors (reported)', scope: 'judge', metric: 'judge_errors', value: js.errors, min: 0, passed: true, note: `${js.errors} judge error(s) in the judged metrics (not gated: metric_family is strict)` });
  } else if (!js && report.judge.startsWith('judge: FAILED')) {
    checks.push({ name: 'judge errors (reported)', scope: 'judge', metric: 'judge_errors', value: null, min: 0, passed: true, note: `${report.judge} (not gated: metric_family is strict)` });
  }
  const fam = family === 'judged' ? ' (judged)' : '';
  for (const [metric, min] of Object.entries(floors.overall)) {
    const v = overallValue(report, metric, family);
    const name = `overall ${metric}${fam} >= ${min}`;
    if (v === undefined || v === null) checks.push({ name, scope: 'overall', metric, value: null, min, passed: true, note: 'not applicable: no query in the results measures it' });
    else checks.push({ name, scope: 'overall', metric, value: v, min, passed: v >= min - 1e-12 });
  }
  for (const [cat, ms] of Object.entries(floors.categories)) {
    const c = report.categories[cat] as unknown as Record<string, number | undefined> | undefined;
    for (const [metric, min] of Object.entries(ms)) {
      const name = `${cat} ${metric}${fam} >= ${min}`;
      const key =
        family === 'judged' && metric !== 'routing_accuracy' ? (metric === 'mrr' ? 'judged_mrr_at_10' : metric.startsWith('judged_') ? metric : `judged_${metric}`) : metric;
      const v = c?.[key];
      if (!c) checks.push({ name, scope: cat, metric, value: null, min, passed: true, note: `not applicable: no ${cat} queries in the results` });
      else if (v === undefined) checks.push({ name, scope: cat, metric, value: null, min, passed: true, note: `not applicable: ${cat} has no ${metric}` });
      else checks.push({ name, scope: cat, metric, value: v, min, passed: v >= min - 1e-12 });
    }
  }
  report.gate = checks;
  report.gate_passed = checks.every((c) => c.passed);
  return checks;
}

/** One line per failed floor, for the CLI and the hook. */
export function gateMessage(report: Des058Report): string {
  const failed = report.gate.filter((c) => !c.passed);
  const notes = report.gate.filter((c) => c.passed && c.scope === 'judge' && c.note).map((c) => `  note: ${c.note}`);
  if (!failed.length) return [`rankgate gate PASSED for '${report.column}' (${report.gate.length} floors)`, ...notes].join('\n');
  return [
    `rankgate gate FAILED for '${report.column}':`,
    ...notes,
    ...failed.map((c) => (c.scope === 'judge' ? `  judge: ${c.note}` : `  ${c.scope} ${c.metric}${c.name.includes('(judged)') ? ' (judged)' : ''} = ${c.value?.toFixed(4)} is below the floor ${c.min}`)),
  ].join('\n');
}
