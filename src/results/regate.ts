/**
 * The eval's own record for re-gating (issue: a finished eval is never lost). promptfoo writes its --output AFTER
 * the afterAll hook (assertions/gate.ts); when that write fails (a 10k-row JSON beyond V8's longest string, a full
 * disk, an unwritable path), the hook has already written, beside it, `<output file name>.rankgate.jsonl`
 * (`results.jsonl` -> `results.jsonl.rankgate.jsonl`: the full name, so `-o full.json` and `-o full.jsonl` in one folder
 * keep one record each): a header line `{"rankgate_regate": {evalId, timestamp, output, outputs, code, verdict}}` and
 * one compact row per result (what src/results/read.ts needs to re-score it: golden, selection, ranking without content
 * beyond src/results/compact.ts, named scores, promptfoo's pass, the judge's verdict). `rankgate gate <that file>`
 * re-gates from it. A record under an older rankgate's name (`<stem>.rankgate.jsonl`) is still read for the results file
 * it belongs to: its header names that file and its run id is the rows' run id.
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

/** The record's name of one output: beside it, its full file name + `.rankgate.jsonl`; null for a record itself. */
export function recordPathOf(output: string): string | null {
  if (!output || /\.rankgate\.jsonl$/i.test(output)) return null;
  return join(dirname(output), basename(output) + '.rankgate.jsonl');
}

/** The name an older rankgate gave the record of `output` (`<stem>.rankgate.jsonl`, shared by `r.json` and `r.jsonl`). */
export function legacyRecordPathOf(output: string): string | null {
  if (!output || /\.rankgate\.jsonl$/i.test(output)) return null;
  return join(dirname(output), basename(output).replace(/\.[^.]+$/, '') + '.rankgate.jsonl');
}

/** Where the re-gate file of an eval's outputs goes: beside the first JSON/JSONL one (else the first), named after it. */
export function regatePathFor(outputs: readonly string[]): string | null {
  const out = outputs.find((p) => /\.jsonl?$/i.test(p)) ?? outputs[0];
  return out ? recordPathOf(out) : null;
}

/** The outputs a record's name may belong to (its own name's file, and the two an older rankgate's name served). */
export function outputsOfRecord(record: string): string[] {
  const m = /^(.*)\.rankgate\.jsonl$/i.exec(record);
  if (!m) return [];
  const stem = m[1]!;
  return /\.jsonl?$/i.test(stem) ? [stem] : [`${stem}.jsonl`, `${stem}.json`];
}

/** Does a record's header name `output` among the outputs of its eval? (no name at all: it does not say) */
function headerNames(h: RegateHeader, output: string): boolean {
  const names = [...(Array.isArray(h.outputs) ? h.outputs : []), ...(typeof h.output === 'string' ? [h.output] : [])].filter((x): x is string => typeof x === 'string');
  return !names.length || names.some((n) => basename(n) === basename(output));
}

function readHeader(p: string, output: string): RegateHeader | null {
  try {
    const age = statSync(output).mtimeMs - statSync(p).mtimeMs;
    if (age < -2000 || age > 120_000) return null;
    const lines = readLinesSync(p, 1 << 16);
    const first = lines.next().value;
    lines.return(undefined);
    const h = (JSON.parse(first ?? '') as Record<string, unknown>)[REGATE_KEY] as RegateHeader | undefined;
    return h && typeof h === 'object' && headerNames(h, output) ? h : null;
  } catch {
    return null;
  }
}

/**
 * The re-gate header the hook wrote beside promptfoo's output `output` in the same eval (its verdict, toolchain), and
 * where, or null: none, unreadable, naming another output, or written more than two minutes before the output (a
 * stale record of an earlier eval; the hook writes it just before promptfoo writes the output). The record under the
 * output's full name first; then an older rankgate's `<stem>.rankgate.jsonl`, only when its run id is one of `runs`
 * (the rows' run ids, when the caller knows them): a record the other output of that stem overwrote is not this file's.
 */
export function regateRecordBeside(output: string, runs?: readonly string[]): { header: RegateHeader; path: string } | null {
  const p = recordPathOf(output);
  const h = p ? readHeader(p, output) : null;
  if (h && p) return { header: h, path: p };
  const legacy = legacyRecordPathOf(output);
  const old = legacy ? readHeader(legacy, output) : null;
  if (!old || !legacy) return null;
  if (runs && runs.length && !(typeof old.runId === 'string' ? runs.includes(old.runId) : (old.merged?.runs ?? []).some((r) => runs.includes(r)))) return null;
  return { header: old, path: legacy };
}

/** The header of regateRecordBeside (callers that need no path). */
export function regateHeaderBeside(output: string): RegateHeader | null {
  return regateRecordBeside(output)?.header ?? null;
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
  const got = digestRows(resultRows(file));
  if (!header) {
    const beside = regateRecordBeside(file, got.runs);
    header = beside?.header ?? null;
    recordPath = beside?.path ?? recordPathOf(file);
  }
  return checkEvidence(file, got, header, recordPath);
}
