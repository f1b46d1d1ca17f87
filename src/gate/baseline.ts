/**
 * Baseline (the legal gold-set harness): a committed snapshot of per-query scores together with the configuration it
 * reflects, and the delta of a new run against it: which queries regressed, which improved.
 *
 * A query regressed when any watched score went down (DES-058 Recall@3, MRR@10, Recall@10 (trec), routing),
 * improved when some went up and none went down. Written atomically (temp file + rename).
 */
import { existsSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { shardOf } from '../golden/promptfoo.ts';
import { selectionIdentity } from '../golden/testcases.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { redactConfig } from '../util/redact.ts';
import { createHash } from 'node:crypto';
import { holm, randomizationTest } from '../metrics/significance.ts';
import { minimumDetectableDrop, queriesNeeded, sampleSd } from '../metrics/power.ts';
import type { Column, IndexIdentity, QueryRecord, SelectionInfo } from '../results/read.ts';
import type { RetrievalScores, RoutingScores } from '../results/types.ts';
import type { GoldenQuery } from '../golden/schema.ts';
import type { Des058Report, ProvisionalStatus } from '../results/summary.ts';
import type { RegressionConfig } from './floors.ts';
import type { DocumentManifest } from '../ingest/identity.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { checkFormatVersion, type FormatSpec } from '../util/format-version.ts';

/** The baseline's format (docs/compatibility.md). */
export const BASELINE_FORMAT: FormatSpec = { what: 'baseline', field: 'rankgate_baseline', current: 1 };
import { canonicalJson, checkSeal, sealKey, sealPhrase, sealText, type SealCheck } from '../util/seal.ts';
import { searchedSettings } from '../search/settings.ts';

export interface BaselineQuery {
  category: string;
  recall_at_3: number | null;
  mrr: number | null;
  trec_recall_at_10: number | null;
  routing_ok: number | null;
  ndcg_at_10?: number | null;
  /** Absent in baselines written before them: what a declared language / tag filter of a later run is checked against. */
  language?: string;
  tags?: string[];
}

/** What the numbers of a baseline were measured on (absent in baselines written before it existed). */
export interface BaselineIdentity {
  /** pglite | postgres (contract B), null for url:/module: services. */
  engine: string | null;
  variant: string | null;
  corpusId: string | null;
  corpus: string | null;
  /** Golden selection (contract A); null when the rows did not carry one. */
  selection: SelectionInfo | null;
  /** Per-document content hashes and paths of the corpus (when rankgate knows it): which documents a later run changed. */
  documents?: DocumentManifest;
  /**
   * sha256 over this identity block (without the seal) and every per-query entry (sealOf), set when the baseline is
   * written: an identity block copied from another baseline (another corpus's id and documents) does not match.
   */
  seal?: string;
}

export interface Baseline {
  rankgate_baseline: 1;
  created: string;
  column: string;
  /**
   * The configuration the numbers reflect: provider id, label and every provider config field (from the results'
   * config, or, for JSONL results, from the rows: providers/search.ts records it on each).
   */
  config: Record<string, unknown>;
  /** false when the results did not say their provider config (JSONL rows that do not carry it): nothing to compare. */
  config_recorded?: false;
  summary: { total_queries: number; overall_recall_at_3: number | null; overall_mrr_at_10: number | null; categories: Des058Report['categories'] };
  queries: Record<string, BaselineQuery>;
  identity?: BaselineIdentity;
  /**
   * What the baseline's evidence rested on that no person reviewed when it was written (docs/judgments.md "Provisional
   * evidence"): bootstrap-only golden entries, the labels of its + labels figures, the review backlog. Optional: absent
   * in baselines written before it (unknown), which stay readable (`rankgate_baseline: 1`).
   */
  provisional?: ProvisionalStatus;
  /** The baseline column's Judged@10 / Judged@3 (absent: unknown): a later run's lower-bound warning compares with it. */
  share_judged?: { at_10: number | null; at_3: number | null };
}

const WATCHED = ['recall_at_3', 'mrr', 'trec_recall_at_10', 'routing_ok'] as const;

/** `documents`: the run's corpus as re-read and verified (src/gate/corpus-change.ts runCorpus): its document hashes are kept. */
export function baselineFrom(col: Column, report: Des058Report, documents?: DocumentManifest): Baseline {
  const queries: Record<string, BaselineQuery> = {};
  for (const q of col.queries) {
    queries[q.id] = {
      category: q.category,
      recall_at_3: q.retrieval?.recall_at_3 ?? null,
      mrr: q.retrieval ? Math.round(q.retrieval.mrr * 1e6) / 1e6 : null,
      trec_recall_at_10: q.retrieval ? Math.round(q.retrieval.trec_recall_at_10 * 1e6) / 1e6 : null,
      routing_ok: q.routing ? (q.routing.ok ? 1 : 0) : null,
      ndcg_at_10: q.retrieval ? Math.round(q.retrieval.ndcg_at_10 * 1e6) / 1e6 : null,
      language: q.language,
      tags: q.tags,
    };
  }
  return {
    rankgate_baseline: 1,
    created: report.timestamp,
    column: col.label,
    config: report.config,
    ...(col.configUnknown ? { config_recorded: false as const } : {}),
    summary: {
      total_queries: report.total_queries,
      overall_recall_at_3: report.overall_recall_at_3,
      overall_mrr_at_10: report.overall_mrr_at_10,
      categories: report.categories,
    },
    queries,
    identity: { ...identityOf(col), ...(documents ? { documents } : {}) },
    ...(report.provisional ? { provisional: report.provisional } : {}),
    ...(report.share_judged ? { share_judged: { at_10: report.share_judged.at_10, at_3: report.share_judged.at_3 } } : {}),
  };
}

export function identityOf(col: Column): BaselineIdentity {
  const ix: IndexIdentity = col.identity ?? {};
  return { engine: ix.engine ?? null, variant: ix.variant ?? null, corpusId: ix.corpusId ?? null, corpus: ix.corpus ?? null, selection: col.selection };
}

export function readBaseline(path: string): Baseline {
  let text: string;
  try {
    text = readRegularFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(`${path}: cannot read the baseline (${code ?? (e as Error).message})`);
  }
  return parseBaselineText(text, path);
}

/** A baseline from its text (a file, or the base branch's version: src/gate/base-ref.ts); `path` names it in errors. */
export function parseBaselineText(text: string, path: string): Baseline {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${path}: cannot read the baseline (${(e as Error).message})`);
  }
  const b = doc as Partial<Baseline>;
  // a version this rankgate does not read is one line naming the upgrade (or the migration): docs/compatibility.md
  if (b && typeof b === 'object' && typeof b.rankgate_baseline === 'number' && b.rankgate_baseline !== 1) checkFormatVersion(path, b.rankgate_baseline, BASELINE_FORMAT);
  if (!b || b.rankgate_baseline !== 1 || typeof b.queries !== 'object' || b.queries === null) {
    throw new UserError(`${path}: not a rankgate baseline (expected "rankgate_baseline": 1 and a "queries" map; write one with \`rankgate gate RESULTS.jsonl --update-baseline\`)`);
  }
  const bad = baselineInconsistency(b as Baseline);
  if (bad) throw new UserError(`${path}: ${bad}; the baseline is not evidence: restore it from version control or write it again with --update-baseline`);
  return b as Baseline;
}

/** A per-query value of a baseline: null/absent, or a number in [0, 1]. */
const inUnit = (v: unknown) => v === null || v === undefined || (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1);
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, x) => a + x, 0) / xs.length : null);
/** The summary holds 4-decimal means of 6-decimal per-query values (src/results/summary.ts). */
const agrees = (summary: unknown, m: number | null) =>
  m === null ? summary === null || summary === undefined : typeof summary === 'number' && Math.abs(summary - Math.round(m * 1e4) / 1e4) <= 1.01e-4;

/**
 * The first inconsistency of a baseline with itself, null when none: per-query values in [0, 1] (recall_at_3 and
 * routing_ok 0 or 1, and an MRR@10 that recall_at_3 allows: >= 1/3 when a relevant reference is in the top 3, <= 1/4
 * when not), the summary (query count, overall and per-category means and counts) recomputed from the per-query
 * entries, and the golden selection identity it records (sha256 of the sorted ids) equal to that of its entries.
 * A baseline whose entries were edited or deleted, without re-deriving everything, does not pass.
 */
export function baselineInconsistency(b: Baseline): string | null {
  const entries = Object.entries(b.queries);
  for (const [id, q] of entries) {
    const at = `queries[${JSON.stringify(id)}]`;
    if (!q || typeof q !== 'object' || Array.isArray(q)) return `${at}: expected an object of per-query scores, got ${JSON.stringify(q)}`;
    if (typeof q.category !== 'string' || !q.category) return `${at}.category: expected the query's category, got ${JSON.stringify(q.category)}`;
    for (const k of [...WATCHED, 'ndcg_at_10'] as const)
      if (!inUnit(q[k])) return `${at}.${k}: expected null or a number in [0, 1], got ${JSON.stringify(q[k])}`;
    for (const k of ['recall_at_3', 'routing_ok'] as const)
      if (q[k] !== null && q[k] !== undefined && q[k] !== 0 && q[k] !== 1) return `${at}.${k}: expected 0, 1 or null (a hit or not), got ${JSON.stringify(q[k])}`;
    if (typeof q.recall_at_3 === 'number' && typeof q.mrr === 'number') {
      if (q.recall_at_3 === 1 && q.mrr < 1 / 3 - 1e-6) return `${at}: recall_at_3 1 (a relevant reference in the top 3) but mrr ${q.mrr} (< 1/3): the values contradict each other`;
      if (q.recall_at_3 === 0 && q.mrr > 0.25 + 1e-6) return `${at}: recall_at_3 0 (no relevant reference in the top 3) but mrr ${q.mrr} (> 1/4): the values contradict each other`;
    }
  }
  // the optional fields of later rankgates: absent is unknown; present, they must have their shape
  if (b.provisional !== undefined) {
    const p = b.provisional as Partial<ProvisionalStatus> | null;
    const count = (x: unknown) => typeof x === 'number' && Number.isInteger(x) && x >= 0;
    if (!p || typeof p !== 'object' || !count(p.gated) || !count(p.bootstrap_only) || p.bootstrap_only! > p.gated! || !(p.reviewed_share === null || inUnit(p.reviewed_share)))
      return `provisional: expected {gated, bootstrap_only <= gated, reviewed_share in [0, 1] or null, …}, got ${JSON.stringify(p)?.slice(0, 120)}`;
  }
  if (b.share_judged !== undefined) {
    const j = b.share_judged as { at_10?: unknown; at_3?: unknown } | null;
    if (!j || typeof j !== 'object' || !inUnit(j.at_10) || !inUnit(j.at_3)) return `share_judged: expected {at_10, at_3}, each null or a number in [0, 1], got ${JSON.stringify(j)?.slice(0, 120)}`;
  }
  const sm = b.summary;
  if (!sm || typeof sm !== 'object') return 'summary: missing, expected {total_queries, overall_recall_at_3, overall_mrr_at_10, categories} to check the per-query entries against';
  if (sm.total_queries !== entries.length)
    return `summary.total_queries is ${JSON.stringify(sm.total_queries)} but the file holds ${entries.length} per-query entries: entries were deleted or added`;
  const vals = (qs: BaselineQuery[], k: 'recall_at_3' | 'mrr' | 'routing_ok') => qs.map((q) => q[k]).filter((x): x is number => typeof x === 'number');
  const all = entries.map(([, q]) => q);
  if (!agrees(sm.overall_recall_at_3, mean(vals(all, 'recall_at_3'))))
    return `summary.overall_recall_at_3 is ${JSON.stringify(sm.overall_recall_at_3)} but the per-query recall_at_3 values average ${mean(vals(all, 'recall_at_3'))?.toFixed(4) ?? 'null'}`;
  if (!agrees(sm.overall_mrr_at_10, mean(vals(all, 'mrr'))))
    return `summary.overall_mrr_at_10 is ${JSON.stringify(sm.overall_mrr_at_10)} but the per-query mrr values average ${mean(vals(all, 'mrr'))?.toFixed(4) ?? 'null'}`;
  const cats = sm.categories && typeof sm.categories === 'object' ? sm.categories : {};
  const byCat = new Map<string, BaselineQuery[]>();
  for (const q of all) {
    const c = byCat.get(q.category);
    if (c) c.push(q);
    else byCat.set(q.category, [q]);
  }
  for (const c of Object.keys(cats)) if (!byCat.has(c)) return `summary.categories.${c}: ${JSON.stringify(cats[c]?.count)} queries, but no per-query entry has category '${c}': entries were deleted`;
  for (const [c, qs] of [...byCat.entries()].sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
    const e = cats[c];
    if (!e) return `summary.categories has no '${c}', but ${qs.length} per-query entries have that category`;
    if (e.count !== qs.length) return `summary.categories.${c}.count is ${JSON.stringify(e.count)} but ${qs.length} per-query entries have category '${c}': entries were deleted or added`;
    const checks: [string, unknown, number | null][] = [
      ['recall_at_3', e.recall_at_3, mean(vals(qs, 'recall_at_3'))],
      ['mrr_at_10', e.mrr_at_10, mean(vals(qs, 'mrr'))],
      ['routing_accuracy', e.routing_accuracy, mean(vals(qs, 'routing_ok'))],
    ];
    for (const [k, have, m] of checks)
      if (!agrees(have, m)) return `summary.categories.${c}.${k} is ${JSON.stringify(have ?? null)} but its per-query values average ${m?.toFixed(4) ?? 'null (none)'}`;
  }
  const sel = b.identity?.selection;
  if (sel) {
    if (sel.shard) return `identity.selection: written from shard ${sel.shard.index}/${sel.shard.count} of its golden selection; a baseline holds the whole golden set`;
    if (sel.filter) return `identity.selection: written from a filtered selection (${describeFilter(sel.filter)}); a baseline holds the whole golden set`;
    if (sel.size !== entries.length) return `identity.selection.size is ${sel.size} but the file holds ${entries.length} per-query entries: entries were deleted or added`;
    if (sel.id && sel.id !== selectionIdentity(entries.map(([id]) => ({ id }))).id)
      return `identity.selection.id ${sel.id} is not the identity of the ${entries.length} query ids it holds (${selectionIdentity(entries.map(([id]) => ({ id }))).id}): entries were renamed, deleted or added`;
  }
  // the identity block (corpus id, documents, selection) belongs to these entries: sealed when written
  if (b.identity && typeof b.identity === 'object') {
    if (typeof b.identity.seal !== 'string')
      return 'identity.seal: missing: the identity block (corpus id, documents, golden selection) cannot be tied to these per-query entries (a baseline written before rankgate sealed it, or the seal was removed)';
    const c = baselineSeal(b);
    if (c.status === 'mismatch')
      return c.kind === 'keyed'
        ? `identity.seal: ${sealPhrase(c)}: the baseline was changed after it was written`
        : `identity.seal does not match the identity block and the per-query entries: the identity (corpus id, documents, golden selection) or the entries were changed after the baseline was written (an identity block copied from another baseline hides a corpus swap)`;
  }
  return null;
}

/** "category metaphorical, tag hard" */
export function describeFilter(f: NonNullable<SelectionInfo['filter']>): string {
  return (['language', 'category', 'tag'] as const)
    .filter((k) => f[k]?.length)
    .map((k) => `${k} ${f[k]!.join(',')}`)
    .join(', ');
}

/** Which of the baseline's queries a run lacks, and whether its declared golden selection explains it. */
export interface BaselineCoverage {
  /** Baseline query ids not in the run. */
  missing: string[];
  /** Those a declared filter or shard of the run's selection leaves out: compared on the rest, "partial". */
  explained: string[];
  /** Those the run's own selection should have held: removed from the golden set, or not run. */
  unexplained: string[];
  /** The run's declared subset ("category metaphorical", "shard 2/4"); null when it declares none. */
  declared: string | null;
  /** Missing queries the filter is taken to explain although the baseline cannot show it (no language/tags: an older baseline). */
  unverifiable: number;
}

export function baselineCoverage(b: Baseline, col: Column): BaselineCoverage {
  const run = new Set(col.queries.map((q) => q.id));
  const missing = Object.keys(b.queries).filter((id) => !run.has(id)).sort();
  const sel = col.selection;
  const f = sel?.filter;
  const declared = [f ? describeFilter(f) : '', sel?.shard ? `shard ${sel.shard.index}/${sel.shard.count}` : ''].filter(Boolean).join(', ') || null;
  const explained: string[] = [];
  const unexplained: string[] = [];
  let unverifiable = 0;
  for (const id of missing) {
    const q = b.queries[id]!;
    let out = false;
    let unknown = false;
    if (f?.category && !f.category.includes(q.category)) out = true;
    if (f?.language) {
      if (typeof q.language !== 'string') unknown = true;
      else if (!f.language.includes(q.language)) out = true;
    }
    if (f?.tag) {
      if (!Array.isArray(q.tags)) unknown = true;
      else if (!q.tags.some((t) => f.tag!.includes(t))) out = true;
    }
    if (sel?.shard && shardOf(id, sel.shard.count) !== sel.shard.index) out = true;
    if (out) explained.push(id);
    else if (unknown) {
      explained.push(id);
      unverifiable++;
    } else unexplained.push(id);
  }
  return { missing, explained, unexplained, declared, unverifiable };
}

/** "3 of category a, 1 of category b" */
export function countByCategory(b: Baseline, ids: readonly string[]): string {
  const m = new Map<string, number>();
  for (const id of ids) {
    const c = b.queries[id]?.category ?? '(unknown)';
    m.set(c, (m.get(c) ?? 0) + 1);
  }
  return [...m.entries()]
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
    .map(([c, n]) => `${n} ${c}`)
    .join(', ');
}

export function writeBaseline(path: string, b: Baseline): void {
  writeFileAtomic(path, JSON.stringify(sealBaseline(redactConfig(b)), null, 2) + '\n');
}

/** The seal of baselines written before keyed seals: sha256 over the identity block without its seal and the per-query entries. */
export function sealOf(b: Pick<Baseline, 'identity' | 'queries'>): string {
  const { seal: _s, ...identity } = b.identity ?? ({} as BaselineIdentity);
  return createHash('sha256').update(canonicalJson({ identity, queries: b.queries })).digest('hex');
}

/** What a baseline's seal covers: the whole file without the seal itself (config, summary and entries included). */
function sealedText(b: Pick<Baseline, 'identity' | 'queries'>): string {
  const { seal: _s, ...identity } = b.identity ?? ({} as BaselineIdentity);
  return canonicalJson({ ...b, identity });
}

/**
 * The baseline with its seal (src/util/seal.ts): keyed with RANKGATE_SEAL_KEY when it is set (a CI that holds the key
 * wrote it), else `sha256:`, an accident check. A baseline without an identity block has nothing to seal.
 */
export function sealBaseline<T extends Pick<Baseline, 'identity' | 'queries'>>(b: T, key: Buffer | null = sealKey()): T {
  if (!b.identity) return b;
  return { ...b, identity: { ...b.identity, seal: sealText('baseline', sealedText(b), key) } };
}

/** The check of a baseline's seal: keyed, unkeyed, a bare digest of an older rankgate (sealOf), or none. */
export function baselineSeal(b: Pick<Baseline, 'identity' | 'queries'>, key: Buffer | null = sealKey()): SealCheck {
  return checkSeal('baseline', sealedText(b), b.identity?.seal, key, () => sealOf(b));
}

/** What the verdict says of a baseline's seal, when there is something to say (unverified, or unkeyed under a key). */
export function baselineSealNote(path: string, b: Baseline, key: Buffer | null = sealKey()): string | null {
  const c = baselineSeal(b, key);
  if (c.status === 'unverifiable' || c.status === 'unkeyed-under-key') return `LOUD: baseline ${path}: ${sealPhrase(c)}${c.status === 'unkeyed-under-key' ? ' (write it again in CI with the key: --update-baseline)' : ''}`;
  return null;
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
  /**
   * Queries of the run that errored: nothing was measured for them, so they are left out of every comparison (the
   * overall and per-category pairs are then means over the queries measured in both, and no errored query is
   * "regressed"). null when none errored.
   */
  errored?: { count: number; total: number; ids: string[]; reasons: string[] } | null;
  /** Set when the run measured nothing comparable (ids of another space than the golden set's): why. */
  unmeasured?: string;
}

export function compareWithBaseline(b: Baseline, col: Column, report: Des058Report): BaselineDelta {
  const now = baselineFrom(col, report).queries;
  const erroredQs = col.queries.filter((q) => q.error !== null);
  const failedIds = new Set(erroredQs.map((q) => q.id));
  const regressed: QueryChange[] = [];
  const improved: QueryChange[] = [];
  let unchanged = 0;
  for (const [id, cur] of Object.entries(now).sort((x, y) => (x[0] < y[0] ? -1 : 1))) {
    const old = b.queries[id];
    // an errored query measured nothing: never a drop (said as an error instead)
    if (!old || failedIds.has(id)) continue;
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
  // With errored queries, the summaries (over this run's measured queries) are not over the baseline's: every pair is then the
  // means of both sides over the shared queries this run measured (null on both sides when it measured none).
  if (failedIds.size) {
    const measured = Object.entries(now).filter(([id]) => !failedIds.has(id) && b.queries[id]);
    const pair = (qs: [string, BaselineQuery][], k: 'recall_at_3' | 'mrr' | 'routing_ok'): [number | null, number | null] => {
      const xs = qs.filter(([id, c]) => typeof b.queries[id]![k] === 'number' && typeof c[k] === 'number');
      if (!xs.length) return [null, null];
      const m = (f: (x: [string, BaselineQuery]) => number) => Math.round((xs.reduce((a, x) => a + f(x), 0) / xs.length) * 1e4) / 1e4;
      return [m(([id]) => b.queries[id]![k] as number), m(([, c]) => c[k] as number)];
    };
    for (const cat of Object.keys(cats)) {
      const qs = measured.filter(([, c]) => c.category === cat);
      const r3 = pair(qs, 'recall_at_3');
      const ro = pair(qs, 'routing_ok');
      cats[cat] = { ...(r3[0] !== null ? { recall_at_3: r3 } : {}), ...(ro[0] !== null ? { routing_accuracy: ro } : {}) };
    }
    return {
      baseline_created: b.created,
      baseline_column: b.column,
      overall_recall_at_3: pair(measured, 'recall_at_3'),
      overall_mrr_at_10: pair(measured, 'mrr'),
      categories: cats,
      regressed,
      improved,
      unchanged,
      added: Object.keys(now).filter((id) => !b.queries[id]).sort(),
      removed: Object.keys(b.queries).filter((id) => !now[id]).sort(),
      errored: { count: failedIds.size, total: col.queries.length, ids: [...failedIds].sort(), reasons: errorGroups(erroredQs).slice(0, 3).map((g) => `${g.count}× ${g.reason}`) },
    };
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

export interface ErrorGroup {
  reason: string;
  count: number;
}

/** The distinct first lines of the errored queries, most frequent first. */
export function errorGroups(qs: readonly QueryRecord[]): ErrorGroup[] {
  const m = new Map<string, number>();
  for (const q of qs) {
    if (q.error === null) continue;
    const line = q.error.split('\n').find((l) => l.trim()) ?? q.error;
    const reason = line.trim().slice(0, 400).replace(/[\s;,]+$/, '');
    m.set(reason, (m.get(reason) ?? 0) + 1);
  }
  return [...m.entries()].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1));
}

/** Per-query value of a regression metric; null when the query does not measure it or errored. */
function valueOf(q: QueryRecord, metric: string): number | null {
  if (q.error !== null) return null;
  if (metric === 'routing_accuracy') return q.routing ? (q.routing.ok ? 1 : 0) : null;
  if (!q.retrieval) return null;
  if (metric === 'mrr_at_10') return q.retrieval.mrr;
  return (q.retrieval as unknown as Record<string, number>)[metric] ?? null;
}

function baselineValue(b: BaselineQuery, metric: string): number | null {
  if (metric === 'routing_accuracy') return b.routing_ok ?? null;
  if (metric === 'mrr_at_10') return b.mrr ?? null;
  return (b as unknown as Record<string, number | null | undefined>)[metric] ?? null;
}

export interface RegressionTest {
  scope: string;
  metric: string;
  n: number;
  baseline: number;
  current: number;
  /** Drop in percentage points (positive = worse). */
  drop_pts: number;
  p: number;
  /** Holm-adjusted p across the categories of one metric (= p overall). */
  p_adj: number;
  failed: boolean;
  /**
   * A drop beyond max_drop that the test does not confirm (not significant): named as an "unconfirmed drop", never
   * "ok", and never a failure (the exit code is the test's). With it, what the test could have confirmed (power.ts).
   */
  unconfirmed?: { mdd_pts: number; needed: number | null };
}

export interface Mismatch {
  field: string;
  baseline: string;
  run: string;
  /** A different corpus or golden set makes the comparison meaningless: exit 2 unless accepted. */
  fatal: boolean;
  /** Said as this note instead of "measured on another …" (a golden set that only gained queries). */
  note?: string;
}

export interface RegressionResult {
  alpha: number;
  /** In percentage points. */
  max_drop: number;
  shared: number;
  baseline_queries: number;
  run_queries: number;
  /** The run covers only part of the baseline's queries (compared on the shared ones). */
  partial: boolean;
  excluded_errors: number;
  mismatches: Mismatch[];
  tests: RegressionTest[];
  /** Minimum detectable drop per metric over the shared queries at alpha and 80% power, in points. */
  mdd: { metric: string; n: number; sd_diff: number; sd_assumed: boolean; mdd_pts: number; needed_for_max_drop: number | null }[];
}

const s = (x: unknown) => (x === null || x === undefined ? '(none)' : typeof x === 'string' ? x : JSON.stringify(x));

/**
 * Did the baseline record the provider config it was measured on? Not when it says so (config_recorded: false), nor
 * when its config holds the provider and label only: what a JSONL baseline held before the rows carried their config.
 */
function configRecorded(b: Baseline): boolean {
  if (b.config_recorded === false) return false;
  return Object.keys(b.config ?? {}).some((k) => k !== 'provider' && k !== 'label');
}

/** Differences between what the baseline and the run were measured on. */
export function identityMismatches(b: Baseline, col: Column, report: Des058Report): Mismatch[] {
  const out: Mismatch[] = [];
  const now = identityOf(col);
  const was = b.identity;
  // a run whose every query errored searched nothing: what it was measured on is unknown, not another corpus
  if (was && (col.identity || col.queries.some((q) => q.error === null))) {
    // the same source with edited content is compared and said LOUD (src/gate/corpus-change.ts); another source is not
    if ((was.corpusId !== now.corpusId || was.corpus !== now.corpus) && !(was.corpus && was.corpus === now.corpus))
      out.push({ field: 'corpus', baseline: `${s(was.corpus)} (${s(was.corpusId)})`, run: `${s(now.corpus)} (${s(now.corpusId)})`, fatal: true });
    if (was.engine !== now.engine) out.push({ field: 'engine', baseline: s(was.engine), run: s(now.engine), fatal: false });
    if (was.variant !== now.variant) out.push({ field: 'index variant', baseline: s(was.variant), run: s(now.variant), fatal: false });
    if (was.selection?.id && now.selection?.id && was.selection.id !== now.selection.id) {
      const runIds = new Set(col.queries.map((q) => q.id));
      const baseIds = Object.keys(b.queries);
      const added = col.queries.filter((q) => !b.queries[q.id]).length;
      // a golden set that only gained queries is the same set, grown: compared on the shared queries, the new ones said
      if (added > 0 && baseIds.every((id) => runIds.has(id)))
        out.push({ field: 'golden selection', baseline: `${was.selection.id} (${was.selection.size} queries)`, run: `${now.selection.id} (${now.selection.size} queries)`, fatal: false, note: `${added} ${added === 1 ? 'query' : 'queries'} added to the golden set (not in the baseline): compared on the ${baseIds.length} shared queries` });
      else out.push({ field: 'golden selection', baseline: `${was.selection.id} (${was.selection.size} queries)`, run: `${now.selection.id} (${now.selection.size} queries)`, fatal: false });
    }
  }
  // Only settings that change what is searched and really differ are named (src/search/settings.ts: a default made
  // explicit, a label or the sweep's marker are the same search); a side that does not know its provider config (JSONL
  // rows that do not carry it, or a baseline written from such a file: provider and label only) has nothing to compare.
  const bc = searchedSettings(b.config ?? {});
  const rc = searchedSettings(report.config);
  const cfgKeys = new Set([...Object.keys(bc), ...Object.keys(rc)]);
  const changed = configRecorded(b) && !col.configUnknown ? [...cfgKeys].filter((k) => canonicalJson(bc[k] ?? null) !== canonicalJson(rc[k] ?? null)).sort() : [];
  if (changed.length)
    out.push({
      field: 'provider config',
      baseline: changed.map((k) => `${k}=${s(bc[k])}`).join(', '),
      run: changed.map((k) => `${k}=${s(rc[k])}`).join(', '),
      fatal: false,
    });
  return out;
}

/** Does this column search with the configuration the baseline records (src/search/settings.ts)? */
export function configMatches(b: Baseline, col: Column): boolean {
  if (!configRecorded(b) || col.configUnknown) return false;
  return canonicalJson(searchedSettings(b.config ?? {})) === canonicalJson(searchedSettings({ provider: col.providerId, label: col.label, ...col.config }));
}

/**
 * The column a baseline applies to: the first whose provider config searches as the baseline's did; when none does
 * (or the baseline records none), the first column, where the differences are said. `matched` tells which.
 */
export function baselineColumn(b: Baseline, cols: readonly Column[]): { index: number; matched: boolean } {
  const i = cols.findIndex((c) => configMatches(b, c));
  return i >= 0 ? { index: cols[i]!.index, matched: true } : { index: cols[0]?.index ?? 0, matched: false };
}

/**
 * The regression check: per metric, over the queries the run shares with the baseline (errored queries left out),
 * a drop larger than max_drop (0.02 = 2 points) AND a paired randomization test p < alpha fails; the same per category with
 * Holm's adjustment across the categories of each metric. Also the minimum detectable drop of the shared set
 * (src/metrics/power.ts): s_d = SD of the per-query differences, or, when the run equals the baseline on every
 * query, sqrt(2) x the SD of the baseline scores (the differences two independent runs would have).
 */
export function regressionCheck(b: Baseline, col: Column, report: Des058Report, cfg: RegressionConfig): RegressionResult {
  const runIds = new Set(col.queries.map((q) => q.id));
  const shared = col.queries.filter((q) => b.queries[q.id]);
  const usable = shared.filter((q) => q.error === null);
  const mismatches = identityMismatches(b, col, report);
  const baseIds = Object.keys(b.queries);
  const onlyBase = baseIds.filter((id) => !runIds.has(id)).length;
  // Queries only in the run are new ones appended (compared on the shared ones); baseline queries the run lacks are
  // judged by baselineCoverage (the gate's verdict: exit 2 unless a declared filter of the selection leaves them out).
  if (shared.length === 0) mismatches.push({ field: 'queries', baseline: `${baseIds.length} queries`, run: `${runIds.size} queries, none of them in the baseline`, fatal: true });
  const tests: RegressionTest[] = [];
  const mdd: RegressionResult['mdd'] = [];
  for (const metric of cfg.metrics) {
    const pairs = (qs: QueryRecord[]) =>
      qs.flatMap((q) => {
        const a = baselineValue(b.queries[q.id]!, metric);
        const v = valueOf(q, metric);
        // the baseline keeps 6 decimals: so does the run, or float noise would read as differences
        const c = v === null ? null : Math.round(v * 1e6) / 1e6;
        return a === null || c === null ? [] : [[a, c] as const];
      });
    const one = (scope: string, ps: (readonly [number, number])[]): RegressionTest | null => {
      if (!ps.length) return null;
      const a = ps.map((x) => x[0]);
      const c = ps.map((x) => x[1]);
      const ma = a.reduce((x, y) => x + y, 0) / a.length;
      const mc = c.reduce((x, y) => x + y, 0) / c.length;
      const p = randomizationTest(a, c).p;
      return { scope, metric, n: ps.length, baseline: ma, current: mc, drop_pts: (ma - mc) * 100, p, p_adj: p, failed: false };
    };
    const all = pairs(usable);
    const overall = one('overall', all);
    if (overall) {
      overall.failed = overall.drop_pts > cfg.max_drop * 100 + 1e-9 && overall.p < cfg.alpha;
      tests.push(overall);
      const d = all.map(([a, c]) => c - a);
      let sd = sampleSd(d);
      const assumed = sd === 0;
      if (assumed) sd = Math.SQRT2 * sampleSd(all.map((x) => x[0]));
      mdd.push({ metric, n: all.length, sd_diff: sd, sd_assumed: assumed, mdd_pts: minimumDetectableDrop(sd, all.length, cfg.alpha) * 100, needed_for_max_drop: queriesNeeded(sd, cfg.max_drop, cfg.alpha) });
    }
    const cats = [...new Set(usable.map((q) => q.category))].sort();
    const catTests = cats.map((cat) => one(cat, pairs(usable.filter((q) => q.category === cat)))).filter((t): t is RegressionTest => t !== null);
    const adj = holm(catTests.map((t) => t.p));
    catTests.forEach((t, i) => {
      t.p_adj = adj[i]!;
      t.failed = t.drop_pts > cfg.max_drop * 100 + 1e-9 && t.p_adj < cfg.alpha;
    });
    tests.push(...catTests);
    // drops beyond max_drop the test does not confirm: the smallest drop these n queries can confirm (the minimum
    // detectable drop at alpha and 80% power of the paired test, normal approximation; s_d of these differences),
    // and how many queries would confirm a drop of this size (src/metrics/power.ts)
    for (const t of [overall, ...catTests]) {
      if (!t || t.failed || !(t.drop_pts > cfg.max_drop * 100 + 1e-9)) continue;
      const ps = pairs(t.scope === 'overall' ? usable : usable.filter((q) => q.category === t.scope));
      const sd = sampleSd(ps.map(([a, c]) => c - a));
      // every query changed alike (s_d 0): no normal approximation; the exact randomization test gives p = 2 / 2^n, so
      // no drop is confirmable with these n, and the smallest n with 2 / 2^n < alpha would confirm it
      t.unconfirmed =
        sd === 0
          ? { mdd_pts: Infinity, needed: Math.floor(1 - Math.log2(cfg.alpha)) + 1 }
          : { mdd_pts: minimumDetectableDrop(sd, t.n, cfg.alpha) * 100, needed: queriesNeeded(sd, t.drop_pts / 100, cfg.alpha) };
    }
  }
  return {
    alpha: cfg.alpha,
    max_drop: cfg.max_drop * 100,
    shared: shared.length,
    baseline_queries: baseIds.length,
    run_queries: runIds.size,
    partial: shared.length > 0 && onlyBase > 0,
    excluded_errors: shared.length - usable.length,
    mismatches,
    tests,
    mdd,
  };
}

/**
 * The committed baseline as a results column: its per-query values (Recall@3, MRR@10, nDCG@10, trec Recall@10,
 * routing) as the reference of significance tests and query changes (`rankgate report` with only the baseline a
 * team keeps). It has no rankings, query texts or golden entries: only what the baseline stores.
 */
export function baselineAsColumn(b: Baseline, label: string): Column {
  const queries: QueryRecord[] = Object.entries(b.queries).map(([id, x]) => {
    const ranked = typeof x.recall_at_3 === 'number' || typeof x.mrr === 'number';
    const retrieval = ranked
      ? ({ recall_at_3: x.recall_at_3 ?? undefined, mrr: x.mrr ?? undefined, trec_recall_at_10: x.trec_recall_at_10 ?? undefined, ndcg_at_10: x.ndcg_at_10 ?? undefined, best_rank: null } as unknown as RetrievalScores)
      : null;
    return {
      id,
      query: id,
      category: x.category,
      language: x.language ?? '',
      tags: x.tags ?? [],
      golden: { id, query: id, category: x.category, expected: [] } as unknown as GoldenQuery,
      error: null,
      retrieval,
      routing: typeof x.routing_ok === 'number' ? ({ ok: x.routing_ok === 1 } as RoutingScores) : null,
      integrity: [],
      latencyMs: null,
      top: [],
      promptfooPass: false,
      judged: false,
    };
  });
  return { index: -1, label, providerId: 'baseline', config: b.config ?? {}, namedScores: {}, queries, counts: null, selection: b.identity?.selection ?? null, identity: null };
}

/**
 * The practical defence against a rewritten baseline (CI on a pull request): the gate compares against the base
 * branch's baseline (`before`), and when the pull request's own copy (`afterPath`) differs, says so LOUD at the top of
 * its output and of the PR comment, with the figures before and after. null when the PR leaves it as it was.
 */
export function baselineChangeLine(before: Baseline, beforePath: string, afterPath: string): string | null {
  if (!existsSync(afterPath)) return `LOUD: this pull request DELETES the baseline ${afterPath} (the base branch's ${beforePath} is what this run is compared with)`;
  let after: Baseline;
  try {
    after = readBaseline(afterPath);
  } catch (e) {
    return `LOUD: this pull request CHANGES the baseline ${afterPath}, and its version is not evidence: ${(e as Error).message}`;
  }
  const key = (b: Baseline) => canonicalJson({ queries: b.queries, summary: b.summary, identity: b.identity ?? null, config: b.config });
  if (key(before) === key(after)) return null;
  const f = (x: number | null | undefined) => (typeof x === 'number' ? x.toFixed(4) : 'n/a');
  const nb = Object.keys(before.queries).length;
  const na = Object.keys(after.queries).length;
  const changed = Object.keys(after.queries).filter((id) => before.queries[id] && canonicalJson(before.queries[id]) !== canonicalJson(after.queries[id])).length;
  return (
    `LOUD: this pull request CHANGES the baseline ${afterPath}: Success@3 ${f(before.summary?.overall_recall_at_3)} -> ${f(after.summary?.overall_recall_at_3)}, ` +
    `MRR@10 ${f(before.summary?.overall_mrr_at_10)} -> ${f(after.summary?.overall_mrr_at_10)}, queries ${nb} -> ${na}${changed ? ` (${changed} changed)` : ''}` +
    `${before.identity?.corpusId !== after.identity?.corpusId ? `, corpus ${String(before.identity?.corpusId ?? 'unknown').slice(0, 12)} -> ${String(after.identity?.corpusId ?? 'unknown').slice(0, 12)}` : ''}; ` +
    `this run is compared with the base branch's baseline (${beforePath}); review the new one before merging (protect it with CODEOWNERS: docs/adopting.md)`
  );
}
