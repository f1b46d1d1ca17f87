/** Run a CLI entry point in-process with console.log / console.error captured: its exit code and what it printed. */
export async function capture(fn: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  const o = console.log;
  const e = console.error;
  let out = '';
  let err = '';
  console.log = (...a: unknown[]) => void (out += a.join(' ') + '\n');
  console.error = (...a: unknown[]) => void (err += a.join(' ') + '\n');
  try {
    return { code: await fn(), out, err };
  } finally {
    console.log = o;
    console.error = e;
  }
}

/**
 * A `rankgate NAME` subcommand's `run(argv)` in-process, as bin/rankgate.js runs it: a UserError becomes its one line
 * (`rankgate NAME: message`) on stderr and its exit code, as src/cli/index.ts prints it.
 */
export async function runCli(name: string, run: (argv: string[]) => Promise<number>, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const { isUserError } = await import('../../src/errors.ts');
  return capture(async () => {
    try {
      return await run(argv);
    } catch (e) {
      if (!isUserError(e)) throw e;
      console.error(`rankgate ${name}: ${e.message}`);
      return e.exitCode;
    }
  });
}
