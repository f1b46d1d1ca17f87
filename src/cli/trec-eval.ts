/**
 * `rankgate trec-eval [options] QRELS RUN`: trec_eval 10's command line and output, byte for byte
 * (argument parsing and file reading only; the measures live in src/metrics). The run is streamed
 * in chunks into typed arrays (src/metrics/trecfast.ts), so memory stays near the run's own size.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { MeasureSpecError, parseMeasureSpecs, type MeasureRequest } from '../metrics/evaluate.ts';
import { Qrels, RunReader } from '../metrics/trecfast.ts';
import { TrecEvalError, TrecMeasureError, ZScores, atol, selectMeasures, trecEval, type TrecEvalOptions } from '../metrics/treceval.ts';

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
Runs are ranked as trec_eval does: sim descending, ties by docno descending; the rank column is ignored.
Not supported: -R prefs/qrels_prefs/qrels_jg and their measures (all_prefs, *_avgjg).`;

export function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read ${what} file '${path}': ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
}

export function readBytes(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
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
    fd = runPath === '-' ? 0 : openSync(runPath, 'r');
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
const LONG: Record<string, string> = {
  help: 'h', version: 'v', query_eval_wanted: 'q', measure: 'm', complete_rel_info_wanted: 'c', level_for_rel: 'l',
  nosummary: 'n', Debug_level: 'D', Judged_docs_only: 'J', Number_docs_in_coll: 'N', Max_retrieved_per_topic: 'M',
  Rel_info_format: 'R', Results_format: 'T', Zscore: 'Z',
};

/** getopt_long as trec_eval uses it: clustered flags (-qc), attached values (-l2, -mP.5), long names. */
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
      const [name, val] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const c = LONG[name];
      if (!c) {
        const near = Object.keys(LONG).find((k) => k.toLowerCase().startsWith(name.toLowerCase().slice(0, 3)));
        throw new UserError(`unknown option '--${name}'${near ? ` (did you mean '--${near}'?)` : ''}\n${USAGE}`);
      }
      if (WITH_ARG.has(c)) {
        const v = val ?? argv[++i];
        if (v === undefined) throw new UserError(`option '--${name}' needs a value\n${USAGE}`);
        opts.push([c, v]);
      } else opts.push([c, '']);
      continue;
    }
    if (a.length > 1 && a[0] === '-') {
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!;
        if (WITH_ARG.has(c)) {
          const v = j + 1 < a.length ? a.slice(j + 1) : argv[++i];
          if (v === undefined) throw new UserError(`option '-${c}' needs a value\n${USAGE}`);
          opts.push([c, v]);
          break;
        }
        if (!FLAGS.has(c)) throw new UserError(`unknown option '-${c}'\n${USAGE}`);
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
  await new Promise<void>((res, rej) => process.stdout.write(out, (err) => (err ? rej(err) : res())));
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
