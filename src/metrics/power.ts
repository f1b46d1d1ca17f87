/**
 * Power of a paired comparison over a golden set (pure math, no I/O).
 *
 * Minimum detectable drop (MDD) of a paired two-sided test at level alpha and power 1 - beta over n queries,
 * normal approximation of the paired test (the randomization test behaves like the paired t/z-test for the
 * sample sizes of golden sets):
 *
 *     MDD = (z_{1 - alpha/2} + z_{1 - beta}) * s_d / sqrt(n)
 *
 * s_d is the standard deviation of the per-query differences (candidate - baseline). The number of queries
 * needed to detect a drop D is n = ((z_{1 - alpha/2} + z_{1 - beta}) * s_d / D)^2, rounded up.
 */

/**
 * Inverse of the standard normal CDF (Acklam's rational approximation, relative error < 1.15e-9).
 * normalQuantile(0.975) = 1.959964..., normalQuantile(0.8) = 0.841621...
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be in (0, 1), got ${p}`);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

/** Sample standard deviation (n - 1); 0 for fewer than 2 values. */
export function sampleSd(xs: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const m = xs.reduce((s, x) => s + x, 0) / n;
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (n - 1));
}

/** (z_{1-alpha/2} + z_{power}) */
function zSum(alpha: number, power: number): number {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  if (!(power > 0 && power < 1)) throw new RangeError(`power must be in (0, 1), got ${power}`);
  return normalQuantile(1 - alpha / 2) + normalQuantile(power);
}

/** Minimum detectable drop (same unit as the scores) for n paired queries with difference SD sdDiff; Infinity when n = 0. */
export function minimumDetectableDrop(sdDiff: number, n: number, alpha: number, power = 0.8): number {
  if (n <= 0) return Infinity;
  return (zSum(alpha, power) * sdDiff) / Math.sqrt(n);
}

/** Queries needed to detect a drop `drop` (same unit as the scores) with power `power`; null when drop <= 0. */
export function queriesNeeded(sdDiff: number, drop: number, alpha: number, power = 0.8): number | null {
  if (!(drop > 0)) return null;
  return Math.max(1, Math.ceil(((zSum(alpha, power) * sdDiff) / drop) ** 2));
}
