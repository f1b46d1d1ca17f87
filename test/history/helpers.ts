/**
 * A generated git repository whose committed baseline has a known history (test/history/*.test.ts, the history bench):
 * baselines written by hand as `rankgate gate --update-baseline` writes them (self-consistent summary, golden
 * selection identity, sealed), committed with fixed dates.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeBaseline, type Baseline, type BaselineQuery } from '../../src/gate/baseline.ts';
import { selectionIdentity } from '../../src/golden/testcases.ts';

/** One query of a generated baseline: a hit (Success@3 1, MRR@10 1: rank 1) or a miss (0 and 0.25: rank 4). */
export const hit = (category: string): BaselineQuery => ({ category, recall_at_3: 1, mrr: 1, trec_recall_at_10: null, routing_ok: null, ndcg_at_10: null });
export const miss = (category: string): BaselineQuery => ({ category, recall_at_3: 0, mrr: 0.25, trec_recall_at_10: null, routing_ok: null, ndcg_at_10: null });

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
function meanOf(qs: BaselineQuery[], k: 'recall_at_3' | 'mrr' | 'routing_ok'): number | null {
  const v = qs.map((q) => q[k]).filter((x): x is number => typeof x === 'number');
  return v.length ? r4(v.reduce((a, x) => a + x, 0) / v.length) : null;
}

/** The summary a baseline of these entries holds (as src/results/summary.ts rounds it). */
export function summaryOf(queries: Record<string, BaselineQuery>): Baseline['summary'] {
  const all = Object.values(queries);
  const cats: Baseline['summary']['categories'] = {};
  for (const c of [...new Set(all.map((q) => q.category))].sort()) {
    const qs = all.filter((q) => q.category === c);
    const e: Record<string, number> = { count: qs.length };
    for (const [k, name] of [['recall_at_3', 'recall_at_3'], ['mrr', 'mrr_at_10'], ['routing_ok', 'routing_accuracy']] as const) {
      const m = meanOf(qs, k);
      if (m !== null) e[name] = m;
    }
    cats[c] = e as unknown as Baseline['summary']['categories'][string];
  }
  return { total_queries: all.length, overall_recall_at_3: meanOf(all, 'recall_at_3'), overall_mrr_at_10: meanOf(all, 'mrr'), categories: cats };
}

/** A baseline of these per-query entries, measured on corpus `corpusId`, with the provider config `config`. */
export function makeBaseline(queries: Record<string, BaselineQuery>, opts: { corpusId: string; corpus?: string; config?: Record<string, unknown>; created?: string; extra?: Record<string, unknown> }): Baseline {
  const sel = selectionIdentity(Object.keys(queries).map((id) => ({ id })));
  return {
    rankgate_baseline: 1,
    created: opts.created ?? '2026-08-01T00:00:00.000Z',
    column: 'hybrid rrf60 c300 use-lite',
    config: opts.config ?? { provider: 'file://providers/search.ts', corpus: opts.corpus ?? 'help', topK: 10 },
    summary: summaryOf(queries),
    queries,
    identity: { engine: 'pglite', variant: 'c300:use-lite', corpusId: opts.corpusId, corpus: opts.corpus ?? 'help', selection: { id: sel.id, size: sel.size } },
    ...(opts.extra ?? {}),
  } as Baseline;
}

export function git(dir: string, args: string[], env: Record<string, string> = {}): string {
  const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Dana', GIT_AUTHOR_EMAIL: 'dana@example.com', GIT_COMMITTER_NAME: 'Dana', GIT_COMMITTER_EMAIL: 'dana@example.com', ...env } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A new repository at `dir` with gate.yaml naming config/search-baseline.json (max_drop 0.02, alpha 0.05). */
export function initRepo(dir: string, gateYaml = 'version: 1\noverall: { recall_at_3: 0.5 }\nregression:\n  baseline: config/search-baseline.json\n  max_drop: 0.02\n  alpha: 0.05\n'): void {
  mkdirSync(join(dir, 'config'), { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  writeFileSync(join(dir, 'config', 'gate.yaml'), gateYaml);
  git(dir, ['add', 'config/gate.yaml']);
  git(dir, ['commit', '-q', '-m', 'gate floors'], { GIT_AUTHOR_DATE: '2026-07-01T09:00:00Z', GIT_COMMITTER_DATE: '2026-07-01T09:00:00Z' });
}

/** Write the baseline and commit it at `date`; returns the commit id. */
export function commitBaseline(dir: string, b: Baseline, date: string, subject: string): string {
  writeBaseline(join(dir, 'config', 'search-baseline.json'), b);
  git(dir, ['add', 'config/search-baseline.json']);
  git(dir, ['commit', '-q', '-m', subject], { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
  return git(dir, ['rev-parse', 'HEAD']);
}

const ids = (prefix: string, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${String(from + i).padStart(2, '0')}`);

/**
 * The issue's repository: 12 baseline commits. 45 queries (a01-a20, b01-b25), then the golden set gains a21-a25 (50).
 * The drift: c7..c12 each lose one query of the 50 (Success@3 -2.0 pts, MRR@10 -1.5 pts each), each passing its own
 * pull request's check (a drop of 2.0 pts is not beyond max_drop 2.0, p 1.0).
 *
 *   c1  2026-08-03  45 queries, misses a01-a04 b01-b05             S@3 36/45 = 0.8000   corpus C1
 *   c2  2026-08-10  corpus changed (C2); b05 now a hit             S@3 37/45 = 0.8222
 *   c3  2026-08-17  golden set + a21-a25 (a21, a22 misses)         S@3 40/50 = 0.8000
 *   c4  2026-08-24  provider config topK 10 -> 20, same values     0.8000
 *   c5  2026-08-31  re-baselined, same values                      0.8000
 *   c6  2026-09-07  re-baselined, same values                      0.8000
 *   c7..c12  2026-09-14 .. 2026-10-19, weekly: a05, b06, a06, b07, a07, b08 lost   0.78 .. 0.68
 */
export function issueRepo(dir: string): { commits: string[]; dates: string[]; lost: string[] } {
  initRepo(dir);
  const base45 = [...ids('a', 1, 20), ...ids('b', 1, 25)];
  const misses = new Set(['a01', 'a02', 'a03', 'a04', 'b01', 'b02', 'b03', 'b04', 'b05']);
  const make = (list: string[]) => Object.fromEntries(list.map((id) => [id, misses.has(id) ? miss(id[0]!) : hit(id[0]!)]));
  const dates = ['2026-08-03', '2026-08-10', '2026-08-17', '2026-08-24', '2026-08-31', '2026-09-07', '2026-09-14', '2026-09-21', '2026-09-28', '2026-10-05', '2026-10-12', '2026-10-19'].map((d) => `${d}T10:00:00Z`);
  const commits: string[] = [];
  let corpusId = 'c1c1c1c1c1c1c1c1';
  let config: Record<string, unknown> = { provider: 'file://providers/search.ts', corpus: 'help', topK: 10 };
  let list = base45;
  const lost = ['a05', 'b06', 'a06', 'b07', 'a07', 'b08'];
  const subjects = ['first baseline', 'corpus: rewrite the reset-password article', 'golden set: five more account queries', 'search: topK 20', 're-baseline after the dependency bump', 're-baseline', ...lost.map((q, i) => `tune ranking #${101 + i} (loses ${q})`)];
  for (let i = 0; i < 12; i++) {
    if (i === 1) {
      corpusId = 'c2c2c2c2c2c2c2c2';
      misses.delete('b05');
    }
    if (i === 2) {
      list = [...base45, ...ids('a', 21, 25)];
      misses.add('a21').add('a22');
    }
    if (i === 3) config = { ...config, topK: 20 };
    if (i >= 6) misses.add(lost[i - 6]!);
    commits.push(commitBaseline(dir, makeBaseline(make(list), { corpusId, config, created: dates[i] }), dates[i]!, subjects[i]!));
  }
  return { commits, dates, lost };
}

const CATEGORIES = ['adversarial', 'conceptual', 'dark_night', 'direct', 'emotional', 'metaphorical', 'technique_boundary'];

/**
 * Per-query entries shaped like the demo's (7 DES-058 categories; routing-only adversarial and technique-boundary
 * queries; ranked ones with Success@3, MRR@10 = 1/rank, nDCG@10, Recall@10), values from a seeded PRNG: the line
 * sizes and the bench. `shift` flips that share of hits into misses (a drifted run).
 */
export function demoLikeQueries(n: number, seed = 7, shift = 0): Record<string, BaselineQuery> {
  let s = seed >>> 0;
  const rnd = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const q: Record<string, BaselineQuery> = {};
  for (let i = 0; i < n; i++) {
    const cat = CATEGORIES[i % CATEGORIES.length]!;
    const id = `en-${cat}-${String(i).padStart(4, '0')}`;
    if (cat === 'adversarial' || cat === 'technique_boundary') {
      q[id] = { category: cat, recall_at_3: null, mrr: null, trec_recall_at_10: null, routing_ok: rnd() < 0.9 ? 1 : 0, ndcg_at_10: null };
      continue;
    }
    let rank = rnd() < 0.6 ? 1 + Math.floor(rnd() * 3) : rnd() < 0.5 ? 4 + Math.floor(rnd() * 7) : 0;
    const ndcg = Math.round(rnd() * 1e6) / 1e6;
    const rec = [1, 0.5, 0.333333, 0.666667][Math.floor(rnd() * 4)]!;
    if (rank >= 1 && rank <= 3 && rnd() < shift) rank = 5;
    q[id] = { category: cat, recall_at_3: rank >= 1 && rank <= 3 ? 1 : 0, mrr: rank ? Math.round(1e6 / rank) / 1e6 : 0, trec_recall_at_10: rank ? rec : 0, routing_ok: 1, ndcg_at_10: rank ? ndcg : 0 };
  }
  return q;
}
