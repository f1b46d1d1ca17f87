/**
 * A results column as a point of the series: the scheduled run's history line (`rankgate history append`), and the
 * newest point of the drift a pull request's gate says (`rankgate gate`, the afterAll hook). Its per-query values are
 * what a baseline written from it would hold (src/gate/baseline.ts baselineFrom), so runs and baseline commits
 * compare alike.
 */
import { baselineFrom } from '../gate/baseline.ts';
import type { RegressionConfig } from '../gate/floors.ts';
import type { Column } from '../results/read.ts';
import type { ColumnVerdict } from '../gate/verdict.ts';
import type { Des058Report } from '../results/summary.ts';
import { envFlag } from '../util/env.ts';
import { DRIFT_DAYS, DRIFT_WINDOW, driftReport, type DriftReport } from './drift.ts';
import { historyLine, introducedKeys, blockKey, perQueryOf, pointConfig, summarize, type PerQuery, type PointMeta } from './line.ts';
import { provisionalOf, readSeries, type Point } from './series.ts';

/** What a run's line says besides its numbers (`repo`, `run`, `commit`, `date` and `code` from the caller). */
export function runMeta(col: Column, report: Des058Report, m: Pick<PointMeta, 'repo' | 'run' | 'commit' | 'date' | 'code'>): { meta: PointMeta; pq: PerQuery } {
  const b = baselineFrom(col, report);
  const pq = perQueryOf(b.queries);
  const judge = col.queries.map((q) => q.judgeLabel).find((l): l is string => typeof l === 'string' && l !== 'judge: off') ?? 'judge: off';
  const judgeCost = report.judge_stats?.estimated_cost_usd ?? 0;
  const rr = report.rerank;
  const rerankCost = rr && rr.cost_per_query_usd !== null ? rr.cost_per_query_usd * rr.priced_queries : 0;
  const prov = provisionalOf(report);
  return {
    pq,
    meta: {
      ...m,
      column: col.label,
      corpus: col.identity ? { id: col.identity.corpusId ?? null, path: col.identity.corpus ?? null } : null,
      golden: col.selection ? { id: col.selection.id, size: col.selection.size } : { id: null, size: pq.ids.length },
      config: pointConfig(b),
      judge,
      latency: report.latency_ms.p50 === null && report.latency_ms.p95 === null ? null : { p50: report.latency_ms.p50, p95: report.latency_ms.p95 },
      cost: judgeCost || rerankCost ? Math.round((judgeCost + rerankCost) * 1e6) / 1e6 : null,
      provisional: prov.provisional,
      backlog: prov.backlog,
    },
  };
}

/** The point of a run (`where`: `this run`, or the history line it becomes). */
export function runPoint(meta: PointMeta, pq: PerQuery, where: string): Point {
  return { ...meta, kind: 'run', where, author: null, subject: null, summary: summarize(pq), perQuery: () => pq };
}

/** The history line of a run, given the file it is appended to (its ids block is written unless a readable line has it). */
export function appendedLine(meta: PointMeta, pq: PerQuery, existing: string): string {
  return historyLine(meta, pq, !introducedKeys(existing).has(blockKey(pq)));
}

/** How many baseline commits and history lines the gate reads for its drift line: a bounded, cheap read. */
export const GATE_DRIFT_COMMITS = 64;
export const GATE_DRIFT_LINES = 64;

/**
 * The drift a pull request's run would make (the gate's drift line): the baseline's history at `ref` (the base branch)
 * and the fetched history branch's last lines, with this run as the newest point. Fail-soft and bounded: null when
 * there is no history, RANKGATE_DRIFT=off, the run is partial or measured nothing trustworthy, or anything cannot be
 * read; at most GATE_DRIFT_COMMITS commits and GATE_DRIFT_LINES lines. Never decides the exit code.
 */
export function gateDrift(col: Column, verdict: ColumnVerdict, opts: { baseline: string | null; ref?: string; regression: RegressionConfig; cwd?: string; env?: NodeJS.ProcessEnv }): DriftReport | null {
  const env = opts.env ?? process.env;
  try {
    // on unless RANKGATE_DRIFT says off (a value that is neither: off too, the line is only information)
    if ((env.RANKGATE_DRIFT ?? '').trim() !== '' && !envFlag('RANKGATE_DRIFT', env)) return null;
  } catch {
    return null;
  }
  if (verdict.code === 2 || verdict.partial || verdict.evidence !== 'rows' || !opts.baseline) return null;
  try {
    const s = readSeries({ cwd: opts.cwd, baseline: opts.baseline, ref: opts.ref, maxCommits: GATE_DRIFT_COMMITS, tail: GATE_DRIFT_LINES, env });
    if (!s.points.length) return null;
    const { meta, pq } = runMeta(col, verdict.report, { repo: s.repo, run: null, commit: null, date: new Date().toISOString(), code: verdict.code });
    const run = runPoint(meta, pq, 'this run');
    return driftReport([...s.points, run], { metrics: opts.regression.metrics, max_drop: opts.regression.max_drop, alpha: opts.regression.alpha, window: DRIFT_WINDOW, days: DRIFT_DAYS, max_drift: null });
  } catch {
    return null;
  }
}
