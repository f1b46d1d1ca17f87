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
import { existsSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { expectationChanges, goldenAtRef } from '../golden/at-ref.ts';
import type { GoldenQuery } from '../golden/schema.ts';
import type { Column } from '../results/read.ts';
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
  if (own instanceof Error) loud.push(`LOUD: this pull request's floors file ${floorsPath} is not valid (${own.message}); judged by the base branch's`);
  else if (own === null) loud.push(`LOUD: this pull request DELETES the floors file ${floorsPath}; judged by the base branch's (${base.name})`);
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
  loud: string[];
  notes: string[];
}

/**
 * The base's golden entries for the queries of a column (the files its rows name: selection.files), and what the pull
 * request changed. Exit 2 when the rows do not name their golden files (nothing to compare with: fail closed).
 */
export function expectationsAtBase(base: RefReader, col: Column): ExpectationsAtBase {
  const files = col.selection?.files;
  if (!files?.length) {
    throw new UserError(
      `column '${col.label}': the rows do not name their golden files (testCase.metadata.selection.files, written by rankgate's tests loader datasets/tests.ts): ` +
        `the pull request's expectations cannot be checked against the base branch ${base.name}; use rankgate's tests loader, or gate without a base ref (--base-ref none) outside pull requests`,
      2,
    );
  }
  const { byId: baseById, missing } = goldenAtRef(base, files);
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
    if (b.query !== q.golden.query) textChanged.push(q.id);
  }
  const loud: string[] = [];
  const notes: string[] = [];
  if (changed.length)
    loud.push(
      `LOUD: this pull request CHANGES the expectations of ${changed.length} ${changed.length === 1 ? 'query' : 'queries'}: ${changed.slice(0, 8).join(', ')}${changed.length > 8 ? `, … and ${changed.length - 8} more` : ''}; ` +
        `judged by the base branch's (${base.name}), the new ones apply after the merge`,
    );
  if (textChanged.length)
    loud.push(`LOUD: this pull request CHANGES the query text of ${textChanged.length} ${textChanged.length === 1 ? 'query' : 'queries'} (${textChanged.slice(0, 8).join(', ')}${textChanged.length > 8 ? ', …' : ''}): the run searched the new text, judged by the base branch's expectations`);
  if (missing.length) loud.push(`LOUD: this pull request ADDS the golden file(s) ${missing.join(', ')} (not on the base branch ${base.name}): their queries are judged by their own expectations`);
  if (added.length) notes.push(`${added.length} ${added.length === 1 ? 'query' : 'queries'} added by this pull request (not on the base branch ${base.name}; judged by their own expectations): ${added.slice(0, 8).join(', ')}${added.length > 8 ? ', …' : ''}`);
  const runIds = new Set(col.queries.map((q) => q.id));
  const dropped = [...baseById.keys()].filter((id) => !runIds.has(id));
  if (dropped.length && !col.selection?.filter && !col.selection?.shard)
    loud.push(`LOUD: this pull request REMOVES ${dropped.length} ${dropped.length === 1 ? 'query' : 'queries'} of the base branch's golden set from the run: ${dropped.slice(0, 8).join(', ')}${dropped.length > 8 ? ', …' : ''} (old queries are never removed)`);
  return { override, loud, notes };
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
  if (o.floorsNamed && !deps.exists(o.floorsPath)) throw new UserError(`${o.floorsPath}: no such floors file`);
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
  const reg = floors.regression ?? (o.base && o.baselinePath ? deps.defaultRegression : undefined);
  if (o.base) {
    if (reg) {
      floors = { ...floors, regression: reg };
      const at = baselineAtBase(o.base, reg.baseline);
      baseline = at.baseline;
      notes.push(...at.notes);
      // an explicit --baseline (an older workflow's copy of the base's file) is the base's or it is not used
      if (o.baselinePath && deps.exists(o.baselinePath) && o.base.repoPath(o.baselinePath) !== o.base.repoPath(reg.baseline)) {
        let same = false;
        try {
          same = !!baseline && canonicalJson(deps.readBaseline(o.baselinePath)) === canonicalJson(baseline.data);
        } catch {
          same = false;
        }
        if (!same) loud.push(`LOUD: --baseline ${o.baselinePath} is not the base branch's baseline ${reg.baseline} (${o.base.name}): not used; a pull request is compared with the base branch's`);
      }
      const head = o.headBaseline ?? reg.baseline;
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
