/**
 * The search worker thread: builds one search service (rankgate's own, or a team's `module:`) and serves
 * search / resolvePassages / close requests from the provider ONE AT A TIME, in arrival order, timing each
 * request from the moment it starts. So the reported serviceMs is the query's own time, never time spent
 * queueing behind other queries of a concurrent eval, and the search runs on its own core while promptfoo's
 * thread does its per-row work. Protocol: src/search/worker.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { SearchServiceLike } from './types.ts';
import type { WorkerReply, WorkerRequest, WorkerServiceSpec } from './worker.ts';
import { loadModuleService } from './module.ts';

const port = parentPort!;

function errorOf(e: unknown): { name: string; message: string; code?: string } {
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as NodeJS.ErrnoException).code;
  return { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
}

async function build(spec: WorkerServiceSpec): Promise<SearchServiceLike> {
  if (spec.kind === 'module') return loadModuleService(spec.path, spec.label, spec.config);
  const { createSearchService } = await import('./service.ts');
  const svc = await createSearchService(spec.options);
  if (spec.requireVariant) {
    try {
      await svc.variant(spec.requireVariant.chunkSize, spec.requireVariant.embedder);
    } catch (e) {
      await svc.close().catch(() => {});
      throw e;
    }
  }
  return svc;
}

function post(msg: WorkerReply): void {
  try {
    port.postMessage(msg);
  } catch (e) {
    // A module's result that cannot cross threads (a function, a socket...): say so for that request.
    port.postMessage({ id: msg.id, ok: false, error: { name: 'DataCloneError', message: `the search service returned a value that cannot be passed between threads (${(e as Error).message}); set worker: false in the provider config to run it in promptfoo's thread` } });
  }
}

/** A search that has not settled after `ms` fails, and the queue moves on (its late answer is dropped). */
function withTimeout<T>(p: Promise<T>, ms: number | undefined): Promise<T> {
  if (!ms) return p;
  let t: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, rej) => (t = setTimeout(() => rej(new Error(`search timed out after ${ms} ms`)), ms)))]).finally(() => clearTimeout(t));
}

let service: SearchServiceLike;
try {
  service = await build((workerData as { spec: WorkerServiceSpec }).spec);
  port.postMessage({ id: 0, ok: true, value: 'ready' } satisfies WorkerReply);
} catch (e) {
  port.postMessage({ id: 0, ok: false, error: errorOf(e) } satisfies WorkerReply);
  process.exit(1);
}

let queue: Promise<void> = Promise.resolve();
port.on('message', (req: WorkerRequest) => {
  queue = queue.then(async () => {
    const t0 = performance.now();
    try {
      if (req.op === 'search') {
        const value = await withTimeout(service.search(req.query, req.params), req.timeoutMs);
        post({ id: req.id, ok: true, value, serviceMs: performance.now() - t0 });
      } else if (req.op === 'resolvePassages') {
        const value = service.resolvePassages ? await service.resolvePassages(req.substrings, req.variant) : undefined;
        post({ id: req.id, ok: true, value });
      } else {
        await service.close();
        post({ id: req.id, ok: true, value: null });
        port.close();
      }
    } catch (e) {
      post({ id: req.id, ok: false, error: errorOf(e) });
    }
  });
});
