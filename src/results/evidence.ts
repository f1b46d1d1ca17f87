/**
 * Bounded evidence from services: what a hit's `content` may prove. A passage_substring reference is matched against
 * the content of a hit when the service cannot resolve passages (url: and most module: services), so a service that
 * returned the whole corpus as the content of one hit would match every passage at rank 1. Two rules:
 *
 * - A hit's content is at most CONTENT_CHARS_PER_TOKEN characters per token of the column's chunk size (the
 *   `chunkSize` of the provider config, default 300 tokens: 4,800 characters); longer content is cut to that before
 *   anything matches on it, and the row counts the hits cut (metadata.harness.contentCut; the verdict says it LOUD).
 *   A service with larger chunks declares them: `chunkSize: 1000` in its provider config.
 * - One hit whose content holds the expected passages of several distinct golden documents (passages the golden set
 *   attributes to different paths, doc ids or books) is not a chunk: the gate flags it and measures nothing (exit 2).
 */
import type { Reference } from '../golden/schema.ts';
import type { HarnessHit } from './types.ts';

/** Characters a hit's content may hold per token of the chunk size (a token is ~4 characters of English; 4x margin). */
export const CONTENT_CHARS_PER_TOKEN = 16;
/** The chunk size assumed when the column sets none (rankgate's own default). */
export const DEFAULT_CHUNK_TOKENS = 300;

/** The documented maximum of one hit's content, in characters, for a chunk size in tokens. */
export function maxHitContent(chunkSize: unknown): number {
  const n = typeof chunkSize === 'number' && Number.isFinite(chunkSize) && chunkSize > 0 ? chunkSize : DEFAULT_CHUNK_TOKENS;
  return Math.ceil(n) * CONTENT_CHARS_PER_TOKEN;
}

/** What the provider records on a row whose hits were cut. */
export interface ContentCut {
  /** Hits whose content was longer than maxChars. */
  hits: number;
  maxChars: number;
  /** The longest content returned, in characters. */
  longest: number;
}

/** Hits with their content cut to the maximum, and what was cut (null when nothing was). */
export function boundHits<T extends Pick<HarnessHit, 'content'>>(hits: T[], chunkSize: unknown): { hits: T[]; cut: ContentCut | null } {
  const max = maxHitContent(chunkSize);
  let n = 0;
  let longest = 0;
  const out = hits.map((h) => {
    const len = h.content?.length ?? 0;
    if (len <= max) return h;
    n++;
    longest = Math.max(longest, len);
    return { ...h, content: h.content.slice(0, max) };
  });
  return { hits: out, cut: n ? { hits: n, maxChars: max, longest } : null };
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The golden document a passage reference belongs to: its path, doc id or book; null when the reference says none. */
function documentOf(r: Reference): string | null {
  return r.path ?? r.doc_id ?? (r.book_slug !== undefined ? `book ${r.book_slug}` : null);
}

/** Characters of a passage used to look it up at each word start of a hit's content. */
const KEY = 12;

export interface MultiDocumentHit {
  query: string;
  rank: number;
  chunkId: string;
  documents: string[];
}

/**
 * Every hit (of the ones a results file keeps with content: `hits` per query) whose content contains the expected
 * passages of at least two distinct golden documents. Passages are looked up at word starts of the content (a
 * DES-058 passage is a run of whole words), so the cost grows with the content, not with the golden set.
 */
export function multiDocumentHits(
  queries: readonly { id: string; golden: { expected: readonly Reference[] }; top: readonly { rank: number; chunkId: string; content: string }[] }[],
): MultiDocumentHit[] {
  const byKey = new Map<string, { text: string; doc: string }[]>();
  const docs = new Set<string>();
  const seen = new Set<string>();
  for (const q of queries)
    for (const r of q.golden.expected) {
      if (r.passage_substring === undefined) continue;
      const doc = documentOf(r);
      if (doc === null) continue;
      const text = norm(r.passage_substring);
      if (text.length < KEY || seen.has(`${doc}\u0000${text}`)) continue;
      seen.add(`${doc}\u0000${text}`);
      docs.add(doc);
      const k = text.slice(0, KEY);
      (byKey.get(k) ?? byKey.set(k, []).get(k)!).push({ text, doc });
    }
  if (docs.size < 2) return [];
  const out: MultiDocumentHit[] = [];
  for (const q of queries)
    for (const h of q.top) {
      const c = norm(h.content ?? '');
      if (c.length < KEY * 2) continue;
      const found = new Set<string>();
      for (let i = 0; i + KEY <= c.length; i++) {
        if (i > 0 && /[\p{L}\p{N}]/u.test(c[i - 1]!)) continue;
        const cands = byKey.get(c.slice(i, i + KEY));
        if (!cands) continue;
        for (const p of cands) if (!found.has(p.doc) && c.startsWith(p.text, i)) found.add(p.doc);
      }
      if (found.size >= 2) out.push({ query: q.id, rank: h.rank, chunkId: h.chunkId, documents: [...found].sort() });
    }
  return out;
}
