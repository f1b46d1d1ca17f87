/**
 * Read promptfoo's `--output results.json` into per-column, per-query records, re-scoring every row with
 * the same pure functions the assertions use (src/results/score.ts), so a report never depends on which
 * assertions a config happened to list. Rows whose provider call errored are error rows: failures, left out of every figure.
 */
import { UserError } from '../errors.ts';
import { GoldenQuerySchema, type GoldenQuery } from '../golden/schema.ts';
import type { SelectionFilter } from '../golden/testcases.ts';
import { RANK_KEYS, VIEW_KEYS, checkIntegrity, parseOutput, queryLabelsOf, rerankCostOf, routingChecked, scoreRanking, scoreRouting, type RerankCost, type RoutingOptions } from './score.ts';
import { BUCKETS, LEGACY_BUCKETS } from './types.ts';
import type { HarnessMetadata, HarnessOutput, IntegrityIssue, JudgmentsInfo, QueryLabel, RetrievalScores, RoutingScores } from './types.ts';
import { redactConfig, redactText } from '../util/redact.ts';
import { toolchainOfOutput, type Toolchain } from '../util/toolchain.ts';
import { PROMPTFOO_WRITE_KEY } from './types.ts';
import type { ExpansionDiagnostics } from '../search/types.ts';

/** diagnostics.expansion of a row's response, when it has a readable one. */
function expansionOf(meta: unknown): ExpansionDiagnostics | null {
  const e = (meta as { diagnostics?: { expansion?: unknown } | null } | undefined)?.diagnostics?.expansion as ExpansionDiagnostics | undefined;
  return e && typeof e === 'object' && typeof e.source === 'string' && typeof e.expanded === 'boolean' ? e : null;
}

export interface QueryRecord {
  id: string;
  query: string;
  category: string;
  language: string;
  tags: string[];
  golden: GoldenQuery;
  /** Provider error or timeout. The record keeps zero scores and a failed routing check, but an errored query measured
   *  nothing: every report figure leaves it out (src/results/summary.ts) and counts it as an error instead. */
  error: string | null;
  retrieval: RetrievalScores | null;
  routing: RoutingScores | null;
  integrity: IntegrityIssue[];
  /** The provider's latency of the query: the whole pipeline (first stage, rerank, routing). */
  latencyMs: number | null;
  /** The rerank stage's reranker, budget, latency, requests and cost (diagnostics.rerank); null: no reranker ran. */
  rerank?: RerankCost | null;
  top: { rank: number; chunkId: string; documentId: string; score: number; content: string; path?: string }[];
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
  /** The judge assertion scored the row but some of its judgements failed (judge_errors > 0): its reason, first line. */
  judgeErrors?: string | null;
  /** The answer judge's grade (1-5) of the service's answer (assertions/judge.ts:answer); null when not graded. */
  answerScore?: number | null;
  /** The answer judge's label (metadata.answerJudge, e.g. "judge: openai:chat:gpt-4.1-mini (answer-v1)"); null without one. */
  answerJudgeLabel?: string | null;
  /** The answer judge failed on this row (a JUDGE ERROR, or it threw): its reason, first line. */
  answerFailure?: string | null;
  /** Hits of this row whose content the provider cut to the maximum per hit (src/results/evidence.ts); absent: none. */
  contentCut?: { hits: number; maxChars: number; longest: number };
  /** What query expansion did for this row (response.metadata.diagnostics.expansion); null: no expansion asked for. */
  expansion?: ExpansionDiagnostics | null;
  /** The judgments file's labels the row was scored with (absent: no judgments file; docs/judgments.md). */
  labels?: QueryLabel[];
}

/** The golden selection a row was drawn from (contract A: testCase.metadata.selection, from datasets/tests.ts). */
export interface SelectionInfo {
  id: string | null;
  size: number;
  files?: string[];
  /** The declared language/category/tag filter that left queries of the files out (src/golden/testcases.ts SelectionFilter). */
  filter?: SelectionFilter;
  shard?: { index: number; count: number };
  shardSize?: number;
}

/** The index a row was searched in (contract B: response.metadata.diagnostics.index; absent for url:/module:). */
export interface IndexIdentity {
  engine?: string;
  variant?: string;
  corpusId?: string | null;
  corpus?: string | null;
}

export interface Column {
  index: number;
  label: string;
  providerId: string;
  config: Record<string, unknown>;
  namedScores: Record<string, number>;
  queries: QueryRecord[];
  /** promptfoo's own row counts of the column (metrics.testPassCount/testFailCount/testErrorCount); null when absent. */
  counts: { pass: number; fail: number; error: number } | null;
  /** Golden selection of the rows (all rows agree), else the size the gate hook recorded; null when unknown. */
  selection: SelectionInfo | null;
  /** Index identity of the rows (first row that reports one); null for url:/module: services. */
  identity: IndexIdentity | null;
  /**
   * Did promptfoo keep the run (src/results/nowrite.ts)? false when a row says `promptfooWrite: false` (a --no-write
   * run), true when the rows come from rankgate's provider (which marks such runs) and none does; null/absent: unknown.
   */
  written?: boolean | null;
  /** The judgments file the rows were scored with (their test cases', or `rankgate gate --judgments`); null: none. */
  judgments?: JudgmentsInfo | null;
  /**
   * The provider config is not known: a JSONL file (promptfoo writes no config there) whose rows do not carry it
   * (rows of a rankgate before 0.1 kept it nowhere). A baseline or comparison then has no provider config to compare.
   */
  configUnknown?: boolean;
}

export interface ParsedResults {
  evalId: string | null;
  timestamp: string;
  columns: Column[];
  /** 'jsonl' when read from promptfoo's JSONL output: rows only, no column sums or counts to cross-check. */
  format?: 'jsonl';
  /** The Node and promptfoo that wrote the results, when the file says (promptfoo's JSON metadata, the re-gate header). */
  toolchain?: Toolchain | null;
  /** config.commandLineOptions of a JSON output (its write: false is a --no-write run: src/results/nowrite.ts). */
  commandLineOptions?: unknown;
}

interface PfRow {
  promptIdx?: number;
  testIdx?: number;
  testCase?: { description?: string; vars?: Record<string, unknown>; metadata?: Record<string, unknown> };
  vars?: Record<string, unknown>;
  response?: { output?: unknown; metadata?: HarnessMetadata & { diagnostics?: { index?: IndexIdentity } | null }; error?: string };
  error?: string | null;
  success?: boolean;
  latencyMs?: number;
  provider?: { id?: string; label?: string };
  gradingResult?: { componentResults?: { pass?: boolean; reason?: string; assertion?: { value?: unknown }; metadata?: Record<string, unknown> }[] } | null;
  namedScores?: Record<string, number>;
}

export interface PfPrompt {
  provider?: string;
  label?: string;
  metrics?: { namedScores?: Record<string, number>; namedScoresCount?: Record<string, unknown>; testPassCount?: number; testFailCount?: number; testErrorCount?: number };
}

/** namedScores that are promptfoo derived means (may be null after 0/0); every other named score must be a finite number. */
const DERIVED = /^(avg_|routing_accuracy|not_found_rate|safety_accuracy|(heuristic_)?judge_error_rate|latency_p\d+_ms|rerank_latency_p\d+_ms|rerank_cost_per_query_usd)/;

/** namedScores key the gate hook records in a column so a --no-write results file still knows its selection size. */
export const SELECTION_SIZE_KEY = 'rankgate_selection_size';

function checkScores(file: string, where: string, ns: unknown, skipDerived: boolean, derived: ReadonlySet<string> = new Set()): Record<string, number> {
  if (typeof ns !== 'object' || ns === null || Array.isArray(ns)) fail(file, `${where}: expected an object of named scores, got ${JSON.stringify(ns)}`);
  for (const [k, v] of Object.entries(ns as Record<string, unknown>)) {
    if (skipDerived && (DERIVED.test(k) || derived.has(k))) continue;
    if (typeof v !== 'number' || !Number.isFinite(v)) fail(file, `${where}.${k}: expected a finite number, got ${JSON.stringify(v)}`);
  }
  return ns as Record<string, number>;
}

function selectionOf(meta: Record<string, unknown> | undefined): SelectionInfo | null {
  const s = meta?.selection as Partial<SelectionInfo> | undefined;
  if (!s || typeof s !== 'object' || typeof s.size !== 'number') return null;
  return {
    id: typeof s.id === 'string' ? s.id : null,
    size: s.size,
    ...(Array.isArray(s.files) ? { files: s.files.map(String) } : {}),
    ...(filterOf(s.filter) ? { filter: filterOf(s.filter)! } : {}),
    ...(s.shard && typeof s.shard === 'object' ? { shard: s.shard } : {}),
    ...(typeof s.shardSize === 'number' ? { shardSize: s.shardSize } : {}),
  };
}

/** A test case's metadata.judgments (src/judgments/eval-input.ts), when it has the shape; else null. */
function judgmentsInfoOf(x: unknown): JudgmentsInfo | null {
  const j = x as Partial<JudgmentsInfo> | null | undefined;
  if (!j || typeof j !== 'object' || typeof j.file !== 'string' || typeof j.labels !== 'number' || typeof j.pending !== 'number') return null;
  return j as JudgmentsInfo;
}

function filterOf(f: unknown): SelectionFilter | null {
  if (!f || typeof f !== 'object') return null;
  const o = f as Record<string, unknown>;
  const strs = (v: unknown) => (Array.isArray(v) ? v.map(String) : undefined);
  const out: SelectionFilter = { of: typeof o.of === 'number' ? o.of : NaN };
  for (const k of ['language', 'category', 'tag'] as const) if (strs(o[k])) out[k] = strs(o[k]);
  return out;
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

/**
 * How results are read: the routing options of scoring, and `goldenOverride`, the expectations to judge rows by
 * instead of the ones the rows carry (the base branch's, per query id: src/gate/base-ref.ts). The rows are still
 * checked against their own expectations (what their assertions recorded); the records are scored by the override.
 */
export interface ReadOptions extends RoutingOptions {
  goldenOverride?: ReadonlyMap<string, GoldenQuery>;
  /**
   * Labels to score every row with instead of the ones the rows carry (`rankgate gate --judgments FILE`): per query id
   * (a query without any: none), and what the file holds.
   */
  labels?: { byQuery: ReadonlyMap<string, QueryLabel[]>; info: JudgmentsInfo };
}

export function parseResultsJson(text: string, file = 'results.json', routingOpts: ReadOptions = {}): ParsedResults {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    fail(file, `not JSON (${(e as Error).message}); expected the file written by \`promptfoo eval --output results.json\``);
  }
  return parseResultsObject(doc, file, routingOpts);
}

/** Same as parseResultsJson over an already-parsed object ({evalId?, results: {prompts, results}, config?}). */
export function parseResultsObject(doc: unknown, file = 'results.json', routingOpts: ReadOptions = {}): ParsedResults {
  const top = doc as { evalId?: string; results?: { timestamp?: string; prompts?: PfPrompt[]; results?: PfRow[] }; config?: { providers?: unknown; commandLineOptions?: unknown } };
  const res = top?.results;
  if (!res || !Array.isArray(res.results) || !Array.isArray(res.prompts)) {
    fail(file, 'expected promptfoo output JSON with results.prompts[] and results.results[] (write it with `promptfoo eval --output results.json`)');
  }
  // promptfoo 0.121 and 0.123 both write results format 3; another format is a shape rankgate has not verified (fail closed)
  const format = (res as { version?: unknown }).version;
  if (format !== undefined && format !== 3) fail(file, `results.version ${JSON.stringify(format)}: rankgate reads promptfoo's results format 3 (promptfoo 0.121 to 0.123); this promptfoo's format is not one it has verified`);
  const parser = resultsParser({ evalId: top.evalId, timestamp: res.timestamp, prompts: res.prompts, config: top.config }, file, routingOpts);
  res.results.forEach((row, i) => parser.addRow(row, i));
  const toolchain = toolchainOfOutput((doc as { metadata?: unknown }).metadata);
  return { ...parser.finish(), ...(toolchain ? { toolchain } : {}), ...(top.config?.commandLineOptions !== undefined ? { commandLineOptions: top.config.commandLineOptions } : {}) };
}

/** A results file's summary part: promptfoo's JSON has it; its JSONL (one row a line) has none (prompts null). */
export interface ResultsHeader {
  evalId?: string;
  timestamp?: string;
  /** results.prompts of a JSON file; null for JSONL: columns then come from the rows (promptIdx, provider), without sums. */
  prompts: PfPrompt[] | null;
  config?: { providers?: unknown; derivedMetrics?: unknown };
}

/**
 * The row-at-a-time form of parseResultsObject (src/results/stream.ts feeds it a JSONL file line by line): a row is
 * reduced to its QueryRecord as it is added, so memory grows with the queries, not with the bytes of the rows.
 */
export function resultsParser(header: ResultsHeader, file = 'results.json', routingOpts: ReadOptions = {}): { addRow(row: unknown, i: number): void; finish(): ParsedResults } {
  const top = { evalId: header.evalId, config: header.config };
  const res = { timestamp: header.timestamp, prompts: header.prompts ?? [] };
  const jsonl = header.prompts === null;
  /** Per column, the sums of the rows' namedScores the summary cross-check needs (the rows themselves are not kept). */
  const rowSums = new Map<number, Record<string, number>>();
  // The config's own derived metrics may be NaN (0/0, JSON null) legitimately: only the counters must be numbers.
  const dm = (top.config as { derivedMetrics?: unknown } | undefined)?.derivedMetrics;
  const derivedNames = new Set(Array.isArray(dm) ? dm.map((d) => String((d as { name?: unknown })?.name)) : []);
  const providerConfigs = Array.isArray(top.config?.providers) ? (top.config!.providers as Record<string, unknown>[]) : [];
  const columns: Column[] = res.prompts.map((p, index) => {
    if (!p || typeof p !== 'object') fail(file, `results.prompts[${index}]: expected an object, got ${JSON.stringify(p)}`);
    const label = String(p.provider ?? p.label ?? `column-${index}`);
    let counts: Column['counts'] = null;
    if (p.metrics !== undefined) {
      const m = p.metrics;
      if (m.namedScores === undefined) fail(file, `results.prompts[${index}].metrics.namedScores ('${label}'): missing; expected the named score sums promptfoo writes`);
      checkScores(file, `results.prompts[${index}].metrics.namedScores`, m.namedScores, true, derivedNames);
      const n = (k: 'testPassCount' | 'testFailCount' | 'testErrorCount') => {
        const v = m[k];
        if (v === undefined) return null;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail(file, `results.prompts[${index}].metrics.${k}: expected a count, got ${JSON.stringify(v)}`);
        return v;
      };
      const [pass, fl, err] = [n('testPassCount'), n('testFailCount'), n('testErrorCount')];
      if (pass !== null && fl !== null && err !== null) counts = { pass, fail: fl, error: err };
    }
    const cfg = providerConfigs.find((c) => c && typeof c === 'object' && (c.label === label || c.id === label)) ?? providerConfigs[index];
    return {
      index,
      label,
      providerId: String((cfg as { id?: unknown } | undefined)?.id ?? label),
      // secrets (a databaseUrl password, an apiKey) never reach a baseline, report or comment (src/util/redact.ts)
      config: redactConfig(((cfg as { config?: Record<string, unknown> } | undefined)?.config ?? {}) as Record<string, unknown>),
      namedScores: { ...(p.metrics?.namedScores ?? {}) },
      queries: [],
      counts,
      selection: null,
      identity: null,
    };
  });
  const seen = new Map<string, number>();
  const selIds = new Map<number, { id: string | null; at: number }>();
  /** JSONL columns whose provider config a row carried. */
  const configFromRows = new Set<number>();
  /** Per column, the ranked rows and their Recall@3 sum by the rows' OWN expectations (what their assertions recorded). */
  const ownScores = new Map<number, { ranked: number; r3: number }>();
  const addRow = (raw: unknown, i: number): void => {
    const row = raw as PfRow;
    if (!row || typeof row !== 'object') fail(file, `results[${i}]: expected a result row, got ${JSON.stringify(row)}`);
    const pi = row.promptIdx ?? 0;
    if (typeof pi !== 'number' || !Number.isInteger(pi)) fail(file, `results[${i}].promptIdx: expected an index into results.prompts, got ${JSON.stringify(row.promptIdx)}`);
    if (jsonl && pi >= 0 && pi < 10_000 && !columns[pi]) {
      const label = String(row.provider?.label ?? row.provider?.id ?? `column-${pi}`);
      res.prompts[pi] = { provider: label };
      columns[pi] = { index: pi, label, providerId: String(row.provider?.id ?? label), config: {}, namedScores: {}, queries: [], counts: null, selection: null, identity: null };
    }
    const col = columns[pi];
    if (!col) fail(file, `results[${i}].promptIdx ${row.promptIdx} names no entry of results.prompts (${columns.length} column(s))`);
    const sums = rowSums.get(pi) ?? rowSums.set(pi, {}).get(pi)!;
    for (const k of SUMMED_KEYS) if (typeof row.namedScores?.[k] === 'number') sums[k] = (sums[k] ?? 0) + row.namedScores[k]!;
    const rowProvider = row.provider?.label ?? row.provider?.id;
    const promptProvider = res.prompts![pi]!.provider;
    if (typeof rowProvider === 'string' && typeof promptProvider === 'string' && rowProvider !== promptProvider && row.provider?.id !== promptProvider)
      fail(file, `results[${i}].provider '${rowProvider}' is not the provider of its column results.prompts[${pi}] '${promptProvider}' (wrong promptIdx or renamed column)`);
    if (row.namedScores !== undefined) checkScores(file, `results[${i}].namedScores`, row.namedScores, false);
    const own = goldenOf(row, file, i);
    const golden = routingOpts.goldenOverride?.get(own.id) ?? own;
    const dupKey = `${pi}\u0000${golden.id}`;
    if (seen.has(dupKey)) fail(file, `results[${i}]: query '${golden.id}' appears twice in column '${col.label}' (also results[${seen.get(dupKey)}])`);
    seen.set(dupKey, i);
    const sel = selectionOf(row.testCase?.metadata);
    const prevSel = selIds.get(pi);
    if (sel) {
      if (prevSel && prevSel.id !== sel.id) fail(file, `results[${i}].testCase.metadata.selection.id '${sel.id}' differs from results[${prevSel.at}] ('${prevSel.id}'): rows of one column come from different golden selections`);
      if (!prevSel) {
        selIds.set(pi, { id: sel.id, at: i });
        col.selection = sel;
      } else if (col.selection?.shard && JSON.stringify(col.selection.shard) !== JSON.stringify(sel.shard ?? null)) {
        // rows of several shards of one selection (`rankgate merge`): the column stands for the whole selection
        col.selection = { id: sel.id, size: sel.size, ...(sel.files ? { files: sel.files } : {}), ...(sel.filter ? { filter: sel.filter } : {}) };
      }
    }
    const ix = row.response?.metadata?.diagnostics?.index;
    if (!col.identity && ix && typeof ix === 'object') col.identity = { ...ix };
    const rmeta = row.response?.metadata as Record<string, unknown> | undefined;
    // JSONL has no config: the provider's rows carry theirs (providers/search.ts), the same as the JSON file's
    if (jsonl && !configFromRows.has(pi) && rmeta?.providerConfig && typeof rmeta.providerConfig === 'object' && !Array.isArray(rmeta.providerConfig)) {
      col.config = redactConfig(rmeta.providerConfig as Record<string, unknown>);
      configFromRows.add(pi);
    }
    if (rmeta?.[PROMPTFOO_WRITE_KEY] === false) col.written = false;
    else if (col.written !== false && typeof rmeta?.rankgate === 'string') col.written = true;
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
    // the judgments file's labels: `rankgate gate --judgments`, else the ones the eval's test case carried
    let labels: QueryLabel[] | undefined;
    if (routingOpts.labels) labels = routingOpts.labels.byQuery.get(golden.id) ?? [];
    else {
      try {
        labels = queryLabelsOf(row.testCase?.metadata?.labels, `results[${i}].testCase.metadata.labels`);
      } catch (e) {
        fail(file, `${(e as Error).message}: the rows' labels were edited (re-score with rankgate gate --judgments FILE)`);
      }
    }
    if (!col.judgments) {
      const info = routingOpts.labels?.info ?? judgmentsInfoOf(row.testCase?.metadata?.judgments);
      if (info) col.judgments = info;
    }
    const retrieval = output ? scoreRanking(golden, output, meta, labels ? { labels } : {}) : zeroRetrieval(golden);
    const ownRetrieval = golden === own ? retrieval : output ? scoreRanking(own, output, meta) : zeroRetrieval(own);
    if (ownRetrieval !== null && output) {
      const o = ownScores.get(pi) ?? ownScores.set(pi, { ranked: 0, r3: 0 }).get(pi)!;
      o.ranked++;
      o.r3 += ownRetrieval.recall_at_3;
    }
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
    // the reason's first part ("JUDGE ERROR xN (why)"), not the verdicts that follow it
    const judgeErrors = js && (js.scores.judge_errors ?? 0) > 0 ? String(judgeComp?.reason ?? `${js.scores.judge_errors} judge errors`).split('\n')[0]!.split(' · ')[0]!.slice(0, 300) : null;
    const answerComp = (row.gradingResult?.componentResults ?? []).find((c) => typeof c?.assertion?.value === 'string' && /judge\.ts:answer$/.test(c.assertion.value));
    const answerJudgeLabel = typeof answerComp?.metadata?.answerJudge === 'string' ? answerComp.metadata.answerJudge : null;
    const answerFailure = answerComp && answerComp.pass === false && /JUDGE ERROR|Error:/.test(String(answerComp.reason ?? '')) ? String(answerComp.reason).split('\n')[0]!.slice(0, 300) : null;
    col.queries.push({
      id: golden.id,
      query: golden.query,
      category: golden.category,
      language: golden.language,
      tags: golden.tags ?? [],
      golden,
      error: output ? null : err === null ? null : redactText(err),
      retrieval,
      routing,
      integrity: output ? checkIntegrity(output) : [],
      latencyMs: output?.latencyMs ?? (typeof row.latencyMs === 'number' ? row.latencyMs : null),
      rerank: output ? rerankCostOf(meta) : null,
      top: (output?.hits ?? [])
        .slice()
        .sort((a, b) => a.rank - b.rank)
        .slice(0, 3)
        .map((h) => ({ rank: h.rank, chunkId: h.chunkId, documentId: h.documentId, score: h.score, content: h.content, ...(h.path !== undefined ? { path: h.path } : {}) })),
      promptfooPass: row.success === true,
      judged,
      judgedScores: js?.scores ?? null,
      judgeHeuristic: js?.heuristic ?? false,
      judgeLabel,
      judgeFailure,
      judgeErrors,
      answerJudgeLabel,
      answerFailure,
      ...(output?.contentCut && typeof output.contentCut.hits === 'number' ? { contentCut: output.contentCut } : {}),
      expansion: expansionOf(meta),
      ...(labels ? { labels } : {}),
      answerScore: typeof row.namedScores?.n_answer === 'number' && typeof row.namedScores?.answer_score === 'number' ? row.namedScores.answer_score : null,
    });
  };
  const finish = (): ParsedResults => {
  if (jsonl) columns.splice(0, columns.length, ...columns.filter((c): c is Column => !!c));
  if (jsonl) for (const c of columns) if (!configFromRows.has(c.index)) c.configUnknown = true;
  for (const c of columns) {
    c.queries.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const rows = c.queries.length;
    if (c.counts && rows > 0) {
      const counted = c.counts.pass + c.counts.fail + c.counts.error;
      if (counted !== rows)
        fail(file, `column '${c.label}': results.results has ${rows} rows but results.prompts[${c.index}].metrics counts ${counted} (pass ${c.counts.pass} + fail ${c.counts.fail} + error ${c.counts.error}): rows are missing or were added`);
    }
    if (rows > 0) {
      // The column's sums must be the sums of its rows (a hand-edited or truncated file is not evidence).
      for (const k of ['n_ranked', 'recall_at_3', 'routing_ok']) {
        const sum = c.namedScores[k];
        if (typeof sum !== 'number') continue;
        const rowsSum = rowSums.get(c.index)?.[k] ?? 0;
        if (Math.abs(rowsSum - sum) > 1e-6)
          fail(file, `column '${c.label}': results.prompts[${c.index}].metrics.namedScores.${k} = ${sum} but its rows sum to ${rowsSum}: the summary and the rows disagree`);
      }
    }
    if (rows > 0 && typeof c.namedScores.n_ranked === 'number') {
      // The report re-scores every row from its output; the rank assertion scored the same rows when they ran.
      // They must agree, or the rows (outputs, golden metadata) were changed after the eval.
      const own = ownScores.get(c.index) ?? { ranked: 0, r3: 0 };
      if (own.ranked !== c.namedScores.n_ranked || (typeof c.namedScores.recall_at_3 === 'number' && Math.abs(own.r3 - c.namedScores.recall_at_3) > 1e-6))
        fail(
          file,
          `column '${c.label}': re-scoring the rows gives ${own.ranked} ranked queries and Recall@3 sum ${own.r3}, but the assertions recorded n_ranked ${c.namedScores.n_ranked} and recall_at_3 ${c.namedScores.recall_at_3 ?? 'n/a'}: the rows' outputs or golden metadata were changed after the eval`,
        );
    }
    if (!c.selection && typeof c.namedScores[SELECTION_SIZE_KEY] === 'number' && c.namedScores[SELECTION_SIZE_KEY]! > 0) c.selection = { id: null, size: c.namedScores[SELECTION_SIZE_KEY]! };
  }
  for (const c of columns) {
    // promptfoo kept no rows (--no-write): the column sums are the only evidence, so they must agree with each other.
    if (c.queries.length === 0 && c.counts && c.counts.pass + c.counts.fail + c.counts.error > 0) {
      const bad = sumsInconsistency(c, res.prompts[c.index]?.metrics?.namedScoresCount);
      if (bad) fail(file, `column '${c.label}': results.prompts[${c.index}].metrics.${bad}: the sums were edited or are not promptfoo's (a --no-write file is checked by its sums alone)`);
    }
  }
  const withRows = columns.find((c) => c.queries.length > 0);
  const counted = (c: Column) => (c.counts ? c.counts.pass + c.counts.fail + c.counts.error : 0);
  const empty = columns.find((c) => c.queries.length === 0 && counted(c) > 0);
  if (withRows && empty)
    fail(file, `column '${empty.label}' (results.prompts[${empty.index}]) has no rows although promptfoo counted ${counted(empty)}, while '${withRows.label}' has ${withRows.queries.length}: a column was added or its rows removed`);
  return { evalId: top.evalId ?? null, timestamp: res.timestamp ?? new Date().toISOString(), columns, ...(jsonl ? { format: 'jsonl' as const } : {}) };
  };
  return { addRow, finish };
}

/**
 * The first inconsistency of a column's sums (promptfoo's namedScores of a --no-write run) with each other, null when
 * none. Each ranked row adds 1 to n_ranked and n_<category>, its [0, 1] scores to <metric> and <metric>_<category>; each
 * routed row 1 to n_routing and n_routing_<category>, 0/1 to routing_ok and routing_ok_<category> (src/results/score.ts).
 * So: counters are whole numbers no larger than the rows promptfoo counted; the categories add up to the overall sums
 * (counts, every metric, routing); each sum lies in [0, its count]; per query recall@1 <= MRR@10 <= recall@10 and
 * recall@1 <= @3 <= @5 <= @10 <= found, so the sums are ordered the same way; the failure buckets add up to n_ranked;
 * the view copies ('#1 Success@3'...) equal their sums; namedScoresCount (rows per key) equals the counters; the
 * derived means equal sum / count.
 */
export function sumsInconsistency(c: Column, counts?: Record<string, unknown>): string | null {
  const ns = c.namedScores;
  const num = (k: string) => (typeof ns[k] === 'number' && Number.isFinite(ns[k]) ? ns[k]! : undefined);
  const at = (k: string) => `namedScores.${k}`;
  const eq = (a: number, b: number, n = 1) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(n), Math.abs(a), Math.abs(b));
  const rows = c.counts ? c.counts.pass + c.counts.fail : Infinity;
  const ranked = Object.keys(ns).filter((k) => k.startsWith('n_') && num(`recall_at_3_${k.slice(2)}`) !== undefined).map((k) => k.slice(2)).sort();
  // (a category key `routing_x` also gives a rank counter n_routing_x: a routed category is one with routing_ok_<x> too)
  const routedCats = Object.keys(ns).filter((k) => k.startsWith('n_routing_') && num(`routing_ok_${k.slice('n_routing_'.length)}`) !== undefined).map((k) => k.slice('n_routing_'.length)).sort();
  const counters = ['n_ranked', 'n_routing', 'n_latency', 'n_answerable', 'n_all_found', 'n_safety', 'n_share_judged', 'n_labelled', ...ranked.map((x) => `n_${x}`), ...routedCats.map((x) => `n_routing_${x}`)];
  for (const k of counters) {
    const v = ns[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return `${at(k)} is ${JSON.stringify(v)}, expected a count of queries`;
    if (v > rows) return `${at(k)} is ${v} but promptfoo counted ${rows} queries without errors (testPassCount + testFailCount)`;
    const n = counts?.[k];
    if (typeof n === 'number' && n !== v) return `${at(k)} is ${v} but namedScoresCount.${k} says ${n} rows added to it`;
  }
  const groups: { scope: string; n: string; sum: (m: string) => string }[] = [
    { scope: 'overall', n: 'n_ranked', sum: (m) => m },
    ...ranked.map((x) => ({ scope: `category ${x}`, n: `n_${x}`, sum: (m: string) => `${m}_${x}` })),
  ];
  for (const g of groups) {
    const n = num(g.n);
    if (n === undefined) continue;
    for (const m of RANK_KEYS) {
      const v = num(g.sum(m));
      if (v === undefined) continue;
      if (v < -1e-9 || v > n + 1e-6) return `${at(g.sum(m))} is ${v}, outside [0, ${g.n} = ${n}] (each query adds a score in [0, 1])`;
      const cnt = counts?.[g.sum(m)];
      if (typeof cnt === 'number' && cnt !== n) return `namedScoresCount.${g.sum(m)} is ${cnt} but ${g.n} is ${n}: every ranked query adds to both`;
      const avg = ns[`avg_${g.sum(m)}`];
      if (typeof avg === 'number' && n > 0 && !eq(avg, v / n)) return `${at(`avg_${g.sum(m)}`)} is ${avg} but ${g.sum(m)} / ${g.n} is ${v / n}`;
    }
    const chain: (typeof RANK_KEYS)[number][][] = [['recall_at_1', 'recall_at_3', 'recall_at_5', 'recall_at_10', 'found'], ['recall_at_1', 'mrr', 'recall_at_10']];
    for (const ch of chain)
      for (let i = 1; i < ch.length; i++) {
        const lo = num(g.sum(ch[i - 1]!));
        const hi = num(g.sum(ch[i]!));
        if (lo !== undefined && hi !== undefined && lo > hi + 1e-6) return `${at(g.sum(ch[i - 1]!))} = ${lo} exceeds ${g.sum(ch[i]!)} = ${hi} (per query ${ch[i - 1]} <= ${ch[i]})`;
      }
  }
  const total = (keys: string[]) => keys.reduce((a, k) => a + (num(k) ?? 0), 0);
  const nRanked = num('n_ranked');
  if (nRanked !== undefined && ranked.length) {
    const t = total(ranked.map((x) => `n_${x}`));
    if (t !== nRanked) return `${at('n_ranked')} is ${nRanked} but the categories' n_<category> add up to ${t} (${ranked.map((x) => `${x} ${num(`n_${x}`)}`).join(', ')})`;
    for (const m of RANK_KEYS) {
      const v = num(m);
      if (v === undefined) continue;
      const s = total(ranked.map((x) => `${m}_${x}`));
      if (!eq(v, s, nRanked)) return `${at(m)} is ${v} but the categories' ${m}_<category> add up to ${s} (${ranked.map((x) => `${x} ${num(`${m}_${x}`) ?? 0}`).join(', ')})`;
    }
    const bucketKeys = [...BUCKETS, ...Object.keys(LEGACY_BUCKETS)]; // a results file of before the rerank buckets: its old names
    const b = bucketKeys.reduce((a, k) => a + (num(`bucket_${k}`) ?? 0), 0);
    if (bucketKeys.some((k) => num(`bucket_${k}`) !== undefined) && b !== nRanked) return `the failure buckets (bucket_*) add up to ${b} but n_ranked is ${nRanked}: each ranked query has one bucket`;
  }
  const nRouting = num('n_routing');
  if (nRouting !== undefined) {
    const ok = num('routing_ok') ?? 0;
    if (ok < 0 || ok > nRouting) return `${at('routing_ok')} is ${ok}, outside [0, n_routing = ${nRouting}]`;
    if (routedCats.length) {
      const t = total(routedCats.map((x) => `n_routing_${x}`));
      if (t !== nRouting) return `${at('n_routing')} is ${nRouting} but the categories' n_routing_<category> add up to ${t}`;
      const o = total(routedCats.map((x) => `routing_ok_${x}`));
      if (!eq(o, ok)) return `${at('routing_ok')} is ${ok} but the categories' routing_ok_<category> add up to ${o}`;
    }
    for (const x of routedCats) {
      const v = num(`routing_ok_${x}`) ?? 0;
      const n = num(`n_routing_${x}`)!;
      if (v < 0 || v > n) return `${at(`routing_ok_${x}`)} is ${v}, outside [0, n_routing_${x} = ${n}]`;
      const acc = ns[`routing_accuracy_${x}`];
      if (typeof acc === 'number' && n > 0 && !eq(acc, v / n)) return `${at(`routing_accuracy_${x}`)} is ${acc} but routing_ok_${x} / n_routing_${x} is ${v / n}`;
    }
    const acc = ns.routing_accuracy;
    if (typeof acc === 'number' && nRouting > 0 && !eq(acc, ok / nRouting)) return `${at('routing_accuracy')} is ${acc} but routing_ok / n_routing is ${ok / nRouting}`;
  }
  for (const [k, view] of Object.entries(VIEW_KEYS)) {
    const a = num(k);
    const v = num(view);
    if (a !== undefined && v !== undefined && !eq(a, v)) return `${at(JSON.stringify(view).slice(1, -1))} is ${v} but ${k} is ${a}: the same sum twice`;
  }
  return null;
}

/** The row namedScores whose column sums the summary cross-check compares (kept per column while rows stream by). */
const SUMMED_KEYS = ['n_ranked', 'recall_at_3', 'routing_ok'] as const;

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
