/**
 * The eval's own record for re-gating (issue: a finished eval is never lost). promptfoo writes its --output AFTER
 * the afterAll hook (assertions/gate.ts); when that write fails (a 10k-row JSON beyond V8's longest string, a full
 * disk, an unwritable path), the hook has already written, beside it, `<output stem>.rankgate.jsonl`: a header line
 * `{"rankgate_regate": {evalId, timestamp, output, code, verdict}}` and one compact row per result (what
 * src/results/read.ts needs to re-score it: golden, selection, ranking without content beyond src/results/compact.ts,
 * named scores, promptfoo's pass, the judge's verdict). `rankgate gate <that file>` re-gates from it.
 */
import { statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { GoldenQuerySchema } from '../golden/schema.ts';
import { writeLinesAtomic } from '../util/atomic.ts';
import { readLinesSync } from '../util/lines.ts';
import { redactText } from '../util/redact.ts';
import { compactDiagnostics, compactHarness } from './compact.ts';
import { PROMPTFOO_WRITE_KEY } from './nowrite.ts';
import { REGATE_KEY, isJsonl, jsonlRows, resultRows, type RegateHeader } from './stream.ts';
import { RUN_KEY, checkEvidence, digestRows, recordSealText } from './record.ts';
import { sealKey, sealText } from '../util/seal.ts';
import type { HarnessMetadata, HarnessOutput } from './types.ts';

/** promptfoo's output paths from its command line (-o/--output, one or more) or the config's outputPath. */
export function outputPathsOf(argv: readonly string[], configOutput?: unknown): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--output=')) out.push(a.slice('--output='.length));
    else if (a === '-o' || a === '--output') for (let j = i + 1; j < argv.length && !argv[j]!.startsWith('-'); j++) out.push(argv[j]!);
  }
  if (!out.length) for (const p of Array.isArray(configOutput) ? configOutput : [configOutput]) if (typeof p === 'string' && p) out.push(p);
  return out;
}

/** Where the re-gate file of an output goes: beside it, `<stem>.rankgate.jsonl`; null when there is no output file. */
export function regatePathFor(outputs: readonly string[]): string | null {
  const out = outputs.find((p) => /\.jsonl?$/i.test(p)) ?? outputs[0];
  if (!out || /\.rankgate\.jsonl$/i.test(out)) return null;
  return join(dirname(out), basename(out).replace(/\.[^.]+$/, '') + '.rankgate.jsonl');
}

/**
 * The re-gate header the hook wrote beside promptfoo's output `output` in the same eval (its verdict, toolchain), or
 * null: none, unreadable, naming another output, or written more than two minutes before the output (a stale record
 * of an earlier eval; the hook writes it just before promptfoo writes the output).
 */
export function regateHeaderBeside(output: string): RegateHeader | null {
  const p = regatePathFor([output]);
  if (!p) return null;
  try {
    const age = statSync(output).mtimeMs - statSync(p).mtimeMs;
    if (age < -2000 || age > 120_000) return null;
    const lines = readLinesSync(p, 1 << 16);
    const first = lines.next().value;
    lines.return(undefined);
    const h = (JSON.parse(first ?? '') as Record<string, unknown>)[REGATE_KEY] as RegateHeader | undefined;
    return h && typeof h === 'object' && (typeof h.output !== 'string' || basename(h.output) === basename(output)) ? h : null;
  } catch {
    return null;
  }
}

interface Row {
  promptIdx?: number;
  testIdx?: number;
  provider?: { id?: string; label?: string };
  success?: boolean;
  latencyMs?: number;
  error?: string | null;
  namedScores?: Record<string, number>;
  testCase?: { description?: string; vars?: Record<string, unknown>; metadata?: Record<string, unknown> };
  vars?: Record<string, unknown>;
  response?: { output?: unknown; error?: string; metadata?: HarnessMetadata & Record<string, unknown> } | null;
  gradingResult?: { componentResults?: { pass?: boolean; reason?: string; assertion?: { value?: unknown } | null; metadata?: Record<string, unknown> }[] } | null;
}

/** The part of a result row re-gating needs (src/results/read.ts reads exactly these fields). */
export function compactRow(raw: unknown): Record<string, unknown> {
  const r = (raw ?? {}) as Row;
  const meta = r.response?.metadata;
  const tm = r.testCase?.metadata ?? {};
  const g = GoldenQuerySchema.safeParse(tm.golden);
  let response: Record<string, unknown> | undefined;
  if (r.response) {
    const h = meta?.harness as HarnessOutput | undefined;
    const m: Record<string, unknown> | undefined = meta
      ? {
          ...(h && Array.isArray(h.hits) ? { harness: compactHarness(h, g.success ? g.data : undefined, meta) } : {}),
          ...(meta.diagnostics !== undefined ? { diagnostics: h && Array.isArray(h.hits) && g.success ? compactDiagnostics(h, g.data, meta) : meta.diagnostics } : {}),
          ...(meta.resolution ? { resolution: meta.resolution } : {}),
          ...(meta.rankgate ? { rankgate: meta.rankgate } : {}),
          ...(meta.providerConfig ? { providerConfig: meta.providerConfig } : {}),
          ...(typeof (meta as Record<string, unknown>)[RUN_KEY] === 'string' ? { [RUN_KEY]: (meta as Record<string, unknown>)[RUN_KEY] } : {}),
          ...(meta[PROMPTFOO_WRITE_KEY] === false ? { [PROMPTFOO_WRITE_KEY]: false } : {}),
        }
      : undefined;
    response = {
      // the readable text is not needed to re-score: metadata.harness is the ranking (an older structured output stays)
      ...(h && Array.isArray(h.hits) ? { output: '' } : r.response.output !== undefined ? { output: r.response.output } : {}),
      ...(r.response.error ? { error: r.response.error } : {}),
      ...(m ? { metadata: m } : {}),
    };
  }
  const comps = (r.gradingResult?.componentResults ?? [])
    .filter((c) => typeof c?.metadata?.judge === 'string' || typeof c?.metadata?.answerJudge === 'string' || (typeof c?.assertion?.value === 'string' && /judge\.ts:(judged|answer)$/.test(c.assertion.value)))
    .map((c) => ({
      pass: c.pass,
      reason: c.reason,
      assertion: { value: c.assertion?.value },
      ...(typeof c.metadata?.judge === 'string' ? { metadata: { judge: c.metadata.judge } } : typeof c.metadata?.answerJudge === 'string' ? { metadata: { answerJudge: c.metadata.answerJudge } } : {}),
    }));
  return {
    promptIdx: r.promptIdx,
    testIdx: r.testIdx,
    provider: r.provider ? { id: r.provider.id, label: r.provider.label } : undefined,
    success: r.success,
    latencyMs: r.latencyMs,
    error: r.error ?? null,
    namedScores: r.namedScores,
    testCase: {
      ...(r.testCase?.description ? { description: r.testCase.description } : {}),
      ...(!g.success ? { vars: { ...(r.testCase?.vars ?? {}), ...(r.vars ?? {}) } } : {}),
      metadata: { ...(tm.id !== undefined ? { id: tm.id } : {}), ...(tm.golden !== undefined ? { golden: tm.golden } : {}), ...(tm.selection !== undefined ? { selection: tm.selection } : {}) },
    },
    ...(response ? { response } : {}),
    ...(comps.length ? { gradingResult: { componentResults: comps } } : {}),
  };
}

/** Write the re-gate file atomically: the header, then one compact row a line. */
export function writeRegateFile(path: string, header: RegateHeader, rows: Iterable<unknown>): void {
  // keyed when the CI's RANKGATE_SEAL_KEY is set (src/util/seal.ts): the gate then knows an eval that held it wrote this
  const key = sealKey();
  if (key && typeof header.digest === 'string') header = { ...header, seal: sealText('record', recordSealText(header), key) };
  writeLinesAtomic(
    path,
    (function* () {
      yield redactText(JSON.stringify({ [REGATE_KEY]: header }));
      for (const r of rows) yield redactText(JSON.stringify(compactRow(r)));
    })(),
  );
}

/**
 * The rows of a results file against the eval's record (src/results/record.ts checkEvidence): the record is the file's
 * own header (a re-gate file) or the one beside it. `problem` is exit 2; `loud` is said at the top of the verdict.
 */
export function verifyEvidence(file: string): { problem: string | null; loud: string | null } {
  let header: RegateHeader | null = null;
  let recordPath: string | null = null;
  if (isJsonl(file)) {
    for (const { row, line } of jsonlRows(file)) {
      if (line === 1 && REGATE_KEY in row) {
        header = row[REGATE_KEY] as RegateHeader;
        recordPath = `${file} (its header)`;
      }
      break;
    }
  }
  if (!header) {
    header = regateHeaderBeside(file);
    recordPath = regatePathFor([file]);
  }
  return checkEvidence(file, digestRows(resultRows(file)), header, recordPath);
}
