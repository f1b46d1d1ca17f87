/**
 * Agreement between two raters on an ordinal scale of k categories 0..k-1 (the judge against the golden grades).
 *
 * Cohen's weighted kappa with linear weights (Cohen 1968; the "linear" variant of sklearn's cohen_kappa_score):
 *   w_ij = |i - j| / (k - 1)                      disagreement weight
 *   O_ij = share of items rated i by A and j by B  observed
 *   E_ij = rowA_i * colB_j                         expected by chance from the two marginals
 *   kappa_w = 1 - sum(w_ij O_ij) / sum(w_ij E_ij)
 * 1 is perfect agreement, 0 what chance gives, below 0 worse than chance. Undefined (null) when the expected
 * disagreement is 0 (both raters used one and the same category for every item).
 *
 * The 95% interval is a percentile bootstrap over items (resampled with replacement, `resamples` times, seeded
 * mulberry32 so a rerun prints the same interval); resamples whose kappa is undefined are left out. Pure: no I/O.
 */
import { mulberry32 } from './significance.ts';

export interface AgreementPair {
  /** The reference rating (golden grade mapped to the scale). */
  truth: number;
  /** The rater under test (the judge). */
  rated: number;
}

export interface AgreementSummary {
  n: number;
  /** confusion[truth][rated] counts. */
  confusion: number[][];
  accuracy: number | null;
  kappa: number | null;
  ci95: [number, number] | null;
}

export function confusionMatrix(pairs: readonly AgreementPair[], k: number): number[][] {
  const m = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  for (const p of pairs) {
    if (!Number.isInteger(p.truth) || !Number.isInteger(p.rated) || p.truth < 0 || p.rated < 0 || p.truth >= k || p.rated >= k) {
      throw new RangeError(`rating out of the scale 0..${k - 1}: truth ${p.truth}, rated ${p.rated}`);
    }
    m[p.truth]![p.rated]!++;
  }
  return m;
}

/** Linear-weighted Cohen's kappa of a k x k confusion matrix; null when undefined (no expected disagreement). */
export function weightedKappa(confusion: readonly (readonly number[])[]): number | null {
  const k = confusion.length;
  const n = confusion.reduce((a, r) => a + r.reduce((b, x) => b + x, 0), 0);
  if (n === 0 || k < 2) return null;
  const rows = confusion.map((r) => r.reduce((a, x) => a + x, 0) / n);
  const cols = confusion[0]!.map((_, j) => confusion.reduce((a, r) => a + r[j]!, 0) / n);
  let observed = 0;
  let expected = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const w = Math.abs(i - j) / (k - 1);
      observed += (w * confusion[i]![j]!) / n;
      expected += w * rows[i]! * cols[j]!;
    }
  }
  if (expected === 0) return null;
  return 1 - observed / expected;
}

export function agreement(pairs: readonly AgreementPair[], k: number, opts: { resamples?: number; seed?: number } = {}): AgreementSummary {
  const confusion = confusionMatrix(pairs, k);
  const n = pairs.length;
  const kappa = weightedKappa(confusion);
  const accuracy = n ? pairs.filter((p) => p.truth === p.rated).length / n : null;
  let ci95: [number, number] | null = null;
  const resamples = opts.resamples ?? 2000;
  if (n >= 2 && kappa !== null && resamples > 0) {
    const rnd = mulberry32(opts.seed ?? 42);
    const ks: number[] = [];
    const m = Array.from({ length: k }, () => new Array<number>(k).fill(0));
    for (let b = 0; b < resamples; b++) {
      for (const r of m) r.fill(0);
      for (let i = 0; i < n; i++) {
        const p = pairs[Math.floor(rnd() * n)]!;
        m[p.truth]![p.rated]!++;
      }
      const v = weightedKappa(m);
      if (v !== null) ks.push(v);
    }
    if (ks.length) {
      ks.sort((a, b) => a - b);
      const at = (q: number) => ks[Math.min(ks.length - 1, Math.max(0, Math.floor(q * ks.length)))]!;
      ci95 = [at(0.025), at(0.975)];
    }
  }
  return { n, confusion, accuracy, kappa, ci95 };
}

/**
 * Krippendorff's alpha with the interval metric (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"),
 * for any number of raters and missing ratings: `units[u]` holds the values the raters gave unit u (a unit with
 * fewer than two values is not pairable and is left out).
 *   n   = number of pairable values (in units with m_u >= 2)
 *   D_o = (1/n) * sum_u 1/(m_u - 1) * sum_{i != j in u} (v_i - v_j)^2      observed disagreement
 *   D_e = 1/(n (n - 1)) * sum_{i != j over all pairable values} (v_i - v_j)^2  expected disagreement
 *   alpha = 1 - D_o / D_e
 * 1 is perfect agreement, 0 what chance gives, below 0 systematic disagreement; null when undefined (fewer than two
 * pairable values, or no expected disagreement: every value the same). The coincidence-matrix form of the same
 * definition (interval metric delta^2 = (c - k)^2) as the `krippendorff` Python package's interval level. Pure.
 */
export function krippendorffAlphaInterval(units: readonly (readonly number[])[]): { alpha: number | null; units: number; values: number } {
  const pairable = units.filter((u) => u.length >= 2);
  const all = pairable.flat();
  const n = all.length;
  if (n < 2) return { alpha: null, units: pairable.length, values: n };
  let observed = 0;
  for (const u of pairable) {
    let s = 0;
    for (let i = 0; i < u.length; i++) for (let j = 0; j < u.length; j++) if (i !== j) s += (u[i]! - u[j]!) ** 2;
    observed += s / (u.length - 1);
  }
  observed /= n;
  // sum over ordered pairs i != j of (v_i - v_j)^2 = 2 (n sum v^2 - (sum v)^2)
  const sum = all.reduce((a, v) => a + v, 0);
  const sq = all.reduce((a, v) => a + v * v, 0);
  const expected = (2 * (n * sq - sum * sum)) / (n * (n - 1));
  if (expected <= 1e-15) return { alpha: null, units: pairable.length, values: n };
  return { alpha: 1 - observed / expected, units: pairable.length, values: n };
}
