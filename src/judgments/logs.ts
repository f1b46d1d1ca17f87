/**
 * The logs a golden set and its labels can start from (docs/judgments.md "Sources"), read one row at a time and
 * checked: every problem is one UserError naming the file (or `sql row N`), the line and the field.
 *
 *   - explicit feedback joined with the search log: rows {query, doc, score, time} from a CSV or JSONL export of the
 *     join, or straight from the team's Postgres through a SELECT (feedback.sql beside this file, or the team's own);
 *     the legal harness's column names are accepted as they are (case_law_id / doc_id -> doc, relevance_score -> score,
 *     created_at -> time);
 *   - a click log in the shape of OpenSearch's User Behavior Insights (UBI 1.x): the `ubi_queries` store (query_id,
 *     user_query, query_response_hit_ids, timestamp) and the `ubi_events` store (action_name, query_id, timestamp,
 *     event_attributes.object.object_id, event_attributes.position.ordinal), each exported as JSONL.
 *
 * Memory holds one row at a time (a line is at most MAX_LOG_LINE bytes): the caller keeps aggregates only.
 */
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { parse as parseCsv } from 'csv-parse';
import { UserError } from '../errors.ts';
import { badId } from '../golden/schema.ts';
import { LineTooLongError, readLinesSync } from '../util/lines.ts';
import { NotRegularFileError, openRegularSync } from '../util/regular-file.ts';

/** The longest line (or CSV record) of a log: a UBI query with a few hundred hit ids is a few KB. */
export const MAX_LOG_LINE = 1024 * 1024;
/** The longest query text kept (a pasted page is not a search). */
export const MAX_QUERY_CHARS = 2000;
/** The most hit ids one UBI query may list. */
export const MAX_HITS = 1000;
/** The feedback scale: the blind-test framework's 0-3 (the legal harness records a cited precedent as 3). */
export const MAX_SCORE = 3;
/** UBI actions counted as a click, and as an impression (UBI's own names). */
export const CLICK_ACTIONS: ReadonlySet<string> = new Set(['click', 'click_through']);
export const IMPRESSION_ACTIONS: ReadonlySet<string> = new Set(['impression']);

export type LogKind = 'feedback' | 'ubi_queries' | 'ubi_events';

export interface FeedbackRow {
  query: string;
  doc: string;
  score: number;
  /** epoch milliseconds */
  time: number;
}

export interface UbiQuery {
  queryId: string;
  /** empty when the user searched nothing (a browse): skipped by the caller, counted */
  userQuery: string;
  hitIds: string[];
}

export interface UbiEvent {
  action: string;
  queryId: string;
  userQuery?: string;
  /** click and impression events only */
  doc?: string;
  /** 1-based position (the ordinal after --ordinal-base) */
  position?: number;
  time: number;
}

/**
 * A search as people typed it, made comparable: Unicode NFKC, case folded, whitespace collapsed. "Inner  Peace",
 * "inner peace" and "ｉｎｎｅｒ peace" are one query.
 */
export function normaliseQuery(s: string): string {
  return s.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC').replace(/\s+/g, ' ').trim();
}

/** The form a query is shown in: NFKC, whitespace collapsed, case kept. */
export function displayQuery(s: string): string {
  return s.normalize('NFKC').replace(/\s+/g, ' ').trim();
}

const isObj = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const show = (x: unknown) => {
  const s = x instanceof Date ? x.toISOString() : JSON.stringify(x) ?? String(x);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

/** The first of `names` a record has (a column or a field), or undefined. Two of them at once is an error. */
function pick(o: Record<string, unknown>, names: readonly string[], where: string): { name: string; value: unknown } | undefined {
  const found = names.filter((n) => o[n] !== undefined && o[n] !== null && o[n] !== '');
  if (found.length > 1) throw new UserError(`${where}: fields ${found.map((f) => `'${f}'`).join(' and ')} name the same thing: keep one`);
  return found.length ? { name: found[0]!, value: o[found[0]!] } : undefined;
}

const FEEDBACK_FIELDS = { query: ['query'], doc: ['doc', 'case_law_id', 'doc_id', 'document_id'], score: ['score', 'relevance_score'], time: ['time', 'created_at'] } as const;

/** An id of the corpus (a document id): a string or a whole number, without control characters, at most 512 long. */
export function checkDocId(v: unknown, where: string, field: string): string {
  const s = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
  if (typeof s !== 'string' || !s.trim()) throw new UserError(`${where}: field '${field}': expected a document id (a string or a whole number), got ${show(v)}`);
  const bad = badId(s);
  if (bad) throw new UserError(`${where}: field '${field}': the id ${bad}`);
  return s;
}

export function checkTime(v: unknown, where: string, field: string): number {
  const t = v instanceof Date ? v.getTime() : typeof v === 'string' && v.trim() ? Date.parse(v) : typeof v === 'number' && Number.isFinite(v) ? v : NaN;
  if (Number.isNaN(t)) throw new UserError(`${where}: field '${field}': expected a time (ISO 8601, e.g. 2026-05-31T14:58:13Z), got ${show(v)}`);
  return t;
}

function checkQuery(v: unknown, where: string, field: string, allowEmpty: boolean): string {
  if (typeof v !== 'string') throw new UserError(`${where}: field '${field}': expected the query as people typed it (a string), got ${show(v)}`);
  if (!allowEmpty && !v.trim()) throw new UserError(`${where}: field '${field}': empty, expected the query as people typed it`);
  if (v.length > MAX_QUERY_CHARS) throw new UserError(`${where}: field '${field}': ${v.length} characters, longer than the ${MAX_QUERY_CHARS} a query may have`);
  return v;
}

/** One feedback row (a CSV record or JSONL object, or a row of the SQL's result), checked. */
export function feedbackRow(o: Record<string, unknown>, where: string): FeedbackRow {
  const need = (role: keyof typeof FEEDBACK_FIELDS) => {
    const p = pick(o, FEEDBACK_FIELDS[role], where);
    if (!p) throw new UserError(`${where}: field '${FEEDBACK_FIELDS[role][0]}': missing, expected one of ${FEEDBACK_FIELDS[role].map((n) => `'${n}'`).join(', ')} (a feedback row is query, doc, score, time)`);
    return p;
  };
  const q = need('query');
  const d = need('doc');
  const s = need('score');
  const t = need('time');
  const n = typeof s.value === 'number' ? s.value : typeof s.value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(s.value) ? Number(s.value) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > MAX_SCORE) throw new UserError(`${where}: field '${s.name}': expected a whole score from 0 to ${MAX_SCORE} (3 direct answer, 2 strong supporting context, 1 related, 0 irrelevant), got ${show(s.value)}`);
  return { query: checkQuery(q.value, where, q.name, false), doc: checkDocId(d.value, where, d.name), score: n, time: checkTime(t.value, where, t.name) };
}

const get = (o: unknown, path: readonly string[]): unknown => path.reduce<unknown>((x, k) => (isObj(x) ? x[k] : undefined), o);

function idField(v: unknown, where: string, field: string): string {
  if ((typeof v === 'string' && v.trim()) || (typeof v === 'number' && Number.isSafeInteger(v))) return String(v);
  throw new UserError(`${where}: field '${field}': expected an id (a string or a whole number), got ${show(v)}`);
}

/** One record of the `ubi_queries` store, checked. */
export function ubiQuery(o: Record<string, unknown>, where: string): UbiQuery {
  const queryId = idField(o.query_id, where, 'query_id');
  const userQuery = checkQuery(o.user_query ?? '', where, 'user_query', true);
  const raw = o.query_response_hit_ids ?? [];
  const list = typeof raw === 'string' ? [raw] : raw;
  if (!Array.isArray(list)) throw new UserError(`${where}: field 'query_response_hit_ids': expected the list of ids the query returned, got ${show(raw)}`);
  if (list.length > MAX_HITS) throw new UserError(`${where}: field 'query_response_hit_ids': ${list.length} ids, more than the ${MAX_HITS} one query may list`);
  const hitIds = list.map((h, i) => checkDocId(h, where, `query_response_hit_ids[${i}]`));
  return { queryId, userQuery, hitIds };
}

/** One record of the `ubi_events` store, checked (click and impression events need the object and the position). */
export function ubiEvent(o: Record<string, unknown>, where: string, ordinalBase = 1): UbiEvent {
  if (typeof o.action_name !== 'string' || !o.action_name.trim()) throw new UserError(`${where}: field 'action_name': expected the action (click, impression, ...), got ${show(o.action_name)}`);
  const action = o.action_name.trim().toLowerCase();
  const queryId = idField(o.query_id, where, 'query_id');
  const time = checkTime(o.timestamp, where, 'timestamp');
  const ev: UbiEvent = { action, queryId, time };
  if (typeof o.user_query === 'string' && o.user_query.trim()) ev.userQuery = checkQuery(o.user_query, where, 'user_query', false);
  if (!CLICK_ACTIONS.has(action) && !IMPRESSION_ACTIONS.has(action)) return ev;
  const attrs = o.event_attributes;
  ev.doc = checkDocId(get(attrs, ['object', 'object_id']), where, 'event_attributes.object.object_id');
  const pos = get(attrs, ['position', 'ordinal']);
  const ord = isObj(pos) ? pos.index : pos; // UBI 1.0's schema wrote ordinal as {index}; OpenSearch's mapping as a number
  if (typeof ord !== 'number' || !Number.isSafeInteger(ord) || ord < ordinalBase)
    throw new UserError(
      `${where}: field 'event_attributes.position.ordinal': expected the result's position, a whole number from ${ordinalBase} (UBI counts from 1: its examples are 1, 3, 24; a log counting from 0 needs --ordinal-base 0), got ${show(pos)}`,
    );
  ev.position = ord - ordinalBase + 1;
  return ev;
}

/** The lines of a JSONL log, parsed, with their 1-based numbers; blank lines skipped. */
function* jsonlRecords(path: string): Generator<{ o: Record<string, unknown>; where: string }> {
  let n = 0;
  try {
    for (const text of readLinesSync(path, 1 << 20, MAX_LOG_LINE)) {
      n++;
      if (!text.trim()) continue;
      const where = `${path}:${n}`;
      let x: unknown;
      try {
        x = JSON.parse(text);
      } catch (e) {
        throw new UserError(`${where}: not JSON (${(e as Error).message.split('\n')[0]!.replace(/ in JSON at position \d+.*$/, '')}), expected one object a line`);
      }
      if (!isObj(x)) throw new UserError(`${where}: expected one JSON object a line, got ${show(x)}`);
      yield { o: x, where };
    }
  } catch (e) {
    throw readError(e, path);
  }
}

function readError(e: unknown, path: string): unknown {
  if (e instanceof UserError) return e;
  if (e instanceof LineTooLongError) return new UserError(`${path}:${e.line}: a line longer than ${e.maxBytes} bytes (${MAX_LOG_LINE / 1024} KB is the most one log line may take)`);
  if (e instanceof NotRegularFileError) return new UserError(`${path}: not a regular file, expected a log file`);
  return new UserError(`${path}: cannot read the log (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
}

/** The records of a CSV export (first line: the column names), streamed, with the line each record ends on. */
async function* csvRecords(path: string): AsyncGenerator<{ o: Record<string, unknown>; where: string }> {
  let fd: number;
  try {
    fd = openRegularSync(path);
  } catch (e) {
    throw readError(e, path);
  }
  const input = createReadStream('', { fd });
  const parser = input.pipe(parseCsv({ bom: true, columns: (h: string[]) => h.map((c) => c.trim()), skip_empty_lines: true, info: true, max_record_size: MAX_LOG_LINE }));
  try {
    for await (const r of parser as AsyncIterable<{ record: Record<string, unknown>; info: { lines: number } }>) yield { o: r.record, where: `${path}:${r.info.lines}` };
  } catch (e) {
    if (e instanceof UserError) throw e;
    const err = e as { code?: string; message?: string; lines?: number };
    if (err.code?.startsWith('CSV_')) throw new UserError(`${path}:${err.lines ?? '?'}: not a CSV record (${String(err.message).split('\n')[0]})`);
    throw readError(e, path);
  } finally {
    parser.destroy();
    input.destroy(); // closes the descriptor (once: the stream owns it)
  }
}

export async function* readFeedbackFile(path: string): AsyncGenerator<FeedbackRow> {
  if (extname(path).toLowerCase() === '.csv') for await (const { o, where } of csvRecords(path)) yield feedbackRow(o, where);
  else for (const { o, where } of jsonlRecords(path)) yield feedbackRow(o, where);
}

export function* readUbiQueries(path: string): Generator<UbiQuery> {
  for (const { o, where } of jsonlRecords(path)) yield ubiQuery(o, where);
}

export function* readUbiEvents(path: string, ordinalBase = 1): Generator<UbiEvent> {
  for (const { o, where } of jsonlRecords(path)) yield ubiEvent(o, where, ordinalBase);
}

/** What a JSONL log is, from its first record's fields. */
export function kindOfRecord(o: Record<string, unknown>): LogKind | undefined {
  if ('action_name' in o) return 'ubi_events';
  if ('user_query' in o || 'query_response_hit_ids' in o) return 'ubi_queries';
  if ('query' in o && FEEDBACK_FIELDS.doc.some((f) => f in o)) return 'feedback';
  return undefined;
}

/** The kind of one log file: a CSV is a feedback export; a JSONL file is told by its first record. */
export function detectLogKind(path: string): LogKind {
  if (extname(path).toLowerCase() === '.csv') return 'feedback';
  for (const { o, where } of jsonlRecords(path)) {
    const k = kindOfRecord(o);
    if (!k)
      throw new UserError(
        `${where}: not a log this command reads (fields: ${Object.keys(o).slice(0, 8).join(', ')}), expected a feedback row {query, doc|case_law_id, score|relevance_score, time|created_at}, a UBI query {query_id, user_query, query_response_hit_ids} or a UBI event {action_name, query_id, event_attributes}`,
      );
    return k;
  }
  throw new UserError(`${path}: empty, expected one log record a line`);
}

/** The names a folder's logs go by: the UBI stores' names and feedback*. Other files in it are not read. */
const FOLDER_NAMES = /^(feedback.*\.(csv|jsonl|ndjson)|ubi_queries.*\.(jsonl|ndjson)|ubi_events.*\.(jsonl|ndjson))$/i;

export interface LogFile {
  kind: LogKind;
  path: string;
}

/** Files (or folders: their feedback*, ubi_queries*, ubi_events* files) -> the logs, each with its kind. */
export function logFiles(paths: readonly string[]): LogFile[] {
  const out: LogFile[] = [];
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      throw new UserError(`${p}: cannot read the log (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}), expected a feedback export (CSV or JSONL), a UBI queries or events JSONL file, or a folder of them`);
    }
    if (st.isDirectory()) {
      const names = readdirSync(p).filter((n) => FOLDER_NAMES.test(n)).sort();
      if (!names.length) throw new UserError(`${p}: no log in this folder, expected files named feedback*.csv|jsonl, ubi_queries*.jsonl or ubi_events*.jsonl`);
      for (const n of names) out.push({ kind: detectLogKind(join(p, n)), path: join(p, n) });
    } else out.push({ kind: detectLogKind(p), path: p });
  }
  const events = out.filter((f) => f.kind === 'ubi_events');
  if (events.length && !out.some((f) => f.kind === 'ubi_queries'))
    throw new UserError(`${events.map((f) => basename(f.path)).join(', ')}: UBI events without the ubi_queries store: give both (the events name their query by query_id)`);
  return out;
}
