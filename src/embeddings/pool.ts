/**
 * Embedding on every core: a pool of worker threads, each holding its own copy of an in-process model (USE-lite by
 * default; ~0.3 s and ~300 MB a thread to load). TF.js's WebAssembly backend cannot use threads of its own under
 * Node (its multithreaded build starts its helpers from blob: URLs, which Node's Worker refuses), so the parallelism
 * is ours: one model call (a batch of up to `batchSize` texts) at a time per thread, batches handed to whichever
 * thread is free, vectors returned in input order.
 *
 * Identity: a batch is embedded by the same function on the same texts as in one process (`embedTexts(batch,
 * batchSize)`), so the vectors are the same to the last bit whatever thread computed them (test/embeddings/pool.test.ts).
 * The caller keeps the batches the same as a one-process run: `embedDocuments` with at most `maxBatch` texts is one
 * model call, and `parallel` says how many such calls to have in flight (src/ingest/pipeline.ts embedWithCache).
 *
 * Fail closed: a batch that throws in its thread rejects with an EmbedWorkerError; a thread that dies (crash, out of
 * memory, exit) rejects its batch and every queued one, and the pool refuses all later calls. Idle threads are
 * unref'd, so a pool nobody closed never keeps a process alive; close() ends them.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { UserError } from '../errors.ts';
import { startTsWorker } from '../util/worker.ts';
import type { Embedder } from './types.ts';

/** A thread's failure: the batch it was embedding (or was queued) did not get its vectors. */
export class EmbedWorkerError extends Error {
  override name = 'EmbedWorkerError';
}

export interface EmbedPoolOptions {
  /** Threads (>= 2; one thread is the in-process embedder itself). */
  workers: number;
  id: string;
  dimension: number;
  /** Texts per model call (USE-lite: 64). */
  batchSize: number;
  /**
   * The module each thread loads (a file: URL or path of TypeScript or JavaScript): it exports
   * `embedTexts(texts: string[], batchSize: number): Promise<number[][]>` and optionally `load(): Promise<unknown>`,
   * called once when the thread starts. Default: src/embeddings/use-lite.ts.
   */
  module?: URL;
  family?: string;
  model?: string;
}

/** Message a pool thread answers with (src/embeddings/pool-worker.ts). */
export type PoolReply = { id: number; ok: true; vectors: number[][] } | { id: number; ok: false; error: string };

interface Job {
  id: number;
  texts: string[];
  resolve: (v: number[][]) => void;
  reject: (e: Error) => void;
}

interface Slot {
  index: number;
  worker: Worker;
  job?: Job;
}

/**
 * The thread count asked for: `RANKGATE_EMBED_WORKERS` (a positive integer, or `auto`), else the cores Node may use
 * (os.availableParallelism()). `flag` (a CLI option) wins over the environment. 1 embeds in this process, as before.
 */
export function embedWorkerCount(flag?: string, env: NodeJS.ProcessEnv = process.env): number {
  const raw = flag ?? env.RANKGATE_EMBED_WORKERS;
  if (raw === undefined || raw === '' || raw === 'auto') return availableParallelism();
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 256) {
    throw new UserError(`${flag !== undefined ? '--embed-workers' : 'RANKGATE_EMBED_WORKERS'}: expected a whole number of threads from 1 to 256, or auto, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

export class EmbedPool implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly maxBatch: number;
  readonly parallel: number;
  readonly family?: string;
  readonly model?: string;
  readonly endpoint = '';
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private readonly moduleUrl: URL;
  private nextId = 1;
  private dead?: Error;
  private closed = false;
  /** Texts embedded by the threads (for the benchmark and the tests). */
  embedded = 0;

  constructor(opts: EmbedPoolOptions) {
    if (!(Number.isInteger(opts.workers) && opts.workers >= 2)) throw new Error(`EmbedPool: workers must be an integer >= 2, got ${opts.workers}`);
    this.id = opts.id;
    this.dimension = opts.dimension;
    this.maxBatch = opts.batchSize;
    this.parallel = opts.workers;
    this.family = opts.family;
    this.model = opts.model;
    this.moduleUrl = opts.module ?? new URL('./use-lite.ts', import.meta.url);
  }

  /** Start the threads (each loads its model); the first embedDocuments call does it when this was not called. */
  private start(): void {
    if (this.slots.length) return;
    for (let i = 0; i < this.parallel; i++) {
      const worker = startTsWorker(new URL('./pool-worker.ts', import.meta.url), { module: this.moduleUrl.href, batchSize: this.maxBatch });
      worker.unref();
      const slot: Slot = { index: i + 1, worker };
      worker.on('message', (m: PoolReply) => this.settle(slot, m));
      worker.on('error', (e) => this.fail(slot, `failed: ${e.message}`));
      worker.on('exit', (code) => this.fail(slot, `exited (code ${code})`));
      this.slots.push(slot);
    }
  }

  private settle(slot: Slot, m: PoolReply): void {
    const job = slot.job;
    if (!job || job.id !== m.id) return;
    slot.job = undefined;
    if (m.ok) {
      this.embedded += job.texts.length;
      job.resolve(m.vectors);
    } else job.reject(new EmbedWorkerError(`embedding thread ${slot.index} of ${this.parallel}: ${m.error}`));
    this.pump();
  }

  private fail(slot: Slot, what: string): void {
    if (this.closed) return;
    const err = new EmbedWorkerError(`embedding thread ${slot.index} of ${this.parallel} ${what}`);
    this.dead ??= err;
    const lost = [...(slot.job ? [slot.job] : []), ...this.queue.splice(0)];
    slot.job = undefined;
    for (const j of lost) j.reject(err);
    // one thread gone: the pool is not trusted any more; the others stop too
    void this.terminate();
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (!slot.job && this.queue.length) {
        const job = this.queue.shift()!;
        slot.job = job;
        slot.worker.postMessage({ id: job.id, texts: job.texts });
      }
      // a thread with work keeps the process alive; an idle one does not
      if (slot.job) slot.worker.ref();
      else slot.worker.unref();
    }
  }

  private submit(texts: string[]): Promise<number[][]> {
    if (this.dead) return Promise.reject(this.dead);
    if (this.closed) return Promise.reject(new EmbedWorkerError('the embedding pool is closed'));
    this.start();
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, texts, resolve, reject });
      this.pump();
    });
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const parts: Promise<number[][]>[] = [];
    for (let i = 0; i < texts.length; i += this.maxBatch) parts.push(this.submit(texts.slice(i, i + this.maxBatch)));
    // every part settles (a dead pool rejects them all) before the first error is thrown
    const settled = await Promise.allSettled(parts);
    const bad = settled.find((s) => s.status === 'rejected');
    if (bad) throw (bad as PromiseRejectedResult).reason;
    const out = settled.flatMap((s) => (s as PromiseFulfilledResult<number[][]>).value);
    if (out.length !== texts.length) throw new EmbedWorkerError(`embedding pool: ${out.length} vectors for ${texts.length} texts`);
    return out;
  }

  async embedQuery(text: string): Promise<number[]> {
    return (await this.embedDocuments([text]))[0]!;
  }

  private async terminate(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.terminate().catch(() => 0)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const j of this.queue.splice(0)) j.reject(new EmbedWorkerError('the embedding pool was closed'));
    await this.terminate();
  }
}
