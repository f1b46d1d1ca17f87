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
