/**
 * Baseline (seed 004): a committed snapshot of per-query scores together with the configuration it
 * reflects, and the delta of a new run against it: which queries regressed, which improved.
 *
 * A query regressed when any watched score went down (DES-058 Recall@3, MRR@10, Recall@10 (trec), routing),
 * improved when some went up and none went down. Written atomically (temp file + rename).
 */
import { readFileSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import type { Column } from './results.ts';
import type { Des058Report } from './report.ts';

export interface BaselineQuery {
  category: string;
  recall_at_3: number | null;
  mrr: number | null;
  trec_recall_at_10: number | null;
  routing_ok: number | null;
}

export interface Baseline {
  rankgate_baseline: 1;
  created: string;
  column: string;
  /** The configuration the numbers reflect: provider id, label and every provider config field. */
  config: Record<string, unknown>;
  summary: { total_queries: number; overall_recall_at_3: number | null; overall_mrr_at_10: number | null; categories: Des058Report['categories'] };
  queries: Record<string, BaselineQuery>;
}

const WATCHED = ['recall_at_3', 'mrr', 'trec_recall_at_10', 'routing_ok'] as const;

export function baselineFrom(col: Column, report: Des058Report): Baseline {
  const queries: Record<string, BaselineQuery> = {};
  for (const q of col.queries) {
    queries[q.id] = {
      category: q.category,
      recall_at_3: q.retrieval?.recall_at_3 ?? null,
      mrr: q.retrieval ? Math.round(q.retrieval.mrr * 1e6) / 1e6 : null,
      trec_recall_at_10: q.retrieval ? Math.round(q.retrieval.trec_recall_at_10 * 1e6) / 1e6 : null,
      routing_ok: q.routing ? (q.routing.ok ? 1 : 0) : null,
    };
  }
  return {
    rankgate_baseline: 1,
    created: report.timestamp,
    column: col.label,
    config: report.config,
    summary: {
      total_queries: report.total_queries,
      overall_recall_at_3: report.overall_recall_at_3,
      overall_mrr_at_10: report.overall_mrr_at_10,
      categories: report.categories,
    },
    queries,
  };
}

export function readBaseline(path: string): Baseline {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(`${path}: cannot read the baseline (${code ?? (e as Error).message})`);
  }
  const b = doc as Partial<Baseline>;
  if (!b || b.rankgate_baseline !== 1 || typeof b.queries !== 'object' || b.queries === null) {
    throw new UserError(`${path}: not a rankgate baseline (expected "rankgate_baseline": 1 and a "queries" map; write one with \`rankgate gate RESULTS.json --update-baseline\`)`);
  }
  return b as Baseline;
}

export function writeBaseline(path: string, b: Baseline): void {
  writeFileAtomic(path, JSON.stringify(b, null, 2) + '\n');
}

export interface QueryChange {
  id: string;
  category: string;
  changes: Record<string, [number | null, number | null]>;
}

export interface BaselineDelta {
  baseline_created: string;
  baseline_column: string;
  overall_recall_at_3: [number | null, number | null];
  overall_mrr_at_10: [number | null, number | null];
  categories: Record<string, { recall_at_3?: [number | null, number | null]; routing_accuracy?: [number | null, number | null] }>;
  regressed: QueryChange[];
  improved: QueryChange[];
  unchanged: number;
  added: string[];
  removed: string[];
}

export function compareWithBaseline(b: Baseline, col: Column, report: Des058Report): BaselineDelta {
  const now = baselineFrom(col, report).queries;
  const regressed: QueryChange[] = [];
  const improved: QueryChange[] = [];
  let unchanged = 0;
  for (const [id, cur] of Object.entries(now).sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
    const old = b.queries[id];
    if (!old) continue;
    const changes: QueryChange['changes'] = {};
    let down = false;
    let up = false;
    for (const k of WATCHED) {
      const a = old[k] ?? null;
      const c = cur[k] ?? null;
      if (a === null || c === null || Math.abs(a - c) < 1e-9) continue;
      changes[k] = [a, c];
      if (c < a) down = true;
      else up = true;
    }
    if (down) regressed.push({ id, category: cur.category, changes });
    else if (up) improved.push({ id, category: cur.category, changes });
    else unchanged++;
  }
  const cats: BaselineDelta['categories'] = {};
  for (const cat of new Set([...Object.keys(b.summary?.categories ?? {}), ...Object.keys(report.categories)])) {
    const o = b.summary?.categories?.[cat];
    const n = report.categories[cat];
    cats[cat] = {};
    if (o?.recall_at_3 !== undefined || n?.recall_at_3 !== undefined) cats[cat]!.recall_at_3 = [o?.recall_at_3 ?? null, n?.recall_at_3 ?? null];
    if (o?.routing_accuracy !== undefined || n?.routing_accuracy !== undefined)
      cats[cat]!.routing_accuracy = [o?.routing_accuracy ?? null, n?.routing_accuracy ?? null];
  }
  return {
    baseline_created: b.created,
    baseline_column: b.column,
    overall_recall_at_3: [b.summary?.overall_recall_at_3 ?? null, report.overall_recall_at_3],
    overall_mrr_at_10: [b.summary?.overall_mrr_at_10 ?? null, report.overall_mrr_at_10],
    categories: cats,
    regressed,
    improved,
    unchanged,
    added: Object.keys(now).filter((id) => !b.queries[id]).sort(),
    removed: Object.keys(b.queries).filter((id) => !now[id]).sort(),
  };
}
