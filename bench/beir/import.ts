/**
 * BEIR folder -> promptfoo test cases, and the published anchors beside it.
 *
 * Queries and qrels are read by src/golden's BEIR reader (queries.jsonl + qrels/<split>.tsv; only
 * queries judged in the split; each judgement a doc_id reference, grade = score, relevant = score >= 1),
 * then turned into the cross-team TestCase shape by src/golden/testcases.ts (ground truth in
 * metadata.golden). Document-level judgements make assertions/rank.ts collapse rankings to documents.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { loadGoldenFile } from '../../src/golden/index.ts';
import { toTestCases, type GoldenTestCase } from '../../src/golden/testcases.ts';
import { UserError } from '../../src/errors.ts';

export interface BeirImport {
  name: string;
  folder: string;
  corpus: string;
  split: string;
  tests: GoldenTestCase[];
  /** judged queries in the split before --queries cut them */
  judgedQueries: number;
  judgements: number;
}

export function checkBeirFolder(folder: string): string {
  const dir = resolve(folder);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UserError(`${dir}: no such folder, expected a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)`);
  }
  for (const f of ['corpus.jsonl', 'queries.jsonl']) {
    if (!existsSync(join(dir, f))) throw new UserError(`${join(dir, f)}: file not found, expected a BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)`);
  }
  return dir;
}

export function importBeir(folder: string, opts: { split?: string; queries?: number; name?: string } = {}): BeirImport {
  const dir = checkBeirFolder(folder);
  const split = opts.split ?? 'test';
  const qrels = join(dir, 'qrels', `${split}.tsv`);
  if (!existsSync(qrels)) throw new UserError(`${qrels}: file not found, expected the qrels of split '${split}' (pass --split)`);
  const all = loadGoldenFile(dir, { format: 'beir', split });
  if (all.length === 0) throw new UserError(`${qrels}: no judged query of queries.jsonl, expected at least one`);
  const picked = opts.queries !== undefined ? all.slice(0, opts.queries) : all;
  return {
    name: opts.name ?? basename(dir),
    folder: dir,
    corpus: join(dir, 'corpus.jsonl'),
    split,
    tests: toTestCases(picked),
    judgedQueries: all.length,
    judgements: picked.reduce((n, q) => n + q.expected.length, 0),
  };
}

export interface Anchor {
  system: string;
  ndcg10: number | null;
  recall100: number | null;
}

/**
 * Published figures for a dataset, from a README beside the BEIR folder (the shared benchmarks README):
 * in the section whose heading starts with `## <name>`, the first table with columns
 * `system | nDCG@10 | Recall@100`. Returns [] when there is none (any other BEIR folder).
 */
export function readAnchors(file: string, name: string): Anchor[] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split(/\r?\n/);
  const start = lines.findIndex((l) => new RegExp(`^##\\s+${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(l));
  if (start < 0) return [];
  const out: Anchor[] = [];
  let inTable = false;
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^##\s/.test(l)) break;
    const cells = l.trim().startsWith('|') ? l.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim()) : null;
    if (!cells) {
      if (inTable) break;
      continue;
    }
    if (!inTable) {
      if (/^system$/i.test(cells[0] ?? '') && /ndcg@10/i.test(cells[1] ?? '')) inTable = true;
      continue;
    }
    if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
    const num = (s: string | undefined) => (s && /^\d*\.\d+$/.test(s) ? Number(s) : null);
    out.push({ system: cells[0]!, ndcg10: num(cells[1]), recall100: num(cells[2]) });
  }
  return out;
}

export function defaultAnchorsFile(folder: string): string {
  return join(dirname(resolve(folder)), 'README.md');
}
