/**
 * Expected documents checked against the corpus, when rankgate knows it (its own search with `corpus:`, or an ingested
 * index): an expected `path` or `doc_id` that no document has could never be found, so the query would score 0 for
 * a reason that is not the search. `rankgate golden check` and the eval's start refuse them, one line each:
 *
 *   eval/golden.yaml:14 (pw-forgot) expected path: no document of corpus help has path "account/reset-pasword.md"; did you mean "account/reset-password.md"?
 *
 * A golden `path` names a document by its path (relative to the corpus folder) or its id; `doc_id` by its id; a
 * `chunk_id` of rankgate's form `<documentId>#c<size>-<index>` by the id before `#` (other chunk ids and passage
 * substrings are the source's own or matched by content: not checked here).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { didYouMean } from '../util/suggest.ts';
import { readCorpus } from '../ingest/readers.ts';
import type { CorpusDocument, CorpusFormat } from '../ingest/types.ts';
import { ownPaths } from '../ingest/identity.ts';
import { readGoldenFile } from './index.ts';
import { REPO_ROOT } from './promptfoo.ts';
import { formatProblem, type Problem } from './problems.ts';
import type { GoldenQuery } from './schema.ts';

export interface CorpusDocKey {
  id: string;
  path?: string | null;
}

/** The ids and own paths of a corpus's documents (a path every record of a JSONL file shares names none of them). */
export function corpusKeys(docs: readonly CorpusDocument[]): CorpusDocKey[] {
  const own = ownPaths(docs);
  return docs.map((d) => ({ id: d.id, path: own.get(d) ?? null }));
}

/** At most this many problems per file (the rest counted in one line). */
export const MAX_REF_PROBLEMS = 50;

const stem = (p: string) => basename(p, extname(p)).toLowerCase();

/** The file (a golden file, or a file inside a BEIR/TREC folder) and line where `value` is stated for query `id`. */
function locate(file: string, id: string, value: string, texts: Map<string, string[]>): { file: string; line?: number } {
  let files: string[];
  try {
    files = statSync(file).isDirectory() ? listFiles(file) : [file];
  } catch {
    return { file };
  }
  for (const f of files) {
    let lines = texts.get(f);
    if (!lines) {
      try {
        const st = statSync(f);
        lines = st.size > 64 * 1024 * 1024 ? [] : readFileSync(f, 'utf8').split(/\r?\n/);
      } catch {
        lines = [];
      }
      texts.set(f, lines);
    }
    const idAt = lines.findIndex((l) => l.includes(id));
    if (idAt >= 0) {
      const sameLine = lines.findIndex((l) => l.includes(id) && l.includes(value));
      if (sameLine >= 0) return { file: f, line: sameLine + 1 };
      const after = lines.findIndex((l, i) => i >= idAt && l.includes(value));
      if (after >= 0) return { file: f, line: after + 1 };
    }
  }
  return { file };
}

function listFiles(dir: string, depth = 0): string[] {
  if (depth > 3) return [];
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => (e.isDirectory() ? listFiles(join(dir, e.name), depth + 1) : e.isFile() ? [join(dir, e.name)] : []));
}

/** Problems (errors) for the expected documents of `queries` (read from `file`) that no corpus document has. */
export function unknownDocumentProblems(file: string, queries: readonly GoldenQuery[], docs: readonly CorpusDocKey[], corpusName: string, max = MAX_REF_PROBLEMS): Problem[] {
  const ids = new Set(docs.map((d) => d.id));
  const paths = new Set(docs.flatMap((d) => (d.path ? [d.path] : [])));
  const pathList = [...paths].sort();
  const idList = [...ids].sort();
  const byStem = new Map<string, string>();
  for (const d of docs) byStem.set(stem(d.path ?? d.id), d.path ?? d.id);
  const texts = new Map<string, string[]>();
  const out: Problem[] = [];
  let more = 0;
  for (const q of queries) {
    q.expected.forEach((r) => {
      let field: string;
      let value: string;
      let hint: string;
      if (r.path !== undefined) {
        if (paths.has(r.path) || ids.has(r.path)) return;
        field = 'expected path';
        value = r.path;
        const same = byStem.get(stem(r.path));
        hint = didYouMean(r.path, pathList, '"') || (same ? `; did you mean "${same}"?` : didYouMean(r.path, idList, '"'));
      } else if (r.doc_id !== undefined) {
        if (ids.has(r.doc_id)) return;
        field = 'expected doc_id';
        value = r.doc_id;
        hint = didYouMean(r.doc_id, idList, '"');
        const same = byStem.get(stem(r.doc_id));
        if (!hint && same) hint = `; did you mean "${docs.find((d) => (d.path ?? d.id) === same)!.id}"?`;
      } else if (r.chunk_id !== undefined && /#c\d+-\d+$/.test(r.chunk_id)) {
        const doc = r.chunk_id.slice(0, r.chunk_id.lastIndexOf('#'));
        if (ids.has(doc)) return;
        field = 'expected chunk_id';
        value = r.chunk_id;
        hint = didYouMean(doc, idList, '"');
      } else return;
      if (out.length >= max) {
        more++;
        return;
      }
      const at = locate(file, q.id, value, texts);
      const what = field === 'expected path' ? 'path (or id)' : field === 'expected doc_id' ? 'id' : 'the document of chunk id';
      out.push({
        file: at.file,
        ...(at.line !== undefined ? { line: at.line } : {}),
        entry: q.id,
        field,
        message: `no document of corpus ${corpusName} (${docs.length} documents) has ${what} "${value}"${hint}; the query could never find it`,
        severity: 'error',
      });
    });
  }
  if (more) out.push({ file, entry: 'file', field: 'expected', message: `... and ${more} more expected documents no document of corpus ${corpusName} has`, severity: 'error' });
  return out;
}

/** The same as printable lines (formatProblem). */
export function unknownDocumentLines(file: string, queries: readonly GoldenQuery[], docs: readonly CorpusDocKey[], corpusName: string): string[] {
  return unknownDocumentProblems(file, queries, docs, corpusName).map(formatProblem);
}

/**
 * The eval's start: every golden file of the selection against the corpus of rankgate's own search (`corpus:`).
 * Returns the problems, every one of them (empty: every expected document exists). Golden files that do not read
 * are left to their loader (which already refused them).
 */
export async function goldenFilesAgainstCorpus(files: readonly string[], corpus: string, format?: CorpusFormat, corpusName = corpus): Promise<Problem[]> {
  const keys = corpusKeys(await readCorpus(corpus, format));
  return files.flatMap((f) => unknownDocumentProblems(f, readGoldenFile(f).queries, keys, corpusName, Number.POSITIVE_INFINITY));
}

/** The row error of a query whose expected document the corpus does not have (it alone errors; the rest are measured). */
export const MISSING_DOCUMENT_ERROR = 'golden set: an expected document is not in the corpus';

const startChecks = new Map<string, Promise<Map<string, string>>>();

/**
 * Once per (corpus, golden files) in a process: the eval's start check of the provider (providers/search.ts) for
 * rankgate's own search with `corpus:`. `files` as the test cases' selection names them (repo-relative or absolute).
 * Resolves to the row error of each query that expects a document no document of the corpus has (by query id;
 * empty when every expected document exists): that query errors, the others are measured and compared. The full
 * list goes to stderr once.
 */
export function evalStartCheck(corpus: string, format: CorpusFormat | undefined, files: readonly string[], corpusName: string): Promise<Map<string, string>> {
  // shown relative to the working directory when inside it (eval/golden.yaml:13), else absolute
  const paths = files.map((f) => {
    const abs = isAbsolute(f) ? f : existsSync(resolve(f)) ? resolve(f) : resolve(REPO_ROOT, f);
    const rel = relative(process.cwd(), abs);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
  });
  const key = JSON.stringify([corpus, format ?? null, paths]);
  let p = startChecks.get(key);
  if (!p) {
    p = goldenFilesAgainstCorpus(paths, corpus, format, corpusName).then(
      (problems) => {
        const byQuery = new Map<string, string>();
        if (!problems.length) return byQuery;
        const lines = problems.map(formatProblem);
        process.stderr.write(
          `rankgate: the golden set expects documents corpus ${corpusName} does not have (those ${new Set(problems.map((x) => x.entry)).size} queries error; the others are measured):\n${lines.map((l) => `  ${l}`).join('\n')}\n`,
        );
        problems.forEach((x, i) => {
          if (byQuery.has(x.entry)) return;
          byQuery.set(
            x.entry,
            `${MISSING_DOCUMENT_ERROR} (nothing measured for this query): ${lines[i]}; update the golden set (this query's expected document) or the document's path in corpus ${corpusName}`,
          );
        });
        return byQuery;
      },
      () => new Map<string, string>(), // a corpus that does not read is the service's error to report
    );
    startChecks.set(key, p);
  }
  return p;
}
