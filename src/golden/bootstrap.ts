/**
 * Known-item bootstrap (the legal gold-set harness): every corpus document gives one query, its title, whose expected
 * answer is that document (doc_id reference, grade 3, relevant). Documents sharing a title give one
 * query expecting all of them.
 *
 * Merging into an existing set is idempotent and conservative:
 *   - entries with `source: reviewed` (gold-set `chair`) are never touched, and a generated entry
 *     with the same id is skipped;
 *   - entries without a source (hand-written) are never touched either;
 *   - `bootstrap` entries are regenerated in place (title changes update the query);
 *   - new documents are appended; bootstrap entries whose document left the corpus are KEPT (old
 *     queries are regression tests) and reported, so a person decides.
 * Running it twice gives the same file.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { loadYaml } from '../util/yaml.ts';
import type { GoldenQuery } from './schema.ts';
import { UserError } from '../errors.ts';

export interface KnownItemDoc {
  id: string;
  title: string;
  language?: string;
}

export const KNOWN_ITEM_CATEGORY = 'known_item';

export function knownItemId(docId: string): string {
  const s = docId
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
  return `known-${s || 'doc'}`;
}

function lang(l: string | undefined): string {
  const two = (l ?? '').toLowerCase().slice(0, 2);
  return /^[a-z]{2}$/.test(two) ? two : 'en';
}

export function knownItemQueries(docs: readonly KnownItemDoc[]): GoldenQuery[] {
  const byTitle = new Map<string, KnownItemDoc[]>();
  for (const d of docs) {
    const t = d.title?.trim().replace(/\s+/g, ' ');
    if (!t) continue;
    const k = t.toLowerCase();
    const list = byTitle.get(k) ?? [];
    list.push({ ...d, title: t });
    byTitle.set(k, list);
  }
  const out: GoldenQuery[] = [];
  const ids = new Set<string>();
  for (const group of byTitle.values()) {
    const first = group[0]!;
    let id = knownItemId(first.id);
    for (let n = 2; ids.has(id); n++) id = `${knownItemId(first.id)}-${n}`;
    ids.add(id);
    out.push({
      id,
      query: first.title,
      language: lang(first.language),
      category: KNOWN_ITEM_CATEGORY,
      tags: [KNOWN_ITEM_CATEGORY],
      slices: {},
      expected: group.map((d) => ({ doc_id: d.id, grade: 3, relevant: true })),
      expected_routing: 'search',
      source: 'bootstrap',
      notes: group.length > 1 ? `known-item: ${group.length} documents share this title` : 'known-item: document title -> that document',
    });
  }
  return out;
}

export interface MergeReport {
  queries: GoldenQuery[];
  added: string[];
  updated: string[];
  unchanged: number;
  /** generated ids skipped because a reviewed or hand-written entry holds the id */
  protected: string[];
  /** bootstrap entries whose document is no longer in the corpus (kept) */
  orphaned: string[];
}

const strip = (q: GoldenQuery) => {
  const { origin: _o, ...rest } = q;
  return rest;
};

export function mergeBootstrap(existing: readonly GoldenQuery[], generated: readonly GoldenQuery[]): MergeReport {
  const gen = new Map(generated.map((q) => [q.id, q]));
  const r: MergeReport = { queries: [], added: [], updated: [], unchanged: 0, protected: [], orphaned: [] };
  const seen = new Set<string>();
  for (const q of existing) {
    seen.add(q.id);
    const g = gen.get(q.id);
    if (q.source !== 'bootstrap') {
      if (g) r.protected.push(q.id);
      r.queries.push(q);
      continue;
    }
    if (!g) {
      r.orphaned.push(q.id);
      r.queries.push(q);
      continue;
    }
    // keep fields the generator does not own (extra, origin) so the file's own data survives
    const merged: GoldenQuery = { ...q, ...g };
    if (q.extra) merged.extra = q.extra;
    if (q.origin) merged.origin = q.origin;
    if (isDeepStrictEqual(strip(merged), strip(q))) {
      r.unchanged++;
      r.queries.push(q);
    } else {
      r.updated.push(q.id);
      r.queries.push(merged);
    }
  }
  for (const g of generated) {
    if (seen.has(g.id)) continue;
    r.added.push(g.id);
    r.queries.push(g);
  }
  return r;
}

/** Corpus documents for known-item queries: src/ingest's readCorpus when present, else a minimal reader. */
export async function readKnownItemDocs(path: string): Promise<KnownItemDoc[]> {
  let readCorpus: ((p: string) => Promise<{ id: string; title: string; language: string }[]>) | undefined;
  try {
    ({ readCorpus } = (await import('../ingest/readers.ts')) as { readCorpus: typeof readCorpus });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw e;
  }
  if (readCorpus) return (await readCorpus(path)).map((d) => ({ id: d.id, title: d.title, language: d.language }));
  return minimalCorpus(path);
}

/** JSONL ({id|_id, title, language}) or a folder of Markdown files (front matter title/slug/language, or the first # heading). */
export function minimalCorpus(path: string): KnownItemDoc[] {
  let st;
  try {
    st = statSync(path);
  } catch {
    throw new UserError(`${path}: corpus not found, expected a folder of Markdown files or a JSONL file`);
  }
  if (st.isDirectory()) {
    return readdirSync(path)
      .filter((f) => /\.(md|markdown)$/i.test(f))
      .sort()
      .map((f) => {
        const text = readFileSync(join(path, f), 'utf8').replace(/^\uFEFF/, '');
        const fm = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
        const meta = (fm ? loadYaml(fm[1]!, join(path, f)) : {}) as Record<string, unknown> | null;
        const heading = /^#\s+(.+)$/m.exec(text)?.[1];
        const stem = basename(f, extname(f));
        return { id: String(meta?.slug ?? meta?.id ?? stem), title: String(meta?.title ?? heading ?? stem), language: typeof meta?.language === 'string' ? meta.language : undefined };
      });
  }
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      let o: Record<string, unknown>;
      try {
        o = JSON.parse(l) as Record<string, unknown>;
      } catch {
        throw new UserError(`${path}:${i + 1} (#${i}) json: invalid JSON, expected one document object per line`);
      }
      return { id: String(o.id ?? o._id ?? ''), title: String(o.title ?? ''), language: typeof o.language === 'string' ? o.language : undefined };
    });
}
