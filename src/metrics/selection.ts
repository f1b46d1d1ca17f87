/**
 * Cross-validated "pick the best column": an honest estimate of what choosing the best of many configurations
 * on the same queries is worth.
 *
 * Picking the column with the highest mean over the queries that also measure it flatters the winner (with 33
 * columns and 66 queries, some column is lucky). Here the queries are split into k folds; for each fold the
 * column with the best mean on the other k-1 folds is chosen, and scored on the held-out fold only. Repeated
 * with `repeats` seeded shuffles. Reported:
 *   - heldOutMean: mean per query of the chosen column on held-out queries (averaged over repeats): what the
 *     selection procedure is expected to deliver on new queries like these;
 *   - inSampleBest / inSampleMean: the naive figure (the best column's mean over all queries);
 *   - optimism = inSampleMean - heldOutMean;
 *   - wins: how often each column was chosen (over repeats x folds), and stability = share of choices equal to
 *     the in-sample best column (1.0: the same column wins every fold).
 * Ties in a training mean go to the earlier column (the first column is the baseline). Pure: no I/O.
 */

export interface SelectionInput {
  /** Column names, in column order. */
  names: string[];
  /** values[c][q]: the per-query metric of column c on query q (same query order for every column). */
  values: number[][];
}

export interface SelectionOptions {
  /** Number of folds (default 5; at most the number of queries). */
  folds?: number;
  /** Seeded shuffles of the queries (default 20). */
  repeats?: number;
  seed?: number;
}

export interface SelectionResult {
  queries: number;
  columns: number;
  folds: number;
  repeats: number;
  seed: number;
  heldOutMean: number;
  /** Standard deviation of the per-repeat held-out means (the spread from the fold split alone). */
  heldOutSd: number;
  inSampleBest: string;
  inSampleMean: number;
  optimism: number;
  /** Held-out mean of always using the first column (the baseline), for comparison. */
  baselineMean: number;
  /** Times each column was chosen, most often first. */
  wins: { name: string; count: number; share: number }[];
  /** Share of choices that picked the in-sample best column. */
  stability: number;
}

/** The seeded PRNG of the significance tests (mulberry32), re-exported: the report draws its folds the same way. */
import { mulberry32 } from './significance.ts';
export { mulberry32 };

function shuffled(n: number, rnd: () => number): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

function argmaxMean(values: number[][], idx: number[]): number {
  let best = 0;
  let bestSum = -Infinity;
  values.forEach((col, c) => {
    let s = 0;
    for (const q of idx) s += col[q]!;
    if (s > bestSum + 1e-12) {
      bestSum = s;
      best = c;
    }
  });
  return best;
}

export class SelectionInputError extends Error {}

export function crossValidatedSelection(input: SelectionInput, opts: SelectionOptions = {}): SelectionResult {
  const { names, values } = input;
  if (names.length !== values.length) throw new SelectionInputError(`${names.length} names for ${values.length} columns`);
  if (names.length < 2) throw new SelectionInputError('selection needs at least two columns');
  const n = values[0]!.length;
  if (values.some((v) => v.length !== n)) throw new SelectionInputError('every column needs a value for every query (same query order)');
  if (n < 2) throw new SelectionInputError(`selection needs at least two queries, got ${n}`);
  const k = Math.max(2, Math.min(opts.folds ?? 5, n));
  const repeats = Math.max(1, opts.repeats ?? 20);
  const seed = opts.seed ?? 42;
  const rnd = mulberry32(seed);
  const wins = new Array<number>(names.length).fill(0);
  const repeatMeans: number[] = [];
  for (let r = 0; r < repeats; r++) {
    const order = shuffled(n, rnd);
    const foldOf = new Array<number>(n);
    order.forEach((q, i) => (foldOf[q] = i % k));
    let sum = 0;
    for (let f = 0; f < k; f++) {
      const train: number[] = [];
      const test: number[] = [];
      for (let q = 0; q < n; q++) (foldOf[q] === f ? test : train).push(q);
      const c = argmaxMean(values, train);
      wins[c]!++;
      for (const q of test) sum += values[c]![q]!;
    }
    repeatMeans.push(sum / n);
  }
  const all = Array.from({ length: n }, (_, i) => i);
  const best = argmaxMean(values, all);
  const meanOf = (c: number) => values[c]!.reduce((a, b) => a + b, 0) / n;
  const heldOutMean = repeatMeans.reduce((a, b) => a + b, 0) / repeats;
  const heldOutSd = Math.sqrt(repeatMeans.reduce((a, b) => a + (b - heldOutMean) ** 2, 0) / Math.max(1, repeats - 1));
  const choices = repeats * k;
  return {
    queries: n,
    columns: names.length,
    folds: k,
    repeats,
    seed,
    heldOutMean,
    heldOutSd: repeats > 1 ? heldOutSd : 0,
    inSampleBest: names[best]!,
    inSampleMean: meanOf(best),
    optimism: meanOf(best) - heldOutMean,
    baselineMean: meanOf(0),
    wins: names
      .map((name, c) => ({ name, count: wins[c]!, share: wins[c]! / choices }))
      .filter((w) => w.count > 0)
      .sort((a, b) => b.count - a.count || names.indexOf(a.name) - names.indexOf(b.name)),
    stability: wins[best]! / choices,
  };
}
