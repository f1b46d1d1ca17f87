/**
 * Golden queries -> promptfoo test cases, and the selection used by datasets/tests.ts.
 *
 * TestCase shape (the cross-team contract):
 *   { vars: { query },                                               the only var: `promptfoo view` shows one column per var
 *     metadata: { id, category, language, tags: "<comma list>", golden: <GoldenQuery> } }
 * No description (promptfoo's view would give it a column repeating the query); id, category and language are
 * metadata: filter on them with `--filter-metadata category=emotional` or the view's metadata filter.
 * Ground truth stays in metadata: array-valued vars would be expanded into one test per element.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UserError } from '../errors.ts';
import type { GoldenQuery } from './schema.ts';
import { loadGoldenFile } from './index.ts';

export interface GoldenTestCase {
  vars: { query: string };
  metadata: { id: string; category: string; language: string; tags: string; golden: GoldenQuery };
}

export function toTestCase(q: GoldenQuery): GoldenTestCase {
  return {
    vars: { query: q.query },
    metadata: { id: q.id, category: q.category, language: q.language, tags: q.tags.join(','), golden: q },
  };
}

export function toTestCases(qs: readonly GoldenQuery[]): GoldenTestCase[] {
  return qs.map(toTestCase);
}

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
}

function list(v: string | string[] | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const arr = (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean);
  return arr.length && !arr.includes('all') ? arr : undefined;
}

/** Selection from the environment: RANKGATE_GOLDEN (paths, comma-separated), RANKGATE_LANG, RANKGATE_CATEGORY, RANKGATE_TAG. */
export function selectionFromEnv(env: NodeJS.ProcessEnv = process.env): Selection {
  const s: Selection = {};
  if (env.RANKGATE_GOLDEN) s.golden = env.RANKGATE_GOLDEN;
  if (env.RANKGATE_LANG) s.language = env.RANKGATE_LANG;
  if (env.RANKGATE_CATEGORY) s.category = env.RANKGATE_CATEGORY;
  if (env.RANKGATE_TAG) s.tag = env.RANKGATE_TAG;
  return s;
}

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEFAULT_GOLDEN_DIR = join(REPO_ROOT, 'datasets', 'golden');

function resolvePath(p: string): string {
  if (isAbsolute(p)) return p;
  const fromCwd = resolve(process.cwd(), p);
  if (existsSync(fromCwd)) return fromCwd;
  const fromRoot = resolve(REPO_ROOT, p);
  return existsSync(fromRoot) ? fromRoot : fromCwd;
}

/** The golden files a selection names (explicit paths, else the per-language defaults). */
export function selectedFiles(sel: Selection): string[] {
  const explicit = list(sel.golden);
  if (explicit) return explicit.map(resolvePath);
  const langs = list(sel.language);
  if (!langs) {
    const all = sel.language !== undefined && list(sel.language) === undefined;
    if (all && existsSync(DEFAULT_GOLDEN_DIR)) {
      const files = readdirSync(DEFAULT_GOLDEN_DIR)
        .filter((f) => /^golden-set-[a-z]{2}\.json$/.test(f))
        .sort();
      if (files.length) return files.map((f) => join(DEFAULT_GOLDEN_DIR, f));
    }
    return [join(DEFAULT_GOLDEN_DIR, 'golden-set-en.json')];
  }
  return langs.map((l) => join(DEFAULT_GOLDEN_DIR, `golden-set-${l}.json`));
}

/** Load the selected golden files and filter by language, category and tag. */
export function selectQueries(sel: Selection): GoldenQuery[] {
  const files = selectedFiles(sel);
  const out: GoldenQuery[] = [];
  for (const f of files) {
    if (!existsSync(f)) throw new UserError(`${f}: golden set not found, expected a golden-set file (set RANKGATE_GOLDEN or the loader's golden: option)`);
    out.push(...loadGoldenFile(f, { format: sel.format }));
  }
  const langs = list(sel.language);
  const cats = list(sel.category);
  const tags = list(sel.tag);
  const sel2 = out.filter((q) => (!langs || langs.includes(q.language)) && (!cats || cats.includes(q.category)) && (!tags || q.tags.some((t) => tags.includes(t))));
  if (sel2.length === 0) {
    const by = [langs && `language ${langs.join(',')}`, cats && `category ${cats.join(',')}`, tags && `tag ${tags.join(',')}`].filter(Boolean).join(', ');
    throw new UserError(`no golden query matches ${by || 'the selection'} in ${files.join(', ')} (${out.length} queries there), expected at least one test (check RANKGATE_LANG / RANKGATE_CATEGORY / RANKGATE_TAG)`);
  }
  return sel2;
}

/** Merge loader config and environment; the environment wins (so `RANKGATE_LANG=hi npm run eval:search` works). */
export function mergeSelection(config: Selection | undefined, env: NodeJS.ProcessEnv = process.env): Selection {
  return { ...(config ?? {}), ...selectionFromEnv(env) };
}
