/**
 * rankgate eval (npm run eval:search -- ...): run the promptfoo eval and write the DES-058 report.
 *
 *   npm run eval:search -- [--lang en|es|hi|all] [--category X] [--verbose] [--sweep] [--judge MODE] [--refresh-judge]
 *                          [--config FILE] [--floors config/gate.yaml] [--baseline data/eval/baseline.json]
 *                          [--out-dir data/eval/results]
 *
 * Runs `promptfoo eval` (promptfooconfig.yaml, or promptfooconfig.sweep.ts with --sweep) with the golden
 * selection in RANKGATE_LANG / RANKGATE_CATEGORY, keeps promptfoo's results JSON, and writes
 * data/eval/results/eval-{lang}-{timestamp}.json (the report) and .md (the summary), atomically.
 * With --sweep the report is the first column's, with every column's summary and seed 002's shipping
 * criteria against the first column. Exit 1 when the gate fails (first column), 2 on bad input.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { compareWithBaseline, readBaseline } from '../report/baseline.ts';
import { DEFAULT_FLOORS, applyGate, gateMessage, loadFloors } from '../report/gate.ts';
import { renderMarkdown } from '../report/markdown.ts';
import { buildReport } from '../report/report.ts';
import { readResultsFile } from '../report/results.ts';
import { shippingCriteria } from '../report/shipping.ts';

const USAGE = `usage: rankgate eval [--lang en|es|hi|all] [--category X] [--verbose] [--sweep] [--config FILE]
                     [--floors FILE] [--baseline FILE] [--out-dir data/eval/results]
                     [--judge auto|bedrock|similarity|off] [--refresh-judge]`;

const JUDGE_MODES = ['auto', 'bedrock', 'similarity', 'off'];

export const PROMPTFOO_ENV = {
  PROMPTFOO_DISABLE_TELEMETRY: '1',
  PROMPTFOO_DISABLE_UPDATE: '1',
  PROMPTFOO_DISABLE_SHARING: '1',
  PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
  PROMPTFOO_DISABLE_DEBUG_LOG: '1',
  PROMPTFOO_PASS_RATE_THRESHOLD: '0',
};

/** Path of promptfoo's CLI entry point in node_modules. */
export function promptfooBin(): string {
  const req = createRequire(import.meta.url);
  return join(dirname(req.resolve('promptfoo')), 'entrypoint.js');
}

function stamp(d = new Date()): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
}

function runPromptfoo(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [promptfooBin(), ...args], { stdio: 'inherit', env });
    child.on('error', rej);
    child.on('close', (code) => res(code ?? 1));
  });
}

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        lang: { type: 'string', default: 'en' },
        category: { type: 'string' },
        verbose: { type: 'boolean', default: false },
        sweep: { type: 'boolean', default: false },
        config: { type: 'string' },
        floors: { type: 'string' },
        baseline: { type: 'string' },
        'out-dir': { type: 'string', default: 'data/eval/results' },
        judge: { type: 'string' },
        'refresh-judge': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    throw new UserError(`${(e as Error).message}\n${USAGE}`);
  }
  const v = parsed.values;
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  const lang = v.lang!;
  if (!/^([a-z]{2}(,[a-z]{2})*|all)$/.test(lang)) throw new UserError(`--lang: expected en, es, hi (a comma list) or all, got '${lang}'`);
  if (v.judge !== undefined && !JUDGE_MODES.includes(v.judge)) {
    throw new UserError(`--judge: expected one of ${JUDGE_MODES.join(', ')}, got '${v.judge}'`);
  }
  const config = v.config ?? (v.sweep ? 'promptfooconfig.sweep.ts' : 'promptfooconfig.yaml');
  if (!existsSync(config)) throw new UserError(`${config}: no such promptfoo config (run from the repository root or pass --config)`);
  if (v.floors && !existsSync(v.floors)) throw new UserError(`${v.floors}: no such floors file`);
  const floors = v.floors ? loadFloors(v.floors) : existsSync('config/gate.yaml') ? loadFloors('config/gate.yaml') : DEFAULT_FLOORS;
  const baseline = v.baseline ? readBaseline(v.baseline) : null;

  const outDir = v['out-dir']!;
  const ts = new Date();
  const base = join(outDir, `eval-${lang.replace(/,/g, '+')}-${stamp(ts)}`);
  mkdirSync(outDir, { recursive: true });
  const raw = `${base}.promptfoo.json`;
  const env: NodeJS.ProcessEnv = {
    ...PROMPTFOO_ENV,
    PROMPTFOO_CONFIG_DIR: resolve('.promptfoo'),
    ...process.env,
    RANKGATE_LANG: lang,
    ...(v.category ? { RANKGATE_CATEGORY: v.category } : {}),
    ...(v.floors ? { RANKGATE_GATE_FLOORS: v.floors } : {}),
    // The judge assertion (assertions/judge.ts) reads these.
    ...(v.judge ? { RANKGATE_JUDGE: v.judge } : {}),
    ...(v['refresh-judge'] ? { RANKGATE_JUDGE_REFRESH: '1' } : {}),
  };
  console.error(`rankgate eval: promptfoo eval -c ${config} (lang ${lang}${v.category ? `, category ${v.category}` : ''})`);
  const code = await runPromptfoo(['eval', '-c', config, '--output', raw, '--no-cache', '--no-table'], env);
  if (!existsSync(raw)) throw new UserError(`promptfoo eval exited with code ${code} and wrote no results (${raw}); see its output above`, 2);

  const results = readResultsFile(raw);
  const first = results.columns[0];
  if (!first) throw new UserError(`${raw}: the eval produced no columns`);
  const report = buildReport(first, { language: lang, verbose: v.verbose, evalId: results.evalId, timestamp: ts.toISOString() });
  applyGate(report, floors);
  const delta = baseline ? compareWithBaseline(baseline, first, report) : null;
  const shipping = results.columns.slice(1).map((c) => shippingCriteria(first, c));
  const doc: Record<string, unknown> = { ...report, promptfoo_results: raw };
  if (results.columns.length > 1) {
    doc.columns = results.columns.map((c) => {
      const r = buildReport(c, { language: lang, evalId: results.evalId, timestamp: ts.toISOString() });
      applyGate(r, floors);
      return {
        column: c.label,
        config: r.config,
        overall_recall_at_3: r.overall_recall_at_3,
        overall_mrr_at_10: r.overall_mrr_at_10,
        ndcg_at_10: r.metrics.ndcg_at_10,
        recall_at_10: r.metrics.trec_recall_at_10,
        routing_accuracy: r.routing.accuracy,
        latency_ms: r.latency_ms,
        categories: r.categories,
        gate_passed: r.gate_passed,
      };
    });
    doc.shipping = shipping;
  }
  if (delta) doc.baseline_delta = delta;
  writeFileAtomic(`${base}.json`, JSON.stringify(doc, null, 2) + '\n');
  writeFileAtomic(`${base}.md`, renderMarkdown(report, delta, shipping));
  if (v.verbose) {
    for (const q of report.queries ?? []) {
      console.log(
        `${q.id.padEnd(24)} ${q.category.padEnd(18)} R@3 ${q.recall_at_3 ?? '-'}  MRR ${q.mrr ?? '-'}  rank ${q.best_rank ?? '-'}  ${q.bucket ?? ''}  ${q.routing ?? ''}${q.error ? `  ERROR ${q.error}` : ''}`,
      );
    }
  }
  console.log(`report: ${base}.json\nsummary: ${base}.md`);
  const msg = gateMessage(report);
  if (report.gate_passed) console.log(msg);
  else console.error(msg);
  return report.gate_passed ? 0 : 1;
}
