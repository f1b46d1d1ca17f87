/**
 * One thread of the embedding pool (src/embeddings/pool.ts): loads the model module once, then embeds one batch at a
 * time, in arrival order, answering `{id, ok, vectors}` or `{id, ok: false, error}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { PoolReply } from './pool.ts';

interface ModelModule {
  embedTexts(texts: string[], batchSize: number): Promise<number[][]>;
  load?(): Promise<unknown>;
}

const port = parentPort!;
const { module, batchSize } = workerData as { module: string; batchSize: number };
const mod = (await import(module)) as ModelModule;
await mod.load?.();

let queue: Promise<void> = Promise.resolve();
port.on('message', (req: { id: number; texts: string[] }) => {
  queue = queue.then(async () => {
    let reply: PoolReply;
    try {
      reply = { id: req.id, ok: true, vectors: await mod.embedTexts(req.texts, batchSize) };
    } catch (e) {
      reply = { id: req.id, ok: false, error: e instanceof Error ? e.message : String(e) };
    }
    port.postMessage(reply);
  });
});
