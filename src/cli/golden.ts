/**
 * rankgate golden validate | convert | stats | diff | bootstrap | check
 *
 * Exit codes: 0 ok; 1 a check failed (diff removed/reused ids); 2 bad input or usage (validate
 * problems, unreadable files, unknown flags).
 */
import { existsSync, statSync } from 'node:fs';
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

const USAGE = `usage: rankgate golden <command> [options]

  validate FILE|DIR...                 check golden sets (a plain folder: every set under it); one line per problem: FILE:LINE (id or #index) field: what, expected;
                                       ids must be unique across the files (or folders) named: they form one selection
  convert IN --to FORMAT [-o OUT]      FORMAT: ${OUTPUT_FORMATS.join('|')} (stdout without -o; BEIR/TREC need -o)
  stats FILE|DIR... [--json]           counts per category, language, tag, routing, slice; theme balance
  diff OLD NEW                         added/changed queries; fails (exit 1) if an id was removed or reused
  bootstrap --corpus PATH [--out FILE] known-item queries (title -> document); never touches reviewed entries
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
  const { values, positionals } = parse(argv, { corpus: { type: 'string' }, out: { type: 'string', short: 'o' } } as const);
  if (values.help) return help();
  if (positionals.length) throw new UserError(`bootstrap: unexpected argument ${positionals[0]}, expected --corpus PATH [--out FILE]`);
  if (!values.corpus) throw new UserError('bootstrap: missing --corpus PATH, expected a corpus folder or file');
  const out = values.out ?? 'datasets/golden/known-items.jsonl';
  const docs = await readKnownItemDocs(values.corpus);
  const generated = knownItemQueries(docs);
  let existing: ReturnType<typeof loadGolden> | undefined;
  if (existsSync(out)) existing = loadGolden(out, loadOpts(values));
  const r = mergeBootstrap(existing?.queries ?? [], generated);
  const format = existing?.format ?? outputFormatFor(out);
  if (format === 'beir' || format === 'trec' || format === 'nq-csv' || format === 'nq-json') throw new UserError(`bootstrap: cannot write known-item queries into a ${format} set, expected --out *.jsonl, *.json or *.yaml`);
  const files = await renderGolden(format, r.queries, existing?.meta, out);
  for (const [p, text] of files) writeFileAtomic(p, text);
  console.log(
    `golden bootstrap: ${docs.length} documents -> ${out}: ${r.added.length} added, ${r.updated.length} updated, ${r.unchanged} unchanged` +
      `${r.protected.length ? `, ${r.protected.length} left alone (reviewed or hand-written: ${r.protected.join(', ')})` : ''}` +
      `${r.orphaned.length ? `, ${r.orphaned.length} kept whose document is gone (${r.orphaned.join(', ')})` : ''}`,
  );
  return 0;
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
