/**
 * The gate: floors from config/gate.yaml applied to a DES-058 report. Used by `rankgate gate` and by the
 * afterAll hook (assertions/gate.ts), so both say the same thing. A single query failing its own
 * assertions never fails the gate; only the floors do.
 *
 * config/gate.yaml:
 *   overall:     { <metric>: <min>, ... }            metrics: recall_at_3, mrr_at_10, routing_accuracy,
 *   categories:  { <category>: { <metric>: <min> } }  and any key of report.metrics (ndcg_at_10, recall_at_10, ...)
 * A floor on a category (or metric) that the results do not have is reported as not applicable and passes.
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
  })
  .strict();
export type Floors = z.infer<typeof FloorsSchema>;

/** DES-058's gate: overall Recall@3 >= 0.80 and technique_boundary routing accuracy = 1.0. */
export const DEFAULT_FLOORS: Floors = { overall: { recall_at_3: 0.8 }, categories: { technique_boundary: { routing_accuracy: 1 } } };

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
    throw new UserError(`${path}: ${i.path.join('.') || '(root)'}: ${i.message} (expected overall/categories maps of metric: floor in 0..1)`);
  }
  return r.data;
}

function overallValue(report: Des058Report, metric: string): number | null | undefined {
  if (metric === 'recall_at_3') return report.overall_recall_at_3;
  if (metric === 'mrr_at_10' || metric === 'mrr') return report.overall_mrr_at_10;
  if (metric === 'routing_accuracy') return report.routing.accuracy;
  return report.metrics[metric];
}

/** Apply the floors; returns the checks and sets report.gate / report.gate_passed. */
export function applyGate(report: Des058Report, floors: Floors): GateCheck[] {
  const checks: GateCheck[] = [];
  for (const [metric, min] of Object.entries(floors.overall)) {
    const v = overallValue(report, metric);
    const name = `overall ${metric} >= ${min}`;
    if (v === undefined || v === null) checks.push({ name, scope: 'overall', metric, value: null, min, passed: true, note: 'not applicable: no query in the results measures it' });
    else checks.push({ name, scope: 'overall', metric, value: v, min, passed: v >= min - 1e-12 });
  }
  for (const [cat, ms] of Object.entries(floors.categories)) {
    const c = report.categories[cat] as unknown as Record<string, number | undefined> | undefined;
    for (const [metric, min] of Object.entries(ms)) {
      const name = `${cat} ${metric} >= ${min}`;
      const v = c?.[metric];
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
  if (!failed.length) return `rankgate gate PASSED for '${report.column}' (${report.gate.length} floors)`;
  return [
    `rankgate gate FAILED for '${report.column}':`,
    ...failed.map((c) => `  ${c.scope} ${c.metric} = ${c.value?.toFixed(4)} is below the floor ${c.min}`),
  ].join('\n');
}
