/**
 * `rankgate report RESULTS.jsonl --html report.html [--baseline BASE.json] [--title T] [--seed N]`: one
 * self-contained HTML file (charts inlined, opens offline) that opens with the gate's verdict (the same
 * gateColumn as `rankgate gate`, same floors file and regression baseline) and answers "which configuration is
 * better, and where?":
 * per-column and per-category bars with bootstrap CIs, sweep heatmaps, latency, significance against the first
 * column or the baseline (Holm-adjusted), regressed/improved queries with their top results, and the
 * cross-validated pick-the-best estimate. Argument parsing only; the report is src/report/html.
 */
import { existsSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { safeTerminal } from '../util/terminal.ts';
import type { ParsedResults } from '../results/read.ts';
import { parseCliArgs } from './args.ts';
import { envFlag } from '../util/env.ts';

const USAGE = `usage: rankgate report RESULTS.jsonl --html report.html [--baseline BASE.json] [--title TEXT] [--seed N]
                       [--floors config/gate.yaml] [--regression-baseline FILE] [--column LABEL|INDEX]
                       [--allow-partial] [--accept-baseline-mismatch]
       rankgate report --history --html trend.html [--floors config/gate.yaml]
                       the trend page of the baseline's git history and the scheduled runs (rankgate history --html;
                       its other options there)
  RESULTS.jsonl  promptfoo eval --output results.jsonl (what init's workflow writes) or results.json; one column,
                 or a sweep
  --html FILE    write the self-contained HTML report here (atomic write)
  --baseline F   the promptfoo results (JSONL or JSON) of the baseline run: its first column is the reference
                 (default: the gate's baseline file, config/search-baseline.json from --update-baseline, when it
                 exists: its per-query values; else the first column of RESULTS.jsonl)
  --seed N       seed of the bootstrap CIs, randomization tests and the cross-validation (default 42)
  The report opens with the verdict of \`rankgate gate\` with the same options: --floors (default config/gate.yaml,
  else the built-in floors), --regression-baseline (the gate's baseline file; default regression.baseline of the
  floors file, when it exists), --column (the column the verdict block shows; default the first), --allow-partial
  and --accept-baseline-mismatch (also RANKGATE_ALLOW_PARTIAL=1, RANKGATE_ACCEPT_BASELINE_MISMATCH=1).`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      html: { type: 'string' },
      baseline: { type: 'string' },
      title: { type: 'string' },
      seed: { type: 'string' },
      floors: { type: 'string' },
      'regression-baseline': { type: 'string' },
      column: { type: 'string' },
      'allow-partial': { type: 'boolean', default: false },
      'accept-baseline-mismatch': { type: 'boolean', default: false },
      history: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.history) {
    // the trend page (src/cli/history.ts): no results file, the history of the baseline and the scheduled runs
    if (positionals.length) throw new UserError(`--history reads the baseline's git history and the history file, not a results file (got ${positionals.join(' ')})\n${USAGE}`);
    if (!values.html) throw new UserError(`--history needs --html FILE (where to write the trend page)\n${USAGE}`);
    const { run: history } = await import('./history.ts');
    return history(['--html', values.html, ...(values.floors ? ['--floors', values.floors] : [])]);
  }
  if (positionals.length !== 1) throw new UserError(`expected one results file (RESULTS.jsonl or .json), got ${positionals.length ? positionals.join(' ') : 'none'}\n${USAGE}`);
  if (!values.html) throw new UserError(`--html FILE is required (where to write the report)\n${USAGE}`);
  if (values.seed !== undefined && !/^\d+$/.test(values.seed)) throw new UserError(`--seed must be a non-negative integer, got '${values.seed}'`);
  const { readResultsFile } = await import('../results/stream.ts');
  const { writeHtmlReport } = await import('../report/html/index.ts');
  const file = positionals[0]!;
  const parsed = readResultsFile(file);
  if (!parsed.columns.length) throw new UserError(`${file}: the results have no columns (results.prompts is empty)`);
  const baseline = values.baseline ? readResultsFile(values.baseline) : null;
  if (baseline && !baseline.columns.length) throw new UserError(`${values.baseline}: the baseline results have no columns`);
  const gate = await gateVerdicts(parsed, file, values);
  const t0 = Date.now();
  const { bytes, data } = writeHtmlReport(values.html, parsed, {
    gate,
    title: values.title ?? `rankgate report: ${file.split('/').pop()}`,
    baseline,
    baselineFile: values.baseline ?? null,
    // only the baseline a team keeps (config/search-baseline.json): its per-query values are the reference
    committedBaseline: baseline ? null : gate.baseline,
    seed: values.seed === undefined ? 42 : Number(values.seed),
  });
  console.error(
    `rankgate report: wrote ${values.html} (${(bytes / 1024).toFixed(0)} KB, ${data.columns.length} column(s), ${data.sweep.length} sweep panel(s)) in ${((Date.now() - t0) / 1000).toFixed(1)} s` +
      (data.gate ? `; verdict for '${safeTerminal(data.gate.column)}': ${data.gate.word} (exit ${data.gate.code})` : ''),
  );
  return 0;
}

/** Every column's verdict by gateColumn (src/gate/verdict.ts), with the floors and baseline `rankgate gate` would use. */
async function gateVerdicts(
  parsed: ParsedResults,
  file: string,
  v: { floors?: string; 'regression-baseline'?: string; column?: string; 'allow-partial'?: boolean; 'accept-baseline-mismatch'?: boolean },
) {
  const { DEFAULT_FLOORS, DEFAULT_REGRESSION, loadFloors } = await import('../gate/floors.ts');
  const { readBaseline } = await import('../gate/baseline.ts');
  const { gateColumn } = await import('../gate/verdict.ts');
  const { pickColumn } = await import('../results/read.ts');
  const floorsPath = v.floors ?? 'config/gate.yaml';
  if (v.floors && !existsSync(v.floors)) throw new UserError(`${v.floors}: no such floors file`);
  const loaded = existsSync(floorsPath) ? loadFloors(floorsPath) : DEFAULT_FLOORS;
  const rb = v['regression-baseline'];
  const floors = rb ? { ...loaded, regression: { ...(loaded.regression ?? DEFAULT_REGRESSION), baseline: rb } } : loaded;
  if (rb && !existsSync(rb)) throw new UserError(`--regression-baseline ${rb}: no such baseline (write one with rankgate gate RESULTS.jsonl --update-baseline)`);
  const baseline = floors.regression && existsSync(floors.regression.baseline) ? { path: floors.regression.baseline, data: readBaseline(floors.regression.baseline) } : null;
  const gated = pickColumn(parsed, v.column, file).index;
  const floorsSource = existsSync(floorsPath) ? floorsPath : "the built-in floors of the portal's DES-058 spec";
  const verdicts: ReturnType<typeof gateColumn>[] = [];
  for (const col of parsed.columns)
    verdicts.push(gateColumn(col, {
      floors,
      floorsSource: existsSync(floorsPath) ? floorsPath : 'config/gate.yaml',
      allowPartial: v['allow-partial'] || envFlag('RANKGATE_ALLOW_PARTIAL'),
      acceptMismatch: v['accept-baseline-mismatch'] || envFlag('RANKGATE_ACCEPT_BASELINE_MISMATCH'),
      // the baseline belongs to the gated column, as in `rankgate gate --column` (the eval's hook: the first)
      baseline: col.index === gated ? baseline : null,
      report: { evalId: parsed.evalId, timestamp: parsed.timestamp },
      // Judged@10 against the first column (the report's reference); the first against what the baseline recorded
      judgedReference: verdicts[0]
        ? { label: verdicts[0].column, at_10: verdicts[0].report.share_judged?.at_10 ?? null }
        : col.index === gated && baseline?.data.share_judged
          ? { label: `baseline ${baseline.path}`, at_10: baseline.data.share_judged.at_10 }
          : null,
      resultsPath: file,
    }));
  return { verdicts, gated, floors, floorsSource, baseline };
}
