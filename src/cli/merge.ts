/**
 * rankgate merge OUT.jsonl SHARD.jsonl... [--quiet]   (or OUT.json SHARD.json...: JSONL shards merge to JSONL)
 *
 * Merges the promptfoo results files of the shards of one eval (RANKGATE_SHARD=i/N, or --filter-range) into one
 * promptfoo results file equal to a single-process run's (src/results/merge.ts): `rankgate gate`, `rankgate report`
 * and `rankgate compare --results` then run on it unchanged, and `promptfoo import OUT.json` shows it in the viewer.
 * Written atomically. Exit 0 when merged, 2 when the shards cannot be merged (one line saying why).
 */
import { resolve } from 'node:path';
import { UserError } from '../errors.ts';
import { mergeResultFiles } from '../results/merge.ts';
import { REGATE_KEY, isJsonl, resultRows, type RegateHeader } from '../results/stream.ts';
import { outputsOfRecord, regatePathFor, verifyEvidence } from '../results/regate.ts';
import { digestRows } from '../results/record.ts';
import { writeFileAtomic, writeLinesAtomic } from '../util/atomic.ts';
import { redactText } from '../util/redact.ts';
import { parseCliArgs } from './args.ts';
import { safeTerminal } from '../util/terminal.ts';

const USAGE = 'usage: rankgate merge OUT.jsonl SHARD.jsonl [SHARD.jsonl...] [--quiet]   (JSON shards: OUT.json SHARD.json...)';

export async function run(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseCliArgs(argv, { quiet: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } }, USAGE);
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length < 2) throw new UserError(`expected OUT.json and at least one shard results file, got ${positionals.length} file(s)\n${USAGE}`);
  const [out, ...given] = positionals as [string, ...string[]];
  // A shard's re-gate record (<output>.rankgate.jsonl, or an older rankgate's <stem>.rankgate.jsonl; assertions/gate.ts)
  // beside its output, as a glob picks it up: the output is used. A record alone (the shard's output was lost) is
  // merged from its compact rows.
  const named = new Set(given.map((f) => resolve(f)));
  const shards = given.filter((f) => !outputsOfRecord(f).some((o) => named.has(resolve(o))));
  if (shards.includes(out)) throw new UserError(`${out}: is both the output and a shard; write the merged results to a new file`);
  const t0 = performance.now();
  const { doc, summary, format } = mergeResultFiles(shards);
  // each shard's rows against its own eval's record (src/results/record.ts): a shard of picked or edited rows is refused
  const runs = new Set<string>();
  const unrecorded: string[] = [];
  for (const f of shards) {
    const ev = verifyEvidence(f);
    if (ev.problem) throw new UserError(ev.problem);
    if (ev.loud) unrecorded.push(f);
    for (const r of digestRows(resultRows(f)).runs) runs.add(r);
  }
  if (format === 'jsonl') {
    if (!isJsonl(out)) throw new UserError(`${out}: the shards are JSONL: name the merged file .jsonl (rows only, as promptfoo's --output results.jsonl)`);
    writeLinesAtomic(out, (function* () {
      for (const r of doc.results.results) yield redactText(JSON.stringify(r));
    })());
  } else {
  let text: string;
  try {
    text = JSON.stringify(doc, null, 2) + '\n';
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    // V8 holds strings up to ~0.5 GB: promptfoo's own --output has the same limit for one run of this size.
    throw new UserError(
      `${out}: ${summary.rows} rows are too large for one JSON results file (${(e as Error).message}); ` +
        'make the rows smaller (a smaller topK or shorter hit content in the provider output) or gate the shards in groups',
    );
  }
  writeFileAtomic(out, redactText(text));
  }
  // merge's own record beside the merged rows: they legitimately come from several runs (the gate trusts exactly these)
  const record = regatePathFor([out]);
  if (record) {
    const d = digestRows(resultRows(out));
    const header: RegateHeader = { timestamp: new Date().toISOString(), output: out, rows: d.rows, digest: d.digest, merged: { runs: [...runs].sort(), unrecorded } };
    writeLinesAtomic(record, [JSON.stringify({ [REGATE_KEY]: header })]);
  }
  if (!v.quiet) {
    const parts = summary.shards.map((s) => `${s.shard ? `${s.shard.index}/${s.shard.count}` : 'full'} ${s.queries} queries`).join(', ');
    console.log(safeTerminal(
      `${out}: ${summary.selection.size} queries x ${summary.columns} column${summary.columns === 1 ? '' : 's'} (${summary.rows} rows) of selection ${summary.selection.id} ` +
        `merged from ${summary.shards.length} file${summary.shards.length === 1 ? '' : 's'} (${parts}) in ${Math.round(performance.now() - t0)} ms`,
    ));
  }
  return 0;
}
