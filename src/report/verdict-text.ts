/**
 * The gate's verdict said for people, wherever they look: the HTML report's opening block (src/report/html) and
 * the eval's description in `promptfoo view` (assertions/gate.ts afterAll). Renderings only: the verdict itself is
 * decided by src/gate/verdict.ts gateColumn (the same code as `rankgate gate`). Pure.
 */
import { regressionLines, unconfirmedText, type ColumnVerdict, type ExitCode } from '../gate/verdict.ts';
import type { Floors } from '../gate/floors.ts';

export const VERDICT_WORD: Record<ExitCode, 'PASS' | 'FAIL' | 'ERROR'> = { 0: 'PASS', 1: 'FAIL', 2: 'ERROR' };

/** One name per measure (docs/metrics.md "Names"): the binary recall_at_k keys are Success@k, trec recall is Recall@k. */
const METRIC_NAMES: Record<string, string> = {
  recall_at_1: 'Success@1',
  recall_at_3: 'Success@3',
  recall_at_5: 'Success@5',
  mrr_at_10: 'MRR@10',
  mrr: 'MRR@10',
  ndcg_at_10: 'nDCG@10',
  routing_accuracy: 'routing accuracy',
  recall_at_10: 'Success@10',
  trec_recall_at_10: 'Recall@10',
  not_found_rate: 'not-found rate',
};

/** recall_at_3 -> Success@3; judged_ and unknown names as they are. */
export function metricName(metric: string): string {
  return METRIC_NAMES[metric] ?? metric;
}

export interface FloorRow {
  /** 'overall' or the category. */
  scope: string;
  metric: string;
  min: number;
  value: number | null;
  /** pass / fail; 'not measured' (exit 2) or 'not checked' (allow_partial) when nothing measures it. */
  status: 'pass' | 'fail' | 'not measured' | 'not checked';
}

/** Every floor of the verdict with its measured value (the judge's own checks left out: they are not floors). */
export function floorRows(v: ColumnVerdict): FloorRow[] {
  return v.report.gate
    .filter((c) => c.scope !== 'judge')
    .map((c) => ({
      scope: c.scope,
      metric: c.metric,
      min: c.min,
      value: c.value,
      status: c.unmeasured ? (c.passed ? 'not checked' : 'not measured') : c.passed ? 'pass' : 'fail',
    }));
}

export interface RegressionView {
  /** 'on': compared with a baseline; 'off': configured but no baseline file; 'none': not configured. */
  state: 'on' | 'off' | 'none';
  baseline: string | null;
  /** One line each, as `rankgate gate` prints them (regressionLines), or why it is off. */
  lines: string[];
  failed: number;
  /** Drops beyond max_drop the test did not confirm (not failures; shown amber, never "no significant drop" in green). */
  unconfirmed: number;
}

export function regressionView(v: ColumnVerdict, floors: Floors): RegressionView {
  if (v.regression) {
    return {
      state: 'on',
      baseline: floors.regression?.baseline ?? null,
      lines: regressionLines(v.regression),
      failed: v.regression.tests.filter((t) => t.failed).length,
      unconfirmed: v.regression.tests.filter((t) => t.unconfirmed).length,
    };
  }
  if (floors.regression) {
    const why = v.notes.find((n) => n.startsWith('regression check off')) ?? v.reasons.find((r) => r.includes('regression check') || r.startsWith('baseline ')) ?? `not run for '${v.column}'`;
    return { state: 'off', baseline: floors.regression.baseline, lines: [why], failed: 0, unconfirmed: 0 };
  }
  return { state: 'none', baseline: null, lines: ['no regression check configured (regression: in the floors file, or rankgate gate --baseline)'], failed: 0, unconfirmed: 0 };
}

const num = (x: number | null) => (x === null ? 'n/a' : x.toFixed(4));

function floorPhrase(f: FloorRow): string {
  const where = f.scope === 'overall' ? metricName(f.metric) : `${metricName(f.metric)} of ${f.scope}`;
  return `${where} is ${num(f.value)} where the gate requires at least ${f.min}`;
}

/** A short tag of the verdict for a title line: "gate FAIL (exit 1): Success@3 0.5741 < 0.8". */
export function verdictTag(v: ColumnVerdict): string {
  const first = floorRows(v).find((f) => f.status === 'fail');
  const why =
    v.code === 0
      ? `every floor met${v.regression ? ', no significant regression' : ''}`
      : v.code === 1 && first
        ? `${first.scope === 'overall' ? '' : `${first.scope} `}${metricName(first.metric)} ${num(first.value)} < ${first.min}`
        : (v.reasons[0] ?? '').replace(/^regression: /, 'regression: ').slice(0, 120);
  const more = v.reasons.length > 1 ? ` (+${v.reasons.length - 1} more)` : '';
  return `gate ${VERDICT_WORD[v.code]} (exit ${v.code}): ${why}${more}`;
}

/**
 * The eval's description in `promptfoo view` (its title above the matrix), with the verdict of every column in
 * front: "[gate FAIL (exit 1): Success@3 0.5741 < 0.8] <the config's description>". A sweep names the failing columns;
 * `verdicts` as a string: the one-line error that stopped the gate (exit 2). `rankgate merge` takes the tag off
 * again (src/results/merge.ts withoutVerdictTag): a merged file has no verdict until it is gated.
 */
export function describeWithVerdict(description: string | undefined, verdicts: ColumnVerdict[] | string, combined: ExitCode, reportOnly = false, extra = ''): string {
  const base = description ?? '';
  let tag: string;
  if (typeof verdicts === 'string') tag = `gate ERROR (exit 2): ${verdicts.slice(0, 160)}`;
  else if (verdicts.length === 1) tag = verdictTag(verdicts[0]!);
  else {
    const bad = verdicts.filter((v) => v.code !== 0);
    tag = `gate ${VERDICT_WORD[combined]} (exit ${combined}): ${bad.length ? `${bad.length} of ${verdicts.length} columns ${bad.length === 1 ? 'fails' : 'fail'}; first '${bad[0]!.column}': ${verdictTag(bad[0]!).replace(/^gate \w+ \(exit \d\): /, '')}` : `all ${verdicts.length} columns pass`}`;
  }
  if (reportOnly) tag = tag.replace(/^gate (\w+) \(exit (\d)\)/, (_m, w: string, c: string) => `gate report only, would be ${w} (exit ${c})`);
  if (extra) tag += ` · ${extra}`;
  // no brackets inside the tag: withoutVerdictTag() finds its end
  return `[${tag.replace(/\[/g, '(').replace(/\]/g, ')')}]${base ? ` ${base}` : ''}`;
}

/**
 * A column's prompt label in `promptfoo view` (shown in its header under the chips) with its own verdict in front, and
 * `extra` inside the same brackets (a reranked column's gain, signed: src/results/summary.ts rerankGainText; a gain is
 * no named score, which the view would colour as a pass rate). `rankgate merge` drops the whole bracket.
 */
export function labelWithVerdict(label: string | undefined, v: ColumnVerdict, reportOnly = false, extra = ''): string {
  return describeWithVerdict(label, [v], v.code, reportOnly, extra);
}

/**
 * One paragraph in plain language: what the verdict means, why, and what follows for the pull request.
 */
export function verdictConclusion(v: ColumnVerdict, floors: Floors): string {
  const rows = floorRows(v);
  const reg = regressionView(v, floors);
  const queries = `${v.evaluated}${v.expected !== null && v.expected !== v.evaluated ? ` of ${v.expected}` : ''} queries`;
  if (v.code === 2) {
    const why = v.reasons[0] ?? 'the evidence is incomplete';
    return (
      `Nothing trustworthy was measured for '${v.column}', so the gate makes no quality judgement: ${why}. ` +
      `The numbers below come from ${v.measured !== undefined && v.measured < v.evaluated ? `the ${v.measured} measured of ${queries} (errored queries are left out of them)` : queries} and are not a quality result. Fix the cause and run the eval again; the gate exits 2 until then.`
    );
  }
  const failed = rows.filter((f) => f.status === 'fail');
  const regFailed = v.regression?.tests.filter((t) => t.failed) ?? [];
  const regText =
    reg.state === 'on'
      ? regFailed.length
        ? `Against the baseline ${reg.baseline} it dropped significantly: ${regFailed.map((t) => `${t.scope === 'overall' ? '' : `${t.scope} `}${metricName(t.metric)} from ${num(t.baseline)} to ${num(t.current)} (p ${t.p_adj < 0.001 ? t.p_adj.toExponential(1) : t.p_adj.toFixed(3)})`).join('; ')}.`
        : reg.unconfirmed
          ? `Against the baseline ${reg.baseline} ${v.regression!.tests
              .filter((t) => t.unconfirmed)
              .map((t) => `${t.scope === 'overall' ? '' : `${t.scope} `}${metricName(t.metric)} fell from ${num(t.baseline)} to ${num(t.current)}, more than max_drop (${unconfirmedText(t)})`)
              .join('; ')}: too few queries to confirm it, so it does not fail the gate; look at it before merging.`
          : `Against the baseline ${reg.baseline} no metric dropped by more than ${v.regression!.max_drop.toFixed(1)} points with significance (${v.regression!.shared} shared queries).`
      : reg.state === 'off'
        ? `The regression check did not run (no baseline at ${reg.baseline}), so a drop against the main branch would not have been caught.`
        : 'No regression check is configured, so only the floors were checked.';
  if (v.code === 0) {
    const met = rows.map((f) => `${f.scope === 'overall' ? '' : `${f.scope} `}${metricName(f.metric)} ${num(f.value)} (floor ${f.min})`).join(', ');
    return `The search meets every quality floor on ${queries}${met ? `: ${met}` : ''}. ${regText} The gate passes (exit 0): nothing in these results blocks the change.`;
  }
  const floorText = failed.length
    ? `The search is below ${failed.length} of ${rows.length} quality floor${rows.length === 1 ? '' : 's'} on ${queries}: ${failed.map(floorPhrase).join('; ')}.`
    : `The search meets its ${rows.length} quality floor${rows.length === 1 ? '' : 's'} on ${queries}.`;
  return `${floorText} ${regText} The gate fails (exit 1): the change is blocked until the quality is back above the floor, or the floor or baseline is changed on purpose.`;
}
