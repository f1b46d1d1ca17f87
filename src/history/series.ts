/**
 * Points in time, read as one series (docs/history.md): every commit that changed the committed baseline (its git
 * history along the first parent: ONE `git log` pass and ONE `git cat-file --batch` process for all their blobs,
 * whatever the number of commits) and, when there is one, the history file of scheduled runs (a file, or
 * `history.jsonl` on the branch `rankgate-history`, read through the same batch). Sorted by date, oldest first.
 *
 * Bad input is one line each and the rest is still read; nothing is rewritten: a baseline version that is not
 * evidence (an old format, a broken seal), malformed history lines, lines of a newer format, lines of another
 * repository, lines whose per-query values cannot be decoded, a shallow clone (the history stops early: how to fetch
 * it), runs that measured commits no longer in the branch's history (force-pushed).
 */
import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UserError, isUserError } from '../errors.ts';
import { parseBaselineText, type Baseline } from '../gate/baseline.ts';
import { catFileBatch, fileHistory, gitRepo, reachableCommits, remoteRepo, type FileCommit } from '../util/git.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { lineValues, parseHistoryLine, perQueryOf, pointConfig, summarize, type ParsedLine, type PerQuery, type PointMeta, type PointSummary } from './line.ts';

export interface Point extends PointMeta {
  kind: 'baseline' | 'run';
  /** Where it was read, for people: `config/search-baseline.json at a1b2c3d`, `history.jsonl line 12`, `this run`. */
  where: string;
  /** The commit's author and subject (baseline points). */
  author: string | null;
  subject: string | null;
  summary: PointSummary;
  /** The per-query values, decoded on demand; a string saying why they cannot be had. */
  perQuery: () => PerQuery | string;
}

export interface Series {
  points: Point[];
  /** Bad input and limits, one line each. */
  notes: string[];
  /** What was read, for the heading: the baseline's path and commits, the history file and its lines. */
  baseline: { path: string; commits: number; ref: string } | null;
  history: { name: string; lines: number; points: number } | null;
  repo: string | null;
}

export const HISTORY_BRANCHES = ['origin/rankgate-history', 'rankgate-history'];
export const HISTORY_PATH = 'history.jsonl';

export interface SeriesOptions {
  cwd?: string;
  /** The committed baseline (a path from `cwd`), or null. */
  baseline: string | null;
  /** Whose history: HEAD, or a pull request's base. */
  ref?: string;
  /** At most this many baseline commits (the newest). */
  maxCommits: number;
  /** A history file on disk; else `history.jsonl` on the first of `branches` that has one (a fetched branch). */
  file?: string | null;
  /** The name the file is said by (a copy of the branch's file: `rankgate-history:history.jsonl`). */
  fileName?: string;
  branches?: readonly string[];
  /** Only the last N lines of the history file are read (the gate's drift line: cheap). */
  tail?: number;
  /** The repository the lines must come from (GITHUB_REPOSITORY, else the origin remote); lines of another are skipped. */
  repo?: string | null;
  /** Check that the runs' commits are in the history of `ref` (one `git rev-list`): a force-push is said. */
  checkReachable?: boolean;
  env?: NodeJS.ProcessEnv;
}

const short = (c: string | null) => (c ? c.slice(0, 7) : 'no commit');
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const eg = (xs: string[], k = 3) => xs.slice(0, k).join('; ') + (xs.length > k ? '; …' : '');

/** The repository a run belongs to, from CI's environment (GitHub, GitLab), else null. */
export function repoFromEnv(env: NodeJS.ProcessEnv = process.env): string | null {
  return env.GITHUB_REPOSITORY?.trim() || env.CI_PROJECT_PATH?.trim() || null;
}

/** The provisional share and review backlog a baseline or report records (optional fields; src/results/summary.ts). */
export function provisionalOf(x: unknown): { provisional: number | null; backlog: number | null } {
  const p = (x as { provisional?: unknown } | null)?.provisional as { gated?: unknown; bootstrap_only?: unknown; backlog?: { pending?: unknown } | null } | number | null | undefined;
  if (typeof p === 'number') return { provisional: p >= 0 && p <= 1 ? p : null, backlog: null };
  if (!p || typeof p !== 'object') return { provisional: null, backlog: null };
  const share = typeof p.gated === 'number' && p.gated > 0 && typeof p.bootstrap_only === 'number' ? p.bootstrap_only / p.gated : null;
  const pending = p.backlog && typeof p.backlog.pending === 'number' ? p.backlog.pending : null;
  return { provisional: share, backlog: pending };
}

/** A point from a baseline's content (a commit's version, or a run's `baselineFrom`). */
export function pointFromBaseline(b: Baseline, meta: Omit<PointMeta, 'corpus' | 'golden' | 'config' | 'provisional' | 'backlog'> & Partial<PointMeta>, extra: Pick<Point, 'kind' | 'where' | 'author' | 'subject'>): Point {
  const pq = perQueryOf(b.queries);
  const id = b.identity;
  const prov = provisionalOf(b);
  return {
    ...extra,
    corpus: id ? { id: id.corpusId, path: id.corpus } : null,
    golden: id?.selection ? { id: id.selection.id, size: id.selection.size } : { id: null, size: pq.ids.length },
    config: pointConfig(b),
    provisional: prov.provisional,
    backlog: prov.backlog,
    ...meta,
    summary: summarize(pq),
    perQuery: () => pq,
  };
}

/** Points of the history file's text (`name` names it in the notes), with what was skipped said in `notes`. */
export function pointsOfHistoryText(text: string, name: string, opts: { repo?: string | null; tail?: number }, notes: string[]): { points: Point[]; lines: number } {
  const all = text.split('\n');
  if (all.length && all[all.length - 1] === '') all.pop();
  const from = opts.tail !== undefined ? Math.max(0, all.length - opts.tail) : 0;
  const bad: string[] = [];
  const newer = new Map<number, number>();
  const foreign = new Map<string, number[]>();
  const parsed: ParsedLine[] = [];
  const blocks = new Map<string, { ids: string[]; cats: string[] }>();
  for (let i = from; i < all.length; i++) {
    const t = all[i]!;
    if (!t.trim()) continue;
    const r = parseHistoryLine(t, i + 1, name);
    if ('bad' in r) bad.push(`line ${i + 1}: ${r.bad}`);
    else if ('newer' in r) newer.set(r.newer, (newer.get(r.newer) ?? 0) + 1);
    else if (opts.repo && r.ok.meta.repo && r.ok.meta.repo !== opts.repo) foreign.set(r.ok.meta.repo, [...(foreign.get(r.ok.meta.repo) ?? []), i + 1]);
    else {
      parsed.push(r.ok);
      if (r.ok.block && !blocks.has(r.ok.key)) blocks.set(r.ok.key, r.ok.block);
    }
  }
  // the tail of a file may name blocks introduced before it: found by their key with a cheap text search, then parsed
  if (from > 0) {
    const missing = new Set(parsed.filter((l) => !blocks.has(l.key)).map((l) => l.key));
    for (let i = from - 1; i >= 0 && missing.size; i--) {
      const t = all[i]!;
      if (!t.includes('"ids":')) continue;
      const key = [...missing].find((k) => t.includes(`"key":"${k}"`));
      if (!key) continue;
      const r = parseHistoryLine(t, i + 1, name);
      if ('ok' in r && r.ok.block && r.ok.key === key) {
        blocks.set(key, r.ok.block);
        missing.delete(key);
      }
    }
  }
  if (bad.length) notes.push(`${name}: ${plural(bad.length, 'malformed line')} skipped (${eg(bad)}); the other lines are read`);
  for (const [v, k] of newer) notes.push(`${name}: ${plural(k, 'line')} of history format v ${v} skipped: written by a newer rankgate (this one reads v 1): upgrade rankgate (npm i -D rankgate@latest)`);
  for (const [repo, ls] of foreign) notes.push(`${name}: ${plural(ls.length, 'line')} from another repository (${repo}, not ${opts.repo}) skipped (line ${ls.slice(0, 5).join(', ')}${ls.length > 5 ? ', …' : ''})`);
  const undecodable: number[] = [];
  const points = parsed.map((l): Point => {
    const block = blocks.get(l.key);
    if (!block) undecodable.push(l.line);
    let cached: PerQuery | string | undefined;
    return {
      ...l.meta,
      kind: 'run',
      where: `${name} line ${l.line}`,
      author: null,
      subject: null,
      summary: l.summary,
      perQuery: () =>
        (cached ??= block ? lineValues(l, block) : `the ids of its golden selection (key ${l.key}) are on no readable line of ${name}: its per-query values cannot be decoded`),
    };
  });
  if (undecodable.length)
    notes.push(
      `${name}: the per-query values of ${plural(undecodable.length, 'line')} (line ${undecodable.slice(0, 5).join(', ')}${undecodable.length > 5 ? ', …' : ''}) cannot be decoded: the line that carried the ids of their golden selection is not read; their summaries are kept, the drift test leaves them out`,
    );
  return { points, lines: all.length - from };
}

/**
 * Read the series: the baseline's commits (through git, at `ref`) and the history file. Never throws for what it
 * reads (a git failure is a note); a `file` that was named but cannot be read is a UserError.
 */
export function readSeries(opts: SeriesOptions): Series {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const notes: string[] = [];
  const repoState = gitRepo(cwd);
  const ref = opts.ref ?? 'HEAD';
  let repo = opts.repo !== undefined ? opts.repo : repoFromEnv(env);
  const points: Point[] = [];
  let baselineInfo: Series['baseline'] = null;
  let historyInfo: Series['history'] = null;
  let historyText: string | null = null;
  let historyName = opts.file ? (opts.fileName ?? opts.file) : null;
  if (opts.file) {
    try {
      historyText = readRegularFileSync(opts.file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') throw new UserError(`${opts.file}: cannot read the history file (${code ?? (e as Error).message})`);
      notes.push(`${historyName}: no history file yet (the scheduled workflow's first run writes it)`);
    }
  }
  if (repoState) {
    const { top, shallow } = repoState;
    if (repo === null) repo = remoteRepo(top);
    let commits: FileCommit[] = [];
    let more = false;
    let rel: string | null = null;
    if (opts.baseline) {
      rel = repoRelative(top, cwd, opts.baseline);
      if (rel === null) notes.push(`${opts.baseline}: outside the git work tree ${top}: its history is not read`);
      else {
        const h = fileHistory(top, ref, rel, opts.maxCommits);
        if ('error' in h) notes.push(`${opts.baseline}: its git history cannot be read at ${ref} (${h.error})`);
        else ({ commits, more } = h);
      }
    }
    const names = commits.filter((c) => c.blob).map((c) => c.blob!);
    const branches = historyText === null && !opts.file ? (opts.branches ?? HISTORY_BRANCHES) : [];
    const batch = catFileBatch(top, [...names, ...branches.map((b) => `${b}:${HISTORY_PATH}`)]);
    if ('error' in batch) notes.push(`git cat-file: ${batch.error}: the baseline's versions and the history branch are not read`);
    else {
      const blobs = batch.blobs;
      const badVersions: string[] = [];
      let k = 0;
      for (const c of commits) {
        if (!c.blob) continue;
        const text = blobs[k++];
        if (!text) continue;
        const at = `${opts.baseline} at ${short(c.commit)}`;
        try {
          const b = parseBaselineText(text.toString('utf8'), at);
          points.push(
            pointFromBaseline(
              b,
              { repo, run: null, commit: c.commit, date: new Date(c.date).toISOString(), code: null, column: b.column ?? null, judge: null, latency: null, cost: null },
              { kind: 'baseline', where: at, author: c.author, subject: c.subject },
            ),
          );
        } catch (e) {
          if (!isUserError(e)) throw e;
          badVersions.push(`${short(c.commit)} ${c.date.slice(0, 10)}: ${e.message.replace(`${at}: `, '').slice(0, 140)}`);
        }
      }
      if (badVersions.length) notes.push(`${opts.baseline}: ${plural(badVersions.length, 'version')} in git not read (${eg(badVersions, 2)}); the other ${plural(commits.filter((c) => c.blob).length - badVersions.length, 'version')} are`);
      const found = branches.findIndex((_, i) => blobs[names.length + i]);
      if (found >= 0) {
        historyText = blobs[names.length + found]!.toString('utf8');
        historyName = `${branches[found]}:${HISTORY_PATH}`;
      }
    }
    if (rel !== null) {
      baselineInfo = { path: opts.baseline!, commits: commits.length, ref };
      if (shallow)
        notes.push(
          `shallow clone: the git history of ${opts.baseline} stops at ${commits.length ? short(commits[commits.length - 1]!.commit) : ref} (${plural(commits.length, 'commit')} read): fetch the history with \`git fetch --unshallow\` (in GitHub Actions: actions/checkout with fetch-depth: 0)`,
        );
      else if (more) notes.push(`${opts.baseline}: the newest ${opts.maxCommits} of its commits are read (--max-commits); older ones are left out`);
    }
  } else if (opts.baseline) notes.push(`${cwd} is not in a git work tree: the baseline's history is not read`);

  if (historyText !== null && historyName) {
    const h = pointsOfHistoryText(historyText, historyName, { repo, tail: opts.tail }, notes);
    historyInfo = { name: historyName, lines: h.lines, points: h.points.length };
    if (opts.checkReachable && repoState && h.points.some((p) => p.commit)) {
      const reach = reachableCommits(repoState.top, ref, 1_000_000);
      const known = (c: string) => reach!.has(c) || (c.length < 40 && [...reach!].some((x) => x.startsWith(c)));
      const lost = reach ? h.points.filter((p) => p.commit && !known(p.commit)) : [];
      if (lost.length)
        notes.push(
          repoState.shallow
            ? `${historyName}: ${plural(lost.length, 'run')} measured commits this shallow clone does not have (${lost.slice(0, 3).map((p) => short(p.commit)).join(', ')}${lost.length > 3 ? ', …' : ''}): fetch the history with \`git fetch --unshallow\``
            : `${historyName}: ${plural(lost.length, 'run')} measured commits that are no longer in the history of ${ref} (${lost.slice(0, 3).map((p) => short(p.commit)).join(', ')}${lost.length > 3 ? ', …' : ''}): the branch was force-pushed or rewritten; their points are kept, the commits between them cannot be named`,
        );
    }
    points.push(...h.points);
  }
  // oldest first; a baseline commit and a run at the same time: the commit first (the run measured it)
  points.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.kind === b.kind ? 0 : a.kind === 'baseline' ? -1 : 1));
  return { points, notes, baseline: baselineInfo, history: historyInfo, repo };
}

/** PATH relative to the work tree's top (git's top is a real path: the folder of PATH is resolved the same way). */
function repoRelative(top: string, cwd: string, path: string): string | null {
  let abs = isAbsolute(path) ? path : resolve(cwd, path);
  try {
    abs = join(realpathSync(dirname(abs)), basename(abs));
  } catch {
    /* a folder that does not exist: as given */
  }
  const rel = relative(top, abs);
  if (!rel || rel.startsWith('..') || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

const id12 = (s: string | null | undefined) => (s ? s.slice(0, 12) : 'unknown');
const setting = (c: Record<string, unknown>, k: string) => `${k}=${c[k] === undefined ? '(default)' : typeof c[k] === 'string' ? c[k] : JSON.stringify(c[k])}`;

/**
 * What changed between two points in what they were measured on, one phrase each (the trend page's markers, the
 * table's last column): the corpus, the golden set, the judge, the provider settings. A side that does not record one
 * (an older baseline, no judge recorded) is not compared: unknown is not a change.
 */
export function pointChanges(prev: Point, cur: Point): string[] {
  const out: string[] = [];
  if (prev.corpus && cur.corpus && (prev.corpus.id !== cur.corpus.id || prev.corpus.path !== cur.corpus.path))
    out.push(
      prev.corpus.path !== cur.corpus.path
        ? `corpus ${prev.corpus.path ?? 'unknown'} -> ${cur.corpus.path ?? 'unknown'}`
        : `corpus ${cur.corpus.path ?? ''} ${id12(prev.corpus.id)} -> ${id12(cur.corpus.id)}`.replace('  ', ' '),
    );
  if (prev.golden && cur.golden && prev.golden.id && cur.golden.id && prev.golden.id !== cur.golden.id)
    out.push(`golden set ${prev.golden.id.slice(0, 8)} (${prev.golden.size} queries) -> ${cur.golden.id.slice(0, 8)} (${cur.golden.size} queries)`);
  if (prev.judge && cur.judge && prev.judge !== cur.judge) out.push(`judge ${prev.judge.replace(/^judge: /, '')} -> ${cur.judge.replace(/^judge: /, '')}`);
  if (prev.config && cur.config) {
    const keys = [...new Set([...Object.keys(prev.config), ...Object.keys(cur.config)])].filter((k) => JSON.stringify(prev.config![k]) !== JSON.stringify(cur.config![k])).sort();
    if (keys.length) out.push(`provider config ${keys.map((k) => setting(prev.config!, k)).join(', ')} -> ${keys.map((k) => setting(cur.config!, k)).join(', ')}`);
  }
  return out;
}
