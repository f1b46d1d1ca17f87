/**
 * The commands, in-process (`run(argv)`): `rankgate history` (the table, --json, --html, and `rankgate report
 * --history`) on the generated 12-commit repository; `rankgate history append` on the harness fixture's results (gated
 * first, the baseline never updated, the ids block on the first line only, a malformed line kept as it was); the gate's
 * drift line in the terminal and the PR comment (`rankgate gate` with a baseline whose git history was better).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run as history } from '../../src/cli/history.ts';
import { run as report } from '../../src/cli/report.ts';
import { run as gate } from '../../src/cli/gate.ts';
import { readBaseline, writeBaseline } from '../../src/gate/baseline.ts';
import { parseHistoryLine } from '../../src/history/line.ts';
import { runCli } from '../helpers/capture.ts';
import { fixtureEvalInto } from '../harness/helpers.ts';
import { git, initRepo, issueRepo, summaryOf } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'rg-history-cli-'));
const home = process.cwd();
after(() => {
  process.chdir(home);
  rmSync(dir, { recursive: true, force: true });
});
// the CI variables of whoever runs the tests would name another repository and run
for (const k of ['GITHUB_REPOSITORY', 'GITHUB_RUN_ID', 'GITHUB_SHA', 'GITHUB_EVENT_NAME', 'GITHUB_BASE_REF', 'RANKGATE_BASE_REF', 'CI_PROJECT_PATH', 'CI_PIPELINE_ID', 'CI_COMMIT_SHA', 'RANKGATE_DRIFT']) delete process.env[k];

describe('rankgate history on the 12-commit repository', () => {
  const repo = join(dir, 'team');
  let commits: string[] = [];
  before(() => {
    commits = issueRepo(repo).commits;
    process.chdir(repo);
  });
  after(() => process.chdir(home));

  test('the table, what changed, and the drift with its test, MDD and steps', async () => {
    const r = await runCli('history', history, []);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split('\n');
    assert.equal(lines[0], 'rankgate history: 12 points from config/search-baseline.json (12 commits at HEAD) and no history file, 2026-08-03 .. 2026-10-19');
    assert.match(r.out, new RegExp(`2026-08-10  ${commits[1]!.slice(0, 7)} baseline\\s+0\\.8222\\s+0\\.8667\\s+45  corpus help c1c1c1c1c1c1 -> c2c2c2c2c2c2`));
    assert.match(r.out, new RegExp(`2026-10-19  ${commits[11]!.slice(0, 7)} baseline\\s+0\\.6800\\s+0\\.7600\\s+50`));
    assert.match(r.out, /^drift over the last 8 points since 2026-08-31 \(window: 8 points, at most 90 days; max_drop 2\.0 pts, alpha 0\.05/m);
    assert.match(r.out, new RegExp(`^  drift: Success@3 \u221212\\.0 pts over 6 baseline commits since 2026-09-07 \\(p 0\\.031\\), spread over 6 steps \\(largest \u22122\\.0 at ${commits[6]!.slice(0, 7)}\\)$`, 'm'));
    assert.match(r.out, /DRIFT overall recall_at_3 vs the best point \([0-9a-f]{7}, 2026-09-07\): 0\.8000 -> 0\.6800 \(\u221212\.0 pts over 6 baseline commits; p 0\.031, 50 shared queries; minimum detectable drop 13\.0 pts\); steps: /);
    const limited = await runCli('history', history, ['--limit', '3']);
    assert.match(limited.out, /\(the newest 3 of 12 points; --limit 0 for all\)/);
    const bad = await runCli('history', history, ['--window', '1']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--window: expected a whole number from 2/);
  });

  test('--json for tools; --html and report --history: one self-contained page under 2 MB', async () => {
    const j = await runCli('history', history, ['--json']);
    assert.equal(j.code, 0, j.err);
    const doc = JSON.parse(j.out) as { points: { kind: string; changes: string[]; means: { recall_at_3: number[] } }[]; drift: { headline: string; findings: { tested: { p: number; n: number } }[] } };
    assert.equal(doc.points.length, 12);
    assert.deepEqual(doc.points[3]!.changes, ['provider config topK=10 -> topK=20']);
    assert.equal(doc.drift.findings[0]!.tested.p, 0.03125);
    assert.match(doc.drift.headline, /^drift: Success@3 \u221212\.0 pts/);
    const page = join(dir, 'trend.html');
    const h = await runCli('report', report, ['--history', '--html', page]);
    assert.equal(h.code, 0, h.err);
    assert.match(h.err, /rankgate history: wrote .*trend\.html \(\d+ KB, 12 points\)/);
    const html = readFileSync(page, 'utf8');
    assert.ok(statSync(page).size < 2 * 1024 * 1024);
    assert.match(html, /Content-Security-Policy/);
    assert.doesNotMatch(html.replace(/<script>[\s\S]*?<\/script>/g, ''), /<(script|link|img|iframe)[^>]+(src|href)=/i, 'nothing fetched from the network (the page in Chromium: test/history/trend-page.test.ts)');
    assert.match(html, /drift: Success@3 \u221212\.0 pts over 6 baseline commits/);
    const wrong = await runCli('report', report, ['--history', 'results.json', '--html', page]);
    assert.equal(wrong.code, 2);
    assert.match(wrong.err, /--history reads the baseline's git history and the history file, not a results file/);
  });

  test('the history branch when fetched: history.jsonl on rankgate-history, read through the same cat-file batch', async () => {
    const c12 = (await import('../../src/gate/baseline.ts')).readBaseline('config/search-baseline.json');
    const { historyLine, perQueryOf, pointConfig } = await import('../../src/history/line.ts');
    const line = historyLine(
      { repo: null, run: '77', commit: commits[11]!, date: '2026-10-26T04:17:00.000Z', code: 0, column: 'hybrid', corpus: { id: 'c2c2c2c2c2c2c2c2', path: 'help' }, golden: c12.identity!.selection, config: pointConfig(c12), judge: null, latency: null, cost: null, provisional: null, backlog: null },
      perQueryOf(c12.queries),
      true,
    );
    // the branch as the push step makes it: its own root, history.jsonl only
    const blob = spawnSync('git', ['hash-object', '-w', '--stdin'], { cwd: repo, input: `${line}\n`, encoding: 'utf8' }).stdout.trim();
    const tree = spawnSync('git', ['mktree'], { cwd: repo, input: `100644 blob ${blob}\thistory.jsonl\n`, encoding: 'utf8' }).stdout.trim();
    const c = git(repo, ['commit-tree', tree, '-m', 'rankgate history: run 77']);
    git(repo, ['update-ref', 'refs/heads/rankgate-history', c]);
    try {
      const r = await runCli('history', history, ['--limit', '2']);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /^rankgate history: 13 points from config\/search-baseline\.json \(12 commits at HEAD\) and rankgate-history:history\.jsonl \(1 of 1 lines\)/);
      assert.match(r.out, /2026-10-26  [0-9a-f]{7} run 77\s+0\s+0\.6800/);
    } finally {
      git(repo, ['update-ref', '-d', 'refs/heads/rankgate-history']);
    }
  });

  test('no history at all: one line, exit 2', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    initRepo(empty);
    process.chdir(empty);
    try {
      const r = await runCli('history', history, []);
      assert.equal(r.code, 2);
      assert.equal(r.err.trim(), 'rankgate history: no history: config/search-baseline.json has no readable version in the git history of HEAD, and no history file (--file, or the branch rankgate-history fetched)');
    } finally {
      process.chdir(repo);
    }
  });
});

describe('rankgate history append and the gate\'s drift line, on the harness fixture\'s results', () => {
  const repo = join(dir, 'fixture-team');
  let results = '';
  before(async () => {
    mkdirSync(repo);
    initRepo(repo, 'version: 1\noverall: { recall_at_3: 0.3 }\nregression:\n  baseline: config/search-baseline.json\n  max_drop: 0.02\n  alpha: 0.05\n');
    results = (await fixtureEvalInto(repo)).results;
    process.chdir(repo);
    // the baseline's history: once better (fx-conceptual-001..003 found at rank 1: Success@3 7/8), then as this run (4/8)
    const w = await runCli('gate', gate, [results, '--update-baseline']);
    assert.equal(w.code, 0, w.err + w.out);
    const now = readBaseline('config/search-baseline.json');
    const better = { ...now.queries };
    for (const id of ['fx-conceptual-001', 'fx-conceptual-002', 'fx-conceptual-003']) better[id] = { ...better[id]!, recall_at_3: 1, mrr: 1 };
    const { seal: _s, ...identity } = now.identity!;
    writeBaseline('config/search-baseline.json', { ...now, queries: better, summary: summaryOf(better), identity });
    git(repo, ['add', 'config/search-baseline.json']);
    git(repo, ['commit', '-q', '-m', 'baseline: the good days'], { GIT_AUTHOR_DATE: '2026-10-05T10:00:00Z', GIT_COMMITTER_DATE: '2026-10-05T10:00:00Z' });
    writeBaseline('config/search-baseline.json', now);
    git(repo, ['add', 'config/search-baseline.json']);
    git(repo, ['commit', '-q', '-m', 'tune (#7): loses three conceptual queries'], { GIT_AUTHOR_DATE: '2026-10-12T10:00:00Z', GIT_COMMITTER_DATE: '2026-10-12T10:00:00Z' });
  });
  after(() => process.chdir(home));

  test('the gate says the drift of this run over the baseline\'s history, in the verdict and the PR comment; never its exit code', async () => {
    const g = await runCli('gate', gate, [results, '--comment', 'comment.md']);
    assert.equal(g.code, 0, g.err + g.out);
    // this run against the best (2026-10-05): 0.875 -> 0.5 on 8 measured queries; three changed alike: p = 2/8
    const line = 'drift: Success@3 \u221237.5 pts over 2 points since 2026-10-05 (p 0.250), mostly at';
    assert.ok(g.out.includes(`note: ${line}`), g.out);
    assert.match(g.out, /mostly at [0-9a-f]{7} \(\u221237\.5\)/);
    // the comment escapes what could mention someone (Success@3 keeps a zero-width break after its @)
    const comment = readFileSync('comment.md', 'utf8');
    assert.match(comment, /^- ℹ️ drift: Success@\S*3 \u221237\.5 pts over 2 points since 2026-10-05 \(p 0\.250\), mostly at [0-9a-f]{7} \(\u221237\.5\)$/m);
    const off = await runCli('gate', gate, [results]);
    process.env.RANKGATE_DRIFT = 'off';
    try {
      const quiet = await runCli('gate', gate, [results]);
      assert.doesNotMatch(quiet.out, /drift:/);
      assert.match(off.out, /drift:/);
    } finally {
      delete process.env.RANKGATE_DRIFT;
    }
  });

  test('append: gated first (the baseline untouched), one line each, the ids once, code and drift recorded; a malformed line kept', async () => {
    const baselineBefore = readFileSync('config/search-baseline.json', 'utf8');
    const file = join(repo, 'history.jsonl');
    const a = await runCli('history', history, ['append', results, '--file', file, '--run-id', 'r1', '--date', '2026-10-19T04:17:00Z']);
    assert.equal(a.code, 0, a.err + a.out);
    assert.match(a.out, /^rankgate history: appended run r1 \(commit [0-9a-f]{7}, exit 0\) to .*history\.jsonl as line 1: \d+ bytes, 10 queries \(with the ids of its golden selection: its first line in this file\)$/m);
    assert.match(a.out, /drift: Success@3 \u221237\.5 pts over 2 points since 2026-10-05 \(p 0\.250\)/);
    // a line cut short by hand between two runs: kept byte for byte, skipped by the reader
    writeFileSync(file, readFileSync(file, 'utf8') + '{"v":1,"date":\n');
    const b = await runCli('history', history, ['append', results, '--file', file, '--run-id', 'r2', '--date', '2026-10-26T04:17:00Z', '--as', 'rankgate-history:history.jsonl']);
    assert.equal(b.code, 0, b.err + b.out);
    assert.match(b.out, /appended run r2 \(commit [0-9a-f]{7}, exit 0\) to rankgate-history:history\.jsonl as line 3: \d+ bytes, 10 queries$/m);
    assert.match(b.out, /note: rankgate-history:history\.jsonl: 1 malformed line skipped \(line 2: not JSON/);
    const lines = readFileSync(file, 'utf8').split('\n');
    assert.equal(lines.length, 4);
    assert.equal(lines[1], '{"v":1,"date":');
    const l1 = parseHistoryLine(lines[0]!, 1, 'h');
    const l3 = parseHistoryLine(lines[2]!, 3, 'h');
    assert.ok('ok' in l1 && 'ok' in l3);
    assert.deepEqual([l1.ok.meta.run, l1.ok.meta.code, !!l1.ok.block, l3.ok.meta.run, !!l3.ok.block, l3.ok.key === l1.ok.key], ['r1', 0, true, 'r2', false, true]);
    assert.equal(l1.ok.meta.commit, git(repo, ['rev-parse', 'HEAD']));
    assert.equal(l1.ok.summary.means.recall_at_3[0], 0.5);
    assert.equal(readFileSync('config/search-baseline.json', 'utf8'), baselineBefore, 'the baseline is never updated');
    // max_drift 0.3: the gate passes, the drift (37.5 pts) is beyond it but p 0.25 does not confirm it: exit 0
    writeFileSync('config/gate.yaml', 'version: 1\noverall: { recall_at_3: 0.3 }\nregression:\n  baseline: config/search-baseline.json\n  max_drop: 0.02\n  alpha: 0.05\n  max_drift: 0.3\n');
    const c = await runCli('history', history, ['append', results, '--file', join(dir, 'h2.jsonl'), '--run-id', 'r3']);
    assert.equal(c.code, 0, 'not confirmed (p 0.25): said, not failed');
    assert.match(c.out, /max_drift 30\.0 pts fails the scheduled run/);
    // alpha 0.5: now confirmed, beyond max_drift: the scheduled run fails (1) though its gate passed
    writeFileSync('config/gate.yaml', 'version: 1\noverall: { recall_at_3: 0.3 }\nregression:\n  baseline: config/search-baseline.json\n  max_drop: 0.02\n  alpha: 0.5\n  max_drift: 0.3\n');
    const d = await runCli('history', history, ['append', results, '--file', join(dir, 'h2.jsonl'), '--run-id', 'r4']);
    assert.equal(d.code, 1, d.out + d.err);
    assert.match(d.err, /✗ drift: Success@3 lost 37\.5 pts over the window, beyond max_drift 30\.0 pts \(p 0\.250 < alpha 0\.5\)/);
    assert.match(d.err, /rankgate history FAILED \(exit 1\): the gate passed, the drift over the window is beyond regression\.max_drift/);
    git(repo, ['checkout', '-q', 'config/gate.yaml']);
  });

  test('append: a results file that is not evidence appends nothing', async () => {
    const file = join(dir, 'h3.jsonl');
    writeFileSync(file, 'kept\n');
    copyFileSync(results, join(repo, 'broken.json'));
    writeFileSync(join(repo, 'broken.json'), readFileSync(results, 'utf8').slice(0, 200));
    const r = await runCli('history', history, ['append', 'broken.json', '--file', file]);
    assert.equal(r.code, 2);
    assert.equal(readFileSync(file, 'utf8'), 'kept\n');
    assert.ok(existsSync(file));
  });
});
