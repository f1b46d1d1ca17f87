/**
 * The toolchain a run stands on: the Node at hand and the promptfoo the repository's own `npx promptfoo` runs.
 *
 * One promptfoo per repository: `rankgate eval`, `rankgate init` and the verdict all resolve promptfoo from the
 * project first (the current folder's node_modules, upwards, the way `npx promptfoo` finds its binary), then
 * rankgate's own copy. Whether that promptfoo starts on this Node is read from its `engines.node`, with the small
 * range reader below (the `^a.b.c || >=x.y.z` forms npm packages state); a range it cannot read fails closed.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { UserError } from '../errors.ts';
import { packageDirNamed, packageRoot } from './package-root.ts';

/** What the verdict records: Node's and promptfoo's versions (null: not known, e.g. a results file that does not say). */
export interface Toolchain {
  node: string | null;
  promptfoo: string | null;
}

export interface PromptfooInstall {
  /** the package's folder */
  dir: string;
  version: string;
  /** its engines.node, null when it states none */
  engines: string | null;
  /** its CLI entry point (package.json bin.promptfoo) */
  bin: string;
  /** 'project': the repository's own, as `npx promptfoo` runs it; 'rankgate': the copy rankgate itself depends on */
  from: 'project' | 'rankgate';
}

type Version = { n: [number, number, number]; pre: string[] };

/** `1.2.3`, `v1.2.3`, `1.2.3-rc.1+build`; null otherwise. */
export function parseVersion(v: string): Version | null {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(v.trim());
  if (!m) return null;
  return { n: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4] ? m[4].split('.') : [] };
}

/** semver order: numbers, then a prerelease below its release, identifiers numeric < alphanumeric. */
function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.n[i] !== b.n[i]) return a.n[i]! < b.n[i]! ? -1 : 1;
  if (!a.pre.length || !b.pre.length) return a.pre.length === b.pre.length ? 0 : a.pre.length ? -1 : 1;
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i];
    const y = b.pre[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) return Number(x) < Number(y) ? -1 : 1;
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

type Comparator = { op: '>=' | '<' | '>' | '<=' | '='; v: Version };
const v3 = (a: number, b: number, c: number, pre: string[] = []): Version => ({ n: [a, b, c], pre });
/** The lowest version of a release line: upper bounds exclude the next line's prereleases too (semver's `-0`). */
const FLOOR = ['0'];

/** One comparator of a range (`>=22.22.0`, `^20.20.0`, `~1.2`, `20`, `20.x`, `*`) as bounds; null when unreadable. */
function comparators(token: string): Comparator[] | null {
  const m = /^(>=|<=|>|<|=|\^|~)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(token);
  if (!m) return token === '*' || token === 'x' ? [] : null;
  const op = m[1] ?? '';
  const parts = [m[2], m[3], m[4]];
  const wild = (p: string | undefined) => p === undefined || /^[xX*]$/.test(p);
  const known = parts.findIndex(wild);
  const k = known === -1 ? 3 : known; // how many leading parts are numbers
  if (parts.slice(k).some((p) => p !== undefined && !wild(p))) return null; // 1.x.3
  const [a, b, c] = parts.map((p) => (wild(p) ? 0 : Number(p))) as [number, number, number];
  const pre = m[5] ? m[5].split('.') : [];
  if (pre.length && k < 3) return null;
  const lo = v3(a, b, c, pre);
  const next = (i: number): Version => (i === 0 ? v3(a + 1, 0, 0, FLOOR) : i === 1 ? v3(a, b + 1, 0, FLOOR) : v3(a, b, c + 1, FLOOR));
  if (k === 0) return op === '<' || op === '>' ? [{ op: '<', v: v3(0, 0, 0, FLOOR) }] : []; // * (and <*: nothing)
  switch (op) {
    case '':
    case '=':
      return k === 3 ? [{ op: '=', v: lo }] : [{ op: '>=', v: lo }, { op: '<', v: next(k - 1) }];
    case '>=':
      return [{ op: '>=', v: lo }];
    case '>':
      return k === 3 ? [{ op: '>', v: lo }] : [{ op: '>=', v: next(k - 1) }];
    case '<':
      // `<0.124.0` keeps out 0.124.0's prereleases too (fail closed: a release beyond the bound is not in it)
      return [{ op: '<', v: pre.length ? lo : v3(a, b, c, FLOOR) }];
    case '<=':
      return k === 3 ? [{ op: '<=', v: lo }] : [{ op: '<', v: next(k - 1) }];
    case '~':
      return [{ op: '>=', v: lo }, { op: '<', v: next(k === 1 ? 0 : 1) }];
    case '^': {
      // the left-most non-zero part is held; ^0.0.x only the patch; ^0.x / ^0 the minor / major
      const hold = a > 0 || k === 1 ? 0 : b > 0 || k === 2 ? 1 : 2;
      return [{ op: '>=', v: lo }, { op: '<', v: next(hold) }];
    }
  }
  return null;
}

function test(v: Version, c: Comparator): boolean {
  const d = compare(v, c.v);
  return c.op === '>=' ? d >= 0 : c.op === '>' ? d > 0 : c.op === '<' ? d < 0 : c.op === '<=' ? d <= 0 : d === 0;
}

/**
 * Whether `version` satisfies the npm range `range` (prereleases included, as npm checks engines); null when either
 * cannot be read (hyphen ranges and other forms this reader does not know: the caller fails closed).
 */
export function satisfies(version: string, range: string): boolean | null {
  const v = parseVersion(version);
  if (!v) return null;
  const sets = range.trim().split('||');
  let any = false;
  for (const set of sets) {
    // `>= 20` is one comparator; `1.2.3 - 2.0.0` (hyphen range) is not read
    const tokens = set.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    if (tokens.includes('-')) return null;
    const cs: Comparator[] = [];
    for (const t of tokens.length ? tokens : ['*']) {
      const c = comparators(t);
      if (!c) return null;
      cs.push(...c);
    }
    if (cs.every((c) => test(v, c))) any = true;
  }
  return any;
}

/** The promptfoo package above `entry` (a file resolved inside it): its folder, or null. */
function packageDirOf(entry: string): string | null {
  return packageDirNamed(dirname(entry), 'promptfoo', /[\\/]node_modules[\\/]promptfoo$/);
}

/** The promptfoo package in `dir`, read; a broken package.json is exit 2 naming the file. */
export function readPromptfooPackage(dir: string, from: PromptfooInstall['from']): PromptfooInstall {
  const pj = join(dir, 'package.json');
  let pkg: { version?: unknown; engines?: { node?: unknown } | null; bin?: unknown };
  try {
    pkg = JSON.parse(readFileSync(pj, 'utf8')) as typeof pkg;
    if (!pkg || typeof pkg !== 'object') throw new Error('not an object');
  } catch (e) {
    throw new UserError(`${pj}: cannot read promptfoo's package.json (${(e as NodeJS.ErrnoException).code ?? (e as Error).message.split('\n')[0]}); reinstall promptfoo (npm ci)`, 2);
  }
  if (typeof pkg.version !== 'string' || !pkg.version) throw new UserError(`${pj}: version: expected promptfoo's version string, got ${JSON.stringify(pkg.version)}; reinstall promptfoo (npm ci)`, 2);
  const e = pkg.engines?.node;
  const bin = typeof pkg.bin === 'string' ? pkg.bin : typeof (pkg.bin as { promptfoo?: unknown } | undefined)?.promptfoo === 'string' ? (pkg.bin as { promptfoo: string }).promptfoo : 'dist/src/entrypoint.js';
  return { dir, version: pkg.version, engines: e === undefined || e === null ? null : typeof e === 'string' ? e : JSON.stringify(e), bin: join(dir, bin), from };
}

/** promptfoo's folder as require() finds it from `base`; a node_modules/promptfoo that cannot be resolved (broken) too. */
function resolveFrom(base: string): string | null {
  try {
    return packageDirOf(createRequire(join(base, 'package.json')).resolve('promptfoo'));
  } catch {
    // a package.json that is missing or not JSON: the install is there but broken (said by readPromptfooPackage)
    for (let d = base; ; d = dirname(d)) {
      if (existsSync(join(d, 'node_modules', 'promptfoo'))) return join(d, 'node_modules', 'promptfoo');
      if (dirname(d) === d) return null;
    }
  }
}

/**
 * The promptfoo a repository runs: the project's own (from `projectDir` upwards, as `npx promptfoo` finds it), else
 * rankgate's own copy; null when neither is installed.
 */
export function resolvePromptfoo(projectDir: string = process.cwd()): PromptfooInstall | null {
  const own = resolveFrom(projectDir);
  if (own) return readPromptfooPackage(own, 'project');
  const ours = resolveFrom(packageRoot(import.meta.url));
  return ours ? readPromptfooPackage(ours, 'rankgate') : null;
}

/** The range of promptfoo releases rankgate is tested with (its package.json peerDependencies). */
export function testedPromptfooRange(): string | null {
  try {
    const pkg = JSON.parse(readFileSync(join(packageRoot(import.meta.url), 'package.json'), 'utf8')) as { peerDependencies?: Record<string, string> };
    return pkg.peerDependencies?.promptfoo ?? null;
  } catch {
    return null;
  }
}

const nodeVersion = (v: string) => v.replace(/^v/, '');

/** The toolchain of this process with promptfoo `pf`. */
export function toolchainOf(pf: Pick<PromptfooInstall, 'version'> | null, node: string = process.version): Toolchain {
  return { node: nodeVersion(node), promptfoo: pf?.version ?? null };
}

/**
 * The toolchain of the promptfoo process this code runs in (the afterAll hook of `npx promptfoo eval`): the promptfoo
 * whose CLI started the process, else the project's; promptfoo null when neither can be read (never throws).
 */
export function runningToolchain(): Toolchain {
  let pf: PromptfooInstall | null = null;
  try {
    const started = process.argv[1] ? packageDirOf(realpathSync(process.argv[1])) : null;
    pf = started ? readPromptfooPackage(started, 'project') : resolvePromptfoo();
  } catch {
    pf = null;
  }
  return toolchainOf(pf);
}

/** A results file's own record of its toolchain (promptfoo's output JSON `metadata`), null when it has none. */
export function toolchainOfOutput(metadata: unknown): Toolchain | null {
  const m = metadata as { promptfooVersion?: unknown; nodeVersion?: unknown } | null | undefined;
  if (!m || typeof m !== 'object' || typeof m.promptfooVersion !== 'string') return null;
  return { node: typeof m.nodeVersion === 'string' ? nodeVersion(m.nodeVersion) : null, promptfoo: m.promptfooVersion };
}

/** Which of the LTS lines 20, 22, 24 (their newest releases) a promptfoo's engines.node accepts; null when unreadable. */
export function acceptedLines(engines: string | null): number[] | null {
  const out: number[] = [];
  for (const major of [20, 22, 24]) {
    const ok = engines === null ? true : satisfies(`${major}.999.0`, engines);
    if (ok === null) return null;
    if (ok) out.push(major);
  }
  return out;
}

/**
 * Why promptfoo `pf` cannot start on Node `node` (one line naming both versions and what to do), null when it can.
 * An engines range this reader cannot read is a reason too (fail closed).
 */
export function startProblem(pf: PromptfooInstall, node: string = process.version): string | null {
  if (pf.engines === null) return null;
  const ok = satisfies(nodeVersion(node), pf.engines);
  const where = pf.from === 'project' ? 'the project\'s promptfoo' : 'rankgate\'s own promptfoo';
  if (ok === null)
    return `${where} ${pf.version} (${pf.dir}) states engines.node '${pf.engines}', which rankgate cannot read against Node ${nodeVersion(node)}: check that it runs on this Node (npx promptfoo --version) and install a promptfoo release rankgate is tested with (${testedPromptfooRange() ?? 'see docs/adopting.md'})`;
  if (ok) return null;
  const lines = acceptedLines(pf.engines) ?? [];
  const onTwenty = /^20\./.test(nodeVersion(node)) ? '; on Node 20, install the last promptfoo that runs there: npm i -D promptfoo@0.121.20' : '';
  return (
    `${where} ${pf.version} requires Node ${pf.engines} and this is Node ${nodeVersion(node)}: it cannot start here. ` +
    `Run on ${lines.length ? `Node ${lines.join(' or ')}` : 'a Node it accepts'} (in CI: actions/setup-node node-version)${onTwenty}`
  );
}

/**
 * The Node line a CI workflow should set up for promptfoo `engines`: the running Node's line when promptfoo accepts
 * it (and it is an LTS line 20/22/24), else the lowest of 20/22/24 it accepts; `why` says which, for a comment.
 */
export function ciNodeFor(pf: Pick<PromptfooInstall, 'version' | 'engines'> | null, node: string = process.version): { major: number; why: string } {
  const running = Number(nodeVersion(node).split('.')[0]);
  const nv = nodeVersion(node);
  if (!pf) return { major: [20, 22, 24].includes(running) ? running : 22, why: `no promptfoo installed in the repository when rankgate init ran: Node ${nv}'s line; install promptfoo and run init again to check` };
  const e = pf.engines;
  const onRunning = e === null ? true : satisfies(nv, e);
  if (onRunning && [20, 22, 24].includes(running)) return { major: running, why: `the Node running rankgate init (${nv}), which promptfoo ${pf.version} accepts (engines ${e ?? 'unstated'})` };
  const lines = acceptedLines(e);
  if (lines && lines.length) return { major: lines[0]!, why: `the lowest of Node 20/22/24 that promptfoo ${pf.version} accepts (engines ${e})${onRunning === false ? `; the Node running rankgate init (${nv}) is outside it` : ''}` };
  return { major: [20, 22, 24].includes(running) ? running : 22, why: `promptfoo ${pf.version}'s engines '${e}' accept none of Node 20/22/24 that rankgate can read: check which Node it needs` };
}
