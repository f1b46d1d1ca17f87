/**
 * Files as the base branch of a pull request has them (`git show REF:PATH`): what a pull request is judged by comes
 * from there, never from the pull request's own tree (docs/gate.md, "What a pull request can change").
 *
 * The base ref comes from `--base-ref REF`, else RANKGATE_BASE_REF, else, on a GitHub Actions pull_request event
 * (GITHUB_EVENT_NAME pull_request or pull_request_target with GITHUB_BASE_REF), `origin/<GITHUB_BASE_REF>`: a gate that
 * runs on a pull request without its base is exit 2 ("fetch it"), never a gate against the pull request's own files.
 * `--base-ref none` (or RANKGATE_BASE_REF=none) says on purpose that there is none.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UserError } from '../errors.ts';

export const BASE_REF_ENV = 'RANKGATE_BASE_REF';
/** The largest file read from a ref (golden sets, floors, baselines): past it, one line, exit 2. */
export const MAX_GIT_FILE_BYTES = 256 * 1024 * 1024;

export interface BaseRef {
  ref: string;
  /** Where the ref came from, for the verdict: `--base-ref`, RANKGATE_BASE_REF, or the pull_request event. */
  source: string;
}

/** The LOUD line of a gate told `none` while GitHub says this is a pull request (it then judges the PR by its own files). */
export function noBaseNote(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  const event = env.GITHUB_EVENT_NAME;
  const none = flag?.trim() === 'none' || (flag === undefined && env[BASE_REF_ENV]?.trim() === 'none');
  return none && (event === 'pull_request' || event === 'pull_request_target')
    ? `LOUD: no base ref (${flag !== undefined ? '--base-ref' : BASE_REF_ENV} none) on a ${event} event: this pull request is judged by its own floors, golden set and baseline`
    : null;
}

/** The base ref this gate judges against, or null (no pull request, or `none` on purpose). */
export function baseRefFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): BaseRef | null {
  const pick = (v: string | undefined, source: string): BaseRef | null | undefined => {
    if (v === undefined || v.trim() === '') return undefined;
    const ref = v.trim();
    if (ref === 'none') return null;
    // a ref is never an option or a revision range: `git show` would read it as one
    if (ref.startsWith('-') || /[\s:^~]|\.\./.test(ref.replace(/~\d+$|\^\d*$/, '')) || ref.includes('\0'))
      throw new UserError(`${source}: ${JSON.stringify(ref)} is not a git ref (expected a branch such as origin/main, a tag or a commit)`);
    return { ref, source };
  };
  const a = pick(flag, '--base-ref');
  if (a !== undefined) return a;
  const b = pick(env[BASE_REF_ENV], BASE_REF_ENV);
  if (b !== undefined) return b;
  const event = env.GITHUB_EVENT_NAME;
  if ((event === 'pull_request' || event === 'pull_request_target') && env.GITHUB_BASE_REF?.trim()) {
    const c = pick(`origin/${env.GITHUB_BASE_REF.trim()}`, `GITHUB_BASE_REF (a ${event} event)`);
    if (c !== undefined) return c;
  }
  return null;
}

let spawned = 0;
/** How many git processes this process has started (the history bench prints it: one per pass, never one per commit). */
export const gitProcessCount = (): number => spawned;

const GIT_ENV = (): NodeJS.ProcessEnv => ({ ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' });

function git(args: string[], cwd: string, maxBuffer = 64 * 1024 * 1024): { ok: true; out: Buffer } | { ok: false; err: string; code: number | null } {
  spawned++;
  try {
    return { ok: true, out: execFileSync('git', args, { cwd, maxBuffer, stdio: ['ignore', 'pipe', 'pipe'], env: GIT_ENV() }) };
  } catch (e) {
    const x = e as { stderr?: Buffer; status?: number | null; code?: string; message: string };
    if (x.code === 'ENOENT') return { ok: false, err: 'git is not installed', code: null };
    if (x.code === 'ENOBUFS') return { ok: false, err: `larger than ${maxBuffer} bytes`, code: null };
    return { ok: false, err: (x.stderr?.toString('utf8') || x.message).trim().split('\n')[0]!, code: x.status ?? null };
  }
}

/** The top of the git work tree holding `cwd`, or null outside one. */
export function gitTop(cwd = process.cwd()): string | null {
  const r = git(['rev-parse', '--show-toplevel'], cwd);
  return r.ok ? r.out.toString('utf8').trim() : null;
}

/** The work tree holding `cwd` and whether its clone is shallow (`fetch-depth: 1`), in one git call; null outside one. */
export function gitRepo(cwd = process.cwd()): { top: string; shallow: boolean } | null {
  const r = git(['rev-parse', '--show-toplevel', '--is-shallow-repository'], cwd);
  if (!r.ok) return null;
  const [top, shallow] = r.out.toString('utf8').trim().split('\n');
  return top ? { top, shallow: shallow === 'true' } : null;
}

/** One commit that changed a file (src/history): the file's blob there, null when the commit deleted it. */
export interface FileCommit {
  commit: string;
  /** Committer date, ISO 8601: when the change landed on the branch. */
  date: string;
  author: string;
  subject: string;
  blob: string | null;
}

/**
 * The commits of `rev` that changed PATH (repository-relative), newest first, along the first parent (the branch as
 * merged: a merge commit's change is its diff against the first parent), each with the blob of PATH there: ONE
 * `git log` whatever the number of commits. At most `max` commits; `more` when older ones exist.
 */
export function fileHistory(top: string, rev: string, path: string, max: number): { commits: FileCommit[]; more: boolean } | { error: string } {
  const r = git(
    ['--literal-pathspecs', 'log', '--first-parent', '-m', '--no-renames', '--raw', '--no-abbrev', `--max-count=${max + 1}`, '--format=%x1e%H%x1f%cI%x1f%an%x1f%s', rev, '--', path],
    top,
    256 * 1024 * 1024,
  );
  if (!r.ok) return { error: r.err };
  const commits: FileCommit[] = [];
  for (const rec of r.out.toString('utf8').split('\x1e')) {
    if (!rec.trim()) continue;
    const [head, ...rest] = rec.split('\n');
    const [commit, date, author, subject] = head!.split('\x1f');
    if (!commit || !/^[0-9a-f]{40,64}$/.test(commit)) continue;
    // `:100644 100644 <old> <new> M\t<path>` (the pathspec names one file): the new blob; a deletion names the zero id
    const raw = rest.find((l) => l.startsWith(':'));
    const blob = raw ? raw.split(' ')[3] ?? null : null;
    commits.push({ commit, date: date ?? '', author: author ?? '', subject: subject ?? '', blob: blob && !/^0+$/.test(blob) ? blob : null });
  }
  return { commits: commits.slice(0, max), more: commits.length > max };
}

/**
 * Objects by name (`<blob id>`, `<rev>:<path>`) through ONE `git cat-file --batch` process: each one's content, or
 * null when the name is missing or not a blob. `maxBytes` bounds the whole answer (an error past it).
 */
export function catFileBatch(top: string, names: readonly string[], maxBytes = MAX_GIT_FILE_BYTES): { blobs: (Buffer | null)[] } | { error: string } {
  if (!names.length) return { blobs: [] };
  if (names.some((n) => /[\n\0]/.test(n))) return { error: 'an object name holds a line break' };
  spawned++;
  const r = spawnSync('git', ['cat-file', '--batch'], { cwd: top, input: names.join('\n') + '\n', maxBuffer: maxBytes, env: GIT_ENV() });
  if (r.error) return { error: (r.error as NodeJS.ErrnoException).code === 'ENOBUFS' ? `larger than ${maxBytes} bytes` : r.error.message };
  if (r.status !== 0) return { error: (r.stderr?.toString('utf8') || `exit ${r.status}`).trim().split('\n')[0]! };
  const out = r.stdout;
  const blobs: (Buffer | null)[] = [];
  let at = 0;
  for (let i = 0; i < names.length; i++) {
    const nl = out.indexOf(10, at);
    if (nl < 0) return { error: `git cat-file --batch answered ${i} of ${names.length} objects` };
    const head = out.subarray(at, nl).toString('utf8');
    at = nl + 1;
    const m = /^([0-9a-f]+) (\w+) (\d+)$/.exec(head);
    if (!m) {
      blobs.push(null); // `<name> missing` / `ambiguous`
      continue;
    }
    const size = Number(m[3]);
    blobs.push(m[2] === 'blob' ? out.subarray(at, at + size) : null);
    at += size + 1;
  }
  return { blobs };
}

/** The commits reachable from `rev` (at most `max`): ONE `git rev-list`; null when git cannot list them. */
export function reachableCommits(top: string, rev: string, max: number): Set<string> | null {
  const r = git(['rev-list', `--max-count=${max}`, rev, '--'], top, 256 * 1024 * 1024);
  return r.ok ? new Set(r.out.toString('utf8').split('\n').filter(Boolean)) : null;
}

/** The commit `rev` names in the repository at `top` (40 hex), or null. */
export function commitOf(top: string, rev = 'HEAD'): string | null {
  const r = git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], top);
  return r.ok ? r.out.toString('utf8').trim() || null : null;
}

/** `owner/name` of a remote's URL (https, ssh or a path: its last two segments), or null without that remote. */
export function remoteRepo(top: string, remote = 'origin'): string | null {
  const r = git(['config', '--get', `remote.${remote}.url`], top);
  return r.ok ? repoOfUrl(r.out.toString('utf8').trim()) : null;
}

export function repoOfUrl(url: string): string | null {
  const path = url.replace(/^[a-z+]+:\/\/[^/]*\//i, '').replace(/^[^@/]+@[^:]+:/, '').replace(/\.git\/?$/, '').replace(/\/+$/, '');
  const parts = path.split('/').filter(Boolean);
  return parts.length >= 2 ? parts.slice(-2).join('/') : parts[0] ?? null;
}

/** Files of one commit: `read(path)` gives a file's text there, or null when the commit has no such file. */
export interface RefReader {
  ref: string;
  /** The commit the ref names (40 hex). */
  commit: string;
  /** Short description for people: `origin/main (a1b2c3d)`. */
  name: string;
  /** The text of PATH (relative to the working directory, or absolute inside the work tree) at the ref; null when absent there. */
  read(path: string): string | null;
  /** Repository-relative form of a path, or null when it lies outside the work tree. */
  repoPath(path: string): string | null;
  /**
   * Copy PATH (a file, or a folder such as a BEIR folder) as the ref has it into DEST (DEST/<basename of PATH>); returns
   * the copy's path, or null when the ref has no such path.
   */
  materialize(path: string, dest: string): string | null;
}

/** The most files a folder copied from a ref may hold (a golden folder: BEIR holds three). */
export const MAX_TREE_FILES = 10_000;

/**
 * A reader of the base ref's files. Exit 2 (UserError) when there is no git work tree, or the ref is not in this clone
 * (a shallow checkout of the pull request only): the message says how to fetch it.
 */
export function refReader(base: BaseRef, cwd = process.cwd()): RefReader {
  const top = gitTop(cwd);
  if (!top) throw new UserError(`${base.source}: base ref '${base.ref}' given, but ${cwd} is not in a git work tree: the gate reads the floors, the golden set and the baseline of the base branch with git`);
  const v = git(['rev-parse', '--verify', '--quiet', `${base.ref}^{commit}`], top);
  if (!v.ok) {
    const shallow = git(['rev-parse', '--is-shallow-repository'], top);
    const isShallow = shallow.ok && shallow.out.toString('utf8').trim() === 'true';
    throw new UserError(
      `${base.source}: base ref '${base.ref}' is not in this clone${isShallow ? ' (a shallow clone)' : ''}: fetch it first ` +
        `(actions/checkout with fetch-depth: 0, or git fetch --no-tags origin ${base.ref.replace(/^origin\//, '')}); ` +
        'the gate judges a pull request by the base branch\'s floors, golden set and baseline, never by its own',
    );
  }
  const commit = v.out.toString('utf8').trim();
  // a pull request judged by its own commit is not judged by its base (a ref moved, or a base named wrong)
  const event = process.env.GITHUB_EVENT_NAME;
  if (event === 'pull_request' || event === 'pull_request_target') {
    const head = git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], top);
    if (head.ok && head.out.toString('utf8').trim() === commit)
      throw new UserError(`${base.source}: base ref '${base.ref}' is the commit under test (${commit.slice(0, 7)}): a pull request is judged by its base branch, not by itself (pass github.event.pull_request.base.sha)`);
  }
  const repoPath = (p: string): string | null => {
    const abs = isAbsolute(p) ? p : resolve(cwd, p);
    const rel = relative(top, abs);
    if (!rel || rel.startsWith('..') || isAbsolute(rel)) return null;
    return rel.split(sep).join('/');
  };
  const cache = new Map<string, string | null>();
  const kindOf = (rel: string): string | null => {
    const t = git(['cat-file', '-t', `${commit}:${rel}`], top);
    return t.ok ? t.out.toString('utf8').trim() : null;
  };
  const blob = (rel: string): Buffer => {
    const r = git(['cat-file', 'blob', `${commit}:${rel}`], top, MAX_GIT_FILE_BYTES);
    if (!r.ok) throw new UserError(`${base.ref}:${rel}: cannot read it at the base ref (${r.err})`);
    return r.out;
  };
  return {
    ref: base.ref,
    commit,
    name: `${base.ref} (${commit.slice(0, 7)})`,
    repoPath,
    read(path: string): string | null {
      const rel = repoPath(path);
      if (rel === null) return null;
      if (cache.has(rel)) return cache.get(rel)!;
      const kind = kindOf(rel);
      if (kind !== null && kind !== 'blob') throw new UserError(`${base.ref}:${rel}: expected a file at the base ref, found a ${kind}`);
      const text = kind === null ? null : blob(rel).toString('utf8');
      cache.set(rel, text);
      return text;
    },
    materialize(path: string, dest: string): string | null {
      const rel = repoPath(path);
      if (rel === null) return null;
      const kind = kindOf(rel);
      if (kind === null) return null;
      const out = join(dest, basename(rel));
      if (kind === 'blob') {
        writeFileSync(out, blob(rel));
        return out;
      }
      if (kind !== 'tree') throw new UserError(`${base.ref}:${rel}: expected a file or a folder at the base ref, found a ${kind}`);
      const ls = git(['ls-tree', '-r', '-z', '--name-only', `${commit}:${rel}`], top);
      if (!ls.ok) throw new UserError(`${base.ref}:${rel}: cannot list the folder at the base ref (${ls.err})`);
      const names = ls.out.toString('utf8').split('\0').filter(Boolean);
      if (names.length > MAX_TREE_FILES) throw new UserError(`${base.ref}:${rel}: the folder holds ${names.length} files at the base ref, more than the ${MAX_TREE_FILES} a golden folder may hold`);
      for (const n of names) {
        const f = join(out, ...n.split('/'));
        mkdirSync(dirname(f), { recursive: true });
        writeFileSync(f, blob(`${rel}/${n}`));
      }
      mkdirSync(out, { recursive: true });
      return out;
    },
  };
}
