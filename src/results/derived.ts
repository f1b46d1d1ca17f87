/**
 * promptfoo derivedMetrics for the rank and routing namedScores. promptfoo keeps namedScores as SUMS
 * per column; a derived metric is evaluated after every row over those sums (mathjs, or a function
 * over the same object). A derived name must differ from every namedScore key (promptfoo stores the
 * derived value under its name in the same map), hence the `avg_` prefix.
 */
import type { GoldenQuery } from '../golden/schema.ts';
import { LABELLED_KEYS, RANK_KEYS, categoryKey, routingChecked } from './score.ts';

export interface DerivedMetric {
  name: string;
  value: string;
}

/** Overall means, always meaningful for a golden set with ranked and routed queries (also in promptfooconfig.yaml). */
export function overallDerivedMetrics(): DerivedMetric[] {
  return [
    ...RANK_KEYS.map((k) => ({ name: `avg_${k}`, value: `${k} / n_ranked` })),
    { name: 'not_found_rate', value: '1 - found / n_ranked' },
    { name: 'routing_accuracy', value: 'routing_ok / n_routing' },
    { name: 'avg_latency_ms', value: 'latency_ms / n_latency' },
    // Judged@k (ir_measures): a share, shown as such in promptfoo's view (src/report/view.ts weights avg_* means)
    { name: 'avg_share_judged_at_10', value: 'share_judged_at_10 / n_share_judged' },
    { name: 'avg_share_judged_at_3', value: 'share_judged_at_3 / n_share_judged' },
    { name: 'avg_condensed_ndcg_at_10', value: 'condensed_ndcg_at_10 / n_ranked' },
    { name: 'avg_bpref', value: 'bpref / n_ranked' },
  ];
}

/** The `+ labels` means (a judgments file was given: the tests carry metadata.labels): avg_labelled_<k> = labelled_<k> / n_labelled. */
export function labelledDerivedMetrics(): DerivedMetric[] {
  return LABELLED_KEYS.map((k) => ({ name: `avg_labelled_${k}`, value: `labelled_${k} / n_labelled` }));
}

/** Derived metrics that exist only when some query has the counter's inputs. */
export function conditionalDerivedMetrics(goldens: GoldenQuery[]): DerivedMetric[] {
  const out: DerivedMetric[] = [
    { name: 'avg_found_rank', value: 'found_rank / found' },
    { name: 'avg_last_expected_rank', value: 'last_expected_rank / n_all_found' },
  ];
  if (goldens.some((g) => g.expected.some((r) => r.answer_contains !== undefined))) {
    out.push({ name: 'avg_answerable_at_10', value: 'answerable_at_10 / n_answerable' });
  }
  if (goldens.some((g) => g.expect_safety === true)) out.push({ name: 'safety_accuracy', value: 'safety_ok / n_safety' });
  return out;
}

/**
 * Per-category means for the categories present: every rank measure where the category has ranked queries, and
 * routing accuracy where some entry of the category states a routing expectation (the only queries checked).
 */
export function categoryDerivedMetrics(goldens: GoldenQuery[]): DerivedMetric[] {
  const ranked = new Set<string>();
  const routedCats = new Set<string>();
  const all = new Set<string>();
  for (const g of goldens) {
    const c = categoryKey(g.category);
    all.add(c);
    if (g.expected.some((r) => r.relevant)) ranked.add(c);
    if (routingChecked(g)) routedCats.add(c);
  }
  const out: DerivedMetric[] = [];
  for (const c of [...all].sort()) {
    if (ranked.has(c)) for (const k of RANK_KEYS) out.push({ name: `avg_${k}_${c}`, value: `${k}_${c} / n_${c}` });
    if (ranked.has(c)) for (const k of ['share_judged_at_10', 'share_judged_at_3']) out.push({ name: `avg_${k}_${c}`, value: `${k}_${c} / n_share_judged_${c}` });
    if (routedCats.has(c)) out.push({ name: `routing_accuracy_${c}`, value: `routing_ok_${c} / n_routing_${c}` });
  }
  return out;
}

/** The judged measures of assertions/judge.ts that get derived means (overall and per category). */
export const JUDGED_MEAN_KEYS = ['judged_recall_at_1', 'judged_recall_at_3', 'judged_recall_at_5', 'judged_recall_at_10', 'judged_mrr', 'judged_ndcg_at_10'] as const;

/**
 * Means of the judged family (issue 7) beside the strict ones: `avg_<p>judged_recall_at_3 = <p>judged_recall_at_3 / <p>n_judged`
 * and per category `avg_<p>judged_recall_at_3_<c> = <p>judged_recall_at_3_<c> / <p>n_judged_<c>` for the categories with
 * ranked queries, plus `<p>judge_error_rate = <p>judge_errors / <p>judged_results`. `prefix` is '' (bedrock judge) or
 * 'heuristic_' (similarity mode). Only added when the judge is on: promptfoo shows a derived metric whose inputs are
 * missing as 0, which would read as "judged recall 0" with the judge off.
 */
export function judgedDerivedMetrics(goldens: GoldenQuery[], prefix: '' | 'heuristic_' = ''): DerivedMetric[] {
  const p = prefix;
  const out: DerivedMetric[] = JUDGED_MEAN_KEYS.map((k) => ({ name: `avg_${p}${k}`, value: `${p}${k} / ${p}n_judged` }));
  out.push({ name: `${p}judge_error_rate`, value: `${p}judge_errors / max(${p}judged_results, 1)` });
  const ranked = new Set<string>();
  for (const g of goldens) if (g.expected.some((r) => r.relevant)) ranked.add(categoryKey(g.category));
  for (const c of [...ranked].sort()) for (const k of JUDGED_MEAN_KEYS) out.push({ name: `avg_${p}${k}_${c}`, value: `${p}${k}_${c} / ${p}n_judged_${c}` });
  return out;
}

/**
 * Everything for a test set, without names already defined in `existing`. `judgePrefixes`: the judged families the
 * eval produces ('' for the bedrock judge, 'heuristic_' for similarity mode; none with the judge off); `labelled`: the
 * tests carry a judgments file's labels (the `+ labels` means).
 */
export function derivedMetricsFor(goldens: GoldenQuery[], existing: { name: string }[] = [], judgePrefixes: readonly ('' | 'heuristic_')[] = [], labelled = false): DerivedMetric[] {
  const have = new Set(existing.map((m) => m.name));
  const out: DerivedMetric[] = [];
  const judged = [...new Set(judgePrefixes)].flatMap((p) => judgedDerivedMetrics(goldens, p));
  for (const m of [...overallDerivedMetrics(), ...conditionalDerivedMetrics(goldens), ...categoryDerivedMetrics(goldens), ...judged, ...(labelled ? labelledDerivedMetrics() : [])]) {
    if (!have.has(m.name)) {
      have.add(m.name);
      out.push(m);
    }
  }
  return out;
}

const SYMBOL = '[A-Za-z_][A-Za-z0-9_]*';
const FORMS: [RegExp, (a: number, b: number) => number][] = [
  [new RegExp(`^(${SYMBOL}) / (${SYMBOL})$`), (a, b) => a / b],
  [new RegExp(`^1 - (${SYMBOL}) / (${SYMBOL})$`), (a, b) => 1 - a / b],
  [new RegExp(`^(${SYMBOL}) / max\\((${SYMBOL}), 1\\)$`), (a, b) => a / Math.max(b, 1)],
];

/**
 * The expressions this file generates (`a / b`, `1 - a / b`, `a / max(b, 1)`) as functions over promptfoo's scope,
 * with mathjs's results for them: number division (0/0 NaN, x/0 ±Infinity) and "Undefined symbol x" thrown for a
 * name the scope lacks (promptfoo then keeps the metric at 0). Without mathjs: importing it through promptfoo's
 * TypeScript loader cost ~1.4 CPU-s per eval. Any other expression: null (the caller uses mathjs).
 */
export function compileOwnDerived(expr: string): ((scope: Record<string, unknown>) => number) | null {
  for (const [re, op] of FORMS) {
    const m = re.exec(expr.trim());
    if (!m) continue;
    const [, x, y] = m as unknown as [string, string, string];
    const get = (scope: Record<string, unknown>, name: string): number => {
      if (!Object.prototype.hasOwnProperty.call(scope, name)) throw new Error(`Undefined symbol ${name}`);
      return Number(scope[name]);
    };
    return (scope) => op(get(scope, x), get(scope, y));
  }
  return null;
}

/**
 * promptfoo's updateDerivedMetrics after a column's last row, for metrics in this file's forms: in order, each set
 * to 0 first, then to its value when its inputs exist, each seeing the ones before it. Mutates `namedScores`.
 */
export function applyDerivedMetrics(namedScores: Record<string, number>, metrics: readonly DerivedMetric[], count: number): void {
  const scope: Record<string, unknown> = { ...namedScores, __count: count };
  for (const m of metrics) {
    namedScores[m.name] ??= 0;
    const f = compileOwnDerived(m.value);
    if (!f) throw new Error(`derived metric '${m.name}': '${m.value}' is not one of rankgate's forms`);
    try {
      const v = f(scope);
      namedScores[m.name] = v;
      scope[m.name] = v;
    } catch {
      // a missing input: promptfoo logs it at debug level and leaves the 0
    }
  }
}
