/**
 * Id spaces checked before a verdict. A search service and a golden set that name documents differently (the service
 * returns `disc-brake-squeal`, the golden set expects `brakes/disc-brake-squeal.md`) score every query 0: that is
 * not a quality result, and the gate says so (exit 2) with one golden id and one returned id side by side.
 *
 * Which returned field is compared with which golden field (src/results/score.ts refMatchesHit):
 *   golden chunk_id  <-> returned chunk_id
 *   golden doc_id    <-> returned document_id
 *   golden path      <-> returned path, or document_id
 *   golden passage_substring <-> the returned content (not an id: such queries are left out here)
 *
 * The check is per query (idSpaceProblem): a query whose returned ids share no form with its golden ids (paths, chunk
 * ids, numbers, names) and are no known id is in another id space (exit 2, named); ids of the golden ids' form, or
 * paths of the known corpus, are measured, and wrong documents in the right form are a quality result (exit 1 by
 * the floors).
 */
import type { Reference } from '../golden/schema.ts';
import type { Column, QueryRecord } from '../results/read.ts';

/** Below this many queries a total miss with renamed ids of the same form may be a real one: left to the floors. */
export const MIN_QUERIES = 3;

export const ID_MATCHING_DOCS = "rankgate's docs/adopting.md, section \"How returned ids are matched to the golden set\"";

export type IdForm = 'chunk id' | 'path' | 'number' | 'name';

/** The form of an id: `doc#c300-2` a chunk id, `a/b.md` or `b.md` a path, `123` a number, else a name (slug, uuid…). */
export function idForm(id: string): IdForm {
  if (id.includes('#')) return 'chunk id';
  if (/[\\/]/.test(id) || /\.[A-Za-z][A-Za-z0-9]{0,5}$/.test(id)) return 'path';
  if (/^\d+$/.test(id)) return 'number';
  return 'name';
}

type GoldenField = 'chunk_id' | 'doc_id' | 'path';
type ReturnedField = 'chunk_id' | 'document_id' | 'path';
type Hit = QueryRecord['top'][number];

/** The returned fields a golden field is compared with (refMatchesHit). */
const COMPARED: Record<GoldenField, ReturnedField[]> = { chunk_id: ['chunk_id'], doc_id: ['document_id'], path: ['path', 'document_id'] };

function goldenId(r: Reference): [GoldenField, string] | null {
  if (r.chunk_id !== undefined) return ['chunk_id', r.chunk_id];
  if (r.passage_substring !== undefined) return null;
  if (r.doc_id !== undefined) return ['doc_id', r.doc_id];
  if (r.path !== undefined) return ['path', r.path];
  return null;
}

function returned(h: Hit, f: ReturnedField): string | undefined {
  return f === 'chunk_id' ? h.chunkId : f === 'document_id' ? h.documentId : h.path;
}

/** `brakes/Disc-Brake-Squeal.md#c300-1` -> `disc-brake-squeal`: the part of an id that names the document. */
function stem(id: string): string {
  const noChunk = id.includes('#') ? id.slice(0, id.lastIndexOf('#')) : id;
  const last = noChunk.split(/[\\/]/).pop() ?? noChunk;
  return last.replace(/\.[A-Za-z][A-Za-z0-9]{0,5}$/, '').toLowerCase();
}

interface Pair {
  query: string;
  golden: [GoldenField, string];
  returned: [ReturnedField, string];
  rank: number;
  related: boolean;
}

/** One golden id and one returned id to show side by side: a pair naming the same document differently when there is one. */
function pickPair(qs: QueryRecord[]): Pair | null {
  let first: Pair | null = null;
  for (const q of qs) {
    for (const r of q.golden.expected) {
      const g = goldenId(r);
      if (!g) continue;
      for (const h of q.top) {
        for (const f of COMPARED[g[0]]) {
          const v = returned(h, f);
          if (v === undefined) continue;
          const p: Pair = { query: q.id, golden: g, returned: [f, v], rank: h.rank, related: false };
          first ??= p;
          const a = stem(g[1]);
          const b = stem(v);
          if (a.length >= 3 && b.length >= 3 && (a === b || a.includes(b) || b.includes(a))) return { ...p, related: true };
        }
      }
    }
  }
  return first;
}

const plural = (forms: Set<string>) => [...forms].sort().map((f) => (f === 'path' ? 'paths' : `${f}s`)).join(' and ');

/**
 * Ids the gate knows name documents of the golden set's space: every golden id of the column (chunk_id, doc_id, path),
 * and the documents of the run's corpus when rankgate knows it (their ids and paths: src/gate/corpus-change.ts).
 */
export function knownIds(col: Column, corpusDocuments?: Record<string, { p?: string }>): Set<string> {
  const out = new Set<string>();
  for (const q of col.queries)
    for (const r of q.golden.expected) {
      const g = goldenId(r);
      if (g) out.add(g[1]);
    }
  for (const [id, d] of Object.entries(corpusDocuments ?? {})) {
    out.add(id);
    if (d?.p) out.add(d.p);
  }
  return out;
}

/** Queries named in a reason (the rest counted). */
const SHOWN = 5;
const names = (ids: string[]) => ids.slice(0, SHOWN).join(', ') + (ids.length > SHOWN ? `, … (${ids.length - SHOWN} more)` : '');

/**
 * The exit-2 reason when the ids of the results and of the golden set cannot match; null when they can (then the
 * floors decide: wrong documents in the right form are a quality result).
 *
 * Per query (of those that returned results and expect ids): a query that found none of its expected ids, whose
 * returned ids share no form with its golden ids and none of which is a known id (knownIds: a golden id of any query,
 * a document of the run's corpus) is in ANOTHER id space. One such query is enough: its score is 0 whatever the
 * search did; the reason names them and says how many of the queries they are. Ids of the same form, or known ids,
 * are measured. Except: when no query found anything (at least MIN_QUERIES of them) and the service returns the
 * expected documents under other names of the same form (`kb/brakes/doc-0` for `brakes/doc-0.md`), the ids, not
 * the search, are the cause.
 */
export function idSpaceProblem(col: Column, corpusDocuments?: Record<string, { p?: string }>): string | null {
  // queries that returned results and expect ids (passage substrings match by content)
  const qs = col.queries.filter((q) => q.error === null && q.retrieval !== null && q.top.length > 0 && q.golden.expected.some((r) => goldenId(r) !== null));
  if (!qs.length) return null;
  const known = knownIds(col, corpusDocuments);
  const goldenForms = new Set<IdForm>();
  const returnedForms = new Set<IdForm>();
  const foreign: QueryRecord[] = [];
  let anyFound = false;
  let anyKnown = false;
  let renamed = 0;
  for (const q of qs) {
    if ((q.retrieval!.found ?? 0) > 0 || q.retrieval!.ndcg_at_10 > 0) {
      anyFound = true;
      continue;
    }
    const qGolden = new Set<IdForm>();
    const qReturned = new Set<IdForm>();
    let shared = false;
    let isKnown = false;
    let related = false;
    for (const r of q.golden.expected) {
      const g = goldenId(r);
      if (!g) continue;
      const gf = idForm(g[1]);
      qGolden.add(gf);
      for (const h of q.top)
        for (const f of COMPARED[g[0]]) {
          const v = returned(h, f);
          if (v === undefined) continue;
          const rf = idForm(v);
          qReturned.add(rf);
          if (rf === gf) shared = true;
          if (known.has(v)) isKnown = true;
          const a = stem(g[1]);
          if (a.length >= 3 && a === stem(v) && v !== g[1]) related = true;
        }
    }
    qGolden.forEach((f) => goldenForms.add(f));
    qReturned.forEach((f) => returnedForms.add(f));
    if (isKnown) anyKnown = true;
    if (!shared && !isKnown && qReturned.size) foreign.push(q);
    else if (shared && !isKnown && related) renamed++;
  }
  const tail = `  make the service return the golden set's ids, or the golden set name the service's; which returned field is matched against which golden field: ${ID_MATCHING_DOCS}`;
  if (foreign.length) {
    const pair = pickPair(foreign)!;
    const all = foreign.length === qs.length;
    const fGolden = new Set<string>();
    const fReturned = new Set<string>();
    for (const q of foreign)
      for (const r of q.golden.expected) {
        const g = goldenId(r);
        if (!g) continue;
        fGolden.add(idForm(g[1]));
        for (const h of q.top) for (const f of COMPARED[g[0]]) if (returned(h, f) !== undefined) fReturned.add(idForm(returned(h, f)!));
      }
    const head = all
      ? `ids: no expected id of any of the ${qs.length} queries with results appears in their results: the golden set names documents by ${plural(fGolden)}, the service by ${plural(fReturned)}; nothing was measured (not a Success@3 of 0)`
      : `ids: ${foreign.length} of the ${qs.length} queries with results got ids of another form than the golden set's (the golden set names their documents by ${plural(fGolden)}, the service by ${plural(fReturned)}): ${names(foreign.map((q) => q.id))}; they cannot score, so nothing trustworthy was measured`;
    return [head, ...pairLines(pair), tail].join('\n');
  }
  if (!anyFound && !anyKnown && renamed > 0 && qs.length >= MIN_QUERIES) {
    const pair = pickPair(qs);
    if (!pair) return null;
    return [
      `ids: no expected id of any of the ${qs.length} queries with results appears in their results: the golden ids and the returned ids have the same form (${plural(goldenForms)}) but never match, and the service names the expected documents otherwise; nothing was measured (not a Success@3 of 0)`,
      ...pairLines(pair),
      tail,
    ].join('\n');
  }
  return null;
}

function pairLines(pair: Pair): string[] {
  const w = Math.max(pair.golden[0].length, pair.returned[0].length);
  const wv = Math.max(pair.golden[1].length, pair.returned[1].length);
  return [
    `    golden set  ${pair.golden[0].padEnd(w)}  ${pair.golden[1].padEnd(wv)}  (query ${pair.query})`,
    `    service     ${pair.returned[0].padEnd(w)}  ${pair.returned[1].padEnd(wv)}  (rank ${pair.rank}${pair.related ? ', the same document by its name?' : ''})`,
  ];
}
