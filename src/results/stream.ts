/**
 * Read a results file of either form through one code path (read.ts's resultsParser):
 *
 *   - promptfoo's `--output results.json`: one JSON document (rows + prompts + column sums), parsed whole;
 *   - promptfoo's `--output results.jsonl`: one EvaluateResult row a line and nothing else (promptfoo 0.121.20
 *     appends row batches, no prompts, metrics or config), read line by line: each row is reduced to its query
 *     record as it is read, so memory grows with the number of queries, not with the bytes of the rows;
 *   - the afterAll hook's re-gate file (`<output>.rankgate.jsonl`, assertions/gate.ts): the same JSONL with a
 *     first header line `{"rankgate_regate": ...}` (the verdict the hook reached), then compact rows.
 *
 * A JSONL file has no column sums or counts: the rows are re-scored (the evidence the gate uses anyway), and the
 * cross-checks of rows against promptfoo's summary cannot be made (jsonlLimits says which).
 */
import { UserError } from '../errors.ts';
import { readLinesSync } from '../util/lines.ts';
import { parseResultsJson, resultsParser, type ParsedResults, type ReadOptions } from './read.ts';
import type { Toolchain } from '../util/toolchain.ts';
import { NotRegularFileError, readRegularFileSync } from '../util/regular-file.ts';

/** JSONL by name: promptfoo picks its output format by the extension the same way. */
export const isJsonl = (path: string): boolean => /\.(jsonl|ndjson)$/i.test(path);

/** First-line key of the afterAll hook's re-gate file. */
export const REGATE_KEY = 'rankgate_regate';

/** The checks a JSONL results file cannot have (said by `rankgate gate` and the report). */
export const JSONL_LIMITS =
  'JSONL results (promptfoo writes rows only): every row re-scored; not available without the column summary: ' +
  "promptfoo's pass/fail/error counts per column and the column sums (n_ranked, recall_at_3, routing_ok) checked against the rows";

/** Each row of a JSONL file, parsed, with its 1-based line number; blank lines skipped; a bad line is a UserError. */
export function* jsonlRows(path: string): Generator<{ row: Record<string, unknown>; line: number }> {
  let n = 0;
  let lines: Generator<string>;
  try {
    lines = readLinesSync(path);
    for (const text of lines) {
      n++;
      if (!text.trim()) continue;
      let row: unknown;
      try {
        row = JSON.parse(text);
      } catch (e) {
        throw new UserError(
          `${path}: line ${n}: not JSON (${(e as Error).message.split('\n')[0]}); expected one promptfoo result row a line (\`promptfoo eval --output results.jsonl\`)`,
        );
      }
      if (!row || typeof row !== 'object' || Array.isArray(row)) throw new UserError(`${path}: line ${n}: expected a promptfoo result row (a JSON object), got ${JSON.stringify(row).slice(0, 60)}`);
      yield { row: row as Record<string, unknown>, line: n };
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (e instanceof NotRegularFileError) throw new UserError(`${path}: cannot read (${e.message})`);
    if (code && !(e instanceof UserError)) throw new UserError(`${path}: cannot read (${code})`);
    throw e;
  }
}

/** The re-gate header of a file written by the afterAll hook, null for promptfoo's own JSONL. */
export interface RegateHeader {
  evalId?: string | null;
  timestamp?: string;
  output?: string | null;
  /** Every output file of the eval (promptfoo's -o a.json b.jsonl): the record is valid for each. */
  outputs?: string[];
  code?: number;
  verdict?: string[];
  /** The Node and promptfoo of the eval (the hook's own process). */
  toolchain?: Toolchain;
  /** false when promptfoo did not keep the eval (--no-write, or the config's commandLineOptions.write: false). */
  written?: boolean;
  /** The eval's run id, its row count and the digest of its rows (src/results/record.ts); merge's record says `merged`. */
  runId?: string | null;
  rows?: number;
  digest?: string;
  merged?: { runs: string[]; unrecorded: string[] };
  /** HMAC of the run id, rows, digest and merged runs with RANKGATE_SEAL_KEY (src/util/seal.ts), when the writer held it. */
  seal?: string;
}

/** Parse a JSONL results file (promptfoo's, or the hook's re-gate file) one row at a time. */
export function readResultsJsonl(path: string, routingOpts: ReadOptions = {}): ParsedResults & { regate?: RegateHeader } {
  let parser: ReturnType<typeof resultsParser> | null = null;
  let regate: RegateHeader | undefined;
  let i = 0;
  for (const { row, line } of jsonlRows(path)) {
    if (line === 1 && REGATE_KEY in row) {
      regate = row[REGATE_KEY] as RegateHeader;
      continue;
    }
    parser ??= resultsParser({ evalId: regate?.evalId ?? undefined, timestamp: regate?.timestamp, prompts: null }, path, routingOpts);
    parser.addRow(row, i++);
  }
  parser ??= resultsParser({ evalId: regate?.evalId ?? undefined, timestamp: regate?.timestamp, prompts: null }, path, routingOpts);
  const parsed = parser.finish();
  if (parsed.columns.length === 0) throw new UserError(`${path}: no result rows (expected the file written by \`promptfoo eval --output results.jsonl\`; with --no-write promptfoo 0.121 writes no rows to JSONL)`);
  return { ...parsed, ...(regate ? { regate } : {}), ...(regate?.toolchain ? { toolchain: regate.toolchain } : {}) };
}

/** A results file, JSON or JSONL (by its extension), as per-column query records. */
export function readResultsFile(path: string, routingOpts: ReadOptions = {}): ParsedResults {
  if (isJsonl(path)) return readResultsJsonl(path, routingOpts);
  let text: string;
  try {
    text = readRegularFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseResultsJson(text, path, routingOpts);
}

/** The raw rows of a results file one at a time (JSON: results.results; JSONL: each line, the re-gate header skipped). */
export function* resultRows(path: string): Generator<Record<string, unknown>> {
  if (!isJsonl(path)) {
    let doc: { results?: { results?: unknown } };
    try {
      doc = JSON.parse(readRegularFileSync(path, 'utf8')) as typeof doc;
    } catch (e) {
      throw new UserError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message.split('\n')[0]})`);
    }
    const rows = doc?.results?.results;
    if (!Array.isArray(rows)) throw new UserError(`${path}: expected promptfoo output JSON with results.results[] (write it with \`promptfoo eval --output results.jsonl\`)`);
    yield* rows as Record<string, unknown>[];
    return;
  }
  for (const { row, line } of jsonlRows(path)) if (!(line === 1 && REGATE_KEY in row)) yield row;
}
