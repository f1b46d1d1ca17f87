/**
 * The judgments file (`judgments.jsonl`, docs/judgments.md): relevance labels beside the golden set, one JSON line per
 * query x document x source, sorted, diffable, with where each label came from. Its first line is the format version
 * (docs/compatibility.md):
 *
 *   {"rankgate_judgments":1}
 *   {"query":"en-direct-001","doc":"guides/reset.md","grade":2,"source":"llm","provider":"openai:chat:gpt-4.1-mini","model":"gpt-4.1-mini","prompt":"relevance-v1","time":"2026-11-29T10:00:00.000Z"}
 *   {"query":"en-direct-001","doc":"guides/reset.md","grade":3,"source":"chair","reviewer":"dafna","time":"2026-11-30T09:12:00.000Z","was":{"source":"llm","grade":2}}
 *
 * - `query`: the golden query's id; `doc`: the document as the golden set names documents (its path, else its doc id,
 *   else a chunk id: docKey below), so a label and a golden reference of the same document compare equal.
 * - `grade`: 0-3, the blind-test framework's scale (3 direct answer, 2 strong supporting context, 1 related,
 *   0 irrelevant); UMBRELA's prompt uses the same 0-3.
 * - `source`: `llm` (a model judged it: provider, model, prompt required), `chair` (a person reviewed it: reviewer
 *   required; `was` keeps the label it replaced), `bootstrap` (from feedback or click logs: `evidence` says how much).
 * - The same (query, doc, source) appears once. Several sources of one pair may stand side by side: the model's label
 *   stays beside the person's who reviewed it (their agreement is measured on exactly those pairs).
 *
 * Which label counts (effectiveLabels): a golden reference always wins (a label never overrides the golden set), then
 * `chair`, then `bootstrap`, then `llm`; every figure says which sources it counts (strict: golden only; `+ labels`).
 * Read in one pass (streamed: a label file of millions of lines stays in bounded memory beside its Map), written
 * atomically (temp file + rename), sorted by query, doc, source.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { UserError } from '../errors.ts';
import { writeLinesAtomic } from '../util/atomic.ts';
import { checkFormatVersion, type FormatSpec } from '../util/format-version.ts';
import { openRegularSync } from '../util/regular-file.ts';

export const JUDGMENTS_FORMAT: FormatSpec = { what: 'judgments file', field: 'rankgate_judgments', current: 1 };
export const SOURCES = ['chair', 'bootstrap', 'llm'] as const;
export type JudgmentSource = (typeof SOURCES)[number];
/** Which source wins for one (query, doc) pair after the golden set: the lower, the stronger. */
export const PRECEDENCE: Readonly<Record<JudgmentSource, number>> = { chair: 0, bootstrap: 1, llm: 2 };
/** The longest line read (a label is a few hundred bytes; evidence a few KB). */
export const MAX_LINE = 64 * 1024;

export interface Judgment {
  query: string;
  doc: string;
  /** 0-3 */
  grade: number;
  source: JudgmentSource;
  time: string;
  /** llm: the promptfoo provider id, the model as the API reported it, the prompt's version. */
  provider?: string;
  model?: string;
  prompt?: string;
  /** chair: who reviewed it, and the label it replaced (if any). */
  reviewer?: string;
  was?: { source: JudgmentSource; grade: number };
  /** bootstrap: what it rests on (e.g. { feedback: 3 } rows, or { clicks, impressions, coec }). */
  evidence?: Record<string, number | string>;
  /** the review queue: a label a person has not reviewed yet is pending (llm and bootstrap labels by default). */
  chunk?: string;
}

const KEYS = new Set(['query', 'doc', 'grade', 'source', 'time', 'provider', 'model', 'prompt', 'reviewer', 'was', 'evidence', 'chunk']);
const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const show = (x: unknown) => JSON.stringify(x)?.slice(0, 80) ?? String(x);

/** One label from a parsed line, checked: a UserError naming the file, the line and the field. */
export function checkJudgment(x: unknown, where: string): Judgment {
  if (!isObj(x)) throw new UserError(`${where}: expected a label {query, doc, grade, source, time, …}, got ${show(x)}`);
  for (const k of Object.keys(x)) if (!KEYS.has(k)) throw new UserError(`${where}: field '${k}': not a field of a label (fields: ${[...KEYS].join(', ')})`);
  for (const f of ['query', 'doc', 'time'] as const) if (typeof x[f] !== 'string' || !(x[f] as string).trim()) throw new UserError(`${where}: field '${f}': expected a non-empty string, got ${show(x[f])}`);
  if (typeof x.grade !== 'number' || !Number.isInteger(x.grade) || x.grade < 0 || x.grade > 3) throw new UserError(`${where}: field 'grade': expected a whole grade from 0 to 3 (3 direct answer … 0 irrelevant), got ${show(x.grade)}`);
  if (!(SOURCES as readonly unknown[]).includes(x.source)) throw new UserError(`${where}: field 'source': expected one of ${SOURCES.join(', ')}, got ${show(x.source)}`);
  if (Number.isNaN(Date.parse(x.time as string))) throw new UserError(`${where}: field 'time': expected an ISO 8601 time, got ${show(x.time)}`);
  const str = (f: string) => {
    if (x[f] !== undefined && (typeof x[f] !== 'string' || !(x[f] as string).trim())) throw new UserError(`${where}: field '${f}': expected a non-empty string, got ${show(x[f])}`);
  };
  for (const f of ['provider', 'model', 'prompt', 'reviewer', 'chunk']) str(f);
  if (x.source === 'llm') for (const f of ['provider', 'model', 'prompt']) if (x[f] === undefined) throw new UserError(`${where}: field '${f}': a model's label (source llm) says which ${f} made it`);
  if (x.source === 'chair' && x.reviewer === undefined) throw new UserError(`${where}: field 'reviewer': a reviewed label (source chair) says who reviewed it`);
  if (x.was !== undefined) {
    const w = x.was;
    if (!isObj(w) || !(SOURCES as readonly unknown[]).includes(w.source) || typeof w.grade !== 'number' || !Number.isInteger(w.grade) || w.grade < 0 || w.grade > 3)
      throw new UserError(`${where}: field 'was': expected {source, grade} of the label it replaced, got ${show(w)}`);
  }
  if (x.evidence !== undefined && (!isObj(x.evidence) || !Object.values(x.evidence).every((v) => typeof v === 'number' || typeof v === 'string')))
    throw new UserError(`${where}: field 'evidence': expected a map of counts or words, got ${show(x.evidence)}`);
  return x as unknown as Judgment;
}

/** The identity of a label in the file: one per (query, doc, source). */
export const labelKey = (j: Pick<Judgment, 'query' | 'doc' | 'source'>) => `${j.query}\u0000${j.doc}\u0000${j.source}`;

/** The file's order: query, doc, source (by precedence), each compared as strings. */
export function compareLabels(a: Judgment, b: Judgment): number {
  if (a.query !== b.query) return a.query < b.query ? -1 : 1;
  if (a.doc !== b.doc) return a.doc < b.doc ? -1 : 1;
  return PRECEDENCE[a.source] - PRECEDENCE[b.source];
}

/** The canonical line of a label: its keys in one order, nothing undefined. */
export function labelLine(j: Judgment): string {
  const o: Record<string, unknown> = {};
  for (const k of ['query', 'doc', 'grade', 'source', 'provider', 'model', 'prompt', 'reviewer', 'was', 'evidence', 'chunk', 'time'] as const) if (j[k] !== undefined) o[k] = j[k];
  return JSON.stringify(o);
}

/** Read a judgments file (streamed); every problem is one UserError line naming the file, the line and the field. */
export async function readJudgments(path: string): Promise<Judgment[]> {
  let fd: number;
  try {
    fd = openRegularSync(path);
  } catch (e) {
    throw new UserError(`${path}: cannot read the judgments file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const rl = createInterface({ input: createReadStream('', { fd, encoding: 'utf8' }), crlfDelay: Infinity });
  const out: Judgment[] = [];
  const seen = new Map<string, number>();
  let n = 0;
  let header = false;
  try {
    for await (const raw of rl) {
      n++;
      const line = raw.trim();
      if (!line) continue;
      if (line.length > MAX_LINE) throw new UserError(`${path}:${n}: a line of ${line.length} characters, longer than the ${MAX_LINE} a label may take`);
      let x: unknown;
      try {
        x = JSON.parse(line);
      } catch (e) {
        throw new UserError(`${path}:${n}: not JSON (${(e as Error).message.split('\n')[0]})`);
      }
      if (!header) {
        if (!isObj(x) || !('rankgate_judgments' in x)) throw new UserError(`${path}:${n}: the first line must be the format header {"rankgate_judgments": ${JUDGMENTS_FORMAT.current}} (a judgments file written by rankgate)`);
        checkFormatVersion(`${path}:${n}`, x.rankgate_judgments, JUDGMENTS_FORMAT);
        header = true;
        continue;
      }
      const j = checkJudgment(x, `${path}:${n}`);
      const k = labelKey(j);
      const prev = seen.get(k);
      if (prev !== undefined) throw new UserError(`${path}:${n}: query '${j.query}' doc '${j.doc}' source ${j.source}: labelled twice (also line ${prev}); one label per query, document and source`);
      seen.set(k, n);
      out.push(j);
    }
  } catch (e) {
    if (e instanceof UserError) throw e;
    throw new UserError(`${path}: cannot read the judgments file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  } finally {
    rl.close();
  }
  if (!header) throw new UserError(`${path}: empty: expected the header {"rankgate_judgments": ${JUDGMENTS_FORMAT.current}} and one label per line`);
  return out;
}

/** Write labels (sorted, one canonical line each, after the header), atomically. Refuses duplicates. */
export function writeJudgments(path: string, labels: readonly Judgment[]): void {
  const sorted = [...labels].sort(compareLabels);
  for (let i = 1; i < sorted.length; i++)
    if (labelKey(sorted[i]!) === labelKey(sorted[i - 1]!)) throw new UserError(`${path}: query '${sorted[i]!.query}' doc '${sorted[i]!.doc}' source ${sorted[i]!.source}: two labels of one source for one pair`);
  writeLinesAtomic(
    path,
    (function* () {
      yield JSON.stringify({ rankgate_judgments: JUDGMENTS_FORMAT.current });
      for (const j of sorted) yield labelLine(j);
    })(),
  );
}

/** Labels merged into an existing file's: a label of the same (query, doc, source) replaces the old one. */
export function mergeLabels(existing: readonly Judgment[], incoming: readonly Judgment[]): Judgment[] {
  const m = new Map(existing.map((j) => [labelKey(j), j]));
  for (const j of incoming) m.set(labelKey(j), j);
  return [...m.values()].sort(compareLabels);
}

/** The label that counts per (query, doc): chair over bootstrap over llm (a golden reference is above them all: the caller's). */
export function effectiveLabels(labels: readonly Judgment[]): Map<string, Map<string, Judgment>> {
  const out = new Map<string, Map<string, Judgment>>();
  for (const j of labels) {
    const q = out.get(j.query) ?? out.set(j.query, new Map()).get(j.query)!;
    const cur = q.get(j.doc);
    if (!cur || PRECEDENCE[j.source] < PRECEDENCE[cur.source]) q.set(j.doc, j);
  }
  return out;
}

/** A label a person has not reviewed: a model's or a bootstrap's without a chair label of the same pair. */
export function pendingLabels(labels: readonly Judgment[]): Judgment[] {
  const reviewed = new Set(labels.filter((j) => j.source === 'chair').map((j) => `${j.query}\u0000${j.doc}`));
  return labels.filter((j) => j.source !== 'chair' && !reviewed.has(`${j.query}\u0000${j.doc}`));
}

/**
 * The key a golden set's references use for a hit's document: its path when the references name paths, its document
 * id when they name doc ids, else its chunk id. Labels and golden references of one document then compare equal.
 */
export function docKey(hit: { chunkId: string; documentId: string; path?: string }, level: 'path' | 'doc' | 'chunk'): string {
  if (level === 'path' && hit.path !== undefined) return hit.path;
  if (level === 'chunk') return hit.chunkId;
  return hit.documentId;
}
