/**
 * rankgate golden validate | convert | stats | diff | bootstrap | check
 *
 * Exit codes: 0 ok; 1 a check failed (diff removed/reused ids); 2 bad input or usage (validate
 * problems, unreadable files, unknown flags).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { FolderScan } from '../util/folder-scan.ts';
import { extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ParseArgsConfig } from 'node:util';
import { parseCliArgs } from './args.ts';
import { UserError } from '../errors.ts';
import { didYouMean } from '../util/suggest.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import {
  OUTPUT_FORMATS,
  detectFormat,
  loadGolden,
  parseOutputFormat,
  readGoldenFile,
  renderGolden,
  type GoldenFormat,
  type LoadOptions,
} from '../golden/index.ts';
import { formatStats, goldenStats } from '../golden/stats.ts';
import { diffFails, diffGolden } from '../golden/diff.ts';
import { knownItemQueries, mergeBootstrap, readKnownItemDocs } from '../golden/bootstrap.ts';
import { bootstrapFromLogs, type LogBootstrapReport } from '../judgments/bootstrap-run.ts';
import { DEFAULTS as LOG_DEFAULTS, mergeLogEntries } from '../judgments/bootstrap.ts';
import { checkGoldText, goldLinesText, readGoldLines } from '../judgments/goldlines.ts';
import { parseIntFlag } from './args.ts';
import { safeTerminal } from '../util/terminal.ts';

const USAGE = `usage: rankgate golden <command> [options]

  validate FILE|DIR...                 check golden sets (a plain folder: every set under it); one line per problem: FILE:LINE (id or #index) field: what, expected;
                                       ids must be unique across the files (or folders) named: they form one selection
  convert IN --to FORMAT [-o OUT]      FORMAT: ${OUTPUT_FORMATS.join('|')} (stdout without -o; BEIR/TREC need -o)
  stats FILE|DIR... [--json]           counts per category, language, tag, routing, slice; theme balance
  diff OLD NEW                         added/changed queries; fails (exit 1) if an id was removed or reused
  bootstrap --corpus PATH [--out FILE] known-item queries (title -> document); never touches reviewed entries
  bootstrap --from-feedback LOG... [--out GOLD.jsonl] [--judgments FILE] [--golden FILE...] [--corpus PATH]
            [--min-score 3] [--min-coec 1] [--min-impressions 10] [--min-clicks 3] [--ordinal-base 1]
            [--max-docs 10]
            [--database-url URL] [--sql FILE]
                                       queries and labels from logs (docs/judgments.md): LOG is a feedback export
                                       (CSV/JSONL of feedback joined with the search log), a UBI ubi_queries or
                                       ubi_events JSONL export, a folder of them, or 'sql' (the feedback query over
                                       --database-url / DATABASE_URL; --sql FILE your own). --out gets bootstrap
                                       queries (gold-set JSONL), --judgments bootstrap labels for queries the golden
                                       set (--out's other entries, --golden) already asks. Idempotent; chair rows kept
                                       byte for byte; with --corpus, ids no document has are left out and counted
  check ...                            resolve expectations against the indexed corpus (search engineer's tool)

options for reading: --format des058|yaml|jsonl|nq-csv|nq-json|beir|trec (default: detected),
                     --split NAME (BEIR qrels split, default test), --qrels FILE (TREC qrels)`;

const COMMON = {
  format: { type: 'string' },
  split: { type: 'string' },
  qrels: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) {
  return parseCliArgs(argv, { ...COMMON, ...options }, USAGE);
}

function loadOpts(values: Record<string, unknown>): LoadOptions {
  return { format: values.format as string | undefined, split: values.split as string | undefined, qrels: values.qrels as string | undefined };
}


const GOLDEN_EXTS = new Set(['.json', '.jsonl', '.yaml', '.yml', '.csv']);

/**
 * A plain folder (not a BEIR or TREC folder) stands for every golden-set file under it, so
 * `rankgate golden validate datasets/golden` checks them all. The walk is the corpus walk's (src/util/folder-scan.ts):
 * links inside the folder are followed, links leading outside it (a linked /etc/passwd or .env) and fifos, sockets and
 * devices are skipped, with one counted warning line through `onWarning` (default: stderr).
 */
export function expandPaths(paths: readonly string[], onWarning: (line: string) => void = (l) => console.error(l)): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (existsSync(p) && statSync(p).isDirectory() && !isGoldenFolder(p)) {
      const scan = new FolderScan(p, { followSymlinks: true, noun: 'golden folder', followHint: '' });
      out.push(...scan.list(GOLDEN_EXTS, isGoldenFolder));
      const w = scan.warning();
      if (w) onWarning(w);
    } else out.push(p);
  }
  return out;
}

function isGoldenFolder(dir: string): boolean {
  try {
    detectFormat(dir);
    return true;
  } catch {
    return false;
  }
}

async function validate(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { quiet: { type: 'boolean', short: 'q' } } as const);
  if (values.help) return help();
  if (!positionals.length) throw new UserError(`validate: no file given, expected one or more golden-set files\n${USAGE}`);
  let errors = 0;
  let warnings = 0;
  let nfiles = 0;
  // Files named separately form one selection (as RANKGATE_GOLDEN=A,B would): an id may appear in only one of
  // them. The files found under one plain folder are compared only within their own file.
  const owner = new Map<string, { arg: number; file: string }>();
  for (const [arg, given] of positionals.entries()) {
    for (const file of expandPaths([given])) {
      nfiles++;
      const f = readGoldenFile(file, loadOpts(values));
      const dup: string[] = [];
      const seenHere = new Set<string>();
      for (const q of f.queries) {
        const prev = owner.get(q.id);
        if (prev && prev.arg !== arg && !seenHere.has(q.id)) dup.push(`${file} (${q.id}) id: duplicate id, already in ${prev.file}, expected ids unique across the files of one selection`);
        else if (!prev) owner.set(q.id, { arg, file });
        seenHere.add(q.id);
      }
      errors += f.errorCount + dup.length;
      const w = f.problems.filter((p) => p.severity === 'warning').length;
      warnings += w;
      for (const line of f.lines) if (!(values.quiet && line.includes(': warning: '))) console.log(line);
      for (const line of dup.slice(0, 20)) console.log(line);
      if (dup.length > 20) console.log(`${file}: ... and ${dup.length - 20} more duplicate ids not shown`);
      if (f.errorCount === 0 && dup.length === 0) console.log(`${file}: ok (${f.format}, ${f.queries.length} queries${w ? `, ${w} warning${w > 1 ? 's' : ''}` : ''})`);
    }
  }
  if (errors > 0) {
    console.error(`golden validate: ${errors} error${errors > 1 ? 's' : ''}${warnings ? `, ${warnings} warnings` : ''} in ${nfiles} file${nfiles > 1 ? 's' : ''}`);
    return 2;
  }
  return 0;
}

function outputFormatFor(path: string): GoldenFormat {
  const e = extname(path).toLowerCase();
  if (e === '.jsonl') return 'jsonl';
  if (e === '.yaml' || e === '.yml') return 'yaml';
  if (e === '.csv') return 'nq-csv';
  return 'des058';
}

async function convert(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { to: { type: 'string' }, output: { type: 'string', short: 'o' } } as const);
  if (values.help) return help();
  if (positionals.length !== 1) throw new UserError(`convert: expected exactly one input file, got ${positionals.length}\n${USAGE}`);
  if (!values.to) throw new UserError(`convert: missing --to, expected one of ${OUTPUT_FORMATS.join(', ')}`);
  const to = parseOutputFormat(values.to);
  const g = loadGolden(positionals[0]!, loadOpts(values));
  const out = values.output;
  if (!out) {
    if (to === 'beir' || to === 'trec') throw new UserError(`convert: --to ${to} writes several files, expected -o OUT`);
    const files = await renderGolden(to, g.queries, g.meta, '-');
    process.stdout.write(files.get('-')!);
    return 0;
  }
  const files = await renderGolden(to, g.queries, g.meta, out);
  for (const [p, text] of files) writeFileAtomic(p, text);
  console.error(`golden convert: ${g.queries.length} queries ${g.format} -> ${to}: ${[...files.keys()].join(', ')}`);
  return 0;
}

async function stats(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: 'boolean' } } as const);
  if (values.help) return help();
  if (!positionals.length) throw new UserError(`stats: no file given, expected one or more golden-set files`);
  // the same paths validate accepts: a plain folder stands for every golden set under it
  const files = expandPaths(positionals);
  const all = [];
  const per: Record<string, ReturnType<typeof goldenStats>> = {};
  for (const file of files) {
    const g = loadGolden(file, loadOpts(values));
    all.push(...g.queries);
    per[file] = goldenStats(g.queries);
  }
  if (values.json) {
    console.log(JSON.stringify({ files: per, total: goldenStats(all) }, null, 2));
    return 0;
  }
  const blocks = files.map((f) => formatStats(per[f]!, f));
  if (files.length > 1) blocks.push(formatStats(goldenStats(all), `all ${files.length} files`));
  console.log(blocks.join('\n\n'));
  return 0;
}

async function diff(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {});
  if (values.help) return help();
  if (positionals.length !== 2) throw new UserError(`diff: expected OLD NEW, got ${positionals.length} file(s)`);
  const [oldF, newF] = positionals as [string, string];
  const d = diffGolden(loadGolden(oldF, loadOpts(values)).queries, loadGolden(newF, loadOpts(values)).queries);
  for (const id of d.added) console.log(`added    ${id}`);
  for (const c of d.changed) console.log(`changed  ${c.id}: ${c.fields.join(', ')}`);
  for (const id of d.removed) console.log(`REMOVED  ${id}: old queries are regression tests and are never removed, expected it in ${newF}`);
  for (const r of d.reused) console.log(`REUSED   ${r.id}: was ${JSON.stringify(r.old)}, now ${JSON.stringify(r.new)}; ids are never reused, expected a new id for a new query`);
  console.log(`${d.added.length} added, ${d.changed.length} changed, ${d.unchanged} unchanged, ${d.removed.length} removed, ${d.reused.length} reused`);
  return diffFails(d) ? 1 : 0;
}

async function bootstrap(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    corpus: { type: 'string' },
    out: { type: 'string', short: 'o' },
    'from-feedback': { type: 'string', multiple: true },
    judgments: { type: 'string' },
    golden: { type: 'string', multiple: true },
    'database-url': { type: 'string' },
    sql: { type: 'string' },
    'min-score': { type: 'string' },
    'min-coec': { type: 'string' },
    'min-impressions': { type: 'string' },
    'min-clicks': { type: 'string' },
    'ordinal-base': { type: 'string' },
    'max-docs': { type: 'string' },
  } as const);
  if (values.help) return help();
  if (values['from-feedback']) {
    if (positionals.length) throw new UserError(`bootstrap: unexpected argument ${positionals[0]}, expected --from-feedback LOG (repeat it for several logs)`);
    return bootstrapLogs(values);
  }
  const logOnly = (['judgments', 'golden', 'database-url', 'sql', 'min-score', 'min-coec', 'min-impressions', 'min-clicks', 'ordinal-base', 'max-docs'] as const).filter((k) => values[k] !== undefined);
  if (logOnly.length) throw new UserError(`bootstrap: --${logOnly[0]} belongs to bootstrap --from-feedback LOG`);
  if (positionals.length) throw new UserError(`bootstrap: unexpected argument ${positionals[0]}, expected --corpus PATH [--out FILE]`);
  if (!values.corpus) throw new UserError('bootstrap: missing --corpus PATH, expected a corpus folder or file');
  const out = values.out ?? 'datasets/golden/known-items.jsonl';
  const docs = await readKnownItemDocs(values.corpus);
  const generated = knownItemQueries(docs);
  if ((existsSync(out) ? detectFormat(out) : outputFormatFor(out)) === 'jsonl') {
    // gold-set JSONL: edited line by line, so a chair or hand-written row keeps its exact bytes
    const lines = existsSync(out) ? readGoldLines(out).lines : [];
    const m = mergeLogEntries(lines, generated, 'known-');
    const text = goldLinesText(m.lines);
    checkGoldText(out, text);
    if (!existsSync(out) || readFileSync(out, 'utf8') !== text) writeFileAtomic(out, text);
    console.log(knownItemLine(docs.length, out, m.added.length, m.updated.length, m.unchanged, m.protected, m.orphaned));
    return 0;
  }
  let existing: ReturnType<typeof loadGolden> | undefined;
  if (existsSync(out)) existing = loadGolden(out, loadOpts(values));
  const r = mergeBootstrap(existing?.queries ?? [], generated);
  const format = existing?.format ?? outputFormatFor(out);
  if (format === 'beir' || format === 'trec' || format === 'nq-csv' || format === 'nq-json') throw new UserError(`bootstrap: cannot write known-item queries into a ${format} set, expected --out *.jsonl, *.json or *.yaml`);
  const files = await renderGolden(format, r.queries, existing?.meta, out);
  for (const [p, text] of files) writeFileAtomic(p, text);
  console.log(knownItemLine(docs.length, out, r.added.length, r.updated.length, r.unchanged, r.protected, r.orphaned));
  return 0;
}

function knownItemLine(docs: number, out: string, added: number, updated: number, unchanged: number, kept: readonly string[], orphaned: readonly string[]): string {
  return (
    `golden bootstrap: ${docs} documents -> ${out}: ${added} added, ${updated} updated, ${unchanged} unchanged` +
    `${kept.length ? `, ${kept.length} left alone (reviewed or hand-written: ${kept.join(', ')})` : ''}` +
    `${orphaned.length ? `, ${orphaned.length} kept whose document is gone (${orphaned.join(', ')})` : ''}`
  );
}

function minCoec(v: string | undefined): number {
  if (v === undefined) return LOG_DEFAULTS.minCoec;
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v.trim()) || !(n > 0) || n > 100) throw new UserError(`--min-coec: expected a number above 0 (1 = clicked as often as its positions predict), got ${JSON.stringify(v)}`);
  return n;
}

async function bootstrapLogs(values: Record<string, unknown>): Promise<number> {
  const from = (values['from-feedback'] as string[]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const base = parseIntFlag('ordinal-base', values['ordinal-base'] as string | undefined, 0, 1) ?? LOG_DEFAULTS.ordinalBase;
  const r = await bootstrapFromLogs({
    from,
    ...(values['database-url'] !== undefined ? { databaseUrl: values['database-url'] as string } : {}),
    ...(values.sql !== undefined ? { sqlFile: values.sql as string } : {}),
    ...(values.out !== undefined ? { out: values.out as string } : {}),
    ...(values.judgments !== undefined ? { judgments: values.judgments as string } : {}),
    ...(values.golden !== undefined ? { golden: values.golden as string[] } : {}),
    ...(values.corpus !== undefined ? { corpus: values.corpus as string } : {}),
    minScore: parseIntFlag('min-score', values['min-score'] as string | undefined, 0, 3) ?? LOG_DEFAULTS.minScore,
    minCoec: minCoec(values['min-coec'] as string | undefined),
    minImpressions: parseIntFlag('min-impressions', values['min-impressions'] as string | undefined, 1) ?? LOG_DEFAULTS.minImpressions,
    minClicks: parseIntFlag('min-clicks', values['min-clicks'] as string | undefined, 1) ?? LOG_DEFAULTS.minClicks,
    ordinalBase: base,
    maxDocs: parseIntFlag('max-docs', values['max-docs'] as string | undefined, 1, 1000) ?? LOG_DEFAULTS.maxDocs,
  });
  console.log(logReportText(r).map(safeTerminal).join('\n'));
  return 0;
}

const num = (n: number) => n.toLocaleString('en-US');
const count = (n: number, one: string, many = `${one}s`) => `${num(n)} ${n === 1 ? one : many}`;
const names = (fs: readonly { path: string }[]) => fs.map((f) => f.path).join(', ');

/** What a bootstrap from logs did, one fact a line. */
export function logReportText(r: LogBootstrapReport): string[] {
  const s = r.summary;
  const fb = r.files.filter((f) => f.kind === 'feedback');
  const ubi = r.files.filter((f) => f.kind !== 'feedback');
  const read: string[] = [];
  if (fb.length || r.sql) read.push(`${num(s.feedbackRows)} feedback rows (${[...fb.map((f) => f.path), ...(r.sql ? [`sql: ${r.sql}`] : [])].join(', ')})`);
  if (ubi.length)
    read.push(
      `${num(s.ubiQueries)} UBI queries and ${num(s.ubiEvents)} events (${names(ubi)}): ${num(s.clicks)} clicks, ${num(s.impressions)} impressions from ${s.impressionSource === 'events' ? 'impression events' : 'query_response_hit_ids'}` +
        `${s.emptyQueries ? `, ${num(s.emptyQueries)} empty queries skipped` : ''}${s.orphanEvents ? `, ${num(s.orphanEvents)} events of no query skipped` : ''}${s.otherEvents ? `, ${num(s.otherEvents)} other events not read` : ''}`,
    );
  const lines = [`golden bootstrap --from-feedback: read ${read.join('; ')}`];
  if (r.corpus)
    lines.push(
      s.refusedRows
        ? `  corpus ${r.corpus.name} (${r.corpus.documents} documents): ${num(s.refusedRows)} of ${num(s.refusedRows + s.acceptedRows)} log entries name ${count(s.refusedIds, 'id')} no document has (${s.refusedSample.join(', ')}${s.refusedIds > s.refusedSample.length ? ', ...' : ''}): refused, left out`
        : `  corpus ${r.corpus.name} (${r.corpus.documents} documents): every id the logs name is a document`,
    );
  else lines.push('  ids not checked against a corpus (--corpus PATH refuses ids no document has)');
  lines.push(`  ${count(s.queries.length, 'logged query', 'logged queries')} with supported documents (${count(s.keptPairs, 'query-document pair')} kept of ${num(s.pairs)} with evidence): ${num(r.generated)} new to the golden set, ${num(r.asked)} it already asks`);
  if (r.golden) {
    const m = r.golden.merge;
    lines.push(
      `  ${r.golden.path}: ${m.added.length} added, ${m.updated.length} updated, ${m.unchanged} unchanged${r.golden.reviewed ? `; ${count(r.golden.reviewed, 'reviewed (chair) row')} untouched` : ''}` +
        `${m.protected.length ? `; ${count(m.protected.length, 'id')} held by other entries, not written (${m.protected.slice(0, 5).join(', ')})` : ''}` +
        `${m.orphaned.length ? `; ${count(m.orphaned.length, 'earlier bootstrap entry', 'earlier bootstrap entries')} the logs no longer support, kept (${m.orphaned.slice(0, 5).join(', ')})` : ''}` +
        `${r.golden.written ? '' : ' (file unchanged)'}`,
    );
  }
  if (r.judgments)
    lines.push(
      `  ${r.judgments.path}: ${count(r.judgments.labels, 'bootstrap label')} for ${count(r.judgments.queries, 'golden query', 'golden queries')} (${r.judgments.changed} new or changed), pending review: rankgate judge review export${r.judgments.written ? '' : ' (file unchanged)'}`,
    );
  else if (r.asked) lines.push(`  the ${r.asked} logged queries the golden set already asks give labels with --judgments FILE`);
  return lines;
}

/** `golden check` lives in src/cli/golden-check.ts (search engineer); loaded on demand so a build without it still runs. */
export async function runCheck(argv: string[], moduleUrl: URL = new URL('./golden-check.ts', import.meta.url)): Promise<number> {
  const file = fileURLToPath(moduleUrl);
  if (!existsSync(file)) throw new UserError(`golden check: not available in this build (${resolve(file)} is missing), expected the search engineer's src/cli/golden-check.ts`);
  const mod = (await import(moduleUrl.href)) as { run: (argv: string[]) => Promise<number> };
  return mod.run(argv);
}

function help(): number {
  console.log(USAGE);
  return 0;
}

export async function run(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'validate':
      return validate(rest);
    case 'convert':
      return convert(rest);
    case 'stats':
      return stats(rest);
    case 'diff':
      return diff(rest);
    case 'bootstrap':
      return bootstrap(rest);
    case 'check':
      return runCheck(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return cmd === undefined ? 2 : 0;
    default:
      throw new UserError(
        `unknown golden command '${cmd}'${didYouMean(cmd, ['validate', 'convert', 'stats', 'diff', 'bootstrap', 'check'])} (expected validate, convert, stats, diff, bootstrap or check)\n${USAGE}`,
      );
  }
}
