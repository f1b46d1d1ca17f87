/**
 * The corpus a baseline was measured on against the corpus of this run: the same source (corpus path) with edited
 * content is compared (per query, on the shared queries) and said LOUD (documents added / changed / removed, and the
 * golden queries whose expected documents changed); another source is a mismatch (src/gate/baseline.ts
 * identityMismatches, exit 2 unless accepted).
 *
 * The per-document hashes of the run come from the corpus itself: rankgate re-reads it where the rows say it was read
 * (their index identity, contract B: `corpus`, relative to the working directory) and uses it only when it still
 * hashes to the rows' corpus id (so it is exactly what was evaluated). A baseline keeps them (identity.documents).
 * url: and module: services own their corpus: rankgate does not know it, and says so.
 */
import { isAbsolute, resolve } from 'node:path';
import type { Reference } from '../golden/schema.ts';
import { corpusIdentity, documentManifest, shortCorpusId, type DocumentManifest } from '../ingest/identity.ts';
import { readCorpus } from '../ingest/readers.ts';
import type { CorpusFormat } from '../ingest/types.ts';
import type { Column } from '../results/read.ts';
import type { Baseline } from './baseline.ts';

/** What rankgate knows of the run's corpus: its documents (verified against the rows' corpus id), or why not. */
export type RunCorpus = { known: true; corpus: string; corpusId: string; documents: DocumentManifest } | { known: false; reason: string };

const FORMATS: readonly CorpusFormat[] = ['markdown', 'jsonl', 'beir', 'nq'];

/** 'url:' or 'module:' for a team's own service (its corpus is its own), null for rankgate's search. */
function serviceKind(col: Column): 'url:' | 'module:' | null {
  return typeof col.config.url === 'string' ? 'url:' : typeof col.config.module === 'string' ? 'module:' : null;
}

/** The documents of the corpus a column was evaluated on, re-read from disk and checked against its corpus id. */
export async function runCorpus(col: Column): Promise<RunCorpus> {
  const ix = col.identity;
  if (!ix) {
    const kind = serviceKind(col);
    return kind
      ? { known: false, reason: `'${col.label}' is a ${kind} service: its corpus is its own, rankgate does not know its documents` }
      : { known: false, reason: `no row of '${col.label}' reports the index it searched (every query errored?)` };
  }
  if (!ix.corpusId || !ix.corpus) return { known: false, reason: `the index of '${col.label}' records no corpus (built before rankgate recorded corpus ids)` };
  const path = isAbsolute(ix.corpus) ? ix.corpus : resolve(ix.corpus);
  const fmt = FORMATS.find((f) => f === col.config.corpusFormat);
  try {
    const docs = await readCorpus(path, fmt);
    const id = corpusIdentity(docs, path).id;
    if (id !== ix.corpusId)
      return { known: false, reason: `${ix.corpus} is no longer the corpus this run evaluated (corpus ${shortCorpusId(id)} on disk, ${shortCorpusId(ix.corpusId)} in the results): edited since the eval?` };
    return { known: true, corpus: ix.corpus, corpusId: id, documents: documentManifest(docs) };
  } catch (e) {
    return { known: false, reason: `${ix.corpus} cannot be read here (${(e as Error).message.split('\n')[0]})` };
  }
}

export interface AffectedQuery {
  id: string;
  /** The query's expected documents that were added, changed or removed (their path, else their id). */
  documents: string[];
}

export interface CorpusChange {
  corpus: string;
  /** null: unknown (an index built before rankgate recorded corpus ids). */
  baselineCorpusId: string | null;
  runCorpusId: string | null;
  /** False when the per-document hashes of either side are unknown (then the lists are empty and `reason` says why). */
  known: boolean;
  reason: string | null;
  added: string[];
  changed: string[];
  removed: string[];
  /** Shared golden queries whose expected documents were added, changed or removed. */
  queries: AffectedQuery[];
}

const docName = (id: string, m: DocumentManifest) => m[id]?.p ?? id;

/** The document a golden reference names (by id, path or a rankgate chunk id `<doc>#c<size>-<i>`); null: by content. */
export function referencedDocument(ref: Reference, ...manifests: DocumentManifest[]): string | null {
  if (ref.doc_id !== undefined) return ref.doc_id;
  if (ref.path !== undefined) {
    for (const m of manifests) {
      if (m[ref.path]) return ref.path;
      for (const [id, e] of Object.entries(m)) if (e.p === ref.path) return id;
    }
    return ref.path;
  }
  if (ref.chunk_id !== undefined && ref.chunk_id.includes('#')) return ref.chunk_id.slice(0, ref.chunk_id.lastIndexOf('#'));
  return null;
}

/**
 * The baseline's corpus against the run's, when both name the same source and its content changed; null when there is
 * nothing to say (no corpus recorded, the same content, or another source: that is a mismatch).
 */
export function corpusChange(b: Baseline, col: Column, run: RunCorpus | undefined): CorpusChange | null {
  const was = b.identity;
  const now = col.identity;
  if (!was?.corpus || !now?.corpus || was.corpus !== now.corpus || was.corpusId === (now.corpusId ?? null)) return null;
  const base = { corpus: now.corpus, baselineCorpusId: was.corpusId, runCorpusId: now.corpusId ?? null };
  const before = was.documents;
  if (!before || !run?.known || run.corpusId !== now.corpusId) {
    const reason = !before
      ? `the baseline records no per-document hashes (written by an older rankgate): re-baseline to see which documents changed`
      : run?.known === false
        ? run.reason
        : 'the corpus of this run was not read';
    return { ...base, known: false, reason, added: [], changed: [], removed: [], queries: [] };
  }
  const after = run.documents;
  const added = Object.keys(after).filter((id) => !before[id]).sort();
  const removed = Object.keys(before).filter((id) => !after[id]).sort();
  const changed = Object.keys(after).filter((id) => before[id] && before[id]!.h !== after[id]!.h).sort();
  const touched = new Set([...added, ...removed, ...changed]);
  const queries: AffectedQuery[] = [];
  for (const q of col.queries) {
    if (!b.queries[q.id]) continue;
    const docs = new Set<string>();
    for (const r of q.golden.expected) {
      const d = referencedDocument(r, after, before);
      if (d !== null && touched.has(d)) docs.add(docName(d, after[d] ? after : before));
    }
    if (docs.size) queries.push({ id: q.id, documents: [...docs].sort() });
  }
  return {
    ...base,
    known: true,
    reason: null,
    added: added.map((id) => docName(id, after)),
    changed: changed.map((id) => docName(id, after)),
    removed: removed.map((id) => docName(id, before)),
    queries,
  };
}

const list = (xs: string[], max = 20) => (xs.length > max ? `${xs.slice(0, max).join(', ')}, … and ${xs.length - max} more` : xs.join(', '));

/** The LOUD notes of a corpus change (one line each), for the verdict. */
export function corpusChangeNotes(c: CorpusChange, baselinePath: string, shared: number): string[] {
  const head = `LOUD: corpus ${c.corpus} changed since the baseline ${baselinePath} (corpus ${shortCorpusId(c.baselineCorpusId)} -> ${shortCorpusId(c.runCorpusId)}): compared per query on the ${shared} shared queries`;
  if (!c.known) return [`${head}; which documents changed is unknown: ${c.reason}`];
  const out = [`${head}; documents: ${c.changed.length} changed, ${c.added.length} added, ${c.removed.length} removed`];
  if (c.changed.length) out.push(`LOUD: documents changed: ${list(c.changed)}`);
  if (c.added.length) out.push(`LOUD: documents added: ${list(c.added)}`);
  if (c.removed.length) out.push(`LOUD: documents removed: ${list(c.removed)}`);
  out.push(
    c.queries.length
      ? `LOUD: golden queries whose expected documents changed: ${list(c.queries.map((q) => `${q.id} (${q.documents.join(', ')})`), 25)}`
      : 'LOUD: no golden query expects a document that changed',
  );
  return out;
}

/** For a url:/module: run: the corpus is not rankgate's to know (said once, when a baseline is compared). */
export function unknownCorpusNote(col: Column, run: RunCorpus | undefined): string | null {
  if (col.identity || !serviceKind(col)) return null;
  const why = run && !run.known ? run.reason : `'${col.label}' is not rankgate's own search`;
  return `corpus not compared with the baseline: ${why}; documents added, changed or removed since the baseline cannot be listed (the queries are compared as always)`;
}

/** The run's corpus when a comparison with baseline `b` needs it (the same source with other content), else undefined. */
export async function runCorpusFor(col: Column, b: Baseline | null | undefined): Promise<RunCorpus | undefined> {
  if (!b) return undefined;
  if (!col.identity) return runCorpus(col); // no I/O: says why the corpus is unknown
  const was = b.identity;
  if (!was?.corpus || was.corpus !== col.identity.corpus || was.corpusId === (col.identity.corpusId ?? null)) return undefined;
  return runCorpus(col);
}
