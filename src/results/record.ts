/**
 * Evidence that cannot be re-assembled: every row of an eval carries the eval's run id (providers/search.ts sets
 * `response.metadata.rankgateRun`; the afterAll hook's beforeAll starts a fresh one per eval), and the hook's record
 * beside the results file (src/results/regate.ts, `<results file>.rankgate.jsonl`) holds the run id, the row count and a
 * digest of the rows. The gate (verifyEvidence) refuses a results file whose rows come from more than one run, or that
 * does not match its record (rows added, removed, edited, or picked from another run), and says LOUD when no record
 * is there. `rankgate merge` checks each shard the same way and writes its own record for the merged rows (legitimately
 * several runs), which the gate trusts when the rows match it.
 *
 * The digest is SHA-256 over one line per row, sorted: the row's column (promptIdx), test index, golden query id,
 * run id, promptfoo's pass, its named scores and the ids of its ranking (what a verdict is computed from). It proves
 * that the rows are the ones the eval recorded, not who wrote them: a reviewer who lets a results file and its record
 * be replaced together is defended by the baseline's review (docs/adopting.md: CODEOWNERS).
 */
import { createHash, randomUUID } from 'node:crypto';
import { SEAL_KEY_ENV, canonicalJson, checkSeal, sealKey, sealPhrase } from '../util/seal.ts';

/** The response metadata key of the run id. */
export const RUN_KEY = 'rankgateRun';

const SLOT = Symbol.for('rankgate.runId');
type Slot = { [SLOT]?: string };

/** The run id of this process's eval (one promptfoo process, one eval; beforeAll starts a fresh one). */
export function currentRunId(): string {
  const g = globalThis as Slot;
  return (g[SLOT] ??= randomUUID());
}

/** Start a new run (the gate hook's beforeAll: a programmatic caller may run several evals in one process). */
export function startRun(): string {
  (globalThis as Slot)[SLOT] = randomUUID();
  return currentRunId();
}

interface RowLike {
  promptIdx?: unknown;
  testIdx?: unknown;
  success?: unknown;
  namedScores?: Record<string, unknown>;
  testCase?: { metadata?: { id?: unknown; golden?: { id?: unknown } } };
  response?: { error?: unknown; metadata?: { [RUN_KEY]?: unknown; harness?: { hits?: { chunkId?: unknown }[] } } } | null;
  error?: unknown;
}

/** The run id a row carries, or null. */
export function runOfRow(row: unknown): string | null {
  const r = (row ?? {}) as RowLike;
  const v = r.response?.metadata?.[RUN_KEY];
  return typeof v === 'string' && v ? v : null;
}

/** The digest's line of one row. */
function rowLine(row: unknown): string {
  const r = (row ?? {}) as RowLike;
  const m = r.testCase?.metadata;
  const ns = r.namedScores && typeof r.namedScores === 'object' ? Object.entries(r.namedScores).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : [];
  const hits = Array.isArray(r.response?.metadata?.harness?.hits) ? r.response!.metadata!.harness!.hits!.map((h) => String(h?.chunkId)) : null;
  return JSON.stringify([r.promptIdx ?? 0, r.testIdx ?? null, m?.golden?.id ?? m?.id ?? null, runOfRow(r), r.success === true, ns, hits, !!(r.error ?? r.response?.error)]);
}

/** What the record says of the rows (and what verifyEvidence computes from a file's rows). */
export interface RowsDigest {
  rows: number;
  digest: string;
  /** The distinct run ids of the rows (rows without one are not counted here). */
  runs: string[];
  /** Rows without a run id. */
  unmarked: number;
}

/** The digest of some rows (any order: the lines are sorted). */
export function digestRows(rows: Iterable<unknown>): RowsDigest {
  const lines: string[] = [];
  const runs = new Set<string>();
  let unmarked = 0;
  for (const r of rows) {
    lines.push(rowLine(r));
    const id = runOfRow(r);
    if (id) runs.add(id);
    else unmarked++;
  }
  lines.sort();
  const h = createHash('sha256');
  for (const l of lines) h.update(l + '\n');
  return { rows: lines.length, digest: h.digest('hex'), runs: [...runs].sort(), unmarked };
}

/** The evidence fields of a record header (the hook's, or merge's). */
export interface RecordEvidence {
  runId?: string | null;
  rows?: number;
  digest?: string;
  /** `rankgate merge`: the runs of the merged shards (the merged rows legitimately come from several). */
  merged?: { runs: string[]; unrecorded: string[] };
  /** Keyed seal of the fields above (RANKGATE_SEAL_KEY), when the writer held the key. */
  seal?: string;
}

/** What a record's keyed seal covers: its run id, row count, digest and merged runs (canonical JSON). */
export function recordSealText(r: RecordEvidence): string {
  return canonicalJson({ runId: r.runId ?? null, rows: r.rows ?? null, digest: r.digest ?? null, merged: r.merged ?? null });
}

/**
 * The verdict on a results file's rows against its record: `problem` (exit 2) when they come from more than one run
 * or do not match the record; `loud` when there is no record to check them against (or its shards had none).
 */
export function checkEvidence(file: string, got: RowsDigest, record: RecordEvidence | null, recordPath: string | null, key: Buffer | null = sealKey()): { problem: string | null; loud: string | null } {
  if (got.rows === 0) return { problem: null, loud: null }; // sums only (--no-write): nothing row-level to re-assemble
  const where = recordPath ?? 'beside it';
  // With the CI's key, the record must carry its keyed seal (the digest alone is an accident check anyone can
  // recompute: src/util/seal.ts); without it, a keyed record is said unverified.
  let sealNote: string | null = null;
  // with the CI's key every eval record is sealed: no record at all is no proof either
  if (key && (!record || typeof record.digest !== 'string'))
    return { problem: `${file}: no eval record ${record ? `(${where} has no digest)` : `beside it (${where})`} while ${SEAL_KEY_ENV} is set: the rows cannot be tied to an eval that held the CI's key (the afterAll hook writes it with promptfoo's --output)`, loud: null };
  if (record && typeof record.digest === 'string') {
    const c = checkSeal('record', recordSealText(record), record.seal, key);
    if (key && c.status !== 'verified')
      return {
        problem:
          c.status === 'missing' || c.status === 'unkeyed-under-key'
            ? `${file}: its record ${where} is not sealed with ${SEAL_KEY_ENV}, which is set here: it was not written by an eval that held the CI's key (set ${SEAL_KEY_ENV} for the eval step too)`
            : `${file}: its record ${where}: ${sealPhrase(c)}: the record was edited after the eval`,
        loud: null,
      };
    if (c.status === 'unverifiable') sealNote = `LOUD: the record ${where} of ${file}: ${sealPhrase(c)}`;
  }
  const r = checkRows(file, got, record, where);
  return r.problem || r.loud || !sealNote ? r : { problem: null, loud: sealNote };
}

function checkRows(file: string, got: RowsDigest, record: RecordEvidence | null, where: string): { problem: string | null; loud: string | null } {
  if (!record || typeof record.digest !== 'string' || typeof record.rows !== 'number') {
    if (got.runs.length > 1)
      return { problem: `${file}: its rows come from ${got.runs.length} different eval runs (${got.runs.slice(0, 3).map(short).join(', ')}${got.runs.length > 3 ? ', …' : ''}): rows of several runs are not one measurement (merge shards with \`rankgate merge\`, which records them)`, loud: null };
    return { problem: null, loud: `LOUD: no record of this eval ${record ? `(${where} is from an older rankgate, without a digest)` : `beside ${file} (the afterAll hook writes <output>.rankgate.jsonl, e.g. results.jsonl.rankgate.jsonl, with promptfoo's --output)`}: the rows could not be checked against what the eval produced` };
  }
  const allowed = new Set(record.merged ? record.merged.runs : record.runId ? [record.runId] : []);
  const foreign = got.runs.filter((r) => !allowed.has(r));
  if (!record.merged && got.runs.length > 1)
    return { problem: `${file}: its rows come from ${got.runs.length} different eval runs (${got.runs.slice(0, 3).map(short).join(', ')}${got.runs.length > 3 ? ', …' : ''}), its record ${where} from one: rows of several runs are not one measurement`, loud: null };
  if (foreign.length)
    return { problem: `${file}: rows of run ${short(foreign[0]!)} are not rows of the eval its record ${where} names (run ${short(record.runId ?? record.merged?.runs[0] ?? '?')}): the rows were taken from another run`, loud: null };
  if (got.rows !== record.rows || got.digest !== record.digest)
    return {
      problem: `${file}: its ${got.rows} rows do not match the record ${where} (${record.rows} rows, digest ${record.digest.slice(0, 12)}; the file's ${got.digest.slice(0, 12)}): rows were added, removed or edited after the eval`,
      loud: null,
    };
  if (record.merged?.unrecorded.length)
    return { problem: null, loud: `LOUD: merged from ${record.merged.unrecorded.length} shard(s) without an eval record (${record.merged.unrecorded.slice(0, 3).join(', ')}): their rows could not be checked against what their evals produced` };
  return { problem: null, loud: null };
}

const short = (id: string) => id.slice(0, 8);
