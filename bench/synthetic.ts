/**
 * Synthetic corpus, queries and a free hashing embedder for the benchmarks (bench/search.ts, bench/shard.ts):
 * deterministic documents (seeded PRNG) of ~110 words from a Zipf-distributed vocabulary of 30,000 pseudo-words,
 * one ~300-token chunk each, so the figures measure storage, index, search and harness costs, not an embedder.
 */
import { createHash } from 'node:crypto';
import type { Embedder } from '../src/embeddings/types.ts';
import type { CorpusDocument } from '../src/ingest/types.ts';

export function mulberry32(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYL = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'te', 'vi', 'zo', 'ba', 'de', 'fu', 'gi', 'ho', 'ju', 'pe', 'qui', 'ra', 'so', 'tu'];
function vocabulary(n: number, rnd: () => number): string[] {
  const words = new Set<string>();
  while (words.size < n) {
    const len = 2 + Math.floor(rnd() * 3);
    let w = '';
    for (let i = 0; i < len; i++) w += SYL[Math.floor(rnd() * SYL.length)];
    words.add(w);
  }
  return [...words];
}

/** Zipf(s=1) sampler over ranks 0..n-1 by inverse CDF on precomputed cumulative weights. */
function zipf(n: number, rnd: () => number): () => number {
  const cum = new Float64Array(n);
  let s = 0;
  for (let i = 0; i < n; i++) cum[i] = s += 1 / (i + 1);
  return () => {
    const x = rnd() * s;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export interface SyntheticCorpus {
  docs: CorpusDocument[];
  /** 220 free-text queries of 3-5 content words (ranks 100..10,000, skewed to the frequent end). */
  queries: string[];
  vocab: string[];
}

export function corpus(size: number): SyntheticCorpus {
  const rnd = mulberry32(42);
  const vocab = vocabulary(30_000, rnd);
  const draw = zipf(vocab.length, rnd);
  const docs: CorpusDocument[] = [];
  for (let d = 0; d < size; d++) {
    const sentences: string[] = [];
    for (let s = 0; s < 10; s++) {
      const n = 8 + Math.floor(rnd() * 6);
      const ws = Array.from({ length: n }, () => vocab[draw()]);
      sentences.push(ws.join(' ') + '.');
    }
    docs.push({ id: `syn-${String(d).padStart(6, '0')}`, title: `doc ${d}`, language: 'en', tags: [], metadata: {}, sections: [{ text: sentences.join(' ') }] } as CorpusDocument);
  }
  const queries: string[] = [];
  const qr = mulberry32(7);
  for (let i = 0; i < 220; i++) {
    const n = 3 + Math.floor(qr() * 3);
    // content words: ranks 100..10,000 skewed to the frequent end (the top 100 ranks play the stop words
    // that a real text-search config drops)
    queries.push(Array.from({ length: n }, () => vocab[100 + Math.floor(qr() * qr() * 9900)]).join(' '));
  }
  return { docs, queries, vocab };
}

/**
 * NQ-style golden queries: one question per answer document, like Natural Questions (one answer passage each):
 * query i asks with 4 of its document's less frequent words (vocabulary rank >= 100), in a shuffled order.
 */
export function nqStyleQueries(c: SyntheticCorpus, n: number): { id: string; text: string; docId: string }[] {
  const rank = new Map(c.vocab.map((w, i) => [w, i]));
  const rnd = mulberry32(2026);
  const out: { id: string; text: string; docId: string }[] = [];
  const step = Math.max(1, Math.floor(c.docs.length / n));
  for (let i = 0; i < n; i++) {
    const doc = c.docs[(i * step) % c.docs.length]!;
    const words = [...new Set((doc as unknown as { sections: { text: string }[] }).sections[0]!.text.replace(/\./g, '').split(' '))].filter((w) => (rank.get(w) ?? 0) >= 100);
    const picked: string[] = [];
    while (picked.length < Math.min(4, words.length)) {
      const w = words[Math.floor(rnd() * words.length)]!;
      if (!picked.includes(w)) picked.push(w);
    }
    out.push({ id: `nqs-${String(i).padStart(6, '0')}`, text: picked.join(' '), docId: doc.id });
  }
  return out;
}

/** A hashing bag-of-words embedder: `dimension` dims, free to compute (the benchmarks' stand-in for a model). */
export class HashEmbedder implements Embedder {
  readonly id: string;
  readonly maxBatch = 256;
  constructor(readonly dimension: number) {
    this.id = `bench-hash-${dimension}`;
  }
  private vec(t: string): number[] {
    const v = new Array<number>(this.dimension).fill(0);
    for (const w of t.toLowerCase().split(/[^a-z]+/)) {
      if (!w) continue;
      const h = createHash('md5').update(w).digest();
      v[h.readUInt32LE(0) % this.dimension] += h[4]! & 1 ? 1 : -1;
    }
    return v;
  }
  async embedDocuments(t: string[]) {
    return t.map((x) => this.vec(x));
  }
  async embedQuery(t: string) {
    return this.vec(t);
  }
}

/**
 * A promptfoo config (YAML) of the user's default harness over `providers` (YAML list items), as bench/shard.ts and
 * bench/gate-rss.ts run it: the repository's tests loader (golden set from RANKGATE_GOLDEN), the rank assertion at
 * passAt 3, the derived means and the gate hooks with the gate off (the benchmarks gate the results themselves).
 */
export function harnessConfigYaml(root: string, description: string, providers: string, maxConcurrency: number): string {
  return `description: ${description}
prompts: ['{{query}}']
providers:
${providers}
tests: file://${root}/datasets/tests.ts
defaultTest:
  assert:
    - type: javascript
      value: file://${root}/assertions/rank.ts:rank
      config: { passAt: 3 }
derivedMetrics:
  - { name: avg_recall_at_3, value: recall_at_3 / n_ranked }
  - { name: avg_mrr, value: mrr / n_ranked }
  - { name: avg_ndcg_at_10, value: ndcg_at_10 / n_ranked }
extensions:
  - file://${root}/assertions/gate.ts:beforeAll
  - file://${root}/assertions/gate.ts:afterEach
  - file://${root}/assertions/gate.ts:afterAll
env:
  PROMPTFOO_PASS_RATE_THRESHOLD: '0'
  RANKGATE_GATE: 'off'
evaluateOptions:
  maxConcurrency: ${maxConcurrency}
`;
}
