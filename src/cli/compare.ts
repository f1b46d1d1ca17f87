/**
 * `rankgate compare --qrels QRELS [-m ndcg_cut_10] [-l N] [--json] RUN_A RUN_B [RUN_C ...]`
 * Each run against the first: means, difference with a 95% bootstrap CI, paired t-test and
 * randomization p-values, Holm adjustment across comparisons, wins/ties/losses by query.
 * Argument parsing and file reading only; the statistics are `compareVectors` in src/metrics.
 */
import { basename } from 'node:path';
import { parseCliArgs } from './args.ts';
import { UserError } from '../errors.ts';
import { CompareInputError, compareVectors, type CompareVectorsResult, type NamedVector } from '../metrics/index.ts';
import { Qrels } from '../metrics/trecfast.ts';
import { TrecEvalError, TrecMeasureError, perQueryValues, selectMeasures } from '../metrics/treceval.ts';
import { readBytes, readRunFile, relevanceLevel } from './trec-eval.ts';
import { safeTerminal } from '../util/terminal.ts';

const USAGE = `usage: rankgate compare --qrels QRELS [-m MEASURE] [-l N] [--seed N] [--json] RUN_A RUN_B [RUN_C ...]
       rankgate compare --results RESULTS.json [-m METRIC] [--seed N] [--json | --markdown]
         (promptfoo results columns, each against the first; METRIC: ndcg_at_10 (default), recall_at_3, mrr,
          trec_recall_at_10, ... or routing_ok; plus the blind-test shipping criteria per column and a
          cross-validated estimate of picking the best column: chosen on k-1 folds of queries, scored on
          the held-out fold; --folds N (default 5), --repeats N (default 20); --review FILE (repeatable, or
          RANKGATE_REVIEW): a rankgate review import result, criterion 4 of its pair (docs/review.md))

Compares every run with the first (the baseline) on one measure over the queries of QRELS
(a query missing from a run scores 0, as with trec_eval -c):
  mean, diff = mean - baseline mean, 95% bootstrap CI of diff, paired t-test p, paired
  randomization p (exact for <= 20 non-tied queries), p_holm (randomization p, Holm-adjusted
  across the comparisons), wins/ties/losses by query.
  -m MEASURE    one measure, e.g. ndcg_cut_10 (default), map, P_10, recall_100, mrr_cut_10
  -l N          relevance level (default 1)
  --seed N      seed for the bootstrap and Monte-Carlo randomization (default 42)
  --json        print JSON: { measure, queries, baseline, comparisons: [{ run, mean, baseline_mean,
                diff, ci_low, ci_high, p_ttest, p_randomization, p_holm, p_ttest_holm, wins, ties, losses }] }`;

function runNames(paths: readonly string[]): string[] {
  const base = paths.map((p) => basename(p));
  return base.map((b, i) => (base.indexOf(b) !== base.lastIndexOf(b) ? paths[i]! : b));
}

function fmt(x: number, signed = false): string {
  const s = x.toFixed(4);
  return signed && x >= 0 ? `+${s}` : s;
}

export function formatComparisonTable(measure: string, res: CompareVectorsResult): string {
  const head = ['run', 'mean', 'diff', '95% CI', 'p_ttest', 'p_rand', 'p_holm', 'W/T/L'];
  const rows: string[][] = [];
  const baseMean = res.comparisons[0]?.baseline_mean ?? 0;
  rows.push([`${res.baseline} (baseline)`, fmt(baseMean), '', '', '', '', '', '']);
  for (const c of res.comparisons) {
    rows.push([
      c.run,
      fmt(c.mean),
      fmt(c.diff, true),
      `[${fmt(c.ci_low, true)}, ${fmt(c.ci_high, true)}]`,
      fmt(c.p_ttest),
      fmt(c.p_randomization),
      fmt(c.p_holm),
      `${c.wins}/${c.ties}/${c.losses}`,
    ]);
  }
  const widths = head.map((h, j) => Math.max(h.length, ...rows.map((r) => r[j]!.length)));
  const line = (r: string[]) => r.map((c, j) => (j === 0 ? c.padEnd(widths[j]!) : c.padStart(widths[j]!))).join('  ').trimEnd();
  // run labels come from the results file: each row printed as one line (src/util/terminal.ts)
  return [`${measure} over ${res.queries.length} queries`, line(head), ...rows.map(line)].map(safeTerminal).join('\n') + '\n';
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      qrels: { type: 'string' },
      m: { type: 'string', short: 'm' },
      l: { type: 'string', short: 'l' },
      seed: { type: 'string' },
      json: { type: 'boolean' },
      results: { type: 'string' },
      markdown: { type: 'boolean' },
      folds: { type: 'string' },
      repeats: { type: 'string' },
      review: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.results !== undefined) {
    // promptfoo results columns (a sweep): per-query vectors re-scored by src/results, first column = baseline.
    if (positionals.length) throw new UserError(`--results takes no run files, got ${positionals.join(' ')}\n${USAGE}`);
    if (values.seed !== undefined && !/^\d+$/.test(values.seed)) throw new UserError(`--seed must be a non-negative integer, got '${values.seed}'`);
    for (const k of ['folds', 'repeats'] as const) {
      const v = values[k];
      if (v !== undefined && (!/^\d+$/.test(v) || Number(v) < (k === 'folds' ? 2 : 1))) throw new UserError(`--${k} must be an integer >= ${k === 'folds' ? 2 : 1}, got '${v}'`);
    }
    return resultsCompare(values.results, {
      metric: values.m,
      seed: values.seed === undefined ? 42 : Number(values.seed),
      ...(values.folds !== undefined ? { folds: Number(values.folds) } : {}),
      ...(values.repeats !== undefined ? { repeats: Number(values.repeats) } : {}),
      json: values.json,
      markdown: values.markdown,
      review: values.review,
      format: formatComparisonTable,
    });
  }
  if (!values.qrels) throw new UserError(`--qrels QRELS is required\n${USAGE}`);
  if (positionals.length < 2) throw new UserError(`expected at least two run files, got ${positionals.length}\n${USAGE}`);
  // TREC runs: read and scored by the same code as `rankgate trec-eval` (src/metrics/trecfast.ts, treceval.ts)
  const spec = values.m ?? 'ndcg_cut_10';
  try {
    const sel = selectMeasures([spec]);
    if (sel.measures.every((m) => !m.def.perQuery)) throw new UserError(`-m: '${spec}' is not a per-query measure`);
  } catch (e) {
    if (e instanceof TrecMeasureError) throw new UserError(e.message.startsWith('-m ') ? e.message : `-m: ${e.message}`);
    throw e;
  }
  let seed = 42;
  if (values.seed !== undefined) {
    if (!/^\d+$/.test(values.seed)) throw new UserError(`--seed must be a non-negative integer, got '${values.seed}'`);
    seed = Number(values.seed);
  }
  const level = relevanceLevel(values.l);
  const qrels = Qrels.parse(readBytes(values.qrels, 'qrels'), values.qrels);
  if (qrels.queries.length === 0) throw new UserError(`${values.qrels}: no judgments (the qrels file is empty)`);
  const names = runNames(positionals);
  let measureName = spec;
  const vectors: NamedVector[] = positionals.map((path, i) => {
    const run = readRunFile(path, qrels);
    let r;
    try {
      r = perQueryValues(qrels, run, spec, { relevanceLevel: level, runFileName: path });
    } catch (e) {
      if (e instanceof TrecMeasureError || e instanceof TrecEvalError) throw new UserError(`${e instanceof TrecMeasureError && !e.message.startsWith('-m ') ? '-m: ' : ''}${e.message}`);
      throw e;
    }
    measureName = r.name;
    if (r.missing.length === qrels.queries.length) throw new UserError(`${path}: no query of ${values.qrels} appears in this run`);
    if (r.missing.length) {
      console.error(`rankgate compare: warning: ${path} has no results for ${r.missing.length} of ${qrels.queries.length} queries; they score 0`);
    }
    return { name: names[i]!, perQuery: r.values };
  });
  let res: CompareVectorsResult;
  try {
    res = compareVectors(vectors, { randomization: { seed }, bootstrap: { seed } });
  } catch (e) {
    if (e instanceof CompareInputError) throw new UserError(e.message);
    throw e;
  }
  if (values.json) {
    process.stdout.write(JSON.stringify({ measure: measureName, queries: res.queries.length, baseline: res.baseline, comparisons: res.comparisons }, null, 2) + '\n');
  } else {
    process.stdout.write(formatComparisonTable(measureName, res));
  }
  return 0;
}

/** The `--results` mode of `rankgate compare` (the table formatter is passed in). */
async function resultsCompare(
  file: string,
  opts: { metric?: string; seed?: number; folds?: number; repeats?: number; json?: boolean; markdown?: boolean; review?: string[]; format: (measure: string, res: CompareVectorsResult) => string },
): Promise<number> {
  const { readResultsFile } = await import('../results/stream.ts');
  const { compareResultColumns } = await import('../gate/compare.ts');
  const { comparisonMarkdown, selectionLines } = await import('../report/compare.ts');
  const { readReviewResult, reviewsFromEnv } = await import('../review/evidence.ts');
  const reviews = opts.review?.length ? opts.review.map((p) => readReviewResult(p)) : reviewsFromEnv();
  const r = compareResultColumns(readResultsFile(file), opts.metric ?? 'ndcg_at_10', { seed: opts.seed, folds: opts.folds, repeats: opts.repeats, reviews, resultsPath: file });
  if (opts.json) {
    process.stdout.write(
      JSON.stringify(
        { measure: r.metric, queries: r.significance.queries.length, baseline: r.significance.baseline, comparisons: r.significance.comparisons, selection: r.selection, shipping: r.shipping },
        null,
        2,
      ) + '\n',
    );
  } else if (opts.markdown) {
    process.stdout.write(comparisonMarkdown(r));
  } else {
    process.stdout.write(opts.format(r.metric, r.significance));
    if (r.selection) process.stdout.write('\n' + selectionLines(r.metric, r.selection).map(safeTerminal).join('\n') + '\n');
    for (const v of r.shipping) {
      process.stdout.write(`\n${safeTerminal(`blind-test shipping criteria: ${v.candidate} vs ${v.baseline}: ship ${v.ship ? 'yes' : 'no'}`)}\n`);
      for (const c of v.criteria) process.stdout.write(`${safeTerminal(`  ${c.passed === null ? '-' : c.passed ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`)}\n`);
    }
  }
  return 0;
}
