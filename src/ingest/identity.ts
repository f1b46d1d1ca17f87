/**
 * A corpus's identity, recorded on every index variant built from it (index_variants.corpus_id / corpus):
 *
 *   corpusId = sha256( for each document sorted by id: id + "\t" + sha256(canonical JSON of its content) + "\n" )
 *
 * where the content is everything the pipeline indexes (title, language, path, tags, metadata, sections,
 * prechunked passages). Same documents with the same content -> same id, wherever the files live; one edited,
 * added or removed document -> another id. `corpus` is the place it was read from, for people and for telling
 * "the same corpus, edited" from "another corpus".
 */
import { createHash } from 'node:crypto';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { CorpusDocument } from './types.ts';

export interface CorpusIdentity {
  /** 64 hex characters. */
  id: string;
  /** Where it was read from: relative to the working directory when inside it, else absolute; null when unknown. */
  path: string | null;
  documents: number;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** JSON with object keys sorted (so the hash does not depend on key order). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  if (v && typeof v === 'object') {
    return '{' + Object.keys(v as object).sort().filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => JSON.stringify(k) + ':' + canonical((v as Record<string, unknown>)[k])).join(',') + '}';
  }
  return JSON.stringify(v) ?? 'null';
}

export function corpusLabel(path: string): string {
  const abs = resolve(path);
  const rel = relative(process.cwd(), abs);
  if (!rel) return '.';
  return rel.startsWith('..' + sep) || rel === '..' || isAbsolute(rel) ? abs : rel.split(sep).join('/');
}

export function corpusIdentity(documents: readonly CorpusDocument[], path?: string): CorpusIdentity {
  const lines = documents
    .map((d) => {
      const { id, ...content } = d;
      return `${id}\t${sha256(canonical(content))}\n`;
    })
    .sort();
  const h = createHash('sha256');
  for (const l of lines) h.update(l, 'utf8');
  return { id: h.digest('hex'), path: path === undefined ? null : corpusLabel(path), documents: documents.length };
}

/** The short form shown to people: first 12 hex characters. */
export function shortCorpusId(id: string | null | undefined): string {
  return id ? id.slice(0, 12) : 'unknown';
}
