/**
 * Worker threads that run rankgate's TypeScript: the search worker (src/search/worker.ts) and the embedding pool
 * (src/embeddings/pool.ts). A thread starts without the TypeScript loader its parent may have registered, so every
 * thread starts from worker-boot.mjs, which registers tsx and then imports the entry module given here.
 */
import { Worker } from 'node:worker_threads';

/** Parent flags a worker thread may take and that matter to it: heap size, source maps, silenced warnings. */
const WORKER_FLAGS = /^--(max-old-space-size|max-semi-space-size|enable-source-maps|disable-warning|no-warnings|no-deprecation|trace-warnings|conditions)(=|$)/;

/** The execArgv of a worker thread: the allowed flags of the parent's, each with its value when given apart. */
export function workerExecArgv(parent: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const a = parent[i]!;
    if (!WORKER_FLAGS.test(a)) continue;
    out.push(a);
    // `--disable-warning X` / `--conditions X`: the value is the next argument
    if (!a.includes('=') && /^--(disable-warning|conditions|max-old-space-size|max-semi-space-size)$/.test(a) && parent[i + 1] !== undefined) out.push(parent[++i]!);
  }
  return out;
}

/**
 * Start a worker thread running the TypeScript module `entry` (a `new URL('./x.ts', import.meta.url)` at the caller, so
 * the build's .ts -> .js rewrite applies). `data` is the thread's workerData (structured-cloneable), plus `entry`.
 * Only the flags the thread needs are passed, never the parent's whole execArgv: a Worker refuses process-wide flags
 * (Node 24 under its test runner passes --stack-trace-limit, --v8-pool-size, …: ERR_WORKER_INVALID_EXEC_ARGV).
 */
export function startTsWorker(entry: URL, data: Record<string, unknown> = {}): Worker {
  return new Worker(new URL('./worker-boot.mjs', import.meta.url), { workerData: { ...data, entry: entry.href }, execArgv: workerExecArgv(process.execArgv) });
}
