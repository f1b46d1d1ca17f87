/**
 * The gate's verdict on one results column: ONE implementation for `rankgate gate`, `rankgate eval` and the
 * afterAll hook of `npx promptfoo eval` (assertions/gate.ts). Exit-code contract:
 *
 *   0  every floor and the regression check pass
 *   1  a quality floor fails, or a significant regression against the baseline
 *   2  nothing trustworthy was measured: no evaluated query, a partial run (fewer queries than the golden
 *      selection), errored queries (above gate.yaml max_error_rate), a floor nothing measures, a judged gate
 *      without judged scores or with judge errors, result ids that cannot match the golden set's (src/gate/idspace.ts),
 *      a baseline of another corpus source or golden set (the same source, edited, is compared: src/gate/corpus-change.ts);
 *      bad input and bad configuration (UserError) too
 *
 * 2 wins over 1: a broken setup is never reported as a quality result. Evidence is the rows of the results, or,
 * when promptfoo kept none (`--no-write`), its per-column sums (src/results/summary.ts buildReportFromSums).
 */
import { baselineCoverage, baselineSealNote, compareWithBaseline, countByCategory, describeFilter, errorGroups, regressionCheck, type Baseline, type BaselineDelta, type ErrorGroup, type RegressionResult, type RegressionTest } from './baseline.ts';

export { errorGroups, type ErrorGroup };
import { applyGate, type Floors } from './floors.ts';
import { corpusChange, corpusChangeNotes, unknownCorpusNote, type CorpusChange, type RunCorpus } from './corpus-change.ts';
import { idSpaceProblem } from './idspace.ts';
import { multiDocumentHits } from '../results/evidence.ts';
import { buildReport, buildReportFromSums, expansionSummary, labelledText, provisionalText, type Des058Report, type ReportOptions } from '../results/summary.ts';
import { outsideLine } from '../judgments/eval-input.ts';
import type { Column, QueryRecord, SelectionInfo } from '../results/read.ts';
import type { Toolchain } from '../util/toolchain.ts';
import { safeTerminalEntry } from '../util/terminal.ts';

export type ExitCode = 0 | 1 | 2;

export interface GateOptions {
  floors: Floors;
  /** Where the floors came from (shown in the verdict). */
  floorsSource: string;
  /** Accept partial runs (CLI --allow-partial, RANKGATE_ALLOW_PARTIAL=1); gate.yaml allow_partial also does. */
  allowPartial?: boolean;
  /** The baseline to check regressions against (regression: in gate.yaml, or --baseline); null = off. */
  baseline?: { path: string; data: Baseline } | null;
  /** Why this column has no baseline when one exists (it applies to another column of the eval); default: there is none. */
  noBaseline?: string;
  /** Compare against a baseline of another corpus / golden set anyway (--accept-baseline-mismatch). */
  acceptMismatch?: boolean;
  /** The golden selection when the column itself does not say (the hook: the suite's tests). */
  selectionHint?: SelectionInfo | null;
  /** The run's corpus as re-read (src/gate/corpus-change.ts runCorpus): which documents changed since the baseline. */
  corpus?: RunCorpus;
  report?: ReportOptions;
  /** The Node and promptfoo the run stood on (recorded in the verdict, printed under its first line). */
  toolchain?: Toolchain | null;
  /**
   * The column this one's Judged@10 is compared with (the eval's first column, or the baseline's recorded value): more
   * than JUDGED_GAP below it, the verdict says LOUD that the strict figures are a lower bound.
   */
  judgedReference?: { label: string; at_10: number | null } | null;
  /** The results file, to name in the command that judges the gap (`rankgate judge pool RESULTS`). */
  resultsPath?: string | null;
}

/**
 * "Well below": a column whose Judged@10 is more than this (10 points) below its reference column's has a larger share of
 * results nobody labelled, each counted as a miss by the strict figures: those figures are a lower bound, and the
 * verdict says so with the condensed measures beside them (docs/judgments.md "Judged@k").
 */
export const JUDGED_GAP = 0.1;

export interface ColumnVerdict {
  column: string;
  code: ExitCode;
  /** 'rows': per-query rows; 'sums': promptfoo's column sums only (a --no-write run). */
  evidence: 'rows' | 'sums';
  evaluated: number;
  /**
   * Queries that measured something: the evaluated ones without an error (every figure is over these); 0 when the
   * evidence measured nothing at all (result ids that cannot match the golden set's, hits holding several documents).
   * Absent (a verdict built elsewhere): the evaluated queries less the report's errors.
   */
  measured?: number;
  expected: number | null;
  /** Why the code is what it is: one line each (exit 2 reasons first, then exit 1 reasons). */
  reasons: string[];
  /** Things said loudly that do not change the code. */
  notes: string[];
  errors: { count: number; total: number; groups: ErrorGroup[] } | null;
  /**
   * Set when the verdict covers part of what it stands for (said in the verdict's FIRST line): a declared filter or
   * shard of the golden selection, the baseline's queries it leaves out, or an accepted partial run.
   */
  partial: string | null;
  /** Set when the run lacks baseline queries its selection does not declare out of scope (exit 2; said in the FIRST line). */
  lacking: string | null;
  report: Des058Report;
  regression: RegressionResult | null;
  delta: BaselineDelta | null;
  /** The same corpus source with other content than the baseline's: what changed (null: nothing to say). */
  corpusChange?: CorpusChange | null;
  /** The Node and promptfoo the run stood on; null when unknown (a results file that does not say). */
  toolchain?: Toolchain | null;
  /** What the gated evidence rests on that no person reviewed, one line (src/results/summary.ts provisionalText); null: nothing to say. */
  provisional?: string | null;
}

export function errorLines(e: NonNullable<ColumnVerdict['errors']>, max = 5): string[] {
  const out = e.groups.slice(0, max).map((g) => `${g.count}× ${g.reason}`);
  if (e.groups.length > max) out.push(`… and ${e.groups.length - max} other reason(s)`);
  return out;
}

const pts = (x: number) => `${x.toFixed(1)} pts`;

/**
 * What to do about errored queries, by their cause: an expected document the corpus no longer has (providers/search.ts,
 * src/golden/corpus-refs.ts: "golden set: …") is the golden set's or the corpus's to fix, not the service's.
 */
function errorAdvice(groups: readonly ErrorGroup[], floorsSource: string): string {
  const golden = groups.filter((g) => g.reason.startsWith('golden set:')).length;
  const service = 'a broken setup is not a quality result; fix the service, or set max_error_rate in ' + floorsSource;
  const refs = "an expected document that is not in the corpus measures nothing; update the golden set (the query's expected document), or the document's path in the corpus";
  return golden === groups.length ? refs : golden ? `${refs}; for the others, ${service}` : service;
}

export function gateColumn(col: Column, opts: GateOptions): ColumnVerdict {
  const floors = opts.floors;
  const allowPartial = opts.allowPartial === true || floors.allow_partial === true;
  const rowsMode = col.queries.length > 0 || !col.counts || col.counts.pass + col.counts.fail + col.counts.error === 0;
  const report = rowsMode ? buildReport(col, opts.report) : buildReportFromSums(col, opts.report);
  applyGate(report, { ...floors, allow_partial: allowPartial });
  const two: string[] = [];
  const one: string[] = [];
  const notes: string[] = [];
  const evaluated = rowsMode ? col.queries.length : col.counts!.pass + col.counts!.fail + col.counts!.error;
  const sel = col.selection ?? opts.selectionHint ?? null;
  const expected = sel ? (sel.shardSize ?? sel.size) : null;
  const selName = sel ? `golden selection${sel.id ? ` ${sel.id}` : ''}${sel.shard ? ` shard ${sel.shard.index}/${sel.shard.count}` : ''}` : '';

  const partial: string[] = [];
  if (sel?.filter) partial.push(`declared filter ${describeFilter(sel.filter)}: ${sel.size}${Number.isFinite(sel.filter.of) ? ` of the golden files' ${sel.filter.of}` : ''} queries`);
  if (sel?.shard) partial.push(`shard ${sel.shard.index}/${sel.shard.count} of the ${sel.size}-query selection`);
  const expansion = expansionSummary(col);
  if (expansion) notes.push(expansion);
  if (!rowsMode) notes.push(`evidence: promptfoo's column sums only (the results hold no rows, e.g. \`promptfoo eval --no-write\`): floors are checked on the sums; per-query detail and the regression check need the rows`);
  if (evaluated === 0) {
    two.push(`no evaluated queries in '${col.label}' (0 rows): nothing was measured (a --filter-* flag or a selection that matched nothing?)`);
  } else if (expected !== null && evaluated < expected) {
    const msg = `partial: ${evaluated} of ${expected} queries of the ${selName} were evaluated (promptfoo --filter-* flags, a crash or an interrupted run)`;
    if (allowPartial) {
      notes.push(`${msg}; accepted (allow partial runs)`);
      partial.push(`${evaluated} of ${expected} queries run (accepted)`);
    }
    else two.push(`${msg}; gate the full selection, or accept partial runs with --allow-partial, RANKGATE_ALLOW_PARTIAL=1 or allow_partial: true in ${opts.floorsSource}`);
  } else if (expected !== null && evaluated > expected) {
    two.push(`${evaluated} rows but the ${selName} has ${expected} queries: the results hold rows of something else`);
  } else if (expected === null) {
    notes.push(`golden selection unknown: the rows carry no testCase.metadata.selection (an older or foreign results file); completeness checked against promptfoo's own row counts only`);
  }

  let errors: ColumnVerdict['errors'] = null;
  const errCount = rowsMode ? col.queries.filter((q) => q.error !== null).length : col.counts!.error;
  if (errCount > 0) {
    errors = { count: errCount, total: evaluated, groups: rowsMode ? errorGroups(col.queries) : [{ reason: 'reasons not in the results (no rows: --no-write)', count: errCount }] };
    const rate = errCount / evaluated;
    const head = `${errCount} of ${evaluated} queries errored: ${errorLines(errors, 3).join('; ')}`;
    if (floors.max_error_rate !== undefined && rate <= floors.max_error_rate + 1e-12)
      notes.push(`${head} (under max_error_rate ${floors.max_error_rate}: accepted; the floors and every figure are over the ${evaluated - errCount} measured queries, and the errored ones are left out of the regression check)`);
    else
      two.push(
        `${head}${floors.max_error_rate !== undefined ? ` (${(rate * 100).toFixed(1)}% > max_error_rate ${floors.max_error_rate})` : ''}: ${errorAdvice(errors.groups, opts.floorsSource)}`,
      );
  }

  // A judged gate without judged scores, or with judge errors, measured nothing trustworthy (exit 2); its judged
  // floors are then unmeasured for that one reason, not repeated.
  const judgeBroken = report.gate.some((c) => c.scope === 'judge' && !c.passed);
  for (const c of report.gate) {
    if (c.passed) {
      if (c.scope === 'judge' && c.note) notes.push(c.note);
      else if (c.unmeasured) notes.push(`${c.scope} ${c.metric}: ${c.note}`);
      continue;
    }
    if (c.scope === 'judge') two.push(`judge: ${c.note}`);
    else if (c.unmeasured && judgeBroken && c.name.includes('(judged)')) continue;
    // every query errored: no floor can be measured, for that one reason (said above), not repeated per floor
    else if (c.unmeasured && errCount > 0 && errCount === evaluated) continue;
    else if (c.unmeasured) two.push(`floor ${c.scope} ${c.metric} >= ${c.min} ${c.note}`);
    else one.push(`floor: ${c.scope} ${c.metric}${c.name.includes('(judged)') ? ' (judged)' : ''} = ${c.value!.toFixed(4)} is below the floor ${c.min}`);
  }

  // Provisional evidence (docs/judgments.md): said in every verdict; under gate.yaml's min_reviewed_share, exit 2
  const prov = report.provisional ?? null;
  if (floors.min_reviewed_share !== undefined) {
    const min = floors.min_reviewed_share;
    if (!prov || prov.reviewed_share === null)
      two.push(`min_reviewed_share ${min} in ${opts.floorsSource} cannot be checked: ${!prov ? 'which golden entries are bootstrap-only is in the rows, and these results hold none (written with --no-write?)' : 'no query was measured'}`);
    else if (prov.reviewed_share < min - 1e-12)
      two.push(
        `reviewed evidence: ${prov.gated - prov.bootstrap_only} of ${prov.gated} gated queries reviewed (share ${prov.reviewed_share.toFixed(2)}) is below min_reviewed_share ${min} in ${opts.floorsSource}: ${prov.bootstrap_only} rest on a bootstrap only (source: bootstrap, e.g. ${prov.examples.join(', ')}); a person reviews them (the review queue, docs/judgments.md), then the gate trusts them`,
      );
  }
  // labels of queries the run did not hold: said, not fatal (a shard's are the other shards', which a merged column holds)
  if (col.judgments && (col.judgments.outside.scope === 'golden set' || sel?.filter || sel?.shard)) {
    const outside = outsideLine(col.judgments);
    if (outside) notes.push(outside);
  }
  // Judged@10 well below the reference column's: the strict figures are a lower bound (unlabelled results count as misses)
  const ref = opts.judgedReference;
  const j10 = report.share_judged?.at_10 ?? null;
  if (ref && ref.at_10 !== null && j10 !== null && ref.at_10 - j10 > JUDGED_GAP + 1e-12 && ref.label !== col.label) {
    const gap = Math.round((ref.at_10 - j10) * 1000) / 10;
    report.judged_gap = { reference: ref.label, reference_at_10: ref.at_10, at_10: j10, gap_pts: gap };
    const n4 = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : x.toFixed(4));
    notes.push(
      `LOUD: Judged@10 ${j10.toFixed(2)} is ${gap.toFixed(1)} points below '${ref.label}' (${ref.at_10.toFixed(2)}): the strict figures of '${col.label}' are a lower bound (a result nobody labelled counts as a miss); judge the gap: rankgate judge pool ${opts.resultsPath ?? 'RESULTS'} · beside the strict nDCG@10 ${n4(report.metrics.ndcg_at_10)}: condensed nDCG@10 ${n4(report.metrics.condensed_ndcg_at_10)}, bpref ${n4(report.metrics.bpref)}`,
    );
  }

  let lacking: string | null = null;
  let regression: RegressionResult | null = null;
  let delta: BaselineDelta | null = null;
  let change: CorpusChange | null = null;
  if (opts.baseline && floors.regression !== undefined) {
    const b = opts.baseline;
    if (!rowsMode || evaluated === 0) {
      if (evaluated > 0) two.push(`regression check against ${b.path} needs per-query rows; these results have none (written with --no-write?): write the results without --no-write`);
    } else {
      delta = compareWithBaseline(b.data, col, report);
      regression = regressionCheck(b.data, col, report, floors.regression);
      const r = regression;
      // The baseline's queries are the contract (the portal's DES-058 rule: old queries are never removed): a run that
      // lacks some is exit 2, unless a declared filter or shard of its golden selection leaves them out ("partial").
      const cov = baselineCoverage(b.data, col);
      if (cov.unexplained.length) {
        const n = Object.keys(b.data.queries).length;
        lacking = `${cov.unexplained.length} of the baseline's ${n} queries (${countByCategory(b.data, cov.unexplained)})`;
        const eg = cov.unexplained.slice(0, 3).join(', ') + (cov.unexplained.length > 3 ? ', …' : '');
        const complete = expected !== null && evaluated >= expected;
        // first among the reasons: the rest (floors of the categories not run...) follows from it
        two.unshift(
          `this run lacks ${cov.unexplained.length} of the ${n} queries of baseline ${b.path} (${countByCategory(b.data, cov.unexplained)}; e.g. ${eg})` +
            (complete
              ? `: they are no longer in the golden set${cov.declared ? ` (its declared subset: ${cov.declared})` : ''}; old queries are never removed (the portal's DES-058 rule): restore them, append new queries instead`
              : `${cov.declared ? ` that its declared subset (${cov.declared}) should hold` : ''}: gate the whole golden set, or declare the subset with RANKGATE_CATEGORY / RANKGATE_LANG / RANKGATE_TAG / RANKGATE_SHARD (or the tests loader config)`),
        );
      } else if (cov.explained.length) {
        partial.push(`compared on ${Object.keys(b.data.queries).length - cov.missing.length} of the baseline's ${Object.keys(b.data.queries).length} queries`);
        if (cov.unverifiable) notes.push(`${cov.unverifiable} baseline queries taken as outside the declared filter (${cov.declared}) without proof: the baseline records no language or tags (written by an older rankgate)`);
      }
      const bprov = provisionalText(b.data.provisional);
      if (bprov) notes.push(`baseline ${b.path} was written on provisional evidence: ${bprov.replace(/^provisional: /, '')}`);
      if (!b.data.identity) notes.push(`baseline ${b.path} records no corpus or golden selection (written by an older rankgate): they were not verified`);
      const sealNote = baselineSealNote(b.path, b.data);
      if (sealNote) notes.push(sealNote);
      for (const m of r.mismatches) {
        if (m.note) {
          notes.push(m.note);
          continue;
        }
        const line = `baseline ${b.path} was measured on another ${m.field}: baseline ${m.baseline}; this run ${m.run}`;
        if (m.fatal && !opts.acceptMismatch && !floors.regression.accept_mismatch)
          two.push(`${line}: the comparison is meaningless; re-baseline, or accept with --accept-baseline-mismatch or regression.accept_mismatch: true`);
        else notes.push(`LOUD: ${line}${m.fatal ? ' (accepted)' : ''}`);
      }
      change = corpusChange(b.data, col, opts.corpus);
      if (change) notes.push(...corpusChangeNotes(change, b.path, r.shared));
      const unknownCorpus = unknownCorpusNote(col, opts.corpus);
      if (unknownCorpus) notes.push(unknownCorpus);
      if (r.partial && !cov.unexplained.length) notes.push(`partial: compared on the ${r.shared} queries this run shares with the baseline's ${r.baseline_queries} (the others were not run)`);
      if (r.excluded_errors) notes.push(`${r.excluded_errors} errored queries left out of the regression check (reported as errors, not as regressions)`);
      if (!two.some((l) => l.startsWith(`baseline ${b.path}`)))
        for (const t of r.tests.filter((x) => x.failed))
          one.push(
            `regression: ${t.scope} ${t.metric} ${t.baseline.toFixed(4)} -> ${t.current.toFixed(4)} (-${pts(t.drop_pts)} > max_drop ${pts(r.max_drop)}, p ${t.scope === 'overall' ? '' : 'Holm-adjusted '}${fmtP(t.p_adj)} < alpha ${r.alpha}, ${t.n} queries)`,
          );
    }
  } else if (floors.regression !== undefined && !opts.baseline) {
    notes.push(opts.noBaseline ?? `regression check off: no baseline at ${floors.regression.baseline} (write one with rankgate gate RESULTS.jsonl --update-baseline)`);
  }

  // Ids of another space than the golden set's score every query 0: not a quality result (no floor or regression line).
  // The id hint comes FIRST (before a baseline "of another corpus" or a lacking query: they follow from ids that
  // name nothing), and no comparison with the baseline is shown: the zeros are not a drop.
  const ids = rowsMode ? idSpaceProblem(col, opts.corpus?.known ? opts.corpus.documents : undefined) : null;
  if (ids) {
    two.unshift(ids);
    one.length = 0;
    regression = null;
    if (delta) delta = { ...delta, regressed: [], improved: [], unchanged: 0, unmeasured: 'the result ids cannot match the golden set\'s (the ids line of the verdict): nothing was measured' };
  }

  let multiDoc = false;
  // Bounded evidence (src/results/evidence.ts): content cut to the maximum per hit is said LOUD; one hit holding the
  // expected passages of several golden documents is not a chunk, and what it matched is not a measurement.
  if (rowsMode) {
    const cut = col.queries.filter((q) => q.contentCut);
    if (cut.length) {
      const n = cut.reduce((a, q) => a + q.contentCut!.hits, 0);
      const c = cut[0]!.contentCut!;
      notes.push(
        `LOUD: content cut: ${n} hit(s) of ${cut.length} queries (${cut.slice(0, 3).map((q) => q.id).join(', ')}${cut.length > 3 ? ', …' : ''}) returned content longer than the maximum per hit, ${c.maxChars} characters (16 per token of the chunk size; the longest had ${Math.max(...cut.map((q) => q.contentCut!.longest))}): cut to it before passage matching; a hit is one chunk (a service with larger chunks sets chunkSize in its provider config)`,
      );
    }
    const multi = multiDocumentHits(col.queries);
    multiDoc = multi.length > 0;
    if (multi.length) {
      const m = multi[0]!;
      two.push(
        `evidence: ${multi.length} hit(s) of ${new Set(multi.map((x) => x.query)).size} queries each contain the expected passages of several distinct golden documents (query ${m.query} rank ${m.rank} '${m.chunkId}': ${m.documents.slice(0, 4).join(', ')}${m.documents.length > 4 ? ', …' : ''}): a hit is one chunk of one document, not a dump of the corpus; nothing trustworthy was measured`,
      );
    }
  }

  const errored = rowsMode ? col.queries.filter((q) => q.error !== null).length : col.counts!.error;
  const measured = ids || multiDoc ? 0 : evaluated - errored;
  const code: ExitCode = two.length ? 2 : one.length ? 1 : 0;
  report.gate_passed = code === 0;
  let reasons = [...two, ...one];
  if (evaluated === 0) reasons = two.slice(0, 1);
  else if (two.length && one.length) {
    // Quality numbers from untrustworthy evidence are not the verdict: shown as what the measured queries say so far
    // (errored queries are left out of them, never counted as misses).
    reasons = two;
    notes.push(...one.map((l) => `on this incomplete evidence: ${l}`));
  }
  return {
    column: col.label,
    code,
    evidence: rowsMode ? 'rows' : 'sums',
    evaluated,
    measured,
    expected,
    reasons,
    notes,
    errors,
    partial: partial.length ? partial.join('; ') : null,
    lacking,
    report,
    regression,
    delta,
    corpusChange: change,
    toolchain: opts.toolchain ?? null,
    provisional: provisionalText(prov),
  };
}

function fmtP(p: number): string {
  return p < 0.001 ? p.toExponential(1) : p.toFixed(3);
}

/**
 * A drop beyond max_drop the test does not confirm, in words: "unconfirmed drop: −25.0 pts (p 0.250; 12 queries cannot
 * confirm less than 36.6 pts; 26 queries would confirm it)". Not a failure: the exit code is the test's.
 */
export function unconfirmedText(t: RegressionTest): string {
  const u = t.unconfirmed!;
  const mdd = Number.isFinite(u.mdd_pts) ? `${t.n} queries cannot confirm less than ${pts(u.mdd_pts)}` : `${t.n} queries cannot confirm any drop, every one having changed alike`;
  const need = u.needed !== null && u.needed > t.n ? `; ${u.needed} queries would confirm it` : '';
  return `unconfirmed drop: −${pts(t.drop_pts)} (p ${t.scope === 'overall' ? '' : 'Holm-adjusted '}${fmtP(t.p_adj)}; ${mdd}${need})`;
}

/** The regression section: per-metric tests overall (and failing categories) and the minimum detectable drop. */
export function regressionLines(r: RegressionResult): string[] {
  const out = [`regression check (max_drop ${pts(r.max_drop)}, alpha ${r.alpha}, paired randomization test; categories Holm-adjusted) on ${r.shared} shared queries${r.partial ? ` (partial: of the baseline's ${r.baseline_queries})` : ''}:`];
  for (const t of r.tests.filter((x) => x.scope === 'overall' || x.failed || x.drop_pts > r.max_drop)) {
    const ch = t.drop_pts > 0.05 ? `-${pts(t.drop_pts)}` : t.drop_pts < -0.05 ? `+${pts(-t.drop_pts)}` : '±0';
    if (t.unconfirmed) out.push(`  WARN ${t.scope} ${t.metric}: ${t.baseline.toFixed(4)} -> ${t.current.toFixed(4)} ${unconfirmedText(t)}`);
    else out.push(`  ${t.failed ? 'FAIL' : 'ok  '} ${t.scope} ${t.metric}: ${t.baseline.toFixed(4)} -> ${t.current.toFixed(4)} (${ch}, p ${fmtP(t.p_adj)}, ${t.n} queries)`);
  }
  // the paired randomization test confirms nothing with fewer than this many queries that changed (its smallest p is
  // 2 / 2^n): the normal approximation's "queries needed" is never below it ("needs ~1 queries" was the approximation
  // fed the s_d of one changed query)
  const exactMin = Math.floor(1 - Math.log2(r.alpha)) + 1;
  for (const m of r.mdd) {
    const needed = m.needed_for_max_drop === null ? null : Math.max(m.needed_for_max_drop, exactMin);
    const detect =
      needed === null
        ? ''
        : needed <= m.n
          ? ` (these ${m.n} queries can detect a ${pts(r.max_drop)} drop, if at least ${exactMin} of them change)`
          : ` (detecting a ${pts(r.max_drop)} drop needs ~${needed} queries)`;
    out.push(
      `  minimum detectable drop of ${m.metric} at alpha ${r.alpha} and 80% power over ${m.n} ${m.n === 1 ? 'query' : 'queries'}: ${pts(m.mdd_pts)}${detect}` +
        (m.sd_assumed ? '; s_d assumed sqrt(2) x SD of the baseline scores (the run equals the baseline on every query)' : ''),
    );
  }
  return out;
}

const WORD: Record<ExitCode, string> = { 0: 'PASSED', 1: 'FAILED', 2: 'ERROR' };

/** The verdict block: printed LAST by every entry point. */
export function verdictLines(v: ColumnVerdict): string[] {
  const r = v.report;
  // The figures are over the measured queries (an errored query is left out, never a miss), with "K of N errored"
  // beside them. "nothing measured" only when nothing was (every query errored, ids that name nothing); the reasons,
  // each with its advice, follow once in the ✗ lines below.
  const figures =
    ` · Success@3 ${r.overall_recall_at_3 === null ? 'n/a' : r.overall_recall_at_3.toFixed(4)} (DES-058 Recall@3) · MRR@10 ${r.overall_mrr_at_10 === null ? 'n/a' : r.overall_mrr_at_10.toFixed(4)}` +
    `${v.evidence === 'sums' ? ' (from the column sums)' : ''}`;
  const m = v.measured ?? v.evaluated - (r.errors ?? 0);
  const over = r.errors && m > 0 ? ` over the ${m} measured (${r.errors} of ${v.evaluated} errored)` : '';
  const measured =
    v.code === 2 && m === 0
      ? ` · nothing measured: ${r.errors && r.errors === v.evaluated ? `all ${v.evaluated} queries errored` : causeOf(v.reasons[0] ?? 'see below')} (the reasons below)`
      : `${figures}${over}${v.code === 2 ? ' · not a quality verdict (the reasons below)' : ''}`;
  const head =
    `rankgate gate ${WORD[v.code]} (exit ${v.code}) for '${v.column}': ${v.lacking ? `LACKS ${v.lacking} · ` : ''}${v.partial ? `PARTIAL (${v.partial}) · ` : ''}` +
    `${v.evaluated}${v.expected !== null ? ` of ${v.expected}` : ''} queries${measured}`;
  const out = [head];
  if (v.toolchain) out.push(`  ${toolchainLine(v.toolchain)}`);
  // how much of the evidence no person reviewed, and the + labels figures beside the strict ones (the floors are on the strict)
  if (v.provisional) out.push(`  ${v.provisional}`);
  const lab = labelledText(r);
  if (lab) out.push(`  ${lab}; the floors are on the strict figures`);
  for (const n of v.notes) out.push(`  note: ${n}`);
  if (v.regression) out.push(...regressionLines(v.regression).map((l) => `  ${l}`));
  const named = regressedQueriesLine(v.delta);
  if (named) out.push(`  ${named}`);
  for (const x of v.reasons) out.push(`  ✗ ${x}`);
  if (v.errors && v.errors.groups.length > 3) for (const l of errorLines(v.errors)) out.push(`    ${l}`);
  // column labels, categories, ids and services' messages are input: each line stays one line, without escapes
  // (a category holding "\nrankgate gate PASSED (exit 0)" or ANSI codes cannot forge the verdict in a terminal)
  return out.map(safeTerminalEntry);
}

/**
 * The queries that went down against the baseline's per-query values (errored queries are never among them), by id
 * with what changed: `regressed against the baseline (2 of 16): pw-forgot (recall_at_3 1→0, mrr 1→0.25), …`.
 * null when none did (or there is no baseline).
 */
export function regressedQueriesLine(d: BaselineDelta | null, max = 10): string | null {
  if (!d || !d.regressed.length) return null;
  const n = (x: number | null) => (x === null ? 'n/a' : String(Math.round(x * 100) / 100));
  const shown = d.regressed.slice(0, max).map((q) => `${q.id} (${Object.entries(q.changes).map(([k, [a, b]]) => `${k} ${n(a)}→${n(b)}`).join(', ')})`);
  const compared = d.regressed.length + d.improved.length + d.unchanged;
  return `regressed against the baseline (${d.regressed.length} of ${compared} queries): ${shown.join(', ')}${d.regressed.length > max ? `, … and ${d.regressed.length - max} more` : ''}`;
}

/** The toolchain line of a verdict: `on Node 24.21.0 · promptfoo 0.123.1`. */
export function toolchainLine(t: Toolchain): string {
  return `on Node ${t.node ?? 'unknown'} · promptfoo ${t.promptfoo ?? 'unknown'}`;
}

/**
 * What went wrong, without the advice that follows it in the reason (the ✗ line says it once): the reason's first
 * clause ("ids: no expected id of any of the 2 queries with results appears in their results"), at most ~110 characters.
 */
function causeOf(reason: string): string {
  const parts = reason.split(': ');
  const clause = parts[0]!.length < 12 && parts.length > 1 ? `${parts[0]}: ${parts[1]}` : parts[0]!;
  if (clause.length <= 110) return clause;
  const cut = clause.slice(0, 110);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 55)).replace(/[\s:;,(]+$/, '')} …`;
}

/** The combined code of several columns: 2 if any is 2, else 1 if any is 1, else 0. */
export function combinedCode(codes: readonly ExitCode[]): ExitCode {
  return codes.includes(2) ? 2 : codes.includes(1) ? 1 : 0;
}

export const EXIT_CODE_HELP = `exit codes: 0 every floor and the regression check pass; 1 a quality floor or a significant regression fails;
            2 bad input, bad configuration or an infrastructure failure (no evaluated query, a partial run, errored
            queries, a floor nothing measures, result ids that cannot match the golden set's, a baseline of another
            corpus source or golden set): nothing trustworthy measured`;
