/**
 * rankgate history [--json] [--html OUT] ...      the quality over time of the committed baseline's git history and
 *                                                 the scheduled runs' history file, as one series, with the drift
 * rankgate history append RESULTS.jsonl ...       the scheduled run: gate against the baseline (never updating it),
 *                                                 then append one line to the history file (atomically)
 *
 * Argument parsing and printing only: the series and the drift are src/history, the page src/report/html/trend.ts.
 * docs/history.md.
 */
import { existsSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { readBaseline } from '../gate/baseline.ts';
import { gateInputs } from '../gate/base-ref.ts';
import { envFlag } from '../util/env.ts';
import { runCorpusFor } from '../gate/corpus-change.ts';
import { DEFAULT_FLOORS, DEFAULT_REGRESSION, loadFloors, type Floors } from '../gate/floors.ts';
import { gateColumn, verdictLines } from '../gate/verdict.ts';
import { DRIFT_DAYS, DRIFT_WINDOW, driftLines, driftReport, metricLabel, pointName, pointValue, type DriftReport } from '../history/drift.ts';
import { OVERALL } from '../history/line.ts';
import { appendedLine, runMeta, runPoint } from '../history/run.ts';
import { pointChanges, readSeries, repoFromEnv, type Point, type Series } from '../history/series.ts';
import { pickColumn } from '../results/read.ts';
import { regateHeaderBeside, verifyEvidence } from '../results/regate.ts';
import { readResultsFile } from '../results/stream.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { commitOf, gitRepo, remoteRepo } from '../util/git.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { safeTerminalEntry } from '../util/terminal.ts';
import { parseCliArgs, parseIntFlag } from './args.ts';

const USAGE = `usage: rankgate history [--baseline FILE] [--floors config/gate.yaml] [--file history.jsonl | --branch REF]
                        [--ref REF] [--window 8] [--days 90] [--max-commits 1000] [--limit 20] [--json] [--html OUT]
       rankgate history append RESULTS.jsonl [--file history.jsonl] [--floors config/gate.yaml] [--baseline FILE]
                        [--column LABEL|INDEX] [--run-id ID] [--commit SHA] [--date ISO] [--as NAME]
  The series: every commit that changed the baseline (--baseline, default regression.baseline of the floors file),
  read with git at --ref (default HEAD), and the scheduled runs' history file: --file, else history.jsonl on the
  branch --branch (default origin/rankgate-history, then rankgate-history, when fetched). Oldest first.
  --window N, --days N  the drift's window: the last N points (default ${DRIFT_WINDOW}), none older than N days before the newest
                        (default ${DRIFT_DAYS}); the gated metrics, max_drop, alpha and max_drift come from the floors file
  --max-commits N       read at most the newest N commits of the baseline (default 1000)
  --limit N             rows of the table (the newest; default 20; 0: all)
  --json                the points, notes and drift as JSON (for tools)
  --html OUT            the trend page: one self-contained HTML file (also \`rankgate report --history --html OUT\`)
  append                gate RESULTS against the baseline (never updating it), then append one line (the run, its
                        commit and date, the gate's exit code, the summary per metric and category, the per-query
                        values compressed, corpus, golden set, judge, latency, cost) to --file (default history.jsonl),
                        atomically. Exit: the gate's code (nothing is appended at 2), or 1 when regression.max_drift is
                        set and the drift beyond it is confirmed. The run id, commit and repository come from
                        GITHUB_RUN_ID / GITHUB_SHA / GITHUB_REPOSITORY (GitLab: CI_PIPELINE_ID, CI_COMMIT_SHA,
                        CI_PROJECT_PATH), else --run-id, --commit, git. --as: the name the file is said by
                        (the push step appends to a copy: rankgate-history:history.jsonl).`;

export async function run(argv: string[]): Promise<number> {
  if (argv[0] === 'append') return append(argv.slice(1));
  const { values: v, positionals } = parseCliArgs(
    argv,
    {
      baseline: { type: 'string' },
      floors: { type: 'string' },
      file: { type: 'string' },
      branch: { type: 'string' },
      ref: { type: 'string' },
      window: { type: 'string' },
      days: { type: 'string' },
      'max-commits': { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
      html: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length) throw new UserError(`unknown subcommand or argument '${positionals[0]}' (expected append, or options)\n${USAGE}`);
  if (v.file && v.branch) throw new UserError(`--file and --branch name two history files: give one`);
  // every flag checked before anything is read
  const window = parseIntFlag('window', v.window, 2, 100_000) ?? DRIFT_WINDOW;
  const days = parseIntFlag('days', v.days, 1, 100_000) ?? DRIFT_DAYS;
  const maxCommits = parseIntFlag('max-commits', v['max-commits'], 1, 1_000_000) ?? 1000;
  const limit = parseIntFlag('limit', v.limit, 0, 1_000_000) ?? 20;
  const floors = floorsFrom(v.floors);
  const reg = floors.regression ?? DEFAULT_REGRESSION;
  const baseline = v.baseline ?? reg.baseline;
  const series = readSeries({
    baseline,
    ref: v.ref,
    maxCommits,
    file: v.file ?? null,
    branches: v.branch ? [v.branch] : undefined,
    checkReachable: true,
  });
  if (!series.points.length)
    throw new UserError(
      `no history: ${series.baseline ? `${baseline} has no readable version in the git history of ${series.baseline.ref}` : `${baseline}: no git history read`}` +
        `${series.history ? `, and ${series.history.name} holds no readable line` : ', and no history file (--file, or the branch rankgate-history fetched)'}` +
        `${series.notes.length ? ` (${series.notes.join('; ')})` : ''}`,
    );
  const drift = driftReport(series.points, {
    metrics: reg.metrics,
    max_drop: reg.max_drop,
    alpha: reg.alpha,
    window,
    days,
    max_drift: reg.max_drift ?? null,
  });
  if (v.html) {
    const { writeTrendPage } = await import('../report/html/trend.ts');
    const t0 = Date.now();
    const bytes = writeTrendPage(v.html, series, drift, { metrics: reg.metrics });
    console.error(`rankgate history: wrote ${v.html} (${(bytes / 1024).toFixed(0)} KB, ${series.points.length} points) in ${((Date.now() - t0) / 1000).toFixed(1)} s${drift.headline ? `; ${drift.headline}` : ''}`);
  }
  if (v.json) {
    console.log(JSON.stringify(historyJson(series, drift), null, 1));
    return 0;
  }
  if (v.html) return 0;
  for (const l of historyTable(series, reg.metrics, limit)) console.log(safeTerminalEntry(l));
  for (const n of series.notes) console.log(safeTerminalEntry(`note: ${n}`));
  console.log('');
  for (const l of driftLines(drift)) console.log(safeTerminalEntry(l));
  return 0;
}

function floorsFrom(path: string | undefined): Floors {
  const p = path ?? 'config/gate.yaml';
  if (path && !existsSync(path)) throw new UserError(`${path}: no such floors file`);
  return existsSync(p) ? loadFloors(p) : DEFAULT_FLOORS;
}

const f4 = (x: number | null) => (x === null ? '   n/a' : x.toFixed(4));

/** The heading and the table of the newest `limit` points (0: all), oldest first, with what changed at each. */
export function historyTable(s: Series, metrics: readonly string[], limit: number): string[] {
  const pts = s.points;
  const first = pts[0]!.date.slice(0, 10);
  const last = pts[pts.length - 1]!.date.slice(0, 10);
  const from = [
    s.baseline ? `${s.baseline.path} (${s.baseline.commits} ${s.baseline.commits === 1 ? 'commit' : 'commits'} at ${s.baseline.ref})` : null,
    s.history ? `${s.history.name} (${s.history.points} of ${s.history.lines} lines)` : 'no history file',
  ].filter(Boolean);
  const out = [`rankgate history: ${pts.length} points from ${from.join(' and ')}, ${first} .. ${last}${s.repo ? ` · ${s.repo}` : ''}`];
  const shown = limit && pts.length > limit ? pts.slice(-limit) : pts;
  if (shown.length < pts.length) out.push(`  (the newest ${shown.length} of ${pts.length} points; --limit 0 for all)`);
  const nameOf = (p: Point) => `${p.commit ? p.commit.slice(0, 7) : '       '} ${p.kind === 'baseline' ? 'baseline' : `run ${p.run ?? ''}`}`.slice(0, 40);
  const width = Math.max(16, ...shown.map((p) => nameOf(p).length));
  const head = ['date      ', 'point'.padEnd(width), 'exit', ...metrics.map((m) => metricLabel(m).padStart(9)), 'queries', 'changed'];
  out.push(`  ${head.join('  ')}`);
  for (const p of shown) {
    const i = pts.indexOf(p);
    const changes = i > 0 ? pointChanges(pts[i - 1]!, p) : [];
    const name = nameOf(p).padEnd(width);
    out.push(
      `  ${p.date.slice(0, 10)}  ${name}  ${p.code === null ? '    ' : `   ${p.code}`}  ${metrics.map((m) => f4(pointValue(p, m, OVERALL)).padStart(9)).join('  ')}  ${String(p.summary.counts[0]).padStart(7)}  ${changes.join('; ')}`,
    );
  }
  return out;
}

/** The series for tools (no per-query values: they stay in the files). */
function historyJson(s: Series, d: DriftReport) {
  return {
    points: s.points.map((p, i) => ({
      kind: p.kind,
      where: p.where,
      date: p.date,
      commit: p.commit,
      run: p.run,
      code: p.code,
      author: p.author,
      subject: p.subject,
      column: p.column,
      corpus: p.corpus,
      golden: p.golden,
      config: p.config,
      judge: p.judge,
      latency: p.latency,
      cost: p.cost,
      provisional: p.provisional,
      backlog: p.backlog,
      scopes: p.summary.scopes,
      counts: p.summary.counts,
      means: p.summary.means,
      changes: i > 0 ? pointChanges(s.points[i - 1]!, p) : [],
    })),
    notes: s.notes,
    baseline: s.baseline,
    history: s.history,
    drift: {
      window: d.window.map((p) => p.where),
      options: d.options,
      headline: d.headline,
      failed: d.failed,
      findings: d.findings.map((f) => ({
        metric: f.metric,
        scope: f.scope,
        against: f.against,
        ref: f.ref.where,
        newest: f.newest.where,
        span: f.span,
        before: f.before,
        after: f.after,
        drop_pts: f.drop_pts,
        tested: f.tested && { ...f.tested, mdd_pts: Number.isFinite(f.tested.mdd_pts) ? f.tested.mdd_pts : null },
        untested: f.untested,
        failed: f.failed,
        steps: f.steps.map((x) => ({ at: pointName(x.point), where: x.point.where, date: x.point.date, change_pts: x.change_pts })),
      })),
    },
  };
}

async function append(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseCliArgs(
    argv,
    {
      file: { type: 'string' },
      floors: { type: 'string' },
      baseline: { type: 'string' },
      column: { type: 'string' },
      'run-id': { type: 'string' },
      commit: { type: 'string' },
      date: { type: 'string' },
      as: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UserError(`history append: expected one results file (promptfoo eval --output results.jsonl), got ${positionals.length}\n${USAGE}`);
  const file = positionals[0]!;
  const target = v.file ?? 'history.jsonl';
  if (v.commit !== undefined && !/^[0-9a-f]{7,64}$/.test(v.commit)) throw new UserError(`--commit: expected a commit id (hex), got ${JSON.stringify(v.commit)}`);
  if (v.date !== undefined && !Number.isFinite(Date.parse(v.date))) throw new UserError(`--date: expected an ISO date such as 2026-10-02T04:17:00Z, got ${JSON.stringify(v.date)}`);
  // the scheduled run is gated as \`rankgate gate\` gates on the default branch (no base ref), against the baseline the
  // floors name, which it never updates
  // the same floors and baseline as `rankgate gate` (one loader: src/gate/base-ref.ts), with no base ref
  if (v.baseline && !existsSync(v.baseline)) throw new UserError(`--baseline ${v.baseline}: no such baseline`);
  const inputs = gateInputs({ floorsPath: v.floors ?? 'config/gate.yaml', floorsNamed: !!v.floors, baselinePath: v.baseline, base: null });
  const floors = inputs.floors;
  const baseline = inputs.baseline;
  const results = readResultsFile(file);
  const col = pickColumn(results, v.column, file);
  const evidence = verifyEvidence(file);
  if (evidence.problem) throw new UserError(evidence.problem);
  const verdict = gateColumn(col, {
    floors,
    floorsSource: inputs.floorsSource,
    allowPartial: envFlag('RANKGATE_ALLOW_PARTIAL'),
    acceptMismatch: envFlag('RANKGATE_ACCEPT_BASELINE_MISMATCH'),
    baseline,
    corpus: await runCorpusFor(col, baseline?.data),
    report: { evalId: results.evalId, timestamp: results.timestamp },
    toolchain: results.toolchain ?? regateHeaderBeside(file)?.toolchain ?? null,
  });
  if (evidence.loud) verdict.notes.unshift(evidence.loud);
  if (verdict.code === 2) {
    console.error(verdictLines(verdict).join('\n'));
    console.error(`rankgate history: nothing appended to ${v.as ?? target}: the run measured nothing trustworthy (exit 2); the history keeps measured runs only`);
    return 2;
  }
  const env = process.env;
  const repoState = gitRepo();
  const top = repoState?.top ?? null;
  const attempt = env.GITHUB_RUN_ATTEMPT && env.GITHUB_RUN_ATTEMPT !== '1' ? `-${env.GITHUB_RUN_ATTEMPT}` : '';
  const meta = runMeta(col, verdict.report, {
    repo: repoFromEnv(env) ?? (top ? remoteRepo(top) : null),
    run: v['run-id'] ?? (env.GITHUB_RUN_ID ? `${env.GITHUB_RUN_ID}${attempt}` : null) ?? env.CI_PIPELINE_ID ?? results.evalId ?? `local-${Date.now()}`,
    commit: v.commit ?? env.GITHUB_SHA ?? env.CI_COMMIT_SHA ?? (top ? commitOf(top) : null),
    date: new Date(v.date ?? Date.now()).toISOString(),
    code: verdict.code,
  });
  let existing = '';
  if (existsSync(target)) {
    try {
      existing = readRegularFileSync(target, 'utf8');
    } catch (e) {
      throw new UserError(`${target}: cannot read the history file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); nothing appended`);
    }
  }
  const line = appendedLine(meta.meta, meta.pq, existing);
  const lineNo = existing.split('\n').filter((l, i, a) => i < a.length - 1 || l !== '').length + 1;
  // the drift: the baseline's commits and the history file as it was, then this run as the newest point
  const reg = floors.regression ?? DEFAULT_REGRESSION;
  const baselinePath = baseline?.path ?? reg.baseline;
  const name = v.as ?? target;
  const series = readSeries({ baseline: baselinePath, maxCommits: 1000, file: existing ? target : null, fileName: name, branches: [], repo: meta.meta.repo, checkReachable: false });
  const point = runPoint(meta.meta, meta.pq, `${name} line ${lineNo}`);
  const drift = driftReport([...series.points, point], { metrics: reg.metrics, max_drop: reg.max_drop, alpha: reg.alpha, window: DRIFT_WINDOW, days: DRIFT_DAYS, max_drift: reg.max_drift ?? null });
  // the bytes already there stay as they are (a malformed line too: the reader skips it); one line is added
  writeFileAtomic(target, `${existing}${existing && !existing.endsWith('\n') ? '\n' : ''}${line}\n`);
  const withIds = line.includes('"ids":');
  console.log(
    `rankgate history: appended run ${meta.meta.run} (${meta.meta.commit ? `commit ${meta.meta.commit.slice(0, 7)}` : 'no commit'}, exit ${verdict.code}) to ${name} as line ${lineNo}: ` +
      `${Buffer.byteLength(line)} bytes, ${meta.pq.ids.length} queries${withIds ? ' (with the ids of its golden selection: its first line in this file)' : ''}`,
  );
  for (const n of series.notes) console.log(safeTerminalEntry(`note: ${n}`));
  for (const l of driftLines(drift)) console.log(safeTerminalEntry(l));
  if (drift.headline) verdict.notes.push(drift.headline);
  const failedDrift = drift.findings.find((f) => f.failed);
  const lines = verdictLines(verdict);
  if (failedDrift && reg.max_drift !== undefined)
    lines.push(safeTerminalEntry(`  ✗ drift: ${metricLabel(failedDrift.metric)}${failedDrift.scope === OVERALL ? '' : ` (category ${failedDrift.scope})`} lost ${failedDrift.drop_pts.toFixed(1)} pts over the window, beyond max_drift ${(reg.max_drift * 100).toFixed(1)} pts (p ${failedDrift.tested!.p_adj.toFixed(3)} < alpha ${reg.alpha})`));
  const code = verdict.code === 0 && failedDrift ? 1 : verdict.code;
  if (code === 0) console.log(lines.join('\n'));
  else console.error(lines.join('\n'));
  if (code !== verdict.code) console.error(`rankgate history FAILED (exit 1): the gate passed, the drift over the window is beyond regression.max_drift`);
  return code;
}

export type { Point };
