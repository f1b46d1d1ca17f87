/**
 * The `rankgate` command: dispatches to one module per subcommand (src/cli/<name>.ts), each exporting
 * `run(argv: string[]): Promise<number>` (the exit code). User mistakes (UserError) print one clear
 * message and no stack trace.
 */
import { isUserError } from '../errors.ts';
import { describeFault, faultCauseAt, fullDisks, openDataDirs } from '../db/faults.ts';
import { didYouMean } from '../util/suggest.ts';
import { tuneWasmTiering } from '../util/wasm-tiering.ts';
import { redactStandardStreams } from '../util/redact.ts';
import { envFlag } from '../util/env.ts';
import { safeTerminalLines } from '../util/terminal.ts';

/** RANKGATE_DEBUG on: an unexpected error also prints its stack (a value that is neither on nor off counts as on here:
 *  this runs while reporting another error, and only adds detail). */
const debugOn = (): boolean => {
  try {
    return envFlag('RANKGATE_DEBUG');
  } catch {
    return true;
  }
};

const COMMANDS: Record<string, { module: string; summary: string }> = {
  'trec-eval': { module: './trec-eval.ts', summary: 'trec_eval-compatible measures over a qrels file and a TREC run' },
  compare: { module: './compare.ts', summary: 'significance tests between runs (TREC runs or promptfoo results columns)' },
  golden: { module: './golden.ts', summary: 'validate | convert | stats | diff | bootstrap (known items, or --from-feedback logs) | check golden sets' },
  ingest: { module: './ingest.ts', summary: 'chunk, embed and index a corpus (one index variant per chunk size x embedder)' },
  'embed-cache': { module: './embed-cache.ts', summary: 'build | merge | import | export the embedding cache as files (embed a large corpus 1/N per machine)' },
  search: { module: './search.ts', summary: 'run one query against the hybrid search service' },
  serve: { module: './serve.ts', summary: 'serve the search service over HTTP (/api/v1/search, /search/v1/{type})' },
  eval: { module: './eval.ts', summary: 'run the promptfoo eval and write the report (the portal DES-058 spec\'s format; npm run eval:search)' },
  init: { module: './init.ts', summary: 'start evaluating your own search: promptfoo config, gate floors and CI workflow for your golden set' },
  merge: { module: './merge.ts', summary: 'merge the results files of the shards of one eval into one (exact: every metric as one process)' },
  gate: { module: './gate.ts', summary: 'gate a promptfoo results JSON on the configured floors, compare with a baseline' },
  judge: { module: './judge.ts', summary: 'agreement: how far to trust the judge (kappa with a 95% CI) | pool: label every column\'s unlabelled top results once each | review export/import: the review queue for people' },
  review: { module: './review.ts', summary: 'export | import the blind human review of two columns (criterion 4 of the shipping criteria)' },
  report: { module: './report.ts', summary: 'one self-contained HTML report of a results JSON (bars with CIs, sweep heatmaps, latency, significance); --history: the trend page' },
  history: { module: './history.ts', summary: 'quality over time: the baseline\'s git history and the scheduled runs, the drift alarm, the trend page | append (the scheduled run)' },
};

function usage(): string {
  const lines = ['usage: rankgate <command> [options]', '', 'commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(10)} ${c.summary}`);
  lines.push('', 'rankgate <command> --help for the options of one command; rankgate --version (-v) for the version.');
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    // package.json's version (src/version.ts: the same from src/ and the compiled dist/)
    const { RANKGATE_VERSION } = await import('../version.ts');
    console.log(RANKGATE_VERSION);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    console.error(`rankgate: unknown command '${name}'${didYouMean(name, Object.keys(COMMANDS))}\n\n${usage()}`);
    return 2;
  }
  // no secret (a DATABASE_URL password, a configured key) in any line a command prints (src/util/redact.ts)
  const unredact = redactStandardStreams();
  let finished = false;
  const fatal = (line: string) => {
    if (finished) return;
    finished = true;
    console.error(`rankgate ${name}: ${line}`);
    process.exit(2);
  };
  // Failures that escape every promise: an uncaught exception from inside a native/WASM callback (PGlite's PANIC
  // on a full disk, an embedding model's abort) and an event loop that empties while the command still waits
  // (PGlite aborted and its query can never settle: Node would exit 13 without a word). One line, exit 2.
  const onUncaught = (e: unknown) => fatal(explain(e));
  const onBeforeExit = () => fatal(explainStall());
  process.prependListener('uncaughtException', onUncaught);
  process.prependListener('unhandledRejection', onUncaught);
  process.on('beforeExit', onBeforeExit);
  // A command that lives seconds skips most of V8's optimising re-compiles of PGlite's and the embedder's WebAssembly;
  // `serve` answers queries for as long as it runs and keeps V8's default (src/util/wasm-tiering.ts).
  try {
    if (name !== 'serve') tuneWasmTiering();
    const mod = (await import(cmd.module)) as { run: (argv: string[]) => Promise<number> };
    return await mod.run(rest);
  } catch (e) {
    if (isUserError(e)) {
      console.error(`rankgate ${name}: ${safeTerminalLines(e.message)}`);
      return e.exitCode;
    }
    console.error(`rankgate ${name}: ${explain(e)}`);
    if (debugOn() && e instanceof Error) console.error(e.stack);
    return 2;
  } finally {
    finished = true;
    unredact();
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
    process.off('beforeExit', onBeforeExit);
  }
}

/** One line for an error that is not a UserError: a damaged/full disk in plain words, else the first line. */
export function explain(e: unknown): string {
  for (const dir of openDataDirs()) {
    if (faultCauseAt(e, dir)) return describeFault(e, { path: dir });
  }
  const full = fullDisks()[0];
  if (full) return describeFault(e, { path: full.dir });
  if (faultCauseAt(e, undefined)) return describeFault(e, {});
  const msg = e instanceof Error ? e.message : String(e);
  return `unexpected error: ${msg.split('\n')[0]} (set RANKGATE_DEBUG=1 to see where)`;
}

function explainStall(): string {
  const full = fullDisks()[0];
  if (full) {
    return `${full.dir}: disk full: ${(full.free / 1048576).toFixed(1)} MB left on the file system holding it and the embedded database stopped; nothing of the interrupted command was committed; free some space and run it again`;
  }
  const dir = openDataDirs()[0];
  if (dir) {
    return `${dir}: the embedded database (PGlite) stopped answering (it aborted); nothing of the interrupted command was committed; if this repeats, a file in that directory may be damaged: restore it from a copy or rebuild it with rankgate ingest into a new directory`;
  }
  return 'stopped waiting for an operation that can never finish (an internal error; set RANKGATE_DEBUG=1 and report it)';
}
