/**
 * What a pull request is judged by comes from its base branch (src/util/git.ts reads the base ref's files):
 *
 * - the floors file (config/gate.yaml, or the one named): the base's version is applied; the pull request's own
 *   version applies after the merge, and every difference is said LOUD with before/after;
 * - the baseline: the one the BASE floors name, as the base has it (the pull request's copy, changed or not, is only
 *   compared with it);
 * - the golden set's expectations, per query id (expected documents and passages with their grades, routes, the safety
 *   flag, category, language, filters, expansion strings): a query the base has is scored by the base's expectations
 *   whatever the pull request's golden file now says, and each changed query is named LOUD with its changes; queries
 *   the pull request adds are scored by their own expectations and said as added.
 *
 * A file the base branch does not have (the pull request that adopts rankgate) is judged by the pull request's own
 * version, said LOUD. The threat model is in docs/gate.md ("What a pull request can change").
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../errors.ts';
import { expectationChanges, goldenAtRef } from '../golden/at-ref.ts';
import type { GoldenQuery } from '../golden/schema.ts';
import type { Column } from '../results/read.ts';
import { loadEvalLabels, type EvalLabels } from '../judgments/eval-input.ts';
import type { RefReader } from '../util/git.ts';
import { canonicalJson } from '../util/seal.ts';
import { loadYaml } from '../util/yaml.ts';
import { baselineChangeLine, parseBaselineText, readBaseline, type Baseline } from './baseline.ts';
import { DEFAULT_FLOORS, DEFAULT_REGRESSION, loadFloors, parseFloors, readAgreementKappaText, type Floors } from './floors.ts';

const show = (x: unknown) => (x === undefined ? '(unset)' : typeof x === 'string' ? x : JSON.stringify(x));

/** Every leaf of a floors object as `dotted.key -> value` (lists as one value). */
function leaves(x: unknown, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (x && typeof x === 'object' && !Array.isArray(x)) {
    for (const k of Object.keys(x as Record<string, unknown>).sort()) {
      const v = (x as Record<string, unknown>)[k];
      // what loadFloors derives from another file (the judge agreement's kappa) is not a setting
      if (prefix === 'judge.' && (k === 'kappa' || k === 'problem')) continue;
      leaves(v, `${prefix}${k}.`, out);
    }
  } else if (x !== undefined) out.set(prefix.slice(0, -1), x);
  return out;
}

export { expectationChanges };

/** The settings two floors differ in, as `key before -> after`. */
export function floorsDiff(before: Floors, after: Floors): string[] {
  const a = leaves(before);
  const b = leaves(after);
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
  return keys.filter((k) => canonicalJson(a.get(k)) !== canonicalJson(b.get(k))).map((k) => `${k} ${show(a.get(k))} -> ${show(b.get(k))}`);
}

export interface FloorsAtBase {
  floors: Floors;
  /** Where they came from, for the verdict: `config/gate.yaml at origin/main (a1b2c3d)`. */
  source: string;
  loud: string[];
}

/**
 * The floors a pull request is judged by: the base's `floorsPath` (its judge agreement file read at the base too),
 * with the pull request's changes said LOUD. `own` is the pull request's version (null when it has none; an Error
 * when it does not parse). When the base has no such file, the pull request's own floors apply, said LOUD.
 */
export function floorsAtBase(base: RefReader, floorsPath: string, own: Floors | Error | null, defaults: Floors): FloorsAtBase {
  const text = base.read(floorsPath);
  const where = `${floorsPath} at ${base.name}`;
  if (text === null) {
    if (own instanceof Error) throw own;
    return {
      floors: own ?? defaults,
      source: own ? floorsPath : 'the built-in floors',
      loud: own ? [`LOUD: this pull request ADDS the floors file ${floorsPath} (the base branch ${base.name} has none): judged by the pull request's own floors; review them before merging`] : [],
    };
  }
  let floors: Floors;
  try {
    floors = parseFloors(loadYaml(text, where), where);
  } catch (e) {
    throw new UserError(`the base branch's floors are not valid (${(e as Error).message}): fix them on the base branch first; a pull request is judged by them`, 2);
  }
  if (floors.judge) Object.assign(floors.judge, readAgreementKappaText(floors.judge.agreement, base.read(floors.judge.agreement), base.name));
  const loud: string[] = [];
  // floors that would not read after the merge are exit 2 now (the eval's beforeAll refuses them the same way)
  if (own instanceof Error) throw new UserError(`this pull request's floors file ${floorsPath} is not valid: ${own.message}; it would apply after the merge`, 2);
  if (own === null) loud.push(`LOUD: this pull request DELETES the floors file ${floorsPath}; judged by the base branch's (${base.name})`);
  else {
    const d = floorsDiff(floors, own);
    if (d.length) loud.push(`LOUD: this pull request CHANGES the floors: ${d.join('; ')} (${floorsPath}); judged by the base branch's (${base.name}), the new ones apply after the merge`);
  }
  return { floors, source: where, loud };
}

export interface BaselineAtBase {
  baseline: { path: string; data: Baseline } | null;
  notes: string[];
}

/** The baseline at the base ref (the path the base floors name), or null with the reason. */
export function baselineAtBase(base: RefReader, path: string): BaselineAtBase {
  const text = base.read(path);
  const where = `${path} at ${base.name}`;
  if (text === null) return { baseline: null, notes: [`regression check off: the base branch ${base.name} has no baseline at ${path} (a baseline this pull request adds applies after the merge)`] };
  return { baseline: { path: where, data: parseBaselineText(text, where) }, notes: [] };
}

export interface ExpectationsAtBase {
  /** Query id -> the base's entry, for every query of the run the base has with other judging fields. */
  override: Map<string, GoldenQuery>;
  /** Queries the pull request adds (the base has none of that id): not gated until merged (restrictToBase). */
  added: Set<string>;
  /** The base's judgments file's labels, when the rows were scored with a judgments file (the PR's own never count). */
  labels?: EvalLabels;
  loud: string[];
  notes: string[];
}

const norm = (s: string) => s.trim().replace(/\s+/g, ' ');
const some = (xs: readonly string[], n = 8) => `${xs.slice(0, n).join(', ')}${xs.length > n ? `, … and ${xs.length - n} more` : ''}`;
const qs = (n: number) => `${n} ${n === 1 ? 'query' : 'queries'}`;

/**
 * What a column of a pull request's run is judged by at the base: the base's golden entry of every query it has (looked
 * up by id in every golden file the rows name and every one the base's baseline was measured on, so a renamed or
 * copied golden file changes nothing), the base's judgments file, and what the pull request changed, LOUD. Exit 2
 * (fail closed) when the rows name no golden files or files outside the work tree, when the run is a filter or a shard
 * of the golden set that the base's baseline is not (unless partial runs are accepted), when a query's text changed
 * (an id is never reused for another query, DES-058), and when the base's baseline measures a query whose base
 * expectations cannot be found.
 */
export async function expectationsAtBase(base: RefReader, col: Column, opts: { allowPartial?: boolean; baseline?: Baseline | null } = {}): Promise<ExpectationsAtBase> {
  const files = col.selection?.files;
  if (!files?.length) {
    throw new UserError(
      `column '${col.label}': the rows do not name their golden files (testCase.metadata.selection.files, written by rankgate's tests loader datasets/tests.ts): ` +
        `the pull request's expectations cannot be checked against the base branch ${base.name}; use rankgate's tests loader, or gate without a base ref (--base-ref none) outside pull requests`,
      2,
    );
  }
  const outside = files.filter((f) => base.repoPath(f) === null);
  if (outside.length)
    throw new UserError(`column '${col.label}': the golden file(s) ${outside.join(', ')} lie outside this git work tree: they cannot be read at the base branch ${base.name} (gate in the checkout the eval ran in)`, 2);
  const sel = col.selection!;
  if ((sel.filter || sel.shard) && !opts.allowPartial)
    throw new UserError(
      `column '${col.label}': a pull request is judged on the whole golden set, and this run is ${sel.shard ? `shard ${sel.shard.index}/${sel.shard.count}` : 'a declared filter'} of it (${sel.size} queries): merge the shards (rankgate merge) or run the whole set; --allow-partial accepts it`,
      2,
    );
  // every golden file the base knows of: the rows' and the base baseline's (a copied or renamed file is looked up by id)
  const baseFiles = [...new Set([...files, ...(opts.baseline?.identity?.selection?.files ?? [])])];
  const { byId: baseById, missing } = goldenAtRef(base, baseFiles);
  const override = new Map<string, GoldenQuery>();
  const changed: string[] = [];
  const textChanged: string[] = [];
  const added: string[] = [];
  for (const q of col.queries) {
    const b = baseById.get(q.id);
    if (!b) {
      added.push(q.id);
      continue;
    }
    const d = expectationChanges(b, q.golden);
    if (d.length) {
      override.set(q.id, b);
      changed.push(`${q.id} (${d.join('; ')})`);
    }
    if (norm(b.query) !== norm(q.golden.query)) textChanged.push(q.id);
  }
  if (textChanged.length)
    throw new UserError(
      `this pull request CHANGES the text of ${qs(textChanged.length)} (${some(textChanged)}): an id is never reused for another query (the portal's DES-058 rule); keep the old query and give the new text a new id`,
      2,
    );
  const unknown = added.filter((id) => opts.baseline?.queries[id]);
  if (unknown.length)
    throw new UserError(
      `the base branch's baseline measures ${qs(unknown.length)} (${some(unknown)}) whose expectations are in none of the base's golden files (${baseFiles.join(', ')}): the golden file was renamed or moved; judge it where the base has it`,
      2,
    );
  const loud: string[] = [];
  const notes: string[] = [];
  if (changed.length)
    loud.push(`LOUD: this pull request CHANGES the expectations of ${qs(changed.length)}: ${some(changed)}; judged by the base branch's (${base.name}), the new ones apply after the merge`);
  const newFiles = missing.filter((f) => files.includes(f));
  if (newFiles.length && added.length === col.queries.length)
    loud.push(`LOUD: this pull request ADDS the golden file(s) ${newFiles.join(', ')} and the base branch ${base.name} has none of their queries: judged by their own expectations`);
  else if (newFiles.length) loud.push(`LOUD: this pull request names golden file(s) the base branch ${base.name} does not have: ${newFiles.join(', ')} (its queries of the base's are judged by the base's expectations)`);
  // queries the pull request adds are not gated until merged (easy queries added never raise the figures), unless the
  // base has none of the run's queries (the pull request that brings the golden set)
  const gatedAdded = added.length && added.length < col.queries.length ? new Set(added) : new Set<string>();
  if (gatedAdded.size) {
    const r3 = col.queries.filter((q) => gatedAdded.has(q.id) && q.retrieval && q.error === null).map((q) => q.retrieval!.recall_at_3);
    loud.push(
      `LOUD: this pull request ADDS ${qs(added.length)} (${some(added)}): not gated until merged (the floors and the regression check are on the base branch's ${col.queries.length - added.length})` +
        `${r3.length ? `; their Success@3 ${(r3.reduce((a, x) => a + x, 0) / r3.length).toFixed(4)} over ${r3.length} measured` : ''}`,
    );
  }
  const runIds = new Set(col.queries.map((q) => q.id));
  const dropped = [...baseById.keys()].filter((id) => !runIds.has(id));
  if (dropped.length && !sel.filter && !sel.shard)
    loud.push(`LOUD: this pull request REMOVES ${qs(dropped.length)} of the base branch's golden set from the run: ${some(dropped)} (old queries are never removed)`);
  // the judgments file the rows were scored with: the base's version (a chair label the pull request adds is not a review)
  let labels: EvalLabels | undefined;
  if (col.judgments?.file) {
    const f = col.judgments.file;
    const dir = mkdtempSync(join(tmpdir(), 'rankgate-base-judgments-'));
    try {
      const copy = base.repoPath(f) === null ? null : base.materialize(f, dir);
      const ids = new Set(col.queries.map((q) => q.id));
      labels = copy ? await loadEvalLabels(copy, ids) : { byQuery: new Map(), info: { ...col.judgments, labels: 0, sources: { chair: 0, bootstrap: 0, llm: 0 }, pending: 0, oldest_pending: null } };
      labels.info = { ...labels.info, file: f };
      if (!copy) loud.push(`LOUD: this pull request ADDS the judgments file ${f} (not on the base branch ${base.name}): its labels apply after the merge`);
      else if (labels.info.digest !== col.judgments.digest) loud.push(`LOUD: this pull request CHANGES the judgments file ${f}: judged by the base branch's labels (${base.name}), the new ones apply after the merge`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (added.length && !gatedAdded.size) notes.push(`${qs(added.length)} added by this pull request (not on the base branch ${base.name}; judged by their own expectations): ${some(added)}`);
  return { override, added: gatedAdded, ...(labels ? { labels } : {}), loud, notes };
}

/** How to re-read the results so the base judges them: its entries of the changed queries, its judgments file's labels. */
export function readAtBase<T extends object>(exp: ExpectationsAtBase, readOpts: T): (T & { goldenOverride: Map<string, GoldenQuery>; labels?: EvalLabels }) | null {
  if (!exp.override.size && !exp.labels) return null;
  return { ...readOpts, goldenOverride: exp.override, ...(exp.labels ? { labels: exp.labels } : {}) };
}

/** The column without the queries a pull request adds (the floors and the regression check are on the base's queries). */
export function restrictToBase(col: Column, added: ReadonlySet<string>): Column {
  if (!added.size) return col;
  const queries = col.queries.filter((q) => !added.has(q.id));
  const sel = col.selection ? { ...col.selection, id: null, size: col.selection.size - added.size, ...(col.selection.shardSize !== undefined ? { shardSize: col.selection.shardSize - added.size } : {}) } : null;
  return { ...col, queries, selection: sel, counts: null };
}

// ------------------------------------------------------------------------------------------------ one loader for every gate

export interface GateInputs {
  floors: Floors;
  /** Where the floors came from, for the verdict. */
  floorsSource: string;
  baseline: { path: string; data: Baseline } | null;
  /** The base ref's reader when the gate judges a pull request; null otherwise. */
  base: RefReader | null;
  /** The pull request's changes to what it is judged by (LOUD, first in the verdict and the comment). */
  loud: string[];
  notes: string[];
}

export interface GateInputOptions {
  /** The floors file (default config/gate.yaml); `named`: the user named it (then it must exist). */
  floorsPath: string;
  floorsNamed?: boolean;
  /** --baseline: turns the regression check on against this file. */
  baselinePath?: string;
  /** --update-baseline: the baseline is about to be replaced (an unreadable one is only said so). */
  updating?: boolean;
  /** --head-baseline: the pull request's own copy of the baseline (default: the baseline's path in the work tree). */
  headBaseline?: string;
  base: RefReader | null;
}

/**
 * The floors and the baseline a gate applies: from the work tree, or, when it judges a pull request (`base`), from
 * the base branch, with every difference of the pull request's own versions said LOUD. The golden expectations are
 * checked per column once the results are read (expectationsAtBase).
 */
export function gateInputs(o: GateInputOptions): GateInputs {
  const deps = { exists: existsSync, loadFloors, readBaseline, defaults: DEFAULT_FLOORS, defaultRegression: DEFAULT_REGRESSION, baselineChangeLine };
  // on a pull request a floors file the pull request deleted is read at the base (the deletion is said LOUD)
  if (o.floorsNamed && !o.base && !deps.exists(o.floorsPath)) throw new UserError(`${o.floorsPath}: no such floors file`);
  const loud: string[] = [];
  const notes: string[] = [];
  let own: Floors | Error | null = null;
  if (deps.exists(o.floorsPath)) {
    try {
      own = deps.loadFloors(o.floorsPath);
    } catch (e) {
      if (!o.base || !(e instanceof UserError)) throw e;
      own = e;
    }
  }
  let floors: Floors;
  let floorsSource: string;
  if (o.base) {
    const f = floorsAtBase(o.base, o.floorsPath, own, deps.defaults);
    floors = f.floors;
    floorsSource = f.source;
    loud.push(...f.loud);
  } else {
    floors = (own as Floors | null) ?? deps.defaults;
    floorsSource = own ? o.floorsPath : deps.exists(o.floorsPath) ? o.floorsPath : 'config/gate.yaml';
  }
  // --baseline turns the regression check on (gate.yaml regression: settings, or the defaults)
  if (o.baselinePath && !o.base) floors = { ...floors, regression: { ...(floors.regression ?? deps.defaultRegression), baseline: o.baselinePath } };
  let baseline: GateInputs['baseline'] = null;
  // --baseline on a pull request: that path at the base (an untracked copy of the base's baseline, as older workflows
  // pass, is checked against it below); with no regression check in the base's floors it turns one on, as without a base
  const named = o.base && o.baselinePath && o.base.repoPath(o.baselinePath) !== null && o.base.read(o.baselinePath) !== null ? o.baselinePath : undefined;
  const reg = o.base && !floors.regression && o.baselinePath ? { ...deps.defaultRegression, baseline: named ?? o.baselinePath } : floors.regression;
  if (o.base) {
    if (reg) {
      const regPath = named ?? reg.baseline;
      floors = { ...floors, regression: { ...reg, baseline: regPath } };
      const at = baselineAtBase(o.base, regPath);
      baseline = at.baseline;
      notes.push(...at.notes);
      // an explicit --baseline the base does not have (an older workflow's copy of the base's file) is the base's or it is not used
      if (o.baselinePath && !named && deps.exists(o.baselinePath) && o.base.repoPath(o.baselinePath) !== o.base.repoPath(regPath)) {
        let same = false;
        try {
          same = !!baseline && canonicalJson(deps.readBaseline(o.baselinePath)) === canonicalJson(baseline.data);
        } catch {
          same = false;
        }
        if (!same) loud.push(`LOUD: --baseline ${o.baselinePath} is not the base branch's baseline ${regPath} (${o.base.name}): not used; a pull request is compared with the base branch's`);
      }
      const head = o.headBaseline ?? regPath;
      if (baseline) {
        const changed = deps.baselineChangeLine(baseline.data, baseline.path, head);
        if (changed) loud.push(changed);
      } else if (deps.exists(head)) loud.push(`LOUD: this pull request ADDS the baseline ${head} (the base branch ${o.base.name} has none): it applies after the merge`);
    }
  } else if (reg && deps.exists(reg.baseline) && !(o.updating && !o.baselinePath)) {
    try {
      baseline = { path: reg.baseline, data: deps.readBaseline(reg.baseline) };
    } catch (e) {
      // a baseline that is not evidence is exit 2; one about to be replaced is only said so (and not compared)
      if (!(o.updating && e instanceof UserError)) throw e;
      notes.push(`note: the baseline to be replaced is not compared: ${e.message}`);
    }
  } else if (o.baselinePath && !o.updating && !deps.exists(o.baselinePath)) throw new UserError(`${o.baselinePath}: no such baseline (write one with --update-baseline)`);
  if (o.base && o.headBaseline && !reg) notes.push(`--head-baseline ${o.headBaseline}: the base branch's floors configure no regression check`);
  return { floors, floorsSource, baseline, base: o.base, loud, notes };
}
