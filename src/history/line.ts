/**
 * The history file (docs/history.md): one compact JSON line per scheduled run, `"v": 1` on every line
 * (docs/compatibility.md), appended by `rankgate history append` to `history.jsonl` on the branch `rankgate-history`.
 *
 * A line holds the run (repository, run id, commit, date, the gate's exit code), what it was measured on (corpus,
 * golden selection, searched provider settings, judge), latency p50/p95 and cost, the provisional share and review
 * backlog when known, the summary per metric and scope (overall `*` and each category) and the per-query values,
 * compressed:
 *
 * - the query ids and their categories once per golden selection: the first line of a selection carries them
 *   (`q.ids`, `q.cats`, `q.qc`) under a key (`q.key`, a hash of the ids and categories); later lines name the key only.
 *   A line whose key no readable line introduces is written with the ids again (a malformed line never loses them).
 * - each metric's values in the ids' order as one string: `D<values>|<codes>` (a dictionary of at most 64 distinct
 *   values, 6 decimals, `n` for null, then one base64url character per query: Success@3, routing and MRR@10 take
 *   one character a query) or `Q<codes>` (4 base64url characters a query: the value in millionths, the baseline's
 *   own precision; 2^24 - 1 is null).
 *
 * Pure: text in, lines and points out (the reading of git and files is src/history/series.ts).
 */
import { createHash } from 'node:crypto';
import type { Baseline, BaselineQuery } from '../gate/baseline.ts';
import { REGRESSION_METRICS } from '../gate/floors.ts';
import { searchedSettings } from '../search/settings.ts';
import { checkFormatVersion, type FormatSpec } from '../util/format-version.ts';

/** The history line's format (docs/compatibility.md): `"v": 1` on every line. */
export const HISTORY_FORMAT: FormatSpec = { what: 'history line', field: 'v', current: 1 };

/** The per-query metrics a point keeps: those the regression check (and so the drift) can test. */
export const POINT_METRICS = REGRESSION_METRICS;
export type PointMetric = (typeof POINT_METRICS)[number];
/** The overall scope's name among the categories. */
export const OVERALL = '*';

/** Per-query values of one point, in the order of `ids` (sorted). */
export interface PerQuery {
  ids: string[];
  /** Each query's category, in the order of `ids`. */
  cats: string[];
  values: Record<PointMetric, (number | null)[]>;
}

/** What a point records besides its numbers. */
export interface PointMeta {
  repo: string | null;
  run: string | null;
  commit: string | null;
  date: string;
  /** The gate's exit code of a scheduled run (null for a baseline commit). */
  code: 0 | 1 | 2 | null;
  column: string | null;
  corpus: { id: string | null; path: string | null } | null;
  golden: { id: string | null; size: number } | null;
  /** The settings that change what is searched (src/search/settings.ts), null when not recorded. */
  config: Record<string, unknown> | null;
  judge: string | null;
  latency: { p50: number | null; p95: number | null } | null;
  cost: number | null;
  /** Share of the measured queries whose golden entry is bootstrap-only (no person reviewed it); null when unknown. */
  provisional: number | null;
  /** Pending labels of the review queue; null when unknown. */
  backlog: number | null;
}

/** One point's figures: the mean of every metric per scope (overall `*` first, then the categories, sorted) and the queries per scope. */
export interface PointSummary {
  scopes: string[];
  counts: number[];
  means: Record<PointMetric, (number | null)[]>;
}

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** A baseline's per-query values under the point metrics' names. */
function valueOf(q: BaselineQuery, m: PointMetric): number | null {
  const v = m === 'mrr_at_10' ? q.mrr : m === 'routing_accuracy' ? q.routing_ok : (q as unknown as Record<string, number | null | undefined>)[m];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** The per-query values of a baseline's entries (the shape `baselineFrom` gives a run too), ids sorted. */
export function perQueryOf(queries: Baseline['queries']): PerQuery {
  const ids = Object.keys(queries).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const values = {} as PerQuery['values'];
  for (const m of POINT_METRICS) values[m] = ids.map((id) => valueOf(queries[id]!, m));
  return { ids, cats: ids.map((id) => queries[id]!.category), values };
}

/** Means per metric and scope over the non-null values (4 decimals, as the report's summary), queries per scope. */
export function summarize(pq: PerQuery): PointSummary {
  const cats = [...new Set(pq.cats)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const scopes = [OVERALL, ...cats];
  const index = new Map(scopes.map((s, i) => [s, i]));
  const counts = scopes.map(() => 0);
  counts[0] = pq.ids.length;
  pq.cats.forEach((c) => counts[index.get(c)!]!++);
  const means = {} as PointSummary['means'];
  for (const m of POINT_METRICS) {
    const sum = scopes.map(() => 0);
    const n = scopes.map(() => 0);
    pq.values[m].forEach((v, i) => {
      if (v === null) return;
      const c = index.get(pq.cats[i]!)!;
      sum[0] += v;
      n[0]!++;
      sum[c] += v;
      n[c]!++;
    });
    means[m] = scopes.map((_, i) => (n[i] ? r4(sum[i]! / n[i]!) : null));
  }
  return { scopes, counts, means };
}

// ---- the per-query encoding ----

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const DIGIT = new Map([...ALPHABET].map((c, i) => [c, i]));
const QNULL = 2 ** 24 - 1;

/** One metric's values as a string (see the file comment). */
export function encodeValues(vals: readonly (number | null)[]): string {
  const keys = vals.map((v) => (v === null ? 'n' : String(r6(v))));
  const dict = [...new Set(keys)];
  if (dict.length <= ALPHABET.length) {
    const at = new Map(dict.map((k, i) => [k, i]));
    return `D${dict.join(',')}|${keys.map((k) => ALPHABET[at.get(k)!]).join('')}`;
  }
  let out = 'Q';
  for (const v of vals) {
    let q = v === null ? QNULL : Math.min(QNULL - 1, Math.max(0, Math.round(v * 1e6)));
    let s = '';
    for (let i = 0; i < 4; i++) {
      s = ALPHABET[q & 63] + s;
      q >>= 6;
    }
    out += s;
  }
  return out;
}

/** The values of `encodeValues`, or a string saying why not (n: the number of queries expected). */
export function decodeValues(s: unknown, n: number): (number | null)[] | string {
  if (typeof s !== 'string') return `expected an encoded string, got ${JSON.stringify(s)?.slice(0, 40)}`;
  if (s.startsWith('D')) {
    const bar = s.indexOf('|');
    if (bar < 0) return 'no | after the dictionary';
    const dict = s
      .slice(1, bar)
      .split(',')
      .map((k) => (k === 'n' ? null : Number(k)));
    if (dict.some((v) => v !== null && !(Number.isFinite(v) && v >= 0 && v <= 1))) return 'a dictionary value outside [0, 1]';
    const codes = s.slice(bar + 1);
    if (codes.length !== n) return `${codes.length} values for ${n} queries`;
    const out: (number | null)[] = [];
    for (const c of codes) {
      const i = DIGIT.get(c);
      if (i === undefined || i >= dict.length) return `code '${c}' outside the dictionary`;
      out.push(dict[i]!);
    }
    return out;
  }
  if (s.startsWith('Q')) {
    if (s.length !== 1 + 4 * n) return `${(s.length - 1) / 4} values for ${n} queries`;
    const out: (number | null)[] = [];
    for (let i = 1; i < s.length; i += 4) {
      let q = 0;
      for (let j = 0; j < 4; j++) {
        const d = DIGIT.get(s[i + j]!);
        if (d === undefined) return `character '${s[i + j]}' is not base64url`;
        q = q * 64 + d;
      }
      if (q !== QNULL && q > 1e6) return `value ${q / 1e6} outside [0, 1]`;
      out.push(q === QNULL ? null : q / 1e6);
    }
    return out;
  }
  return `expected 'D' or 'Q' first, got ${JSON.stringify(s.slice(0, 1))}`;
}

/** Indexes into a list of `size` names: one base64url character each (up to 64 names), else two (up to 4,096). */
export function encodeCodes(idx: readonly number[], size: number): string {
  const w = size <= 64 ? 1 : 2;
  return idx.map((i) => (w === 1 ? ALPHABET[i]! : ALPHABET[i >> 6]! + ALPHABET[i & 63]!)).join('');
}

export function decodeCodes(s: unknown, n: number, size: number): number[] | string {
  const w = size <= 64 ? 1 : 2;
  if (typeof s !== 'string' || s.length !== n * w) return `expected ${n} codes of ${w} character(s)`;
  const out: number[] = [];
  for (let i = 0; i < s.length; i += w) {
    const v = w === 1 ? DIGIT.get(s[i]!) : (DIGIT.get(s[i]!) ?? NaN) * 64 + (DIGIT.get(s[i + 1]!) ?? NaN);
    if (v === undefined || !Number.isFinite(v) || v >= size) return `code ${JSON.stringify(s.slice(i, i + w))} outside the ${size} names`;
    out.push(v);
  }
  return out;
}

/** The key of a golden selection's ids block: a hash of the sorted ids and their categories. */
export function blockKey(pq: Pick<PerQuery, 'ids' | 'cats'>): string {
  return createHash('sha256').update(pq.ids.join('\n')).update('\0').update(pq.cats.join('\n')).digest('hex').slice(0, 12);
}

// ---- the line ----

/** A history line as JSON (v 1): the point's meta (latency as [p50, p95], the optional figures left out when unknown). */
export interface HistoryLine extends Omit<PointMeta, 'latency' | 'provisional' | 'backlog'> {
  v: 1;
  latency: [number | null, number | null] | null;
  provisional?: number;
  backlog?: number;
  scopes: string[];
  n: number[];
  m: Record<string, (number | null)[]>;
  q: { key: string; ids?: string[]; cats?: string[]; qc?: string } & Record<string, string | string[] | undefined>;
}

/** A line's JSON text (no newline). `withIds`: carry the ids block of its golden selection (its first line, or a repair). */
export function historyLine(meta: PointMeta, pq: PerQuery, withIds: boolean): string {
  const s = summarize(pq);
  const key = blockKey(pq);
  const q: HistoryLine['q'] = { key };
  if (withIds) {
    const cats = [...new Set(pq.cats)].sort();
    const at = new Map(cats.map((c, i) => [c, i]));
    q.ids = pq.ids;
    q.cats = cats;
    q.qc = encodeCodes(pq.cats.map((c) => at.get(c)!), cats.length);
  }
  for (const m of POINT_METRICS) q[m] = encodeValues(pq.values[m]);
  const line: HistoryLine = {
    v: 1,
    repo: meta.repo,
    run: meta.run,
    commit: meta.commit,
    date: meta.date,
    code: meta.code,
    column: meta.column,
    corpus: meta.corpus,
    golden: meta.golden,
    config: meta.config,
    judge: meta.judge,
    latency: meta.latency ? [meta.latency.p50, meta.latency.p95] : null,
    cost: meta.cost,
    ...(meta.provisional !== null ? { provisional: r4(meta.provisional) } : {}),
    ...(meta.backlog !== null ? { backlog: meta.backlog } : {}),
    scopes: s.scopes,
    n: s.counts,
    m: s.means,
    q,
  };
  return JSON.stringify(line);
}

/** A parsed line: its meta, summary and, when its ids are known, its per-query values. */
export interface ParsedLine {
  line: number;
  meta: PointMeta;
  summary: PointSummary;
  key: string;
  /** The ids block this line carries (the first line of its golden selection). */
  block: { ids: string[]; cats: string[] } | null;
  /** Encoded values by metric, decoded on demand (only the points a drift test compares). */
  encoded: Record<string, unknown>;
}

const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const str = (x: unknown): string | null => (typeof x === 'string' ? x : null);
const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

export type LineResult = { ok: ParsedLine } | { newer: number } | { bad: string };

/** One line of the history file (1-based `line`), checked field by field: what is wrong is one phrase naming the field. */
export function parseHistoryLine(text: string, line: number, file: string): LineResult {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return { bad: `not JSON (${(e as Error).message.split('\n')[0]!.slice(0, 80)})` };
  }
  if (!isObj(doc)) return { bad: 'expected a JSON object' };
  if (typeof doc.v === 'number' && Number.isInteger(doc.v) && doc.v > HISTORY_FORMAT.current) return { newer: doc.v };
  try {
    checkFormatVersion(`${file} line ${line}`, doc.v, HISTORY_FORMAT);
  } catch (e) {
    return { bad: (e as Error).message.replace(`${file} line ${line}: `, '') };
  }
  const date = str(doc.date);
  if (!date || !Number.isFinite(Date.parse(date))) return { bad: `field 'date': expected an ISO date, got ${JSON.stringify(doc.date)?.slice(0, 40)}` };
  if (doc.commit !== null && !(typeof doc.commit === 'string' && /^[0-9a-f]{7,64}$/.test(doc.commit))) return { bad: `field 'commit': expected a commit id or null, got ${JSON.stringify(doc.commit)?.slice(0, 50)}` };
  if (doc.code !== null && doc.code !== 0 && doc.code !== 1 && doc.code !== 2) return { bad: `field 'code': expected 0, 1, 2 or null, got ${JSON.stringify(doc.code)}` };
  const scopes = doc.scopes;
  if (!Array.isArray(scopes) || scopes[0] !== OVERALL || !scopes.every((s) => typeof s === 'string')) return { bad: `field 'scopes': expected ["*", categories…]` };
  const n = doc.n;
  if (!Array.isArray(n) || n.length !== scopes.length || !n.every((x) => Number.isInteger(x) && x >= 0)) return { bad: `field 'n': expected ${scopes.length} query counts` };
  if (!isObj(doc.m)) return { bad: `field 'm': expected the means per metric` };
  const means = {} as PointSummary['means'];
  for (const m of POINT_METRICS) {
    const v = doc.m[m] ?? scopes.map(() => null);
    if (!Array.isArray(v) || v.length !== scopes.length || !v.every((x) => x === null || (typeof x === 'number' && x >= 0 && x <= 1)))
      return { bad: `field 'm.${m}': expected ${scopes.length} means in [0, 1] or null` };
    means[m] = v as (number | null)[];
  }
  const q = doc.q;
  if (!isObj(q) || typeof q.key !== 'string') return { bad: `field 'q.key': expected the key of the golden selection's ids` };
  let block: ParsedLine['block'] = null;
  if (q.ids !== undefined) {
    if (!Array.isArray(q.ids) || !q.ids.every((x) => typeof x === 'string') || !Array.isArray(q.cats) || !q.cats.every((x) => typeof x === 'string'))
      return { bad: `field 'q.ids': expected the query ids and 'q.cats' the categories` };
    const codes = decodeCodes(q.qc, q.ids.length, q.cats.length);
    if (typeof codes === 'string') return { bad: `field 'q.qc': ${codes}` };
    const cats = codes.map((c) => (q.cats as string[])[c]);
    block = { ids: q.ids as string[], cats: cats as string[] };
    if (blockKey(block) !== q.key) return { bad: `field 'q.key': ${q.key} is not the key of the ids and categories the line holds` };
  }
  const corpus = isObj(doc.corpus) ? { id: str(doc.corpus.id), path: str(doc.corpus.path) } : null;
  const golden = isObj(doc.golden) && typeof doc.golden.size === 'number' ? { id: str(doc.golden.id), size: doc.golden.size } : null;
  const lat = Array.isArray(doc.latency) ? { p50: num(doc.latency[0]), p95: num(doc.latency[1]) } : null;
  const provisional = num(doc.provisional);
  const backlog = num(doc.backlog);
  return {
    ok: {
      line,
      meta: {
        repo: str(doc.repo),
        run: str(doc.run),
        commit: str(doc.commit),
        date: new Date(date).toISOString(),
        code: (doc.code ?? null) as PointMeta['code'],
        column: str(doc.column),
        corpus,
        golden,
        config: isObj(doc.config) ? doc.config : null,
        judge: str(doc.judge),
        latency: lat,
        cost: num(doc.cost),
        provisional: provisional !== null && provisional >= 0 && provisional <= 1 ? provisional : null,
        backlog: backlog !== null && backlog >= 0 ? backlog : null,
      },
      summary: { scopes: scopes as string[], counts: n as number[], means },
      key: q.key,
      block,
      encoded: q,
    },
  };
}

/** The per-query values of a parsed line given its block's ids; a string saying why not. */
export function lineValues(l: ParsedLine, block: { ids: string[]; cats: string[] }): PerQuery | string {
  const values = {} as PerQuery['values'];
  for (const m of POINT_METRICS) {
    const v = l.encoded[m] === undefined ? block.ids.map(() => null) : decodeValues(l.encoded[m], block.ids.length);
    if (typeof v === 'string') return `q.${m}: ${v}`;
    values[m] = v;
  }
  return { ids: block.ids, cats: block.cats, values };
}

/** The keys whose ids block a readable line of `text` carries (the append writes a block for any other key). */
export function introducedKeys(text: string): Set<string> {
  const keys = new Set<string>();
  let n = 0;
  for (const l of text.split('\n')) {
    n++;
    if (!l.includes('"ids":')) continue;
    const r = parseHistoryLine(l, n, '');
    if ('ok' in r && r.ok.block) keys.add(r.ok.key);
  }
  return keys;
}

/** The provider settings a point records: only those that change what is searched. */
export function pointConfig(b: Pick<Baseline, 'config' | 'config_recorded'>): Record<string, unknown> | null {
  if (b.config_recorded === false || !isObj(b.config)) return null;
  const c = searchedSettings(b.config);
  return Object.keys(c).some((k) => k !== 'provider') ? c : null;
}
