/**
 * Golden sets: read any supported format into the canonical model (src/golden/schema.ts), validate,
 * and write any format back.
 *
 *   loadGoldenFile(path, { format? })  -> GoldenQuery[]      (throws UserError listing every problem)
 *   readGoldenFile(path, { format? })  -> { format, queries, meta, problems }   (never throws for bad input)
 *   validateGolden(path, { format? })  -> Problem[]          (errors and warnings, one line each)
 *   renderGolden(format, queries, meta) -> files to write
 */
import { existsSync, readdirSync, statSync, readSync, closeSync } from 'node:fs';
import { refuseSpecialFile } from '../util/folder-scan.ts';
import { basename, dirname, extname, join } from 'node:path';
import { UserError } from '../errors.ts';
import { GoldenQuerySchema, type GoldenQuery } from './schema.ts';
import { Collector, GoldenProblemsError, formatProblem, oneLine, type Problem } from './problems.ts';
import { readTextFile } from './text.ts';
import { readDes058, writeDes058, type ReadResult } from './des058.ts';
import { readBlindYaml, writeBlindYaml } from './blindyaml.ts';
import { readGoldJsonl, writeGoldJsonl } from './goldjsonl.ts';
import { readNqCsv, readNqJson, writeNqCsv, writeNqJson } from './nq.ts';
import { readBeir, writeBeir } from './beir.ts';
import { readTrec, writeTrec } from './trec.ts';
import { Fields, finalize, type Candidate } from './entry.ts';
import { toTestCases } from './testcases.ts';
import { openRegularSync } from '../util/regular-file.ts';

export * from './schema.ts';
export { formatProblem, type Problem } from './problems.ts';

export const FORMATS = ['des058', 'yaml', 'jsonl', 'nq-csv', 'nq-json', 'beir', 'trec'] as const;
export type GoldenFormat = (typeof FORMATS)[number];

const ALIASES: Record<string, GoldenFormat> = {
  des058: 'des058',
  'des-058': 'des058',
  json: 'des058',
  yaml: 'yaml',
  yml: 'yaml',
  blind: 'yaml',
  'blind-test': 'yaml',
  jsonl: 'jsonl',
  'gold-set': 'jsonl',
  goldset: 'jsonl',
  'nq-csv': 'nq-csv',
  csv: 'nq-csv',
  'nq-json': 'nq-json',
  beir: 'beir',
  trec: 'trec',
};

export function parseFormatName(name: string, path?: string): GoldenFormat {
  const n = name.toLowerCase();
  if (n === 'nq') return path && extname(path).toLowerCase() === '.json' ? 'nq-json' : 'nq-csv';
  const f = ALIASES[n];
  if (!f) throw new UserError(`unknown golden-set format '${name}', expected one of ${FORMATS.join(', ')}`);
  return f;
}

export interface LoadOptions {
  /** force a format instead of detecting it from name and content */
  format?: string;
  /** BEIR: the qrels split (default test) */
  split?: string;
  /** TREC: the qrels file (default: found next to the topics) */
  qrels?: string;
}

function head(path: string, n = 4096): string {
  const fd = openRegularSync(path);
  try {
    const buf = Buffer.alloc(n);
    const len = readSync(fd, buf, 0, n, 0);
    return buf.subarray(0, len).toString('utf8').replace(/^\uFEFF/, '');
  } finally {
    closeSync(fd);
  }
}

/** A golden set named directly must be a regular file or a folder (src/util/folder-scan.ts); a missing path passes. */
function refuseSpecial(path: string): void {
  let st;
  try {
    st = statSync(path);
  } catch {
    return;
  }
  refuseSpecialFile(path, st, 'a golden set: expected a file or a folder');
}

/** Detect a golden-set format from the path (folder layout, extension, name) and the start of the content. */
export function detectFormat(path: string): GoldenFormat {
  if (!existsSync(path)) throw new UserError(`${path}: no such file or folder, expected a golden-set file`);
  refuseSpecial(path);
  if (statSync(path).isDirectory()) {
    const files = readdirSync(path);
    if (files.includes('queries.jsonl') && files.includes('qrels')) return 'beir';
    if (files.some((f) => /topic/i.test(f)) && files.some((f) => /qrel/i.test(f))) return 'trec';
    throw new UserError(`${path}: folder is neither a BEIR folder (queries.jsonl + qrels/) nor a TREC folder (topics + qrels file), expected one of those`);
  }
  const name = basename(path).toLowerCase();
  const ext = extname(name);
  if (name === 'queries.jsonl' && existsSync(join(dirname(path), 'qrels'))) return 'beir';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  if (ext === '.csv') return 'nq-csv';
  if (/topic|qrel/.test(name)) return 'trec';
  const h = head(path);
  const t = h.trimStart();
  if (ext === '.jsonl') return 'jsonl';
  if (ext === '.json' || t.startsWith('[')) {
    return /^\[\s*\{\s*"chunk_id"/.test(t) || (/"chunk_id"/.test(h) && /"metadata"/.test(h) && /"content"/.test(h) && !/"query"/.test(h)) ? 'nq-json' : 'des058';
  }
  if (t.startsWith('{')) return 'jsonl';
  if (/^<top>/i.test(t)) return 'trec';
  if (/^"?question"?,/.test(t)) return 'nq-csv';
  if (/^(-\s|queries\s*:)/.test(t) || /^\w[\w-]*\s*:/.test(t)) return 'yaml';
  throw new UserError(`${path}: cannot tell the golden-set format from the name or the content, expected one of ${FORMATS.join(', ')} (pass --format)`);
}

export interface GoldenFile {
  path: string;
  format: GoldenFormat;
  queries: GoldenQuery[];
  meta?: Record<string, unknown>;
  /** errors and warnings, in file order */
  problems: Problem[];
  /** printable lines (errors, warnings, and a tail line when errors were cut off) */
  lines: string[];
  errorCount: number;
}

/** Read a golden-set file in any supported format. Bad input gives problems, never an exception. */
export function readGoldenFile(path: string, opts: LoadOptions = {}): GoldenFile {
  let format: GoldenFormat;
  try {
    refuseSpecial(path); // a fifo named directly is refused, never opened (opening it would block for ever)
    format = opts.format ? parseFormatName(opts.format, path) : detectFormat(path);
  } catch (e) {
    if (e instanceof UserError) {
      const p: Problem = { file: path, entry: 'file', field: 'format', message: e.message.replace(`${path}: `, ''), severity: 'error' };
      return { path, format: 'des058', queries: [], problems: [p], lines: [formatProblem(p)], errorCount: 1 };
    }
    throw e;
  }
  const cs: Collector[] = [];
  let res: ReadResult = { queries: [] };
  if (format === 'beir') {
    const dir = statSync(path).isDirectory() ? path : dirname(path);
    res = readBeir(dir, { split: opts.split }, cs);
  } else if (format === 'trec') {
    res = readTrec(path, { qrels: opts.qrels }, cs);
  } else {
    const c = new Collector(path);
    cs.push(c);
    const text = readTextFile(path, c);
    if (text !== undefined) {
      const reader = { des058: readDes058, yaml: readBlindYaml, jsonl: readGoldJsonl, 'nq-csv': readNqCsv, 'nq-json': readNqJson }[format];
      res = reader(text, c);
    }
  }
  const problems = cs.flatMap((c) => c.problems);
  const lines = cs.flatMap((c) => c.lines());
  const errorCount = cs.reduce((n, c) => n + c.errorCount, 0);
  return { path, format, queries: res.queries, meta: res.meta, problems, lines, errorCount };
}

/** Load a golden set; throws a UserError whose message lists every error (one line each). */
export function loadGoldenFile(path: string, opts: LoadOptions = {}): GoldenQuery[] {
  return loadGolden(path, opts).queries;
}

export function loadGolden(path: string, opts: LoadOptions = {}): GoldenFile {
  const f = readGoldenFile(path, opts);
  if (f.errorCount > 0) {
    const errors = f.problems.filter((p) => p.severity === 'error');
    const more = f.errorCount > errors.length ? [`${path}: ... and ${f.errorCount - errors.length} more errors not shown`] : [];
    throw new GoldenProblemsError(errors, more);
  }
  return f;
}

/** All problems (errors and warnings) of a golden-set file. Empty list or warnings only = valid. */
export function validateGolden(path: string, opts: LoadOptions = {}): Problem[] {
  return readGoldenFile(path, opts).problems;
}

/** The same as printable one-line strings (`FILE:LINE (id or #index) field: what is wrong, expected ...`). */
export function validateGoldenLines(path: string, opts: LoadOptions = {}): string[] {
  return readGoldenFile(path, opts).lines;
}

/** Validate canonical objects built in code (e.g. by a corpus writer) with the same rules as files. */
export function validateQueries(items: readonly unknown[], label = '<memory>'): Problem[] {
  const c = new Collector(label);
  const candidates: Candidate[] = [];
  items.forEach((raw, index) => {
    const obj = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const f = new Fields(c, obj, index, typeof obj.id === 'string' ? obj.id : `#${index}`);
    candidates.push({ fields: f, query: obj });
  });
  finalize(c, candidates, { expectedField: 'expected' });
  c.resolve(() => () => undefined);
  return c.problems;
}

export const OUTPUT_FORMATS = ['des058', 'yaml', 'jsonl', 'nq-csv', 'nq-json', 'beir', 'trec', 'promptfoo'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function parseOutputFormat(name: string): OutputFormat {
  if (name === 'promptfoo') return 'promptfoo';
  return parseFormatName(name);
}

/** Where the qrels of a TREC topics file written to `topicsPath` go (found again by the reader). */
export function trecQrelsPath(topicsPath: string): string {
  const name = basename(topicsPath);
  if (/topics/i.test(name)) return join(dirname(topicsPath), name.replace(/topics/i, 'qrels'));
  const stem = name.replace(/\.(txt|tsv|xml|sgml)$/i, '');
  return join(dirname(topicsPath), `${stem}.qrels`);
}

/**
 * The files of a golden set in `format`, as (path -> content). For single-file formats the one path is
 * `out`; BEIR writes `out/queries.jsonl` and `out/qrels/<split>.tsv`; TREC writes the topics to `out`
 * and the qrels beside it (trecQrelsPath).
 */
export async function renderGolden(format: OutputFormat, queries: readonly GoldenQuery[], meta: Record<string, unknown> | undefined, out: string): Promise<Map<string, string>> {
  checkWritable(format, queries, meta, out);
  const m = new Map<string, string>();
  const sameMeta = (f: string) => (queries[0]?.origin?.format === f ? meta : undefined);
  switch (format) {
    case 'des058':
      m.set(out, writeDes058(queries));
      break;
    case 'yaml':
      m.set(out, writeBlindYaml(queries, sameMeta('yaml')));
      break;
    case 'jsonl':
      m.set(out, writeGoldJsonl(queries));
      break;
    case 'nq-csv':
      m.set(out, writeNqCsv(queries));
      break;
    case 'nq-json':
      m.set(out, writeNqJson(queries));
      break;
    case 'beir':
      for (const [rel, text] of writeBeir(queries, sameMeta('beir'))) m.set(join(out, rel), text);
      break;
    case 'trec': {
      const t = writeTrec(queries, sameMeta('trec'));
      m.set(out, t.topics);
      m.set(trecQrelsPath(out), t.qrels);
      break;
    }
    case 'promptfoo': {
      const tests = toTestCases(queries);
      if (out.endsWith('.json')) m.set(out, `${JSON.stringify(tests, null, 2)}\n`);
      else {
        const yaml = (await import('js-yaml')).default;
        m.set(out, yaml.dump(tests, { lineWidth: -1, noRefs: true }));
      }
      break;
    }
  }
  return m;
}

const WS = /\s/;
const TSV_BREAK = /[\t\r\n]/;
const SGML_TAG = /<\/?[a-z]+>/i;

function describeChar(s: string, re: RegExp): string {
  const ch = re.exec(s)?.[0] ?? '';
  const names: Record<string, string> = { ' ': 'a space', '\t': 'a tab', '\n': 'a newline', '\r': 'a carriage return' };
  return names[ch] ?? `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Refuse, before anything is written, values the target format cannot hold (they would be written and then
 * read back differently, or not at all): one line `OUTFILE (id) field: what, expected ...`.
 *   TREC: whitespace in a query id or document id (qrels columns and `<num>` are whitespace-separated);
 *         a newline in a TSV topic's query or a tab in it; tag-like text (`</top>`) in SGML topic text, and a
 *         newline in an SGML title (collapsed to one line when read).
 *   BEIR: tabs or newlines in a query id or document id (qrels are tab-separated lines).
 */
export function checkWritable(format: OutputFormat, queries: readonly GoldenQuery[], meta: Record<string, unknown> | undefined, out: string): void {
  const fail = (file: string, id: string, field: string, msg: string): never => {
    throw new UserError(`${file} (${oneLine(id)}) ${field}: ${msg}; nothing written`);
  };
  const refId = (r: GoldenQuery['expected'][number]) => r.doc_id ?? r.chunk_id ?? r.path;
  if (format === 'trec') {
    const qrels = trecQrelsPath(out);
    const tsv = meta?.topicsFormat === 'tsv' && queries[0]?.origin?.format === 'trec';
    for (const q of queries) {
      if (WS.test(q.id)) fail(out, q.id, 'id', `contains ${describeChar(q.id, WS)}, which TREC topics and qrels cannot hold (whitespace-separated columns), expected an id without whitespace`);
      for (const r of q.expected) {
        const d = refId(r);
        if (d !== undefined && WS.test(d)) fail(qrels, q.id, 'docno', `${JSON.stringify(d)} contains ${describeChar(d, WS)}, which a TREC qrels line cannot hold (qid iter docno rel), expected document ids without whitespace`);
      }
      if (tsv) {
        if (TSV_BREAK.test(q.query)) fail(out, q.id, 'query', `contains ${describeChar(q.query, TSV_BREAK)}, which a qid<TAB>query topics line cannot hold, expected one line without tabs`);
      } else {
        if (/[\r\n]/.test(q.query)) fail(out, q.id, 'query', 'contains a newline, which an SGML <title> cannot hold (read back as one line), expected a one-line query');
        for (const [field, v] of [['query', q.query], ['intent', q.intent], ['notes', q.notes]] as const) {
          if (v !== undefined && SGML_TAG.test(v)) fail(out, q.id, field, `contains tag-like text ${JSON.stringify(SGML_TAG.exec(v)![0])}, which SGML topics cannot hold, expected text without <tag> markup`);
        }
      }
    }
  } else if (format === 'beir') {
    const split = typeof meta?.split === 'string' ? meta.split : 'test';
    const qrels = join(out, 'qrels', `${split}.tsv`);
    for (const q of queries) {
      if (TSV_BREAK.test(q.id)) fail(qrels, q.id, 'query-id', `contains ${describeChar(q.id, TSV_BREAK)}, which a tab-separated qrels line cannot hold, expected an id without tabs or newlines`);
      for (const r of q.expected) {
        const d = refId(r);
        if (d !== undefined && TSV_BREAK.test(d)) fail(qrels, q.id, 'corpus-id', `${JSON.stringify(d)} contains ${describeChar(d, TSV_BREAK)}, which a tab-separated qrels line cannot hold, expected ids without tabs or newlines`);
      }
    }
  }
}

/** Parse canonical queries (e.g. from promptfoo metadata) back through the schema. */
export function parseGoldenQuery(v: unknown): GoldenQuery {
  return GoldenQuerySchema.parse(v);
}
