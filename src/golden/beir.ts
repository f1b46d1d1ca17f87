/**
 * BEIR folders: `queries.jsonl` ({"_id","text","metadata"}), `qrels/<split>.tsv` (header
 * `query-id corpus-id score`, tab-separated) and `corpus.jsonl` (the corpus: read by src/ingest, not here).
 *
 * The golden set is the queries that have judgements in the split (default `test`, else the only
 * split present), in queries.jsonl order; each qrels row is a `doc_id` reference with grade = score and
 * relevant = score >= 1 (BEIR's own rule). Only the query text is sent on to search; `metadata` and
 * other fields stay in `extra`. Queries without judgements in the split are kept aside and written back
 * in place. language `en` and category (the folder name) are derived.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { GoldenQuery, Reference } from './schema.ts';
import { Collector, show } from './problems.ts';
import { readTextFile } from './text.ts';
import { Fields, compact, finalize, isPlainObject, ownExtra, shallowEnough, type Candidate } from './entry.ts';
import { parseJsonLines, rowLocator } from './goldjsonl.ts';
import { entryLabel, reportDuplicateKeys, type ReadResult } from './des058.ts';
import { UserError } from '../errors.ts';

/** The fields of a BEIR queries.jsonl line (any other is an error). */
export const BEIR_QUERY_KEYS = ['_id', 'text', 'metadata'] as const;

export function beirSplits(dir: string): string[] {
  const q = join(dir, 'qrels');
  if (!existsSync(q)) return [];
  return readdirSync(q)
    .filter((f) => f.endsWith('.tsv'))
    .map((f) => f.slice(0, -4))
    .sort();
}

export function readBeir(dir: string, opts: { split?: string }, cs: Collector[]): ReadResult {
  const qc = new Collector(join(dir, 'queries.jsonl'));
  cs.push(qc);
  const splits = beirSplits(dir);
  const split = opts.split ?? (splits.includes('test') ? 'test' : splits.length === 1 ? splits[0]! : undefined);
  if (!split || !splits.includes(split)) {
    const rc = new Collector(join(dir, 'qrels'));
    cs.push(rc);
    rc.error(undefined, 'file', 'split', `${split ? `no qrels/${split}.tsv` : 'cannot choose a split'}, expected one of ${splits.length ? splits.join(', ') : '(none: add qrels/<split>.tsv)'} (pass --split)`);
    return { queries: [] };
  }
  const qrelsFile = join(dir, 'qrels', `${split}.tsv`);
  const rc = new Collector(qrelsFile);
  cs.push(rc);
  const qtext = readTextFile(join(dir, 'queries.jsonl'), qc);
  const rtext = readTextFile(qrelsFile, rc);
  if (qtext === undefined || rtext === undefined) return { queries: [] };

  // qrels
  const judged = new Map<string, { refs: Reference[]; line: number }>();
  const qrelLines = rtext.split('\n');
  let header = false;
  qrelLines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    const cols = line.split('\t');
    if (i === 0 && cols[0] === 'query-id') {
      header = true;
      return;
    }
    const at = { line: i + 1 };
    if (cols.length !== 3) return rc.error(at, `#${i}`, 'qrels', `got ${cols.length} tab-separated columns, expected 3: query-id corpus-id score`);
    const [qid, did, score] = cols as [string, string, string];
    if (!/^-?\d+$/.test(score.trim())) return rc.error(at, qid, 'score', `got ${show(score)}, expected an integer grade`);
    const g = Number(score);
    let e = judged.get(qid);
    if (!e) judged.set(qid, (e = { refs: [], line: i + 1 }));
    if (e.refs.some((r) => r.doc_id === did)) return rc.error(at, qid, 'corpus-id', `duplicate judgement for ${show(did)}, expected one row per query and document`);
    e.refs.push({ doc_id: did, grade: g, relevant: g >= 1 });
  });

  const rows = parseJsonLines(qtext, qc);
  rows.forEach((r, index) => {
    if (r.value !== undefined) reportDuplicateKeys(r.text, qc, (i) => entryLabel(rows[i]?.value, '_id', i), { index });
  });
  const candidates: Candidate[] = [];
  const unjudged: { position: number; raw: unknown }[] = [];
  const seen = new Set<string>();
  const category = basename(dir) || 'beir';
  rows.forEach(({ value: raw }, index) => {
    if (raw === undefined) return;
    if (!isPlainObject(raw)) return qc.error({ index, path: [] }, `#${index}`, 'entry', `got ${show(raw)}, expected an object {"_id","text","metadata"}`);
    if (!shallowEnough(qc, raw, index, `#${index}`)) return;
    const label = typeof raw._id === 'string' && raw._id ? raw._id : `#${index}`;
    const f = new Fields(qc, raw, index, label);
    const id = f.idLike('_id', { required: true });
    const text = f.str('text', { required: true, nonEmpty: true, expect: 'the query text' });
    f.closed(BEIR_QUERY_KEYS, 'BEIR queries.jsonl');
    if (id !== undefined) seen.add(id);
    const j = id !== undefined ? judged.get(id) : undefined;
    if (!j) {
      if (!f.failed) unjudged.push({ position: index, raw });
      return;
    }
    candidates.push({
      fields: f,
      query: compact({ id, query: text, language: 'en', category, expected: j.refs, extra: f.rest(), origin: { format: 'beir', derived: ['language', 'category'] } }),
    });
  });
  for (const [qid, j] of judged) {
    if (!seen.has(qid)) rc.error({ line: j.line }, qid, 'query-id', `query ${show(qid)} is not in queries.jsonl, expected every judged query to exist`);
  }
  const queries = finalize(qc, candidates, { expectedField: 'qrels', queryField: 'text', names: { relevant: 'a qrels row with score >= 1' } });
  qc.resolve(rowLocator(rows));
  return { queries, meta: { split, header, unjudged } };
}

function docRef(r: Reference, q: GoldenQuery, format: string): string {
  const d = r.doc_id ?? r.chunk_id ?? r.path;
  if (!d) throw new UserError(`cannot write ${format}: query ${q.id} has a reference with only a passage substring, expected doc_id, chunk_id or path (resolve substrings to chunk ids first)`);
  return d;
}

/** Files of a BEIR folder (relative path -> content). corpus.jsonl is not written (it is the corpus, not the golden set). */
export function writeBeir(queries: readonly GoldenQuery[], meta?: Record<string, unknown>): Map<string, string> {
  const split = typeof meta?.split === 'string' ? meta.split : 'test';
  const rows: string[] = queries.map((q) => {
    const extra = { ...ownExtra(q, 'beir') };
    const metadata = 'metadata' in extra ? extra.metadata : q.origin?.format === 'beir' ? undefined : {};
    delete extra.metadata;
    return JSON.stringify(compact({ _id: q.id, text: q.query, metadata, ...extra }));
  });
  const unjudged = Array.isArray(meta?.unjudged) ? (meta.unjudged as { position: number; raw: unknown }[]) : [];
  for (const u of [...unjudged].sort((a, b) => a.position - b.position)) rows.splice(Math.min(u.position, rows.length), 0, JSON.stringify(u.raw));
  const qrels = [meta?.header === false ? undefined : 'query-id\tcorpus-id\tscore'];
  for (const q of queries) for (const r of q.expected) qrels.push(`${q.id}\t${docRef(r, q, 'beir')}\t${r.grade}`);
  return new Map([
    ['queries.jsonl', rows.length ? `${rows.join('\n')}\n` : ''],
    [`qrels/${split}.tsv`, `${qrels.filter((x) => x !== undefined).join('\n')}\n`],
  ]);
}

export { docRef };
