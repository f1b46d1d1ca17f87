/**
 * promptfoo derivedMetrics for the rank and routing namedScores. promptfoo keeps namedScores as SUMS
 * per column; a derived metric is evaluated after every row over those sums (mathjs, or a function
 * over the same object). A derived name must differ from every namedScore key (promptfoo stores the
 * derived value under its name in the same map), hence the `avg_` prefix.
 */
import type { GoldenQuery } from '../golden/schema.ts';
import { RANK_KEYS, categoryKey } from './score.ts';

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
  ];
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

/** Per-category means for the categories present: every rank measure where the category has ranked queries, and routing accuracy. */
export function categoryDerivedMetrics(goldens: GoldenQuery[]): DerivedMetric[] {
  const ranked = new Set<string>();
  const all = new Set<string>();
  for (const g of goldens) {
    const c = categoryKey(g.category);
    all.add(c);
    if (g.expected.some((r) => r.relevant)) ranked.add(c);
  }
  const out: DerivedMetric[] = [];
  for (const c of [...all].sort()) {
    if (ranked.has(c)) for (const k of RANK_KEYS) out.push({ name: `avg_${k}_${c}`, value: `${k}_${c} / n_${c}` });
    out.push({ name: `routing_accuracy_${c}`, value: `routing_ok_${c} / n_routing_${c}` });
  }
  return out;
}

/** Everything for a test set, without names already defined in `existing`. */
export function derivedMetricsFor(goldens: GoldenQuery[], existing: { name: string }[] = []): DerivedMetric[] {
  const have = new Set(existing.map((m) => m.name));
  const out: DerivedMetric[] = [];
  for (const m of [...overallDerivedMetrics(), ...conditionalDerivedMetrics(goldens), ...categoryDerivedMetrics(goldens)]) {
    if (!have.has(m.name)) {
      have.add(m.name);
      out.push(m);
    }
  }
  return out;
}
