/**
 * src/util/terminal.ts: user strings reach a terminal as one line without escapes; and the places that print them
 * (verdict lines, golden problems and stats) use it, so a golden category or column label holding
 * "\nrankgate gate PASSED (exit 0)" or ANSI codes cannot forge a verdict line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeTerminal, safeTerminalEntry, safeTerminalLines } from '../../src/util/terminal.ts';
import { formatStats, goldenStats } from '../../src/golden/stats.ts';
import { formatProblem, showShape } from '../../src/golden/problems.ts';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';

const FORGED = 'howto\nrankgate gate PASSED (exit 0) for \u001b[32mall\u001b[0m\r\u009b2K\u202e';

test('safeTerminal escapes newlines, CR, ESC, C1 and bidi controls; plain text is unchanged', () => {
  assert.equal(safeTerminal('plain – text ✓ ü'), 'plain – text ✓ ü');
  const s = safeTerminal(FORGED);
  assert.equal(s, 'howto\\nrankgate gate PASSED (exit 0) for \\u001b[32mall\\u001b[0m\\r\\u009b2K\\u202e');
  assert.doesNotMatch(s, /[\u0000-\u001f\u007f-\u009f\u202e]/);
  assert.equal(safeTerminalLines('a\nb\u001b'), 'a\nb\\u001b');
  assert.equal(safeTerminalEntry('reason\n    table row\nrankgate gate PASSED'), 'reason\n    table row\\nrankgate gate PASSED', 'only indented continuation lines are kept');
});

test('golden stats and problems print a forged category, id or value on its own line, escaped', () => {
  const q = GoldenQuerySchema.parse({ id: 'q1', query: 'x', language: 'en', category: FORGED, expected: [{ path: 'a.md', grade: 1, relevant: true }] });
  const text = formatStats(goldenStats([q]), 'set');
  for (const line of text.split('\n')) assert.doesNotMatch(line, /^rankgate gate/);
  assert.doesNotMatch(text, /\u001b/);
  const line = formatProblem({ file: 'f\u001b[2J.yaml', entry: FORGED, field: 'category', message: `bad ${FORGED}`, severity: 'error' });
  assert.equal(line.split('\n').length, 1);
  assert.doesNotMatch(line, /\u001b/);
  assert.equal(showShape('root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1'), 'a string of 44 characters', 'a file that is not a golden set is never quoted');
  assert.equal(showShape({ OPENAI_API_KEY: 'sk-secret' }), 'a mapping of 1 key');
});

test('search, compare and judge agreement print a hostile chunk id, snippet, routing reason, run label and category escaped, one line each', async () => {
  const { formatResponse } = await import('../../src/cli/search.ts');
  const { formatComparisonTable } = await import('../../src/cli/compare.ts');
  const { agreementText } = await import('../../src/cli/judge.ts');
  const channel = { rank: 1, score: 1 };
  const search = formatResponse('q', {
    hits: [{ rank: 1, score: 1, chunkId: FORGED, documentId: 'd', content: `snippet ${FORGED}`, channels: { keyword: channel, vector: channel } }],
    routing: { route: 'search', safety: false, reasons: [FORGED] },
    diagnostics: { variant: 'c300:use-lite', index: { engine: 'pglite', variant: 'c300:use-lite', corpusId: 'abc', corpus: FORGED }, timings: { total: 1 } },
  } as never);
  const table = formatComparisonTable('ndcg_at_10', {
    baseline: FORGED,
    queries: ['q1'],
    comparisons: [{ run: FORGED, baseline_mean: 0.5, mean: 0.6, diff: 0.1, ci_low: 0, ci_high: 0.2, p_ttest: 0.1, p_randomization: 0.1, p_holm: 0.1, wins: 1, ties: 0, losses: 0 }],
  } as never);
  const zero = [[0, 0, 0], [0, 0, 0], [0, 0, 0]];
  const agreement = agreementText({
    judge: FORGED, reason: 'r', judge_errors: 0, items: 1, judged: 1,
    overall: { confusion: zero, accuracy: 1, kappa: 1, n: 1 },
    categories: { [FORGED]: { n: 1, accuracy: 1, kappa: 1 } },
  } as never);
  for (const [name, text, lines] of [['search', search, 6], ['compare', table, 4], ['agreement', agreement, 15]] as const) {
    assert.doesNotMatch(text, /[\u001b\u009b\u202e\r]/, name);
    for (const line of text.split('\n')) assert.doesNotMatch(line, /^rankgate gate PASSED/, `${name}: a forged line`);
    assert.match(text, /howto\\nrankgate gate PASSED \(exit 0\) for \\u001b\[32mall/, `${name}: the text is kept, escaped`);
    assert.equal(text.trimEnd().split('\n').length, lines, `${name}:\n${text}`);
  }
});

test('trec-eval: a query id holding ESC or a bidi control is escaped in its tab-separated output; ordinary output is byte-identical', async () => {
  const { safeTerminalTsv } = await import('../../src/util/terminal.ts');
  const plain = Buffer.from('map\tq1\t0.5000\nmap\tall\t0.5000\n');
  assert.equal(safeTerminalTsv(plain), plain, 'nothing to escape: the same bytes');
  const hostile = Buffer.from('map\tq\u001b[2J1\t0.5000\nP_5\tq\u202e2\t0.2000\n', 'utf8');
  assert.equal(safeTerminalTsv(hostile).toString('utf8'), 'map\tq\\u001b[2J1\t0.5000\nP_5\tq\\u202e2\t0.2000\n');
  // through the command: qrels and run with the hostile id
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { spawnSync } = await import('node:child_process');
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-tsv-'));
  try {
    writeFileSync(join(dir, 'qrels'), 'q\u001b[31m1 0 d1 1\n');
    writeFileSync(join(dir, 'run'), 'q\u001b[31m1 Q0 d1 1 1.0 r\n');
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '..', '..', 'bin', 'rankgate.js'), 'trec-eval', '-q', '-m', 'map', join(dir, 'qrels'), join(dir, 'run')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(!r.stdout.includes('\u001b'), 'no raw ESC reaches the terminal');
    assert.match(r.stdout, /^map\s+q\\u001b\[31m1\s+1\.0000$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
