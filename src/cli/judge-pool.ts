/**
 * `rankgate judge pool RESULTS [--depth 10] [--judgments judgments.jsonl] [--max-cost USD] [--judge ID]`: TREC pooling
 * (docs/judgments.md "Pooling"). The union of every column's top-depth results per query that nothing labels yet
 * (src/results/pool.ts: deduplicated across columns, golden-matched and already-labelled pairs never sent), each distinct
 * (query, document) pair judged ONCE by the configured judge on the 0-3 scale (grade-v1, UMBRELA's scale: src/judge),
 * written into the judgments file as `source: llm` labels with the provider, the model, the prompt version and the time
 * (sorted, atomically; the labels already there are kept, a golden reference or a chair label never overridden).
 *
 * Before any call: the judge can run (src/judge/setup.ts), the texts exist (rankgate's own index is read back for the
 * chunks the results kept only a snippet of; another service's pairs past what its rows kept are refused in one line),
 * and the cost is estimated (tokens x list price, src/judge/grade-batch.ts) and capped: over --max-cost, one line with
 * the estimate, exit 2, nothing sent. The judge's verdict cache answers what it has (a re-run sends 0 requests). Any
 * judge error: exit 2, nothing written (the verdicts that succeeded are in the cache: the next run sends only the rest).
 * Prints: pairs, calls, cache hits, cost.
 */
import { existsSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { parseCliArgs } from './args.ts';
import { readResultsFile, resultRows } from '../results/stream.ts';
import { fetchPoolTexts, planPool, textProblem } from '../results/pool.ts';
import { mergeLabels, pendingLabels, readJudgments, writeJudgments, type Judgment } from '../judgments/file.ts';
import { createJudge, judgeSetupProblem, resolveJudgeSpec, GRADE_PROMPT_VERSION, type Judge } from '../judge/index.ts';
import { estimateGrades } from '../judge/grade-batch.ts';
import { safeTerminal } from '../util/terminal.ts';

const USAGE = `usage: rankgate judge pool RESULTS.jsonl [--depth 10] [--judgments judgments.jsonl] [--max-cost USD] [--judge ID]
                             [--cache-dir DIR]
  Judges, once each, every (query, document) pair in the top --depth (default 10) of any column of RESULTS that no
  golden reference and no label of the judgments file labels yet, on the 0-3 scale (prompt grade-v1), and writes the
  grades into the judgments file (default judgments.jsonl) as source: llm labels. Later evals read them as the
  + labels figures (RANKGATE_JUDGMENTS, or rankgate gate --judgments). --max-cost: the estimated cost at list price
  must not exceed it (exit 2 before any call); --judge: a judge setting as RANKGATE_JUDGE (a model judge: a chat
  provider id such as openai:chat:MODEL, or bedrock); --cache-dir: the verdict cache (default .rankgate/cache/judge).`;

const int = (name: string, v: string | undefined, min: number, dflt: number) => {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v) || Number(v) < min) throw new UserError(`--${name}: expected an integer >= ${min}, got '${v}'`);
  return Number(v);
};

/** The provider id and the model name a label records of the judge. */
function producer(judge: Judge): { provider: string; model: string } {
  const id = judge.model ?? 'unknown';
  if (judge.mode === 'bedrock') return { provider: `bedrock:converse:${id}`, model: id };
  // a promptfoo provider id: family:type:MODEL (the model name is everything after the family)
  const parts = id.split(':');
  return { provider: id, model: parts.length > 2 ? parts.slice(2).join(':') : id };
}

const usd = (x: number | null) => (x === null ? 'n/a' : `$${x.toFixed(4)}`);
const num = (n: number) => n.toLocaleString('en-US');

export async function run(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseCliArgs(
    argv,
    {
      depth: { type: 'string' },
      judgments: { type: 'string' },
      'max-cost': { type: 'string' },
      judge: { type: 'string' },
      'cache-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UserError(`expected one results file, got ${positionals.length}\n${USAGE}`);
  const file = positionals[0]!;
  const depth = int('depth', v.depth, 1, 10);
  const maxCost = v['max-cost'] === undefined ? undefined : Number(v['max-cost']);
  if (maxCost !== undefined && !(Number.isFinite(maxCost) && maxCost >= 0)) throw new UserError(`--max-cost: expected an amount in USD >= 0 (e.g. 0.50), got '${v['max-cost']}'`);
  const out = v.judgments ?? 'judgments.jsonl';

  // the judge's verdict cache is the one cache: promptfoo's own response cache (on by default) would answer a repeated
  // request without a call while the judge counted one (promptfoo reads this when first loaded: before the setup check)
  process.env.PROMPTFOO_CACHE_ENABLED = 'false';
  // the judge first: an unknown setting, a judge that cannot run or one that grades nothing is one line before anything is read
  if (v.judge !== undefined) resolveJudgeSpec(v.judge, { ...process.env, RANKGATE_JUDGE: undefined }, '--judge');
  const judgeEnv = v.judge !== undefined ? { ...process.env, RANKGATE_JUDGE: v.judge } : process.env;
  const spec = resolveJudgeSpec(undefined, judgeEnv);
  if (spec.mode === 'off' || spec.mode === 'similarity')
    throw new UserError(
      `judge: ${spec.mode === 'off' ? 'off' : 'similarity (a heuristic)'} (${spec.reason}): pooling writes labels a model graded; set --judge or RANKGATE_JUDGE to a chat provider id (openai:chat:MODEL, anthropic:messages:MODEL, …) or bedrock`,
    );
  const problem = await judgeSetupProblem(spec, v.judge !== undefined ? `--judge ${v.judge}` : spec.reason.replace(/^configured \((.*)\)$/, '$1'), { env: judgeEnv });
  if (problem) throw new UserError(problem, 2);

  // the results (checked as the gate reads them: one line for a bad file) and the labels already there
  const parsed = readResultsFile(file);
  const existing: Judgment[] = existsSync(out) ? await readJudgments(out) : [];
  const plan = planPool(resultRows(file), existing, depth);
  // per promptIdx: the column's provider config (where its index lives)
  const configs: Record<string, unknown>[] = [];
  for (const c of parsed.columns) configs[c.index] = c.config;
  const said: string[] = [];
  const say = (l: string) => {
    said.push(l);
    console.log(safeTerminal(l));
  };
  say(`rankgate judge pool: ${file} · ${plan.columns.length} column(s) · depth ${depth} · ${spec.model} (${GRADE_PROMPT_VERSION})`);
  say(
    `  top-${depth} results: ${num(plan.results)} over ${plan.rows} measured rows of ranked queries${plan.errored ? ` (${plan.errored} errored rows left out)` : ''}${plan.routingOnly ? ` (${plan.routingOnly} rows of routing-only queries left out: no ranking figure)` : ''} → ${num(plan.golden)} labelled by the golden set, ${num(plan.labelled)} by ${out}, ${num(plan.unlabelled)} unlabelled`,
  );
  say(`  pairs: ${num(plan.pairs.length)} distinct unlabelled (query, document) pairs (${num(plan.unlabelled)} before deduplication across columns)`);
  if (!plan.pairs.length) {
    say(`  nothing to judge: every top-${depth} result has a label; ${out} ${existsSync(out) ? 'unchanged' : 'not written'} · calls 0 · cache hits 0 · cost $0.0000`);
    return 0;
  }

  // the texts: rankgate's own index read back in full; another service's kept text, or one line when it kept none
  const textLine = textProblem(plan, file);
  if (textLine) throw new UserError(textLine, 2);
  let fromIdx = 0;
  if (plan.pairs.some((p) => p.variant)) {
    const { createSearchService } = await import('../search/service.ts');
    try {
      fromIdx = await fetchPoolTexts(plan, configs, (t) =>
        createSearchService({ ...(t.databaseUrl ? { databaseUrl: t.databaseUrl } : {}), ...(t.dataDir ? { dataDir: t.dataDir } : {}), access: 'read' }),
      );
    } catch (e) {
      if (e instanceof UserError) throw new UserError(`${file}: cannot read the judged texts from the index: ${e.message}`, 2);
      throw e;
    }
  }
  const snippets = plan.pairs.filter((p) => p.snippet).length;
  say(`  texts: ${num(fromIdx)} read back from rankgate's index, ${num(plan.pairs.length - fromIdx)} as the results kept them${snippets ? ` (${snippets} only the 300-character snippet the results keep: judged as such)` : ''}`);

  // the cost before any call, capped
  const judge = await createJudge(v['cache-dir'] ? { cacheDir: v['cache-dir'] } : {}, judgeEnv);
  const inputs = plan.pairs.map((p) => ({ query: p.queryText, passage: p.text! }));
  const distinct = [...new Map(inputs.map((x) => [`${x.query}\u0000${x.passage}`, x])).values()];
  if (distinct.length < inputs.length) say(`  ${inputs.length - distinct.length} pair(s) share their query's text and passage with another pair (one text under two query ids): judged once, ${num(distinct.length)} prompts`);
  const est = estimateGrades(judge, distinct);
  const priceText = est.price ? `at $${est.price.input.toFixed(2)}/M input, $${est.price.output.toFixed(2)}/M output tokens` : `no list price for ${judge.model} (RANKGATE_JUDGE_PRICE="<in>,<out>" USD per million tokens)`;
  say(`  estimate before any call: ${num(est.calls)} call(s), ${num(est.cached)} from the cache · ~${num(est.inputTokens)} input tokens · ~${usd(est.costUsd)} ${priceText}`);
  if (maxCost !== undefined && est.calls > 0) {
    if (est.costUsd === null) throw new UserError(`--max-cost ${maxCost}: the cost of ${est.calls} call(s) cannot be estimated: ${priceText}; nothing sent`, 2);
    if (est.costUsd > maxCost + 1e-12)
      throw new UserError(`--max-cost ${maxCost}: the estimate ~${usd(est.costUsd)} for ${est.calls} call(s) (${plan.pairs.length} pairs, ${est.cached} cached; ~${num(est.inputTokens)} input tokens ${priceText}) exceeds it: nothing sent`, 2);
  }

  // each pair once; pairs whose prompt is the same (two golden queries with one text, the same passage) share one call
  const asked = new Map<string, Promise<Awaited<ReturnType<Judge['grade']>>>>();
  const verdicts = await Promise.all(
    inputs.map((x) => {
      const k = `${x.query}\u0000${x.passage}`;
      if (!asked.has(k)) asked.set(k, judge.grade(x));
      return asked.get(k)!;
    }),
  );
  const s = judge.stats;
  const failed = verdicts.map((x, i) => ({ x, p: plan.pairs[i]! })).filter(({ x }) => x.verdict === null);
  say(`  calls ${num(s.calls)} · cache hits ${num(s.cacheHits)} · errors ${num(failed.length)} · cost ~${usd(s.estimatedCostUsd)}${s.retries ? ` · retries ${s.retries}` : ''}`);
  if (failed.length) {
    const f = failed[0]!;
    throw new UserError(
      `judge: FAILED on ${failed.length} of ${plan.pairs.length} pairs (e.g. query ${f.p.query} '${f.p.doc}': ${f.x.error}); ${out} left as it was: the ${plan.pairs.length - failed.length} verdicts given are in the judge's cache, a re-run sends only the failed ones`,
      2,
    );
  }
  const time = new Date().toISOString();
  const who = producer(judge);
  const labels: Judgment[] = plan.pairs.map((p, i) => ({
    query: p.query,
    doc: p.doc,
    grade: verdicts[i]!.verdict!,
    source: 'llm',
    provider: who.provider,
    model: who.model,
    prompt: GRADE_PROMPT_VERSION,
    ...(p.chunk !== p.doc ? { chunk: p.chunk } : {}),
    time,
  }));
  const merged = mergeLabels(existing, labels);
  writeJudgments(out, merged);
  const grades = [0, 1, 2, 3].map((g) => `${g}: ${labels.filter((l) => l.grade === g).length}`).join(', ');
  say(
    `  wrote ${num(labels.length)} labels (source llm, ${who.provider}, prompt ${GRADE_PROMPT_VERSION}; grades ${grades}) to ${out}: ${num(merged.length)} labels now, ${num(pendingLabels(merged).length)} pending review`,
  );
  say(`  next: the + labels figures beside the strict ones: RANKGATE_JUDGMENTS=${out} npx promptfoo eval …, or rankgate gate ${file} --judgments ${out}`);
  return 0;
}
