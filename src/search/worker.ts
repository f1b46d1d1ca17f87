/**
 * A search service in a worker thread of the same process: the SearchServiceLike the provider uses for
 * rankgate's own service and for `module:` services (unless `worker: false`).
 *
 * Why: promptfoo spends ~10 ms of its own thread's CPU per row (rendering, assertions, bookkeeping, its result
 * database), and PGlite's WebAssembly Postgres and the embedding model are CPU work too. In one thread the two
 * add up per query; with the search in its own thread they overlap whenever promptfoo runs more than one row at
 * a time (-j 2 and up), on a second core.
 *
 * The worker answers one request at a time and times it from the moment it starts (`serviceMs` on the search
 * response), so a query's latency never includes queueing behind the eval's other queries. The thread is
 * unref'd while idle: it never keeps a finished eval alive, and pending requests do.
 */
import type { Worker } from 'node:worker_threads';
import { startTsWorker, workerExecArgv } from '../util/worker.ts';
import { UserError } from '../errors.ts';
import type { CreateSearchServiceOptions } from './service.ts';
import type { SearchParams, SearchResponse, SearchServiceLike } from './types.ts';

/** What the worker builds. Both shapes must be structured-cloneable (no embedder objects, no db handles). */
export type WorkerServiceSpec =
  | {
      kind: 'rankgate';
      options: Pick<CreateSearchServiceOptions, 'databaseUrl' | 'dataDir' | 'routing' | 'autoIngest' | 'defaults'>;
      /** Fail the start (the service's own UserError) unless this index variant exists. */
      requireVariant?: { chunkSize: number; embedder: string };
    }
  | { kind: 'module'; path: string; label: string; config: Record<string, unknown> };

export type WorkerRequest =
  | { id: number; op: 'search'; query: string; params?: Partial<SearchParams>; timeoutMs?: number }
  | { id: number; op: 'resolvePassages'; substrings: string[]; variant: { chunkSize: number; embedder: string } }
  | { id: number; op: 'close' };

export type WorkerReply =
  | { id: number; ok: true; value: unknown; serviceMs?: number }
  | { id: number; ok: false; error: { name: string; message: string; code?: string } };

/** A request as the caller gives it (the id is added by call()). */
type Unsent<T> = T extends unknown ? Omit<T, 'id'> : never;

function rebuild(e: { name: string; message: string; code?: string }): Error {
  // a user's mistake stays one (one line, exit 2, no stack) across the thread boundary
  if (e.name === 'UserError') return new UserError(e.message);
  const err = new Error(e.message);
  err.name = e.name;
  if (e.code) (err as NodeJS.ErrnoException).code = e.code;
  return err;
}

/** The execArgv of a worker thread (kept here for existing importers; src/util/worker.ts). */
export { workerExecArgv };

export class WorkerSearchService implements SearchServiceLike {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (r: WorkerReply & { ok: true }) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private dead?: Error;
  private closed = false;

  private constructor(spec: WorkerServiceSpec, onReady: (err?: Error) => void) {
    // src/util/worker.ts: the thread registers the TypeScript loader itself and takes only the flags it needs.
    this.worker = startTsWorker(new URL('./worker-host.ts', import.meta.url), { spec });
    this.worker.unref();
    let started = false;
    this.worker.on('message', (m: WorkerReply) => {
      if (m.id === 0) {
        started = true;
        onReady(m.ok ? undefined : rebuild(m.error));
        return;
      }
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) this.worker.unref();
      if (m.ok) p.resolve(m);
      else p.reject(rebuild(m.error));
    });
    const fail = (err: Error) => {
      this.dead ??= err;
      if (!started) {
        started = true;
        onReady(err);
      }
      for (const p of this.pending.values()) p.reject(this.dead);
      this.pending.clear();
    };
    this.worker.on('error', (e) => fail(new Error(`search worker failed: ${e.message}`)));
    this.worker.on('exit', (code) => fail(new Error(this.closed ? 'search service closed' : `search worker exited (code ${code})`)));
  }

  /** Start the worker and build the service in it; rejects with the service's own error when it cannot be built. */
  static start(spec: WorkerServiceSpec): Promise<WorkerSearchService> {
    return new Promise((resolve, reject) => {
      const svc: WorkerSearchService = new WorkerSearchService(spec, (err) => {
        if (err) {
          void svc.worker.terminate();
          reject(err);
        } else resolve(svc);
      });
    });
  }

  private call(req: Unsent<WorkerRequest>): Promise<WorkerReply & { ok: true }> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ ...req, id });
    });
  }

  /**
   * The response carries serviceMs: the query's own time in the worker, excluding queueing. With `timeoutMs`, a
   * search that has not settled by then fails with "search timed out after N ms" and the worker moves on to the
   * next request, so one hung query cannot hold up the rest.
   */
  async search(query: string, params?: Partial<SearchParams>, options: { timeoutMs?: number } = {}): Promise<SearchResponse> {
    const r = await this.call({ op: 'search', query, ...(params ? { params } : {}), ...(options.timeoutMs && options.timeoutMs > 0 ? { timeoutMs: options.timeoutMs } : {}) });
    return { ...(r.value as SearchResponse), ...(r.serviceMs !== undefined ? { serviceMs: r.serviceMs } : {}) };
  }

  async resolvePassages(substrings: string[], variant: { chunkSize: number; embedder: string }): Promise<Map<string, string[]>> {
    const r = await this.call({ op: 'resolvePassages', substrings, variant });
    if (!(r.value instanceof Map)) throw new Error('the search service cannot resolve passages');
    return r.value as Map<string, string[]>;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      if (!this.dead) await this.call({ op: 'close' });
    } finally {
      this.closed = true;
      await this.worker.terminate();
    }
  }
}
