/**
 * The judged family end to end (issue 7): a REAL promptfoo eval of the harness fixture (module: service,
 * test/fixtures/harness) with the judge assertion on in bedrock mode against the fake Bedrock server on
 * 127.0.0.1 (dummy AWS credentials, endpoint from AWS_ENDPOINT_URL_BEDROCK_RUNTIME), then the DES-058
 * report / Markdown / gate over its output; and the same eval with the judge off.
 *
 * The fake's verdicts: HIGH for the d3#c300-0 text ("Purpose grows ..."), PARTIAL for d2#c300-0
 * ("Grief softens ..."), NOT_RELEVANT for everything else. Per ranked query (strict rankings in eval.test.ts):
 *
 *   query              top 10 (judged units in [])                       judged R@1 R@3 MRR
 *   fx-direct-001      d1-0* [d1-1 NR] [d1-2 NR]                          1   1   1
 *   fx-direct-002      d2-0 (partial ref) [d3-0 HIGH] d2-1* [d4-0 NR]    0   1   1/2
 *   fx-conceptual-001  [d1-0 NR] [d2-0 PARTIAL] [d3-0 HIGH]              0   1   1/3
 *   fx-conceptual-002  [d1-0 NR] [d2-0 PARTIAL]                          0   0   0
 *   fx-conceptual-003  [d3-0 HIGH]                                       1   1   1
 *   fx-emotional-001   [d2-0 PARTIAL]                                    0   0   0
 *   fx-darknight-001   d4-2* [d2-0 PARTIAL]                              1   1   1
 *   fx-beir-001        (documents) [d1 NR] d2* d3*                       0   1   1/2
 *
 * judged Recall@3 6/8 = 0.75 (strict 0.5), judged Recall@1 3/8, judged MRR@10 (1+1/2+1/3+0+1+0+1+1/2)/8 = 0.541667
 * (strict 0.354167); conceptual judged Recall@3 2/3 (strict 0), MRR (1/3+0+1)/3 = 0.444444; direct judged MRR 0.75.
 * 13 judged results (3 HIGH, 4 PARTIAL, 6 NOT_RELEVANT) = 13 Converse calls (each 100 input + 3 output tokens
 * from the fake): 1300 / 39 tokens, Haiku 4.5 at $1 / $5 per million: 0.0013 + 0.000195 = $0.001495.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE, ROOT, close, promptfooEval, rankgate, tempDir, type RunResult } from './helpers.ts';
import { derivedMetricsFor } from '../../src/results/derived.ts';
import { applyGate } from '../../src/gate/floors.ts';
import { renderMarkdown } from '../../src/report/markdown.ts';
import { buildReport } from '../../src/results/summary.ts';
import { parseResultsObject } from '../../src/results/read.ts';
import { FAKE_CREDENTIALS, FAKE_REGION, converseReply, startFakeBedrock, type FakeBedrock } from '../helpers/fake-bedrock.ts';

type Doc = { results: { prompts: { metrics: { namedScores: Record<string, number> } }[]; results: { namedScores: Record<string, number> }[] } };

describe('judged metrics beside the strict ones: promptfoo, DES-058 report, gate (fake Bedrock)', () => {
  const dir = tempDir('judge-report');
  const config = join(dir, 'promptfooconfig.yaml');
  const judgedFloors = join(dir, 'floors-judged.yaml');
  const judgedHigh = join(dir, 'floors-judged-high.yaml');
  const strictFloors = join(dir, 'floors-strict.yaml');
  const onOut = join(dir, 'on.json');
  const offOut = join(dir, 'off.json');
  const badOut = join(dir, 'bad.json');
  let fake: FakeBedrock;
  let onRun: RunResult;
  let offRun: RunResult;
  let badRun: RunResult;
  let bogusRun: RunResult;
  let keylessRun: RunResult;
  let on: Doc;
  let off: Doc;

  before(async () => {
    fake = await startFakeBedrock();
    fake.on('*', 'converse', (req) => {
      const text = JSON.stringify(req.body?.messages ?? []);
      const result = /<search_result>([\s\S]*?)<\/search_result>/.exec(text)?.[1] ?? '';
      return converseReply(result.includes('Purpose grows') ? 'HIGH' : result.includes('Grief softens') ? 'PARTIAL' : 'NOT_RELEVANT');
    });
    const file = (p: string) => `file://${p}`;
    writeFileSync(
      config,
      [
        'description: rankgate judged-report fixture',
        "prompts: ['{{query}}']",
        'providers:',
        `  - id: ${file(join(ROOT, 'providers', 'search.ts'))}`,
        '    label: fixture-hybrid',
        `    config: { module: ${join(FIXTURE, 'fixture-service.ts')}, mode: hybrid, topK: 10, chunkSize: 300 }`,
        'defaultTest:',
        '  assert:',
        `    - { type: javascript, value: ${file(join(ROOT, 'assertions', 'rank.ts'))}:rank }`,
        `    - { type: javascript, value: ${file(join(ROOT, 'assertions', 'routing.ts'))}:routing }`,
        `    - type: javascript`,
        `      value: ${file(join(ROOT, 'assertions', 'judge.ts'))}:judged`,
        `      config: { cacheDir: ${join(dir, 'judge-cache')}, retryBaseMs: 5 }`,
        `tests: ${file(join(FIXTURE, 'tests.ts'))}`,
        'env:',
        "  PROMPTFOO_PASS_RATE_THRESHOLD: '0'",
        'extensions:',
        `  - ${file(join(ROOT, 'assertions', 'gate.ts'))}:beforeAll`,
        `  - ${file(join(ROOT, 'assertions', 'gate.ts'))}:afterAll`,
        '',
      ].join('\n'),
    );
    writeFileSync(judgedFloors, 'metric_family: judged\noverall:\n  recall_at_3: 0.7\n  mrr_at_10: 0.5\n');
    writeFileSync(judgedHigh, 'metric_family: judged\noverall:\n  recall_at_3: 0.8\n');
    writeFileSync(strictFloors, 'overall:\n  recall_at_3: 0.7\n');
    const aws = {
      AWS_ACCESS_KEY_ID: FAKE_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: FAKE_CREDENTIALS.secretAccessKey,
      AWS_REGION: FAKE_REGION,
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: fake.url,
      RANKGATE_GATE_FLOORS: judgedFloors,
    };
    [onRun, offRun, badRun, bogusRun, keylessRun] = await Promise.all([
      // Each eval's promptfoo config dir inside `dir`, so it goes when the test ends.
      promptfooEval(config, onOut, { ...aws, RANKGATE_JUDGE: 'bedrock', PROMPTFOO_CONFIG_DIR: join(dir, 'pf-on') }),
      promptfooEval(config, offOut, { RANKGATE_GATE_FLOORS: judgedFloors, RANKGATE_JUDGE: 'off', PROMPTFOO_CONFIG_DIR: join(dir, 'pf-off') }),
      // a judge that is configured but cannot run (a bad price setting): every row's judge assertion fails
      promptfooEval(config, badOut, { ...aws, RANKGATE_JUDGE: 'bedrock', RANKGATE_JUDGE_PRICE: 'garbage', PROMPTFOO_CONFIG_DIR: join(dir, 'pf-bad') }),
      // a judge setting nobody knows: refused before any query
      promptfooEval(config, join(dir, 'bogus.json'), { RANKGATE_GATE_FLOORS: judgedFloors, RANKGATE_JUDGE: 'openai:chta:gpt-4.1-mini', PROMPTFOO_CONFIG_DIR: join(dir, 'pf-bogus') }),
      // a judge configured on a local OpenAI-compatible server without a key (promptfoo's provider demands one)
      promptfooEval(config, join(dir, 'keyless.json'), { RANKGATE_GATE_FLOORS: strictFloors, RANKGATE_JUDGE: 'openai:chat:M', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: '', PROMPTFOO_CONFIG_DIR: join(dir, 'pf-keyless') }),
    ]);
    on = JSON.parse(readFileSync(onOut, 'utf8'));
    off = JSON.parse(readFileSync(offOut, 'utf8'));
  });
  after(async () => {
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('judge on: promptfoo derives the judged means beside the strict ones (overall and per category)', () => {
    const s = on.results.prompts[0]!.metrics.namedScores;
    assert.equal(s.n_judged, 8);
    assert.equal(s.judge_calls, 13);
    assert.equal(s.judge_errors, 0);
    assert.ok(close(s.avg_recall_at_3!, 0.5), `strict ${s.avg_recall_at_3}`);
    assert.ok(close(s.avg_judged_recall_at_3!, 0.75), `judged ${s.avg_judged_recall_at_3}`);
    assert.ok(close(s.avg_judged_recall_at_1!, 0.375));
    assert.ok(close(s.avg_judged_mrr!, 0.541667));
    assert.ok(close(s.avg_mrr!, 0.354167));
    assert.ok(close(s.avg_judged_recall_at_3_conceptual!, 2 / 3));
    assert.ok(close(s.avg_recall_at_3_conceptual!, 0));
    assert.ok(close(s.avg_judged_mrr_direct!, 0.75));
    assert.equal(s.judge_error_rate, 0);
    assert.equal(fake.requestsFor('us.anthropic.claude-haiku-4-5-20251001-v1:0', 'converse').length, 13);
  });

  it('judge on: the afterAll gate with metric_family: judged passes on judged Recall@3 0.75 (strict is 0.5)', () => {
    assert.equal(onRun.code, 0, onRun.stderr.slice(-2000));
    assert.match(onRun.stderr, /metric family: judged/);
    assert.match(onRun.stderr, /judged Success@3 0\.7500, MRR@10 0\.5417 \(judge calls 13, cache hits 0, errors 0/);
    assert.match(onRun.stderr, /gate PASSED/);
  });

  it('judge on: the DES-058 report JSON and Markdown show strict and judged numbers, the judge label and its bill', async () => {
    const rep = join(dir, 'on-report.json');
    const md = join(dir, 'on-report.md');
    const r = await rankgate(['gate', onOut, '--floors', judgedFloors, '--report', rep, '--markdown', md]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const j = JSON.parse(readFileSync(rep, 'utf8'));
    assert.equal(j.overall_recall_at_3, 0.5);
    assert.equal(j.overall_judged_recall_at_3, 0.75);
    assert.ok(close(j.overall_judged_mrr_at_10, 0.5417));
    assert.ok(close(j.overall_mrr_at_10, 0.3542));
    assert.equal(j.categories.conceptual.recall_at_3, 0);
    assert.ok(close(j.categories.conceptual.judged_recall_at_3, 0.6667));
    assert.ok(close(j.categories.conceptual.judged_mrr_at_10, 0.4444));
    assert.equal(j.categories.direct.judged_mrr_at_10, 0.75);
    assert.equal(j.categories.technique_boundary.judged_recall_at_3, undefined, 'routing-only queries are not judged');
    assert.match(j.judge, /^judge: bedrock us\.anthropic\.claude-haiku-4-5-20251001-v1:0 \(relevance-v1\) · 8 of 10 queries judged$/);
    assert.deepEqual(
      { ...j.judge_stats, estimated_cost_usd: undefined },
      { heuristic: false, judged_queries: 8, judged_results: 13, high: 3, partial: 4, not_relevant: 6, errors: 0, calls: 13, cache_hits: 0, input_tokens: 1300, output_tokens: 39, estimated_cost_usd: undefined },
    );
    assert.ok(close(j.judge_stats.estimated_cost_usd, 0.001495, 1e-9));
    assert.ok(j.gate.some((c: { name: string; passed: boolean }) => c.name === 'overall recall_at_3 (judged) >= 0.7' && c.passed));
    const m = readFileSync(md, 'utf8');
    assert.match(m, /\| Success@3 \(DES-058 Recall@3\) \| 50\.0% \| 75\.0% \|/);
    assert.match(m, /\| MRR@10 \| 0\.354 \| 0\.542 \|/);
    assert.match(m, /calls 13 · cache hits 0 · tokens 1300 in \/ 39 out · estimated cost \$0\.0015 · judge errors 0/);
    assert.match(m, /\| conceptual \| 3 \| 0\.0% \| .* \| 66\.7% \| 0\.444 \|/);
    assert.doesNotMatch(m, /HEURISTIC/);
  });

  it('gate: judged floors above the judged numbers fail; the strict family gates the strict numbers', async () => {
    const hi = await rankgate(['gate', onOut, '--floors', judgedHigh]);
    assert.equal(hi.code, 1, hi.stdout + hi.stderr);
    assert.match(hi.stderr, /overall recall_at_3 \(judged\) = 0\.7500 is below the floor 0\.8/);
    const strict = await rankgate(['gate', onOut, '--floors', strictFloors]);
    assert.equal(strict.code, 1, strict.stdout + strict.stderr);
    assert.match(strict.stderr, /overall recall_at_3 = 0\.5000 is below the floor 0\.7/);
    assert.match(strict.stdout, /gate on the strict metrics/);
  });

  it('gate: a judge error fails a judged gate (never a silent pass) and is reported by a strict one', async () => {
    const doc = JSON.parse(readFileSync(onOut, 'utf8'));
    const row = doc.results.results.find((x: { namedScores?: Record<string, number> }) => x.namedScores?.n_judged === 1);
    row.namedScores.judge_errors = 1;
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify(doc));
    const g = await rankgate(['gate', broken, '--floors', judgedFloors]);
    assert.equal(g.code, 2, g.stdout + g.stderr);
    assert.match(g.stderr, /judge: 1 judge error\(s\).*never passes on a broken judge/);
    const s = await rankgate(['gate', broken, '--floors', strictFloors]);
    assert.equal(s.code, 1);
    assert.match(s.stderr, /note: 1 judge error\(s\) in the judged metrics \(not gated: metric_family is strict\)/);
    assert.match(s.stdout, /\*\*judge errors 1\*\*/);
  });

  it('similarity mode (keys prefixed heuristic_): the report and Markdown label the judged numbers HEURISTIC; derived means use the prefix', () => {
    // The judge-on output as similarity mode names it: every judge key prefixed heuristic_, the heuristic label.
    const doc = JSON.parse(readFileSync(onOut, 'utf8'));
    const label = 'judge: similarity (HEURISTIC: use-lite cosine, HIGH >= 0.48, PARTIAL >= 0.4)';
    for (const row of doc.results.results) {
      row.namedScores = Object.fromEntries(
        Object.entries(row.namedScores as Record<string, number>).map(([k, v]) => [/^(judged_|judge_|n_judged)/.test(k) ? `heuristic_${k}` : k, v]),
      );
      for (const c of row.gradingResult?.componentResults ?? []) if (c.metadata?.judge) c.metadata.judge = label;
    }
    const col = parseResultsObject(doc, 'heuristic.json').columns[0]!;
    const report = buildReport(col);
    assert.equal(report.overall_judged_recall_at_3, 0.75);
    assert.equal(report.judge_stats?.heuristic, true);
    assert.equal(report.judge, `${label} · 8 of 10 queries judged`);
    applyGate(report, { metric_family: 'judged', overall: { recall_at_3: 0.7 }, categories: {} });
    assert.equal(report.gate_passed, true);
    const m = renderMarkdown(report);
    assert.match(m, /\*\*HEURISTIC\*\* \(similarity thresholds, not a model judge\)/);
    assert.match(m, /\| metric \| strict \| judged, HEURISTIC \|/);
    assert.match(m, /Success@3 \(judged, HEURISTIC\)/);
    const goldens = doc.results.results.map((r: { testCase: { metadata: { golden: unknown } } }) => r.testCase.metadata.golden);
    const names = derivedMetricsFor(goldens, [], ['heuristic_']);
    assert.deepEqual(
      names.find((d) => d.name === 'avg_heuristic_judged_recall_at_3'),
      { name: 'avg_heuristic_judged_recall_at_3', value: 'heuristic_judged_recall_at_3 / heuristic_n_judged' },
    );
    assert.ok(names.some((d) => d.name === 'avg_heuristic_judged_mrr_conceptual' && d.value === 'heuristic_judged_mrr_conceptual / heuristic_n_judged_conceptual'));
    assert.ok(!names.some((d) => /^avg_judged_/.test(d.name)), 'no unprefixed judged means in similarity mode');
    assert.ok(!derivedMetricsFor(goldens).some((d) => /(^|_)judged_(recall|mrr|ndcg)|judge_error/.test(d.name)), 'no judged means with the judge off');
  });

  it('a judge whose calls failed (a dead endpoint) reads "judge: FAILED on N of M", never "N of M queries judged"; the answer judge has its own label and count', () => {
    const doc = JSON.parse(readFileSync(onOut, 'utf8'));
    const rows = doc.results.results as { namedScores: Record<string, number>; gradingResult: { componentResults: { pass: boolean; reason: string; assertion: { value: string }; metadata?: Record<string, unknown> }[] } }[];
    for (const row of rows) {
      if (typeof row.namedScores.n_judged !== 'number') continue;
      row.namedScores.judge_errors = 2;
      for (const c of row.gradingResult.componentResults)
        if (/judge\.ts:judged$/.test(c.assertion.value)) Object.assign(c, { pass: false, reason: `JUDGE ERROR x2 (judge endpoint ${fake.url} unreachable: 2 calls in a row got no answer) · ${c.reason}` });
    }
    const dead = buildReport(parseResultsObject(doc, 'dead.json').columns[0]!);
    assert.match(dead.judge, /^judge: FAILED on 8 of 10 queries \(bedrock us\.anthropic\.claude-haiku-4-5-20251001-v1:0 \(relevance-v1\)\) \(JUDGE ERROR x2 \(judge endpoint .* unreachable/);
    assert.doesNotMatch(dead.judge, /queries judged/);
    assert.match(dead.judge, /unreachable: 2 calls in a row got no answer\)\)$/, 'the error, not the verdicts after it');
    assert.match(renderMarkdown(dead), /judge: FAILED on 8 of 10 queries/);
    assert.match(renderMarkdown(dead), /Judge: \*\*judge: FAILED on \d+ of \d+ results\*\*/);
    assert.doesNotMatch(renderMarkdown(dead), /\d+ results judged/);
    // the answer judge: its own prompt label, its own count (never "judge: off" while it ran)
    const answerLabel = 'judge: openai:chat:gpt-4.1-mini (answer-v1)';
    const plain = JSON.parse(readFileSync(offOut, 'utf8'));
    const first = plain.results.results[0];
    first.namedScores = { ...first.namedScores, answer_score: 4, n_answer: 1, answer_errors: 0 };
    first.gradingResult.componentResults.push({ pass: true, score: 0.75, reason: `answer 4/5 (${answerLabel})`, assertion: { type: 'javascript', value: 'file://assertions/judge.ts:answer' }, metadata: { answerJudge: answerLabel } });
    const second = plain.results.results[1];
    second.gradingResult.componentResults.push({ pass: false, score: 0, reason: `JUDGE ERROR (timeout) · answer (${answerLabel})`, assertion: { type: 'javascript', value: 'file://assertions/judge.ts:answer' }, metadata: { answerJudge: answerLabel } });
    const answered = buildReport(parseResultsObject(plain, 'answer.json').columns[0]!);
    assert.equal(answered.judge, 'answer judge: FAILED on 1 of 10 queries (JUDGE ERROR (timeout) · answer (judge: openai:chat:gpt-4.1-mini (answer-v1)))');
    second.gradingResult.componentResults.pop();
    assert.equal(buildReport(parseResultsObject(plain, 'answer.json').columns[0]!).judge, `answer ${answerLabel} · 1 of 10 answers graded`);
  });

  it('an unknown judge setting is exit 2 before any query, in one line with a did-you-mean (never a silent "judge: off")', () => {
    assert.equal(bogusRun.code, 2, bogusRun.stderr.slice(-2000));
    assert.match(bogusRun.stderr, /rankgate gate ERROR \(exit 2\): .*judge mode "openai:chta:gpt-4\.1-mini" \(RANKGATE_JUDGE\).*did you mean 'openai:chat:gpt-4\.1-mini'\?/);
    assert.doesNotMatch(bogusRun.stderr, /\n\s+at /, 'no stack trace');
    assert.doesNotMatch(bogusRun.stderr + bogusRun.stdout, /fx-direct-001|Evaluating/, 'no query ran');
  });

  it('a configured judge that cannot run (no API key) is exit 2 before any row, in one line naming the variable to set', () => {
    assert.equal(keylessRun.code, 2, keylessRun.stderr.slice(-2000));
    assert.match(
      keylessRun.stderr,
      /rankgate gate ERROR \(exit 2\): judge openai:chat:M \(RANKGATE_JUDGE=openai:chat:M\) cannot run: no API key: set OPENAI_API_KEY \(a local server that checks no key still needs one for promptfoo's provider: OPENAI_API_KEY=dummy; docs\/judge\.md\)\n/,
    );
    assert.doesNotMatch(keylessRun.stderr, /\n\s+at /, 'no stack trace');
    assert.doesNotMatch(keylessRun.stderr + keylessRun.stdout, /fx-direct-001|Evaluating|API key is not set|judged (R|Success)@3/, 'no row ran, no judged figure');
  });

  it('the eval says which judge it picked and why, in its first lines', () => {
    assert.match(onRun.stderr, /rankgate: judge: bedrock us\.anthropic\.claude-haiku-4-5-20251001-v1:0 \(configured \(RANKGATE_JUDGE=bedrock\)\)/);
    assert.match(offRun.stderr, /rankgate: judge: off \(configured \(RANKGATE_JUDGE=off\)\)/);
  });

  it('a judge that cannot run (bad setting) is "judge: FAILED", not "judge: off", and fails a judged gate (exit 2: nothing judged)', async () => {
    assert.equal(badRun.code, 2, badRun.stderr.slice(-2000));
    assert.match(badRun.stderr, /no judged scores \(judge: FAILED on 10 of 10 queries \(UserError: RANKGATE_JUDGE_PRICE="garbage"/);
    const rep = join(dir, 'bad-report.json');
    const r = await rankgate(['gate', badOut, '--floors', strictFloors, '--report', rep]);
    const rows = JSON.parse(readFileSync(badOut, 'utf8')).results.results as { namedScores?: Record<string, number>; gradingResult?: { componentResults?: { pass: boolean; reason: string }[] } }[];
    assert.ok(rows.every((x) => typeof x.namedScores?.n_routing === 'number'), 'the failed judge leaves its rows their strict scores');
    assert.ok(rows.every((x) => x.gradingResult?.componentResults?.some((c) => !c.pass && /^UserError: RANKGATE_JUDGE_PRICE="garbage"/.test(c.reason))), 'only the judge assertion fails, with the reason');
    assert.equal(r.code, 1, 'the strict floors fail on their own (Recall@3 below 0.8)');
    assert.match(r.stderr, /note: judge: FAILED on 10 of 10 queries .*\(not gated: metric_family is strict\)/);
    assert.match(JSON.parse(readFileSync(rep, 'utf8')).judge, /^judge: FAILED on 10 of 10 queries/);
  });

  it('judge off: no judged means, the report says "judge: off" plainly and a judged gate fails with a clear message', async () => {
    const s = off.results.prompts[0]!.metrics.namedScores;
    assert.equal(s.n_judged, undefined);
    assert.equal(s.avg_judged_recall_at_3, undefined, 'no judged derived metrics (they would read 0) with the judge off');
    assert.ok(close(s.avg_recall_at_3!, 0.5));
    assert.equal(offRun.code, 2, offRun.stderr.slice(-2000));
    assert.match(offRun.stderr, /metric_family: judged, but the results have no judged scores \(judge: off\)/);
    const rep = join(dir, 'off-report.json');
    const md = join(dir, 'off-report.md');
    const r = await rankgate(['gate', offOut, '--floors', judgedFloors, '--report', rep, '--markdown', md]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no judged scores \(judge: off\)/);
    const j = JSON.parse(readFileSync(rep, 'utf8'));
    assert.equal(j.judge, 'judge: off');
    assert.equal(j.overall_judged_recall_at_3, null);
    assert.equal(j.judge_stats, null);
    const m = readFileSync(md, 'utf8');
    assert.match(m, /judge: off: strict metrics only/);
    assert.doesNotMatch(m, /\(judged\)/);
    const strict = await rankgate(['gate', offOut, '--floors', strictFloors]);
    assert.match(strict.stderr, /overall recall_at_3 = 0\.5000 is below the floor 0\.7/);
    assert.doesNotMatch(strict.stderr, /judged scores/);
  });
});
