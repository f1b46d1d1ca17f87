/**
 * Significance tests between two systems over the same queries (paired samples). Every function
 * pairs `a[i]` with `b[i]`; the difference is always `b - a` (candidate minus baseline). Random
 * procedures use a seeded PRNG (mulberry32), so results are reproducible run to run.
 */
import { createRequire } from 'node:module';

// The t distribution's CDF (@stdlib, 459 small CommonJS files) is loaded on the first t-test, not at import: most
// commands that import this module (every promptfoo eval through the gate hook, `rankgate gate` without a
// baseline) never run one, and loading it costs ~0.1 s of CPU per process.
let tcdfFn: ((x: number, v: number) => number) | undefined;
const tcdf = (x: number, v: number): number =>
  (tcdfFn ??= createRequire(import.meta.url)('@stdlib/stats-base-dists-t-cdf') as (x: number, v: number) => number)(x, v);

function checkPaired(a: readonly number[], b: readonly number[], what: string): number[] {
  if (a.length !== b.length) throw new RangeError(`${what}: paired samples differ in length (${a.length} vs ${b.length})`);
  const d = new Array<number>(a.length);
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (!Number.isFinite(x) || !Number.isFinite(y)) throw new RangeError(`${what}: value ${i} is not finite (${x}, ${y})`);
    d[i] = y - x;
  }
  return d;
}

function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return xs.length ? s / xs.length : 0;
}

/** mulberry32: small, fast, well-distributed 32-bit PRNG; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface TTestResult {
  /** t statistic of the mean difference b - a */
  t: number;
  /** degrees of freedom n - 1 */
  df: number;
  /** two-sided p-value */
  p: number;
}

/**
 * Paired (dependent-samples) Student t-test, two-sided; same as SciPy `ttest_rel(b, a)`.
 * d_i = b_i - a_i, t = mean(d) / (sd(d) / sqrt(n)) with the n-1 sample sd, p = 2 * (1 - T_{n-1}(|t|))
 * using stdlib's Student-t CDF. Degenerate cases: n < 2 gives p = 1; sd = 0 gives p = 1 when the
 * mean difference is 0 (identical systems) and p = 0 otherwise (a constant non-zero shift).
 */
export function pairedTTest(a: readonly number[], b: readonly number[]): TTestResult {
  const d = checkPaired(a, b, 'pairedTTest');
  const n = d.length;
  if (n < 2) return { t: 0, df: Math.max(0, n - 1), p: 1 };
  const m = mean(d);
  let ss = 0;
  for (const x of d) ss += (x - m) ** 2;
  const sd = Math.sqrt(ss / (n - 1));
  const df = n - 1;
  // Below this the spread is floating-point noise from subtracting equal scores.
  if (sd <= 1e-12 * Math.max(1, Math.abs(m))) {
    return Math.abs(m) <= 1e-12 ? { t: 0, df, p: 1 } : { t: m > 0 ? Infinity : -Infinity, df, p: 0 };
  }
  const t = m / (sd / Math.sqrt(n));
  const p = Math.min(1, 2 * tcdf(-Math.abs(t), df));
  return { t, df, p };
}

export interface RandomizationOptions {
  /** enumerate all 2^n sign assignments when n <= exactMaxN (default 20) */
  exactMaxN?: number;
  /** Monte-Carlo samples when n > exactMaxN (default 10000) */
  iterations?: number;
  /** PRNG seed for Monte-Carlo (default 42) */
  seed?: number;
}

export interface RandomizationResult {
  /** two-sided p-value */
  p: number;
  /** true when all 2^n sign assignments were enumerated */
  exact: boolean;
  /** number of sign assignments considered */
  permutations: number;
}

/**
 * Paired randomization (permutation) test, two-sided (Fisher; Smucker, Allan & Carterette, CIKM 2007).
 * Under H0 the sign of each difference d_i = b_i - a_i is exchangeable; the statistic is |mean(d)|.
 * Exact when n <= exactMaxN: p = |{s in {-1,1}^n : |mean(s*d)| >= |mean(d)|}| / 2^n (the observed
 * assignment included). Otherwise Monte-Carlo with B seeded draws: p = (1 + hits) / (1 + B)
 * (Phipson & Smyth 2010, never 0). Comparison uses a 1e-12 tolerance so float noise on equal
 * statistics does not flip a count. Zero differences do not change the statistic.
 */
export function randomizationTest(a: readonly number[], b: readonly number[], opts: RandomizationOptions = {}): RandomizationResult {
  const d = checkPaired(a, b, 'randomizationTest').filter((x) => x !== 0);
  const n = d.length;
  if (n === 0) return { p: 1, exact: true, permutations: 1 };
  let total = 0;
  for (const x of d) total += x;
  const obs = Math.abs(total) - 1e-12 * Math.max(1, Math.abs(total));
  const exactMaxN = opts.exactMaxN ?? 20;
  if (n <= exactMaxN) {
    // Enumerate sums over all sign vectors by Gray code: each step flips one sign.
    const count = 2 ** n;
    const signs = new Array<number>(n).fill(1);
    let sum = total;
    let hits = Math.abs(sum) >= obs ? 1 : 0;
    for (let g = 1; g < count; g++) {
      const bit = 31 - Math.clz32(g & -g);
      signs[bit] = -signs[bit]!;
      sum += 2 * signs[bit]! * d[bit]!;
      if (Math.abs(sum) >= obs) hits++;
    }
    return { p: hits / count, exact: true, permutations: count };
  }
  const iterations = opts.iterations ?? 10000;
  const rnd = mulberry32(opts.seed ?? 42);
  let hits = 0;
  for (let it = 0; it < iterations; it++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += rnd() < 0.5 ? -d[i]! : d[i]!;
    if (Math.abs(s) >= obs) hits++;
  }
  return { p: (1 + hits) / (1 + iterations), exact: false, permutations: iterations };
}

export interface BootstrapOptions {
  /** resamples (default 10000) */
  iterations?: number;
  /** PRNG seed (default 42) */
  seed?: number;
  /** confidence level (default 0.95) */
  confidence?: number;
}

export interface BootstrapResult {
  /** observed mean difference b - a */
  mean: number;
  low: number;
  high: number;
}

/** Quantile with linear interpolation between order statistics (NumPy's default `linear` method). */
export function quantile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return NaN;
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/**
 * Percentile bootstrap confidence interval of the mean paired difference b - a (Efron & Tibshirani
 * 1993): resample the n query differences with replacement B times (seeded), take the mean of each
 * resample, and report the (1-c)/2 and (1+c)/2 quantiles of those means (linear interpolation).
 */
export function bootstrapCI(a: readonly number[], b: readonly number[], opts: BootstrapOptions = {}): BootstrapResult {
  const d = checkPaired(a, b, 'bootstrapCI');
  const n = d.length;
  const m = mean(d);
  if (n === 0) return { mean: 0, low: 0, high: 0 };
  const conf = opts.confidence ?? 0.95;
  if (!(conf > 0 && conf < 1)) throw new RangeError(`bootstrapCI: confidence must be in (0, 1), got ${conf}`);
  const iterations = opts.iterations ?? 10000;
  const rnd = mulberry32(opts.seed ?? 42);
  const means = new Float64Array(iterations);
  for (let it = 0; it < iterations; it++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += d[Math.floor(rnd() * n)]!;
    means[it] = s / n;
  }
  means.sort();
  const arr = Array.from(means);
  return { mean: m, low: quantile(arr, (1 - conf) / 2), high: quantile(arr, (1 + conf) / 2) };
}

/**
 * Holm–Bonferroni step-down adjustment (Holm 1979); returns adjusted p-values in the input order,
 * same as statsmodels `multipletests(method='holm')`: with p sorted ascending p_(1..m),
 * adj_(i) = min(1, max_{j <= i} (m - j + 1) * p_(j)). Reject H_i at level alpha iff adj_i <= alpha.
 */
export function holm(pvalues: readonly number[]): number[] {
  const m = pvalues.length;
  const order = pvalues.map((p, i) => ({ p, i })).sort((x, y) => x.p - y.p || x.i - y.i);
  const out = new Array<number>(m);
  let running = 0;
  order.forEach(({ p, i }, j) => {
    running = Math.max(running, Math.min(1, (m - j) * p));
    out[i] = running;
  });
  return out;
}

export interface CompareOptions {
  /** differences with |b - a| <= tie tolerance count as ties (default 1e-9) */
  tieTolerance?: number;
  randomization?: RandomizationOptions;
  bootstrap?: BootstrapOptions;
}

export interface RunComparison {
  /** candidate mean */
  mean: number;
  baseline_mean: number;
  /** mean(candidate) - mean(baseline) */
  diff: number;
  ci_low: number;
  ci_high: number;
  p_ttest: number;
  p_randomization: number;
  /** queries where candidate > baseline / equal / lower */
  wins: number;
  ties: number;
  losses: number;
}

/** Everything a report needs about candidate vs baseline over the same queries (paired by index). */
export function compareRuns(baseline: readonly number[], candidate: readonly number[], opts: CompareOptions = {}): RunComparison {
  checkPaired(baseline, candidate, 'compareRuns');
  const tol = opts.tieTolerance ?? 1e-9;
  let wins = 0;
  let ties = 0;
  let losses = 0;
  for (let i = 0; i < baseline.length; i++) {
    const d = candidate[i]! - baseline[i]!;
    if (Math.abs(d) <= tol) ties++;
    else if (d > 0) wins++;
    else losses++;
  }
  const ci = bootstrapCI(baseline, candidate, opts.bootstrap);
  const bm = mean(baseline);
  const cm = mean(candidate);
  return {
    mean: cm,
    baseline_mean: bm,
    diff: cm - bm,
    ci_low: ci.low,
    ci_high: ci.high,
    p_ttest: pairedTTest(baseline, candidate).p,
    p_randomization: randomizationTest(baseline, candidate, opts.randomization).p,
    wins,
    ties,
    losses,
  };
}

export interface NamedVector {
  name: string;
  perQuery: ReadonlyMap<string, number>;
}

export interface VectorComparison extends RunComparison {
  run: string;
  /** Holm-adjusted p_randomization across all comparisons of the call */
  p_holm: number;
  /** Holm-adjusted p_ttest across all comparisons of the call */
  p_ttest_holm: number;
}

export interface CompareVectorsResult {
  baseline: string;
  /** query ids compared (paired), sorted */
  queries: string[];
  comparisons: VectorComparison[];
}

export interface CompareVectorsOptions extends CompareOptions {
  /**
   * Query ids that are not in every vector: `error` (default) throws, `intersect` compares the
   * queries all vectors share, `zero` scores a missing query 0 (trec_eval -c semantics).
   */
  missing?: 'error' | 'intersect' | 'zero';
}

/** A comparison could not be set up (the CLI turns this into a UserError). */
export class CompareInputError extends Error {}

/**
 * Compare each vector against the first (the baseline), pairing queries by id, and Holm-adjust the
 * p-values across the comparisons. Usable for TREC runs and for promptfoo result columns alike.
 */
export function compareVectors(named: readonly NamedVector[], opts: CompareVectorsOptions = {}): CompareVectorsResult {
  if (named.length < 2) throw new CompareInputError(`compare needs at least two systems, got ${named.length}`);
  const names = new Set<string>();
  for (const v of named) {
    if (names.has(v.name)) throw new CompareInputError(`two systems are both named '${v.name}'`);
    names.add(v.name);
  }
  const union = new Set<string>();
  for (const v of named) for (const q of v.perQuery.keys()) union.add(q);
  const all = [...union].sort();
  const missing = opts.missing ?? 'error';
  let queries = all;
  if (missing !== 'zero') {
    const incomplete = all.filter((q) => named.some((v) => !v.perQuery.has(q)));
    if (incomplete.length && missing === 'error') {
      const detail = named
        .map((v) => ({ v, miss: all.filter((q) => !v.perQuery.has(q)) }))
        .filter((x) => x.miss.length)
        .map((x) => `'${x.v.name}' lacks ${x.miss.slice(0, 5).join(', ')}${x.miss.length > 5 ? ` and ${x.miss.length - 5} more` : ''}`);
      throw new CompareInputError(`systems do not cover the same queries: ${detail.join('; ')}`);
    }
    queries = all.filter((q) => named.every((v) => v.perQuery.has(q)));
  }
  if (!queries.length) throw new CompareInputError('no query is shared by all systems');
  const vec = (v: NamedVector) => queries.map((q) => v.perQuery.get(q) ?? 0);
  const base = vec(named[0]!);
  const raw = named.slice(1).map((v) => ({ run: v.name, ...compareRuns(base, vec(v), opts) }));
  const pr = holm(raw.map((r) => r.p_randomization));
  const pt = holm(raw.map((r) => r.p_ttest));
  return {
    baseline: named[0]!.name,
    queries,
    comparisons: raw.map((r, i) => ({ ...r, p_holm: pr[i]!, p_ttest_holm: pt[i]! })),
  };
}
