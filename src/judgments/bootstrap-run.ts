/**
 * One run of `rankgate golden bootstrap --from-feedback`: read the logs, read what exists (the golden set being
 * written, the golden sets whose queries labels attach to, the judgments file), compute both outputs, check them,
 * then write each atomically (a run that fails writes nothing). Returns what it did, for the command to print.
 */
import { existsSync } from 'node:fs';
import { extname } from 'node:path';
import { UserError } from '../errors.ts';
import { detectFormat, loadGolden } from '../golden/index.ts';
import { corpusKeys } from '../golden/corpus-refs.ts';
import { readCorpus } from '../ingest/readers.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { aggregateLogs, askedQuery, logEntry, logLabels, mergeLogEntries, LOG_ID_PREFIX, type GoldMerge, type LogBootstrapOptions, type LogSummary } from './bootstrap.ts';
import { mergeLabels, readJudgments, writeJudgments, labelLine, type Judgment } from './file.ts';
import { checkGoldText, goldLinesText, readGoldLines, type GoldLine } from './goldlines.ts';
import { logFiles, type LogFile } from './logs.ts';
import { feedbackSql, readFeedbackSql } from './sql.ts';

export interface LogBootstrapRequest extends Omit<LogBootstrapOptions, 'corpus'> {
  /** files or folders, and `sql` for the database */
  from: readonly string[];
  databaseUrl?: string;
  sqlFile?: string;
  out?: string;
  judgments?: string;
  golden?: readonly string[];
  corpus?: string;
}

export interface LogBootstrapReport {
  files: LogFile[];
  sql?: string;
  summary: LogSummary;
  corpus?: { name: string; documents: number };
  /** logged queries with supported documents the golden set already asks (labels), and the generated entries */
  asked: number;
  generated: number;
  golden?: { path: string; merge: GoldMerge; reviewed: number; written: boolean };
  judgments?: { path: string; labels: number; queries: number; changed: number; written: boolean };
}

export async function bootstrapFromLogs(req: LogBootstrapRequest): Promise<LogBootstrapReport> {
  if (!req.out && !req.judgments) throw new UserError('bootstrap --from-feedback: nothing to write: give --out FILE (gold-set JSONL: bootstrap queries) and/or --judgments FILE (bootstrap labels)');
  if (req.out && (existsSync(req.out) ? detectFormat(req.out) : extname(req.out).toLowerCase() === '.jsonl' ? 'jsonl' : 'other') !== 'jsonl')
    throw new UserError(`--out ${req.out}: bootstrap from logs writes gold-set JSONL, expected a *.jsonl file`);
  const paths = req.from.filter((p) => p !== 'sql');
  const files = logFiles(paths);
  let sql: ReturnType<typeof feedbackSql> | undefined;
  let url: string | undefined;
  if (req.from.includes('sql')) {
    url = req.databaseUrl ?? process.env.DATABASE_URL;
    if (!url) throw new UserError('--from-feedback sql: no database: give --database-url URL (or DATABASE_URL), a role that may SELECT the feedback and search-log tables');
    sql = feedbackSql(req.sqlFile);
  } else if (req.sqlFile) throw new UserError('--sql FILE is the query of --from-feedback sql: add --from-feedback sql');

  // what exists, read (and checked) before any log is
  const existing = req.out && existsSync(req.out) ? readGoldLines(req.out) : undefined;
  const goldenSets = (req.golden ?? []).map((g) => loadGolden(g));
  let corpus: LogBootstrapOptions['corpus'];
  let pathOf: ((id: string) => string | undefined) | undefined;
  let corpusInfo: LogBootstrapReport['corpus'];
  if (req.corpus) {
    const keys = corpusKeys(await readCorpus(req.corpus));
    const ids = new Map(keys.map((k) => [k.id, k.path ?? undefined]));
    const paths = new Set(keys.flatMap((k) => (k.path ? [k.path] : [])));
    corpus = { name: req.corpus, has: (id) => ids.has(id) || paths.has(id) };
    pathOf = (id) => ids.get(id);
    corpusInfo = { name: req.corpus, documents: keys.length };
  }
  const labelsBefore = req.judgments && existsSync(req.judgments) ? await readJudgments(req.judgments) : [];

  const summary = await aggregateLogs({ files, ...(sql ? { feedback: readFeedbackSql(url!, sql) } : {}) }, { ...req, corpus });

  // queries the golden set asks already (its other entries, and the --golden sets) take labels; the rest are entries
  const ours = (l: GoldLine) => l.source === 'bootstrap' && l.id!.startsWith(LOG_ID_PREFIX);
  const oursIds = new Set((existing?.lines ?? []).filter((l) => l.id !== undefined && ours(l)).map((l) => l.id!));
  // (entries this command generated are never 'asked', in whichever file they are)
  const generatedHere = (q: { id: string; source?: string }) => q.source === 'bootstrap' && q.id.startsWith(LOG_ID_PREFIX);
  const asked = [...(existing?.queries ?? []).filter((q) => !oursIds.has(q.id)), ...goldenSets.flatMap((g) => g.queries.filter((q) => !generatedHere(q)))].map(askedQuery);
  const askedNorms = new Set(asked.map((a) => a.norm));
  const generated = summary.queries.filter((q) => !askedNorms.has(q.norm)).map((q) => logEntry(q, req));
  const askedLogged = summary.queries.filter((q) => askedNorms.has(q.norm));

  const report: LogBootstrapReport = { files, summary, asked: askedLogged.length, generated: generated.length };
  if (sql) report.sql = sql.name;
  if (corpusInfo) report.corpus = corpusInfo;
  let goldText: string | undefined;
  if (req.out) {
    const merge = mergeLogEntries(existing?.lines ?? [], generated);
    goldText = goldLinesText(merge.lines);
    checkGoldText(req.out, goldText);
    const before = existing ? readRegularFileSync(req.out, 'utf8') : undefined;
    report.golden = { path: req.out, merge, reviewed: (existing?.queries ?? []).filter((q) => q.source === 'reviewed').length, written: before !== goldText };
  }
  let labels: Judgment[] | undefined;
  if (req.judgments) {
    const fresh = logLabels(askedLogged, asked, pathOf);
    labels = mergeLabels(labelsBefore, fresh);
    const old = new Map(labelsBefore.map((j) => [`${j.query}\u0000${j.doc}\u0000${j.source}`, labelLine(j)]));
    const changed = fresh.filter((j) => old.get(`${j.query}\u0000${j.doc}\u0000${j.source}`) !== labelLine(j)).length;
    report.judgments = { path: req.judgments, labels: fresh.length, queries: new Set(fresh.map((j) => j.query)).size, changed, written: changed > 0 || !existsSync(req.judgments) };
  }
  // every output computed and checked: now write (each atomically)
  if (report.golden?.written) writeFileAtomic(req.out!, goldText!);
  if (report.judgments?.written) writeJudgments(req.judgments!, labels!);
  return report;
}
