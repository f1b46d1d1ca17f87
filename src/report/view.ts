/**
 * What `promptfoo view` shows of rankgate's metrics, adjusted where promptfoo reads the stored eval.
 *
 * promptfoo's metrics dialog shows each metric's "Pass" as sum / count (namedScoreWeights, else namedScoresCount)
 * and colours it red below 50%. A derived metric (derivedMetrics: avg_recall_at_3, routing_accuracy, ...) has no
 * count, so every mean read "Pass 0.00%" in red. Giving a derived MEAN of a 0..1 measure the weight 1 makes the
 * dialog show the mean itself as the percentage ("avg_recall_at_3 57.81%") and the column header
 * "57.81% (0.58/1.00)". Latencies and ranks (avg_latency_ms, avg_found_rank, latency_p95_ms) are not 0..1: they keep
 * no weight, and the dialog still shows them as "Pass 0.00%" (read their Score column; docs/view.md says so).
 * Pure: mutates the prompts' metrics objects the afterAll hook receives, which promptfoo then saves.
 */

/** A derived metric that is a mean or rate of a 0..1 measure. */
export function isUnitMean(name: string): boolean {
  if (/latency|_rank(_|$)/.test(name)) return false;
  return /^avg_/.test(name) || /^(routing_accuracy|safety_accuracy|not_found_rate)(_|$)/.test(name) || /judge_error_rate$/.test(name);
}

export interface ViewMetrics {
  namedScores?: Record<string, number>;
  namedScoresCount?: Record<string, number>;
  namedScoreWeights?: Record<string, number>;
}

/** Weight 1 for every derived 0..1 mean of each column (a key no row contributed to, so it has no count). Returns the names. */
export function weightUnitMeans(prompts: { metrics?: ViewMetrics }[]): string[] {
  const done = new Set<string>();
  for (const p of prompts) {
    const m = p.metrics;
    if (!m?.namedScores) continue;
    for (const k of Object.keys(m.namedScores)) {
      if (m.namedScoresCount?.[k] !== undefined || !isUnitMean(k)) continue;
      m.namedScoreWeights ??= {};
      m.namedScoreWeights[k] = 1;
      done.add(k);
    }
  }
  return [...done];
}
