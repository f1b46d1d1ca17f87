/**
 * The drift alarm (docs/history.md "Drift"): the slow loss no single pull request shows. Over a window of the series
 * (default the last 8 points, none older than 90 days before the newest: whichever is shorter), per gated metric and
 * scope (overall, each category of the newest point), the newest point is compared with the window's best point and
 * with its oldest. A cumulative drop beyond `max_drop` is a finding, with:
 *
 * - the paired randomization test (src/metrics/significance.ts) on the per-query values of the two points, over the
 *   queries both measured (another golden selection: the shared queries; the added and removed ones counted apart);
 *   categories Holm-adjusted per metric and comparison, as the regression check does;
 * - the minimum detectable drop of that comparison at alpha and 80% power (src/metrics/power.ts);
 * - the steps between them: each point's change from the one before, the drops listed biggest first, with the commit
 *   (a baseline commit, or the commit a scheduled run measured) where each happened.
 *
 * `max_drift` (gate.yaml regression.max_drift) turns a finding into a failure of the scheduled run when its drop is
 * beyond it AND the test confirms it (p < alpha). Pure: points in, findings out.
 */
import { holm, randomizationTest } from '../metrics/significance.ts';
import { minimumDetectableDrop, sampleSd } from '../metrics/power.ts';
import { OVERALL, type PointMetric } from './line.ts';
import type { Point } from './series.ts';

export const DRIFT_WINDOW = 8;
export const DRIFT_DAYS = 90;

export interface DriftOptions {
  /** The gated metrics (regression.metrics). */
  metrics: readonly string[];
  /** 0..1, like the floors: a cumulative drop beyond it is a finding. */
  max_drop: number;
  alpha: number;
  window: number;
  days: number;
  /** 0..1: a confirmed drop beyond it fails the scheduled run; null/undefined: drift is reported, never failed. */
  max_drift?: number | null;
}

export interface DriftStep {
  point: Point;
  from: Point;
  /** In points (positive = better). */
  change_pts: number;
}

export interface DriftFinding {
  metric: string;
  /** `*` overall, else the category. */
  scope: string;
  against: 'best' | 'oldest';
  ref: Point;
  newest: Point;
  /** Points after `ref` up to the newest (those that measure the metric in the scope). */
  span: number;
  before: number;
  after: number;
  /** before - after, in points (positive = worse). */
  drop_pts: number;
  /** The paired test over the shared queries; null when the per-query values cannot be compared (`untested` says why). */
  tested: { n: number; p: number; p_adj: number; mdd_pts: number; added: number; removed: number } | null;
  untested: string | null;
  /** The drops between `ref` and the newest, biggest first. */
  steps: DriftStep[];
  failed: boolean;
}

export interface DriftReport {
  options: DriftOptions;
  window: Point[];
  /** Points of the window left out, one line each (another golden set: no query shared with the newest point). */
  notes: string[];
  findings: DriftFinding[];
  /** `drift: Success@3 −11.0 pts over 6 runs since 2026-10-02 (p 0.004), mostly at a1b2c3d (−6.0)`, or null. */
  headline: string | null;
  failed: boolean;
}

/** People's names of the point metrics (docs/metrics.md "Names"; as src/report/verdict-text.ts says them). */
export const METRIC_LABEL: Record<string, string> = {
  recall_at_3: 'Success@3',
  mrr_at_10: 'MRR@10',
  ndcg_at_10: 'nDCG@10',
  trec_recall_at_10: 'Recall@10',
  routing_accuracy: 'routing accuracy',
};
export const metricLabel = (m: string) => METRIC_LABEL[m] ?? m;

const MINUS = '\u2212';
const pts1 = (x: number) => x.toFixed(1);
export const fmtP = (p: number) => (p < 0.001 ? p.toExponential(1) : p.toFixed(3));
const day = (p: Point) => p.date.slice(0, 10);

/** A point as people name it in a step: its commit, else its run. */
export function pointName(p: Point): string {
  if (p.where === 'this run') return 'this run';
  return p.commit ? p.commit.slice(0, 7) : p.run ? `run ${p.run}` : p.where;
}

/** The value a point shows for a metric in a scope (its summary), null when it measures none. */
export function pointValue(p: Point, metric: string, scope: string): number | null {
  const i = p.summary.scopes.indexOf(scope);
  const v = i < 0 ? undefined : p.summary.means[metric as PointMetric]?.[i];
  return typeof v === 'number' ? v : null;
}

/** The window: the last `window` points, none older than `days` before the newest. */
export function driftWindow(points: readonly Point[], window: number, days: number): Point[] {
  if (!points.length) return [];
  const newest = Date.parse(points[points.length - 1]!.date);
  const from = newest - days * 86_400_000;
  return points.filter((p) => Date.parse(p.date) >= from).slice(-window);
}

interface Comparison {
  before: number;
  after: number;
  drop_pts: number;
  tested: { n: number; p: number; mdd_pts: number; added: number; removed: number } | null;
  untested: string | null;
}

/** The newest point against `ref` for one metric and scope: on the shared queries' values when both points have them. */
function compare(ref: Point, newest: Point, metric: string, scope: string, alpha: number): Comparison {
  const fallback = (why: string): Comparison => {
    const before = pointValue(ref, metric, scope)!;
    const after = pointValue(newest, metric, scope)!;
    return { before, after, drop_pts: (before - after) * 100, tested: null, untested: why };
  };
  const a = ref.perQuery();
  const b = newest.perQuery();
  if (typeof a === 'string') return fallback(`${ref.where}: ${a}`);
  if (typeof b === 'string') return fallback(`${newest.where}: ${b}`);
  const m = metric as PointMetric;
  const at = new Map(a.ids.map((id, i) => [id, i]));
  const inScope = (cat: string) => scope === OVERALL || cat === scope;
  const xs: number[] = [];
  const ys: number[] = [];
  let added = 0;
  b.ids.forEach((id, j) => {
    if (!inScope(b.cats[j]!)) return;
    const i = at.get(id);
    if (i === undefined) {
      added++;
      return;
    }
    const x = a.values[m][i];
    const y = b.values[m][j];
    if (x === null || x === undefined || y === null || y === undefined) return;
    xs.push(x);
    ys.push(y);
  });
  const bIds = new Set(b.ids);
  const removed = a.ids.filter((id, i) => inScope(a.cats[i]!) && !bIds.has(id)).length;
  if (!xs.length) return fallback(`no query of ${scope === OVERALL ? 'the' : `category ${scope} of the`} newest point is measured by ${ref.where} (another golden set)`);
  const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
  const before = mean(xs);
  const after = mean(ys);
  const sd = sampleSd(ys.map((y, i) => y - xs[i]!));
  return {
    before,
    after,
    drop_pts: (before - after) * 100,
    tested: { n: xs.length, p: randomizationTest(xs, ys).p, mdd_pts: sd === 0 ? Infinity : minimumDetectableDrop(sd, xs.length, alpha) * 100, added, removed },
    untested: null,
  };
}

/** Drift over the window of `points` (oldest first; the last is the newest: a scheduled run, or this pull request's run). */
export function driftReport(points: readonly Point[], opts: DriftOptions): DriftReport {
  let window = driftWindow(points, opts.window, opts.days);
  const out: DriftReport = { options: opts, window, findings: [], headline: null, failed: false, notes: [] };
  if (window.length < 2) return out;
  const newest = window[window.length - 1]!;
  // a point of another golden set (no query shared with the newest) measures something else: left out, said
  const mine = newest.perQuery();
  if (typeof mine !== 'string') {
    const ids = new Set(mine.ids);
    const other = window.filter((p) => {
      const pq = p === newest ? null : p.perQuery();
      return pq !== null && typeof pq !== 'string' && !pq.ids.some((id) => ids.has(id));
    });
    if (other.length) {
      window = window.filter((p) => !other.includes(p));
      out.window = window;
      out.notes.push(`${other.length} ${other.length === 1 ? 'point' : 'points'} of another golden set (no query shared with the newest point: ${other.map((p) => p.where).slice(0, 3).join(', ')}${other.length > 3 ? ', …' : ''}) left out of the drift`);
    }
    if (window.length < 2) return out;
  }
  const limit = opts.max_drop * 100 + 1e-9;
  for (const metric of opts.metrics) {
    const scopes = newest.summary.scopes.filter((s) => pointValue(newest, metric, s) !== null);
    for (const against of ['best', 'oldest'] as const) {
      const found: DriftFinding[] = [];
      const ps: number[] = [];
      for (const scope of scopes) {
        const seq = window.filter((p) => pointValue(p, metric, scope) !== null);
        if (seq.length < 2 || seq[seq.length - 1] !== newest) continue;
        const earlier = seq.slice(0, -1);
        // the best: the highest value, the newest of equals (the drop since it was last that good)
        const best = earlier.reduce((r, p) => (pointValue(p, metric, scope)! >= pointValue(r, metric, scope)! ? p : r), earlier[0]!);
        const ref = against === 'best' ? best : earlier[0]!;
        // an oldest point as good as the best says nothing the best does not: once, as the best
        if (against === 'oldest' && pointValue(ref, metric, scope)! >= pointValue(best, metric, scope)! - 1e-12) continue;
        const c = compare(ref, newest, metric, scope, opts.alpha);
        const from = seq.indexOf(ref);
        const steps: DriftStep[] = [];
        for (let i = from + 1; i < seq.length; i++) {
          const change = Math.round((pointValue(seq[i]!, metric, scope)! - pointValue(seq[i - 1]!, metric, scope)!) * 1e8) / 1e6;
          if (change < -0.05) steps.push({ point: seq[i]!, from: seq[i - 1]!, change_pts: change });
        }
        steps.sort((x, y) => x.change_pts - y.change_pts || (x.point.date < y.point.date ? -1 : 1));
        const f: DriftFinding = {
          metric,
          scope,
          against,
          ref,
          newest,
          span: seq.length - 1 - from,
          before: c.before,
          after: c.after,
          drop_pts: c.drop_pts,
          tested: c.tested ? { ...c.tested, p_adj: c.tested.p } : null,
          untested: c.untested,
          steps,
          failed: false,
        };
        if (scope !== OVERALL && f.tested) ps.push(f.tested.p);
        found.push(f);
      }
      // Holm across the categories of one metric and comparison (overall stays as it is), as the regression check
      const adj = holm(ps);
      let k = 0;
      for (const f of found) if (f.scope !== OVERALL && f.tested) f.tested.p_adj = adj[k++]!;
      for (const f of found) {
        if (!(f.drop_pts > limit)) continue;
        f.failed = opts.max_drift !== null && opts.max_drift !== undefined && f.drop_pts > opts.max_drift * 100 + 1e-9 && f.tested !== null && f.tested.p_adj < opts.alpha;
        out.findings.push(f);
      }
    }
  }
  out.findings.sort(
    (a, b) =>
      Number(b.failed) - Number(a.failed) ||
      Number(b.scope === OVERALL) - Number(a.scope === OVERALL) ||
      opts.metrics.indexOf(a.metric) - opts.metrics.indexOf(b.metric) ||
      Math.round((b.drop_pts - a.drop_pts) * 1e6) ||
      (a.against === b.against ? 0 : a.against === 'best' ? -1 : 1) ||
      (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0),
  );
  out.failed = out.findings.some((f) => f.failed);
  out.headline = out.findings.length ? findingLine(out.findings[0]!, window) : null;
  return out;
}

/** What the span's points are: runs, baseline commits, or both. */
function spanWords(f: DriftFinding, window: readonly Point[]): string {
  const from = window.indexOf(f.ref);
  const kinds = new Set(window.slice(from + 1).filter((p) => pointValue(p, f.metric, f.scope) !== null).map((p) => (p.where === 'this run' ? 'this' : p.kind)));
  const unit = kinds.size === 1 && kinds.has('run') ? (f.span === 1 ? 'run' : 'runs') : kinds.size === 1 && kinds.has('baseline') ? (f.span === 1 ? 'baseline commit' : 'baseline commits') : f.span === 1 ? 'point' : 'points';
  return `${f.span} ${unit}`;
}

/** Where the drop happened: one step carrying at least half of it ("mostly at"), else the spread and the largest. */
function stepsPhrase(f: DriftFinding): string {
  const top = f.steps[0];
  if (!top) return '';
  if (-top.change_pts >= f.drop_pts / 2 || f.steps.length === 1) return `, mostly at ${pointName(top.point)} (${MINUS}${pts1(-top.change_pts)})`;
  return `, spread over ${f.steps.length} steps (largest ${MINUS}${pts1(-top.change_pts)} at ${pointName(top.point)})`;
}

/** The one line of a finding: `drift: Success@3 −11.0 pts over 6 runs since 2026-10-02 (p 0.004), mostly at a1b2c3d (−6.0)`. */
export function findingLine(f: DriftFinding, window?: readonly Point[]): string {
  const w = window ?? [f.ref, f.newest];
  const t = f.tested;
  const test = t ? `p ${fmtP(t.p_adj)}${t.added ? `; ${t.added} ${t.added === 1 ? 'query' : 'queries'} added since, not compared` : ''}` : 'not tested: no per-query values';
  const span = window ? spanWords(f, w) : `${f.span} ${f.span === 1 ? 'point' : 'points'}`;
  return `drift: ${metricLabel(f.metric)}${f.scope === OVERALL ? '' : ` (category ${f.scope})`} ${MINUS}${pts1(f.drop_pts)} pts over ${span} since ${day(f.ref)} (${test})${stepsPhrase(f)}`;
}

/** The drift section for people: the window, each finding with its test, MDD and steps; or that there is none. */
export function driftLines(r: DriftReport): string[] {
  const o = r.options;
  const w = r.window;
  if (w.length < 2) return [`drift: not assessed: ${w.length ? 'one point' : 'no point'} in the window (it needs two)`, ...r.notes.map((n) => `  note: ${n}`)];
  const head =
    `drift over the last ${w.length} points since ${day(w[0]!)} (window: ${o.window} points, at most ${o.days} days; ` +
    `max_drop ${pts1(o.max_drop * 100)} pts, alpha ${o.alpha}, paired randomization test, categories Holm-adjusted${o.max_drift != null ? `; max_drift ${pts1(o.max_drift * 100)} pts fails the scheduled run` : ''}):`;
  const notes = r.notes.map((n) => `  note: ${n}`);
  if (!r.findings.length) return [head, ...notes, `  none: no gated metric (${o.metrics.map(metricLabel).join(', ')}) is more than ${pts1(o.max_drop * 100)} pts below the window's best or oldest point`];
  const out = [head, ...notes, `  ${findingLine(r.findings[0]!, w)}`];
  for (const f of r.findings) {
    const t = f.tested;
    const test = t
      ? `p ${fmtP(t.p_adj)}${f.scope !== OVERALL ? ' Holm-adjusted' : ''}, ${t.n} shared queries${t.added ? `, ${t.added} added since (not compared)` : ''}${t.removed ? `, ${t.removed} no longer run` : ''}; minimum detectable drop ${Number.isFinite(t.mdd_pts) ? `${pts1(t.mdd_pts)} pts` : 'none (every query changed alike)'}`
      : `not tested: ${f.untested}`;
    const steps = f.steps.length ? `; steps: ${f.steps.slice(0, 6).map((s) => `${pointName(s.point)} ${s.point.date.slice(0, 10)} ${MINUS}${pts1(-s.change_pts)}`).join(', ')}${f.steps.length > 6 ? ', …' : ''}` : '';
    out.push(
      `  ${f.failed ? 'FAIL' : 'DRIFT'} ${f.scope === OVERALL ? 'overall' : f.scope} ${f.metric} vs the ${f.against === 'best' ? 'best' : 'oldest'} point (${pointName(f.ref)}, ${day(f.ref)}): ` +
        `${f.before.toFixed(4)} -> ${f.after.toFixed(4)} (${MINUS}${pts1(f.drop_pts)} pts over ${spanWords(f, w)}; ${test})${steps}`,
    );
  }
  return out;
}
