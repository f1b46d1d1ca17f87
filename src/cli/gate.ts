/**
 * rankgate gate RESULTS.json [--baseline data/eval/baseline.json] [--update-baseline] [--floors config/gate.yaml]
 *                            [--column LABEL|INDEX] [--report OUT.json] [--markdown OUT.md] [--comment OUT.md]
 *
 * Reads promptfoo's `--output` JSON, builds the DES-058 report of one column (default the first), applies the
 * floors, prints the per-category table and the change against the baseline (which queries regressed,
 * which improved). Exit 0 when the gate passes, 1 when it fails, 2 on bad input.
 * --update-baseline rewrites the baseline (default data/eval/baseline.json) atomically, with the
 * configuration it reflects. --comment writes the PR comment body (used by .github/workflows/search-eval.yml).
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { baselineFrom, compareWithBaseline, readBaseline, writeBaseline, type BaselineDelta } from '../report/baseline.ts';
import { DEFAULT_FLOORS, applyGate, gateMessage, loadFloors } from '../report/gate.ts';
import { categoryTable, deltaSection, judgeSection, renderComment, renderMarkdown } from '../report/markdown.ts';
import { buildReport } from '../report/report.ts';
import { pickColumn, readResultsFile } from '../report/results.ts';

const USAGE = `usage: rankgate gate RESULTS.json [--baseline FILE] [--update-baseline] [--floors config/gate.yaml]
                     [--column LABEL|INDEX] [--report OUT.json] [--markdown OUT.md] [--comment OUT.md]`;

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        baseline: { type: 'string' },
        'update-baseline': { type: 'boolean', default: false },
        floors: { type: 'string' },
        column: { type: 'string' },
        report: { type: 'string' },
        markdown: { type: 'string' },
        comment: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    throw new UserError(`${(e as Error).message}\n${USAGE}`);
  }
  const { values: v, positionals } = parsed;
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UserError(`expected one RESULTS.json (promptfoo eval --output), got ${positionals.length}\n${USAGE}`);
  const file = positionals[0]!;
  const results = readResultsFile(file);
  const col = pickColumn(results, v.column, file);
  const floorsPath = v.floors ?? 'config/gate.yaml';
  if (v.floors && !existsSync(v.floors)) throw new UserError(`${v.floors}: no such floors file`);
  const floors = existsSync(floorsPath) ? loadFloors(floorsPath) : DEFAULT_FLOORS;
  const report = buildReport(col, { evalId: results.evalId, timestamp: results.timestamp });
  applyGate(report, floors);

  const baselinePath = v.baseline ?? 'data/eval/baseline.json';
  let delta: BaselineDelta | null = null;
  if (v.baseline && existsSync(v.baseline)) delta = compareWithBaseline(readBaseline(v.baseline), col, report);
  else if (v.baseline && !v['update-baseline']) throw new UserError(`${v.baseline}: no such baseline (write one with --update-baseline)`);

  console.log(
    `${col.label}: ${report.total_queries} queries · Recall@3 ${report.overall_recall_at_3?.toFixed(4) ?? 'n/a'} · MRR@10 ${
      report.overall_mrr_at_10?.toFixed(4) ?? 'n/a'
    } · routing ${report.routing.accuracy?.toFixed(4) ?? 'n/a'} · ${report.judge}${report.errors ? ` · ${report.errors} errors` : ''} · gate on the ${floors.metric_family ?? 'strict'} metrics`,
  );
  console.log('');
  console.log(judgeSection(report));
  console.log('');
  console.log(categoryTable(report, delta));
  console.log('');
  console.log(deltaSection(delta));
  console.log('');
  if (v.report) writeFileAtomic(v.report, JSON.stringify(report, null, 2) + '\n');
  if (v.markdown) writeFileAtomic(v.markdown, renderMarkdown(report, delta));
  if (v.comment) writeFileAtomic(v.comment, renderComment(report, delta));
  if (v['update-baseline']) {
    // A baseline from a run whose queries errored (database down, service failing) would record zeros as the
    // reference and make the next real run look like an improvement: refuse, keep the old baseline.
    const errored = col.queries.filter((q) => q.error !== null);
    if (errored.length) {
      const shown = errored.slice(0, 3).map((q) => `${q.id}: ${q.error}`).join('; ');
      throw new UserError(
        `--update-baseline: ${errored.length} of ${col.queries.length} queries of '${col.label}' errored (${shown}${errored.length > 3 ? '; ...' : ''}); ` +
          `${baselinePath} was left as it was: a baseline must come from a run without errors`,
        1,
      );
    }
    writeBaseline(baselinePath, baselineFrom(col, report));
    console.log(`baseline written: ${baselinePath} (${col.queries.length} queries, configuration of '${col.label}')`);
  }
  const msg = gateMessage(report);
  if (report.gate_passed) console.log(msg);
  else console.error(msg);
  return report.gate_passed ? 0 : 1;
}
