/**
 * Merge the promptfoo results files of the shards of one eval (RANKGATE_SHARD=i/N, or promptfoo's own
 * --filter-range) into ONE promptfoo-shaped results file, as if one process had run every query:
 *
 *   - rows concatenated (shard order), testIdx renumbered so the matrix has one row per query;
 *   - per column (results.prompts[i].metrics): namedScores are SUMS over the rows, recomputed from the rows
 *     (each row's contribution as promptfoo accumulates it: value x namedScoreWeights[key] when the row's
 *     grading result carries a weight); namedScoresCount / namedScoreWeights and every counter
 *     (testPassCount, assertFailCount, ...) and tokenUsage are added; score, totalLatencyMs and cost summed
 *     from the rows;
 *   - derived metrics recomputed the way promptfoo computes them after its last row: each derivedMetrics
 *     expression (mathjs) evaluated in order over { ...sums, __count: rows of the column }, where the list is
 *     the config's own derivedMetrics followed by the ones the hooks of assertions/gate.ts add for the tests
 *     present (src/results/derived.ts, over ALL the merged queries: a shard without a category still gets
 *     its per-category mean); latency_p50_ms / latency_p95_ms (written by the afterAll hook) recomputed
 *     with the same percentile over every row;
 *   - stats: successes / failures / errors / tokenUsage added; durationMs the longest shard (they ran in parallel);
 *   - each row's testCase.metadata.selection is the full selection's (shard and shardSize dropped), and the
 *     afterAll hook's rankgate_selection_size the full size: the gate checks the merged file's completeness
 *     against the whole selection. Where each row came from: metadata.rankgateMerge.
 *
 * Sums use an exactly rounded floating-point sum (Shewchuk's algorithm, as Python's math.fsum), which does
 * not depend on the order of the rows. promptfoo's own sums do: it adds rows in the order they complete, so
 * at maxConcurrency > 1 two single-process runs of the same queries can differ in the last bit of a sum.
 * Merging a single-process file alone (`rankgate merge OUT single.json`) puts it in the same canonical
 * form, and then it equals the merge of the shards bit for bit (test/results/merge.test.ts, test/github/shards.test.ts).
 *
 * Refused, each with one line naming the file (UserError, exit 2): a file that is not promptfoo output;
 * rows without the golden selection identity (metadata.selection, datasets/tests.ts); shards of a different
 * golden selection; a different configuration (providers, prompts, assertions, derived metrics, extensions),
 * promptfoo version or rankgate version; the same query twice (overlapping shards); missing shards or
 * queries; merged query ids that do not hash to the selection id; a row outside its file's shard; rows searched in
 * another index or corpus (response.metadata.diagnostics.index) or reporting other service settings; a file whose
 * column metrics are not the sums of its rows (edited or truncated).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { UserError } from '../errors.ts';
import { GoldenQuerySchema, type GoldenQuery } from '../golden/schema.ts';
import { shardOf } from '../golden/promptfoo.ts';
import { selectionIdentity } from '../golden/testcases.ts';
import { compileOwnDerived, derivedMetricsFor } from './derived.ts';
import { percentile, rerankColumnMetrics, RERANK_COLUMN_KEYS } from './summary.ts';
import { parseResultsObject } from './read.ts';
import { REGATE_KEY, isJsonl, jsonlRows } from './stream.ts';
import { readRegularFileSync } from '../util/regular-file.ts';

/** Exactly rounded sum of finite doubles (Shewchuk / Python math.fsum): independent of the order of xs. */
export function fsum(xs: Iterable<number>): number {
  const partials: number[] = [];
  let special = 0;
  let sawSpecial = false;
  for (let x of xs) {
    if (!Number.isFinite(x)) {
      special += x;
      sawSpecial = true;
      continue;
    }
    let i = 0;
    for (let y of partials) {
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) partials[i++] = lo;
      x = hi;
    }
    partials.length = i;
    partials.push(x);
  }
  if (sawSpecial) return special;
  let n = partials.length;
  if (n === 0) return 0;
  let hi = partials[--n]!;
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n]!;
    hi = x + y;
    const yr = hi - x;
    lo = y - yr;
    if (lo !== 0) break;
  }
  // Round half-even correction (as CPython's math.fsum).
  if (n > 0 && ((lo < 0 && partials[n - 1]! < 0) || (lo > 0 && partials[n - 1]! > 0))) {
    const y = lo * 2;
    const x = hi + y;
    const yr = x - hi;
    if (y === yr) hi = x;
  }
  return hi;
}

export interface ShardInfo {
  index: number;
  count: number;
}

export interface SelectionIdentity {
  id: string;
  size: number;
  files?: string[];
  shard?: ShardInfo;
  shardSize?: number;
}

interface Row {
  promptIdx?: number;
  testIdx?: number;
  score?: number;
  success?: boolean;
  latencyMs?: number;
  cost?: number;
  namedScores?: Record<string, number>;
  gradingResult?: { namedScoreWeights?: Record<string, number> } | null;
  testCase?: { metadata?: Record<string, unknown> };
  response?: { output?: unknown; metadata?: Record<string, unknown> } | null;
  [k: string]: unknown;
}

interface Metrics {
  score: number;
  testPassCount: number;
  testFailCount: number;
  testErrorCount: number;
  assertPassCount: number;
  assertFailCount: number;
  totalLatencyMs: number;
  tokenUsage: Record<string, unknown>;
  namedScores: Record<string, number | null>;
  namedScoresCount: Record<string, number>;
  namedScoreWeights?: Record<string, number>;
  cost: number;
  [k: string]: unknown;
}

interface Prompt {
  raw?: string;
  label?: string;
  provider?: string;
  metrics?: Metrics;
  [k: string]: unknown;
}

export interface ResultsDoc {
  evalId?: string;
  results: {
    version?: number;
    timestamp?: string;
    prompts: Prompt[];
    results: Row[];
    stats?: Record<string, unknown>;
    [k: string]: unknown;
  };
  config?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  vars?: string[];
  [k: string]: unknown;
}

export interface MergeInput {
  file: string;
  doc: unknown;
}

export interface MergeSummary {
  selection: { id: string; size: number; files?: string[] };
  shards: { file: string; shard: ShardInfo | null; rows: number; queries: number; evalId: string | null }[];
  rows: number;
  columns: number;
}

/**
 * The config keys two shards must share: what was run and how it was scored. (config.tests holds the shard's own
 * expanded test cases: the golden selection identity stands for it.)
 */
const CONFIG_KEYS = ['providers', 'prompts', 'defaultTest', 'derivedMetrics', 'extensions', 'scenarios', 'nunjucksFilters'] as const;

const fail = (msg: string): never => {
  throw new UserError(msg);
};

/** Canonical JSON (sorted keys) for equality checks. */
function canon(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, (x as Record<string, unknown>)[k]])) : x,
  );
}

/** First path where a and b differ, for a one-line message. */
function firstDiff(a: unknown, b: unknown, path: string): string | null {
  if (canon(a) === canon(b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const d = firstDiff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`);
      if (d) return d;
    }
  }
  return path;
}

const show = (v: unknown) => {
  const s = v === undefined ? 'absent' : JSON.stringify(v);
  return s.length > 60 ? s.slice(0, 57) + '...' : s;
};

function getPath(o: unknown, path: string): unknown {
  const parts = path.replace(/\[(\d+)\]/g, '.$1').split('.').filter(Boolean);
  let cur: unknown = o;
  for (const p of parts) cur = cur && typeof cur === 'object' ? (cur as Record<string, unknown>)[p] : undefined;
  return cur;
}

function asDoc(input: MergeInput): ResultsDoc {
  const d = input.doc as ResultsDoc;
  if (!d || typeof d !== 'object' || !d.results || !Array.isArray(d.results.prompts) || !Array.isArray(d.results.results)) {
    fail(`${input.file}: expected promptfoo output JSON with results.prompts[] and results.results[] (written by \`promptfoo eval --output FILE.json\`)`);
  }
  return d;
}

function selectionOf(file: string, rows: Row[]): SelectionIdentity {
  let first: SelectionIdentity | null = null;
  rows.forEach((r, i) => {
    const s = r.testCase?.metadata?.selection as SelectionIdentity | undefined;
    if (!s || typeof s !== 'object' || typeof s.id !== 'string' || typeof s.size !== 'number') {
      return fail(
        `${file}: results[${i}].testCase.metadata.selection is missing, expected the golden selection identity {id, size, files, shard} ` +
          `that datasets/tests.ts records (re-run the shard with the current tests loader)`,
      );
    }
    if (!first) first = s;
    else if (first.id !== s.id || canon(first.shard ?? null) !== canon(s.shard ?? null)) {
      fail(`${file}: results[${i}].testCase.metadata.selection ${show(s)} differs from results[0]'s ${show(first)}: one results file must hold one shard of one selection`);
    }
  });
  return first!;
}

function rankgateVersionOf(rows: Row[]): string | null {
  for (const r of rows) {
    const v = r.response?.metadata?.rankgate;
    if (typeof v === 'string') return v;
  }
  return null;
}

function queryIdOf(r: Row, file: string, i: number): string {
  const m = r.testCase?.metadata ?? {};
  const id = m.id ?? (m.golden as { id?: unknown } | undefined)?.id;
  if (typeof id !== 'string' || !id) fail(`${file}: results[${i}].testCase.metadata.id is missing, expected the golden query id (datasets/tests.ts)`);
  return id as string;
}

/** One row's contribution to a column sum of key k, as promptfoo accumulates it (src/util/namedMetrics.ts). */
function contribution(r: Row, k: string, v: number): number {
  const w = r.gradingResult?.namedScoreWeights;
  return w && Object.prototype.hasOwnProperty.call(w, k) ? v * (w[k] ?? 0) : v;
}

/** Add numeric leaves of b into a (tokenUsage-shaped objects). */
function addNumbers(a: Record<string, unknown>, b: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!b) return a;
  for (const [k, v] of Object.entries(b)) {
    if (typeof v === 'number') a[k] = (typeof a[k] === 'number' ? (a[k] as number) : 0) + v;
    else if (v && typeof v === 'object' && !Array.isArray(v)) a[k] = addNumbers((a[k] && typeof a[k] === 'object' ? a[k] : {}) as Record<string, unknown>, v as Record<string, unknown>);
    else if (!(k in a)) a[k] = v;
  }
  return a;
}

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/** The names of a column's derived metrics: in namedScores, not accumulated (no namedScoresCount entry). */
function derivedKeys(m: Metrics | undefined): string[] {
  if (!m) return [];
  return Object.keys(m.namedScores ?? {}).filter((k) => !Object.prototype.hasOwnProperty.call(m.namedScoresCount ?? {}, k));
}

const LATENCY_PERCENTILES: Record<string, number> = { latency_p50_ms: 50, latency_p95_ms: 95 };
/** Written by the afterAll hook: the selection size of the run (a shard's shardSize); the merged run's is the full size. */
const SELECTION_SIZE_KEY = 'rankgate_selection_size';

export function mergeResults(inputs: MergeInput[]): { doc: ResultsDoc; summary: MergeSummary } {
  if (inputs.length === 0) fail('no shard results files given');
  const docs = inputs.map(asDoc);
  const info = inputs.map((inp, i) => {
    const d = docs[i]!;
    if (d.results.results.length === 0) fail(`${inp.file}: has no result rows (an empty shard cannot prove which shard it is; give a shard count no larger than the number of queries)`);
    return { file: inp.file, doc: d, sel: selectionOf(inp.file, d.results.results), rankgate: rankgateVersionOf(d.results.results) };
  });
  const ref = info[0]!;

  // Same golden selection, configuration, promptfoo and rankgate version.
  for (const s of info.slice(1)) {
    if (s.sel.id !== ref.sel.id || s.sel.size !== ref.sel.size) {
      fail(
        `${s.file}: golden selection ${s.sel.id} (${s.sel.size} queries${s.sel.files ? ' from ' + s.sel.files.join(',') : ''}) differs from ${ref.file}'s ` +
          `${ref.sel.id} (${ref.sel.size} queries${ref.sel.files ? ' from ' + ref.sel.files.join(',') : ''}): shards of different golden sets cannot be merged`,
      );
    }
    for (const k of CONFIG_KEYS) {
      const d = firstDiff(ref.doc.config?.[k], s.doc.config?.[k], `config.${k}`);
      if (d) {
        fail(
          `${s.file}: ${d} is ${show(getPath(s.doc.config, d.slice('config.'.length)))} here but ${show(getPath(ref.doc.config, d.slice('config.'.length)))} in ${ref.file}: ` +
            'shards must run the same configuration',
        );
      }
    }
    const pv = (d: ResultsDoc) => (d.metadata?.promptfooVersion as string | undefined) ?? null;
    if (pv(s.doc) !== pv(ref.doc)) fail(`${s.file}: promptfoo ${pv(s.doc) ?? '(unknown)'} here but ${pv(ref.doc) ?? '(unknown)'} in ${ref.file}: shards must run the same promptfoo version`);
    if (s.rankgate !== ref.rankgate) fail(`${s.file}: rankgate ${s.rankgate ?? '(unknown)'} here but ${ref.rankgate ?? '(unknown)'} in ${ref.file}: shards must run the same rankgate version`);
    const cols = (d: ResultsDoc) => d.results.prompts.map((p) => `${p.provider ?? ''}\u0000${p.raw ?? ''}`);
    if (canon(cols(s.doc)) !== canon(cols(ref.doc))) {
      fail(`${s.file}: columns ${show(s.doc.results.prompts.map((p) => p.provider))} differ from ${ref.file}'s ${show(ref.doc.results.prompts.map((p) => p.provider))}: shards must run the same columns`);
    }
  }

  // Shards: one count, each index once, none missing.
  const sharded = info.filter((s) => s.sel.shard);
  if (sharded.length && sharded.length !== info.length) {
    const plain = info.find((s) => !s.sel.shard)!;
    fail(`${plain.file}: is a full (unsharded) run, but ${sharded[0]!.file} is shard ${sharded[0]!.sel.shard!.index}/${sharded[0]!.sel.shard!.count}: merge the shards of one run`);
  }
  if (sharded.length) {
    const count = ref.sel.shard!.count;
    const seen = new Map<number, string>();
    for (const s of info) {
      const sh = s.sel.shard!;
      if (sh.count !== count) fail(`${s.file}: is shard ${sh.index}/${sh.count} but ${ref.file} is shard ${ref.sel.shard!.index}/${count}: every shard must split the same way`);
      const dup = seen.get(sh.index);
      if (dup) fail(`${s.file}: shard ${sh.index}/${count} is also ${dup}: each shard once`);
      seen.set(sh.index, s.file);
    }
    if (seen.size < count) {
      const base = [...seen.keys()].some((i) => i === 0) ? 0 : 1;
      const missing = Array.from({ length: count }, (_, i) => i + base).filter((i) => !seen.has(i));
      fail(`missing shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${count}`).join(', ')} (${seen.size} of ${count} shard results files given): give every shard's results file`);
    }
  }

  // Rows: no query twice per column; every query of the selection present in every column.
  const ncols = ref.doc.results.prompts.length;
  const owner = Array.from({ length: ncols }, () => new Map<string, string>());
  const queriesPerFile: number[] = [];
  for (const s of info) {
    const ids = new Set<string>();
    s.doc.results.results.forEach((r, i) => {
      const p = r.promptIdx ?? 0;
      if (!Number.isInteger(p) || p < 0 || p >= ncols) fail(`${s.file}: results[${i}].promptIdx ${String(r.promptIdx)} names no entry of results.prompts`);
      const id = queryIdOf(r, s.file, i);
      ids.add(id);
      const prev = owner[p]!.get(id);
      if (prev) {
        fail(
          prev === s.file
            ? `${s.file}: query ${id} appears twice in column '${ref.doc.results.prompts[p]!.provider ?? p}' (results[${i}]): promptfoo --repeat runs cannot be merged`
            : `${s.file}: query ${id} is also in ${prev}: the shards overlap (each query must be in exactly one shard)`,
        );
      }
      owner[p]!.set(id, s.file);
    });
    queriesPerFile.push(ids.size);
  }
  owner.forEach((m, p) => {
    if (m.size !== ref.sel.size) {
      fail(
        `column '${ref.doc.results.prompts[p]!.provider ?? p}' has rows for ${m.size} of the selection's ${ref.sel.size} queries (selection ${ref.sel.id}): ` +
          'a shard is missing or incomplete (interrupted eval, --filter-* options)',
      );
    }
    // The selection id is the hash of its sorted query ids (src/golden/testcases.ts): the merged ids must give it back.
    if (/^[0-9a-f]{16}$/.test(ref.sel.id)) {
      const got = selectionIdentity([...m.keys()].map((id) => ({ id }))).id;
      if (got !== ref.sel.id)
        fail(`column '${ref.doc.results.prompts[p]!.provider ?? p}': the ${m.size} merged query ids make golden selection ${got}, not the ${ref.sel.id} every row claims: rows of another golden set were relabelled`);
    }
  });
  checkRowsAgree(info);

  // Each file's column metrics must be the sums of its rows (catches edited or truncated files).
  for (const s of info) {
    s.doc.results.prompts.forEach((p, pi) => {
      const m = p.metrics;
      if (!m) return;
      const rows = s.doc.results.results.filter((r) => (r.promptIdx ?? 0) === pi);
      for (const k of Object.keys(m.namedScoresCount ?? {})) {
        const sum = fsum(rows.map((r) => (typeof r.namedScores?.[k] === 'number' ? contribution(r, k, r.namedScores[k]!) : 0)));
        const have = m.namedScores?.[k];
        if (typeof have === 'number' && !close(sum, have)) {
          fail(`${s.file}: results.prompts[${pi}].metrics.namedScores.${k} is ${have} but its rows sum to ${sum}: the file was edited or is incomplete`);
        }
      }
    });
  }

  // Merged rows, testIdx renumbered per shard (shard order), one matrix row per query. Each row's selection becomes
  // the full selection's (no shard, no shardSize): the merged file is the whole run, and the gate checks its
  // completeness against it. Where each row came from is in metadata.rankgateMerge.
  const order = info.map((s, i) => ({ s, i })).sort((a, b) => (a.s.sel.shard?.index ?? a.i) - (b.s.sel.shard?.index ?? b.i));
  const fullSelection = (() => {
    const { shard: _s, shardSize: _z, ...rest } = ref.sel;
    return rest;
  })();
  const rows: Row[] = [];
  let offset = 0;
  for (const { s } of order) {
    let max = -1;
    for (const r of s.doc.results.results) {
      const t = typeof r.testIdx === 'number' ? r.testIdx : 0;
      max = Math.max(max, t);
      const testCase = r.testCase ? { ...r.testCase, metadata: { ...(r.testCase.metadata ?? {}), selection: fullSelection } } : r.testCase;
      rows.push({ ...r, testIdx: offset + t, testCase });
    }
    offset += max + 1;
  }

  // Goldens of every merged query: the derived metrics the beforeAll hook adds for this test set.
  const goldens: GoldenQuery[] = [];
  const seenGolden = new Set<string>();
  for (const r of rows) {
    const g = GoldenQuerySchema.safeParse(r.testCase?.metadata?.golden);
    if (g.success && !seenGolden.has(g.data.id)) {
      seenGolden.add(g.data.id);
      goldens.push(g.data);
    }
  }
  const configDerived = (Array.isArray(ref.doc.config?.derivedMetrics) ? ref.doc.config!.derivedMetrics : []) as { name: string; value: unknown }[];
  const allDerivedSeen = new Set(info.flatMap((s) => s.doc.results.prompts.flatMap((p) => derivedKeys(p.metrics))));
  const families = (['', 'heuristic_'] as const).filter((p) => allDerivedSeen.has(`avg_${p}judged_recall_at_3`) || allDerivedSeen.has(`${p}judge_error_rate`));
  // Only a config running the beforeAll hook gets its derived means (the hook adds them at run time; the config in the
  // results file lists only the user's own).
  const hooked = (Array.isArray(ref.doc.config?.extensions) ? (ref.doc.config!.extensions as unknown[]) : []).some((e) => typeof e === 'string' && /gate\.ts:beforeAll$/.test(e));
  // the shards' tests carried a judgments file's labels: the + labels means too (assertions/gate.ts beforeAll)
  const labelled = allDerivedSeen.has('avg_labelled_recall_at_3');
  const defs = [...configDerived, ...(hooked ? derivedMetricsFor(goldens, configDerived, [...families], labelled) : [])];
  const known = new Set([...defs.map((d) => d.name), ...Object.keys(LATENCY_PERCENTILES), ...RERANK_COLUMN_KEYS, SELECTION_SIZE_KEY]);
  for (const k of allDerivedSeen) {
    if (!known.has(k)) fail(`${info.find((s) => s.doc.results.prompts.some((p) => derivedKeys(p.metrics).includes(k)))!.file}: metric '${k}' is neither a sum over rows nor a derived metric rankgate can recompute: cannot merge it exactly`);
  }
  // rankgate's own forms (a / b, 1 - a / b, a / max(b, 1)) evaluate as mathjs does without it (src/results/derived.ts);
  // mathjs (~0.6 s to load) only for another expression of the config's own
  let mathjsCompile: typeof import('mathjs').compile | undefined;
  const compiled = defs.map((d) => {
    if (typeof d.value !== 'string') fail(`config.derivedMetrics '${d.name}' is not a mathjs expression (a function cannot be recomputed from the results file): cannot merge it exactly`);
    const own = compileOwnDerived(d.value as string);
    if (own) return { name: d.name, code: { evaluate: own } };
    mathjsCompile ??= (createRequire(import.meta.url)('mathjs') as typeof import('mathjs')).compile;
    return { name: d.name, code: mathjsCompile(d.value as string) };
  });

  // The merged file's columns, parsed like `rankgate gate` does, for the latency percentiles of the afterAll hook.
  // Latency percentiles (the afterAll hook of assertions/gate.ts writes them), filled in once the merged columns exist.
  const latencyWanted: { pi: number; k: string }[] = [];
  const rerankWanted: number[] = [];

  const prompts: Prompt[] = ref.doc.results.prompts.map((p0, pi) => {
    const colRows = rows.filter((r) => (r.promptIdx ?? 0) === pi);
    const shardMetrics = info.map((s) => s.doc.results.prompts[pi]!.metrics).filter((m): m is Metrics => !!m);
    const sumInts = (k: keyof Metrics) => shardMetrics.reduce((a, m) => a + (typeof m[k] === 'number' ? (m[k] as number) : 0), 0);
    const countKeys = new Set(shardMetrics.flatMap((m) => Object.keys(m.namedScoresCount ?? {})));
    const namedScores: Record<string, number | null> = {};
    const namedScoresCount: Record<string, number> = {};
    const namedScoreWeights: Record<string, number> = {};
    for (const k of countKeys) {
      namedScores[k] = fsum(colRows.map((r) => (typeof r.namedScores?.[k] === 'number' ? contribution(r, k, r.namedScores[k]!) : 0)));
      namedScoresCount[k] = shardMetrics.reduce((a, m) => a + (m.namedScoresCount?.[k] ?? 0), 0);
      if (shardMetrics.some((m) => m.namedScoreWeights)) namedScoreWeights[k] = shardMetrics.reduce((a, m) => a + (m.namedScoreWeights?.[k] ?? m.namedScoresCount?.[k] ?? 0), 0);
    }
    // Derived metrics, as promptfoo's updateDerivedMetrics after the last row: in order, each seeing the ones before it.
    const derivedHere = new Set(shardMetrics.flatMap(derivedKeys));
    if (derivedHere.size || configDerived.length) {
      const scope: Record<string, unknown> = { ...namedScores, __count: colRows.length };
      for (const d of compiled) {
        let v: number | null = 0;
        try {
          const x = d.code.evaluate(scope) as unknown;
          v = typeof x === 'number' ? x : Number(x);
        } catch {
          v = 0; // promptfoo keeps `??= 0` when an expression cannot be evaluated (an input never appeared)
        }
        namedScores[d.name] = v;
        scope[d.name] = v;
      }
    }
    for (const k of Object.keys(LATENCY_PERCENTILES)) if (derivedHere.has(k)) latencyWanted.push({ pi, k });
    if (RERANK_COLUMN_KEYS.some((k) => derivedHere.has(k))) rerankWanted.push(pi);
    if (derivedHere.has(SELECTION_SIZE_KEY)) namedScores[SELECTION_SIZE_KEY] = ref.sel.size;
    for (const [k, v] of Object.entries(namedScores)) if (typeof v === 'number' && !Number.isFinite(v)) namedScores[k] = null; // JSON, as promptfoo writes NaN
    const m0 = p0.metrics;
    const metrics: Metrics = {
      ...(m0 ?? {}),
      score: fsum(colRows.map((r) => (typeof r.score === 'number' ? r.score : 0))),
      testPassCount: sumInts('testPassCount'),
      testFailCount: sumInts('testFailCount'),
      testErrorCount: sumInts('testErrorCount'),
      assertPassCount: sumInts('assertPassCount'),
      assertFailCount: sumInts('assertFailCount'),
      totalLatencyMs: fsum(colRows.map((r) => (typeof r.latencyMs === 'number' ? r.latencyMs : 0))),
      tokenUsage: shardMetrics.reduce((a, m) => addNumbers(a, m.tokenUsage), {} as Record<string, unknown>),
      namedScores,
      namedScoresCount,
      ...(shardMetrics.some((m) => m.namedScoreWeights) ? { namedScoreWeights } : {}),
      cost: fsum(colRows.map((r) => (typeof r.cost === 'number' ? r.cost : 0))),
    };
    return { ...p0, ...(typeof p0.label === 'string' ? { label: withoutVerdictTag(p0.label) } : {}), metrics };
  });

  if (latencyWanted.length || rerankWanted.length) {
    const parsed = parseResultsObject({ evalId: 'merge', results: { prompts, results: rows }, config: ref.doc.config }, 'merged results');
    for (const { pi, k } of latencyWanted) {
      // the measured rows' latencies, as the gate hook records them (an errored row's wait is no latency)
      const lat = parsed.columns[pi]!.queries.filter((q) => q.error === null).map((q) => q.latencyMs).filter((x): x is number => x !== null);
      const v = percentile(lat, LATENCY_PERCENTILES[k]!);
      if (v !== null) prompts[pi]!.metrics!.namedScores[k] = v;
    }
    // a reranked column's stage means, rerank latency percentiles and cost per query, over all merged rows
    for (const pi of rerankWanted) Object.assign(prompts[pi]!.metrics!.namedScores, rerankColumnMetrics(parsed.columns[pi]!.queries));
  }

  const stats: Record<string, unknown> = {};
  for (const s of info) {
    const st = s.doc.results.stats ?? {};
    for (const k of ['successes', 'failures', 'errors'] as const) stats[k] = ((stats[k] as number) ?? 0) + (typeof st[k] === 'number' ? (st[k] as number) : 0);
    stats.tokenUsage = addNumbers((stats.tokenUsage ?? {}) as Record<string, unknown>, st.tokenUsage as Record<string, unknown> | undefined);
    for (const k of ['durationMs', 'evaluationDurationMs'] as const) if (typeof st[k] === 'number') stats[k] = Math.max((stats[k] as number) ?? 0, st[k] as number);
  }

  const timestamps = info.map((s) => s.doc.results.timestamp).filter((t): t is string => typeof t === 'string').sort();
  const now = new Date();
  const evalId = `eval-${randomBytes(2).toString('hex').slice(0, 3)}-${now.toISOString().slice(0, 19)}`;
  const summary: MergeSummary = {
    selection: { id: ref.sel.id, size: ref.sel.size, ...(ref.sel.files ? { files: ref.sel.files } : {}) },
    shards: order.map(({ s, i }) => ({ file: s.file, shard: s.sel.shard ?? null, rows: s.doc.results.results.length, queries: queriesPerFile[i]!, evalId: s.doc.evalId ?? null })),
    rows: rows.length,
    columns: ncols,
  };
  const vars = [...new Set(info.flatMap((s) => (Array.isArray(s.doc.vars) ? s.doc.vars : [])))];
  const doc: ResultsDoc = {
    ...ref.doc,
    ...(typeof ref.doc.config?.description === 'string' ? { config: { ...ref.doc.config, description: withoutVerdictTag(ref.doc.config.description) } } : {}),
    evalId,
    results: { ...ref.doc.results, timestamp: timestamps[0] ?? now.toISOString(), prompts, results: rows, stats },
    ...(vars.length ? { vars } : {}),
    metadata: { ...(ref.doc.metadata ?? {}), exportedAt: now.toISOString(), rankgateMerge: summary },
  };
  return { doc, summary };
}

/** The search index a row was answered from (contract B: response.metadata.diagnostics.index), canonical; null when none. */
function indexOf(r: Row): string | null {
  const ix = (r.response?.metadata?.diagnostics as { index?: unknown } | null | undefined)?.index;
  return ix && typeof ix === 'object' ? canon(ix) : null;
}

const errored = (r: Row) => Boolean(r.error) || Boolean((r.response as { error?: unknown } | null | undefined)?.error) || r.response?.output === undefined;

/** The column's settings a row reports: its service kind and search params without the per-query language and filters. */
function settingsOf(r: Row): string {
  const m = r.response?.metadata ?? {};
  const { language: _l, filters: _f, ...params } = (m.params && typeof m.params === 'object' ? m.params : {}) as Record<string, unknown>;
  return canon({ service: m.service ?? null, params });
}

/**
 * Every row of a column, in every shard, must come from the same index (engine, variant, corpus and its identity) and
 * the same service settings, and every row of a shard of a RANKGATE_SHARD split must belong to that shard: a shard run
 * on another corpus (or rows pasted from one) cannot be merged. Errored rows report no index and are left out.
 */
function checkRowsAgree(info: { file: string; doc: ResultsDoc; sel: SelectionIdentity }[]): void {
  const first = new Map<number, { file: string; i: number; index: string | null; settings: string }>();
  for (const s of info) {
    const sh = s.sel.shard;
    s.doc.results.results.forEach((r, i) => {
      if (sh && sh.index >= 1 && sh.index <= sh.count) {
        const id = queryIdOf(r, s.file, i);
        const own = shardOf(id, sh.count);
        if (own !== sh.index) fail(`${s.file}: results[${i}] query ${id} belongs to shard ${own}/${sh.count}, not to this file's shard ${sh.index}/${sh.count}: rows of another run`);
      }
      if (errored(r)) return;
      const p = r.promptIdx ?? 0;
      const here = { file: s.file, i, index: indexOf(r), settings: settingsOf(r) };
      const ref = first.get(p);
      if (!ref) return void first.set(p, here);
      if (here.index !== ref.index) {
        const show1 = (x: string | null) => {
          if (!x) return 'no index (a url:/module: service)';
          const o = JSON.parse(x) as Record<string, unknown>;
          return `${o.engine ?? '?'} ${o.variant ?? '?'}, corpus ${o.corpus ?? '?'} (${typeof o.corpusId === 'string' ? o.corpusId.slice(0, 19) : '?'})`;
        };
        fail(`${s.file}: results[${i}] was searched in ${show1(here.index)} but ${ref.file} results[${ref.i}] in ${show1(ref.index)}: shards of another corpus or index cannot be merged`);
      }
      if (here.settings !== ref.settings)
        fail(`${s.file}: results[${i}] reports service settings ${show(JSON.parse(here.settings))} but ${ref.file} results[${ref.i}] ${show(JSON.parse(ref.settings))}: shards must run the same configuration`);
    });
  }
}

/**
 * A description (or column prompt label) without the gate's verdict tag the afterAll hook puts in front
 * ("[gate FAIL (exit 1): …] text", src/report/verdict-text.ts): one shard's verdict is not the merged run's.
 */
export function withoutVerdictTag(description: string): string {
  return description.replace(/^\[gate [^\]]*\] ?/, '');
}

/** Read shard files (one-line errors) and merge them; JSONL shards (promptfoo's rows only) give JSONL rows. */
export function mergeResultFiles(files: string[]): { doc: ResultsDoc; summary: MergeSummary; format: 'json' | 'jsonl' } {
  const jsonl = files.filter(isJsonl);
  if (jsonl.length && jsonl.length !== files.length)
    fail(`${files.find((f) => !isJsonl(f))}: is JSON but ${jsonl[0]} is JSONL: give the shards of one run, all written with the same --output extension`);
  if (jsonl.length) return { ...mergeResults(files.map((file) => ({ file, doc: jsonlDoc(file) }))), format: 'jsonl' };
  const inputs = files.map((file) => {
    let text: string;
    try {
      text = readRegularFileSync(file, 'utf8');
    } catch (e) {
      return fail(`${file}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
    try {
      return { file, doc: JSON.parse(text) as unknown };
    } catch (e) {
      return fail(`${file}: not JSON (${(e as Error).message.split('\n')[0]}); expected the file written by \`promptfoo eval --output FILE.json\``);
    }
  });
  return { ...mergeResults(inputs), format: 'json' };
}

/**
 * A JSONL shard as a results document without a summary: its columns named by the rows (promptIdx, provider), no
 * metrics (so no sums to check or add), no config (promptfoo's JSONL has none to compare).
 */
function jsonlDoc(file: string): ResultsDoc {
  const rows: Row[] = [];
  const prompts: Prompt[] = [];
  for (const { row, line } of jsonlRows(file)) {
    if (line === 1 && REGATE_KEY in row) continue; // the afterAll hook's record of a shard whose output was lost
    const r = row as Row & { provider?: { id?: string; label?: string } };
    const pi = r.promptIdx ?? 0;
    if (!Number.isInteger(pi) || pi < 0 || pi > 10_000) fail(`${file}: line ${line}: promptIdx ${JSON.stringify(r.promptIdx)}: expected a column index`);
    prompts[pi] ??= { provider: String(r.provider?.label ?? r.provider?.id ?? `column-${pi}`), raw: '' };
    rows.push(r);
  }
  for (let i = 0; i < prompts.length; i++) prompts[i] ??= { provider: `column-${i}`, raw: '' };
  return { results: { prompts, results: rows } };
}
