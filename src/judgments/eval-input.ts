/**
 * The judgments file as an input of an eval (docs/judgments.md "Labels in an eval"): the labels of the selected queries
 * put on their test cases, so the rank assertion, the gate hook and every later `rankgate gate` of the same results
 * score with exactly the labels the eval read (the rows carry them), and `rankgate gate --judgments FILE` re-scores rows
 * with another file's.
 *
 * Named by RANKGATE_JUDGMENTS (wins) or the tests loader's `judgments:` (datasets/tests.ts). Each selected query's test
 * case gets `metadata.labels`: the effective label of every document the file labels for it (chair > bootstrap > llm:
 * src/judgments/file.ts effectiveLabels; the golden set stays above every label, which scoring applies:
 * src/results/score.ts), possibly an empty list; and `metadata.judgments`: what the file holds (labels by source, its
 * digest) and its review backlog (pending labels, the oldest pending). A label of a query outside the selection is not
 * used, and counted (`outside`): a query id in no selected golden file (a label of a renamed or deleted query), or one a
 * declared filter or shard left out. A bad file (a grade out of 0-3, a line that is not JSON, a duplicate label) is
 * the file reader's one line (src/judgments/file.ts), exit 2 before any query runs: never an eval that silently scored
 * without the labels it was told to read.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { GoldenTestCase } from '../golden/testcases.ts';
import { UserError } from '../errors.ts';
import { effectiveLabels, pendingLabels, readJudgments, type Judgment } from './file.ts';

/** What a test case (and a results column) records of the judgments file: src/results/types.ts JudgmentsInfo, by shape. */
export interface JudgmentsInfo {
  file: string;
  digest: string;
  labels: number;
  sources: { chair: number; bootstrap: number; llm: number };
  pending: number;
  oldest_pending: string | null;
  outside: { labels: number; queries: number; examples: string[]; scope: 'golden set' | 'selection' };
}

/** One query's label as a test case carries it (src/results/types.ts QueryLabel). */
export interface EvalLabel {
  doc: string;
  grade: number;
  source: Judgment['source'];
}

export interface EvalLabels {
  /** Per selected query id: its effective labels (absent: none). */
  byQuery: Map<string, EvalLabel[]>;
  info: JudgmentsInfo;
}

/** First 16 hex digits of the sha256 of a file's bytes. */
function digestOf(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16);
  } catch (e) {
    throw new UserError(`${path}: cannot read the judgments file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/**
 * The labels of `queryIds` in the judgments file at `path`, and what the file holds. `scope` says what a query outside
 * `queryIds` is: not in the golden set (the whole selection was run), or only outside this selection (filtered, sharded).
 */
export async function loadEvalLabels(path: string, queryIds: ReadonlySet<string>, scope: 'golden set' | 'selection' = 'golden set'): Promise<EvalLabels> {
  const labels = await readJudgments(path);
  const byQuery = new Map<string, EvalLabel[]>();
  const outsideQ = new Map<string, number>();
  for (const [q, docs] of effectiveLabels(labels)) {
    if (!queryIds.has(q)) {
      outsideQ.set(q, docs.size);
      continue;
    }
    byQuery.set(
      q,
      [...docs.values()].map((j) => ({ doc: j.doc, grade: j.grade, source: j.source })),
    );
  }
  const pending = pendingLabels(labels);
  const oldest = pending.reduce<string | null>((a, j) => (a === null || Date.parse(j.time) < Date.parse(a) ? j.time : a), null);
  const sources = { chair: 0, bootstrap: 0, llm: 0 };
  for (const j of labels) sources[j.source]++;
  const outsideIds = [...outsideQ.keys()].sort();
  return {
    byQuery,
    info: {
      file: path,
      digest: digestOf(path),
      labels: labels.length,
      sources,
      pending: pending.length,
      oldest_pending: oldest === null ? null : new Date(Date.parse(oldest)).toISOString(),
      outside: { labels: labels.filter((j) => !queryIds.has(j.query)).length, queries: outsideIds.length, examples: outsideIds.slice(0, 3), scope },
    },
  };
}

/** The one line said of labels outside the selection (null when none): counted, not fatal. */
export function outsideLine(info: JudgmentsInfo): string | null {
  const o = info.outside;
  if (!o.labels) return null;
  const where = o.scope === 'golden set' ? 'in no selected golden file (renamed or deleted queries?)' : 'outside this selection (filtered or sharded out, or in no golden file)';
  return `judgments ${info.file}: ${o.labels} label(s) of ${o.queries} quer${o.queries === 1 ? 'y' : 'ies'} ${where}, e.g. ${o.examples.join(', ')}: not used`;
}

/** Put the file's labels on the test cases (metadata.labels, metadata.judgments). Returns what it read. */
export async function attachLabels(tests: GoldenTestCase[], path: string): Promise<EvalLabels> {
  const ids = new Set(tests.map((t) => t.metadata.id));
  const sel = tests[0]?.metadata.selection;
  const scope = sel?.filter || sel?.shard ? 'selection' : 'golden set';
  const loaded = await loadEvalLabels(path, ids, scope);
  for (const t of tests) {
    const m = t.metadata as GoldenTestCase['metadata'] & { labels?: EvalLabel[]; judgments?: JudgmentsInfo };
    m.labels = loaded.byQuery.get(t.metadata.id) ?? [];
    m.judgments = loaded.info;
  }
  return loaded;
}

/** The judgments file an eval reads: RANKGATE_JUDGMENTS (wins), else the tests loader's `judgments:`; undefined: none. */
export function judgmentsSetting(config: { judgments?: unknown } | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const e = env.RANKGATE_JUDGMENTS?.trim();
  if (e) return e;
  const c = config?.judgments;
  return typeof c === 'string' && c.trim() ? c.trim() : undefined;
}
