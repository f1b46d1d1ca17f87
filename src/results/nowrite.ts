/**
 * promptfoo's `--no-write` across its releases (issue 29), detected, not assumed:
 *
 *   - promptfoo 0.121.x keeps NO result rows under --no-write: its output holds the column sums only (the gate then
 *     works from the sums, src/results/summary.ts), and such a file can never be a baseline (no rows);
 *   - promptfoo 0.123.x keeps every row under --no-write: the output looks like a kept run's (same keys, same
 *     results.version), only its row order differs. A run promptfoo did not keep must still never become a baseline.
 *
 * So the run says it itself: rankgate's provider (providers/search.ts) puts `promptfooWrite: false` in every row's
 * response metadata when promptfoo runs with --no-write, and the afterAll hook (assertions/gate.ts) `written: false` in
 * its re-gate record's header (it also sees the config's commandLineOptions.write, which promptfoo's JSON output keeps
 * in config.commandLineOptions). `rankgate gate --update-baseline` refuses such a run (noWriteRefusal), and, failing
 * closed, a run with rows from a promptfoo that keeps rows under --no-write when the rows do not come from rankgate's
 * provider (which would have marked them).
 */
import { parseVersion } from '../util/toolchain.ts';
import type { Column } from './read.ts';
import { PROMPTFOO_WRITE_KEY } from './types.ts';

/** Response-metadata key rankgate's provider sets to false on every row of a `promptfoo eval --no-write` run. */
export { PROMPTFOO_WRITE_KEY };

/** promptfoo's command line asks not to keep the eval (`--no-write`, before a `--` that ends the options). */
export function noWriteInArgv(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--no-write') return true;
  }
  return false;
}

/** Does promptfoo keep this eval (its database, `promptfoo view`)? No with --no-write or a config's commandLineOptions.write: false. */
export function promptfooWrites(argv: readonly string[], commandLineOptions?: unknown): boolean {
  if (noWriteInArgv(argv)) return false;
  return !(commandLineOptions && typeof commandLineOptions === 'object' && (commandLineOptions as { write?: unknown }).write === false);
}

/**
 * Does this promptfoo release keep result rows under --no-write? false for 0.121.x and older (verified 0.121.20), true
 * from 0.123 (verified 0.123.1); null when unknown (0.122.x, not verified; or no version): callers then fail closed.
 */
export function rowsUnderNoWrite(version: string | null | undefined): boolean | null {
  const v = parseVersion(version ?? '');
  if (!v) return null;
  const [maj, min] = v.n;
  if (maj > 0 || min >= 123) return true;
  if (min <= 121) return false;
  return null;
}

/** What a results file says about whether promptfoo kept the run (besides its column's rows). */
export interface RunRecord {
  /** The promptfoo that wrote the results (its JSON output's metadata, or the hook's record beside a JSONL output). */
  promptfooVersion?: string | null;
  /** config.commandLineOptions of promptfoo's JSON output. */
  commandLineOptions?: unknown;
  /** The afterAll hook's re-gate header (src/results/regate.ts): the file itself, or the record beside the output. */
  regate?: { written?: boolean } | undefined;
}

/**
 * Why this column's run cannot become a baseline because promptfoo did not keep it (or cannot be shown to have),
 * null when nothing says so. A column without rows (promptfoo 0.121's --no-write) is refused elsewhere (no rows).
 */
export function noWriteRefusal(col: Column, run: RunRecord): string | null {
  const nw = 'a `promptfoo eval --no-write` run';
  if (col.written === false) return `${nw} (its rows say so: promptfoo kept no record of it)`;
  if (run.regate?.written === false) return `${nw} (the afterAll hook's record says so: promptfoo kept no record of it)`;
  if (!promptfooWrites([], run.commandLineOptions)) return `${nw} (the config sets commandLineOptions.write: false: promptfoo kept no record of it)`;
  if (col.queries.length > 0 && col.written == null && rowsUnderNoWrite(run.promptfooVersion) !== false && run.promptfooVersion)
    return `cannot tell whether promptfoo ${run.promptfooVersion} kept this run: it keeps the rows of a --no-write run too, and these rows do not come from rankgate's provider (which marks such runs)`;
  return null;
}
