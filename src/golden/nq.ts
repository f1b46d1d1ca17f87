/**
 * Natural Questions (the NQ evaluation spec): the CSV `question,long_answer,short_answer` and the prepared JSON
 *   [{ "chunk_id": "nq_000000", "document_id": "natural_questions", "content": <long answer>,
 *      "metadata": { "question": ..., "short_answer": ..., "question_id": "0" } }]
 * Each row is both a corpus chunk and a golden query: the query's id is the chunk id (`nq_` + the
 * 0-based row number, 6 digits), and its single reference is that chunk, grade 3, relevant (NQ has one
 * answer chunk per question). The chunk's content, document_id and short answer travel in the
 * reference's `extra`, so the prepared JSON can be rebuilt from the canonical model. CSV -> prepared
 * JSON adds `metadata.question_id` (the row number as a string), which the NQ evaluation spec's eval script reads.
 * Any other CSV column or JSON field is an error (entries are closed). language `en` and category
 * `natural_questions` are derived.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import type { GoldenQuery } from './schema.ts';
import { Collector, show, showShape, type Ref } from './problems.ts';
import { LineIndex } from './text.ts';
import { Fields, compact, finalize, isPlainObject, shallowEnough, unknownFieldMessage, type Candidate } from './entry.ts';
import { jsonLocator, parseJsonText, type ReadResult } from './des058.ts';
import { UserError } from '../errors.ts';

export const NQ_DOCUMENT_ID = 'natural_questions';
export const NQ_CATEGORY = 'natural_questions';

/** The fields of the NQ evaluation spec's prepared JSON (any other is an error) and of its CSV. */
export const NQ_RECORD_KEYS = ['chunk_id', 'document_id', 'content', 'metadata'] as const;
export const NQ_METADATA_KEYS = ['question', 'short_answer', 'question_id'] as const;
export const NQ_CSV_COLUMNS = ['question', 'long_answer', 'short_answer'] as const;

export function nqChunkId(i: number): string {
  return `nq_${String(i).padStart(6, '0')}`;
}

export interface NqRecord {
  chunk_id: string;
  document_id: string;
  content: string;
  metadata: { question: string; short_answer?: string; [k: string]: unknown };
  [k: string]: unknown;
}

function makeQuery(id: string, question: unknown, content: unknown, refExtra: Record<string, unknown>, format: string): Record<string, unknown> {
  return compact({
    id,
    query: question,
    language: 'en',
    category: NQ_CATEGORY,
    expected: [{ chunk_id: id, grade: 3, relevant: true, extra: { ...refExtra, content } }],
    origin: { format, derived: ['language', 'category'] },
  });
}

export function readNqCsv(text: string, c: Collector): ReadResult {
  let rows: string[][];
  try {
    // arrays, not column objects, and line numbers (csv-parse `info`) only when a row has a problem:
    // this is the hot path of an 86,000-row conversion
    rows = parseCsv(text, { bom: true, skip_empty_lines: true }) as string[][];
  } catch (e) {
    const err = e as { message: string; lines?: number; bytes?: number; code?: string };
    let loc: { line: number; col?: number } | undefined = err.lines ? { line: err.lines } : undefined;
    if (loc && typeof err.bytes === 'number') {
      const off = Buffer.from(text).subarray(0, err.bytes).toString('utf8').length;
      const p = new LineIndex(text).pos(Math.max(0, off - 1));
      if (p.line === loc.line) loc = p;
    }
    c.error(loc, 'file', 'csv', `invalid CSV: ${err.message.replace(/ at line \d+/, '')}, expected quoted fields question,long_answer,short_answer`);
    return { queries: [] };
  }
  const header = rows.shift() ?? [];
  for (const col of ['question', 'long_answer']) {
    if (!header.includes(col)) c.error({ line: 1 }, 'header', col, `missing column, expected a header question,long_answer,short_answer (got ${header.join(',')})`);
  }
  // a column is every row's field: the rows are closed like any golden entry
  for (const h of header) {
    if (!(NQ_CSV_COLUMNS as readonly string[]).includes(h)) c.error({ line: 1 }, 'header', h || '(empty)', unknownFieldMessage(h, NQ_CSV_COLUMNS, 'NQ CSV', 'column'));
  }
  if (c.errorCount) return { queries: [] };
  const qi = header.indexOf('question');
  const li = header.indexOf('long_answer');
  const si = header.indexOf('short_answer');
  const queries: GoldenQuery[] = [];
  rows.forEach((row, index) => {
    const id = nqChunkId(index);
    const question = row[qi]!;
    const content = row[li]!;
    if (question.trim() === '' || content.trim() === '') {
      // the slow, precise path only for rows with a problem
      const f = new Fields(c, Object.fromEntries(header.map((h, i) => [h, row[i]])), index, id);
      f.str('question', { required: true, nonEmpty: true, expect: 'the question text' });
      f.str('long_answer', { required: true, nonEmpty: true, expect: 'the long answer passage' });
      return;
    }
    const refExtra: Record<string, unknown> = { document_id: NQ_DOCUMENT_ID };
    if (si >= 0) refExtra.short_answer = row[si];
    refExtra.metadata = { question_id: String(index) };
    refExtra.content = content;
    // built directly in canonical shape (all values are checked strings): no schema pass needed
    const q: GoldenQuery = {
      id,
      query: question,
      language: 'en',
      category: NQ_CATEGORY,
      tags: [],
      slices: {},
      expected: [{ chunk_id: id, grade: 3, relevant: true, extra: refExtra }],
      expected_routing: 'search',
      origin: { format: 'nq-csv', derived: ['language', 'category'] },
    };
    queries.push(q);
  });
  c.resolve(() => {
    // first line of each record: one line after the end of the previous record
    const withInfo = parseCsv(text, { bom: true, skip_empty_lines: true, info: true }) as unknown as { info: { lines: number } }[];
    const lineOf: number[] = [];
    let prevEnd = withInfo[0]?.info.lines ?? 1;
    for (const r of withInfo.slice(1)) {
      lineOf.push(prevEnd + 1);
      prevEnd = r.info.lines;
    }
    return (ref: Ref) => (lineOf[ref.index] ? { line: lineOf[ref.index] } : undefined);
  });
  return { queries: c.errorCount ? [] : queries };
}

export function readNqJson(text: string, c: Collector): ReadResult {
  const data = parseJsonText(text, c, 'JSON');
  if (data === undefined) return { queries: [] };
  if (!Array.isArray(data)) {
    c.error({ line: 1 }, 'file', 'root', `got ${showShape(data)}, expected a JSON array of {chunk_id, document_id, content, metadata}`);
    return { queries: [] };
  }
  const candidates: Candidate[] = [];
  data.forEach((raw, index) => {
    if (!isPlainObject(raw)) {
      c.error({ index, path: [] }, `#${index}`, 'entry', `got ${show(raw)}, expected an object with chunk_id, content, metadata.question`);
      return;
    }
    if (!shallowEnough(c, raw, index, `#${index}`)) return;
    const label = typeof raw.chunk_id === 'string' && raw.chunk_id ? raw.chunk_id : `#${index}`;
    const f = new Fields(c, raw, index, label);
    const id = f.idLike('chunk_id', { required: true });
    const documentId = f.str('document_id', { required: true, nonEmpty: true });
    const content = f.str('content', { required: true, nonEmpty: true, expect: 'the passage text' });
    const md = f.get('metadata');
    let question: string | undefined;
    let refExtra: Record<string, unknown> = { document_id: documentId };
    if (!isPlainObject(md)) f.err(['metadata'], `got ${show(md)}, expected an object with question and short_answer`);
    else {
      const mf = new Fields(c, md, index, label, ['metadata']);
      question = mf.str('question', { required: true, nonEmpty: true, expect: 'the question text' });
      const short = mf.str('short_answer');
      mf.closed(NQ_METADATA_KEYS, 'NQ metadata');
      if (mf.failed) f.failed = true;
      refExtra = compact({ document_id: documentId, short_answer: short, metadata: mf.rest() });
    }
    f.closed(NQ_RECORD_KEYS, 'NQ prepared JSON');
    candidates.push({ fields: f, query: makeQuery(id ?? '', question, content, refExtra, 'nq-json') });
  });
  const queries = finalize(c, candidates, { expectedField: 'content', queryField: 'question', names: { relevant: 'its answer chunk' } });
  c.resolve(jsonLocator(text));
  return { queries };
}

function answerRef(q: GoldenQuery, format: string) {
  const r = q.expected.find((x) => x.chunk_id && typeof x.extra?.content === 'string');
  if (!r) throw new UserError(`cannot write ${format}: query ${q.id} has no answer chunk with its content (only Natural Questions sets carry the passage text), expected a set read from NQ CSV or prepared JSON`);
  return r;
}

export function toNqRecords(queries: readonly GoldenQuery[]): NqRecord[] {
  return queries.map((q) => {
    const r = answerRef(q, 'nq-json');
    const x = r.extra!;
    const md = isPlainObject(x.metadata) ? x.metadata : {};
    return {
      chunk_id: r.chunk_id!,
      document_id: typeof x.document_id === 'string' ? x.document_id : NQ_DOCUMENT_ID,
      content: x.content as string,
      metadata: compact({ question: q.query, short_answer: typeof x.short_answer === 'string' ? x.short_answer : undefined, ...md }),
    };
  });
}

export function writeNqJson(queries: readonly GoldenQuery[]): string {
  return `${JSON.stringify(toNqRecords(queries), null, 2)}\n`;
}

function csvField(v: unknown): string {
  const s = v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  return `"${s.replace(/"/g, '""')}"`;
}

export function writeNqCsv(queries: readonly GoldenQuery[]): string {
  const cols = ['question', 'long_answer', 'short_answer'];
  const out = [cols.join(',')];
  for (const q of queries) {
    const r = answerRef(q, 'nq-csv');
    const x = r.extra!;
    out.push([q.query, x.content, x.short_answer ?? ''].map(csvField).join(','));
  }
  return `${out.join('\n')}\n`;
}
