/**
 * The gate: floors from config/gate.yaml applied to a DES-058 report. Used by `rankgate gate` and by the
 * afterAll hook (assertions/gate.ts), so both say the same thing. A single query failing its own
 * assertions never fails the gate; only the floors do.
 *
 * config/gate.yaml (every key checked; an unknown key or metric is one error line with a did-you-mean):
 *   overall:     { <metric>: <min>, ... }            OVERALL_METRICS
 *   categories:  { <category>: { <metric>: <min> } }  CATEGORY_METRICS
 *   max_error_rate, allow_partial, regression: { baseline, max_drop, alpha, metrics, accept_mismatch, max_drift },
 *   min_reviewed_share (exit 2 under it: docs/judgments.md "Provisional evidence")
 * A floor that nothing in the results measures (a category absent from the run, a metric no query has)
 * cannot be checked: it is "unmeasured" and the gate exits 2, unless allow_partial accepts it (then it is
 * reported as NOT CHECKED). It never passes silently.
 *
 *   metric_family: strict | judged   (default strict)
 * `judged` applies the same floors to the judged family (issue 7: recall_at_3 -> overall_judged_recall_at_3,
 * mrr_at_10 -> overall_judged_mrr_at_10, ndcg_at_10 / recall_at_{1,5,10} -> judged_*, per category likewise;
 * routing_accuracy is not judged and stays as is). A judged gate FAILS when the results carry no judged
 * scores (judge off) and when any judge error occurred: a broken judge is never a pass. With the strict
 * family, judge errors are still reported (a passing, informational check).
 */
import { UserError } from '../errors.ts';
import { loadYaml } from '../util/yaml.ts';
import { didYouMean, unknownKeyMessage } from '../util/suggest.ts';
import { RANK_KEYS, categoryKey } from '../results/score.ts';
import type { Des058Report, GateCheck } from '../results/summary.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { checkFormatVersion, type FormatSpec } from '../util/format-version.ts';

export interface RegressionConfig {
  /** Baseline file; the regression check is off while it does not exist. */
  baseline: string;
  /** A drop larger than this (in the metric's 0..1 units, like the floors: 0.02 = 2 points), if significant, fails. */
  max_drop: number;
  alpha: number;
  metrics: string[];
  /** Compare even against a baseline of another corpus or golden selection (default false: exit 2). */
  accept_mismatch: boolean;
  /**
   * A cumulative drop over the history window (src/history/drift.ts) beyond this (0..1 units, like max_drop), confirmed
   * by the paired test, fails the scheduled run (`rankgate history append`); never a pull request. Unset: drift is said only.
   */
  max_drift?: number;
}

export interface Floors {
  overall: Record<string, number>;
  categories: Record<string, Record<string, number>>;
  metric_family: 'strict' | 'judged';
  /** Share of errored queries (0..1) under which the gate still measures; unset: any errored query is exit 2. */
  max_error_rate?: number;
  /** Accept partial runs (fewer queries than the golden selection, floors nothing measured): default false. */
  allow_partial?: boolean;
  regression?: RegressionConfig;
  /**
   * How far the judge must be trusted before judged floors (metric_family: judged) and answer_score floors count:
   * the agreement file `rankgate judge agreement --out FILE` wrote, and the minimum weighted kappa. loadFloors reads
   * the file's kappa (null with `problem` when it cannot); below the minimum the gate is exit 2.
   */
  judge?: { agreement: string; min_kappa: number; kappa?: number | null; problem?: string };
  /**
   * The least share of the gated (measured) queries whose golden entry a person reviewed: not `source: bootstrap`, or
   * every relevant reference of it chair-labelled in the judgments file (docs/judgments.md "Provisional evidence").
   * Under it the gate exits 2: a quality-of-evidence condition (nothing trustworthy measured yet), not a quality failure.
   */
  min_reviewed_share?: number;
}

/** Metrics a floor may name overall (report metrics; `judged` family maps them to the judged ones). */
export const OVERALL_METRICS = [
  'recall_at_3',
  'mrr_at_10',
  'mrr',
  'routing_accuracy',
  ...RANK_KEYS.filter((k) => k !== 'recall_at_3' && k !== 'mrr'),
  'not_found_rate',
  'answerable_at_10',
  'answer_score',
] as const;
/** Floors on a 1-5 grade instead of a 0..1 share. */
const GRADE_METRICS: readonly string[] = ['answer_score'];
/** Metrics a floor may name per category (src/results/summary.ts CategoryReport). */
export const CATEGORY_METRICS = ['recall_at_3', 'mrr_at_10', 'ndcg_at_10', 'recall_at_10', 'routing_accuracy', 'answer_score'] as const;
/** Metrics the regression check can compare per query (they are in the baseline). */
export const REGRESSION_METRICS = ['recall_at_3', 'mrr_at_10', 'ndcg_at_10', 'trec_recall_at_10', 'routing_accuracy'] as const;
const TOP_KEYS = ['version', 'overall', 'categories', 'metric_family', 'max_error_rate', 'allow_partial', 'regression', 'judge', 'min_reviewed_share'] as const;

/** gate.yaml's format (docs/compatibility.md): `version: 1`, or no version (files written before the key existed). */
export const FLOORS_FORMAT: FormatSpec = { what: 'gate floors', field: 'version', current: 1, absentIs: 1 };
const JUDGE_KEYS = ['agreement', 'min_kappa'] as const;
const REGRESSION_KEYS = ['baseline', 'max_drop', 'alpha', 'metrics', 'accept_mismatch', 'max_drift'] as const;

export const DEFAULT_REGRESSION: RegressionConfig = {
  baseline: 'data/eval/baseline.json',
  max_drop: 0.02,
  alpha: 0.05,
  metrics: ['recall_at_3', 'mrr_at_10'],
  accept_mismatch: false,
};

/** DES-058's gate: overall Recall@3 >= 0.80 and technique_boundary routing accuracy = 1.0. */
export const DEFAULT_FLOORS: Floors = {
  overall: { recall_at_3: 0.8 },
  categories: { technique_boundary: { routing_accuracy: 1 } },
  metric_family: 'strict',
};

const isMap = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const show = (x: unknown) => (typeof x === 'string' ? `'${x}'` : JSON.stringify(x));

function floorValue(file: string, where: string, v: unknown): number {
  if (GRADE_METRICS.includes(where.replace(/^.*\./, ''))) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 1 || v > 5) throw new UserError(`${file}: ${where}: expected a floor between 1 and 5 (the answer judge's grade), got ${show(v)}`);
    return v;
  }
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) throw new UserError(`${file}: ${where}: expected a floor between 0 and 1, got ${show(v)}`);
  return v;
}

function metricKey(file: string, where: string, key: string, valid: readonly string[], family: string): string {
  const k = family === 'judged' ? key.replace(/^judged_/, '') : key;
  if (!valid.includes(k)) throw new UserError(`${file}: ${where}: unknown metric '${key}'${didYouMean(key, valid)} (valid: ${valid.join(', ')})`);
  return key;
}

/** Validate a parsed gate.yaml document (every key known, every floor in 0..1); throws one UserError line. */
export function parseFloors(doc: unknown, file: string): Floors {
  if (doc === null || doc === undefined) throw new UserError(`${file}: empty gate configuration; expected at least one floor under overall: or categories: (e.g. overall: { recall_at_3: 0.80 })`);
  if (!isMap(doc)) throw new UserError(`${file}: expected a map with ${TOP_KEYS.join(', ')}, got ${show(doc)}`);
  checkFormatVersion(file, doc.version, FLOORS_FORMAT);
  for (const k of Object.keys(doc)) if (!(TOP_KEYS as readonly string[]).includes(k)) throw new UserError(unknownKeyMessage(file, '', k, TOP_KEYS));
  const family = doc.metric_family ?? 'strict';
  if (family !== 'strict' && family !== 'judged') throw new UserError(`${file}: metric_family: expected strict or judged, got ${show(family)}${didYouMean(String(family), ['strict', 'judged'])}`);
  const out: Floors = { overall: {}, categories: {}, metric_family: family };
  if (doc.overall !== undefined && doc.overall !== null) {
    if (!isMap(doc.overall)) throw new UserError(`${file}: overall: expected a map of metric: floor, got ${show(doc.overall)}`);
    for (const [k, v] of Object.entries(doc.overall)) out.overall[metricKey(file, 'overall', k, OVERALL_METRICS, family)] = floorValue(file, `overall.${k}`, v);
  }
  if (doc.categories !== undefined && doc.categories !== null) {
    if (!isMap(doc.categories)) throw new UserError(`${file}: categories: expected a map of category: { metric: floor }, got ${show(doc.categories)}`);
    for (const [cat, ms] of Object.entries(doc.categories)) {
      if (!isMap(ms)) throw new UserError(`${file}: categories.${cat}: expected a map of metric: floor (e.g. { routing_accuracy: 1.0 }), got ${show(ms)}`);
      const m: Record<string, number> = {};
      for (const [k, v] of Object.entries(ms)) m[metricKey(file, `categories.${cat}`, k, CATEGORY_METRICS, family)] = floorValue(file, `categories.${cat}.${k}`, v);
      out.categories[cat] = m;
    }
  }
  if (doc.max_error_rate !== undefined) {
    const v = doc.max_error_rate;
    if (typeof v !== 'number' || !(v >= 0 && v < 1)) throw new UserError(`${file}: max_error_rate: expected a share of queries in [0, 1), got ${show(v)}`);
    out.max_error_rate = v;
  }
  if (doc.min_reviewed_share !== undefined) {
    const v = doc.min_reviewed_share;
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new UserError(`${file}: min_reviewed_share: expected a share of the gated queries in [0, 1] (e.g. 0.8: at least 80% reviewed, not bootstrap-only), got ${show(v)}`);
    out.min_reviewed_share = v;
  }
  if (doc.allow_partial !== undefined) {
    if (typeof doc.allow_partial !== 'boolean') throw new UserError(`${file}: allow_partial: expected true or false, got ${show(doc.allow_partial)}`);
    out.allow_partial = doc.allow_partial;
  }
  if (doc.regression !== undefined && doc.regression !== null) {
    const r = doc.regression;
    if (!isMap(r)) throw new UserError(`${file}: regression: expected a map with ${REGRESSION_KEYS.join(', ')}, got ${show(r)}`);
    for (const k of Object.keys(r)) if (!(REGRESSION_KEYS as readonly string[]).includes(k)) throw new UserError(unknownKeyMessage(file, 'regression', k, REGRESSION_KEYS));
    const reg: RegressionConfig = { ...DEFAULT_REGRESSION, metrics: [...DEFAULT_REGRESSION.metrics] };
    if (r.baseline !== undefined) {
      if (typeof r.baseline !== 'string' || !r.baseline) throw new UserError(`${file}: regression.baseline: expected a file path, got ${show(r.baseline)}`);
      reg.baseline = r.baseline;
    }
    if (r.max_drop !== undefined) {
      if (typeof r.max_drop !== 'number' || !(r.max_drop >= 0 && r.max_drop < 1))
        throw new UserError(`${file}: regression.max_drop: expected a drop in the metric's 0..1 units like the floors (0.02 = 2 points), got ${show(r.max_drop)}`);
      reg.max_drop = r.max_drop;
    }
    if (r.alpha !== undefined) {
      if (typeof r.alpha !== 'number' || !(r.alpha > 0 && r.alpha < 1)) throw new UserError(`${file}: regression.alpha: expected a significance level in (0, 1) (e.g. 0.05), got ${show(r.alpha)}`);
      reg.alpha = r.alpha;
    }
    if (r.metrics !== undefined) {
      if (!Array.isArray(r.metrics) || !r.metrics.length) throw new UserError(`${file}: regression.metrics: expected a non-empty list of ${REGRESSION_METRICS.join(', ')}, got ${show(r.metrics)}`);
      reg.metrics = r.metrics.map((m, i) => {
        if (typeof m !== 'string' || !(REGRESSION_METRICS as readonly string[]).includes(m))
          throw new UserError(`${file}: regression.metrics[${i}]: unknown metric ${show(m)}${didYouMean(String(m), REGRESSION_METRICS)} (valid: ${REGRESSION_METRICS.join(', ')})`);
        return m;
      });
    }
    if (r.max_drift !== undefined) {
      if (typeof r.max_drift !== 'number' || !(r.max_drift >= 0 && r.max_drift < 1))
        throw new UserError(`${file}: regression.max_drift: expected a cumulative drop in the metric's 0..1 units like max_drop (0.05 = 5 points over the history window), got ${show(r.max_drift)}`);
      reg.max_drift = r.max_drift;
    }
    if (r.accept_mismatch !== undefined) {
      if (typeof r.accept_mismatch !== 'boolean') throw new UserError(`${file}: regression.accept_mismatch: expected true or false, got ${show(r.accept_mismatch)}`);
      reg.accept_mismatch = r.accept_mismatch;
    }
    out.regression = reg;
  }
  if (doc.judge !== undefined && doc.judge !== null) {
    const j = doc.judge;
    if (!isMap(j)) throw new UserError(`${file}: judge: expected a map with ${JUDGE_KEYS.join(', ')}, got ${show(j)}`);
    for (const k of Object.keys(j)) if (!(JUDGE_KEYS as readonly string[]).includes(k)) throw new UserError(unknownKeyMessage(file, 'judge', k, JUDGE_KEYS));
    if (typeof j.agreement !== 'string' || !j.agreement) throw new UserError(`${file}: judge.agreement: expected the file \`rankgate judge agreement RESULTS --out FILE\` wrote, got ${show(j.agreement)}`);
    if (typeof j.min_kappa !== 'number' || !(j.min_kappa >= -1 && j.min_kappa <= 1)) throw new UserError(`${file}: judge.min_kappa: expected a weighted kappa between -1 and 1 (e.g. 0.6), got ${show(j.min_kappa)}`);
    out.judge = { agreement: j.agreement, min_kappa: j.min_kappa };
  }
  const nFloors = Object.keys(out.overall).length + Object.values(out.categories).reduce((a, m) => a + Object.keys(m).length, 0);
  if (!nFloors && !out.regression && out.min_reviewed_share === undefined) throw new UserError(`${file}: no floor and no regression check configured; expected at least one floor under overall: or categories: (e.g. overall: { recall_at_3: 0.80 })`);
  return out;
}

/** zod-like `safeParse` over parseFloors (callers probe which keys this schema accepts, e.g. rankgate init). */
export const FloorsSchema = {
  safeParse(doc: unknown): { success: true; data: Floors } | { success: false; error: Error } {
    try {
      return { success: true, data: parseFloors(doc, 'gate.yaml') };
    } catch (e) {
      return { success: false, error: e as Error };
    }
  },
};

export function loadFloors(path: string): Floors {
  let text: string;
  try {
    text = readRegularFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the gate floors (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const floors = parseFloors(loadYaml(text, path), path);
  if (floors.judge) Object.assign(floors.judge, readAgreementKappa(floors.judge.agreement));
  return floors;
}

/** The overall weighted kappa of an agreement file, or why it cannot be had. */
export function readAgreementKappa(path: string): { kappa: number | null; problem?: string } {
  let text: string;
  try {
    text = readRegularFileSync(path, 'utf8');
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    return { kappa: null, problem: `${path}: cannot read the judge agreement (${why}); write it with rankgate judge agreement RESULTS.jsonl --out ${path}` };
  }
  return readAgreementKappaText(path, text);
}

/** The same from the agreement file's text (null: no such file; `at` names the base ref it was read at). */
export function readAgreementKappaText(path: string, text: string | null, at?: string): { kappa: number | null; problem?: string } {
  const where = at ? `${path} at ${at}` : path;
  if (text === null) return { kappa: null, problem: `${where}: no judge agreement there; write it with rankgate judge agreement RESULTS.jsonl --out ${path}` };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { kappa: null, problem: `${where}: cannot read the judge agreement (${(e as Error).message}); write it with rankgate judge agreement RESULTS.jsonl --out ${path}` };
  }
  const k = (doc as { overall?: { kappa?: unknown } } | null)?.overall?.kappa;
  if (typeof k !== 'number' || !Number.isFinite(k)) return { kappa: null, problem: `${where}: overall.kappa: expected a number, got ${show(k)} (not a rankgate judge agreement file, or no agreement was measured)` };
  return { kappa: k };
}

function overallValue(report: Des058Report, metric: string, family: Floors['metric_family']): number | null | undefined {
  if (family === 'judged' && metric !== 'routing_accuracy' && !GRADE_METRICS.includes(metric)) {
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
        note: `metric_family: judged, but the results have no judged scores (${report.judge}); run the eval with the judge on (RANKGATE_JUDGE=anthropic:messages:MODEL, openai:chat:MODEL, bedrock with AWS configured, or similarity) or set metric_family: strict`,
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
  const judgedFloors = family === 'judged' || [floors.overall, ...Object.values(floors.categories)].some((m) => Object.keys(m).some((k) => GRADE_METRICS.includes(k)));
  if (floors.judge && judgedFloors) {
    const { kappa, min_kappa: min, agreement, problem } = floors.judge;
    const ok = typeof kappa === 'number' && kappa >= min - 1e-12;
    checks.push({
      name: `judge agreement kappa >= ${min}`,
      scope: 'judge',
      metric: 'judge_kappa',
      value: kappa ?? null,
      min,
      passed: ok,
      ...(ok
        ? {}
        : { note: problem ?? `the judge agrees with the golden grades at weighted kappa ${kappa!.toFixed(3)} (${agreement}), below judge.min_kappa ${min}: the instrument is not trustworthy, judged floors do not count` }),
    });
  }
  const fam = family === 'judged' ? ' (judged)' : '';
  // A floor nothing in the results measures cannot pass: it is "unmeasured" (exit 2), or, with allow_partial,
  // reported as NOT CHECKED. Never "not applicable = passed".
  const partialOk = floors.allow_partial === true;
  const unmeasured = (name: string, scope: string, metric: string, min: number, note: string): GateCheck => ({
    name,
    scope,
    metric,
    value: null,
    min,
    passed: partialOk,
    unmeasured: true,
    note: partialOk ? `NOT CHECKED (allow_partial): ${note}` : note,
  });
  for (const [metric, min] of Object.entries(floors.overall)) {
    const v = overallValue(report, metric, family);
    const name = `overall ${metric}${fam} >= ${min}`;
    if (v === undefined || v === null || !Number.isFinite(v)) checks.push(unmeasured(name, 'overall', metric, min, `cannot be checked: no query in the results measures ${fam ? 'judged ' : ''}${metric}`));
    else checks.push({ name, scope: 'overall', metric, value: v, min, passed: v >= min - 1e-12 });
  }
  const present = Object.keys(report.categories);
  for (const [cat, ms] of Object.entries(floors.categories)) {
    const c = (report.categories[cat] ?? report.categories[categoryKey(cat)]) as unknown as Record<string, number | undefined> | undefined;
    for (const [metric, min] of Object.entries(ms)) {
      const name = `${cat} ${metric}${fam} >= ${min}`;
      const key =
        family === 'judged' && metric !== 'routing_accuracy' && !GRADE_METRICS.includes(metric) ? (metric === 'mrr' ? 'judged_mrr_at_10' : metric.startsWith('judged_') ? metric : `judged_${metric}`) : metric;
      const v = c?.[key];
      if (!c)
        checks.push(
          unmeasured(name, cat, metric, min, `cannot be checked: no ${cat} queries in the results${didYouMean(cat, present)}${present.length ? ` (categories: ${present.join(', ')})` : ''}`),
        );
      else if (v === undefined || v === null || !Number.isFinite(v)) checks.push(unmeasured(name, cat, metric, min, `cannot be checked: no ${cat} query measures ${fam ? 'judged ' : ''}${metric}`));
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
    ...failed.map((c) =>
      c.scope === 'judge'
        ? `  judge: ${c.note}`
        : c.unmeasured
          ? `  ${c.scope} ${c.metric}${c.name.includes('(judged)') ? ' (judged)' : ''} (floor ${c.min}): ${c.note}`
          : `  ${c.scope} ${c.metric}${c.name.includes('(judged)') ? ' (judged)' : ''} = ${c.value?.toFixed(4)} is below the floor ${c.min}`,
    ),
  ].join('\n');
}
