/**
 * Arguments of the benches that run the test suite (bench/test-times.ts, bench/test-cpu.ts):
 * `[--top N] [--FLAG VALUE ...] [-- RUN-TESTS ARGS...]`. Everything after `--` goes to scripts/run-tests.mjs unchanged.
 * An unknown argument or a bad --top is one line naming the usage, exit 2.
 */
export interface RunArgs {
  top: number;
  /** values of the bench's own flags (`--events FILE`), by name without the dashes */
  flags: Record<string, string | undefined>;
  /** the arguments after `--`, for scripts/run-tests.mjs */
  pass: string[];
}

export function parseRunArgs(argv: readonly string[], name: string, usage: string, defaultTop: number, flagNames: readonly string[] = []): RunArgs {
  const dashdash = argv.indexOf('--');
  const own = dashdash < 0 ? argv : argv.slice(0, dashdash);
  const pass = dashdash < 0 ? [] : argv.slice(dashdash + 1);
  let top = defaultTop;
  const flags: Record<string, string | undefined> = {};
  for (let i = 0; i < own.length; i++) {
    const a = own[i]!;
    if (a === '--top') top = Number(own[++i]);
    else if (flagNames.includes(a.replace(/^--/, '')) && a.startsWith('--')) flags[a.slice(2)] = own[++i];
    else {
      console.error(`${name}: unknown argument '${a}' (usage: ${usage})`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(top) || top < 1) {
    console.error(`${name}: --top expects a whole number >= 1`);
    process.exit(2);
  }
  return { top, flags, pass };
}
