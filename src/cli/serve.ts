/**
 * `rankgate serve [--port 8080] [--host 127.0.0.1] [--db URL|DIR] [--chunk-size 300] [--embedder use-lite]
 *   [--mode hybrid] [--routing PATH] [--max-body 65536]`
 * Serves rankgate's search service over HTTP (src/search/http.ts): POST /api/v1/search (portal shape with
 * practice_bridge and safety) and POST /search/v1/{semantic,keyword,hybrid}. Stops on SIGINT/SIGTERM.
 */
import { UserError } from '../errors.ts';
import { startSearchServer } from '../search/http.ts';
import { parseIntFlag, serviceDbOptions, strictParse } from './ingest.ts';
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

endpoints:
  POST /api/v1/search                        {query, language?, limit?, mode?}
       -> {query, language, results: [{chunk_id, document_id, content, score, rank, ...}], practice_bridge, safety, routing}
  POST /search/v1/{semantic|keyword|hybrid}  {query, limit?} -> {result: [{chunk_id, document_id, content, score, rank}]}
  GET  /health                               -> {status: "ok"}`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = strictParse(
    {
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        db: { type: 'string' },
        'chunk-size': { type: 'string' },
        embedder: { type: 'string' },
        mode: { type: 'string' },
        routing: { type: 'string' },
        'max-body': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    } as const,
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
  const defaults = searchParamsFromFlags({ 'chunk-size': values['chunk-size'], embedder: values.embedder, mode: values.mode });
  const routing = values.routing as string | undefined;
  if (routing !== undefined) (await import('../search/routing.ts')).loadRoutingConfig(routing);

  const { createSearchService } = await import('../search/service.ts');
  const service = await createSearchService({ ...serviceDbOptions(values.db as string | undefined), defaults, ...(routing ? { routing } : {}) });
  let srv;
  try {
    srv = await startSearchServer({ service, port, host, maxBodyBytes, defaults });
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
