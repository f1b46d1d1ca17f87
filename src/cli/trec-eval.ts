/**
 * `rankgate trec-eval [-q] [-c] [-l N] [-m MEASURE[.k,k,...]]... QRELS RUN`
 * trec_eval-compatible output over a qrels file and a TREC run (argument parsing and file reading
 * only; the measures live in src/metrics).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { UserError } from '../errors.ts';
import {
  MeasureSpecError,
  evaluateRun,
  formatEvaluation,
  parseMeasureSpecs,
  parseQrels,
  parseRun,
  type MeasureRequest,
} from '../metrics/index.ts';

const USAGE = `usage: rankgate trec-eval [-q] [-c] [-l N] [-m MEASURE[.k,k,...]]... QRELS RUN

Prints trec_eval's output ("measure<TAB>qid-or-all<TAB>value", trec_eval's measure order).
  -q            also print one line per measure per query
  -c            average over every query in QRELS; a query missing from RUN scores 0
                (without -c it is left out, with a warning on stderr)
  -l N          relevance level: grade >= N is relevant for binary measures (default 1)
  -m MEASURE    repeatable. all_trec | official (default) | num_ret num_rel num_rel_ret map
                Rprec bpref recip_rank ndcg | P recall ndcg_cut map_cut success (cut families;
                P.5,10 or P_10 picks cutoffs) | ours: mrr_cut ndcg_exp_cut judged
Runs are ranked as trec_eval does: score descending, ties by docno descending; rank column ignored.`;

export function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new UserError(`cannot read ${what} file '${path}': ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
}

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

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        q: { type: 'boolean', short: 'q' },
        c: { type: 'boolean', short: 'c' },
        l: { type: 'string', short: 'l' },
        m: { type: 'string', short: 'm', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    throw new UserError(`${(e as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 2) throw new UserError(`expected QRELS and RUN, got ${positionals.length} file argument(s)\n${USAGE}`);
  const [qrelsPath, runPath] = positionals as [string, string];
  const requests = measureRequests(values.m ?? []);
  const level = relevanceLevel(values.l);
  const qrels = parseQrels(readText(qrelsPath, 'qrels'), qrelsPath);
  const runData = parseRun(readText(runPath, 'run'), runPath);
  if (qrels.size === 0) throw new UserError(`${qrelsPath}: no judgments (the qrels file is empty)`);
  const ev = evaluateRun(qrels, runData, requests, { relevanceLevel: level, complete: !!values.c });
  if (!values.c && ev.missingFromRun.length) {
    console.error(
      `rankgate trec-eval: warning: ${ev.missingFromRun.length} qrels quer${ev.missingFromRun.length === 1 ? 'y has' : 'ies have'} no results in ${runPath} and ${ev.missingFromRun.length === 1 ? 'is' : 'are'} left out (use -c to count ${ev.missingFromRun.length === 1 ? 'it' : 'them'} as 0): ${ev.missingFromRun.slice(0, 10).join(', ')}${ev.missingFromRun.length > 10 ? ', ...' : ''}`,
    );
  }
  if (ev.perQuery.length === 0) throw new UserError(`no query has both judgments in ${qrelsPath} and results in ${runPath}`);
  process.stdout.write(formatEvaluation(ev, { perQuery: !!values.q }));
  return 0;
}
