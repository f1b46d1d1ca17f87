/**
 * TREC files as text: qrels (`qid iter docno rel`) and runs (`qid Q0 docno rank score tag`).
 * Pure: every parser takes the file CONTENT plus a file name used only in messages; reading and
 * writing files is the caller's job (the CLI). A malformed line throws UserError naming the file,
 * the line number, the field and what was expected.
 */
import { UserError } from '../errors.ts';
import { compareStrcmp } from './common.ts';

/** qid -> (docno -> grade). Insertion order is file order; use `qrelsQueryIds` for trec_eval order. */
export type Qrels = Map<string, Map<string, number>>;

export interface RunEntry {
  docno: string;
  /** the rank column when it is an integer, else NaN (trec_eval ignores it; `1.0` and `-` are accepted) */
  rank: number;
  score: number;
  tag: string;
  /** 1-based line number in the run file */
  line: number;
}

export interface Run {
  /** run tag of the LAST line (trec_eval's `runid`); '' for an empty run */
  runid: string;
  /** qid -> entries in file order */
  queries: Map<string, RunEntry[]>;
}

/**
 * How a run's entries become a ranking:
 * - `trec_eval`: score descending, ties by docno descending (strcmp), rank column ignored.
 * - `rank`: rank column ascending, ties in file order (the run "as ranked" by whoever wrote it).
 * - `file`: file order as is (an API ranking written top to bottom).
 */
export type RunOrder = 'trec_eval' | 'rank' | 'file';

const REL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INF = /^[+-]?(inf|infinity)$/i;

/** Split on ASCII whitespace only (space, \t, \n, \v, \f, \r), as trec_eval does: U+00A0 etc. stay inside a field. */
export function asciiFields(line: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= line.length; i++) {
    const c = i < line.length ? line.charCodeAt(i) : 32;
    const sp = c === 32 || (c >= 9 && c <= 13);
    if (sp) {
      if (start >= 0) out.push(line.slice(start, i));
      start = -1;
    } else if (start < 0) start = i;
  }
  return out;
}

/** The run's sim field under trec-eval's policy (src/metrics/trecfast.ts parseSim): NaN when refused. */
export function parseSimText(s: string): number {
  if (FLOAT.test(s)) return Number(s);
  if (INF.test(s)) return s[0] === '-' ? -Infinity : Infinity;
  return Number.NaN;
}

function lines(content: string): string[] {
  const ls = content.split(/\r?\n/);
  if (ls.length && ls[ls.length - 1] === '') ls.pop();
  return ls;
}

function skippable(line: string): boolean {
  const f = asciiFields(line);
  return f.length === 0 || f[0]!.startsWith('#');
}

/**
 * Parse a qrels file: four ASCII-whitespace-separated fields `qid iter docno rel` per line; `rel`
 * an integer or a decimal read as its integer part (negative = in the pool but unjudged, as in
 * trec_eval). Blank lines and lines starting with `#` are skipped (trec-eval itself refuses blank
 * qrels lines, as trec_eval does). A (qid, docno) pair judged twice is an error, as in trec_eval.
 */
export function parseQrels(content: string, fileName: string): Qrels {
  const out: Qrels = new Map();
  const firstLine = new Map<string, number>();
  lines(content).forEach((raw, i) => {
    const ln = i + 1;
    if (skippable(raw)) return;
    const f = asciiFields(raw);
    const where = `${fileName}:${ln}`;
    if (f.length !== 4) {
      throw new UserError(
        `${where}: expected 4 fields 'qid iter docno rel' in a qrels line, found ${f.length}: '${raw.trim().slice(0, 120)}'`,
      );
    }
    const [qid, , docno, rel] = f as [string, string, string, string];
    if (!REL.test(rel)) throw new UserError(`${where}: field 4 (rel) must be an integer grade (or a decimal, read as its integer part like trec_eval), got '${rel}'`);
    const key = `${qid}\u0000${docno}`;
    const prev = firstLine.get(key);
    if (prev !== undefined) {
      throw new UserError(`${where}: document '${docno}' is judged twice for query '${qid}' (first at line ${prev})`);
    }
    firstLine.set(key, ln);
    let q = out.get(qid);
    if (!q) out.set(qid, (q = new Map()));
    q.set(docno, Math.trunc(Number(rel)) || 0);
  });
  return out;
}

/**
 * Parse a run file: at least six ASCII-whitespace-separated fields `qid Q0 docno rank sim tag`;
 * anything after the tag is ignored and the rank column may hold anything (as trec_eval). `sim`
 * follows trec-eval's policy (decimal, exponent, inf, 1e400 = inf; nan/hex/garbage refused).
 */
export function parseRun(content: string, fileName: string): Run {
  const queries = new Map<string, RunEntry[]>();
  let runid: string | undefined;
  lines(content).forEach((raw, i) => {
    const ln = i + 1;
    if (skippable(raw)) return;
    const f = asciiFields(raw);
    const where = `${fileName}:${ln}`;
    if (f.length < 6) {
      throw new UserError(
        `${where}: expected 6 fields 'qid Q0 docno rank score tag' in a run line, found ${f.length}: '${raw.trim().slice(0, 120)}'`,
      );
    }
    const [qid, , docno, rankS, scoreS, tag] = f as [string, string, string, string, string, string];
    const score = parseSimText(scoreS);
    if (Number.isNaN(score)) {
      throw new UserError(`${where}: field 5 (sim) must be a number (decimal, 1e5, inf; nan and hex are refused), got '${scoreS}'`);
    }
    runid = tag;
    let q = queries.get(qid);
    if (!q) queries.set(qid, (q = []));
    q.push({ docno, rank: /^[+-]?\d+$/.test(rankS) ? Number.parseInt(rankS, 10) : Number.NaN, score, tag, line: ln });
  });
  return { runid: runid ?? '', queries };
}

/** Order a query's run entries into a ranking (ids, best first, duplicates keep the first occurrence). */
export function orderRun(entries: readonly RunEntry[], order: RunOrder = 'trec_eval'): string[] {
  const idx = entries.map((e, i) => ({ e, i }));
  if (order === 'trec_eval') {
    idx.sort((a, b) => (b.e.score - a.e.score) || compareStrcmp(b.e.docno, a.e.docno) || a.i - b.i);
  } else if (order === 'rank') {
    idx.sort((a, b) => (a.e.rank - b.e.rank || 0) || a.i - b.i);
  }
  const seen = new Set<string>();
  const out: string[] = [];
  for (const { e } of idx) {
    if (!seen.has(e.docno)) {
      seen.add(e.docno);
      out.push(e.docno);
    }
  }
  return out;
}

/** Query ids in trec_eval's order (strcmp ascending, as trec_eval sorts its qrels). */
export function sortedQueryIds(ids: Iterable<string>): string[] {
  return [...ids].sort(compareStrcmp);
}

/** Write qrels as text (`qid 0 docno rel`), queries and documents in strcmp order. */
export function formatQrels(qrels: ReadonlyMap<string, ReadonlyMap<string, number>>): string {
  const out: string[] = [];
  for (const qid of sortedQueryIds(qrels.keys())) {
    const q = qrels.get(qid)!;
    for (const docno of sortedQueryIds(q.keys())) {
      const g = q.get(docno)!;
      if (!Number.isInteger(g)) throw new RangeError(`qrels grade for ${qid}/${docno} must be an integer, got ${g}`);
      out.push(`${qid} 0 ${docno} ${g}`);
    }
  }
  return out.length ? out.join('\n') + '\n' : '';
}

function checkToken(what: string, s: string): void {
  if (s === '' || /\s/.test(s)) throw new RangeError(`${what} '${s}' cannot be written to a TREC file (empty or contains whitespace)`);
}

/**
 * Write a run as text: `qid Q0 docno rank score tag`, rank 1-based in the given order. When a hit has
 * no score, `score = n - rank + 1` is written so trec_eval's score ordering reproduces the given
 * order (equal scores would otherwise be re-ordered by docno).
 */
export function formatRun(
  rankings: ReadonlyMap<string, readonly { id: string; score?: number }[]>,
  tag: string,
): string {
  checkToken('run tag', tag);
  const out: string[] = [];
  for (const [qid, hits] of rankings) {
    checkToken('query id', qid);
    const seen = new Set<string>();
    const uniq = hits.filter((h) => !seen.has(h.id) && seen.add(h.id));
    uniq.forEach((h, i) => {
      checkToken('document id', h.id);
      const score = h.score ?? uniq.length - i;
      if (!Number.isFinite(score)) throw new RangeError(`score of ${qid}/${h.id} is not finite: ${score}`);
      out.push(`${qid} Q0 ${h.id} ${i + 1} ${score} ${tag}`);
    });
  }
  return out.length ? out.join('\n') + '\n' : '';
}
