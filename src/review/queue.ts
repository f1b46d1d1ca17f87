/**
 * The review queue for people (`rankgate judge review export | import`, docs/judgments.md "The review queue"): the
 * labels nobody has reviewed (a model's and the logs' labels in the judgments file, and the `source: bootstrap` entries
 * of gold-set JSONL files) shown one (query, document) at a time for a person to grade 0-3; the grades come back as
 * `source: chair` labels (and promoted gold-set entries), with the model's agreement with the person.
 *
 * Blind, as TREC assessors and UMBRELA's comparison with them work: the page never shows the grade a label gives, nor
 * where it came from (a model, feedback, clicks), so it cannot anchor the person. Import names the outcome by comparing
 * afterwards: the person's grade equal to the label's is an ACCEPT, another grade a CHANGE, 0 where the label said
 * relevant (1-3) a REJECT. A pair the person leaves ungraded stays pending.
 *
 * What the page shows of a document: the query's text (the golden set, or the results' golden metadata), and the
 * document's text from, in order, (1) the chunk a label names (`chunk`) recomputed from --corpus, (2) the highest-ranked
 * hit of that query naming the document in --results (the text the judge saw), (3) the document's opening in --corpus,
 * cut at `chars`. A pair with no text anywhere is left out of the page, counted (a person cannot grade a title).
 */
import { createHash } from 'node:crypto';
import { UserError } from '../errors.ts';
import { GoldenQuerySchema, type GoldenQuery } from '../golden/schema.ts';
import { chunkDocument } from '../ingest/chunker.ts';
import type { CorpusDocument } from '../ingest/types.ts';
import { mergeLabels, PRECEDENCE, type Judgment, type JudgmentSource } from '../judgments/file.ts';
import { checkGoldText, goldLinesText, type GoldLine, type GoldLines } from '../judgments/goldlines.ts';
import { agreement, type AgreementPair, type AgreementSummary } from '../metrics/agreement.ts';
import { shownText } from '../results/compact.ts';
import { parseOutput } from '../results/score.ts';
import type { HarnessHit } from '../results/types.ts';
import { isObj, parseJson, sampleIds } from './key.ts';
import { normaliseReviewer, shownName } from './names.ts';

export const QUEUE_FORMAT = 1;
/** Characters of a document's text shown (a chunk of 300 tokens is ~1,500 characters of English). */
export const QUEUE_TEXT_CHARS = 1500;
export const GRADE_NAMES = ['irrelevant', 'related', 'strong supporting context', 'direct answer'] as const;

export interface QueueItem {
  item: number;
  /** the golden query's id and the document as the label names it: import finds the labels by them */
  query: string;
  doc: string;
  queryText: string;
  title: string;
  heading?: string;
  text: string;
}

export interface QueuePageData {
  kind: 'rankgate-judgments-queue';
  version: typeof QUEUE_FORMAT;
  exportId: string;
  chars: number;
  items: QueueItem[];
}

export interface Decision {
  item?: number;
  query: string;
  doc: string;
  grade: number;
  time: string;
}

export interface DecisionsDoc {
  kind: 'rankgate-judgments-decisions';
  version: typeof QUEUE_FORMAT;
  exportId: string;
  reviewer: string;
  decisions: Decision[];
}

const pairKey = (q: string, d: string) => `${q}\u0000${d}`;

/** A pending pair: the labels that make it pending and the golden entry that lists it. */
interface Pending {
  query: string;
  doc: string;
  chunk?: string;
}

/** The documents of a golden entry a review grades: its references by document id (plain or graded). */
export function entryDocs(q: GoldenQuery): string[] {
  return [...new Set(q.expected.filter((r) => r.doc_id !== undefined && r.passage_substring === undefined && r.chunk_id === undefined).map((r) => r.doc_id!))];
}

export interface QueueSources {
  labels: readonly Judgment[];
  /** golden files: their queries give the texts; the `source: bootstrap` entries of gold-set JSONL ones are pending */
  golden: readonly { path: string; format: string; queries: readonly GoldenQuery[] }[];
  /** promptfoo results rows (any number of files), for the documents' texts and the queries' */
  rows?: Iterable<unknown>;
  corpus?: readonly CorpusDocument[];
  limit?: number;
  seed?: number;
  chars?: number;
}

export interface QueueExport {
  page: QueuePageData;
  pending: number;
  /** pending from each source */
  fromLabels: number;
  fromEntries: number;
  /** bootstrap entries of golden files that are not gold-set JSONL (promotion writes gold-set JSONL only) */
  notJsonl: number;
  leftOut: { query: string; doc: string; why: string }[];
}

interface Shown {
  title: string;
  heading?: string;
  text: string;
  rank: number;
}

/** The pairs nobody reviewed: pending labels (a chair label of the pair ends it) and golden bootstrap entries' docs. */
export function pendingPairs(src: Pick<QueueSources, 'labels' | 'golden'>): { pairs: Pending[]; fromLabels: number; fromEntries: number; notJsonl: number } {
  const reviewed = new Set(src.labels.filter((j) => j.source === 'chair').map((j) => pairKey(j.query, j.doc)));
  const m = new Map<string, Pending>();
  let fromLabels = 0;
  let fromEntries = 0;
  let notJsonl = 0;
  for (const j of src.labels) {
    if (j.source === 'chair' || reviewed.has(pairKey(j.query, j.doc))) continue;
    const k = pairKey(j.query, j.doc);
    const cur = m.get(k);
    if (!cur) {
      fromLabels++;
      m.set(k, { query: j.query, doc: j.doc, ...(j.chunk ? { chunk: j.chunk } : {}) });
    } else if (!cur.chunk && j.chunk) cur.chunk = j.chunk;
  }
  for (const g of src.golden)
    for (const q of g.queries) {
      if (q.source !== 'bootstrap') continue;
      if (g.format !== 'jsonl') {
        notJsonl++;
        continue;
      }
      for (const d of entryDocs(q)) {
        const k = pairKey(q.id, d);
        if (m.has(k) || reviewed.has(k)) continue;
        fromEntries++;
        m.set(k, { query: q.id, doc: d });
      }
    }
  const pairs = [...m.values()].sort((a, b) => (a.query !== b.query ? (a.query < b.query ? -1 : 1) : a.doc < b.doc ? -1 : a.doc > b.doc ? 1 : 0));
  return { pairs, fromLabels, fromEntries, notJsonl };
}

const CHUNK_ID = /#c(\d+)-(\d+)$/;

/** The review queue's page data (and what was left out, and why). */
export function buildQueue(src: QueueSources): QueueExport {
  const chars = src.chars ?? QUEUE_TEXT_CHARS;
  const { pairs: all, fromLabels, fromEntries, notJsonl } = pendingPairs(src);
  if (!all.length) throw new UserError('nothing to review: no pending label (every model and bootstrap label has a chair label) and no source: bootstrap entry in the golden sets given');
  const chosen = src.limit !== undefined && src.limit < all.length ? new Set(sampleIds(all.map((p) => pairKey(p.query, p.doc)), src.limit, src.seed ?? 42)) : undefined;
  const pairs = chosen ? all.filter((p) => chosen.has(pairKey(p.query, p.doc))) : all;
  const want = new Map<string, Pending[]>();
  for (const p of pairs) (want.get(p.query) ?? want.set(p.query, []).get(p.query)!).push(p);

  const queryText = new Map<string, string>();
  for (const g of src.golden) for (const q of g.queries) if (want.has(q.id) && !queryText.has(q.id)) queryText.set(q.id, q.query);
  // the results: each pending pair's best hit (the chunk a label names, else the highest rank naming the document)
  const fromHits = new Map<string, Shown & { exact: boolean }>();
  for (const r of src.rows ?? []) {
    const row = r as { testCase?: { metadata?: { golden?: unknown } }; response?: { output?: unknown; metadata?: unknown; error?: unknown } | null };
    const g = GoldenQuerySchema.safeParse(row?.testCase?.metadata?.golden);
    if (!g.success || !want.has(g.data.id) || row.response?.error) continue;
    if (!queryText.has(g.data.id)) queryText.set(g.data.id, g.data.query);
    let hits: HarnessHit[];
    try {
      hits = parseOutput(row.response?.output, row.response?.metadata).hits;
    } catch {
      continue;
    }
    for (const p of want.get(g.data.id)!)
      for (const h of hits) {
        if (!h.content) continue;
        const exact = !!p.chunk && h.chunkId === p.chunk;
        if (!exact && !(h.path === p.doc || h.documentId === p.doc || h.chunkId === p.doc)) continue;
        const k = pairKey(p.query, p.doc);
        const cur = fromHits.get(k);
        if (cur && (cur.exact || !exact) && cur.rank <= h.rank) continue;
        fromHits.set(k, { title: String(h.title ?? h.path ?? h.documentId), ...(h.heading ? { heading: h.heading } : {}), text: h.content, rank: h.rank, exact });
      }
  }
  // the corpus: documents by id and by path; a chunk recomputed as the index made it
  const docs = new Map<string, CorpusDocument>();
  for (const d of src.corpus ?? []) {
    docs.set(d.id, d);
    if (d.path && !docs.has(d.path)) docs.set(d.path, d);
  }
  const chunks = new Map<string, ReturnType<typeof chunkDocument>>();
  const fromCorpus = (p: Pending): Shown | undefined => {
    const m = p.chunk ? CHUNK_ID.exec(p.chunk) : null;
    const d = docs.get(m ? p.chunk!.slice(0, p.chunk!.lastIndexOf('#')) : p.doc) ?? docs.get(p.doc);
    if (!d) return undefined;
    if (m) {
      const key = `${d.id}\u0000${m[1]}`;
      let cs = chunks.get(key);
      if (!cs) chunks.set(key, (cs = chunkDocument(d, { chunkSize: Number(m[1]) })));
      const c = cs.find((x) => x.id === p.chunk);
      if (c) return { title: d.title, ...(c.metadata.heading ? { heading: c.metadata.heading } : {}), text: c.content, rank: 0 };
    }
    return { title: d.title, text: d.sections.map((s) => (s.heading ? `${s.heading}\n${s.text}` : s.text)).join('\n\n'), rank: 0 };
  };

  const items: QueueItem[] = [];
  const leftOut: QueueExport['leftOut'] = [];
  for (const p of pairs) {
    const qt = queryText.get(p.query);
    if (qt === undefined) {
      leftOut.push({ query: p.query, doc: p.doc, why: 'no query text (pass the golden set with --golden, or --results)' });
      continue;
    }
    const k = pairKey(p.query, p.doc);
    const hit = fromHits.get(k);
    const shown = (p.chunk && hit?.exact ? hit : undefined) ?? (p.chunk ? fromCorpus(p) : undefined) ?? hit ?? fromCorpus(p);
    if (!shown || !shown.text.trim()) {
      leftOut.push({ query: p.query, doc: p.doc, why: 'no text of the document (in neither --results nor --corpus)' });
      continue;
    }
    items.push({
      item: items.length + 1,
      query: p.query,
      doc: p.doc,
      queryText: qt,
      title: shownText(shown.title, 200),
      ...(shown.heading ? { heading: shownText(shown.heading, 200) } : {}),
      text: shownText(shown.text, chars),
    });
  }
  if (!items.length) throw new UserError(`nothing to show: all ${pairs.length} pending pairs were left out (${leftOut[0]!.why})`);
  const exportId = createHash('sha256')
    .update(JSON.stringify(items.map((i) => [i.query, i.doc])))
    .digest('hex')
    .slice(0, 16);
  return { page: { kind: 'rankgate-judgments-queue', version: QUEUE_FORMAT, exportId, chars, items }, pending: all.length, fromLabels, fromEntries, notJsonl, leftOut };
}

// ------------------------------------------------------------------------------------------------------- import

/** One decisions file (what the page downloads), checked: one line naming the file, the decision and the field. */
export function parseDecisions(text: string, path: string): DecisionsDoc {
  const d = parseJson(text, path, 'decisions file downloaded from the review queue page');
  if (!isObj(d) || d.kind !== 'rankgate-judgments-decisions') throw new UserError(`${path}: field 'kind': expected "rankgate-judgments-decisions" (the file the review queue page downloads)`);
  if (d.version !== QUEUE_FORMAT) throw new UserError(`${path}: field 'version': expected ${QUEUE_FORMAT}, got ${JSON.stringify(d.version)}`);
  if (typeof d.exportId !== 'string') throw new UserError(`${path}: field 'exportId': expected the page's export id`);
  if (typeof d.reviewer !== 'string' || !normaliseReviewer(d.reviewer)) throw new UserError(`${path}: field 'reviewer': expected the reviewer's name, got ${JSON.stringify(d.reviewer)}`);
  if (!Array.isArray(d.decisions)) throw new UserError(`${path}: field 'decisions': expected a list of {query, doc, grade, time}`);
  const seen = new Set<string>();
  d.decisions.forEach((x: unknown, i: number) => {
    const at = `${path}: decisions[${i}]`;
    if (!isObj(x)) throw new UserError(`${at}: expected {query, doc, grade, time}, got ${JSON.stringify(x)?.slice(0, 60)}`);
    for (const f of ['query', 'doc'] as const) if (typeof x[f] !== 'string' || !(x[f] as string)) throw new UserError(`${at}: field '${f}': expected the ${f === 'query' ? "golden query's id" : 'document'}, got ${JSON.stringify(x[f])}`);
    if (typeof x.grade !== 'number' || !Number.isInteger(x.grade) || x.grade < 0 || x.grade > 3) throw new UserError(`${at}: field 'grade': expected a whole grade from 0 to 3, got ${JSON.stringify(x.grade)}`);
    if (typeof x.time !== 'string' || Number.isNaN(Date.parse(x.time))) throw new UserError(`${at}: field 'time': expected an ISO 8601 time, got ${JSON.stringify(x.time)}`);
    const k = pairKey(x.query as string, x.doc as string);
    if (seen.has(k)) throw new UserError(`${at}: query '${x.query}' doc '${x.doc}': decided twice in one file`);
    seen.add(k);
  });
  return d as unknown as DecisionsDoc;
}

export type Outcome = 'accepted' | 'changed' | 'rejected';
/** The person's grade against the label's: equal, 0 where the label said relevant, or another grade. */
export const outcomeOf = (label: number, person: number): Outcome => (label === person ? 'accepted' : person === 0 && label > 0 ? 'rejected' : 'changed');

export interface ImportInput {
  decisions: readonly { path: string; doc: DecisionsDoc }[];
  labels: readonly Judgment[];
  /** gold-set JSONL files whose bootstrap entries the decisions may promote */
  golden: readonly GoldLines[];
  seed?: number;
  resamples?: number;
}

export interface GoldenPromotion {
  path: string;
  text: string;
  promoted: string[];
  /** entries some of whose documents are still undecided: left bootstrap */
  partial: { id: string; decided: number; of: number }[];
  /** entries whose every document the person graded below 2: left bootstrap (a promoted entry needs a relevant one) */
  noneRelevant: string[];
  changed: boolean;
}

export interface ImportResult {
  labels: Judgment[];
  chair: Judgment[];
  outcomes: Record<'labels' | 'entries', Record<Outcome, number>>;
  /** a model's labels (source llm) and the logs' (bootstrap) against the person: linear-weighted kappa on 0-3 */
  agreement: Record<'llm' | 'bootstrap', AgreementSummary | null>;
  golden: GoldenPromotion[];
  /** decisions with nothing pending to apply to */
  unmatched: { query: string; doc: string; file: string }[];
  reviewers: string[];
  decisions: number;
}

/** Apply people's decisions: chair labels into the judgments, promoted entries into the gold sets; the agreement. */
export function applyDecisions(input: ImportInput): ImportResult {
  // one grade per pair: the files may overlap, never disagree
  const decided = new Map<string, Decision & { reviewer: string; file: string }>();
  for (const { path, doc } of input.decisions)
    for (const d of doc.decisions) {
      const k = pairKey(d.query, d.doc);
      const prev = decided.get(k);
      if (prev && prev.grade !== d.grade)
        throw new UserError(`${path}: query '${d.query}' doc '${d.doc}': graded ${d.grade} by ${shownName(doc.reviewer)}, but ${prev.grade} by ${shownName(prev.reviewer)} in ${prev.file}: settle it, then import one grade`);
      if (!prev) decided.set(k, { ...d, reviewer: doc.reviewer.trim(), file: path });
    }

  const byPair = new Map<string, Judgment[]>();
  for (const j of input.labels) (byPair.get(pairKey(j.query, j.doc)) ?? byPair.set(pairKey(j.query, j.doc), []).get(pairKey(j.query, j.doc))!).push(j);
  const entries = new Map<string, { file: GoldLines; line: number; q: GoldenQuery; docs: string[] }>();
  for (const file of input.golden) {
    const lineOf = new Map<string, number>();
    file.lines.forEach((l, i) => l.id !== undefined && lineOf.set(l.id, i));
    for (const q of file.queries) if (q.source === 'bootstrap' && lineOf.has(q.id) && !entries.has(q.id)) entries.set(q.id, { file, line: lineOf.get(q.id)!, q, docs: entryDocs(q) });
  }

  const res: ImportResult = {
    labels: [],
    chair: [],
    outcomes: { labels: { accepted: 0, changed: 0, rejected: 0 }, entries: { accepted: 0, changed: 0, rejected: 0 } },
    agreement: { llm: null, bootstrap: null },
    golden: [],
    unmatched: [],
    reviewers: [...new Set([...decided.values()].map((d) => d.reviewer))].sort(),
    decisions: decided.size,
  };
  const pairs: Record<'llm' | 'bootstrap', AgreementPair[]> = { llm: [], bootstrap: [] };
  const entryGrades = new Map<string, Map<string, number>>();
  for (const [k, d] of [...decided].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    let used = false;
    const ls = byPair.get(k);
    if (ls?.length) {
      used = true;
      const was = [...ls].sort((a, b) => PRECEDENCE[a.source] - PRECEDENCE[b.source])[0]!;
      const chunk = ls.find((j) => j.chunk)?.chunk;
      res.chair.push({ query: d.query, doc: d.doc, grade: d.grade, source: 'chair', reviewer: d.reviewer, was: { source: was.source, grade: was.grade }, ...(chunk ? { chunk } : {}), time: new Date(d.time).toISOString() });
      res.outcomes.labels[outcomeOf(was.grade, d.grade)]++;
      for (const src of ['llm', 'bootstrap'] as const satisfies readonly JudgmentSource[]) {
        const l = ls.find((j) => j.source === src);
        if (l) pairs[src].push({ truth: d.grade, rated: l.grade });
      }
    }
    const e = entries.get(d.query);
    if (e && e.docs.includes(d.doc)) {
      used = true;
      (entryGrades.get(d.query) ?? entryGrades.set(d.query, new Map()).get(d.query)!).set(d.doc, d.grade);
      const ref = e.q.expected.find((r) => r.doc_id === d.doc)!;
      res.outcomes.entries[outcomeOf(ref.grade, d.grade)]++;
    }
    if (!used) res.unmatched.push({ query: d.query, doc: d.doc, file: d.file });
  }
  const agree = (ps: AgreementPair[]) => (ps.length ? agreement(ps, 4, { seed: input.seed ?? 42, resamples: input.resamples ?? 2000 }) : null);
  res.agreement = { llm: agree(pairs.llm), bootstrap: agree(pairs.bootstrap) };
  res.labels = res.chair.length ? mergeLabels(input.labels, res.chair) : [...input.labels];

  // promote each entry whose documents are all decided (and one of them relevant); every other line keeps its bytes
  for (const file of input.golden) {
    const lines: GoldLine[] = [...file.lines];
    const p: GoldenPromotion = { path: file.path, text: '', promoted: [], partial: [], noneRelevant: [], changed: false };
    for (const [id, grades] of [...entryGrades].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const e = entries.get(id)!;
      if (e.file !== file) continue;
      if (grades.size < e.docs.length) {
        p.partial.push({ id, decided: grades.size, of: e.docs.length });
        continue;
      }
      if (![...grades.values()].some((g) => g >= 2)) {
        p.noneRelevant.push(id);
        continue;
      }
      const reviewers = [...new Set(e.docs.map((doc) => decided.get(pairKey(id, doc))!.reviewer))].sort();
      const last = e.docs.map((doc) => decided.get(pairKey(id, doc))!.time).sort().pop()!;
      lines[e.line] = promotedLine(lines[e.line]!, e.docs, grades, `reviewed by ${reviewers.join(', ')} ${last.slice(0, 10)}`);
      p.promoted.push(id);
    }
    if (p.promoted.length) {
      p.text = goldLinesText(lines);
      checkGoldText(file.path, p.text);
      p.changed = true;
    }
    if (p.promoted.length || p.partial.length || p.noneRelevant.length) res.golden.push(p);
  }
  return res;
}

/**
 * A bootstrap entry's line promoted to `source: chair`: grade 3 documents in relevant_case_law_ids, 2 as relevant
 * graded passages, 1 and 0 as not relevant graded passages (a person's 0 is a judgment too), its other references and
 * every other field as they were, the reviewer appended to its note. The entry keeps its id.
 */
export function promotedLine(line: GoldLine, docs: readonly string[], grades: ReadonlyMap<string, number>, reviewed: string): GoldLine {
  const old = line.obj!;
  const graded = (g: number) => docs.filter((d) => grades.get(d) === g);
  const passages = ((Array.isArray(old.expected_passages) ? old.expected_passages : []) as Record<string, unknown>[]).filter((x) => !(typeof x.doc_id === 'string' && docs.includes(x.doc_id) && x.passage_substring === undefined && x.chunk_id === undefined));
  for (const g of [2, 1, 0]) for (const d of graded(g)) passages.push({ doc_id: d, relevance: g >= 2 ? 'high' : 'partial', ...(g === 1 ? {} : { grade: g }) });
  const next: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(old)) {
    if (k === 'relevant_case_law_ids') next[k] = [...((v as string[]) ?? []).filter((d) => !docs.includes(d)), ...graded(3)];
    else if (k === 'source') next[k] = 'chair';
    else if (k === 'note') next[k] = `${v}; ${reviewed}`;
    else if (k === 'expected_passages') {
      if (passages.length) next[k] = passages;
    } else next[k] = v;
  }
  if (!('note' in old)) next.note = reviewed;
  if (!('expected_passages' in old) && passages.length) next.expected_passages = passages;
  const text = JSON.stringify(next);
  return { text, id: line.id, source: 'chair', obj: next };
}

