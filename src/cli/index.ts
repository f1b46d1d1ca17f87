/**
 * The `rankgate` command: dispatches to one module per subcommand (src/cli/<name>.ts), each exporting
 * `run(argv: string[]): Promise<number>` (the exit code). User mistakes (UserError) print one clear
 * message and no stack trace.
 */
import { isUserError } from '../errors.ts';
import { didYouMean } from '../util/suggest.ts';

const COMMANDS: Record<string, { module: string; summary: string }> = {
  'trec-eval': { module: './trec-eval.ts', summary: 'trec_eval-compatible measures over a qrels file and a TREC run' },
  compare: { module: './compare.ts', summary: 'significance tests between runs (TREC runs or promptfoo results columns)' },
  golden: { module: './golden.ts', summary: 'validate | convert | stats | diff | bootstrap | check golden sets' },
  ingest: { module: './ingest.ts', summary: 'chunk, embed and index a corpus (one index variant per chunk size x embedder)' },
  search: { module: './search.ts', summary: 'run one query against the hybrid search service' },
  serve: { module: './serve.ts', summary: 'serve the search service over HTTP (/api/v1/search, /search/v1/{type})' },
  eval: { module: './eval.ts', summary: 'run the promptfoo eval and write the report (the portal DES-058 spec\'s format; npm run eval:search)' },
  init: { module: './init.ts', summary: 'start evaluating your own search: promptfoo config, gate floors and CI workflow for your golden set' },
  gate: { module: './gate.ts', summary: 'gate a promptfoo results JSON on the configured floors, compare with a baseline' },
  report: { module: './report.ts', summary: 'one self-contained HTML report of a results JSON (bars with CIs, sweep heatmaps, latency, significance)' },
};

function usage(): string {
  const lines = ['usage: rankgate <command> [options]', '', 'commands:'];
  for (const [name, c] of Object.entries(COMMANDS)) lines.push(`  ${name.padEnd(10)} ${c.summary}`);
  lines.push('', 'rankgate <command> --help for the options of one command.');
  return lines.join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    console.error(`rankgate: unknown command '${name}'${didYouMean(name, Object.keys(COMMANDS))}\n\n${usage()}`);
    return 2;
  }
  try {
    const mod = (await import(cmd.module)) as { run: (argv: string[]) => Promise<number> };
    return await mod.run(rest);
  } catch (e) {
    if (isUserError(e)) {
      console.error(`rankgate ${name}: ${e.message}`);
      return e.exitCode;
    }
    throw e;
  }
}
