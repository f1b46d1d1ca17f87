/**
 * TREC pooling over a results file (`rankgate judge pool`, docs/judgments.md "Pooling"): the union of every column's top
 * `depth` results per query that nothing labels yet, deduplicated across columns, each (query, document) pair once.
 *
 * Per measured row of a ranked query (an errored row returned nothing; a routing-only query, without a relevant
 * reference, has no ranking figure a label could enter), its ranking cut at `depth` in the golden set's units (documents
 * at the rank of their best chunk when every reference names a document, else chunks: src/results/score.ts), each unit:
 * - labelled by the golden set: it matches a golden reference of any grade (the golden set above every label; such a pair
 *   is never sent);
 * - labelled by the judgments file: a label of any source names its (query, document) (a person's, a bootstrap's or a
 *   model's: a pair with a label is never sent again; delete the label to have it judged anew);
 * - else unlabelled: a pair, kept once per (query, document) with the text of its best-ranked chunk (ties: the first
 *   column), and counted in every column that returned it.
 *
 * The text the judge reads: rankgate's own search (its rows name the index variant they searched; a url: or module:
 * service's do not) keeps the chunk's stored text in its index, read back in full (`fetchPoolTexts`); another service's rows keep the full text of the
 * hits matching a golden reference and 300 characters of the other top 5 (src/results/compact.ts): its pairs below rank 5
 * have no text and pooling that deep is refused in one line (`textProblem`), and a snippet is judged as a snippet (said).
 *
 * Here because pooling reads results rows (the results room is above src/judgments, whose file it reads and whose
 * label keys it uses); the calls are src/judge's, the orchestration `rankgate judge pool`'s (src/cli/judge-pool.ts).
 */
import { GoldenQuerySchema, type GoldenQuery } from '../golden/schema.ts';
import { docKey, type Judgment } from '../judgments/file.ts';
import { UserError } from '../errors.ts';
import { labelKeyLevel, parseOutput, refMatchesHit } from './score.ts';
import type { HarnessHit, HarnessMetadata } from './types.ts';
import { REDACTED } from '../util/redact.ts';

/** One distinct unlabelled (query, document) pair of the pool. */
export interface PoolPair {
  /** The golden query's id and text. */
  query: string;
  queryText: string;
  /** The document as the golden set names documents (the label's `doc`). */
  doc: string;
  /** The chunk whose text is judged: the document's best-ranked chunk. */
  chunk: string;
  /** Its best rank over the columns, and the column (0-based) that ranked it there. */
  rank: number;
  column: number;
  /** The text the row kept (null: none, a hit past the kept ranks); `snippet`: only the shown cut of it. */
  text: string | null;
  snippet: boolean;
  /** The index variant the chunk was searched in (rankgate's own search: `c300:use-lite`), else null. */
  variant: string | null;
  /** Columns that returned it in their top `depth`. */
  columns: number;
}

export interface PoolPlan {
  depth: number;
  /** Column labels (by promptIdx). */
  columns: string[];
  /** Measured rows of ranked queries read, errored rows left out, and rows of routing-only queries (no relevant reference: no ranking figure) left out. */
  rows: number;
  errored: number;
  routingOnly: number;
  /** Top-`depth` units over all columns and rows, and how each was labelled. */
  results: number;
  golden: number;
  labelled: number;
  unlabelled: number;
  /** The distinct unlabelled pairs, in (query, doc) order. */
  pairs: PoolPair[];
}

interface RawRow {
  promptIdx?: unknown;
  provider?: { label?: unknown; id?: unknown };
  testCase?: { metadata?: { golden?: unknown } };
  response?: { output?: unknown; metadata?: HarnessMetadata & { diagnostics?: { index?: { variant?: unknown } } | null }; error?: unknown } | null;
  error?: unknown;
}

/** Units of one ranking at the golden set's level, best first, cut at `depth`: documents at their best chunk, or chunks. */
function unitsOf(hits: readonly HarnessHit[], document: boolean, depth: number): { id: string; hits: HarnessHit[] }[] {
  const sorted = [...hits].sort((a, b) => a.rank - b.rank);
  const units: { id: string; hits: HarnessHit[] }[] = [];
  const byId = new Map<string, { id: string; hits: HarnessHit[] }>();
  for (const h of sorted) {
    const id = document ? h.documentId : h.chunkId;
    let u = byId.get(id);
    if (!u) {
      if (units.length >= depth) continue;
      u = { id, hits: [] };
      byId.set(id, u);
      units.push(u);
    }
    u.hits.push(h);
  }
  return units;
}

/** A hit's kept text: full, a shown snippet (compact.ts cut it: ends with "…" within the kept length), or none. */
function keptText(h: HarnessHit, kept: { chars: number } | undefined): { text: string | null; snippet: boolean } {
  const t = h.content ?? '';
  if (!t) return { text: null, snippet: false };
  const snippet = t.endsWith('…') && t.length <= (kept?.chars ?? 300);
  return { text: t, snippet };
}

/**
 * The pool of a results file's rows (any order, every column): what each top-`depth` unit is labelled by, and the
 * distinct unlabelled pairs. `existing`: the judgments file's labels (any source makes a pair labelled).
 */
export function planPool(rows: Iterable<unknown>, existing: readonly Judgment[], depth: number): PoolPlan {
  const have = new Set(existing.map((j) => `${j.query}\u0000${j.doc}`));
  const plan: PoolPlan = { depth, columns: [], rows: 0, errored: 0, routingOnly: 0, results: 0, golden: 0, labelled: 0, unlabelled: 0, pairs: [] };
  const pairs = new Map<string, PoolPair>();
  for (const raw of rows) {
    const row = raw as RawRow;
    const col = typeof row.promptIdx === 'number' ? row.promptIdx : 0;
    if (plan.columns[col] === undefined) plan.columns[col] = String(row.provider?.label ?? row.provider?.id ?? `column-${col}`);
    const g = GoldenQuerySchema.safeParse(row.testCase?.metadata?.golden);
    if (!g.success) continue;
    const golden: GoldenQuery = g.data;
    // promptfoo also sets row.error on a row that failed its assertions: only the response says whether the search answered
    if (!row.response || row.response.error || row.response.output === undefined) {
      plan.errored++;
      continue;
    }
    let out;
    try {
      out = parseOutput(row.response.output, row.response.metadata);
    } catch {
      plan.errored++;
      continue;
    }
    const refs = golden.expected ?? [];
    // a routing-only query (no relevant reference) has no ranking figure a label could enter: not pooled
    if (!refs.some((r) => r.relevant)) {
      plan.routingOnly++;
      continue;
    }
    plan.rows++;
    const meta = row.response.metadata;
    const level = labelKeyLevel(refs);
    const variant = typeof meta?.diagnostics?.index?.variant === 'string' ? meta.diagnostics.index.variant : null;
    for (const u of unitsOf(out.hits, level !== 'chunk', depth)) {
      plan.results++;
      if (u.hits.some((h) => refs.some((r) => refMatchesHit(r, h, meta)))) {
        plan.golden++;
        continue;
      }
      const best = u.hits[0]!;
      const doc = docKey(best, level);
      const key = `${golden.id}\u0000${doc}`;
      if (have.has(key)) {
        plan.labelled++;
        continue;
      }
      plan.unlabelled++;
      const prev = pairs.get(key);
      const kept = keptText(best, out.textKept);
      if (prev) {
        prev.columns++;
        // the text of the best-ranked chunk over the columns (ties: the first column); a kept full text beats a snippet
        const better = best.rank < prev.rank || (best.rank === prev.rank && col < prev.column);
        if (better || (prev.text === null && kept.text !== null) || (prev.snippet && kept.text !== null && !kept.snippet)) {
          Object.assign(prev, { chunk: best.chunkId, rank: best.rank, column: col, text: kept.text, snippet: kept.snippet, variant });
        }
        continue;
      }
      pairs.set(key, { query: golden.id, queryText: golden.query, doc, chunk: best.chunkId, rank: best.rank, column: col, ...kept, variant, columns: 1 });
    }
  }
  plan.pairs = [...pairs.values()].sort((a, b) => (a.query < b.query ? -1 : a.query > b.query ? 1 : a.doc < b.doc ? -1 : a.doc > b.doc ? 1 : 0));
  return plan;
}

/**
 * Why the plan cannot be judged on the text the results kept (one line), or null: a pair whose row kept no text and
 * that rankgate's own search did not return (only its rows name the index variant they searched: its text is read back).
 */
export function textProblem(plan: PoolPlan, file: string): string | null {
  const missing = plan.pairs.filter((p) => p.text === null && !p.variant);
  if (!missing.length) return null;
  const m = missing[0]!;
  const deepest = Math.min(...missing.map((p) => p.rank));
  return (
    `${file}: --depth ${plan.depth}: ${missing.length} unlabelled result(s) have no text in the results (e.g. query ${m.query} rank ${m.rank} '${m.chunk}' of column '${plan.columns[m.column]}'): ` +
    `a results file keeps 300 characters of the top 5 (and the full text of the hits matching the golden set, or of the top 10 when a judge assertion ran), and that column's search is not rankgate's own, whose index pooling reads back; ` +
    `pool with --depth ${Math.max(1, deepest - 1)}, or run the eval with the judge assertion on (its rows keep the top 10's text)`
  );
}

/** `c300:use-lite` -> { chunkSize: 300, embedder: 'use-lite' }; null for another shape. */
export function parseVariant(v: string): { chunkSize: number; embedder: string } | null {
  const m = /^c(\d+)[:/](.+)$/.exec(v);
  return m ? { chunkSize: Number(m[1]), embedder: m[2]! } : null;
}

/** A service that can read chunk texts back (SearchService.chunkTexts), and close. */
export interface ChunkTextSource {
  chunkTexts(ids: readonly string[], variant: { chunkSize: number; embedder: string }): Promise<Map<string, string>>;
  close(): Promise<void>;
}

/**
 * Replace the kept text of every pair from a rankgate column by the chunk's full stored text, read from the index the
 * column searched (its provider config's databaseUrl, unless redacted in the results, or dataDir; else DATABASE_URL or
 * the default PGlite directory, as the search resolved them). `open` builds the reader (tests pass a fake). Returns how
 * many texts came from the index. A chunk the index no longer holds is one line (the index changed since the eval).
 */
export async function fetchPoolTexts(
  plan: PoolPlan,
  configs: readonly Record<string, unknown>[],
  open: (target: { databaseUrl?: string; dataDir?: string }) => Promise<ChunkTextSource>,
): Promise<number> {
  const groups = new Map<string, { target: { databaseUrl?: string; dataDir?: string }; variant: string; pairs: PoolPair[] }>();
  for (const p of plan.pairs) {
    // only rankgate's own search names the index variant it searched (src/search/types.ts IndexIdentity)
    if (!p.variant) continue;
    const cfg = configs[p.column] ?? {};
    const url = typeof cfg.databaseUrl === 'string' && !cfg.databaseUrl.includes(REDACTED) ? cfg.databaseUrl : undefined;
    const dir = typeof cfg.dataDir === 'string' ? cfg.dataDir : undefined;
    const target = { ...(url ? { databaseUrl: url } : {}), ...(dir ? { dataDir: dir } : {}) };
    const k = JSON.stringify([target, p.variant]);
    const g = groups.get(k) ?? groups.set(k, { target, variant: p.variant, pairs: [] }).get(k)!;
    g.pairs.push(p);
  }
  let n = 0;
  const byTarget = new Map<string, ChunkTextSource>();
  try {
    for (const g of groups.values()) {
      const v = parseVariant(g.variant);
      if (!v) throw new UserError(`index variant '${g.variant}' of the results: expected c<chunk size>:<embedder>`);
      const tk = JSON.stringify(g.target);
      let src = byTarget.get(tk);
      if (!src) {
        src = await open(g.target);
        byTarget.set(tk, src);
      }
      const texts = await src.chunkTexts([...new Set(g.pairs.map((p) => p.chunk))], v);
      for (const p of g.pairs) {
        const t = texts.get(p.chunk);
        if (t === undefined) {
          if (p.text !== null) continue; // the row's own text stands
          throw new UserError(`the index variant ${g.variant} no longer holds chunk '${p.chunk}' (query ${p.query}): the index changed since the eval; re-run the eval, or pool with a smaller --depth`);
        }
        p.text = t;
        p.snippet = false;
        n++;
      }
    }
  } finally {
    for (const s of byTarget.values()) await s.close().catch(() => {});
  }
  return n;
}
