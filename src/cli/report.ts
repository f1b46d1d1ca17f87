/**
 * `rankgate report RESULTS.json --html report.html [--baseline BASE.json] [--title T] [--seed N]`: one
 * self-contained HTML file (charts inlined, opens offline) answering "which configuration is better, and where?":
 * per-column and per-category bars with bootstrap CIs, sweep heatmaps, latency, significance against the first
 * column or the baseline (Holm-adjusted), regressed/improved queries with their top results, and the
 * cross-validated pick-the-best estimate. Argument parsing only; the report is src/report/html.
 */
import { UserError } from '../errors.ts';
import { parseCliArgs } from './args.ts';

const USAGE = `usage: rankgate report RESULTS.json --html report.html [--baseline BASE.json] [--title TEXT] [--seed N]
  RESULTS.json   promptfoo --output JSON (one column, or a sweep)
  --html FILE    write the self-contained HTML report here (atomic write)
  --baseline F   a promptfoo results JSON of the baseline run: its first column is the reference
                 (default: the first column of RESULTS.json)
  --seed N       seed of the bootstrap CIs, randomization tests and the cross-validation (default 42)`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    { html: { type: 'string' }, baseline: { type: 'string' }, title: { type: 'string' }, seed: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UserError(`expected one RESULTS.json, got ${positionals.length ? positionals.join(' ') : 'none'}\n${USAGE}`);
  if (!values.html) throw new UserError(`--html FILE is required (where to write the report)\n${USAGE}`);
  if (values.seed !== undefined && !/^\d+$/.test(values.seed)) throw new UserError(`--seed must be a non-negative integer, got '${values.seed}'`);
  const { readResultsFile } = await import('../results/read.ts');
  const { writeHtmlReport } = await import('../report/html/index.ts');
  const file = positionals[0]!;
  const parsed = readResultsFile(file);
  if (!parsed.columns.length) throw new UserError(`${file}: the results have no columns (results.prompts is empty)`);
  const baseline = values.baseline ? readResultsFile(values.baseline) : null;
  if (baseline && !baseline.columns.length) throw new UserError(`${values.baseline}: the baseline results have no columns`);
  const t0 = Date.now();
  const { bytes, data } = writeHtmlReport(values.html, parsed, {
    title: values.title ?? `rankgate report: ${file.split('/').pop()}`,
    baseline,
    baselineFile: values.baseline ?? null,
    seed: values.seed === undefined ? 42 : Number(values.seed),
  });
  console.error(
    `rankgate report: wrote ${values.html} (${(bytes / 1024).toFixed(0)} KB, ${data.columns.length} column(s), ${data.sweep.length} sweep panel(s)) in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  return 0;
}
