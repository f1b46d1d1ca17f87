/**
 * Bootstrap from logs (`rankgate golden bootstrap --from-feedback`, docs/judgments.md): explicit feedback and clicks
 * grouped by normalised query into relevant documents, then written where each serves:
 *
 *   - the golden set (gold-set JSONL, --out) gets bootstrap QUERIES: one `source: bootstrap` entry per logged query the
 *     golden set does not ask yet, its relevant ids the documents the logs support, the evidence in its `note`; ids
 *     `log-<words>-<hash>` from the normalised query, so an entry keeps its id as the log grows;
 *   - the judgments file (--judgments) gets bootstrap LABELS for queries the golden set already asks: one
 *     `source: bootstrap` label per (golden query, document) with its `evidence`, beside the golden references (a label
 *     never overrides them), pending until a person reviews it.
 *
 * Everything here is a function of the logs' content, not their order: the same logs give the same files, byte for
 * byte. A row is read once and folded into aggregate maps (per query, per query x document); memory grows with the
 * distinct queries and pairs, never with the rows.
 */
import { createHash } from 'node:crypto';
import { UserError } from '../errors.ts';
import type { GoldenQuery, Reference } from '../golden/schema.ts';
import { guessLanguage } from '../golden/text.ts';
import { PositionPrior, clickVerdict, newClickStat, type ClickStat } from './clicks.ts';
import type { Judgment } from './file.ts';
import { goldLineOf, type GoldLine, type GoldLines } from './goldlines.ts';
import { CLICK_ACTIONS, IMPRESSION_ACTIONS, displayQuery, normaliseQuery, readFeedbackFile, readUbiEvents, readUbiQueries, type FeedbackRow, type LogFile } from './logs.ts';

/** Ids of the golden entries this command generates (and regenerates). */
export const LOG_ID_PREFIX = 'log-';
/** The category of a generated entry. */
export const LOG_CATEGORY = 'from_logs';

export interface LogBootstrapOptions {
  /** feedback: a pair is kept with a row at or above this score (seed 004: 3, a cited precedent) */
  minScore: number;
  /** clicks: COEC threshold and minimum impressions (src/judgments/clicks.ts) */
  minCoec: number;
  minImpressions: number;
  minClicks: number;
  /** the position the log counts from (UBI: 1) */
  ordinalBase: number;
  /** the most documents one generated entry lists (the strongest evidence first) */
  maxDocs: number;
  /** the corpus, when rankgate knows it: ids (and own paths) of its documents; other ids are refused and counted */
  corpus?: { name: string; has: (id: string) => boolean };
}

export const DEFAULTS = { minScore: 3, minCoec: 1, minImpressions: 10, minClicks: 3, ordinalBase: 1, maxDocs: 10 } as const;

export interface LogDoc {
  doc: string;
  grade: number;
  from: 'feedback' | 'clicks';
  evidence: Record<string, number>;
  /** the latest supporting row's time (epoch ms) */
  time: number;
}

export interface LogQuery {
  norm: string;
  /** the form most rows typed (NFKC, whitespace collapsed; ties: the first in code-unit order) */
  display: string;
  sources: ('feedback' | 'clicks')[];
  docs: LogDoc[];
}

export interface LogSummary {
  feedbackRows: number;
  ubiQueries: number;
  ubiEvents: number;
  clicks: number;
  impressions: number;
  /** where impressions came from: impression events, or each query's query_response_hit_ids */
  impressionSource: 'events' | 'hit ids' | null;
  emptyQueries: number;
  /** click/impression events whose query_id no ubi_queries record has (and no user_query of their own) */
  orphanEvents: number;
  /** events of other actions (add_to_cart, ...): not read */
  otherEvents: number;
  /** rows (or hit ids / events) naming a document the corpus does not have, and how many distinct ids */
  refusedRows: number;
  refusedIds: number;
  refusedSample: string[];
  acceptedRows: number;
  /** pairs with evidence, and the pairs kept (at or above the thresholds) */
  pairs: number;
  keptPairs: number;
  queries: LogQuery[];
  prior: ReturnType<PositionPrior['table']>;
}

interface FbStat {
  at: number;
  below: number;
  max: number;
  time: number;
}

/** Aggregate maps over the logs (read once, or twice for clicks: the position prior first). */
class Aggregate {
  readonly index = new Map<string, number>();
  readonly norms: string[] = [];
  readonly forms: Map<string, number>[] = [];
  readonly fb = new Map<string, FbStat>();
  readonly ck = new Map<string, ClickStat>();
  refusedRows = 0;
  acceptedRows = 0;
  readonly refused = new Set<string>();
  constructor(readonly corpus: LogBootstrapOptions['corpus']) {}

  /** The index of a query (by its normalised form), counting the form it was typed in. */
  query(raw: string): number {
    const norm = normaliseQuery(raw);
    let i = this.index.get(norm);
    if (i === undefined) {
      i = this.norms.length;
      this.index.set(norm, i);
      this.norms.push(norm);
      this.forms.push(new Map());
    }
    const f = displayQuery(raw);
    const m = this.forms[i]!;
    m.set(f, (m.get(f) ?? 0) + 1);
    return i;
  }

  /** Whether the corpus has this id (always, when the corpus is not known); a refused id is counted. */
  accept(doc: string): boolean {
    if (!this.corpus || this.corpus.has(doc)) {
      this.acceptedRows++;
      return true;
    }
    this.refusedRows++;
    if (this.refused.size < 100_000) this.refused.add(doc);
    return false;
  }

  display(i: number): string {
    let best = '';
    let n = -1;
    for (const [f, c] of this.forms[i]!) if (c > n || (c === n && f < best)) [best, n] = [f, c];
    return best;
  }
}

const pairKey = (q: number, doc: string) => `${q}\u0000${doc}`;
const splitKey = (k: string): [number, string] => {
  const at = k.indexOf('\u0000');
  return [Number(k.slice(0, at)), k.slice(at + 1)];
};

/** The sources a run reads: log files, and feedback rows from elsewhere (the SQL query). */
export interface LogInputs {
  files: readonly LogFile[];
  feedback?: AsyncIterable<FeedbackRow>;
}

/** Read every log once (clicks twice), fold it into aggregates, and say which documents each query's logs support. */
export async function aggregateLogs(inputs: LogInputs, o: LogBootstrapOptions): Promise<LogSummary> {
  const agg = new Aggregate(o.corpus);
  const s: LogSummary = {
    feedbackRows: 0,
    ubiQueries: 0,
    ubiEvents: 0,
    clicks: 0,
    impressions: 0,
    impressionSource: null,
    emptyQueries: 0,
    orphanEvents: 0,
    otherEvents: 0,
    refusedRows: 0,
    refusedIds: 0,
    refusedSample: [],
    acceptedRows: 0,
    pairs: 0,
    keptPairs: 0,
    queries: [],
    prior: [],
  };

  // explicit feedback: one pass
  const fold = (r: FeedbackRow) => {
    s.feedbackRows++;
    if (!agg.accept(r.doc)) return;
    const k = pairKey(agg.query(r.query), r.doc);
    let st = agg.fb.get(k);
    if (!st) agg.fb.set(k, (st = { at: 0, below: 0, max: -1, time: 0 }));
    if (r.score >= o.minScore) {
      st.at++;
      if (r.score > st.max) st.max = r.score;
    } else st.below++;
    if (r.time > st.time) st.time = r.time;
  };
  for (const f of inputs.files) if (f.kind === 'feedback') for await (const r of readFeedbackFile(f.path)) fold(r);
  if (inputs.feedback) for await (const r of inputs.feedback) fold(r);

  // clicks: pass 1, the position prior over the whole log
  const queriesFiles = inputs.files.filter((f) => f.kind === 'ubi_queries');
  const eventFiles = inputs.files.filter((f) => f.kind === 'ubi_events');
  if (eventFiles.length) {
    const fromEvents = new PositionPrior();
    const fromHits = new PositionPrior();
    let impressionEvents = 0;
    for (const f of eventFiles)
      for (const e of readUbiEvents(f.path, o.ordinalBase)) {
        if (CLICK_ACTIONS.has(e.action)) {
          fromEvents.click(e.position!);
          fromHits.click(e.position!);
        } else if (IMPRESSION_ACTIONS.has(e.action)) {
          fromEvents.impression(e.position!);
          impressionEvents++;
        }
      }
    const useEvents = impressionEvents > 0;
    if (!useEvents) for (const f of queriesFiles) for (const q of readUbiQueries(f.path)) q.hitIds.forEach((_, i) => fromHits.impression(i + 1));
    const prior = useEvents ? fromEvents : fromHits;
    s.impressionSource = useEvents ? 'events' : 'hit ids';
    s.prior = prior.table();

    // pass 2: the pairs
    const byQueryId = new Map<string, number>();
    const pair = (q: number, doc: string) => {
      const k = pairKey(q, doc);
      let st = agg.ck.get(k);
      if (!st) agg.ck.set(k, (st = newClickStat()));
      return st;
    };
    for (const f of queriesFiles)
      for (const q of readUbiQueries(f.path)) {
        s.ubiQueries++;
        if (!q.userQuery.trim()) {
          s.emptyQueries++;
          continue;
        }
        const qi = agg.query(q.userQuery);
        byQueryId.set(q.queryId, qi);
        if (!useEvents)
          q.hitIds.forEach((doc, i) => {
            s.impressions++;
            if (!agg.accept(doc)) return;
            const st = pair(qi, doc);
            st.impressions++;
            st.expected += prior.ctr(i + 1);
          });
      }
    for (const f of eventFiles)
      for (const e of readUbiEvents(f.path, o.ordinalBase)) {
        s.ubiEvents++;
        const click = CLICK_ACTIONS.has(e.action);
        const imp = IMPRESSION_ACTIONS.has(e.action);
        if (!click && !imp) {
          s.otherEvents++;
          continue;
        }
        if (click) s.clicks++;
        else s.impressions++;
        const qi = byQueryId.get(e.queryId) ?? (e.userQuery ? agg.query(e.userQuery) : undefined);
        if (qi === undefined) {
          s.orphanEvents++;
          continue;
        }
        if (!agg.accept(e.doc!)) continue;
        const st = pair(qi, e.doc!);
        if (click) {
          st.clicks++;
          if (e.time > st.time) st.time = e.time;
        } else {
          st.impressions++;
          st.expected += prior.ctr(e.position!);
        }
      }
  } else if (queriesFiles.length) throw new UserError(`${queriesFiles.map((f) => f.path).join(', ')}: UBI queries without the ubi_events store: clicks are in the events (give both)`);

  s.refusedRows = agg.refusedRows;
  s.refusedIds = agg.refused.size;
  s.refusedSample = [...agg.refused].sort().slice(0, 5);
  s.acceptedRows = agg.acceptedRows;
  if (o.corpus && agg.acceptedRows === 0 && agg.refusedRows > 0)
    throw new UserError(
      `none of the ${s.refusedIds} document ids the logs name is a document of corpus ${o.corpus.name} (e.g. ${s.refusedSample.join(', ')}): logs of another index, or the wrong --corpus? nothing written`,
    );

  // per query: the documents the logs support (explicit feedback decides a pair it has rows for; clicks the others)
  const per = new Map<number, LogDoc[]>();
  const add = (q: number, d: LogDoc) => (per.get(q) ?? per.set(q, []).get(q)!).push(d);
  for (const [k, st] of agg.fb) {
    s.pairs++;
    if (st.at < 1) continue;
    const [q, doc] = splitKey(k);
    add(q, { doc, grade: st.max, from: 'feedback', evidence: { feedback: st.at, below: st.below }, time: st.time });
  }
  for (const [k, st] of agg.ck) {
    if (agg.fb.has(k)) continue;
    s.pairs++;
    const v = clickVerdict(st, o);
    if (!v.keep) continue;
    const [q, doc] = splitKey(k);
    add(q, { doc, grade: v.grade, from: 'clicks', evidence: { clicks: st.clicks, impressions: st.impressions, coec: Math.round(v.coec! * 1000) / 1000 }, time: st.time });
  }
  const strength = (d: LogDoc) => d.evidence.feedback ?? d.evidence.clicks ?? 0;
  for (const [q, docs] of per) {
    docs.sort((a, b) => b.grade - a.grade || strength(b) - strength(a) || (a.doc < b.doc ? -1 : a.doc > b.doc ? 1 : 0));
    const kept = docs.slice(0, o.maxDocs);
    s.keptPairs += kept.length;
    s.queries.push({ norm: agg.norms[q]!, display: agg.display(q), sources: [...new Set(kept.map((d) => d.from))].sort(), docs: kept });
  }
  s.queries.sort((a, b) => (a.norm < b.norm ? -1 : a.norm > b.norm ? 1 : 0));
  return s;
}

/** The id of a generated entry: `log-` + the query's words (at most 40 characters) + 8 hex of its SHA-256. */
export function logQueryId(norm: string): string {
  const words = Array.from(norm.replace(/[^\p{L}\p{N}\p{M}]+/gu, '-').replace(/^-+|-+$/g, ''))
    .slice(0, 40)
    .join('')
    .replace(/-+$/, '');
  const hash = createHash('sha256').update(norm).digest('hex').slice(0, 8);
  return `${LOG_ID_PREFIX}${words ? `${words}-` : ''}${hash}`;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const evidenceText = (d: LogDoc, minScore: number) =>
  d.from === 'feedback'
    ? `${d.doc}: ${plural(d.evidence.feedback!, 'row')} scored >= ${minScore}${d.evidence.below ? `, ${d.evidence.below} below` : ''}`
    : `${d.doc}: ${plural(d.evidence.clicks!, 'click')} / ${plural(d.evidence.impressions!, 'impression')}, COEC ${d.evidence.coec}`;

/** The golden entry of a logged query: its supported documents relevant, with their grades; the evidence in `note`. */
export function logEntry(q: LogQuery, o: Pick<LogBootstrapOptions, 'minScore'>): GoldenQuery {
  const expected: Reference[] = q.docs.map((d) => ({ doc_id: d.doc, grade: d.grade, relevant: true }));
  const rule = q.sources.map((s) => (s === 'feedback' ? `feedback score >= ${o.minScore}` : 'clicks over expected clicks')).join(' and ');
  return {
    id: logQueryId(q.norm),
    query: q.display,
    language: guessLanguage(q.display),
    category: LOG_CATEGORY,
    tags: [...q.sources],
    slices: {},
    expected,
    expected_routing: 'search',
    source: 'bootstrap',
    notes: `bootstrap from logs (${rule}): ${q.docs.map((d) => evidenceText(d, o.minScore)).join('; ')}`,
    origin: { format: 'jsonl', derived: ['language', 'expected_routing'] },
  };
}

export interface GoldMerge {
  lines: GoldLine[];
  added: string[];
  updated: string[];
  unchanged: number;
  /** generated ids another entry (reviewed, hand-written, known-item) holds: not written */
  protected: string[];
  /** generated entries of an earlier run the logs no longer support: kept (old queries are regression tests) */
  orphaned: string[];
}

/**
 * Generated entries merged into the file's lines: an earlier generated line of the same id (`source: bootstrap`, id
 * starting with `prefix`) is replaced (or left when equal), new ones appended in id order, every other line kept as its
 * bytes are. Known-item bootstrap (prefix `known-`) merges the same way into gold-set JSONL.
 */
export function mergeLogEntries(existing: readonly GoldLine[], generated: readonly GoldenQuery[], prefix = LOG_ID_PREFIX): GoldMerge {
  const r: GoldMerge = { lines: [...existing], added: [], updated: [], unchanged: 0, protected: [], orphaned: [] };
  const at = new Map<string, number>();
  existing.forEach((l, i) => {
    if (l.id !== undefined) at.set(l.id, i);
  });
  const ours = (l: GoldLine) => l.source === 'bootstrap' && l.id!.startsWith(prefix);
  const made = new Set<string>();
  const fresh: GoldLine[] = [];
  for (const q of generated) {
    made.add(q.id);
    const line = goldLineOf(q);
    const i = at.get(q.id);
    if (i === undefined) {
      fresh.push(line);
      r.added.push(q.id);
    } else if (!ours(existing[i]!)) r.protected.push(q.id);
    else if (existing[i]!.text === line.text) r.unchanged++;
    else {
      r.lines[i] = line;
      r.updated.push(q.id);
    }
  }
  for (const l of existing) if (l.id !== undefined && ours(l) && !made.has(l.id)) r.orphaned.push(l.id);
  fresh.sort((a, b) => (a.id! < b.id! ? -1 : 1));
  r.lines.push(...fresh);
  return r;
}

/** A golden query a logged query may label: its id, and the documents it already expects. */
export interface AskedQuery {
  id: string;
  norm: string;
  expects: (doc: string) => boolean;
  /** the golden set names documents by path: labels use the corpus document's path */
  byPath: boolean;
}

export function askedQuery(q: GoldenQuery): AskedQuery {
  const ids = new Set(q.expected.flatMap((r) => [r.doc_id, r.path].filter((x): x is string => !!x)));
  return { id: q.id, norm: normaliseQuery(q.query), expects: (d) => ids.has(d), byPath: q.expected.some((r) => r.path !== undefined) };
}

/**
 * Bootstrap labels for the logged queries the golden set already asks: one per (golden query, supported document it
 * does not already expect). `pathOf` maps a document id to its path in the corpus (labels of a set that names paths).
 */
export function logLabels(queries: readonly LogQuery[], asked: readonly AskedQuery[], pathOf?: (id: string) => string | undefined): Judgment[] {
  const byNorm = new Map<string, AskedQuery[]>();
  for (const a of asked) (byNorm.get(a.norm) ?? byNorm.set(a.norm, []).get(a.norm)!).push(a);
  const out = new Map<string, Judgment>();
  for (const q of queries)
    for (const a of byNorm.get(q.norm) ?? [])
      for (const d of q.docs) {
        const doc = a.byPath ? (pathOf?.(d.doc) ?? d.doc) : d.doc;
        if (a.expects(doc) || a.expects(d.doc)) continue;
        const k = `${a.id}\u0000${doc}`;
        if (out.has(k)) continue;
        out.set(k, { query: a.id, doc, grade: d.grade, source: 'bootstrap', evidence: { ...d.evidence }, time: new Date(d.time).toISOString() });
      }
  return [...out.values()];
}
