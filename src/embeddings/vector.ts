/** Small vector helpers shared by the embedders and the similarity judge. */

/**
 * L2-normalise a vector (returns a new array), scaled: every value is divided by the largest absolute value first,
 * so values such as 1e200 (whose squares overflow to Infinity) or 1e-200 (whose squares underflow to 0) normalise
 * like any other. The zero vector stays zero rather than becoming NaN.
 */
export function l2normalize(v: ArrayLike<number>): number[] {
  let max = 0;
  for (let i = 0; i < v.length; i++) {
    const a = Math.abs(v[i]!);
    if (a > max) max = a;
  }
  const out = new Array<number>(v.length);
  if (!(max > 0) || !Number.isFinite(max)) {
    for (let i = 0; i < v.length; i++) out[i] = max > 0 ? NaN : 0;
    return out;
  }
  let s = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i]! / max;
    s += x * x;
  }
  const n = Math.sqrt(s);
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / max / n;
  return out;
}

/**
 * Why a vector an embedding API answered cannot be indexed (undefined: it can): not a non-empty list of finite
 * numbers, another dimension than `dimension` (when given), or all zeros (no direction: cosine is undefined and
 * every such text would tie). Overflowing magnitudes are fine: l2normalize scales first.
 */
export function vectorProblem(v: unknown, dimension?: number): string | undefined {
  if (!Array.isArray(v) || v.length === 0) return 'is not a list of finite numbers';
  let nonZero = false;
  for (const x of v) {
    if (typeof x !== 'number' || !Number.isFinite(x)) return 'is not a list of finite numbers';
    if (x !== 0) nonZero = true;
  }
  if (dimension && v.length !== dimension) return `has ${v.length} dimensions, expected ${dimension}`;
  if (!nonZero) return 'is all zeros (no direction to compare)';
  return undefined;
}

/** Bytes of answer allowed per number asked for (a JSON float with its separator and generous indentation). */
const BYTES_PER_VALUE = 96;
/** Dimension assumed for the cap while an unknown model's is not learned yet. */
const UNKNOWN_DIMENSION_FOR_CAP = 16_384;
/** Room for everything around the vectors (usage, model name, object fields). */
const ANSWER_OVERHEAD_BYTES = 1024 * 1024;

/** The largest answer read for a request of `texts` texts of `dimension` values (HTTP APIs and Bedrock; docs/configuration.md). */
export function embedAnswerCap(texts: number, dimension: number): number {
  return ANSWER_OVERHEAD_BYTES + texts * (dimension || UNKNOWN_DIMENSION_FOR_CAP) * BYTES_PER_VALUE;
}


/** Cosine similarity; for L2-normalised vectors this is the dot product. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`cosine: dimension mismatch ${a.length} vs ${b.length}`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}
