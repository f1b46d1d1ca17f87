/**
 * `rankgate trec-eval [options] QRELS RUN`: trec_eval 10's command line and output, byte for byte
 * (argument parsing and file reading only; the measures live in src/metrics). The run is streamed
 * in chunks into typed arrays (src/metrics/trecfast.ts), so memory stays near the run's own size.
 */
import { closeSync, fstatSync, readSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { safeTerminalTsv } from '../util/terminal.ts';
import { suggest } from '../util/suggest.ts';
import { MeasureSpecError, parseMeasureSpecs, type MeasureRequest } from '../metrics/evaluate.ts';
import { Qrels, RunReader } from '../metrics/trecfast.ts';
import { TrecEvalError, TrecMeasureError, ZScores, atol, selectMeasures, trecEval, type TrecEvalOptions } from '../metrics/treceval.ts';
import { openRegularSync, readRegularFileSync } from '../util/regular-file.ts';

const USAGE = `usage: rankgate trec-eval [-q] [-n] [-c] [-J] [-l N] [-M N] [-N N] [-D N[.qid]] [-m MEASURE[.params]]... QRELS RUN

trec_eval 10's measures and output ("measure<TAB>qid-or-all<TAB>value", trec_eval's measure order).
RUN may be '-' (standard input).
  -q              also print every measure for every query
  -n              no summary ("all") lines
  -c              average over every query of QRELS; a query absent from RUN scores 0
                  (without -c such a query is an error, as in trec_eval 10)
  -l N            relevance level: grade >= N is relevant (default 1)
  -M N            keep only the first N ranked docs per query
  -N N            number of docs in the collection (used by utility)
  -J              judged docs only: drop unjudged docs from every ranking first
  -D N[.qid]      trec_eval's debug level; with .qid only that query is evaluated (no debug lines)
  -Z FILE         print z-scores: (value - mean) / stddev per query and measure from FILE
                  (lines 'qid measure mean stddev'; -1000000 where FILE has no entry)
  -R qrels        rel_info format (only 'qrels'); -T trec_results  results format (only 'trec_results')
  -m MEASURE      repeatable: official (default) | all_trec | set | a measure, with trec_eval's
                  parameter syntax: P.5,10  ndcg_cut.10  iprec_at_recall.0.5  ndcg.1=0,2=3
                  rbp.p=0.95  utility.1,-1,0,0  set_F.0.5  relstring.20
    measures: num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P
    relstring recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G dcg ideal_dcg ndcg ndcg_rel
    Rndcg ndcg_cut map_cut relative_P success set_P set_relative_P set_recall set_map set_F
    num_nonrel_judged_ret yaap rbp rbp_resid unj
Long options as in trec_eval, and their unique prefixes: --help --version --query_eval_wanted --measure=M
  --complete_rel_info_wanted --level_for_rel=N --nosummary --Debug_level=N --Judged_docs_only
  --Number_docs_in_coll=N --Max_retrieved_per_topic=N --Rel_info_format=F --Results_format=F
  --Output_old_results_format=X --Zscore=FILE. Parameters are read as C's atof/atol reads them (0x1p-1, 1e-1);
  NaN, infinite and past-2^53 parameters are refused.
Runs are ranked as trec_eval does: sim descending, ties by docno descending; the rank column is ignored.
Not supported: -R prefs/qrels_prefs/qrels_jg and their measures (all_prefs, *_avgjg).`;

export function readText(path: string, what: string): string {
  try {
    return readRegularFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read ${what} file '${path}': ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
}

export function readBytes(path: string, what: string): Buffer {
  try {
    return readRegularFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read ${what} file '${path}': ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
}

/**
 * Stream a run file (or standard input for '-') into a RunReader in chunks of at most 4 MB: memory
 * holds the parsed typed arrays, never the whole file.
 */
export function readRunFile(runPath: string, qrels: Qrels): RunReader {
  const reader = new RunReader(qrels, { fileName: runPath === '-' ? 'standard input' : runPath });
  let fd: number;
  try {
    fd = runPath === '-' ? 0 : openRegularSync(runPath);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read run file '${runPath}': ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  let size = 1 << 22;
  try {
    const st = fstatSync(fd);
    if (st.isFile()) size = Math.max(1, Math.min(size, st.size + 1));
  } catch {
    /* keep the default */
  }
  const chunk = Buffer.allocUnsafe(size);
  try {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') continue;
        if (code === 'EOF') break;
        throw new UserError(`cannot read run file '${runPath}': ${(e as Error).message}`);
      }
      if (n === 0) break;
      reader.push(chunk.subarray(0, n));
    }
  } finally {
    if (fd !== 0) closeSync(fd);
  }
  reader.end();
  return reader;
}

/** The legacy measure-spec parser (rankgate compare's -m). */
export function measureRequests(specs: readonly string[]): MeasureRequest[] {
  try {
    return parseMeasureSpecs(specs);
  } catch (e) {
    if (e instanceof MeasureSpecError) throw new UserError(`-m: ${e.message}`);
    throw e;
  }
}

export function relevanceLevel(s: string | undefined): number {
  if (s === undefined) return 1;
  if (!/^-?\d+$/.test(s)) throw new UserError(`-l: relevance level must be an integer, got '${s}'`);
  return Number(s);
}

function intArg(flag: string, s: string): number {
  if (!/^[+-]?\d+$/.test(s.trim())) throw new UserError(`-${flag}: expected an integer, got '${s}'`);
  return atol(s);
}

const WITH_ARG = new Set(['m', 'l', 'D', 'N', 'M', 'R', 'T', 'Z']);
const FLAGS = new Set(['h', 'v', 'q', 'c', 'n', 'J', 'o']);
/**
 * trec_eval.c's long_options, in its order: [name, takes a value, short letter]. Note trec_eval gives
 * --Output_old_results_format a required value although -o takes none.
 */
const LONG: readonly (readonly [string, boolean, string])[] = [
  ['help', false, 'h'], ['version', false, 'v'], ['query_eval_wanted', false, 'q'], ['measure', true, 'm'],
  ['complete_rel_info_wanted', false, 'c'], ['level_for_rel', true, 'l'], ['nosummary', false, 'n'],
  ['Debug_level', true, 'D'], ['Judged_docs_only', false, 'J'], ['Number_docs_in_coll', true, 'N'],
  ['Max_retrieved_per_topic', true, 'M'], ['Rel_info_format', true, 'R'], ['Results_format', true, 'T'],
  ['Output_old_results_format', true, 'o'], ['Zscore', true, 'Z'],
];

/** The long option `--name` names, as glibc's getopt_long finds it: an exact name, else a unique prefix. */
function longOption(name: string): readonly [string, boolean, string] {
  const exact = LONG.find(([n]) => n === name);
  if (exact) return exact;
  const hits = name ? LONG.filter(([n]) => n.startsWith(name)) : [];
  // glibc calls a prefix ambiguous only when its matches differ in value-taking or letter
  if (hits.length && hits.every(([, a, c]) => a === hits[0]![1] && c === hits[0]![2])) return hits[0]!;
  if (hits.length) throw new UserError(`option '--${name}' is ambiguous: it could be ${hits.map(([n]) => `--${n}`).join(' or ')}`);
  const near = suggest(name, LONG.map(([n]) => n));
  throw new UserError(`unknown option '--${name}'${near ? ` (did you mean '--${near}'?)` : ''}; see rankgate trec-eval --help`);
}

/**
 * getopt_long as trec_eval uses it: clustered flags (-qc), attached values (-l2, -mP.5), long names and their
 * unique prefixes (--nosum, --measure=P.5, --measure P.5), options after the file names, `--` ending options.
 */
function getopt(argv: string[]): { opts: [string, string][]; pos: string[] } {
  const opts: [string, string][] = [];
  const pos: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      pos.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const [full, takesValue, c] = longOption(name);
      if (takesValue) {
        const v = eq >= 0 ? a.slice(eq + 1) : argv[++i];
        if (v === undefined) throw new UserError(`option '--${full}' needs a value; see rankgate trec-eval --help`);
        opts.push([c, v]);
      } else if (eq >= 0) {
        throw new UserError(`option '--${full}' takes no value (got '${a}')`);
      } else opts.push([c, '']);
      continue;
    }
    if (a.length > 1 && a[0] === '-') {
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!;
        if (WITH_ARG.has(c)) {
          const v = j + 1 < a.length ? a.slice(j + 1) : argv[++i];
          if (v === undefined) throw new UserError(`option '-${c}' needs a value; see rankgate trec-eval --help`);
          opts.push([c, v]);
          break;
        }
        if (!FLAGS.has(c)) throw new UserError(`unknown option '-${c}'; see rankgate trec-eval --help`);
        opts.push([c, '']);
      }
      continue;
    }
    pos.push(a);
  }
  return { opts, pos };
}

export async function run(argv: string[]): Promise<number> {
  const out = evaluateArgs(argv);
  if (typeof out === 'string') {
    if (out) console.log(out);
    return 0;
  }
  // a query id with ESC or other controls must not drive the terminal or forge lines; tabs and newlines are the format
  const safe = safeTerminalTsv(out);
  await new Promise<void>((res, rej) => process.stdout.write(safe, (err) => (err ? rej(err) : res())));
  return 0;
}

/**
 * Everything `rankgate trec-eval ARGV` does except printing: returns trec_eval's stdout bytes (or
 * the help/version text as a string). Throws UserError on bad input.
 */
export function evaluateArgs(argv: string[]): Buffer | string {
  const { opts, pos } = getopt(argv);
  const specs: string[] = [];
  const o: TrecEvalOptions = { runFileName: '' };
  let help = false;
  let zPath: string | undefined;
  for (const [c, v] of opts) {
    switch (c) {
      case 'h':
        help = true;
        break;
      case 'v':
        return 'rankgate trec-eval: output compatible with trec_eval version 10.0';
      case 'q':
        o.perQuery = true;
        break;
      case 'm':
        specs.push(v);
        break;
      case 'c':
        o.complete = true;
        break;
      case 'l':
        o.relevanceLevel = intArg('l', v);
        break;
      case 'n':
        o.noSummary = true;
        break;
      case 'D': {
        const dot = v.indexOf('.');
        intArg('D', dot >= 0 ? v.slice(0, dot) : v);
        if (dot >= 0) o.onlyQuery = v.slice(dot + 1);
        break;
      }
      case 'J':
        o.judgedOnly = true;
        break;
      case 'N':
        o.numDocsInColl = intArg('N', v);
        break;
      case 'M':
        o.maxPerTopic = intArg('M', v);
        if (o.maxPerTopic < 0) throw new UserError(`-M: the number of documents to keep must be >= 0, got '${v}'`);
        break;
      case 'R':
        if (v !== 'qrels') throw new UserError(`-R: only the 'qrels' rel_info format is read (not '${v}': prefs, qrels_prefs and qrels_jg are not supported)`);
        break;
      case 'T':
        if (v !== 'trec_results') throw new UserError(`-T: the only results format is 'trec_results', got '${v}'`);
        break;
      case 'o':
        break;
      case 'Z':
        zPath = v;
        break;
    }
  }
  if (help) return USAGE;
  if (pos.length !== 2) throw new UserError(`expected QRELS and RUN, got ${pos.length} file argument(s)\n${USAGE}`);
  const [qrelsPath, runPath] = pos as [string, string];
  o.runFileName = runPath === '-' ? 'standard input' : runPath;
  let sel;
  try {
    sel = selectMeasures(specs);
  } catch (e) {
    if (e instanceof TrecMeasureError) throw new UserError(e.message.startsWith('-m ') ? e.message : `-m: ${e.message}`);
    throw e;
  }
  const qrels = Qrels.parse(readBytes(qrelsPath, 'qrels'), qrelsPath);
  if (qrels.queries.length === 0) throw new UserError(`${qrelsPath}: no judgments (the qrels file is empty)`);
  const reader = readRunFile(runPath, qrels);
  if (zPath !== undefined) {
    try {
      o.zscores = ZScores.parse(readText(zPath, 'z-score'), zPath);
    } catch (e) {
      if (e instanceof TrecMeasureError) throw new UserError(e.message);
      throw e;
    }
  }
  const parts: Buffer[] = [];
  try {
    trecEval(qrels, reader, sel, o, (s) => parts.push(Buffer.from(s, 'latin1')));
  } catch (e) {
    if (e instanceof TrecEvalError) throw new UserError(e.message);
    throw e;
  }
  return Buffer.concat(parts);
}
