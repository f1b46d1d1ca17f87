/**
 * rankgate eval (npm run eval:search -- ...): run the promptfoo eval and write the DES-058 report.
 *
 *   npm run eval:search -- [--lang en|es|hi|all] [--category X] [--verbose] [--sweep NAME] [--judge MODE] [--refresh-judge]
 *                          [--config FILE] [--floors config/gate.yaml] [--baseline data/eval/baseline.json]
 *                          [--out-dir data/eval/results]
 *
 * Runs `promptfoo eval` (promptfooconfig.yaml, or --config) with the golden selection in RANKGATE_LANG /
 * RANKGATE_CATEGORY, keeps promptfoo's results JSON, and writes
 * data/eval/results/eval-{lang}-{timestamp}.json (the report) and .md (the summary), atomically.
 * --sweep NAME (or RANKGATE_SWEEP; src/search/sweep.ts: quick, embedders, rrf, chunk, modes, rerank, full, expansion) runs the sweep's
 * columns around the config's first provider (its corpus, routing and golden set: the team's own config from
 * `rankgate init`), from a temporary copy of the config beside it (removed after the run); the report is the first
 * column's, with every column's summary and the blind-test framework's shipping criteria against the first column. Exit 1 when the gate fails (first column), 2 on bad input.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import yaml from 'js-yaml';
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { precheckYaml } from '../util/yaml.ts';
import { resolvePromptfoo, satisfies, startProblem, testedPromptfooRange, toolchainOf, type PromptfooInstall } from '../util/toolchain.ts';
import { redactFile, redactJson, redactText } from '../util/redact.ts';
import { parseCliArgs } from './args.ts';
import { expectationsAtBase, gateInputs, readAtBase, restrictToBase } from '../gate/base-ref.ts';
import { baseRefFrom, noBaseNote, refReader } from '../util/git.ts';
import { runCorpusFor } from '../gate/corpus-change.ts';
import { applyGate, type Floors } from '../gate/floors.ts';
import { renderMarkdown } from '../report/markdown.ts';
import { MEASURE_NAMES, buildReport, expansionSummary } from '../results/summary.ts';
import { readResultsFile } from '../results/stream.ts';
import { regatePathFor } from '../results/regate.ts';
import { shippingCriteria } from '../gate/shipping.ts';
import { REVIEW_ENV, reviewForGate, reviewsFromEnv } from '../review/evidence.ts';
import { EXIT_CODE_HELP, gateColumn, verdictLines } from '../gate/verdict.ts';
import { resolveJudgeSpec } from '../judge/spec.ts';
import { envFlag } from '../util/env.ts';
import { skippedEmbeddersLine, sweepGrid, sweepName, sweepNames } from '../search/sweep.ts';
import { EXPANSION_SHORTHANDS, expansionFromEnv } from '../search/expand.ts';

const USAGE = `usage: rankgate eval [--lang en|es|hi|all] [--category X] [--verbose] [--sweep NAME] [--config FILE]
                     [--floors FILE] [--baseline FILE] [--base-ref REF] [--allow-partial] [--out-dir data/eval/results]
                     [--judge auto|off|similarity|bedrock|PROVIDER_ID] [--refresh-judge] [--review FILE ...]
                     [--rerank RERANKER_ID] [--rerank-k N] [--no-rerank]
                     [--expansion ${EXPANSION_SHORTHANDS.join('|')}] [--expansion-provider PROVIDER_ID]
  --judge sets RANKGATE_JUDGE for the eval: it wins over the judge assertion's config.mode (which wins over auto);
  an unknown setting is exit 2 before any query runs.
  --expansion X  query expansion for every column of rankgate's own search (RANKGATE_EXPANSION, beats the config's
                 expansion:): golden (the golden entries' expansion: strings, fused by RRF), golden-append, rm3,
                 rewrites or hyde (a model: --expansion-provider ID, RANKGATE_EXPANSION_PROVIDER), off (docs/search.md)
  --sweep NAME   the columns of a parameter sweep around the config's first provider, also RANKGATE_SWEEP:
                 ${sweepNames().join(', ')} (docs/adopting.md, "Sweeps")
  --rerank ID    rerank the top k fused results with this reranker (cohere:rerank:MODEL, voyage:rerank:MODEL,
                 jina:rerank:MODEL, vllm:rerank:MODEL, tei:rerank, bedrock:rerank:MODEL; docs/search.md#rerankers);
                 beats the config's rerank:. With --sweep rerank: the sweep's rerankers (a comma list)
  --rerank-k N   the reranker's candidate budget (default 50); --no-rerank: no rerank stage (diagnostics)
  --review FILE  a blind review result (rankgate review import; repeatable, also RANKGATE_REVIEW): criterion 4 of the
                 shipping criteria for its pair of columns (docs/review.md)
${EXIT_CODE_HELP}`;


export const PROMPTFOO_ENV = {
  PROMPTFOO_DISABLE_TELEMETRY: '1',
  PROMPTFOO_DISABLE_UPDATE: '1',
  PROMPTFOO_DISABLE_SHARING: '1',
  PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
  PROMPTFOO_DISABLE_DEBUG_LOG: '1',
  PROMPTFOO_PASS_RATE_THRESHOLD: '0',
};

/**
 * The promptfoo `rankgate eval` runs: the one the repository's own `npx promptfoo` runs (resolved from the current
 * folder), else rankgate's own copy. One that cannot start on this Node is exit 2 (never 1), one line naming both.
 */
export function promptfooForEval(cwd = process.cwd()): PromptfooInstall {
  const pf = resolvePromptfoo(cwd);
  if (!pf) throw new UserError(`promptfoo is not installed in ${cwd} nor beside rankgate: npm i -D promptfoo${testedPromptfooRange() ? `@'${testedPromptfooRange()}'` : ''}`, 2);
  const problem = startProblem(pf);
  if (problem) throw new UserError(problem, 2);
  return pf;
}

function stamp(d = new Date()): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
}

function runPromptfoo(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((res, rej) => {
    // promptfoo's start-up telemetry agent uses an experimental undici interceptor: keep its warning off the console
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', bin, ...args], { stdio: 'inherit', env });
    child.on('error', rej);
    child.on('close', (code) => res(code ?? 1));
  });
}

export async function run(argv: string[]): Promise<number> {
  const parsed = parseCliArgs(
    argv,
    {
        lang: { type: 'string', default: 'en' },
        category: { type: 'string' },
        verbose: { type: 'boolean', default: false },
        sweep: { type: 'string' },
        config: { type: 'string' },
        floors: { type: 'string' },
        baseline: { type: 'string' },
        'base-ref': { type: 'string' },
        'out-dir': { type: 'string', default: 'data/eval/results' },
        judge: { type: 'string' },
        'refresh-judge': { type: 'boolean', default: false },
        rerank: { type: 'string' },
        'rerank-k': { type: 'string' },
        'no-rerank': { type: 'boolean', default: false },
        'allow-partial': { type: 'boolean', default: false },
        review: { type: 'string', multiple: true },
        expansion: { type: 'string' },
        'expansion-provider': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
    false,
  );
  const v = parsed.values;
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  const lang = v.lang!;
  if (!/^([a-z]{2}(,[a-z]{2})*|all)$/.test(lang)) throw new UserError(`--lang: expected en, es, hi (a comma list) or all, got '${lang}'`);
  // the judge rule (src/judge/spec.ts): --judge is RANKGATE_JUDGE for the eval; an unknown setting is exit 2 before any row
  if (v.judge !== undefined) resolveJudgeSpec(v.judge, { ...process.env, RANKGATE_JUDGE: undefined }, '--judge');
  else resolveJudgeSpec(undefined, process.env);
  // --rerank / --rerank-k / --no-rerank: RANKGATE_RERANK and RANKGATE_RERANK_K for the provider (they beat the config's
  // rerank:) and for the rerank sweep (its rerankers); checked here, before promptfoo starts
  if (v['no-rerank'] && (v.rerank !== undefined || v['rerank-k'] !== undefined)) throw new UserError('--no-rerank: not with --rerank or --rerank-k');
  if (v['no-rerank']) process.env.RANKGATE_RERANK = 'off';
  if (v.rerank !== undefined) process.env.RANKGATE_RERANK = v.rerank;
  if (v['rerank-k'] !== undefined) process.env.RANKGATE_RERANK_K = v['rerank-k'];
  if (v.rerank !== undefined || v['rerank-k'] !== undefined) {
    const { parseRerankSetting } = await import('../search/rerank-step.ts');
    if (v.rerank !== undefined) {
      for (const id of v.rerank.split(',')) parseRerankSetting(id.trim(), '--rerank');
    }
    const k = Number(v['rerank-k']);
    if (v['rerank-k'] !== undefined && !(Number.isInteger(k) && k >= 1 && k <= 1000)) throw new UserError(`--rerank-k ${v['rerank-k']}: expected an integer from 1 to 1000`);
  }
  // --expansion / --expansion-provider are RANKGATE_EXPANSION / RANKGATE_EXPANSION_PROVIDER for the eval: checked here
  const expansionEnv = {
    ...(v.expansion !== undefined ? { RANKGATE_EXPANSION: v.expansion } : {}),
    ...(v['expansion-provider'] !== undefined ? { RANKGATE_EXPANSION_PROVIDER: v['expansion-provider'] } : {}),
  };
  if (v['expansion-provider'] !== undefined && !(v.expansion ?? process.env.RANKGATE_EXPANSION)) {
    throw new UserError('--expansion-provider: says which model writes the expansions of --expansion rewrites or --expansion hyde; give one of those too');
  }
  // an unknown setting is exit 2 here; the model of rewrites/hyde may still come from the config's expansion: (the
  // provider checks that before any row)
  const envNow = { ...process.env, ...expansionEnv };
  expansionFromEnv(undefined, { ...envNow, RANKGATE_EXPANSION_PROVIDER: envNow.RANKGATE_EXPANSION_PROVIDER || 'configured:provider' });
  const sweepArg = v.sweep ?? (process.env.RANKGATE_SWEEP || undefined);
  const sweep = sweepArg === undefined ? null : sweepName(sweepArg, v.sweep !== undefined ? '--sweep' : 'RANKGATE_SWEEP');
  const baseConfig = v.config ?? 'promptfooconfig.yaml';
  if (!existsSync(baseConfig)) throw new UserError(`${baseConfig}: no such promptfoo config (run from the repository root or pass --config)`);
  // promptfoo expands YAML aliases (in .json configs too) and walks the result: refuse a bomb first, in bounded time
  if (/\.(ya?ml|json)$/i.test(baseConfig)) precheckYaml(readFileSync(baseConfig, 'utf8'), baseConfig);
  // a sweep: the grid's columns around the config's first provider, in a copy beside it (file:// paths resolve alike)
  const sweepFile = sweep ? writeSweepConfig(baseConfig, sweep) : null;
  const config = sweepFile ?? baseConfig;
  const floorsPath = v.floors ?? 'config/gate.yaml';
  if (v.baseline && !existsSync(v.baseline)) throw new UserError(`${v.baseline}: no such baseline (write one with rankgate gate RESULTS.jsonl --update-baseline)`);
  // on a pull request: the base branch's floors, baseline and golden expectations (src/gate/base-ref.ts)
  const baseRef = baseRefFrom(v['base-ref']);
  const inputs = gateInputs({ floorsPath, floorsNamed: !!v.floors, baselinePath: v.baseline, base: baseRef ? refReader(baseRef) : null });
  const floors: Floors = inputs.floors;
  const baseline = inputs.baseline;
  // criterion 4's review results, read (and checked) before the eval runs
  const reviews = v.review?.length ? v.review.map((p) => reviewForGate(p, inputs.base)) : reviewsFromEnv(process.env, inputs.base);

  // before anything is written: the promptfoo the repository runs, and whether it starts on this Node (exit 2 if not)
  const pf = promptfooForEval();
  const toolchain = toolchainOf(pf);
  const tested = testedPromptfooRange();
  const untested = tested && satisfies(pf.version, tested) !== true ? `promptfoo ${pf.version} is outside the releases rankgate is tested with (${tested})` : null;

  const outDir = v['out-dir']!;
  const ts = new Date();
  const base = join(outDir, `eval-${lang.replace(/,/g, '+')}-${stamp(ts)}`);
  mkdirSync(outDir, { recursive: true, mode: 0o755 });
  const raw = `${base}.promptfoo.json`;
  const env: NodeJS.ProcessEnv = {
    ...PROMPTFOO_ENV,
    PROMPTFOO_CONFIG_DIR: resolve('.promptfoo'),
    ...process.env,
    RANKGATE_LANG: lang,
    ...(v.category ? { RANKGATE_CATEGORY: v.category } : {}),
    ...(v.floors ? { RANKGATE_GATE_FLOORS: v.floors } : {}),
    ...(v['base-ref'] !== undefined ? { RANKGATE_BASE_REF: v['base-ref'] } : {}),
    // The verdict is rankgate eval's (printed last, below); the hook in the child only reports.
    RANKGATE_GATE: 'off',
    // The judge assertion (assertions/judge.ts) reads these.
    ...(v.judge ? { RANKGATE_JUDGE: v.judge } : {}),
    ...(v['refresh-judge'] ? { RANKGATE_JUDGE_REFRESH: '1' } : {}),
    ...(v.review?.length ? { [REVIEW_ENV]: v.review.join(',') } : {}),
    ...expansionEnv,
  };
  console.error(
    `rankgate eval: promptfoo eval -c ${sweep ? `${baseConfig} --sweep ${sweep} (${sweepColumnsOf(config)} columns)` : config} (lang ${lang}${v.category ? `, category ${v.category}` : ''}; promptfoo ${pf.version}${pf.from === 'project' ? '' : ' (rankgate\'s own)'} at ${relative(process.cwd(), pf.dir) || '.'}, Node ${toolchain.node})`,
  );
  if (untested) console.error(`rankgate eval: note: ${untested}`);
  let code: number;
  try {
    code = await runPromptfoo(pf.bin, ['eval', '-c', config, '--output', raw, '--no-cache', '--no-table'], env);
  } finally {
    if (sweepFile) rmSync(sweepFile, { force: true });
  }
  // the afterAll hook's record beside the output (src/results/regate.ts): the run's rows when promptfoo wrote none
  const record = regatePathFor([raw]);
  const source = existsSync(raw) ? raw : record && existsSync(record) ? record : null;
  if (!source) throw new UserError(`promptfoo eval exited with code ${code} and wrote no results (${raw}); see its output above`, 2);
  if (source !== raw) console.error(`rankgate eval: promptfoo wrote no ${raw}; reporting from the eval's own record ${source}`);
  else {
    // promptfoo writes the config as it loaded it (a databaseUrl with its password): redacted in place; and with the
    // process's umask (0666 under umask 0): never writable by others
    redactFile(raw);
    chmodSync(raw, statSync(raw).mode & 0o755);
  }

  let results = readResultsFile(source);
  let first = results.columns[0];
  if (!first) throw new UserError(`${raw}: the eval produced no columns`);
  const loud = [...inputs.loud];
  const baseNotes = [...inputs.notes];
  const noBase = noBaseNote(v['base-ref']);
  if (noBase) loud.push(noBase);
  if (inputs.base) {
    const exp = await expectationsAtBase(inputs.base, first, { allowPartial: v['allow-partial'] || envFlag('RANKGATE_ALLOW_PARTIAL'), baseline: inputs.baseline?.data });
    loud.push(...exp.loud);
    baseNotes.push(...exp.notes);
    const again = readAtBase(exp, {});
    if (again) {
      results = readResultsFile(source, again);
      first = results.columns[0]!;
    }
    first = restrictToBase(first, exp.added);
  }
  for (const l of loud) console.error(l);
  const verdict = gateColumn(first, {
    floors,
    floorsSource: inputs.floorsSource,
    allowPartial: v['allow-partial'] || envFlag('RANKGATE_ALLOW_PARTIAL'),
    acceptMismatch: envFlag('RANKGATE_ACCEPT_BASELINE_MISMATCH'),
    baseline,
    corpus: await runCorpusFor(first, baseline?.data),
    report: { language: lang, verbose: v.verbose, evalId: results.evalId, timestamp: ts.toISOString() },
    toolchain,
  });
  verdict.notes.unshift(...loud, ...baseNotes);
  if (untested) verdict.notes.push(untested);
  const report = verdict.report;
  const delta = verdict.delta;
  const shipping = results.columns.slice(1).map((c) => shippingCriteria(first, c, { reviews, resultsPath: source }));
  const doc: Record<string, unknown> = { ...report, measure_names: MEASURE_NAMES, exit_code: verdict.code, reasons: verdict.reasons, notes: verdict.notes, regression: verdict.regression, toolchain, promptfoo_results: raw };
  // the other columns of a sweep: their summaries (the JSON) and their failure buckets (the Markdown)
  const others = results.columns.slice(1).map((c) => buildReport(c, { language: lang, evalId: results.evalId, timestamp: ts.toISOString() }));
  if (results.columns.length > 1) {
    doc.columns = results.columns.map((c, i) => {
      const r = i === 0 ? buildReport(c, { language: lang, evalId: results.evalId, timestamp: ts.toISOString() }) : others[i - 1]!;
      applyGate(r, floors);
      return {
        column: c.label,
        config: r.config,
        total_queries: r.total_queries,
        errors: r.errors,
        measured_queries: r.measured_queries,
        overall_recall_at_3: r.overall_recall_at_3,
        overall_mrr_at_10: r.overall_mrr_at_10,
        ndcg_at_10: r.metrics.ndcg_at_10,
        // one name per measure: recall_at_10 is Success@10 everywhere in this file, trec_recall_at_10 is Recall@10
        recall_at_10: r.metrics.recall_at_10,
        trec_recall_at_10: r.metrics.trec_recall_at_10,
        routing_accuracy: r.routing.accuracy,
        latency_ms: r.latency_ms,
        categories: r.categories,
        failure_buckets: r.failure_buckets,
        ...(r.rerank ? { rerank: r.rerank } : {}),
        gate_passed: r.gate_passed,
        ...(expansionSummary(c) ? { expansion: expansionSummary(c) } : {}),
      };
    });
    doc.shipping = shipping;
  }
  if (delta) doc.baseline_delta = delta;
  writeFileAtomic(`${base}.json`, redactJson(doc) + '\n');
  writeFileAtomic(`${base}.md`, redactText(renderMarkdown(report, delta, shipping, verdict, others)));
  if (v.verbose) {
    for (const q of report.queries ?? []) {
      console.log(
        `${q.id.padEnd(24)} ${q.category.padEnd(18)} Success@3 ${q.recall_at_3 ?? '-'}  MRR ${q.mrr ?? '-'}  rank ${q.best_rank ?? '-'}  ${q.bucket ?? ''}  ${q.routing ?? ''}${q.error ? `  ERROR ${q.error}` : ''}`,
      );
    }
  }
  console.log(`report: ${base}.json\nsummary: ${base}.md`);
  const lines = verdictLines(verdict).join('\n');
  if (verdict.code === 0) console.log(lines);
  else console.error(lines);
  return verdict.code;
}

/**
 * The sweep's promptfoo config: `config` with its providers replaced by the sweep's columns around its first
 * provider (same id, its config under each column's parameters), written beside it so that every relative path
 * (file:// providers, assertions and tests, the corpus) resolves as in the original. Returns its path.
 */
export function writeSweepConfig(config: string, sweep: string): string {
  let doc: Record<string, unknown>;
  try {
    doc = yaml.load(readFileSync(config, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new UserError(`${config}: cannot read it as YAML/JSON for --sweep (${(e as Error).message.split('\n')[0]}); a sweep needs a YAML or JSON promptfoo config`);
  }
  const providers = doc && Array.isArray(doc.providers) ? doc.providers : [];
  const first = providers[0] as { id?: unknown; config?: unknown } | string | undefined;
  if (!first || typeof first !== 'object' || typeof first.id !== 'string' || !/providers\/search\.ts$/.test(first.id))
    throw new UserError(`${config}: providers[0]: --sweep varies rankgate's search provider (id: file://…/providers/search.ts), got ${JSON.stringify(typeof first === 'object' ? first?.id : first) ?? 'none'}`);
  const base = (first.config && typeof first.config === 'object' ? first.config : {}) as Record<string, unknown>;
  if (base.url || base.module)
    throw new UserError(`${config}: providers[0].config: --sweep ${sweep} varies rankgate's own index and search (corpus:); this config evaluates your service (${base.url ? 'url' : 'module'}:), whose parameters the sweep cannot set`);
  const columns = sweepGrid(sweep, base, process.env, '--sweep');
  if (/^(embedders|full)$/.test(sweep)) {
    const skipped = skippedEmbeddersLine();
    if (skipped) console.error(skipped);
  }
  const out = {
    ...doc,
    description: `${typeof doc.description === 'string' ? doc.description : 'search quality'} · sweep ${sweep} (${columns.length} configurations)`,
    providers: columns.map((c) => ({ id: first.id, label: c.label, config: c.config })),
  };
  const file = join(dirname(config), `.rankgate-sweep-${sweep}-${process.pid}.${basename(config).replace(/\.[^.]+$/, '')}.yaml`);
  writeFileAtomic(file, `# rankgate eval --sweep ${sweep} of ${config} (temporary: removed after the run)\n${yaml.dump(out, { lineWidth: 200 })}`);
  return file;
}

/** The number of providers of a sweep config written by writeSweepConfig. */
function sweepColumnsOf(file: string): number {
  const doc = yaml.load(readFileSync(file, 'utf8')) as { providers?: unknown[] };
  return doc.providers?.length ?? 0;
}
