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
import { canonicalJson } from '../util/seal.ts';

export interface CorpusIdentity {
  /** 64 hex characters. */
  id: string;
  /** Where it was read from: relative to the working directory when inside it, else absolute; null when unknown. */
  path: string | null;
  documents: number;
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export function corpusLabel(path: string): string {
  const abs = resolve(path);
  const rel = relative(process.cwd(), abs);
  if (!rel) return '.';
  return rel.startsWith('..' + sep) || rel === '..' || isAbsolute(rel) ? abs : rel.split(sep).join('/');
}

/** sha256 of one document's content (everything but its id): the per-document hash of the corpus identity. */
export function documentHash(d: CorpusDocument): string {
  const { id: _id, ...content } = d;
  return sha256(canonicalJson(content));
}

/**
 * What a baseline records per document (gate: which documents were added, changed or removed since): the first 16 hex
 * characters of documentHash (64 bits: a changed document goes unnoticed with odds 2^-64) and the document's path
 * (left out when it is the id or not the document's own: ownPaths).
 */
export interface DocumentManifestEntry {
  h: string;
  p?: string;
}
export type DocumentManifest = Record<string, DocumentManifestEntry>;

export function documentManifest(documents: readonly CorpusDocument[]): DocumentManifest {
  const out: DocumentManifest = {};
  const paths = ownPaths(documents);
  for (const d of [...documents].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const p = paths.get(d);
    out[d.id] = { h: documentHash(d).slice(0, 16), ...(p !== undefined && p !== d.id ? { p } : {}) };
  }
  return out;
}

/**
 * Each document's own path ('/'-separated): a path that names one document. A path shared by many (every record of a
 * JSONL or BEIR corpus has its file's name) names none of them and is left out.
 */
export function ownPaths(documents: readonly CorpusDocument[]): Map<CorpusDocument, string> {
  const count = new Map<string, number>();
  for (const d of documents) if (d.path !== undefined) count.set(d.path, (count.get(d.path) ?? 0) + 1);
  const out = new Map<CorpusDocument, string>();
  for (const d of documents) if (d.path !== undefined && count.get(d.path) === 1) out.set(d, d.path.split(sep).join('/'));
  return out;
}

export function corpusIdentity(documents: readonly CorpusDocument[], path?: string): CorpusIdentity {
  const lines = documents.map((d) => `${d.id}\t${documentHash(d)}\n`).sort();
  const h = createHash('sha256');
  for (const l of lines) h.update(l, 'utf8');
  return { id: h.digest('hex'), path: path === undefined ? null : corpusLabel(path), documents: documents.length };
}

/** The short form shown to people: first 12 hex characters. */
export function shortCorpusId(id: string | null | undefined): string {
  return id ? id.slice(0, 12) : 'unknown';
}
