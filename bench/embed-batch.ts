/**
 * Batching against one text per request: chunks/s of rankgate's HTTP embedder (src/embeddings/remote.ts) through
 * the fake OpenAI-compatible API on 127.0.0.1 (test/helpers/fake-embedding-apis.ts, BAAI/bge-m3, 1024-d), on N
 * synthetic ~200-token chunks (default 10,000), both ways with the same client, retries and concurrency:
 *
 *   batched          the vendor's limits (OpenAI: <= 2,048 inputs and 3/4 of 300,000 tokens a request)
 *   one per request  maxBatch 1 (what promptfoo's own embedding providers do)
 *
 *   node --import tsx bench/embed-batch.ts [--chunks 10000] [--latency-ms 0] [--concurrency 2]
 *
 * --latency-ms adds a fixed wait to every answer (a network round trip; a real API adds 100-300 ms). The fake runs in
 * this process, so its own work (hashing every word, writing JSON) is counted too: read the figures as the cost of
 * the client and the protocol, not of any model.
 */
import { parseArgs } from 'node:util';
import { createEmbedder } from '../src/embeddings/index.ts';
import type { HttpEmbedder } from '../src/embeddings/remote.ts';
import { fakeEnv, startFakeEmbeddingApi } from '../test/helpers/fake-embedding-apis.ts';

const { values } = parseArgs({ options: { chunks: { type: 'string' }, 'latency-ms': { type: 'string' }, concurrency: { type: 'string' } } });
const N = Number(values.chunks ?? 10_000);
const latency = Number(values['latency-ms'] ?? 0);
const concurrency = Number(values.concurrency ?? 2);

const WORDS = 'still water lake heron surface wind moon reflection calm mind breath morning shallows waits rises breaks pieces restless comes goes asking'.split(' ');
let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const chunks = Array.from({ length: N }, (_, i) => `chunk ${i}: ` + Array.from({ length: 150 }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ') + '.');

const fake = await startFakeEmbeddingApi('openai');
const rows: string[] = [];
try {
  for (const [mode, maxBatch] of [['batched', undefined], ['one per request', 1]] as const) {
    fake.clear();
    if (latency) fake.enqueue(...Array.from({ length: N + 10 }, () => ({ delayMs: latency })));
    const e = (await createEmbedder('openai:embedding:BAAI/bge-m3', { env: fakeEnv(fake), concurrency, ...(maxBatch ? { batchSize: maxBatch } : {}) })) as HttpEmbedder;
    const t0 = performance.now();
    const out = await e.embedDocuments(chunks);
    const s = (performance.now() - t0) / 1000;
    if (out.length !== N || out.some((v) => v.length !== 1024)) throw new Error(`${mode}: ${out.length} vectors`);
    const sizes = fake.requests.map((r) => r.texts.length);
    rows.push(
      `${mode.padEnd(16)} ${String(N).padStart(6)} chunks  ${String(e.stats.requests).padStart(6)} requests (${Math.min(...sizes)}-${Math.max(...sizes)} texts each)  ` +
        `${s.toFixed(1).padStart(6)} s  ${(N / s).toFixed(0).padStart(6)} chunks/s`,
    );
    console.log(rows.at(-1));
  }
} finally {
  await fake.close();
}
console.log(`\nfake OpenAI-compatible API on 127.0.0.1, BAAI/bge-m3 1024-d, ~${Math.round(chunks.reduce((a, c) => a + c.length, 0) / N)} characters a chunk, ` +
  `latency ${latency} ms an answer, ${concurrency} requests in flight; node ${process.version}`);
