/**
 * The series and the drift against a hand computation, on one generated repository (test/history/helpers.ts
 * issueRepo, built once for the file): 12 commits of config/search-baseline.json, a slow drift of 2 points per commit
 * over 6 of them (each passing its own pull request's check), one corpus change, one golden change, one provider
 * config change. Then the history file beside it: the encoding, the line sizes, and every kind of bad input (one line
 * each, the rest still read, nothing rewritten).
 *
 * The hand computation (50 queries, 25 in category a and 25 in b after the golden change; a hit is Success@3 1 and
 * MRR@10 1, a miss 0 and 0.25):
 *
 *   c6 (2026-09-07): 10 misses -> Success@3 40/50 = 0.80, MRR@10 (40 + 10 x 0.25) / 50 = 0.85.
 *   c7..c12: one hit becomes a miss each -> Success@3 -1/50 = -2.0 pts, MRR@10 -0.75/50 = -1.5 pts per commit.
 *   Each pull request's own check: a drop of 2.0 pts is not beyond max_drop 2.0; one changed query gives p = 2/2 = 1.
 *   c12 (2026-10-19): 34/50 = 0.68, MRR@10 0.76.
 *   The window (8 points) is c5..c12; c5 and c6 are both 0.80: the best is the newest of equals, c6.
 *   Newest vs best, overall Success@3: 0.80 -> 0.68 = -12.0 pts over 6 commits. Paired differences: six -1, 44 zeros;
 *     the exact randomization test over the 2^6 sign flips of the six: only all -1 and all +1 reach |sum| 6: p = 2/64
 *     = 0.03125. s_d: mean -0.12, sum of squares 6 - 50 x 0.0144 = 5.28, / 49 = 0.107755, s_d = 0.328260;
 *     MDD = (1.959964 + 0.841621) x 0.328260 / sqrt(50) = 0.1300 -> 13.0 pts.
 *   MRR@10: 0.85 -> 0.76 = -9.0 pts, six equal differences -0.75: p = 0.03125, s_d = 0.75 x 0.328260 = 0.246195,
 *     MDD = 2.801585 x 0.246195 / 7.071068 = 0.0975 -> 9.8 pts.
 *   Category a (25): 19/25 = 0.76 -> 16/25 = 0.64 (a05, a06, a07 lost): -12.0 pts, p = 2/8 = 0.25; b likewise
 *     (21/25 -> 18/25, its best is c7, which lost an a query): Holm over the two p's of 0.25: 0.5 each.
 *   With a window of all 12: the best is c2 (corpus change, b05 became a hit: 37/45 = 0.8222). Shared with c12: the
 *     45 first queries (the 5 added at c3 said apart); c12 misses 14 of them: 31/45 = 0.6889; -13.3 pts, p 2/64
 *     = 0.031. The oldest, c1 (36/45 = 0.80): -11.1 pts; differences six -1 and one +1 (b05):
 *     P(|sum| >= 5 over 7 signs) = 2 x (1 + 7) / 128 = 0.125.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { baselineAsColumn, readBaseline, regressionCheck, type Baseline } from '../../src/gate/baseline.ts';
import { driftLines, driftReport, type DriftOptions } from '../../src/history/drift.ts';
import { decodeValues, encodeValues, historyLine, perQueryOf, type PointMeta } from '../../src/history/line.ts';
import { pointChanges, readSeries } from '../../src/history/series.ts';
import { gitProcessCount } from '../../src/util/git.ts';
import type { Des058Report } from '../../src/results/summary.ts';
import { demoLikeQueries, git, hit, issueRepo, makeBaseline, miss } from './helpers.ts';

const OPTS: DriftOptions = { metrics: ['recall_at_3', 'mrr_at_10'], max_drop: 0.02, alpha: 0.05, window: 8, days: 90 };
const close = (a: number, b: number, eps = 1e-4) => Math.abs(a - b) <= eps;

describe('history: the baseline\'s git history and the drift (12 generated commits)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-history-'));
  const repo = join(dir, 'team');
  let made: ReturnType<typeof issueRepo>;
  before(() => {
    made = issueRepo(repo);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const series = (extra: Partial<Parameters<typeof readSeries>[0]> = {}) => readSeries({ cwd: repo, baseline: 'config/search-baseline.json', maxCommits: 1000, repo: 'acme/search', ...extra });
  const short = (i: number) => made.commits[i]!.slice(0, 7);

  test('12 points from ONE git log and ONE cat-file, oldest first, with what changed at each', () => {
    const before = gitProcessCount();
    const s = series();
    // rev-parse (top, shallow), log, cat-file: never a process per commit (the repo given: no remote lookup)
    assert.equal(gitProcessCount() - before, 3);
    assert.deepEqual(s.notes, []);
    assert.equal(s.points.length, 12);
    assert.deepEqual(s.points.map((p) => p.commit), made.commits);
    assert.deepEqual(s.points.map((p) => p.date.slice(0, 10)), made.dates.map((d) => d.slice(0, 10)));
    assert.deepEqual(s.points.map((p) => p.summary.means.recall_at_3[0]), [0.8, 0.8222, 0.8, 0.8, 0.8, 0.8, 0.78, 0.76, 0.74, 0.72, 0.7, 0.68]);
    assert.deepEqual(s.points.map((p) => p.summary.means.mrr_at_10[0]), [0.85, 0.8667, 0.85, 0.85, 0.85, 0.85, 0.835, 0.82, 0.805, 0.79, 0.775, 0.76]);
    assert.deepEqual(s.points.map((p) => p.summary.counts[0]), [45, 45, ...Array(10).fill(50)]);
    assert.equal(s.points[6]!.subject, 'tune ranking #101 (loses a05)');
    assert.equal(s.points[6]!.author, 'Dana');
    const changes = s.points.map((p, i) => (i ? pointChanges(s.points[i - 1]!, p) : []));
    assert.deepEqual(changes[1], ['corpus help c1c1c1c1c1c1 -> c2c2c2c2c2c2']);
    assert.match(changes[2]![0]!, /^golden set [0-9a-f]{8} \(45 queries\) -> [0-9a-f]{8} \(50 queries\)$/);
    assert.deepEqual(changes[3], ['provider config topK=10 -> topK=20']);
    assert.deepEqual(changes.slice(4).flat(), []);
    // the judge: compared when both points record one (a baseline records none: unknown is not a change)
    const p = s.points[11]!;
    assert.deepEqual(pointChanges({ ...p, judge: 'judge: off' }, { ...p, judge: 'judge: bedrock us.anthropic.claude-haiku-4-5 (prompt v2)' }), ['judge off -> bedrock us.anthropic.claude-haiku-4-5 (prompt v2)']);
    assert.deepEqual(pointChanges({ ...p, judge: null }, { ...p, judge: 'judge: off' }), []);
  });

  test('each drift commit passes its own pull request\'s check: -2.0 pts is not beyond max_drop 2.0, p 1', () => {
    const s = series();
    for (let i = 6; i < 12; i++) {
      const prev = s.points[i - 1]!;
      const b = (p: typeof prev) => ({ queries: Object.fromEntries((p.perQuery() as ReturnType<typeof perQueryOf>).ids.map((id, k) => [id, (p.perQuery() as ReturnType<typeof perQueryOf>).values.recall_at_3[k] === 1 ? hit(id[0]!) : miss(id[0]!)])) });
      const base = makeBaseline(b(prev).queries, { corpusId: 'c2c2c2c2c2c2c2c2', config: { provider: 'p', topK: 20 } });
      const next = makeBaseline(b(s.points[i]!).queries, { corpusId: 'c2c2c2c2c2c2c2c2', config: { provider: 'p', topK: 20 } });
      const r = regressionCheck(base, baselineAsColumn(next, 'pr'), { config: next.config } as Des058Report, { baseline: 'b', max_drop: 0.02, alpha: 0.05, metrics: ['recall_at_3', 'mrr_at_10'], accept_mismatch: false });
      const overall = r.tests.find((t) => t.scope === 'overall' && t.metric === 'recall_at_3')!;
      assert.ok(close(overall.drop_pts, 2), `c${i + 1}: ${overall.drop_pts}`);
      assert.equal(overall.p, 1);
      assert.deepEqual(r.tests.filter((t) => t.failed), [], `c${i + 1} passes its check`);
    }
  });

  test('the drift: -12.0 pts over 6 commits since c6, p 0.031, MDD 13.0, the six steps; categories Holm-adjusted', () => {
    const d = driftReport(series().points, OPTS);
    assert.equal(d.window.length, 8);
    assert.equal(d.window[0]!.commit, made.commits[4]);
    assert.equal(d.headline, `drift: Success@3 \u221212.0 pts over 6 baseline commits since 2026-09-07 (p 0.031), spread over 6 steps (largest \u22122.0 at ${short(6)})`);
    const f = (metric: string, scope: string) => d.findings.find((x) => x.metric === metric && x.scope === scope)!;
    const r3 = f('recall_at_3', '*');
    assert.equal(r3.ref.commit, made.commits[5]);
    assert.equal(r3.against, 'best');
    assert.equal(r3.span, 6);
    assert.ok(close(r3.before, 0.8) && close(r3.after, 0.68) && close(r3.drop_pts, 12));
    assert.deepEqual({ ...r3.tested!, mdd_pts: Math.round(r3.tested!.mdd_pts * 10) / 10 }, { n: 50, p: 0.03125, p_adj: 0.03125, mdd_pts: 13.0, added: 0, removed: 0 });
    assert.deepEqual(r3.steps.map((x) => [x.point.commit, x.change_pts]), made.commits.slice(6).map((c) => [c, -2]));
    const mrr = f('mrr_at_10', '*');
    assert.ok(close(mrr.before, 0.85) && close(mrr.after, 0.76) && close(mrr.drop_pts, 9));
    assert.equal(mrr.tested!.p, 0.03125);
    assert.equal(Math.round(mrr.tested!.mdd_pts * 10) / 10, 9.8);
    const a = f('recall_at_3', 'a');
    const b = f('recall_at_3', 'b');
    assert.ok(close(a.before, 0.76) && close(a.after, 0.64));
    assert.ok(close(b.before, 0.84) && close(b.after, 0.72));
    assert.equal(b.ref.commit, made.commits[6], 'b was last at its best at c7 (which lost an a query)');
    assert.deepEqual([a.tested!.p, a.tested!.p_adj, b.tested!.p, b.tested!.p_adj], [0.25, 0.5, 0.25, 0.5]);
    // no oldest-point finding: the oldest of the window (c5) is as good as the best
    assert.deepEqual(d.findings.filter((x) => x.against === 'oldest'), []);
    assert.equal(d.failed, false, 'without max_drift, drift is said, never failed');
    // max_drift 0.10: a confirmed drop of 12 pts fails the scheduled run; the categories' (p 0.5) do not
    const strict = driftReport(series().points, { ...OPTS, max_drift: 0.1 });
    assert.equal(strict.failed, true);
    assert.deepEqual(strict.findings.filter((x) => x.failed).map((x) => `${x.scope} ${x.metric}`), ['* recall_at_3']);
    assert.match(driftLines(strict).join('\n'), /FAIL overall recall_at_3 vs the best point/);
  });

  test('the whole series as the window: the best is the corpus change, the 5 added queries said apart, the oldest p 0.125', () => {
    const d = driftReport(series().points, { ...OPTS, window: 12 });
    const best = d.findings.find((x) => x.metric === 'recall_at_3' && x.scope === '*' && x.against === 'best')!;
    assert.equal(best.ref.commit, made.commits[1]);
    assert.ok(close(best.before, 37 / 45) && close(best.after, 31 / 45) && close(best.drop_pts, (6 / 45) * 100));
    assert.deepEqual([best.tested!.n, best.tested!.added, best.tested!.p], [45, 5, 0.03125]);
    const oldest = d.findings.find((x) => x.metric === 'recall_at_3' && x.scope === '*' && x.against === 'oldest')!;
    assert.equal(oldest.ref.commit, made.commits[0]);
    assert.ok(close(oldest.drop_pts, (5 / 45) * 100));
    assert.equal(oldest.tested!.p, 0.125);
    assert.match(d.headline!, /^drift: Success@3 \u221213\.3 pts over 10 baseline commits since 2026-08-10 \(p 0\.031; 5 queries added since, not compared\)/);
  });

  test('a shallow clone (fetch-depth: 1): one point, and how to fetch the history', () => {
    const shallow = join(dir, 'shallow');
    git(dir, ['clone', '-q', '--depth', '1', `file://${repo}`, shallow]);
    const s = readSeries({ cwd: shallow, baseline: 'config/search-baseline.json', maxCommits: 1000, repo: 'acme/search' });
    assert.equal(s.points.length, 1);
    assert.equal(s.notes.length, 1);
    assert.match(s.notes[0]!, /^shallow clone: the git history of config\/search-baseline\.json stops at [0-9a-f]{7} \(1 commit read\): fetch the history with `git fetch --unshallow` \(in GitHub Actions: actions\/checkout with fetch-depth: 0\)$/);
  });

  test('the history file: read with the baseline as one series; bad lines one note each, the rest read, nothing rewritten', () => {
    const c12 = readBaseline(join(repo, 'config', 'search-baseline.json'));
    const meta = (date: string, commit: string | null, extra: Partial<PointMeta> = {}): PointMeta => ({
      repo: 'acme/search', run: date.slice(5, 10), commit, date, code: 0, column: 'hybrid', corpus: { id: 'c2c2c2c2c2c2c2c2', path: 'help' }, golden: c12.identity!.selection, config: { provider: 'p', topK: 20 }, judge: 'judge: off', latency: { p50: 12, p95: 30 }, cost: null, provisional: null, backlog: null, ...extra,
    });
    const lose = (b: Baseline, id: string): Baseline => ({ ...b, queries: { ...b.queries, [id]: miss(id[0]!) } });
    const run1 = perQueryOf(c12.queries);
    const run2 = perQueryOf(lose(c12, 'a08').queries);
    const other = perQueryOf(makeBaseline({ x1: hit('x'), x2: hit('x') }, { corpusId: 'c2' }).queries);
    const head = made.commits[11]!;
    const lines = [
      historyLine(meta('2026-10-26T04:17:00.000Z', head, { provisional: 0.2, backlog: 40 }), run1, true),
      '{"v":1,"date":', // malformed (a line cut short)
      JSON.stringify({ v: 2, date: '2026-10-27T00:00:00Z' }), // a newer rankgate
      historyLine(meta('2026-10-28T04:17:00.000Z', head, { repo: 'someone/fork' }), run1, false), // another repository
      historyLine(meta('2026-10-29T04:17:00.000Z', head), other, true), // another golden selection: nothing shared
      historyLine(meta('2026-10-30T04:17:00.000Z', head), run1, false).replace(/"key":"[0-9a-f]{12}"/, '"key":"deadbeef0000"'), // ids nowhere
      historyLine(meta('2026-11-02T04:17:00.000Z', 'f'.repeat(40), { code: 1, provisional: 0.25, backlog: 55 }), run2, false), // a commit force-pushed away
    ];
    const file = join(dir, 'history.jsonl');
    const text = lines.join('\n') + '\n';
    writeFileSync(file, text);
    const s = series({ file, checkReachable: true });
    assert.equal(readFileSync(file, 'utf8'), text, 'nothing rewritten');
    assert.deepEqual(s.history, { name: file, lines: 7, points: 4 });
    assert.equal(s.points.length, 16);
    assert.deepEqual(s.points.slice(12).map((p) => [p.kind, p.where.replace(file, 'H')]), [
      ['run', 'H line 1'],
      ['run', 'H line 5'],
      ['run', 'H line 6'],
      ['run', 'H line 7'],
    ]);
    const notes = s.notes.map((n) => n.replaceAll(file, 'H'));
    assert.deepEqual(notes.length, 5, notes.join('\n'));
    assert.match(notes[0]!, /^H: 1 malformed line skipped \(line 2: not JSON \(.*\)\); the other lines are read$/);
    assert.equal(notes[1], 'H: 1 line of history format v 2 skipped: written by a newer rankgate (this one reads v 1): upgrade rankgate (npm i -D rankgate@latest)');
    assert.equal(notes[2], 'H: 1 line from another repository (someone/fork, not acme/search) skipped (line 4)');
    assert.match(notes[3]!, /^H: the per-query values of 1 line \(line 6\) cannot be decoded: the line that carried the ids of their golden selection is not read; their summaries are kept, the drift test leaves them out$/);
    assert.equal(notes[4], 'H: 1 run measured commits that are no longer in the history of HEAD (fffffff): the branch was force-pushed or rewritten; their points are kept, the commits between them cannot be named');
    // the run whose ids are on line 1 decodes; the undecodable one keeps its summary
    assert.equal(typeof s.points[15]!.perQuery(), 'object');
    assert.equal(s.points[14]!.summary.means.recall_at_3[0], 0.68);
    assert.equal(s.points[15]!.provisional, 0.25);
    assert.equal(s.points[15]!.backlog, 55);
    // the drift over the last 8 points: the other golden set is left out (said), the runs continue the commits' series
    const d = driftReport(s.points, OPTS);
    assert.deepEqual(d.notes.map((n) => n.replaceAll(file, 'H')), ['1 point of another golden set (no query shared with the newest point: H line 5) left out of the drift']);
    // the last 8: c9..c12 and lines 1, 5, 6, 7; without line 5, 7 points. The best is c9 (37/50 = 0.74); the newest
    // (line 7) also lost a08: 33/50 = 0.66, -8.0 pts; four queries changed alike: p = 2/16 = 0.125; the steps: c10, c11,
    // c12 and line 7, -2.0 each
    assert.equal(d.window.length, 7);
    const r3 = d.findings.find((x) => x.metric === 'recall_at_3' && x.scope === '*')!;
    assert.equal(r3.ref.commit, made.commits[8]);
    assert.ok(close(r3.before, 0.74) && close(r3.after, 0.66) && close(r3.drop_pts, 8), String(r3.drop_pts));
    assert.equal(r3.tested!.p, 0.125);
    assert.deepEqual(r3.steps.map((x) => x.point.where.replace(file, 'H')), [9, 10, 11].map((i) => `config/search-baseline.json at ${short(i)}`).concat('H line 7'));
    assert.equal(d.headline, `drift: Success@3 \u22128.0 pts over 6 points since 2026-09-28 (p 0.125), spread over 4 steps (largest \u22122.0 at ${short(9)})`);
  });

  test('the per-query encoding: exact to 6 decimals, one character a query for binary and MRR values; line sizes', () => {
    const vals = [1, 0, null, 0.25, 1 / 3, 0.5];
    assert.deepEqual(decodeValues(encodeValues(vals), 6), [1, 0, null, 0.25, 0.333333, 0.5]);
    const cont = Array.from({ length: 100 }, (_, i) => (i === 7 ? null : Math.round(((i * 7919) % 1000) / 1000 * 1e6) / 1e6 + 0.000123));
    const enc = encodeValues(cont);
    assert.equal(enc[0], 'Q');
    assert.equal(enc.length, 1 + 4 * 100);
    assert.deepEqual(decodeValues(enc, 100), cont.map((v) => (v === null ? null : Math.round(v * 1e6) / 1e6)));
    assert.match(String(decodeValues('Dx|A', 1)), /outside \[0, 1\]/);
    assert.match(String(decodeValues(enc, 99)), /values for 99 queries/);
    // the line of a run: the demo's 66 queries, and 1,000 (the ids block only on a golden selection's first line)
    const meta: PointMeta = {
      repo: 'acme/search', run: '12345678901', commit: 'a'.repeat(40), date: '2026-10-05T04:17:00.000Z', code: 0, column: 'hybrid rrf60 c300 use-lite',
      corpus: { id: '53e6d297a0471234', path: 'datasets/corpus' }, golden: { id: '0123456789abcdef', size: 66 },
      config: { provider: 'file://providers/search.ts', corpus: 'datasets/corpus', mode: 'hybrid', rrfK: 60, topK: 10, chunkSize: 300, embedder: 'use-lite', routing: true },
      judge: 'judge: off', latency: { p50: 14.2, p95: 41.7 }, cost: null, provisional: null, backlog: null,
    };
    const sizes = [66, 1000].map((n) => {
      const pq = perQueryOf(demoLikeQueries(n));
      return [n, Buffer.byteLength(historyLine(meta, pq, false)), Buffer.byteLength(historyLine(meta, pq, true))];
    });
    console.log(`history line sizes (queries, bytes, bytes with the ids block): ${JSON.stringify(sizes)}`);
    assert.ok(sizes[0]![1]! < 2000 && sizes[1]![1]! < 10_000, JSON.stringify(sizes));
  });
});
