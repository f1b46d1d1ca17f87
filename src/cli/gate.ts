/**
 * rankgate gate RESULTS.jsonl [--floors config/gate.yaml] [--baseline FILE] [--update-baseline] [--column LABEL|INDEX]
 *                            [--allow-partial] [--accept-baseline-mismatch] [--report OUT.json] [--markdown OUT.md]
 *                            [--comment OUT.md] [--head-baseline FILE]
 *
 * Reads promptfoo's `--output` JSON (rows, or only the column sums of a `--no-write` run), builds the DES-058
 * report of one column (default the first), applies the floors and the regression check (src/gate/verdict.ts,
 * the same code as the afterAll hook), prints the per-category table, the change against the baseline and, LAST,
 * the verdict with its reasons. Exit codes: see EXIT_CODE_HELP (0 pass, 1 floor/regression fails, 2 bad input,
 * bad configuration or nothing trustworthy measured).
 * --update-baseline rewrites the baseline atomically, with what it was measured on (engine, corpus, golden
 * selection, provider config); refused (exit 2, old baseline kept) when the run is not trustworthy, or partial,
 * filtered or sharded, whatever other flag is given.
 */
import { existsSync } from 'node:fs';
import { UserError, isUserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { redactJson, redactText } from '../util/redact.ts';
import { parseCliArgs } from './args.ts';
import { baselineChangeLine, baselineColumn, baselineCoverage, baselineFrom, countByCategory, describeFilter, readBaseline, writeBaseline } from '../gate/baseline.ts';
import { runCorpus, runCorpusFor } from '../gate/corpus-change.ts';
import { expectationsAtBase, gateInputs, readAtBase, restrictToBase } from '../gate/base-ref.ts';
import { baseRefFrom, noBaseNote, refReader } from '../util/git.ts';
import { categoryTable, deltaSection, judgeSection, noDeltaReason, renderComment, renderMarkdown } from '../report/markdown.ts';
import { bucketsPart, judgedAtPart, latencyPart, queriesPart, rerankPart } from '../report/column-line.ts';
import { loadEvalLabels } from '../judgments/eval-input.ts';
import { pickColumn, type Column } from '../results/read.ts';
import { MEASURE_NAMES, labelledText } from '../results/summary.ts';
import { JSONL_LIMITS, readResultsFile, type RegateHeader } from '../results/stream.ts';
import { regateHeaderBeside, verifyEvidence } from '../results/regate.ts';
import { noWriteRefusal } from '../results/nowrite.ts';
import { EXIT_CODE_HELP, gateColumn, verdictLines, type ColumnVerdict } from '../gate/verdict.ts';
import { envFlag } from '../util/env.ts';
import { gateDrift } from '../history/run.ts';

const USAGE = `usage: rankgate gate RESULTS.jsonl [--floors config/gate.yaml] [--baseline FILE] [--update-baseline]
                     [--column LABEL|INDEX] [--allow-partial] [--accept-baseline-mismatch]
                     [--report OUT.json] [--markdown OUT.md] [--comment OUT.md] [--head-baseline FILE] [--base-ref REF]
                     [--judgments FILE]
  RESULTS.jsonl promptfoo eval --output results.jsonl (what init's workflow writes) or results.json (with or
                without --no-write), or the afterAll hook's re-gate file results.jsonl.rankgate.jsonl
  --baseline    regression check against this baseline (default: regression.baseline of the floors file, when it exists)
  --allow-partial  accept a run with fewer queries than its golden selection (also RANKGATE_ALLOW_PARTIAL=1)
  --base-ref    a pull request's base (e.g. origin/main; also RANKGATE_BASE_REF, and GitHub's pull_request event
                gives origin/<base>): the floors, the golden expectations and the baseline are read there with git and
                the pull request is judged by them; every change it makes to them is said LOUD at the top, with before
                and after (docs/gate.md: what a pull request can change). none: no base on purpose
  --head-baseline  the pull request's own copy of the baseline, when not at the baseline's own path
  --judgments   re-score every row with this judgments file's labels (the + labels figures; Judged@k counts them)
                instead of the labels the eval's rows carry (docs/judgments.md); the floors stay on the strict figures
${EXIT_CODE_HELP}`;

export async function run(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseCliArgs(
    argv,
    {
      baseline: { type: 'string' },
      'update-baseline': { type: 'boolean', default: false },
      floors: { type: 'string' },
      column: { type: 'string' },
      'allow-partial': { type: 'boolean', default: false },
      'accept-baseline-mismatch': { type: 'boolean', default: false },
      'head-baseline': { type: 'string' },
      'base-ref': { type: 'string' },
      report: { type: 'string' },
      markdown: { type: 'string' },
      comment: { type: 'string' },
      judgments: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UserError(`expected one results file (promptfoo eval --output results.jsonl), got ${positionals.length}\n${USAGE}`);
  const file = positionals[0]!;
  const floorsPath = v.floors ?? 'config/gate.yaml';
  // on a pull request (--base-ref, RANKGATE_BASE_REF, or GitHub's pull_request event), the floors, the baseline and the
  // golden expectations are the base branch's (src/gate/base-ref.ts); the pull request's changes to them are said LOUD
  const baseRef = baseRefFrom(v['base-ref']);
  const inputs = gateInputs({ floorsPath, floorsNamed: !!v.floors, baselinePath: v.baseline, updating: v['update-baseline'], headBaseline: v['head-baseline'], base: baseRef ? refReader(baseRef) : null });
  const floors = inputs.floors;
  let results = readResultsFile(file);
  // the column gated: --column, else, in a sweep, the one whose provider config the baseline records (as the hook),
  // else the first
  const matched = !v.column && inputs.baseline && results.columns.length > 1 ? baselineColumn(inputs.baseline.data, results.columns) : null;
  const which = v.column ?? (matched?.matched ? results.columns.find((c) => c.index === matched.index)!.label : undefined);
  let col = pickColumn(results, which, file);
  if (matched?.matched && col.index !== results.columns[0]!.index) console.log(`gating column '${col.label}': the one whose provider config the baseline records (--column names another)`);
  // --judgments: every row re-scored with this file's labels (the rows' own, if any, are replaced); read once, here
  let readOpts: Parameters<typeof readResultsFile>[1] = {};
  if (v.judgments !== undefined) {
    const ids = new Set(results.columns.flatMap((c) => c.queries.map((q) => q.id)));
    const scope = col.selection?.filter || col.selection?.shard ? 'selection' : 'golden set';
    readOpts = { labels: await loadEvalLabels(v.judgments, ids, scope) };
    results = readResultsFile(file, readOpts);
    col = pickColumn(results, which, file);
  }
  const regate = (results as { regate?: RegateHeader }).regate;
  if (regate) console.log(`re-gating from the eval's own record (${file}, written by the afterAll hook${regate.evalId ? ` of ${regate.evalId}` : ''}; its verdict then: exit ${regate.code ?? '?'})`);
  if (results.format === 'jsonl') console.log(JSONL_LIMITS);
  // the rows against the eval's record (src/results/record.ts): rows of several runs or edited rows are not evidence
  const evidence = verifyEvidence(file);
  if (evidence.problem) throw new UserError(evidence.problem);
  if (evidence.loud) console.log(evidence.loud);
  const loud = [...inputs.loud];
  const notes = [...inputs.notes];
  const noBase = noBaseNote(v['base-ref']);
  if (noBase) loud.push(noBase);
  if (inputs.base) {
    console.log(`judged by the base branch ${inputs.base.name} (${baseRef!.source}): its floors, golden expectations and baseline`);
    const exp = await expectationsAtBase(inputs.base, col, { allowPartial: v['allow-partial'] || envFlag('RANKGATE_ALLOW_PARTIAL'), baseline: inputs.baseline?.data });
    loud.push(...exp.loud);
    notes.push(...exp.notes);
    const again = readAtBase(exp, readOpts);
    if (again) {
      results = readResultsFile(file, again);
      col = pickColumn(results, which, file);
    }
    col = restrictToBase(col, exp.added);
  }
  const baseline = inputs.baseline;
  const baselinePath = floors.regression?.baseline ?? 'data/eval/baseline.json';

  const verdict = gateColumn(col, {
    floors,
    floorsSource: inputs.floorsSource,
    allowPartial: v['allow-partial'] || envFlag('RANKGATE_ALLOW_PARTIAL'),
    acceptMismatch: v['accept-baseline-mismatch'] || envFlag('RANKGATE_ACCEPT_BASELINE_MISMATCH'),
    baseline,
    corpus: await runCorpusFor(col, baseline?.data),
    report: { evalId: results.evalId, timestamp: results.timestamp },
    // what the file says wrote it (promptfoo's JSON metadata, or the hook's record of the same eval beside its JSONL)
    toolchain: results.toolchain ?? (regate ? null : (regateHeaderBeside(file)?.toolchain ?? null)),
    // Judged@10 against the first column of the results (a sweep's reference), or what the baseline recorded
    judgedReference:
      col.index !== results.columns[0]!.index
        ? { label: results.columns[0]!.label, at_10: gateColumnShare(results.columns[0]!) }
        : baseline?.data.share_judged
          ? { label: `baseline ${baseline.path}`, at_10: baseline.data.share_judged.at_10 }
          : null,
    resultsPath: file,
  });
  verdict.notes.unshift(...loud, ...(evidence.loud ? [evidence.loud] : []), ...notes);
  // the drift over the baseline's git history (and the history branch, when fetched) with this run as the newest
  // point: one line when there is a drift, never the exit code; bounded and fail-soft (src/history/run.ts)
  if (baseline && floors.regression && !v['update-baseline']) {
    const drift = gateDrift(col, verdict, { baseline: v.baseline ?? floors.regression.baseline, ref: inputs.base?.commit, regression: floors.regression });
    if (drift?.headline) verdict.notes.push(drift.headline);
  }
  // without a base ref, CI may still pass the pull request's own copy of the baseline (--head-baseline)
  const changed = !inputs.base && v['head-baseline'] && baseline ? baselineChangeLine(baseline.data, baseline.path, v['head-baseline']) : null;
  if (changed) verdict.notes.unshift(changed);
  const top = [...(changed ? [changed] : []), ...loud];
  for (const l of top) console.log(l);
  if (v['update-baseline']) {
    // this run is to become the baseline: "no baseline at X" right after "baseline written: X" said the opposite
    const off = 'regression check off: no baseline at ';
    const target = v.baseline ?? baselinePath;
    const what = existsSync(target) ? `replaces the baseline ${target} with this run (not compared with it)` : `makes this run the baseline at ${target}`;
    verdict.notes = verdict.notes.map((n) => (n.startsWith(off) ? `regression check not run: --update-baseline ${what}` : n));
  }
  const report = verdict.report;
  const delta = verdict.delta;

  console.log(
    `${col.label}: ${queriesPart(report)} · Success@3 ${report.overall_recall_at_3?.toFixed(4) ?? 'n/a'} · MRR@10 ${
      report.overall_mrr_at_10?.toFixed(4) ?? 'n/a'
    } · routing ${report.routing.accuracy?.toFixed(4) ?? 'n/a'}${judgedAtPart(report)} · ${latencyPart(report)}${rerankPart(report.rerank)} · ${report.judge} · gate on the ${floors.metric_family ?? 'strict'} metrics`,
  );
  const lab = labelledText(report);
  if (lab) console.log(`  ${lab}`);
  if (verdict.provisional) console.log(`  ${verdict.provisional}`);
  const buckets = bucketsPart(report);
  if (buckets) console.log(`  ${buckets}`);
  console.log('');
  console.log(judgeSection(report));
  console.log('');
  console.log(categoryTable(report, delta));
  console.log('');
  console.log(deltaSection(delta, undefined, noDeltaReason(verdict)));
  console.log('');
  if (v.report) writeFileAtomic(v.report, redactJson({ ...report, measure_names: MEASURE_NAMES, exit_code: verdict.code, reasons: verdict.reasons, notes: verdict.notes, regression: verdict.regression, toolchain: verdict.toolchain ?? null }) + '\n');
  if (v.markdown) writeFileAtomic(v.markdown, redactText(renderMarkdown(report, delta, undefined, verdict)));
  if (v.comment) writeFileAtomic(v.comment, redactText(top.map((l) => `> **${l.replace(/^LOUD: /, '')}**\n\n`).join('') + renderComment(report, delta, verdict)));
  if (v['update-baseline']) {
    // A baseline is reference numbers: never from a run with nothing measured, errored queries, a partial run (whatever
    // --allow-partial says), a filtered or sharded golden selection, or evidence without rows. The old baseline stays.
    const target = v.baseline ?? baselinePath;
    const why = baselineRefusals(col, verdict);
    // the hook's record: this file itself, or the one beside it (a JSONL output says nothing else about its run)
    const record = regate ?? regateHeaderBeside(file);
    const unkept = noWriteRefusal(col, { promptfooVersion: results.toolchain?.promptfoo ?? record?.toolchain?.promptfoo, commandLineOptions: results.commandLineOptions, regate: record ?? undefined });
    if (unkept) why.push(unkept);
    // Old queries are never removed (the portal's DES-058 rule): the new baseline keeps every query of the one it
    // replaces (one that is not evidence itself is simply replaced). Starting over is deleting the file on purpose.
    let old = baseline?.path === target ? baseline.data : null;
    if (!old && existsSync(target)) {
      try {
        old = readBaseline(target);
      } catch (e) {
        if (!isUserError(e)) throw e;
      }
    }
    const gone = old ? baselineCoverage(old, col).missing : [];
    if (old && gone.length)
      why.push(
        `the run lacks ${gone.length} of the ${Object.keys(old.queries).length} queries of the baseline it would replace (${countByCategory(old, gone)}; e.g. ${gone.slice(0, 3).join(', ')}): ` +
          `old queries are never removed (the portal's DES-058 rule); to start a new baseline on purpose, delete ${target} first`,
      );
    if (why.length) {
      throw new UserError(`--update-baseline: ${why.join('; ')}; ${target} was left as it was: a baseline must come from a complete, unfiltered run without errors`, 2);
    }
    const corpus = col.identity?.corpus ? await runCorpus(col) : undefined;
    writeBaseline(target, baselineFrom(col, report, corpus?.known ? corpus.documents : undefined));
    console.log(
      `baseline written: ${target} (${col.queries.length} queries, configuration of '${col.label}'${col.identity?.corpus ? `, corpus ${col.identity.corpus}` : ''}` +
        `${corpus?.known ? ` with ${Object.keys(corpus.documents).length} document hashes` : corpus ? `; no document hashes: ${corpus.reason}` : ''})`,
    );
  }
  const lines = verdictLines(verdict);
  if (verdict.code === 0) console.log(lines.join('\n'));
  else console.error(lines.join('\n'));
  return verdict.code;
}

/** A column's Judged@10 over its measured ranked queries with results (the report's figure, without building it). */
function gateColumnShare(c: Column): number | null {
  const xs = c.queries.filter((q) => q.error === null && typeof q.retrieval?.judged_at_10 === 'number').map((q) => q.retrieval!.judged_at_10!);
  return xs.length ? Math.round((xs.reduce((a, x) => a + x, 0) / xs.length) * 1e4) / 1e4 : null;
}

/** Why a results column cannot become a baseline (empty when it can). Independent of --allow-partial and the like. */
export function baselineRefusals(col: Column, verdict: ColumnVerdict): string[] {
  const errored = col.queries.filter((q) => q.error !== null);
  const why = errored.length ? [`${errored.length} of ${col.queries.length} queries of '${col.label}' errored (${errored.slice(0, 3).map((q) => `${q.id}: ${q.error}`).join('; ')})`] : [];
  if (verdict.evidence === 'sums') why.push('the results hold no per-query rows (written with --no-write?)');
  if (verdict.evaluated === 0) why.push('no evaluated queries');
  else if (verdict.expected !== null && verdict.evaluated < verdict.expected) why.push(`partial run: ${verdict.evaluated} of the ${verdict.expected} queries of its golden selection`);
  const sel = col.selection;
  if (sel?.filter) why.push(`filtered golden selection (${describeFilter(sel.filter)}: ${sel.size}${Number.isFinite(sel.filter.of) ? ` of ${sel.filter.of}` : ''} queries)`);
  if (sel?.shard) why.push(`one shard (${sel.shard.index}/${sel.shard.count}) of the golden selection: merge the shards first (rankgate merge)`);
  const said = ['floor:', 'regression:', 'partial:', 'no evaluated queries', 'this run lacks'];
  if (verdict.code === 2) why.push(...verdict.reasons.filter((r) => !said.some((x) => r.startsWith(x)) && !r.includes('queries errored')));
  return [...new Set(why)];
}
