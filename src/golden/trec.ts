/**
 * TREC topics + qrels.
 *
 * Topics: the classic SGML form
 *   <top>
 *   <num> Number: 301
 *   <title> International Organized Crime
 *   <desc> Description:
 *   Identify organizations that participate in international criminal activity.
 *   <narr> Narrative:
 *   A relevant document must ...
 *   </top>
 * or a tab-separated `qid<TAB>query` file (Anserini style). `title` -> query, `desc` -> intent,
 * `narr` -> notes, the classic ad hoc tags (<con>, <fac>, ...: TREC_TOPIC_TAGS) -> extra; any other tag is an error.
 * Qrels: `qid iteration docno relevance` (whitespace-separated): each row is a `doc_id` reference with
 * grade = relevance (negative grades kept, zero gain) and relevant = relevance >= 1 (trec_eval's
 * default). A non-zero iteration is kept in the reference's extra. Topics without judgements are
 * queries with no expectations; judgements for topics missing from the topics file are a warning
 * and are written back unchanged.
 *
 * Which files: a folder holding one `*topics*` and one `*qrels*` file; or a topics file, whose qrels
 * are found next to it (`topics` -> `qrels` in the name, or `<stem>.qrels`), or given explicitly.
 * language `en` and category `trec` are derived.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { GoldenQuery, Reference } from './schema.ts';
import { Collector, show } from './problems.ts';
import { LineIndex, readTextFile } from './text.ts';
import { Fields, compact, finalize, ownExtra, type Candidate } from './entry.ts';
import type { ReadResult } from './des058.ts';
import { docRef } from './beir.ts';

export function findTrecFiles(path: string, qrels?: string): { topics: string; qrels?: string } {
  if (existsSync(path) && statSync(path).isDirectory()) {
    const files = readdirSync(path).sort();
    const t = files.find((f) => /topic/i.test(f));
    const q = qrels ?? files.find((f) => /qrel/i.test(f));
    return { topics: join(path, t ?? 'topics'), qrels: q ? (qrels ? q : join(path, q)) : undefined };
  }
  if (qrels) return { topics: path, qrels };
  const dir = dirname(path);
  const name = basename(path);
  if (/qrel/i.test(name) && !/topic/i.test(name)) {
    // a qrels file was named: its topics are the sibling with "qrels" -> "topics"
    for (const cnd of [name.replace(/qrels?/i, 'topics'), name.replace(/qrels?/i, 'topic')]) {
      if (cnd !== name && existsSync(join(dir, cnd))) return { topics: join(dir, cnd), qrels: path };
    }
    return { topics: '', qrels: path };
  }
  const stem = name.replace(/\.(txt|tsv|xml|sgml)$/i, '').replace(/\.topics$/i, '');
  const candidates = [name.replace(/topics/i, 'qrels'), `${stem}.qrels`, `${stem}.qrels.txt`, 'qrels.txt', 'qrels'];
  for (const cnd of candidates) {
    if (cnd !== name && existsSync(join(dir, cnd))) return { topics: path, qrels: join(dir, cnd) };
  }
  return { topics: path };
}

interface RawTopic {
  fields: Record<string, string>;
  offset: number;
}

/**
 * The tags of a TREC topic: num, title, desc, narr (read), and the other tags of the classic ad hoc topics (head, dom,
 * con, fac, nat, def, smry: kept in `extra`, written back). Any other tag is an error (a misspelt <titel> never
 * leaves a topic without its query unnoticed).
 */
export const TREC_TOPIC_TAGS = ['num', 'title', 'desc', 'narr', 'head', 'dom', 'con', 'fac', 'nat', 'def', 'smry'] as const;

const TAG_NAMES: Record<string, string> = { num: 'Number:', title: 'Topic:', desc: 'Description:', narr: 'Narrative:' };

function parseSgmlTopics(text: string): RawTopic[] {
  const out: RawTopic[] = [];
  const re = /<top>([\s\S]*?)<\/top>/gi;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text))) {
    const body = m[1]!;
    const fields: Record<string, string> = {};
    const parts = body.split(/<(\/?)([a-z]+)>/i);
    // parts: [before, slash, tag, text, slash, tag, text, ...]
    for (let i = 1; i + 2 < parts.length + 1; i += 3) {
      if (parts[i] === '/') continue;
      const tag = parts[i + 1]!.toLowerCase();
      let val = (parts[i + 2] ?? '').trim();
      const prefix = TAG_NAMES[tag];
      if (prefix && val.toLowerCase().startsWith(prefix.toLowerCase())) val = val.slice(prefix.length).trim();
      fields[tag] = tag === 'title' || tag === 'num' ? val.replace(/\s+/g, ' ') : val;
    }
    out.push({ fields, offset: m.index });
  }
  return out;
}

export function readTrec(path: string, opts: { qrels?: string }, cs: Collector[]): ReadResult {
  const files = findTrecFiles(path, opts.qrels);
  if (!files.topics) {
    const qc = new Collector(path);
    cs.push(qc);
    qc.error(undefined, 'file', 'topics', `this is a qrels file and no topics file was found beside it, expected the topics (query texts) too: a ${basename(path).replace(/qrels?/i, 'topics')} file, or a folder with both`);
    return { queries: [] };
  }
  const tc = new Collector(files.topics);
  cs.push(tc);
  const ttext = readTextFile(files.topics, tc);
  if (ttext === undefined) return { queries: [] };
  const li = new LineIndex(ttext);
  let topics: RawTopic[];
  let topicsFormat = 'sgml';
  if (/<top>/i.test(ttext)) topics = parseSgmlTopics(ttext);
  else {
    topicsFormat = 'tsv';
    topics = [];
    let off = 0;
    for (const raw of ttext.split('\n')) {
      const line = raw.replace(/\r$/, '');
      if (line.trim() !== '') {
        const tab = line.indexOf('\t');
        if (tab < 0) tc.error(li.pos(off), `#${topics.length}`, 'topic', `got ${show(line)}, expected <top> SGML topics or qid<TAB>query lines`);
        else topics.push({ fields: { num: line.slice(0, tab).trim(), title: line.slice(tab + 1) }, offset: off });
      }
      off += raw.length + 1;
    }
  }
  if (topics.length === 0 && tc.errorCount === 0) tc.error({ line: 1 }, 'file', 'topics', 'no topics found, expected <top> ... </top> blocks or qid<TAB>query lines');

  const judged = new Map<string, Reference[]>();
  const orphans: string[] = [];
  const ids = new Set(topics.map((t) => t.fields.num));
  if (!files.qrels) {
    tc.error(undefined, 'file', 'qrels', `no qrels file found next to ${basename(files.topics)}, expected a *qrels* file beside it (or pass --qrels)`);
  } else {
    const rc = new Collector(files.qrels);
    cs.push(rc);
    const rtext = readTextFile(files.qrels, rc);
    (rtext ?? '').split('\n').forEach((raw, i) => {
      const line = raw.replace(/\r$/, '');
      if (line.trim() === '') return;
      const cols = line.trim().split(/\s+/);
      const at = { line: i + 1 };
      if (cols.length !== 4) return rc.error(at, `#${i}`, 'qrels', `got ${cols.length} columns, expected 4: qid iteration docno relevance`);
      const [qid, iter, doc, rel] = cols as [string, string, string, string];
      if (!/^-?\d+$/.test(rel)) return rc.error(at, qid, 'relevance', `got ${show(rel)}, expected an integer grade`);
      if (!ids.has(qid)) {
        rc.warn(at, qid, 'qid', `topic ${show(qid)} is not in ${basename(files.topics)}, expected judgements only for listed topics (kept, not evaluated)`);
        orphans.push(line);
        return;
      }
      const g = Number(rel);
      const list = judged.get(qid) ?? [];
      judged.set(qid, list);
      if (list.some((r) => r.doc_id === doc)) return rc.error(at, qid, 'docno', `duplicate judgement for ${show(doc)}, expected one row per topic and document`);
      list.push(compact({ doc_id: doc, grade: g, relevant: g >= 1, extra: iter === '0' ? undefined : { iteration: iter } }) as Reference);
    });
  }
  const candidates: Candidate[] = topics.map((t, index) => {
    const label = t.fields.num || `#${index}`;
    const f = new Fields(tc, t.fields, index, label);
    const id = f.str('num', { required: true, nonEmpty: true, expect: 'a topic number' });
    const query = f.str('title', { required: true, nonEmpty: true, expect: 'the topic title (the query)' });
    const intent = f.str('desc');
    const notes = f.str('narr');
    f.closed(TREC_TOPIC_TAGS, 'TREC topic', 'tag');
    return {
      fields: f,
      query: compact({ id, query, language: 'en', category: 'trec', intent, notes, expected: judged.get(id ?? '') ?? [], extra: f.rest(), origin: { format: 'trec', derived: ['language', 'category'] } }),
    };
  });
  const queries = finalize(tc, candidates, { expectedField: 'qrels', names: { relevant: 'a qrels row with relevance >= 1' } });
  tc.resolve(() => (ref) => {
    const t = topics[ref.index];
    return t ? { line: li.line(t.offset) } : undefined;
  });
  return { queries, meta: { topicsFormat, orphans } };
}

export function writeTrec(queries: readonly GoldenQuery[], meta?: Record<string, unknown>): { topics: string; qrels: string } {
  let topics: string;
  if (meta?.topicsFormat === 'tsv') topics = queries.map((q) => `${q.id}\t${q.query}\n`).join('');
  else
    topics = queries
      .map((q) => {
        const lines = ['<top>', `<num> Number: ${q.id}`, `<title> ${q.query}`];
        if (q.intent !== undefined) lines.push('<desc> Description:', q.intent);
        if (q.notes !== undefined) lines.push('<narr> Narrative:', q.notes);
        for (const [k, v] of Object.entries(ownExtra(q, 'trec') ?? {})) lines.push(`<${k}>`, typeof v === 'string' ? v : JSON.stringify(v));
        lines.push('</top>', '');
        return lines.join('\n');
      })
      .join('\n');
  const qrels: string[] = [];
  for (const q of queries) for (const r of q.expected) qrels.push(`${q.id} ${typeof r.extra?.iteration === 'string' ? r.extra.iteration : '0'} ${docRef(r, q, 'trec')} ${r.grade}`);
  if (Array.isArray(meta?.orphans)) qrels.push(...(meta.orphans as string[]));
  return { topics, qrels: qrels.length ? `${qrels.join('\n')}\n` : '' };
}
