/** Small vector helpers shared by the embedders and the similarity judge. */

/** L2-normalise a vector (returns a new array). The zero vector stays zero rather than becoming NaN. */
export function l2normalize(v: ArrayLike<number>): number[] {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  const n = Math.sqrt(s);
  const out = new Array<number>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = n > 0 ? v[i]! / n : 0;
  return out;
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
