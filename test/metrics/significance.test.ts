// Significance functions against independently computed references.
// How the reference values were obtained (SciPy 1.17.1, Python 3, on the paired samples below):
//   scipy.stats.ttest_rel(B10, A10)                 -> t = 3.771711342562271, p = 0.004404838762275414, df 9
//   exact randomization for A10/B10: itertools.product([1,-1], repeat=10) over all 1024 sign vectors,
//     counting |sum(s*d)| >= |sum(d)| - 1e-12         -> 10 / 1024 = 0.009765625
//   exact randomization for A30/B30 (differences are whole thousandths): dynamic programming over the
//     integer sums of +-1000*d_i, counting |sum| >= |observed| -> 595336 / 2^30 = 0.0005544498562812805
//   scipy.stats.ttest_rel(B30, A30)                 -> t = 3.8894295887452737, p = 0.0005397100663207238
//   scipy.stats.bootstrap((B30-A30,), np.mean, method='percentile', n_resamples=100000, random_state=1)
//                                                   -> (0.032366666666666676, 0.0949), mean 0.06346666666666669
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootstrapCI, compareRuns, compareVectors, holm, mulberry32, pairedTTest, randomizationTest } from '../../src/metrics/index.ts';

const A10 = [0.42, 0.55, 0.31, 0.78, 0.6, 0.25, 0.9, 0.47, 0.38, 0.66];
const B10 = [0.5, 0.61, 0.29, 0.85, 0.72, 0.3, 0.88, 0.58, 0.45, 0.7];
const A30 = [0.637, 0.27, 0.041, 0.017, 0.813, 0.913, 0.607, 0.729, 0.544, 0.935, 0.816, 0.003, 0.857, 0.034, 0.73, 0.176, 0.863, 0.541, 0.3, 0.423, 0.028, 0.124, 0.671, 0.647, 0.615, 0.384, 0.997, 0.981, 0.686, 0.65];
const B30 = [0.586, 0.299, 0.075, 0.121, 0.884, 0.999, 0.592, 0.766, 0.672, 1.0, 0.74, 0.204, 1.0, 0.162, 0.806, 0.195, 1.0, 0.787, 0.53, 0.605, 0.114, 0.053, 0.721, 0.763, 0.536, 0.474, 1.0, 1.0, 0.618, 0.634];

const near = (a: number, b: number, tol: number, msg?: string) => assert.ok(Math.abs(a - b) <= tol, `${msg ?? ''} expected ${b} ± ${tol}, got ${a}`);

test('paired t-test matches SciPy ttest_rel', () => {
  const r = pairedTTest(A10, B10);
  near(r.t, 3.771711342562271, 1e-12);
  assert.equal(r.df, 9);
  near(r.p, 0.004404838762275414, 1e-12);
  const r30 = pairedTTest(A30, B30);
  near(r30.t, 3.8894295887452737, 1e-10);
  near(r30.p, 0.0005397100663207238, 1e-12);
  // swapping the systems flips t, keeps p
  near(pairedTTest(B10, A10).t, -3.771711342562271, 1e-12);
});

test('paired t-test by hand with the closed-form Student-t CDF for 3 degrees of freedom', () => {
  // d = b - a = [1, 2, 3, 0]: mean 1.5, sd = sqrt((0.25+0.25+2.25+2.25)/3) = sqrt(5/3),
  // t = 1.5 / (sqrt(5/3)/2) = 2.3237900077244502. For df = 3 the two-sided p is
  // 1 - (2/pi) * (atan(x) + x/(1+x^2)) with x = t/sqrt(3).
  const r = pairedTTest([1, 2, 3, 4], [2, 4, 6, 4]);
  const t = 1.5 / (Math.sqrt(5 / 3) / 2);
  const x = t / Math.sqrt(3);
  near(r.t, t, 1e-12);
  near(r.p, 1 - (2 / Math.PI) * (Math.atan(x) + x / (1 + x * x)), 1e-10);
  near(r.p, 0.10272807885839899, 1e-10); // SciPy, same data
});

test('t-test degenerate cases: identical systems p = 1, constant shift p = 0, n < 2 p = 1', () => {
  assert.equal(pairedTTest([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]).p, 1);
  assert.equal(pairedTTest([0.1, 0.2, 0.3], [0.2, 0.3, 0.4]).p, 0);
  assert.equal(pairedTTest([0.5], [0.9]).p, 1);
  assert.throws(() => pairedTTest([1, 2], [1]), RangeError);
});

test('randomization test: exact enumeration matches an independent count of all 2^10 sign flips', () => {
  const r = randomizationTest(A10, B10);
  assert.equal(r.exact, true);
  assert.equal(r.permutations, 1024);
  assert.equal(r.p, 10 / 1024);
});

test('randomization test: hand-countable exact case', () => {
  // d = [1, 1, -1]: sums over the 8 sign vectors are +-3 (2 of them) and +-1 (6); |sum| >= 1 always.
  assert.equal(randomizationTest([0, 0, 1], [1, 1, 0]).p, 1);
  // d = [1, 2, 3]: |sum| >= 6 only for all + or all - -> 2/8.
  assert.equal(randomizationTest([0, 0, 0], [1, 2, 3]).p, 2 / 8);
  // zero differences do not change p: d = [1, 2, 3, 0, 0]
  assert.equal(randomizationTest([0, 0, 0, 5, 5], [1, 2, 3, 5, 5]).p, 2 / 8);
  assert.equal(randomizationTest([0.3, 0.4], [0.3, 0.4]).p, 1);
});

test('randomization test: Monte-Carlo (n = 30 > 20) is seeded and close to the exact DP value', () => {
  const exact = 595336 / 2 ** 30;
  const r = randomizationTest(A30, B30);
  assert.equal(r.exact, false);
  assert.equal(r.permutations, 10000);
  near(r.p, exact, 0.001, 'default 10000 draws');
  assert.equal(randomizationTest(A30, B30).p, r.p, 'same seed, same p');
  const big = randomizationTest(A30, B30, { iterations: 200000, seed: 7 });
  near(big.p, exact, 2.5e-4, '200000 draws (about 5 standard errors)');
  // forcing Monte-Carlo on the n = 10 sample agrees with its exact value
  near(randomizationTest(A10, B10, { exactMaxN: 0, iterations: 50000 }).p, 10 / 1024, 0.003);
});

test('bootstrap CI: seeded, brackets the mean, agrees with SciPy percentile bootstrap', () => {
  const ci = bootstrapCI(A30, B30);
  near(ci.mean, 0.06346666666666669, 1e-12);
  assert.ok(ci.low < ci.mean && ci.mean < ci.high);
  near(ci.low, 0.032366666666666676, 0.004);
  near(ci.high, 0.0949, 0.004);
  assert.deepEqual(bootstrapCI(A30, B30), ci, 'same seed, same interval');
  assert.notDeepEqual(bootstrapCI(A30, B30, { seed: 1 }), ci, 'another seed, another draw');
  const wide = bootstrapCI(A30, B30, { confidence: 0.99 });
  assert.ok(wide.low < ci.low && wide.high > ci.high, '99% is wider than 95%');
  assert.deepEqual(bootstrapCI([0.2, 0.2], [0.5, 0.5]), { mean: 0.3, low: 0.3, high: 0.3 });
});

test('holm: step-down adjustment in input order (hand-worked)', () => {
  // sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> running max 0.06
  const adj = holm([0.01, 0.04, 0.03, 0.005]);
  const want = [0.03, 0.06, 0.06, 0.02];
  adj.forEach((p, i) => near(p, want[i]!, 1e-15));
  assert.deepEqual(holm([0.5, 0.7]), [1, 1]);
  assert.deepEqual(holm([0.2]), [0.2]);
  assert.deepEqual(holm([]), []);
});

test('compareRuns returns the contract fields', () => {
  const c = compareRuns(A10, B10);
  assert.deepEqual(Object.keys(c).sort(), ['baseline_mean', 'ci_high', 'ci_low', 'diff', 'losses', 'mean', 'p_randomization', 'p_ttest', 'ties', 'wins']);
  near(c.baseline_mean, 0.532, 1e-12);
  near(c.mean, 0.588, 1e-12);
  near(c.diff, 0.056, 1e-12);
  assert.equal(c.p_randomization, 10 / 1024);
  near(c.p_ttest, 0.004404838762275414, 1e-12);
  // b > a in 8 queries, b < a in 2 (0.31 -> 0.29 and 0.90 -> 0.88)
  assert.deepEqual([c.wins, c.ties, c.losses], [8, 0, 2]);
  assert.ok(c.ci_low <= c.diff && c.diff <= c.ci_high);
});

test('compareVectors pairs by query id, Holm-adjusts across comparisons, and refuses mismatched queries', () => {
  const vec = (xs: number[], order = xs.map((_, i) => i)) => new Map(order.map((i) => [`q${i}`, xs[i]!]));
  const reversed = [...A10.keys()].reverse();
  const res = compareVectors([
    { name: 'base', perQuery: vec(A10) },
    { name: 'cand', perQuery: vec(B10, reversed) }, // insertion order must not matter
    { name: 'same', perQuery: vec(A10) },
  ]);
  assert.equal(res.baseline, 'base');
  assert.equal(res.queries.length, 10);
  const [cand, same] = res.comparisons as [(typeof res.comparisons)[0], (typeof res.comparisons)[0]];
  assert.equal(cand.run, 'cand');
  assert.equal(cand.p_randomization, 10 / 1024);
  assert.equal(cand.p_holm, Math.min(1, 2 * (10 / 1024)), 'smallest of two p-values is doubled');
  assert.equal(same.p_randomization, 1);
  assert.equal(same.p_holm, 1);
  assert.deepEqual([same.wins, same.ties, same.losses], [0, 10, 0]);

  const short = new Map([...vec(B10)].slice(0, 8));
  assert.throws(() => compareVectors([{ name: 'base', perQuery: vec(A10) }, { name: 'cand', perQuery: short }]), /'cand' lacks q8, q9/);
  const inter = compareVectors([{ name: 'base', perQuery: vec(A10) }, { name: 'cand', perQuery: short }], { missing: 'intersect' });
  assert.equal(inter.queries.length, 8);
  const zero = compareVectors([{ name: 'base', perQuery: vec(A10) }, { name: 'cand', perQuery: short }], { missing: 'zero' });
  assert.equal(zero.queries.length, 10);
  near(zero.comparisons[0]!.mean, (B10.slice(0, 8).reduce((s, x) => s + x, 0)) / 10, 1e-12);
  assert.throws(() => compareVectors([{ name: 'base', perQuery: vec(A10) }]), /at least two/);
});

test('mulberry32 is deterministic and uniform enough', () => {
  const r1 = mulberry32(42);
  const r2 = mulberry32(42);
  const xs = Array.from({ length: 10000 }, () => r1());
  assert.deepEqual(xs.slice(0, 5), Array.from({ length: 5 }, () => r2()));
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  near(m, 0.5, 0.02);
  assert.ok(xs.every((x) => x >= 0 && x < 1));
});
