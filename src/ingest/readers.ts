/**
 * Corpus readers: a folder (or file) of Markdown with YAML front matter, JSONL `{id, title, text, ...}`,
 * BEIR `corpus.jsonl` (`{_id, title, text, metadata?}`) and NQ prepared JSON
 * (`[{chunk_id, document_id, content, metadata}]`, kept prechunked with its own `nq_XXXXXX` ids).
 *
 * Every problem is a UserError naming the file, the entry (line or index) and the field, and what was
 * expected. Binary / non-UTF-8 files, JSON that is really JSONL (or the reverse), files over the size
 * limit, over-long lines and JSON nested deeper than MAX_JSON_DEPTH are rejected with such an error.
 */
import { createReadStream, readdirSync, statSync, type Stats } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { basename, extname, join, relative, resolve } from 'node:path';
import { z } from 'zod';
import { UserError, isUserError } from '../errors.ts';
import { loadYaml } from '../util/yaml.ts';
import { envFlag } from '../util/env.ts';
import { FolderScan, refuseSpecialFile } from '../util/folder-scan.ts';
import type { CorpusDocument, CorpusFormat, DocumentSection, PrechunkedPassage } from './types.ts';

export const CORPUS_FORMATS: readonly CorpusFormat[] = ['markdown', 'jsonl', 'beir', 'nq'];
/** Whole-file JSON (NQ) and Markdown files larger than this are refused (JSONL is streamed instead). */
export const MAX_FILE_BYTES = Number(process.env.RANKGATE_MAX_CORPUS_FILE_BYTES ?? 256 * 1024 * 1024);
/** One JSONL line longer than this is refused. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Arrays/objects nested deeper than this are refused (they would overflow JSON.stringify later). */
export const MAX_JSON_DEPTH = 64;

const MARKDOWN_EXT = new Set(['.md', '.markdown']);
const JSONL_EXT = new Set(['.jsonl', '.ndjson']);

// ---------------------------------------------------------------------------------------------- helpers

function decodeUtf8(buf: Buffer, file: string, line?: number): string {
  const where = line !== undefined ? `${file}:${line}` : file;
  if (buf.includes(0)) {
    throw new UserError(`${where}: contains NUL bytes; expected a UTF-8 text file (is it binary, or compressed?)`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(buf);
  } catch {
    throw new UserError(`${where}: not valid UTF-8; expected a UTF-8 text file`);
  }
}

async function readTextFile(file: string): Promise<string> {
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new UserError(`${file}: file not found`);
  }
  if (size > MAX_FILE_BYTES) {
    throw new UserError(
      `${file}: ${(size / 1048576).toFixed(1)} MB is over the ${(MAX_FILE_BYTES / 1048576).toFixed(0)} MB limit for a whole-file corpus; ` +
        'split it, or convert it to JSONL (one document per line), which is streamed',
    );
  }
  return decodeUtf8(await readFile(file), file);
}

/** Depth of nested arrays/objects, computed iteratively (no recursion on hostile input). */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    const depth = d + 1;
    if (depth > max) max = depth;
    if (max > limit) return max;
    for (const child of Array.isArray(v) ? v : Object.values(v as object)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth]);
    }
  }
  return max;
}

function lineColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = 0; i < position && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      last = i;
    }
  }
  return { line, column: position - last };
}

function parseJson(text: string, file: string, line?: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const pos = /position (\d+)/.exec(msg);
    let where = line !== undefined ? `${file}:${line}` : file;
    if (pos && line === undefined) {
      const lc = lineColumn(text, Number(pos[1]));
      where = `${file}:${lc.line}:${lc.column}`;
    }
    throw new UserError(`${where}: malformed JSON (${msg.replace(/ in JSON at position \d+.*$/, '')})`);
  }
  if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    const where = line !== undefined ? `${file}:${line}` : file;
    throw new UserError(`${where}: JSON nested deeper than ${MAX_JSON_DEPTH} levels; expected flat corpus records`);
  }
  return value;
}

/** Stream a file line by line (1-based line numbers), bounding the length of one line. */
export async function* readLines(file: string): AsyncGenerator<{ line: number; text: string }> {
  const stream = createReadStream(file);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineNo = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, nl);
        pending.push(piece);
        pendingBytes += piece.length;
        lineNo++;
        if (pendingBytes > MAX_LINE_BYTES) {
          throw new UserError(`${file}:${lineNo}: line longer than ${MAX_LINE_BYTES / 1048576} MB`);
        }
        const text = decodeUtf8(Buffer.concat(pending, pendingBytes), file, lineNo).replace(/\r$/, '');
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
        yield { line: lineNo, text };
      }
      if (start < chunk.length) {
        const rest = chunk.subarray(start);
        pending.push(rest);
        pendingBytes += rest.length;
        if (pendingBytes > MAX_LINE_BYTES) {
          throw new UserError(`${file}:${lineNo + 1}: line longer than ${MAX_LINE_BYTES / 1048576} MB`);
        }
      }
    }
    if (pendingBytes > 0) {
      lineNo++;
      yield { line: lineNo, text: decodeUtf8(Buffer.concat(pending, pendingBytes), file, lineNo).replace(/\r$/, '') };
    }
  } finally {
    stream.destroy();
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return v.length > 40 ? `a string "${v.slice(0, 40)}…"` : `"${v}"`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

function zodProblem(err: z.ZodError, where: string): UserError {
  const issues = err.issues.slice(0, 5).map((i) => {
    const field = i.path.length ? i.path.join('.') : '(record)';
    return `${where}: field '${field}': ${i.message}`;
  });
  return new UserError(issues.join('\n'));
}

const tagsSchema = z
  .union([z.array(z.union([z.string(), z.number()])), z.string()])
  .transform((t) => (typeof t === 'string' ? t.split(',') : t.map(String)).map((s) => s.trim()).filter(Boolean));

const languageSchema = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'expected a language code such as en, es, hi');

// ------------------------------------------------------------------------------------------- markdown

const frontMatterSchema = z.looseObject({
  title: z.string().optional(),
  slug: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'expected a slug of letters, digits, ".", "_" and "-"')
    .optional(),
  language: languageSchema.optional(),
  author: z.string().optional(),
  tags: tagsSchema.optional(),
});

const DEVANAGARI_DIGITS = '०१२३४५६७८९';
function toArabicDigits(s: string): string {
  return s.replace(/[०-९]/g, (d) => String(DEVANAGARI_DIGITS.indexOf(d)));
}
function romanToInt(s: string): number | undefined {
  const map: Record<string, number> = { I: 1, V: 5, X: 10, L: 50, C: 100 };
  let total = 0;
  const up = s.toUpperCase();
  for (let i = 0; i < up.length; i++) {
    const v = map[up[i]!];
    const next = map[up[i + 1] ?? ''] ?? 0;
    if (v === undefined) return undefined;
    total += v < next ? -v : v;
  }
  return total > 0 ? total : undefined;
}

const CHAPTER_WORD = /^(?:chapter|ch\.|cap[ií]tulo|अध्याय)\s+([0-9०-९]+|[IVXLC]+)(?=\s|[:.\-–—)]|$)\s*[:.\-–—)]?\s*(.*)$/i;
const NUMBERED = /^([0-9०-९]+)[.)]\s+(.*)$/;

/** Chapter number and title of a heading, if it is a chapter heading (`Chapter N: Title` or `N. Title`). */
export function parseChapterHeading(heading: string): { chapterNumber: number; title: string } | undefined {
  let m = CHAPTER_WORD.exec(heading);
  if (m) {
    const raw = m[1]!;
    const n = /^[0-9०-९]+$/.test(raw) ? Number(toArabicDigits(raw)) : romanToInt(raw);
    if (n !== undefined && Number.isFinite(n)) return { chapterNumber: n, title: m[2]!.trim() };
  }
  m = NUMBERED.exec(heading);
  if (m) return { chapterNumber: Number(toArabicDigits(m[1]!)), title: m[2]!.trim() };
  return undefined;
}

/** Split a Markdown body into sections at ATX headings (outside fenced code blocks). */
export function markdownSections(body: string): { title?: string; sections: DocumentSection[] } {
  const lines = body.replace(/\r\n?/g, '\n').split('\n');
  const sections: DocumentSection[] = [];
  let title: string | undefined;
  let current: { heading?: string; level: number; chapterNumber?: number; lines: string[] } = { level: 0, lines: [] };
  let chapter: { number: number; level: number } | undefined;
  let fence: string | undefined;
  let sawHeading = false;

  const close = () => {
    const text = current.lines.join('\n').trim();
    if (text) {
      sections.push({
        ...(current.chapterNumber !== undefined ? { chapterNumber: current.chapterNumber } : {}),
        ...(current.heading !== undefined ? { heading: current.heading } : {}),
        text,
      });
    }
  };

  for (const line of lines) {
    const fenceMatch = /^\s{0,3}(```+|~~~+)/.exec(line);
    if (fenceMatch) {
      const marker = fenceMatch[1]!;
      if (!fence) fence = marker[0]!.repeat(marker.length);
      else if (marker.startsWith(fence)) fence = undefined;
      current.lines.push(line);
      continue;
    }
    const h = fence ? null : /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) {
      current.lines.push(line);
      continue;
    }
    const level = h[1]!.length;
    const text = h[2]!.trim();
    if (level === 1 && !sawHeading && title === undefined && current.lines.join('').trim() === '') {
      title = text; // the document title, not a section
      sawHeading = true;
      continue;
    }
    sawHeading = true;
    close();
    const ch = parseChapterHeading(text);
    if (ch) chapter = { number: ch.chapterNumber, level };
    else if (chapter && level <= chapter.level) chapter = undefined;
    current = {
      heading: text,
      level,
      ...(chapter ? { chapterNumber: chapter.number } : {}),
      lines: [],
    };
  }
  close();
  return { ...(title !== undefined ? { title } : {}), sections };
}

function splitFrontMatter(text: string, file: string): { data: Record<string, unknown>; body: string } {
  const t = text.replace(/^\uFEFF/, '');
  if (!/^---[ \t]*\r?\n/.test(t)) return { data: {}, body: t };
  const end = /\r?\n---[ \t]*(\r?\n|$)/.exec(t.slice(3));
  if (!end) throw new UserError(`${file}:1: front matter opened with '---' but never closed with a '---' line`);
  const yamlText = t.slice(3, 3 + end.index);
  const body = t.slice(3 + end.index + end[0].length);
  let data: unknown;
  try {
    data = loadYaml(yamlText, file); // bounded alias expansion (src/util/yaml.ts)
  } catch (e) {
    const m = isUserError(e) && e.message.startsWith(file) ? /^:(\d+):\d+: not valid YAML \((.*)\)$/s.exec(e.message.slice(file.length)) : null;
    if (m) throw new UserError(`${file}:${Number(m[1]) + 1}: front matter is not valid YAML (${m[2]})`);
    throw e;
  }
  if (data === null || data === undefined) return { data: {}, body };
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new UserError(`${file}:2: front matter: expected a mapping of fields (title, slug, language, ...), got ${describe(data)}`);
  }
  return { data: data as Record<string, unknown>, body };
}

export async function readMarkdownFile(file: string, root?: string): Promise<CorpusDocument> {
  const text = await readTextFile(file);
  const { data, body } = splitFrontMatter(text, file);
  const parsed = frontMatterSchema.safeParse(data);
  if (!parsed.success) throw zodProblem(parsed.error, `${file} (front matter)`);
  const fm = parsed.data;
  const { title: h1, sections } = markdownSections(body);
  const stem = basename(file, extname(file));
  const slug = fm.slug ?? stem.replace(/[^A-Za-z0-9._-]+/g, '-');
  const { title: _t, slug: _s, language: _l, tags: _g, ...rest } = fm;
  void _t;
  void _s;
  void _l;
  void _g;
  return {
    id: slug,
    slug,
    title: fm.title ?? h1 ?? stem,
    language: fm.language ?? 'en',
    path: root ? relative(root, file) : basename(file),
    tags: fm.tags ?? [],
    metadata: rest,
    sections,
  };
}

// ------------------------------------------------------------------------------------ staying inside the corpus

export interface ReadCorpusOptions {
  /** Follow symbolic links whose target stays inside the corpus folder (`rankgate ingest --follow-symlinks`,
   *  RANKGATE_FOLLOW_SYMLINKS=1). Default: no link is followed. A link leading outside is never followed. */
  followSymlinks?: boolean;
  /** Where the one warning line about skipped entries goes (default: stderr). */
  onWarning?: (line: string) => void;
}

/** The walk of a corpus folder: src/util/folder-scan.ts (links leading outside, links inside unless followed, special files). */
class CorpusScan extends FolderScan {
  constructor(given: string, opts: ReadCorpusOptions) {
    super(given, { followSymlinks: opts.followSymlinks ?? envFlag('RANKGATE_FOLLOW_SYMLINKS'), noun: 'corpus', followHint: 'without --follow-symlinks' });
  }
}

/** A corpus named as one file must be a regular file (a fifo would block the read for ever). */
function checkRegularFile(path: string, st: Stats): void {
  refuseSpecialFile(path, st, 'a corpus: expected a folder or a regular file');
}

function listFiles(dir: string, exts: Set<string>, scan: CorpusScan = new CorpusScan(dir, {})): string[] {
  return scan.list(exts);
}

async function readMarkdownCorpus(path: string, scan?: CorpusScan): Promise<CorpusDocument[]> {
  const st = statSync(path);
  const files = st.isDirectory() ? listFiles(path, MARKDOWN_EXT, scan) : [path];
  if (files.length === 0) throw new UserError(`${path}: no Markdown files (*.md) found`);
  const root = st.isDirectory() ? path : undefined;
  const docs: CorpusDocument[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    const doc = await readMarkdownFile(f, root);
    const prev = seen.get(doc.id);
    if (prev) throw new UserError(`${f}: field 'slug': "${doc.id}" is already used by ${prev}; slugs must be unique`);
    seen.set(doc.id, f);
    docs.push(doc);
  }
  return docs;
}

// ---------------------------------------------------------------------------------------- jsonl / beir

const idSchema = z.union([z.string().min(1, 'expected a non-empty id'), z.number()]).transform(String);

const jsonlRecordSchema = z.looseObject({
  id: idSchema,
  title: z.string().optional(),
  text: z.string(),
  language: languageSchema.optional(),
  slug: z.string().optional(),
  path: z.string().optional(),
  tags: tagsSchema.optional(),
});

const beirRecordSchema = z.looseObject({
  _id: idSchema,
  title: z.string().optional(),
  text: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

function recordSections(title: string, text: string): DocumentSection[] {
  // BEIR convention: the title is indexed with the text (title + text per document).
  const body = title.trim() ? `${title.trim()}\n\n${text}` : text;
  return body.trim() ? [{ ...(title.trim() ? { heading: title.trim() } : {}), text: body }] : [];
}

async function readJsonlLike(file: string, format: 'jsonl' | 'beir'): Promise<CorpusDocument[]> {
  try {
    if (!statSync(file).isFile()) throw new UserError(`${file}: expected a file`);
  } catch (e) {
    if (e instanceof UserError) throw e;
    throw new UserError(`${file}: file not found`);
  }
  const docs: CorpusDocument[] = [];
  const seen = new Map<string, number>();
  const schema = format === 'beir' ? beirRecordSchema : jsonlRecordSchema;
  const idField = format === 'beir' ? '_id' : 'id';
  for await (const { line, text } of readLines(file)) {
    if (!text.trim()) continue;
    const where = `${file}:${line}`;
    if (docs.length === 0 && text.trimStart().startsWith('[')) {
      throw new UserError(`${where}: expected one JSON object per line ({${idField}, title, text}), but the file is a JSON array (NQ prepared JSON? use --format nq)`);
    }
    const value = parseJson(text, file, line);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new UserError(
        `${where}: expected one JSON object per line ({${idField}, title, text}), got ${describe(value)}` +
          (Array.isArray(value) && line === 1 ? ' (a JSON array: is this NQ prepared JSON? use --format nq)' : ''),
      );
    }
    const r = schema.safeParse(value);
    if (!r.success) throw zodProblem(r.error, where);
    const rec = r.data as Record<string, unknown> & { title?: string; text: string };
    const id = String(rec[idField]);
    const prev = seen.get(id);
    if (prev !== undefined) throw new UserError(`${where}: field '${idField}': "${id}" repeats the id of line ${prev}`);
    seen.set(id, line);
    const title = rec.title ?? '';
    if (format === 'beir') {
      docs.push({
        id,
        title,
        language: 'en',
        path: basename(file),
        tags: [],
        metadata: (rec.metadata as Record<string, unknown> | undefined) ?? {},
        sections: recordSections(title, rec.text),
      });
    } else {
      const { id: _i, title: _t, text: _x, language, slug, path, tags, ...rest } = rec as z.infer<typeof jsonlRecordSchema>;
      void _i;
      void _t;
      void _x;
      docs.push({
        id,
        ...(slug !== undefined ? { slug } : {}),
        title,
        language: language ?? 'en',
        path: path ?? basename(file),
        tags: tags ?? [],
        metadata: rest,
        sections: recordSections(title, rec.text),
      });
    }
  }
  if (docs.length === 0) throw new UserError(`${file}: no records (expected one JSON object per line)`);
  return docs;
}

// --------------------------------------------------------------------------------------------------- nq

const nqRecordSchema = z.looseObject({
  chunk_id: z.union([z.string().min(1), z.number()]).transform(String),
  document_id: z.union([z.string().min(1), z.number()]).transform(String).optional(),
  content: z.string().min(1, 'expected non-empty passage text'),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

async function readNq(file: string): Promise<CorpusDocument[]> {
  const text = await readTextFile(file);
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') && /\}\s*\r?\n\s*\{/.test(text.slice(0, 1 << 20))) {
    throw new UserError(`${file}: looks like JSONL (one object per line), not NQ prepared JSON (an array); use --format jsonl or beir`);
  }
  const value = parseJson(text, file);
  const list = Array.isArray(value)
    ? value
    : value && typeof value === 'object' && Array.isArray((value as { chunks?: unknown }).chunks)
      ? ((value as { chunks: unknown[] }).chunks)
      : undefined;
  if (!list) {
    throw new UserError(`${file}: expected a JSON array of {chunk_id, document_id, content, metadata} (NQ prepared JSON), got ${describe(value)}`);
  }
  const groups = new Map<string, PrechunkedPassage[]>();
  const seen = new Map<string, number>();
  list.forEach((item, i) => {
    const where = `${file} [index ${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new UserError(`${where}: expected an object {chunk_id, document_id, content, metadata}, got ${describe(item)}`);
    }
    const r = nqRecordSchema.safeParse(item);
    if (!r.success) throw zodProblem(r.error, where);
    const rec = r.data;
    const prev = seen.get(rec.chunk_id);
    if (prev !== undefined) throw new UserError(`${where}: field 'chunk_id': "${rec.chunk_id}" repeats index ${prev}`);
    seen.set(rec.chunk_id, i);
    const docId = rec.document_id ?? 'natural_questions';
    let g = groups.get(docId);
    if (!g) groups.set(docId, (g = []));
    g.push({ id: rec.chunk_id, content: rec.content, ...(rec.metadata ? { metadata: rec.metadata } : {}) });
  });
  if (groups.size === 0) throw new UserError(`${file}: the array is empty; expected NQ passages`);
  return [...groups.entries()].map(([id, prechunked]) => ({
    id,
    title: id,
    language: 'en',
    path: basename(file),
    tags: [],
    metadata: { source: 'nq' },
    sections: [],
    prechunked,
  }));
}

// ---------------------------------------------------------------------------------------- detection

async function sniff(file: string, bytes = 4096): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    const head = buf.subarray(0, bytesRead);
    if (head.includes(0)) throw new UserError(`${file}: contains NUL bytes; expected a UTF-8 text file (is it binary, or compressed?)`);
    return head.toString('utf8').replace(/^\uFEFF/, '');
  } finally {
    await fh.close();
  }
}

/** Which reader a path needs, from its name and, where the name is not enough, its first bytes. */
export async function detectFormat(path: string, scan?: CorpusScan): Promise<{ format: CorpusFormat; file: string }> {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new UserError(`${path}: corpus not found (expected a folder of Markdown, a .jsonl file, a BEIR folder or corpus.jsonl, or NQ prepared .json)`);
  }
  checkRegularFile(path, st);
  if (st.isDirectory()) {
    const walk = scan ?? new CorpusScan(path, {});
    // a file of the folder counts only when the walk may read it (inside the corpus, a regular file)
    const names = readdirSync(path).filter((n) => !n.startsWith('.') && walk.admit(join(path, n))?.isFile());
    if (names.includes('corpus.jsonl')) return { format: 'beir', file: join(path, 'corpus.jsonl') };
    if (listFiles(path, MARKDOWN_EXT, walk).length) return { format: 'markdown', file: path };
    const jsonl = names.filter((n) => JSONL_EXT.has(extname(n).toLowerCase()));
    if (jsonl.length === 1) return detectFormat(join(path, jsonl[0]!));
    const json = names.filter((n) => extname(n).toLowerCase() === '.json');
    if (json.length === 1 && jsonl.length === 0) return { format: 'nq', file: join(path, json[0]!) };
    throw new UserError(
      `${path}: cannot tell the corpus format (no *.md, no corpus.jsonl, ${jsonl.length} .jsonl and ${json.length} .json files); pass --format and a file`,
    );
  }
  const ext = extname(path).toLowerCase();
  if (MARKDOWN_EXT.has(ext)) return { format: 'markdown', file: path };
  const head = await sniff(path);
  const first = head.trimStart();
  if (JSONL_EXT.has(ext) || basename(path) === 'corpus.jsonl' || (first.startsWith('{') && ext !== '.json')) {
    if (!first.startsWith('{')) {
      throw new UserError(`${path}: expected JSONL (one JSON object per line), but the file starts with ${JSON.stringify(first.slice(0, 20))}`);
    }
    const firstLine = first.split('\n', 1)[0]!;
    return { format: /"_id"\s*:/.test(firstLine) ? 'beir' : 'jsonl', file: path };
  }
  if (ext === '.json' || first.startsWith('[')) {
    if (!first.startsWith('[') && !first.startsWith('{')) {
      throw new UserError(`${path}: expected JSON (NQ prepared: an array of passages), but the file starts with ${JSON.stringify(first.slice(0, 20))}`);
    }
    return { format: 'nq', file: path };
  }
  if (first.startsWith('---') || first.startsWith('#')) return { format: 'markdown', file: path };
  throw new UserError(`${path}: cannot tell the corpus format from the name or content; pass --format markdown|jsonl|beir|nq`);
}

/**
 * Read a corpus. `path` is a folder or a file; `format` overrides detection (a BEIR folder then means its
 * corpus.jsonl). Documents come back in a stable order (files sorted by path, records in file order).
 */
export async function readCorpus(path: string, format?: CorpusFormat, opts: ReadCorpusOptions = {}): Promise<CorpusDocument[]> {
  if (format !== undefined && !CORPUS_FORMATS.includes(format)) {
    throw new UserError(`format: expected one of ${CORPUS_FORMATS.join(', ')}, got ${JSON.stringify(format)}`);
  }
  let st;
  try {
    st = statSync(resolve(path));
  } catch {
    throw new UserError(format ? `${path}: corpus not found` : `${path}: corpus not found (expected a folder of Markdown, a .jsonl file, a BEIR folder or corpus.jsonl, or NQ prepared .json)`);
  }
  checkRegularFile(path, st);
  // a folder is walked once, staying inside it; what was left out is one warning line
  const scan = st.isDirectory() ? new CorpusScan(path, opts) : undefined;
  try {
    let file = path;
    let fmt: CorpusFormat;
    if (format) {
      fmt = format;
      if (scan && format !== 'markdown') {
        const d = await detectFormat(path, scan);
        if (format === 'beir' && d.format !== 'beir') throw new UserError(`${path}: --format beir expects a folder with corpus.jsonl`);
        file = d.file;
      }
    } else {
      const d = await detectFormat(path, scan);
      fmt = d.format;
      file = d.file;
    }
    return await (fmt === 'markdown' ? readMarkdownCorpus(file, scan) : fmt === 'nq' ? readNq(file) : readJsonlLike(file, fmt));
  } finally {
    // also when the read fails: a corpus.jsonl that is a link leading outside explains "cannot tell the format"
    const line = scan?.warning();
    if (line) (opts.onWarning ?? ((l: string) => process.stderr.write(`rankgate: ${l}\n`)))(line);
  }
}
