/**
 * `rankgate judge agreement RESULTS.jsonl`: how far to trust the judge. On results whose relevance the golden set
 * already knows, ask the judge anyway and compare its verdicts with the golden grades.
 *
 * Items (first column, or --column): every top-10 result that matches a golden reference (its grade is known:
 * grade >= 2 -> HIGH, 1 -> PARTIAL, <= 0 -> NOT_RELEVANT), and the top 3 results of queries whose expected routing
 * is no_results (off-topic: every result is known to be NOT_RELEVANT). Each goes to the judge exactly as in an eval
 * (the relevance prompt, with the query's OTHER expected passages as context). Judge errors are counted and left
 * out of the agreement. Printed: the confusion matrix, accuracy, Cohen's linear-weighted kappa with a seeded
 * bootstrap 95% interval (src/metrics/agreement.ts), overall and per category. `--out FILE` writes the same as JSON
 * (atomically): config/gate.yaml's `judge: { agreement: FILE, min_kappa: K }` reads it before judged floors count.
 */
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { agreement, type AgreementPair, type AgreementSummary } from '../metrics/agreement.ts';
import { GoldenQuerySchema, type GoldenQuery } from '../golden/schema.ts';
import { createJudge, judgeSetupProblem, type Judge } from '../judge/index.ts';
import { resolveJudgeSpec } from '../judge/spec.ts';
import type { RelevanceVerdict } from '../judge/prompt.ts';
import { parseOutput, refMatchesHit } from '../results/score.ts';
import { pickColumn } from '../results/read.ts';
import { readResultsFile, resultRows } from '../results/stream.ts';
import type { HarnessMetadata } from '../results/types.ts';
import { parseCliArgs } from './args.ts';
import { safeTerminal } from '../util/terminal.ts';

const USAGE = `usage: rankgate judge agreement RESULTS.jsonl [--column LABEL|INDEX] [--judge SETTING] [--limit N] [--seed N]
                                 [--resamples N] [--json] [--out FILE] [--cache-dir DIR]
  Asks the judge about results whose relevance the golden set knows and reports its agreement with the golden
  grades: confusion matrix, accuracy, Cohen's linear-weighted kappa with a bootstrap 95% interval, per category.
  --judge: a judge setting as RANKGATE_JUDGE (default: RANKGATE_JUDGE, else auto); --limit N: at most N items, a
  seeded random sample (--seed, default 42); --out FILE: the report as JSON (config/gate.yaml judge.agreement);
  --cache-dir: the verdict cache (default .rankgate/cache/judge, shared with the eval's judge).
       rankgate judge pool RESULTS.jsonl [--depth 10] [--judgments FILE] [--max-cost USD] [--judge ID]
                                           labels every column's unlabelled top results (rankgate judge pool --help)
       rankgate judge review export | import ...   the review queue for people (rankgate judge review --help)`;

/** The scale of the agreement: 0 NOT_RELEVANT, 1 PARTIAL, 2 HIGH. */
export const SCALE = ['NOT_RELEVANT', 'PARTIAL', 'HIGH'] as const;
const LEVEL: Record<RelevanceVerdict, number> = { NOT_RELEVANT: 0, PARTIAL: 1, HIGH: 2 };
const gradeLevel = (grade: number) => (grade >= 2 ? 2 : grade >= 1 ? 1 : 0);

export interface AgreementItem {
  queryId: string;
  category: string;
  query: string;
  rank: number;
  result: string;
  /** The query's other expected passages, the judge's context. */
  expected: string[];
  truth: number;
}

interface RawRow {
  promptIdx?: number;
  testCase?: { metadata?: { golden?: unknown } };
  response?: { output?: unknown; metadata?: HarnessMetadata; error?: string };
}

/** The items of one column whose golden grade is known (see the header). */
export function agreementItems(rows: Iterable<RawRow>, columnIndex: number): AgreementItem[] {
  const items: AgreementItem[] = [];
  for (const row of rows) {
    if ((row.promptIdx ?? 0) !== columnIndex || row.response?.error) continue;
    const g = GoldenQuerySchema.safeParse(row.testCase?.metadata?.golden);
    if (!g.success) continue;
    const golden: GoldenQuery = g.data;
    let out;
    try {
      out = parseOutput(row.response?.output, row.response?.metadata);
    } catch {
      continue;
    }
    const hits = [...out.hits].sort((a, b) => a.rank - b.rank).slice(0, 10);
    const passages = golden.expected.map((r) => r.passage_substring).filter((s): s is string => !!s);
    if (golden.expected_routing === 'no_results' && golden.expected.length === 0) {
      for (const h of hits.slice(0, 3)) if (h.content) items.push({ queryId: golden.id, category: golden.category, query: golden.query, rank: h.rank, result: h.content, expected: [], truth: 0 });
      continue;
    }
    for (const h of hits) {
      if (!h.content) continue;
      const refs = golden.expected.filter((r) => refMatchesHit(r, h, row.response?.metadata));
      if (!refs.length) continue;
      const grade = Math.max(...refs.map((r) => r.grade));
      const own = new Set(refs.map((r) => r.passage_substring));
      items.push({ queryId: golden.id, category: golden.category, query: golden.query, rank: h.rank, result: h.content, expected: passages.filter((p) => !own.has(p)), truth: gradeLevel(grade) });
    }
  }
  return items;
}

export interface AgreementReport {
  judge: string;
  reason: string;
  items: number;
  judged: number;
  judge_errors: number;
  /** The first judge error's message (why judgements failed), when any did. */
  first_error?: string;
  scale: readonly string[];
  overall: AgreementSummary;
  categories: Record<string, AgreementSummary>;
}

/** Ask the judge about every item and compute the agreement (overall and per category). */
export async function judgeAgreement(judge: Judge, items: readonly AgreementItem[], opts: { seed?: number; resamples?: number } = {}): Promise<AgreementReport> {
  const verdicts = await Promise.all(items.map((it) => judge.relevance({ query: it.query, expected: it.expected, result: it.result, rank: it.rank })));
  const pairs: (AgreementPair & { category: string })[] = [];
  let errors = 0;
  let first: string | undefined;
  verdicts.forEach((v, i) => {
    if (!v.verdict) {
      errors++;
      first ??= v.error;
    }
    else pairs.push({ truth: items[i]!.truth, rated: LEVEL[v.verdict], category: items[i]!.category });
  });
  const k = SCALE.length;
  const categories: Record<string, AgreementSummary> = {};
  for (const c of [...new Set(pairs.map((p) => p.category))].sort()) categories[c] = agreement(pairs.filter((p) => p.category === c), k, opts);
  return { judge: judge.label, reason: judge.reason, items: items.length, judged: pairs.length, judge_errors: errors, ...(first ? { first_error: first.split('\n')[0]!.slice(0, 300) } : {}), scale: SCALE, overall: agreement(pairs, k, opts), categories };
}

const f = (x: number | null | undefined, d = 3) => (x === null || x === undefined ? '–' : x.toFixed(d));

export function agreementText(r: AgreementReport): string {
  const o = r.overall;
  const lines = [
    r.judge_errors
      ? `${r.judge} (${r.reason}) against the golden grades: judge: FAILED on ${r.judge_errors} of ${r.items} results (left out); ${r.judged} judged`
      : `${r.judge} (${r.reason}) against the golden grades: ${r.judged} of ${r.items} results judged`,
    '',
    `confusion (rows: golden, columns: judge)   ${SCALE.map((s) => s.padStart(12)).join('')}`,
    ...SCALE.map((s, i) => `  ${s.padEnd(40)}${o.confusion[i]!.map((x) => String(x).padStart(12)).join('')}`),
    '',
    `accuracy ${f(o.accuracy)} · weighted kappa (linear) ${f(o.kappa)}${o.ci95 ? ` · 95% CI [${f(o.ci95[0])}, ${f(o.ci95[1])}]` : ''} · n ${o.n}`,
    '',
    '| category | n | accuracy | weighted kappa | 95% CI |',
    '|---|---:|---:|---:|---|',
    ...Object.entries(r.categories).map(([c, s]) => `| ${c} | ${s.n} | ${f(s.accuracy)} | ${f(s.kappa)} | ${s.ci95 ? `[${f(s.ci95[0])}, ${f(s.ci95[1])}]` : '–'} |`),
    '',
    'Read it as: kappa 1 = the judge grades as the golden set does, 0 = no better than chance. Above ~0.6 the judged',
    'metrics can stand beside the strict ones; below, treat them as anecdotes (docs/judge.md).',
  ];
  // the judge's name and the golden categories: each line printed as one (src/util/terminal.ts)
  return lines.map(safeTerminal).join('\n') + '\n';
}

/** A seeded sample of at most n items (Fisher-Yates on a copy). */
function sample<T>(xs: readonly T[], n: number, seed: number): T[] {
  if (xs.length <= n) return [...xs];
  let s = seed >>> 0 || 1;
  const rnd = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 4294967296);
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a.slice(0, n);
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h' || sub === undefined) {
    console.log(USAGE);
    return sub === undefined ? 2 : 0;
  }
  // the review queue for people: src/cli/judge-review.ts
  if (sub === 'review') return (await import('./judge-review.ts')).run(rest);
  // pooled judging of every column's unlabelled top k: src/cli/judge-pool.ts
  if (sub === 'pool') return (await import('./judge-pool.ts')).run(rest);
  if (sub !== 'agreement') throw new UserError(`rankgate judge: unknown subcommand '${sub}' (valid: agreement, pool, review)\n${USAGE}`);
  const { values, positionals } = parseCliArgs(
    rest,
    {
      column: { type: 'string' },
      judge: { type: 'string' },
      limit: { type: 'string' },
      seed: { type: 'string' },
      resamples: { type: 'string' },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
      'cache-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UserError(`expected one results file, got ${positionals.length}\n${USAGE}`);
  const int = (name: string, v: string | undefined, min: number, dflt: number) => {
    if (v === undefined) return dflt;
    if (!/^\d+$/.test(v) || Number(v) < min) throw new UserError(`--${name}: expected an integer >= ${min}, got '${v}'`);
    return Number(v);
  };
  // an unknown judge setting is exit 2 before anything is read or asked (--judge named as such)
  if (values.judge !== undefined) resolveJudgeSpec(values.judge, { ...process.env, RANKGATE_JUDGE: undefined }, '--judge');
  const judgeEnv = values.judge !== undefined ? { ...process.env, RANKGATE_JUDGE: values.judge } : process.env;
  const spec = resolveJudgeSpec(undefined, judgeEnv);
  // a judge that cannot run (no API key, a refused one) is one line before anything is read (src/judge/setup.ts)
  const problem = await judgeSetupProblem(spec, values.judge !== undefined ? `--judge ${values.judge}` : spec.reason.replace(/^configured \((.*)\)$/, '$1'), { env: judgeEnv });
  if (problem) throw new UserError(problem, 2);
  const seed = int('seed', values.seed, 0, 42);
  const resamples = int('resamples', values.resamples, 0, 2000);
  const file = positionals[0]!;
  const parsed = readResultsFile(file);
  const col = pickColumn(parsed, values.column, file);
  let items = agreementItems(resultRows(file) as Iterable<RawRow>, col.index);
  if (!items.length) {
    throw new UserError(`${file}: column '${col.label}' has no result whose relevance the golden set knows (no returned result matches a graded reference, and no no_results query returned anything): nothing to compare the judge with`);
  }
  if (values.limit !== undefined) items = sample(items, int('limit', values.limit, 1, items.length), seed);
  // --judge is RANKGATE_JUDGE for this command (the one rule of src/judge/spec.ts: it wins over everything)
  const judge = await createJudge(values['cache-dir'] ? { cacheDir: values['cache-dir'] } : {}, judgeEnv);
  if (judge.mode === 'off') throw new UserError(`judge: off (${judge.reason}): set RANKGATE_JUDGE or --judge to the judge to measure`);
  const report = await judgeAgreement(judge, items, { seed, resamples });
  if (values.out) writeFileAtomic(values.out, JSON.stringify({ ...report, results: file, column: col.label, seed, resamples }, null, 2) + '\n');
  process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : agreementText(report));
  if (report.judged === 0) {
    process.stderr.write(safeTerminal(`rankgate judge agreement: every judgement failed (${report.judge_errors} judge errors${report.first_error ? `; the first: ${report.first_error}` : ''}): no agreement measured`) + '\n');
    return 2;
  }
  return 0;
}

