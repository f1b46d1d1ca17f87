/**
 * Evaluate a whole run against qrels the way trec_eval does: which queries count, in which order
 * measures are printed, how per-query values become the `all` line. Pure (no I/O).
 */
import { num_rel, num_rel_ret, num_ret } from './counts.ts';
import { P_k, judged_k, recall_k, success_k } from './precision.ts';
import { Rprec, map, map_cut_k } from './ap.ts';
import { mrr_cut_k, recip_rank } from './rr.ts';
import { bpref } from './bpref.ts';
import { ndcg, ndcg_cut_k, ndcg_exp_cut_k } from './ndcg.ts';
import { orderRun, sortedQueryIds, type Qrels, type Run, type RunOrder } from './trec.ts';
import type { Measure, MeasureOptions } from './types.ts';

export interface MeasureFamily {
  /** trec_eval's name (for cut families the prefix: `P` prints `P_5`, `P_10`, ...) */
  name: string;
  fn: Measure;
  /** default cutoffs; undefined for measures without a cutoff */
  cutoffs?: readonly number[];
  /** printed as an integer and SUMMED in the `all` line (trec_eval's num_* measures) */
  count?: boolean;
  /** trec_eval has this measure (part of `-m all_trec`) */
  trec: boolean;
  /** printed only on the `all` lines (trec_eval's `runid` and `num_q`); `fn` is unused */
  summaryOnly?: boolean;
}

const none: Measure = () => 0;

const TREC_CUTS = [5, 10, 15, 20, 30, 100, 200, 500, 1000] as const;

/** Every family, in trec_eval's print order; ours (trec: false) come after trec_eval's. */
export const FAMILIES: readonly MeasureFamily[] = [
  { name: 'runid', fn: none, summaryOnly: true, trec: true },
  { name: 'num_q', fn: none, summaryOnly: true, trec: true },
  { name: 'num_ret', fn: num_ret, count: true, trec: true },
  { name: 'num_rel', fn: num_rel, count: true, trec: true },
  { name: 'num_rel_ret', fn: num_rel_ret, count: true, trec: true },
  { name: 'map', fn: map, trec: true },
  { name: 'Rprec', fn: Rprec, trec: true },
  { name: 'bpref', fn: bpref, trec: true },
  { name: 'recip_rank', fn: recip_rank, trec: true },
  { name: 'P', fn: P_k, cutoffs: TREC_CUTS, trec: true },
  { name: 'recall', fn: recall_k, cutoffs: TREC_CUTS, trec: true },
  { name: 'ndcg', fn: ndcg, trec: true },
  { name: 'ndcg_cut', fn: ndcg_cut_k, cutoffs: TREC_CUTS, trec: true },
  { name: 'map_cut', fn: map_cut_k, cutoffs: TREC_CUTS, trec: true },
  { name: 'success', fn: success_k, cutoffs: [1, 5, 10], trec: true },
  { name: 'mrr_cut', fn: mrr_cut_k, cutoffs: [10], trec: false },
  { name: 'ndcg_exp_cut', fn: ndcg_exp_cut_k, cutoffs: TREC_CUTS, trec: false },
  { name: 'judged', fn: judged_k, cutoffs: [5, 10, 20], trec: false },
];

/** trec_eval's default (`official`) set restricted to what we implement. */
const OFFICIAL = ['runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'map', 'Rprec', 'bpref', 'recip_rank', 'P'];

/** A requested family with its cutoffs (sorted ascending, unique), or none for plain measures. */
export interface MeasureRequest {
  family: MeasureFamily;
  cutoffs?: number[];
}

/** A measure spec was not understood (the CLI turns this into a UserError). */
export class MeasureSpecError extends Error {}

function familyByName(name: string): MeasureFamily | undefined {
  return FAMILIES.find((f) => f.name === name);
}

function parseCutoffs(spec: string, text: string): number[] {
  const ks = text.split(',').map((s) => s.trim());
  const out: number[] = [];
  for (const s of ks) {
    if (!/^\d+$/.test(s) || Number(s) <= 0) {
      throw new MeasureSpecError(`measure '${spec}': cutoff '${s}' must be a positive integer`);
    }
    out.push(Number(s));
  }
  return out;
}

/**
 * Parse `-m` values into requests, merged per family and returned in trec_eval's print order.
 * Accepted: `all_trec` (every trec_eval measure we implement), `official` (trec_eval's default set),
 * a family name (`P`, `ndcg`, `mrr_cut`: default cutoffs), `family.k1,k2` (trec_eval syntax:
 * `P.5,10`) and `family_k` (`ndcg_cut_10`, as printed).
 */
export function parseMeasureSpecs(specs: readonly string[]): MeasureRequest[] {
  const chosen = new Map<MeasureFamily, Set<number> | null>();
  const addFamily = (f: MeasureFamily, ks?: number[]) => {
    if (!f.cutoffs) {
      if (ks) throw new MeasureSpecError(`measure '${f.name}' takes no cutoff`);
      chosen.set(f, null);
      return;
    }
    const set = (chosen.get(f) as Set<number> | undefined) ?? new Set<number>();
    for (const k of ks ?? f.cutoffs) set.add(k);
    chosen.set(f, set);
  };
  for (const spec of specs.length ? specs : ['official']) {
    if (spec === 'all_trec') {
      for (const f of FAMILIES) if (f.trec) addFamily(f);
      continue;
    }
    if (spec === 'official') {
      for (const n of OFFICIAL) addFamily(familyByName(n)!);
      continue;
    }
    const dot = spec.indexOf('.');
    if (dot > 0) {
      const f = familyByName(spec.slice(0, dot));
      if (!f) throw new MeasureSpecError(`unknown measure '${spec.slice(0, dot)}' in '${spec}' (known: ${knownNames()})`);
      if (!f.cutoffs) throw new MeasureSpecError(`measure '${f.name}' takes no cutoff (in '${spec}')`);
      addFamily(f, parseCutoffs(spec, spec.slice(dot + 1)));
      continue;
    }
    const direct = familyByName(spec);
    if (direct) {
      addFamily(direct);
      continue;
    }
    const m = /^(.+)_(\d+)$/.exec(spec);
    const f = m ? familyByName(m[1]!) : undefined;
    if (m && f?.cutoffs) {
      addFamily(f, parseCutoffs(spec, m[2]!));
      continue;
    }
    throw new MeasureSpecError(`unknown measure '${spec}' (known: ${knownNames()}, all_trec, official)`);
  }
  const out: MeasureRequest[] = [];
  for (const f of FAMILIES) {
    if (!chosen.has(f)) continue;
    const ks = chosen.get(f);
    out.push(ks ? { family: f, cutoffs: [...ks].sort((a, b) => a - b) } : { family: f });
  }
  return out;
}

function knownNames(): string {
  return FAMILIES.map((f) => (f.cutoffs ? `${f.name}[.k,...]` : f.name)).join(', ');
}

/** One printed measure: name as trec_eval prints it (`P_10`), its function and cutoff. */
export interface MeasureColumn {
  name: string;
  fn: Measure;
  k?: number;
  count: boolean;
}

export function columns(requests: readonly MeasureRequest[]): MeasureColumn[] {
  const out: MeasureColumn[] = [];
  for (const r of requests) {
    if (r.family.summaryOnly) continue;
    if (r.cutoffs) for (const k of r.cutoffs) out.push({ name: `${r.family.name}_${k}`, fn: r.family.fn, k, count: !!r.family.count });
    else out.push({ name: r.family.name, fn: r.family.fn, count: !!r.family.count });
  }
  return out;
}

/** Resolve one measure name (`ndcg_cut_10`, `map`, `P.5`) to a single column. */
export function measureColumn(spec: string): MeasureColumn {
  const cols = columns(parseMeasureSpecs([spec]));
  if (cols.length !== 1) throw new MeasureSpecError(`'${spec}' names ${cols.length} measures; give exactly one (e.g. ndcg_cut_10)`);
  return cols[0]!;
}

export interface EvaluateOptions extends MeasureOptions {
  /** trec_eval `-c`: average over every query in the qrels; a query missing from the run scores 0. */
  complete?: boolean;
  /** how run entries become a ranking (default `trec_eval`) */
  order?: RunOrder;
}

export interface Evaluation {
  runid: string;
  columns: MeasureColumn[];
  /** evaluated queries in trec_eval order, each with one value per column */
  perQuery: { qid: string; values: number[] }[];
  /** the `all` values: counts summed, everything else averaged over the evaluated queries */
  all: number[];
  /** print trec_eval's `runid` / `num_q` summary lines (requested by all_trec, official or by name) */
  runidLine: boolean;
  numQLine: boolean;
  /** qrels queries with no line in the run (left out unless `complete`) */
  missingFromRun: string[];
  /** run queries with no judgments (always ignored, as trec_eval does) */
  notInQrels: string[];
}

/**
 * trec_eval's evaluation loop. Queries are those of the qrels, in strcmp order; a query is
 * evaluated when the run has it, or always with `complete` (then an absent query has an empty
 * ranking, so num_rel still counts and every other measure is 0). A query whose judgments hold no
 * relevant document still counts and scores 0. Queries only in the run are ignored.
 */
export function evaluateRun(qrels: Qrels, run: Run, requests: readonly MeasureRequest[], opts: EvaluateOptions = {}): Evaluation {
  const cols = columns(requests);
  const mopts: MeasureOptions = { relevanceLevel: opts.relevanceLevel ?? 1 };
  const perQuery: Evaluation['perQuery'] = [];
  const missingFromRun: string[] = [];
  for (const qid of sortedQueryIds(qrels.keys())) {
    const entries = run.queries.get(qid);
    if (!entries) {
      missingFromRun.push(qid);
      if (!opts.complete) continue;
    }
    const ranking = entries ? orderRun(entries, opts.order ?? 'trec_eval') : [];
    const judgments = qrels.get(qid)!;
    perQuery.push({ qid, values: cols.map((c) => c.fn(ranking, judgments, c.k, mopts)) });
  }
  const notInQrels = sortedQueryIds([...run.queries.keys()].filter((q) => !qrels.has(q)));
  const n = perQuery.length;
  const all = cols.map((c, j) => {
    let s = 0;
    for (const q of perQuery) s += q.values[j]!;
    return c.count ? s : n ? s / n : 0;
  });
  const wants = (n: string) => requests.some((r) => r.family.name === n);
  return { runid: run.runid, runidLine: wants('runid'), numQLine: wants('num_q'), columns: cols, perQuery, all, missingFromRun, notInQrels };
}

/** printf("%6.4f") exactly: ties of the binary value round half to even (JS toFixed rounds them away from zero). */
export function formatFixed4(x: number): string {
  if (!Number.isFinite(x)) return String(x).padStart(6);
  let s = x.toFixed(4);
  const exact = Math.abs(x).toFixed(40);
  if (/\.\d{4}50*$/.test(exact)) {
    const truncated = (x < 0 ? '-' : '') + exact.slice(0, exact.indexOf('.') + 5);
    const lastDigit = Number(truncated[truncated.length - 1]);
    if (lastDigit % 2 === 0) s = truncated;
  }
  return s.padStart(6);
}

/** Lines exactly as trec_eval prints them (`%-22s\t%s\t%6.4f` or `%ld` for counts). */
export function formatEvaluation(ev: Evaluation, opts: { perQuery?: boolean } = {}): string {
  const out: string[] = [];
  const line = (name: string, qid: string, v: string) => out.push(`${name.padEnd(22)}\t${qid}\t${v}`);
  const val = (c: MeasureColumn, v: number) => (c.count ? String(Math.round(v)) : formatFixed4(v));
  if (opts.perQuery) {
    for (const q of ev.perQuery) ev.columns.forEach((c, j) => line(c.name, q.qid, val(c, q.values[j]!)));
  }
  if (ev.runidLine) line('runid', 'all', ev.runid);
  if (ev.numQLine) line('num_q', 'all', String(ev.perQuery.length));
  ev.columns.forEach((c, j) => line(c.name, 'all', val(c, ev.all[j]!)));
  return out.join('\n') + '\n';
}

/**
 * Score one ranking on several measures at once, keyed by printed name — what a promptfoo assertion
 * needs for `namedScores`: `scoreRanking(ids, judgments, ['ndcg_cut_10', 'recall_100', 'mrr_cut_10'])`.
 * Specs use the same syntax as `-m` (`P.5,10` expands to `P_5` and `P_10`); runid / num_q are skipped.
 */
export function scoreRanking(
  ranking: readonly string[],
  judgments: ReadonlyMap<string, number>,
  specs: readonly string[],
  opts: MeasureOptions = {},
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of columns(parseMeasureSpecs(specs))) out[c.name] = c.fn(ranking, judgments, c.k, opts);
  return out;
}
