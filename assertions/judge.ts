/**
 * Model-graded relevance assertions (thin; logic in src/judge). Judge config comes from the
 * assertion's `config` (or env: RANKGATE_JUDGE, RANKGATE_JUDGE_MODEL, RANKGATE_JUDGE_REFRESH):
 *
 *   - type: javascript
 *     value: file://assertions/judge.ts:judged
 *     config: { mode: auto|off|similarity|bedrock|<promptfoo chat provider id, e.g. anthropic:messages:MODEL,
 *               openai:chat:MODEL, azure:chat:DEPLOYMENT, ollama:chat:MODEL, bedrock:converse:MODEL>,
 *               model: us.anthropic.claude-haiku-4-5-20251001-v1:0 (bedrock),
 *               region, endpoint, concurrency: 4, timeoutMs: 15000 (one attempt), callTimeoutMs: 30000 (one
 *               judgement, all attempts), budgetSeconds: 900 (this eval), unreachableAfter: 2, maxAttempts: 3,
 *               retries: 2, cacheDir: .rankgate/cache/judge, refresh: false, passAt: 3 }
 * (env: RANKGATE_JUDGE_TIMEOUT_MS, RANKGATE_JUDGE_CALL_TIMEOUT_MS, RANKGATE_JUDGE_BUDGET_S,
 * RANKGATE_JUDGE_UNREACHABLE_AFTER; see docs/judge.md). A dead judge ends the eval with judge errors, never a hang.
 *
 * `judged`: every top-10 result that matches no expected passage is judged (src/judge/query.ts).
 * namedScores (SUMS per promptfoo column; divide by the counters): judged_recall_at_{1,3,5,10},
 * judged_mrr, judged_ndcg_at_10, each also `_<category>`, counters n_judged and n_judged_<category>,
 * judge_errors (+ _<category>), judged_results, judged_high, judged_partial, judged_not_relevant,
 * judge_calls, judge_cache_hits, judge_input_tokens, judge_output_tokens, judge_cost_usd.
 * In `similarity` mode every key is prefixed `heuristic_` (a heuristic, labelled as such).
 * Pass semantics: the judged verdicts are recorded as metrics and do not fail the row (the row's pass is its golden
 * expectation) unless `config: { failRow: true }` (then a judged miss in the top passAt fails it). A judge ERROR
 * (no answer, a judge that cannot run) always fails the row: a broken judge is never a pass, and the report names it.
 * With the judge off the row passes with reason "judge: off" and no judged scores.
 *
 * Unknown config keys and judge settings are refused by the gate's beforeAll hook before any query (exit 2).
 * `seekerFit` (Dark Night rubric, model judges only): seeker_fit (top-1: MEETS 1, PARTLY 0.5, else 0),
 * seeker_fit_at_3 (best of the top 3), n_seeker_fit, seeker_fit_errors; only for dark_night queries
 * or retrieval_intent meet_first / console (others pass, unscored).
 * `compactness` (the docs-search promptfoo design, model judges only): mean 1-5 over the top `k` (default 3) as compactness_sum
 * with n_compactness; with failRow: true the row fails when the mean < config.min (default 3).
 */
import { createJudge, type Judge, type JudgeOptions } from '../src/judge/index.ts';
import { JUDGE_OPTION_KEYS } from '../src/judge/config.ts';
import { judgeQuery } from '../src/judge/query.ts';
import { categoryKey } from '../src/results/score.ts';
import { redactConfig, redactText } from '../src/util/redact.ts';
import { failsRow, goldenFrom, metadataFrom, outputFrom, type AssertionContext, type GradingResult } from './common.ts';

const judges = new Map<string, Promise<Judge>>();

/** One judge per distinct config per process (shares the concurrency limit, stats and model load). */
/**
 * A judge's answer, a provider's error and the reason built from them are written into the results: a key they quote
 * (a judge model told its own API key, a 401 that echoes it) is redacted first (src/util/redact.ts: every *_API_KEY
 * of the environment, the AWS secrets, the configured ones).
 */
function redacted(fn: (output: unknown, context: AssertionContext) => Promise<GradingResult>): (output: unknown, context: AssertionContext) => Promise<GradingResult> {
  return async (output, context) => {
    const r = await fn(output, context);
    return { ...r, ...(typeof r.reason === 'string' ? { reason: redactText(r.reason) } : {}), ...(r.metadata ? { metadata: redactConfig(r.metadata) } : {}) };
  };
}

export function judgeFor(config: Record<string, unknown> | undefined): Promise<Judge> {
  const opts: Record<string, unknown> = {};
  for (const k of JUDGE_OPTION_KEYS) if (config?.[k] !== undefined) opts[k] = config[k];
  const key = JSON.stringify(opts) + `|${process.env.RANKGATE_JUDGE ?? ''}|${process.env.RANKGATE_JUDGE_MODEL ?? ''}`;
  let j = judges.get(key);
  if (!j) {
    j = createJudge(opts as JudgeOptions);
    j.catch(() => judges.delete(key));
    judges.set(key, j);
  }
  return j;
}

function offResult(judge: Judge): GradingResult {
  return {
    pass: true,
    score: 1,
    reason: `${judge.label} (${judge.reason}): results not matching an expected passage are not judged (set RANKGATE_JUDGE to a chat provider id such as anthropic:messages:MODEL or openai:chat:MODEL, to bedrock with AWS configured, or to similarity)`,
    metadata: { judge: judge.label },
  };
}

/**
 * A judge that cannot run (bad mode, no model, a broken cache dir) FAILS the row's judge assertion with the reason,
 * and only that assertion: the row's strict scores stay (a thrown error would make promptfoo error the whole row).
 * The report counts these rows as "judge: FAILED on N queries (reason)"; a judged gate fails on them.
 */
export const judged = redacted(async function judged(output: unknown, context: AssertionContext): Promise<GradingResult> {
  try {
    return await judgeRow(output, context);
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    return { pass: false, score: 0, reason: `${err.name}: ${err.message}`, metadata: { judge_failed: true } };
  }
});

async function judgeRow(output: unknown, context: AssertionContext): Promise<GradingResult> {
  const judge = await judgeFor(context.config);
  if (judge.mode === 'off') return offResult(judge);
  const golden = goldenFrom(context);
  const out = outputFrom(output, context);
  const s = await judgeQuery(judge, golden, out.hits, { resolution: metadataFrom(context)?.resolution });
  if (!s) return { pass: true, score: 1, reason: `${judge.label}: no relevant reference, nothing judged (routing-only query)`, metadata: { judge: judge.label } };
  const p = s.heuristic ? 'heuristic_' : '';
  const c = categoryKey(golden.category);
  const ns: Record<string, number> = {};
  const put = (k: string, v: number, perCategory = false) => {
    ns[p + k] = v;
    if (perCategory) ns[`${p}${k}_${c}`] = v;
  };
  for (const k of ['judged_recall_at_1', 'judged_recall_at_3', 'judged_recall_at_5', 'judged_recall_at_10', 'judged_mrr', 'judged_ndcg_at_10'] as const) {
    put(k, s[k], true);
  }
  put('n_judged', 1, true);
  put('judge_errors', s.errors, true);
  put('judged_results', s.judged);
  put('judged_high', s.high);
  put('judged_partial', s.partial);
  put('judged_not_relevant', s.not_relevant);
  put('judge_calls', s.calls);
  put('judge_cache_hits', s.cache_hits);
  put('judge_input_tokens', s.input_tokens);
  put('judge_output_tokens', s.output_tokens);
  put('judge_cost_usd', s.cost_usd);
  const passAt = Number(context.config?.passAt ?? 3);
  const errs = s.items.filter((i) => i.ref === undefined && !i.verdict);
  const verdicts = s.items
    .filter((i) => i.ref === undefined)
    .map((i) => `#${i.rank} ${i.verdict ?? 'ERROR'}${i.similarity !== undefined ? `(${i.similarity.toFixed(2)})` : ''}`)
    .join(', ');
  const reason =
    (s.errors ? `JUDGE ERROR x${s.errors} (${errs[0]?.error ?? 'unknown'}) · ` : '') +
    `${judge.label} · judged best rank ${s.judged_best_rank ?? 'none'} · judged Success@3 ${s.judged_recall_at_3} · judged MRR@10 ${s.judged_mrr.toFixed(3)} · judged nDCG@10 ${s.judged_ndcg_at_10.toFixed(3)}` +
    (verdicts ? ` · verdicts: ${verdicts}` : ' · nothing to judge') +
    ` · calls ${s.calls}, cache hits ${s.cache_hits}`;
  return {
    pass: s.errors === 0 && (!failsRow(context) || (s.judged_best_rank !== null && s.judged_best_rank <= passAt)),
    score: s.judged_mrr,
    reason,
    namedScores: ns,
    metadata: { judge: judge.label, judged: s.items, heuristic: s.heuristic },
  };
}

const SEEKER_SCORE = { MEETS: 1, PARTLY: 0.5, DOES_NOT_MEET: 0 } as const;

export const seekerFit = redacted(async function seekerFit(output: unknown, context: AssertionContext): Promise<GradingResult> {
  const judge = await judgeFor(context.config);
  if (judge.mode === 'off') return offResult(judge);
  const golden = goldenFrom(context);
  const darkNight = categoryKey(golden.category) === 'dark_night' || ['meet_first', 'console'].includes(golden.retrieval_intent ?? '');
  if (!darkNight) return { pass: true, score: 1, reason: 'not a Dark Night query: seeker-fit rubric not applied' };
  if (!judge.supportsRubrics) {
    return { pass: true, score: 1, reason: `${judge.label}: the seeker-fit rubric needs a model judge; not scored`, metadata: { judge: judge.label } };
  }
  const out = outputFrom(output, context);
  const top = [...out.hits].sort((a, b) => a.rank - b.rank).slice(0, Number(context.config?.k ?? 3));
  if (!top.length) {
    return { pass: !failsRow(context), score: 0, reason: 'seeker-fit: no results to meet the seeker with', namedScores: { seeker_fit: 0, seeker_fit_at_3: 0, n_seeker_fit: 1 } };
  }
  const js = await Promise.all(top.map((h, i) => judge.seekerFit({ query: golden.query, result: h.content ?? '', rank: i + 1 })));
  const scores = js.map((j) => (j.verdict ? SEEKER_SCORE[j.verdict] : 0));
  const errors = js.filter((j) => !j.verdict).length;
  const at3 = Math.max(...scores);
  return {
    pass: errors === 0 && (!failsRow(context) || at3 >= 1),
    score: at3,
    reason: `${errors ? `JUDGE ERROR x${errors} (${js.find((j) => !j.verdict)?.error}) · ` : ''}seeker-fit (${judge.label}): ${js.map((j, i) => `#${i + 1} ${j.verdict ?? 'ERROR'}`).join(', ')}`,
    namedScores: { seeker_fit: scores[0]!, seeker_fit_at_3: at3, n_seeker_fit: 1, seeker_fit_errors: errors },
    metadata: { judge: judge.label },
  };
});

export const compactness = redacted(async function compactness(output: unknown, context: AssertionContext): Promise<GradingResult> {
  const judge = await judgeFor(context.config);
  if (judge.mode === 'off') return offResult(judge);
  if (!judge.supportsRubrics) {
    return { pass: true, score: 1, reason: `${judge.label}: the compactness rubric needs a model judge; not scored`, metadata: { judge: judge.label } };
  }
  const golden = goldenFrom(context);
  const out = outputFrom(output, context);
  const top = [...out.hits].sort((a, b) => a.rank - b.rank).slice(0, Number(context.config?.k ?? 3));
  if (!top.length) return { pass: true, score: 1, reason: 'compactness: no results, nothing graded' };
  const js = await Promise.all(top.map((h) => judge.compactness({ query: golden.query, result: h.content ?? '' })));
  const ok = js.filter((j) => j.verdict !== null).map((j) => j.verdict!);
  const errors = js.length - ok.length;
  const mean = ok.length ? ok.reduce((a, b) => a + b, 0) / ok.length : 0;
  const min = Number(context.config?.min ?? 3);
  return {
    pass: errors === 0 && (!failsRow(context) || mean >= min),
    score: (mean - 1) / 4,
    reason: `${errors ? `JUDGE ERROR x${errors} · ` : ''}compactness (1-5, ${judge.label}): ${js.map((j) => j.verdict ?? 'ERROR').join(', ')} · mean ${mean.toFixed(2)} (min ${min})`,
    namedScores: ok.length ? { compactness_sum: mean, n_compactness: 1, compactness_errors: errors } : { compactness_errors: errors },
    metadata: { judge: judge.label },
  };
});


/**
 * `answer` (the NQ evaluation spec's "LLM as judge" phase): when the service returns an answer (a module:/url:
 * service's `answer` field), the judge grades it 1-5 against the golden set's reference answer: the NQ short answer
 * (a reference's `short_answer`) or blind-test YAML `answer_contains`. namedScores answer_score (the grade),
 * n_answer, answer_score_<category> / n_answer_<category>, answer_errors; the report gives answer_score overall and per
 * category, and config/gate.yaml can floor it (`overall: { answer_score: 4.0 }`).
 * `config: { sample: N, seed: S }` grades a fixed random N of the golden selection (the spec samples 100): the N
 * query ids with the smallest sha256(seed:id) among the selection's files, the same N on every run and machine.
 * A query without a reference answer, or outside the sample, passes unscored; a service that gives no answer to a
 * sampled query passes unscored with the reason (an answer_score floor then has nothing to measure: exit 2).
 */
export const answer = redacted(async function answer(output: unknown, context: AssertionContext): Promise<GradingResult> {
  const golden = goldenFrom(context);
  const reference = golden.expected.flatMap((r) => [
    ...(typeof r.extra?.short_answer === 'string' && r.extra.short_answer.trim() ? [r.extra.short_answer] : []),
    ...(r.answer_contains ? [r.answer_contains] : []),
  ]);
  if (!reference.length) return { pass: true, score: 1, reason: 'answer: the golden query has no reference answer (NQ short_answer or answer_contains); not graded' };
  const sample = context.config?.sample;
  if (typeof sample === 'number') {
    const inSample = await sampledIds(context, sample, Number(context.config?.seed ?? 42));
    if (inSample && !inSample.has(golden.id)) return { pass: true, score: 1, reason: `answer: not in the sample of ${sample} (seed ${Number(context.config?.seed ?? 42)}); not graded` };
  }
  const out = outputFrom(output, context);
  if (typeof out.answer !== 'string' || !out.answer.trim()) return { pass: true, score: 1, reason: 'answer: the service returned no answer (an `answer` field); not graded' };
  const judge = await judgeFor(context.config);
  if (judge.mode === 'off') return offResult(judge);
  if (!judge.supportsRubrics) return { pass: true, score: 1, reason: `${judge.label}: the answer judge needs a model judge; not graded`, metadata: { judge: judge.label } };
  const j = await judge.answer({ question: golden.query, reference, answer: out.answer });
  const c = categoryKey(golden.category);
  if (j.verdict === null) {
    return { pass: false, score: 0, reason: `JUDGE ERROR (${j.error}) · answer (${judge.answerLabel})`, namedScores: { answer_errors: 1 }, metadata: { answerJudge: judge.answerLabel } };
  }
  const min = Number(context.config?.min ?? 4);
  return {
    pass: !failsRow(context) || j.verdict >= min,
    score: (j.verdict - 1) / 4,
    reason: `answer ${j.verdict}/5 (${judge.answerLabel}) against ${reference.map((r) => JSON.stringify(r)).join(', ')}`,
    namedScores: { answer_score: j.verdict, n_answer: 1, [`answer_score_${c}`]: j.verdict, [`n_answer_${c}`]: 1, answer_errors: 0 },
    metadata: { answerJudge: judge.answerLabel },
  };
});

const samples = new Map<string, Promise<Set<string> | null>>();

/** The ids of the answer sample (null when the selection's files cannot be read: then every query is graded). */
function sampledIds(context: AssertionContext, n: number, seed: number): Promise<Set<string> | null> {
  const files = (context.test?.metadata?.selection as { files?: string[] } | undefined)?.files;
  if (!Array.isArray(files) || !files.length) return Promise.resolve(null);
  const key = `${seed}|${n}|${files.join('\n')}`;
  let p = samples.get(key);
  if (!p) {
    p = (async () => {
      const { loadGolden } = await import('../src/golden/index.ts');
      const { REPO_ROOT } = await import('../src/golden/promptfoo.ts');
      const { existsSync } = await import('node:fs');
      const { isAbsolute, join } = await import('node:path');
      const { createHash } = await import('node:crypto');
      const ids: string[] = [];
      for (const f of files) {
        const path = isAbsolute(f) ? f : existsSync(f) ? f : join(REPO_ROOT, f);
        if (!existsSync(path)) return null;
        ids.push(...loadGolden(path).queries.map((q) => q.id));
      }
      const h = (id: string) => createHash('sha256').update(`${seed}:${id}`).digest('hex');
      return new Set([...new Set(ids)].sort((a, b) => (h(a) < h(b) ? -1 : 1)).slice(0, n));
    })();
    samples.set(key, p);
  }
  return p;
}
