/**
 * `rankgate serve [--port 8080] [--host 127.0.0.1] [--db URL|DIR] [--chunk-size 300] [--embedder use-lite]
 *   [--mode hybrid] [--routing PATH] [--max-body 65536] [--max-concurrent 2] [--max-queue 16]
 *   [--max-queue-wait-ms 500] [--search-timeout-ms 30000]`
 * Serves rankgate's search service over HTTP (src/search/http.ts): POST /api/v1/search (portal shape with
 * practice_bridge and safety) and POST /search/v1/{semantic,keyword,hybrid}. Refuses to start (exit 2) when the
 * index variant it would serve does not exist, so it never reports healthy and then fails every search.
 * Sheds load with 503 + Retry-After on arrival once its bounded queue is full or the expected wait is over the
 * limit (never after a wait). Stops on SIGINT/SIGTERM.
 */
import { UserError } from '../errors.ts';
import { resolveEmbedderId } from '../embeddings/index.ts';
import { startSearchServer } from '../search/http.ts';
import { parseCliArgs, parseIntFlag, serviceDbOptions } from './args.ts';
import { searchParamsFromFlags } from './search.ts';

export const USAGE = `usage: rankgate serve [--port 8080] [--host 127.0.0.1] [options]

  --port N           TCP port (default 8080; 0 picks a free one)
  --host H           interface (default 127.0.0.1; 0.0.0.0 exposes it to the network)
  --db URL|DIR       postgres://... or a PGlite data directory (default: $DATABASE_URL, else .rankgate/db)
  --chunk-size N     index variant chunk size (default 300)
  --embedder ID      index variant embedder (default use-lite)
  --mode M           default mode for /api/v1/search: hybrid | keyword | semantic
  --routing PATH     routing YAML (default config/routing.yaml)
  --max-body BYTES   request body limit (default 65536)
  --max-concurrent N searches handed to the search thread at once (default 2; it runs one at a time)
  --max-queue N      requests that may wait for a search slot; more get 503 + Retry-After (default 16)
  --max-queue-wait-ms MS
                     longest expected wait for a search slot: a request expected to wait longer
                     ((queued + 1) x mean search time / slots) gets 503 + Retry-After on arrival;
                     one admitted is served, never shed after waiting (default 500)
  --search-timeout-ms MS
                     one search, from the moment it starts (default 30000; slower -> 504)

endpoints:
  POST /api/v1/search                        {query, language?, limit?, mode?}
       -> {query, language, results: [{chunk_id, document_id, content, score, rank, ...}], practice_bridge, safety, routing}
  POST /search/v1/{semantic|keyword|hybrid}  {query, limit?} -> {result: [{chunk_id, document_id, content, score, rank}]}
  GET  /health                               -> {status: "ok", running, queued, maxConcurrent, maxQueue}

Starts only when the index variant (--chunk-size x --embedder) exists: build it with rankgate ingest.`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      port: { type: 'string' },
      host: { type: 'string' },
      db: { type: 'string' },
      'chunk-size': { type: 'string' },
      embedder: { type: 'string' },
      mode: { type: 'string' },
      routing: { type: 'string' },
      'max-body': { type: 'string' },
      'max-concurrent': { type: 'string' },
      'max-queue': { type: 'string' },
      'max-queue-wait-ms': { type: 'string' },
      'search-timeout-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length) throw new UserError(`unexpected argument ${JSON.stringify(positionals[0])}\n\n${USAGE}`);
  const port = parseIntFlag('port', values.port as string | undefined, 0, 65535) ?? 8080;
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  const maxBodyBytes = parseIntFlag('max-body', values['max-body'] as string | undefined, 256, 64 * 1024 * 1024) ?? 64 * 1024;
  const maxConcurrent = parseIntFlag('max-concurrent', values['max-concurrent'], 1, 1024) ?? 2;
  const maxQueue = parseIntFlag('max-queue', values['max-queue'], 0, 100_000) ?? 16;
  const maxQueueWaitMs = parseIntFlag('max-queue-wait-ms', values['max-queue-wait-ms'], 1, 600_000) ?? 500;
  const searchTimeoutMs = parseIntFlag('search-timeout-ms', values['search-timeout-ms'], 1, 3_600_000) ?? 30_000;
  const defaults = searchParamsFromFlags({ 'chunk-size': values['chunk-size'], embedder: values.embedder, mode: values.mode });
  if (defaults.embedder !== undefined) {
    try {
      defaults.embedder = resolveEmbedderId(defaults.embedder);
    } catch (e) {
      throw new UserError(`--embedder: ${(e as Error).message}`);
    }
  }
  const routing = values.routing as string | undefined;
  if (routing !== undefined) (await import('../search/routing.ts')).loadRoutingConfig(routing);

  const { DEFAULT_SEARCH_PARAMS } = await import('../search/service.ts');
  const { WorkerSearchService } = await import('../search/worker.ts');
  // The search runs in a worker thread: PGlite and the embedding model are synchronous CPU work, and in this
  // thread they would stop the server from even reading new requests, so the queue below could never see them
  // (they waited unseen in socket buffers: 42 s at 128 clients). Here this thread only parses, queues and sheds.
  // The variant every search will use must exist now: never report healthy, then answer every search 400.
  const service = await WorkerSearchService.start({
    kind: 'rankgate',
    options: { ...serviceDbOptions(values.db as string | undefined), defaults, ...(routing ? { routing } : {}) },
    requireVariant: { chunkSize: defaults.chunkSize ?? DEFAULT_SEARCH_PARAMS.chunkSize, embedder: defaults.embedder ?? DEFAULT_SEARCH_PARAMS.embedder },
  });
  let srv;
  try {
    srv = await startSearchServer({ service, port, host, maxBodyBytes, defaults, maxConcurrent, maxQueue, maxQueueWaitMs, searchTimeoutMs });
  } catch (e) {
    await service.close();
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'EADDRINUSE') throw new UserError(`--port ${port}: already in use on ${host}`);
    if (err.code === 'EACCES') throw new UserError(`--port ${port}: permission denied on ${host}`);
    if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') throw new UserError(`--host ${host}: not an address of this machine`);
    throw e;
  }
  console.error(`rankgate serve: listening on ${srv.url} (POST /api/v1/search, POST /search/v1/{semantic,keyword,hybrid}); Ctrl-C stops`);
  await new Promise<void>((resolve) => {
    const stop = (sig: string) => {
      console.error(`rankgate serve: ${sig}, shutting down`);
      resolve();
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await srv.close();
  await service.close();
  return 0;
}
