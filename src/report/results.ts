/**
 * Read promptfoo's `--output results.json` into per-column, per-query records, re-scoring every row with
 * the same pure functions the assertions use (src/report/score.ts), so a report never depends on which
 * assertions a config happened to list. Rows whose provider call errored count as failures.
 */
import { readFileSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { GoldenQuerySchema, type GoldenQuery } from '../golden/schema.ts';
import { checkIntegrity, parseOutput, routingChecked, scoreRanking, scoreRouting, type RoutingOptions } from './score.ts';
import type { HarnessMetadata, HarnessOutput, IntegrityIssue, RetrievalScores, RoutingScores } from './types.ts';

export interface QueryRecord {
  id: string;
  query: string;
  category: string;
  language: string;
  tags: string[];
  golden: GoldenQuery;
  /** Provider error or timeout; the query then counts as a miss and a routing failure. */
  error: string | null;
  retrieval: RetrievalScores | null;
  routing: RoutingScores | null;
  integrity: IntegrityIssue[];
  latencyMs: number | null;
  top: { rank: number; chunkId: string; documentId: string; score: number; content: string }[];
  /** promptfoo's own verdict of the row (all assertions passed). */
  promptfooPass: boolean;
  judged: boolean;
  /**
   * The row's judge namedScores (assertions/judge.ts) without per-category keys and without the
   * `heuristic_` prefix, e.g. { judged_recall_at_3, judged_mrr, n_judged, judge_errors, judge_calls, ... };
   * null when the row has none (judge off, routing-only query, no judge assertion).
   */
  judgedScores?: Record<string, number> | null;
  /** True when those scores came from the similarity heuristic (keys prefixed `heuristic_`). */
  judgeHeuristic?: boolean;
  /** The judge label the judge assertion reported (metadata.judge), e.g. "judge: off"; null without one. */
  judgeLabel?: string | null;
  /** The judge assertion failed on this row without producing judged scores (it threw: bad mode, no model...). */
  judgeFailure?: string | null;
}

export interface Column {
  index: number;
  label: string;
  providerId: string;
  config: Record<string, unknown>;
  namedScores: Record<string, number>;
  queries: QueryRecord[];
}

export interface ParsedResults {
  evalId: string | null;
  timestamp: string;
  columns: Column[];
}

interface PfRow {
  promptIdx?: number;
  testIdx?: number;
  testCase?: { description?: string; vars?: Record<string, unknown>; metadata?: Record<string, unknown> };
  vars?: Record<string, unknown>;
  response?: { output?: unknown; metadata?: HarnessMetadata; error?: string };
  error?: string | null;
  success?: boolean;
  latencyMs?: number;
  provider?: { id?: string; label?: string };
  gradingResult?: { componentResults?: { pass?: boolean; reason?: string; assertion?: { value?: unknown }; metadata?: Record<string, unknown> }[] } | null;
  namedScores?: Record<string, number>;
}

interface PfPrompt {
  provider?: string;
  label?: string;
  metrics?: { namedScores?: Record<string, number> };
}

function fail(file: string, msg: string): never {
  throw new UserError(`${file}: ${msg}`);
}

/** The golden query of a row: metadata.golden (datasets/tests.ts), else a minimal one from vars. */
function goldenOf(row: PfRow, file: string, i: number): GoldenQuery {
  const meta = row.testCase?.metadata ?? {};
  const vars = { ...(row.testCase?.vars ?? {}), ...(row.vars ?? {}) } as Record<string, unknown>;
  const raw = meta.golden ?? {
    id: String(meta.id ?? vars.id ?? row.testCase?.description ?? `row-${i}`),
    query: String(vars.query ?? ''),
    language: String(meta.language ?? vars.language ?? 'en'),
    category: String(meta.category ?? vars.category ?? 'uncategorised'),
  };
  const parsed = GoldenQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    fail(file, `results[${i}] (test ${row.testIdx ?? '?'}): testCase.metadata.golden.${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return parsed.data;
}

export function parseResultsJson(text: string, file = 'results.json', routingOpts: RoutingOptions = {}): ParsedResults {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    fail(file, `not JSON (${(e as Error).message}); expected the file written by \`promptfoo eval --output results.json\``);
  }
  return parseResultsObject(doc, file, routingOpts);
}

/** Same as parseResultsJson over an already-parsed object ({evalId?, results: {prompts, results}, config?}). */
export function parseResultsObject(doc: unknown, file = 'results.json', routingOpts: RoutingOptions = {}): ParsedResults {
  const top = doc as { evalId?: string; results?: { timestamp?: string; prompts?: PfPrompt[]; results?: PfRow[] }; config?: { providers?: unknown } };
  const res = top?.results;
  if (!res || !Array.isArray(res.results) || !Array.isArray(res.prompts)) {
    fail(file, 'expected promptfoo output JSON with results.prompts[] and results.results[] (write it with `promptfoo eval --output results.json`)');
  }
  const providerConfigs = Array.isArray(top.config?.providers) ? (top.config!.providers as Record<string, unknown>[]) : [];
  const columns: Column[] = res.prompts.map((p, index) => {
    const label = String(p.provider ?? p.label ?? `column-${index}`);
    const cfg = providerConfigs.find((c) => c && typeof c === 'object' && (c.label === label || c.id === label)) ?? providerConfigs[index];
    return {
      index,
      label,
      providerId: String((cfg as { id?: unknown } | undefined)?.id ?? label),
      config: ((cfg as { config?: Record<string, unknown> } | undefined)?.config ?? {}) as Record<string, unknown>,
      namedScores: { ...(p.metrics?.namedScores ?? {}) },
      queries: [],
    };
  });
  res.results.forEach((row, i) => {
    const col = columns[row.promptIdx ?? 0];
    if (!col) fail(file, `results[${i}].promptIdx ${row.promptIdx} names no entry of results.prompts`);
    const golden = goldenOf(row, file, i);
    const error = row.error ?? row.response?.error ?? null;
    let output: HarnessOutput | null = null;
    let err: string | null = null;
    if (row.response?.output !== undefined && !row.response?.error) {
      try {
        output = parseOutput(row.response.output, row.response.metadata);
      } catch (e) {
        err = (e as Error).message;
      }
    }
    if (!output) err = err ?? (error ? String(error) : 'no provider output');
    const meta = row.response?.metadata;
    const retrieval = output ? scoreRanking(golden, output, meta) : zeroRetrieval(golden);
    const routing = output ? scoreRouting(golden, output, routingOpts) : routingChecked(golden) ? errRouting(golden, err ?? 'error') : null;
    // Judged when the judge assertion (assertions/judge.ts) produced judged scores; with the judge off it produces none.
    const judged = Object.keys(row.namedScores ?? {}).some((k) => /^(heuristic_)?judged_/.test(k));
    const js = judgeScoresOf(row.namedScores ?? {});
    const judgeLabel = (row.gradingResult?.componentResults ?? [])
      .map((c) => c?.metadata?.judge)
      .find((x): x is string => typeof x === 'string') ?? null;
    const judgeComp = (row.gradingResult?.componentResults ?? []).find((c) => typeof c?.assertion?.value === 'string' && /judge\.ts:judged$/.test(c.assertion.value));
    // assertions/judge.ts turns its own failures into a failed judge assertion (above); an error that escapes it (the
    // module cannot be loaded) makes promptfoo error the whole row, with a stack naming assertions/judge.ts.
    const judgeThrew = typeof error === 'string' && /assertions[\\/]judge\.ts/.test(error) ? error.split('\n')[0]! : null;
    const judgeFailure = js ? null : judgeComp && judgeComp.pass === false ? String(judgeComp.reason ?? 'judge assertion failed').split('\n')[0]! : judgeThrew;
    col.queries.push({
      id: golden.id,
      query: golden.query,
      category: golden.category,
      language: golden.language,
      tags: golden.tags ?? [],
      golden,
      error: output ? null : err,
      retrieval,
      routing,
      integrity: output ? checkIntegrity(output) : [],
      latencyMs: output?.latencyMs ?? (typeof row.latencyMs === 'number' ? row.latencyMs : null),
      top: (output?.hits ?? [])
        .slice()
        .sort((a, b) => a.rank - b.rank)
        .slice(0, 3)
        .map((h) => ({ rank: h.rank, chunkId: h.chunkId, documentId: h.documentId, score: h.score, content: h.content })),
      promptfooPass: row.success === true,
      judged,
      judgedScores: js?.scores ?? null,
      judgeHeuristic: js?.heuristic ?? false,
      judgeLabel,
      judgeFailure,
    });
  });
  for (const c of columns) c.queries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { evalId: top.evalId ?? null, timestamp: res.timestamp ?? new Date().toISOString(), columns };
}

/** Judge keys of a row (overall keys only; per-category `<key>_<category>` dropped), unprefixed. */
export const JUDGE_ROW_KEYS = [
  'judged_recall_at_1',
  'judged_recall_at_3',
  'judged_recall_at_5',
  'judged_recall_at_10',
  'judged_mrr',
  'judged_ndcg_at_10',
  'n_judged',
  'judge_errors',
  'judged_results',
  'judged_high',
  'judged_partial',
  'judged_not_relevant',
  'judge_calls',
  'judge_cache_hits',
  'judge_input_tokens',
  'judge_output_tokens',
  'judge_cost_usd',
] as const;

function judgeScoresOf(ns: Record<string, number>): { scores: Record<string, number>; heuristic: boolean } | null {
  for (const prefix of ['', 'heuristic_']) {
    if (typeof ns[`${prefix}n_judged`] !== 'number') continue;
    const scores: Record<string, number> = {};
    for (const k of JUDGE_ROW_KEYS) {
      const v = ns[prefix + k];
      if (typeof v === 'number' && Number.isFinite(v)) scores[k] = v;
    }
    return { scores, heuristic: prefix === 'heuristic_' };
  }
  return null;
}

export function readResultsFile(path: string, routingOpts: RoutingOptions = {}): ParsedResults {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseResultsJson(text, path, routingOpts);
}

function zeroRetrieval(g: GoldenQuery): RetrievalScores | null {
  const rel = g.expected.filter((r) => r.relevant).length;
  if (!rel) return null;
  return {
    recall_at_1: 0,
    recall_at_3: 0,
    recall_at_5: 0,
    recall_at_10: 0,
    trec_recall_at_10: 0,
    mrr: 0,
    ndcg_at_10: 0,
    precision_at_5: 0,
    ap_at_10: 0,
    found: 0,
    best_rank: null,
    last_expected_rank: null,
    answerable_at_10: g.expected.some((r) => r.answer_contains !== undefined) ? 0 : null,
    relevant_refs: rel,
    level: g.expected.every((r) => r.chunk_id === undefined && r.passage_substring === undefined) ? 'document' : 'chunk',
    bucket: 'not_diagnosed',
  };
}

function errRouting(g: GoldenQuery, reason: string): RoutingScores {
  return {
    expected: g.expected_routing ?? 'search',
    actual: 'error',
    practice_bridge: false,
    ok: false,
    safety_expected: g.expect_safety === true,
    safety_ok: g.expect_safety === true ? false : null,
    reason: `provider error: ${reason}`,
  };
}

/** Pick a column by label (exact) or 0-based index; default the first. */
export function pickColumn(parsed: ParsedResults, which: string | undefined, file: string): Column {
  if (which === undefined) {
    const c = parsed.columns[0];
    if (!c) throw new UserError(`${file}: the results have no columns (results.prompts is empty)`);
    return c;
  }
  const byLabel = parsed.columns.find((c) => c.label === which);
  if (byLabel) return byLabel;
  if (/^\d+$/.test(which) && parsed.columns[Number(which)]) return parsed.columns[Number(which)]!;
  throw new UserError(
    `${file}: no column '${which}'; columns are: ${parsed.columns.map((c, i) => `${i} '${c.label}'`).join(', ')}`,
  );
}
