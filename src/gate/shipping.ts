/**
 * The blind-test framework's shipping criteria for a candidate column against a baseline column of the same results
 * (queries matched by golden id; only queries with a relevant reference count for Recall@10):
 *   1. mean Recall@10 (trec_eval recall_10) improves by at least 10 percentage points;
 *   2. fewer than 20% of queries regress on Recall@10;
 *   3. no slice (category, and each tag with at least `minSlice` queries) loses more than 5 points of mean Recall@10;
 *   4. human blind review prefers the candidate by 0.5 on a 1-5 scale: from a review result of the same two columns
 *      (`rankgate review import`, src/review: pooled mean preference >= 0.5, re-derived from its key and ratings files),
 *      else not evaluated with the way to run the review (never passed on missing or partial ratings, a judge's, or
 *      a result that does not re-derive);
 *   5. p95 latency <= min(3 x baseline p95, 2500 ms), on the whole pipeline: each query's latencyMs is the provider's
 *      time for the search (rankgate's service in its worker: first stage, rerank stage and routing; a url: service: the
 *      round trip), so a reranker's time counts; a reranked column's detail also gives its rerank stage's own p95. Over
 *      each column's MEASURED queries only: an errored query's wait (a timeout, a dead reranker's retries) is not a
 *      latency of the search ("p95 over 9 measured queries; 3 errored left out"); a candidate whose rerank or expansion
 *      was read from its cache says so beside the figure (`cache: 13 of 13`: those stages cost no call).
 * Errored queries (service down, timeout, bad response) are never counted as regressions: they are left out of
 * every other criterion and reported by the criterion "no errored queries" (no ship while any query errored), so a dead service is "K of N queries
 * errored", not "20 of 21 queries regress".
 */
import type { Column, QueryRecord } from '../results/read.ts';
import { mean, measuredNote, percentile } from '../results/summary.ts';
import { reviewCriterion, type LoadedReview } from '../review/evidence.ts';

export interface Criterion {
  name: string;
  passed: boolean | null;
  detail: string;
}

export interface ShippingVerdict {
  baseline: string;
  candidate: string;
  queries: number;
  criteria: Criterion[];
  /** true when no criterion failed and every automatable one passed (criterion 4 counts once a human review of the pair is given). */
  ship: boolean;
  /** Errored queries of each column, left out of the criteria (and no ship while there are any). */
  errors: { baseline: number; candidate: number; reasons: string[] };
}

const pts = (x: number) => `${(x * 100).toFixed(1)} pts`;

/** " · whole pipeline; its rerank stage p95 X ms (cache: 13 of 13)" for a reranked column, '' otherwise. */
function rerankP95(c: Column): string {
  const rq = c.queries.filter((q) => q.error === null && q.rerank);
  const ms = rq.map((q) => q.rerank!.ms).filter((x): x is number => typeof x === 'number');
  const p = percentile(ms, 95);
  const cached = rq.filter((q) => (q.rerank!.cached ?? 0) > 0 && q.rerank!.requests === 0).length;
  return p === null ? '' : ` · whole pipeline; its rerank stage p95 ${p.toFixed(1)} ms${cached ? ` (cache: ${cached} of ${rq.length})` : ''}`;
}

/** "; its expansion from the cache: 16 of 16" when the column's model expansion was read from the cache, '' otherwise. */
function expansionCached(c: Column): string {
  const rows = c.queries.filter((q) => q.error === null && q.expansion?.source === 'llm');
  const cached = rows.filter((q) => q.expansion!.cached).length;
  return cached ? `; its expansion from the cache: ${cached} of ${rows.length}` : '';
}

/** The measured queries' latencies of a column (an errored row's wait is not one), and how many errored. */
function latencies(c: Column): { ms: number[]; measured: number; errored: number } {
  const measured = c.queries.filter((q) => q.error === null);
  return { ms: measured.map((q) => q.latencyMs).filter((x): x is number => x !== null), measured: measured.length, errored: c.queries.length - measured.length };
}

export function shippingCriteria(baseline: Column, candidate: Column, opts: { minSlice?: number; reviews?: readonly LoadedReview[]; resultsPath?: string } = {}): ShippingVerdict {
  const minSlice = opts.minSlice ?? 3;
  const review = reviewCriterion(opts.reviews ?? [], baseline, candidate, { resultsPath: opts.resultsPath });
  const cand = new Map(candidate.queries.map((q) => [q.id, q]));
  const pairs: [QueryRecord, QueryRecord][] = [];
  for (const a of baseline.queries) {
    const b = cand.get(a.id);
    if (b && a.error === null && b.error === null && a.retrieval && b.retrieval) pairs.push([a, b]);
  }
  const errA = baseline.queries.filter((q) => q.error !== null);
  const errB = candidate.queries.filter((q) => q.error !== null);
  const reasons = [...new Set([...errA, ...errB].map((q) => (q.error ?? '').split('\n')[0]!))].slice(0, 3);
  const r10 = (q: QueryRecord) => q.retrieval!.trec_recall_at_10;
  const ma = mean(pairs.map(([a]) => r10(a))) ?? 0;
  const mb = mean(pairs.map(([, b]) => r10(b))) ?? 0;
  const gain = mb - ma;
  const regress = pairs.filter(([a, b]) => r10(b) < r10(a) - 1e-12).length;
  const share = pairs.length ? regress / pairs.length : 0;

  const slices = new Map<string, [QueryRecord, QueryRecord][]>();
  for (const p of pairs) {
    const keys = [`category:${p[0].category}`, ...p[0].tags.map((t) => `tag:${t}`)];
    for (const k of keys) {
      const s = slices.get(k);
      if (s) s.push(p);
      else slices.set(k, [p]);
    }
  }
  const worst: { slice: string; drop: number }[] = [];
  for (const [slice, ps] of slices) {
    if (slice.startsWith('tag:') && ps.length < minSlice) continue;
    const drop = (mean(ps.map(([a]) => r10(a))) ?? 0) - (mean(ps.map(([, b]) => r10(b))) ?? 0);
    worst.push({ slice, drop });
  }
  worst.sort((x, y) => y.drop - x.drop || (x.slice < y.slice ? -1 : 1));
  const badSlices = worst.filter((w) => w.drop > 0.05 + 1e-12);

  const la = latencies(baseline);
  const lb = latencies(candidate);
  const pa = percentile(la.ms, 95);
  const pb = percentile(lb.ms, 95);
  const budget = pa === null ? null : Math.min(3 * pa, 2500);
  const over = (l: ReturnType<typeof latencies>) => measuredNote(l.measured, l.errored);
  const overBoth = [over(la) && `baseline p95 ${over(la)}`, over(lb) && `candidate p95 ${over(lb)}`].filter(Boolean).join(' · ');

  const criteria: Criterion[] = [
    {
      name: 'Recall@10 +10 points',
      passed: pairs.length ? gain >= 0.1 - 1e-12 : null,
      detail: `mean Recall@10 ${ma.toFixed(4)} -> ${mb.toFixed(4)} (${gain >= 0 ? '+' : ''}${pts(gain)}) over ${pairs.length} queries`,
    },
    {
      name: 'fewer than 20% of queries regress',
      passed: pairs.length ? share < 0.2 : null,
      detail: `${regress} of ${pairs.length} queries regress on Recall@10 (${(share * 100).toFixed(1)}%)`,
    },
    {
      name: 'no slice down more than 5 points',
      passed: worst.length ? badSlices.length === 0 : null,
      detail: badSlices.length
        ? `down: ${badSlices.map((w) => `${w.slice} -${pts(w.drop)}`).join(', ')}`
        : worst.length
          ? worst[0]!.drop > 0
            ? `largest drop: ${worst[0]!.slice.replace(':', ' ')} -${pts(worst[0]!.drop)}`
            : 'no slice dropped'
          : 'no slices',
    },
    { name: 'human blind review +0.5 (1-5 scale)', passed: review.passed, detail: review.detail },
    {
      name: 'p95 latency <= min(3x baseline, 2500 ms)',
      passed: pb === null || budget === null ? null : pb <= budget,
      detail: `p95 ${pa?.toFixed(1) ?? 'n/a'} ms -> ${pb?.toFixed(1) ?? 'n/a'} ms (budget ${budget?.toFixed(1) ?? 'n/a'} ms)${overBoth ? ` · ${overBoth}` : ''}${rerankP95(candidate)}${expansionCached(candidate)}`,
    },
    {
      name: 'no errored queries',
      passed: errA.length + errB.length === 0,
      detail:
        errA.length + errB.length === 0
          ? 'no errored queries'
          : `${errB.length} of ${candidate.queries.length} candidate and ${errA.length} of ${baseline.queries.length} baseline queries errored (left out of the criteria, not counted as regressions): ${reasons.join('; ')}`,
    },
  ];
  return {
    baseline: baseline.label,
    candidate: candidate.label,
    queries: pairs.length,
    criteria,
    ship: criteria.every((c) => c.passed !== false) && criteria.filter((c) => c.passed === true).length >= 5,
    errors: { baseline: errA.length, candidate: errB.length, reasons },
  };
}
