/**
 * Files as the base branch of a pull request has them (`git show REF:PATH`): what a pull request is judged by comes
 * from there, never from the pull request's own tree (docs/gate.md, "What a pull request can change").
 *
 * The base ref comes from `--base-ref REF`, else RANKGATE_BASE_REF, else, on a GitHub Actions pull_request event
 * (GITHUB_EVENT_NAME pull_request or pull_request_target with GITHUB_BASE_REF), `origin/<GITHUB_BASE_REF>`: a gate that
 * runs on a pull request without its base is exit 2 ("fetch it"), never a gate against the pull request's own files.
 * `--base-ref none` (or RANKGATE_BASE_REF=none) says on purpose that there is none.
 */
import { execFileSync } from 'node:child_process';
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

function git(args: string[], cwd: string, maxBuffer = 64 * 1024 * 1024): { ok: true; out: Buffer } | { ok: false; err: string; code: number | null } {
  try {
    return { ok: true, out: execFileSync('git', args, { cwd, maxBuffer, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0' } }) };
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
