/**
 * The golden selection of datasets/tests.ts (files, languages, categories, tags, shards) turned into promptfoo test
 * cases (src/golden/testcases.ts holds the test case shape and the conversion).
 *
 * `selection` identifies the golden selection the row belongs to, before sharding: `id` = first 16 hex of
 * sha256(sorted query ids joined by "\n"), `size` = its number of queries, `files` = the golden files
 * (repo-relative when inside this repository); `filter` = the declared language/category/tag filter and the number
 * of queries before it, only when it left queries out; `shard` = { index (1-based), count } and `shardSize` (the
 * queries in this shard) only when sharded.
 *
 * Sharding (`RANKGATE_SHARD=i/N` or loader config `shard: "i/N"` / `{ index, count }`, i is 1-based,
 * 1 <= i <= N): a query belongs to shard 1 + (first 8 bytes of sha256(id), big-endian) mod N, so adding or
 * removing queries never moves the others, and the N shards partition the selection.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UserError } from '../errors.ts';
import { packageRoot } from '../util/package-root.ts';
import { didYouMean, unknownKeyMessage } from '../util/suggest.ts';
import type { GoldenQuery } from './schema.ts';
import { FORMATS, loadGolden, parseFormatName, unscorableReason } from './index.ts';
import { selectionIdentity, toTestCases, type GoldenTestCase, type SelectionMeta, type Shard } from './testcases.ts';
import { expectationChanges, goldenAtRef } from './at-ref.ts';
import { baseRefFrom, refReader } from '../util/git.ts';

export interface Selection {
  /** golden-set file(s); default datasets/golden/golden-set-<lang>.json for each selected language (en) */
  golden?: string | string[];
  /** ISO 639-1 code(s), comma list, or `all` */
  language?: string | string[];
  category?: string | string[];
  /** keep queries having ANY of these tags */
  tag?: string | string[];
  /** force a format for every file */
  format?: string;
  /** `i/N` (1-based) or { index, count } */
  shard?: string | Shard;
  /**
   * A judgments file whose labels the eval scores with beside the golden set (the `+ labels` figures; RANKGATE_JUDGMENTS
   * wins). Accepted and checked here; read by the loader through src/judgments/eval-input.ts (not a selection of queries).
   */
  judgments?: string;
}

/** The keys the tests loader's `config:` accepts. */
export const SELECTION_KEYS = ['golden', 'language', 'category', 'tag', 'format', 'shard', 'judgments'] as const;

/** Where loader-config problems are reported from. */
export const LOADER_CONFIG = 'tests loader config (file://datasets/tests.ts)';

function list(v: string | string[] | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const arr = (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean);
  return arr.length && !arr.includes('all') ? arr : undefined;
}

/**
 * Check a loader config object: known keys only (did-you-mean otherwise), value types, language codes,
 * format names and the shard syntax. One UserError line naming the key.
 */
export function validateSelectionConfig(config: unknown, source = LOADER_CONFIG): Selection {
  if (config === undefined || config === null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) throw new UserError(`${source}: got ${JSON.stringify(config)}, expected a mapping with keys ${SELECTION_KEYS.join(', ')}`);
  const c = config as Record<string, unknown>;
  for (const k of Object.keys(c)) if (!(SELECTION_KEYS as readonly string[]).includes(k)) throw new UserError(unknownKeyMessage(source, '', k, SELECTION_KEYS));
  const strOrList = (k: string) => {
    const v = c[k];
    if (v === undefined) return;
    const ok = typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
    if (!ok) throw new UserError(`${source}: ${k}: got ${JSON.stringify(v)}, expected a string, a comma list or a list of strings`);
  };
  for (const k of ['golden', 'language', 'category', 'tag']) strOrList(k);
  if (c.judgments !== undefined && (typeof c.judgments !== 'string' || !c.judgments.trim())) throw new UserError(`${source}: judgments: got ${JSON.stringify(c.judgments)}, expected the path of a judgments file (docs/judgments.md)`);
  if (c.format !== undefined) {
    if (typeof c.format !== 'string') throw new UserError(`${source}: format: got ${JSON.stringify(c.format)}, expected one of ${FORMATS.join(', ')}`);
    checkFormat(c.format, `${source}: format`);
  }
  checkLanguages(c.language as string | string[] | undefined, `${source}: language`);
  if (c.shard !== undefined) parseShard(c.shard as string | Shard, `${source}: shard`);
  return c as Selection;
}

function checkFormat(name: string, where: string): void {
  try {
    parseFormatName(name);
  } catch {
    throw new UserError(`${where}: unknown golden-set format '${name}'${didYouMean(name, FORMATS)} (valid: ${FORMATS.join(', ')})`);
  }
}

function checkLanguages(v: string | string[] | undefined, where: string): void {
  for (const l of list(v) ?? []) if (!/^[a-z]{2}$/.test(l)) throw new UserError(`${where}: '${l}' is not a language, expected ISO 639-1 codes such as en, es, hi (comma list) or all`);
}

/**
 * `i/N` (1-based, 1 <= i <= N) or { index, count } -> Shard. One-line UserError otherwise (`where` names the
 * setting: RANKGATE_SHARD or the loader config).
 */
export function parseShard(v: string | Shard | unknown, where = 'RANKGATE_SHARD'): Shard {
  const expect = 'expected i/N with 1 <= i <= N (e.g. 1/4; shards are numbered from 1)';
  let index: unknown;
  let count: unknown;
  if (typeof v === 'string') {
    const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(v);
    if (!m) throw new UserError(`${where}: '${v}' is not a shard, ${expect}`);
    index = Number(m[1]);
    count = Number(m[2]);
  } else if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) if (k !== 'index' && k !== 'count') throw new UserError(unknownKeyMessage(where, '', k, ['index', 'count']));
    index = o.index;
    count = o.count;
  } else throw new UserError(`${where}: got ${JSON.stringify(v)}, ${expect} or { index, count }`);
  const show = typeof v === 'string' ? `'${v}'` : JSON.stringify(v);
  if (!Number.isSafeInteger(count) || (count as number) < 1) throw new UserError(`${where}: ${show}: the shard count must be a whole number >= 1, ${expect}`);
  if (!Number.isSafeInteger(index) || (index as number) < 1 || (index as number) > (count as number)) {
    throw new UserError(`${where}: ${show}: shard ${String(index)} of ${String(count)} does not exist, ${expect}`);
  }
  return { index: index as number, count: count as number };
}

/** The 1-based shard of a query id among `count`: 1 + (first 8 bytes of sha256(id), big-endian) mod count. */
export function shardOf(id: string, count: number): number {
  const h = createHash('sha256').update(id).digest();
  return Number(h.readBigUInt64BE(0) % BigInt(count)) + 1;
}

/** The queries of one shard, in selection order. */
export function shardQueries<T extends { id: string }>(qs: readonly T[], shard: Shard): T[] {
  return qs.filter((q) => shardOf(q.id, shard.count) === shard.index);
}

/** Selection from the environment: RANKGATE_GOLDEN (paths, comma-separated), RANKGATE_LANG, RANKGATE_CATEGORY, RANKGATE_TAG, RANKGATE_SHARD. */
export function selectionFromEnv(env: NodeJS.ProcessEnv = process.env): Selection {
  const s: Selection = {};
  if (env.RANKGATE_GOLDEN) s.golden = env.RANKGATE_GOLDEN;
  if (env.RANKGATE_LANG) {
    checkLanguages(env.RANKGATE_LANG, 'RANKGATE_LANG');
    s.language = env.RANKGATE_LANG;
  }
  if (env.RANKGATE_CATEGORY) s.category = env.RANKGATE_CATEGORY;
  if (env.RANKGATE_TAG) s.tag = env.RANKGATE_TAG;
  if (env.RANKGATE_SHARD) {
    parseShard(env.RANKGATE_SHARD, 'RANKGATE_SHARD');
    s.shard = env.RANKGATE_SHARD;
  }
  return s;
}

export const REPO_ROOT = packageRoot(import.meta.url);
export const DEFAULT_GOLDEN_DIR = join(REPO_ROOT, 'datasets', 'golden');

function resolvePath(p: string): string {
  if (isAbsolute(p)) return p;
  const fromCwd = resolve(process.cwd(), p);
  if (existsSync(fromCwd)) return fromCwd;
  const fromRoot = resolve(REPO_ROOT, p);
  return existsSync(fromRoot) ? fromRoot : fromCwd;
}

/** A path for people and for `selection.files`: repo-relative when inside this repository, else absolute. */
export function displayPath(p: string): string {
  const r = relative(REPO_ROOT, p);
  return r && !r.startsWith('..') && !isAbsolute(r) ? r.split(sep).join('/') : p;
}

/** The golden sets shipped for each language (datasets/golden/golden-set-<lang>.json). */
function shippedLanguages(): string[] {
  if (!existsSync(DEFAULT_GOLDEN_DIR)) return [];
  return readdirSync(DEFAULT_GOLDEN_DIR)
    .map((f) => /^golden-set-([a-z]{2})\.json$/.exec(f)?.[1])
    .filter((x): x is string => x !== undefined)
    .sort();
}

/** The golden files a selection names (explicit paths, else the per-language defaults). */
export function selectedFiles(sel: Selection): string[] {
  const explicit = list(sel.golden);
  if (explicit) return explicit.map(resolvePath);
  const langs = list(sel.language);
  if (!langs) {
    const all = sel.language !== undefined && list(sel.language) === undefined;
    if (all) {
      const ls = shippedLanguages();
      if (ls.length) return ls.map((l) => join(DEFAULT_GOLDEN_DIR, `golden-set-${l}.json`));
    }
    return [join(DEFAULT_GOLDEN_DIR, 'golden-set-en.json')];
  }
  return langs.map((l) => join(DEFAULT_GOLDEN_DIR, `golden-set-${l}.json`));
}

export interface SelectedQueries {
  /** the queries of this shard (all of them when not sharded) */
  queries: GoldenQuery[];
  /** the selection's identity, files and shard, as put on every test case */
  selection: SelectionMeta;
}

/** Load the selected golden files, filter by language, category and tag, then take the shard. */
export function selectQueriesWithMeta(sel: Selection): SelectedQueries {
  const files = selectedFiles(sel);
  const out: GoldenQuery[] = [];
  const firstFile = new Map<string, string>();
  for (const f of files) {
    if (!existsSync(f)) {
      const explicit = list(sel.golden) !== undefined;
      const hint = explicit
        ? 'expected an existing golden-set file (RANKGATE_GOLDEN or the loader config golden:)'
        : `expected a golden set for that language (shipped: ${shippedLanguages().join(', ') || 'none'}; RANKGATE_LANG / language:, or name a file with RANKGATE_GOLDEN)`;
      throw new UserError(`${displayPath(f)}: golden set not found, ${hint}`);
    }
    const g = loadGolden(f, { format: sel.format });
    for (const q of g.queries) {
      const prev = firstFile.get(q.id);
      if (prev !== undefined) {
        throw new UserError(
          prev === f
            ? `${displayPath(f)}: (${q.id}) id: the file is selected twice, expected each golden file once in the selection`
            : `${displayPath(f)}: (${q.id}) id: duplicate id, already in ${displayPath(prev)}, expected ids unique across the selected golden files`,
        );
      }
      firstFile.set(q.id, f);
      // Readers already refuse these; a canonical set built some other way must not give an unscored row either.
      const unscorable = unscorableReason(q);
      if (unscorable) throw new UserError(`${displayPath(f)}: (${q.id}) expected: ${unscorable}`);
    }
    out.push(...g.queries);
  }
  const langs = list(sel.language);
  const cats = list(sel.category);
  const tags = list(sel.tag);
  const shown0 = files.map(displayPath).join(', ');
  // a value that no query of the selected files has is a typo or a wrong file, never a silently smaller run
  const absent = (what: string, setting: string, wanted: string[] | undefined, have: Iterable<string>) => {
    if (!wanted) return;
    const present = [...new Set(have)].sort();
    for (const w of wanted) {
      if (!present.includes(w)) {
        throw new UserError(`${setting}: no query in ${shown0} has ${what} '${w}'${didYouMean(w, present)} (${what === 'tag' ? 'tags' : what === 'category' ? 'categories' : 'languages'} there: ${present.join(', ') || 'none'})`);
      }
    }
  };
  if (list(sel.golden)) absent('language', 'RANKGATE_LANG / language', langs, out.map((q) => q.language));
  absent('category', 'RANKGATE_CATEGORY / category', cats, out.map((q) => q.category));
  absent('tag', 'RANKGATE_TAG / tag', tags, out.flatMap((q) => q.tags));
  const chosen = out.filter((q) => (!langs || langs.includes(q.language)) && (!cats || cats.includes(q.category)) && (!tags || q.tags.some((t) => tags.includes(t))));
  const shown = files.map(displayPath);
  if (chosen.length === 0) {
    const by = [langs && `language ${langs.join(',')}`, cats && `category ${cats.join(',')}`, tags && `tag ${tags.join(',')}`].filter(Boolean).join(', ');
    const present = cats ? `; categories there: ${[...new Set(out.map((q) => q.category))].sort().join(', ')}` : '';
    throw new UserError(`no golden query matches ${by || 'the selection'} in ${shown.join(', ')} (${out.length} queries there${present}), expected at least one test (check RANKGATE_LANG / RANKGATE_CATEGORY / RANKGATE_TAG)`);
  }
  const ident = selectionIdentity(chosen);
  const filter = chosen.length < out.length ? { ...(langs ? { language: langs } : {}), ...(cats ? { category: cats } : {}), ...(tags ? { tag: tags } : {}), of: out.length } : undefined;
  const selection: SelectionMeta = { ...ident, files: shown, ...(filter ? { filter } : {}) };
  if (sel.shard === undefined) return { queries: chosen, selection };
  const shard = parseShard(sel.shard, 'RANKGATE_SHARD / loader config shard');
  const mine = shardQueries(chosen, shard);
  if (mine.length === 0) {
    throw new UserError(`shard ${shard.index}/${shard.count} of ${shown.join(', ')} holds no query (${chosen.length} queries in the selection), expected fewer shards than queries`);
  }
  return { queries: mine, selection: { ...selection, shard, shardSize: mine.length } };
}

/** Load the selected golden files and filter by language, category and tag (and shard). */
export function selectQueries(sel: Selection): GoldenQuery[] {
  return selectQueriesWithMeta(sel).queries;
}

/** Merge loader config and environment; the environment wins (so `RANKGATE_LANG=hi npm run eval:search` works). */
export function mergeSelection(config: Selection | undefined, env: NodeJS.ProcessEnv = process.env): Selection {
  return { ...validateSelectionConfig(config), ...selectionFromEnv(env) };
}

/** What datasets/tests.ts returns: the selected (sharded) queries as test cases carrying metadata.selection. */
export function generateTestCases(config?: unknown, env: NodeJS.ProcessEnv = process.env): GoldenTestCase[] {
  const { queries, selection } = selectQueriesWithMeta(mergeSelection(config as Selection | undefined, env));
  const tests = toTestCases(queries, selection);
  withBaseExpectations(tests, selection.files, env);
  return tests;
}

/**
 * On a pull request (a base ref: src/util/git.ts), a test whose expectations the pull request changed also carries the
 * base's entry (metadata.baseGolden): the provider then resolves its passages and keeps the text of the hits it names,
 * so the gate can judge the row by the base's expectations (src/gate/base-ref.ts). Only a hint for what the row keeps:
 * the gate reads the base with git itself. A base that cannot be read here is left to the gate (which says why, exit 2).
 */
function withBaseExpectations(tests: GoldenTestCase[], files: readonly string[], env: NodeJS.ProcessEnv): void {
  let byId: Map<string, GoldenQuery>;
  try {
    const base = baseRefFrom(undefined, env);
    if (!base) return;
    byId = goldenAtRef(refReader(base), files.map(resolvePath)).byId;
  } catch {
    return;
  }
  for (const t of tests) {
    const b = byId.get(t.metadata.id);
    if (b && expectationChanges(b, t.metadata.golden).length) t.metadata.baseGolden = b;
  }
}
