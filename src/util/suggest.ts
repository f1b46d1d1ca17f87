/**
 * "Did you mean" for unknown keys, values and options. Pure; no I/O.
 *
 * A candidate is suggested when its Damerau-Levenshtein distance (adjacent transpositions count as one edit)
 * to the word, compared case-insensitively with `-`/`_` treated alike, is at most max(1, floor(len / 3)) and 3;
 * the closest wins, ties by the candidates' order.
 */

/** Optimal-string-alignment distance (Damerau-Levenshtein restricted to non-overlapping transpositions). */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length;
  const m = b.length;
  if (!n) return m;
  if (!m) return n;
  let prev2: number[] = new Array(m + 1).fill(0);
  let prev: number[] = Array.from({ length: m + 1 }, (_, j) => j);
  let cur: number[] = new Array(m + 1).fill(0);
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    for (let j = 1; j <= m; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2]! + 1);
      cur[j] = v;
    }
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[m]!;
}

const norm = (s: string) => s.toLowerCase().replace(/-/g, '_');

/** The closest candidate within the distance limit, or undefined. */
export function suggest(word: string, candidates: Iterable<string>): string | undefined {
  const w = norm(word);
  const limit = Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(w, norm(c));
    if (d < bestD && d <= limit) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

/** `; did you mean 'x'?` or '' */
export function didYouMean(word: string, candidates: Iterable<string>, quote = "'"): string {
  const s = suggest(word, candidates);
  return s === undefined ? '' : `; did you mean ${quote}${s}${quote}?`;
}

/**
 * One line for an unknown key: `FILE: WHERE: unknown key 'rrfk'; did you mean 'rrfK'? (valid: a, b, c)`.
 * `where` may be '' (the root).
 */
export function unknownKeyMessage(file: string, where: string, key: string, valid: readonly string[]): string {
  const loc = where ? `${where}: ` : '';
  return `${file}: ${loc}unknown key '${key}'${didYouMean(key, valid)} (valid: ${[...valid].sort().join(', ')})`;
}

/** One line for an unknown value: `FILE: WHERE: 'hybird' is not a valid FIELD; did you mean 'hybrid'? (valid: ...)`. */
export function unknownValueMessage(file: string, where: string, value: string, valid: readonly string[]): string {
  const loc = where ? `${where}: ` : '';
  return `${file}: ${loc}'${value}' is not valid${didYouMean(value, valid)} (valid: ${valid.join(', ')})`;
}
