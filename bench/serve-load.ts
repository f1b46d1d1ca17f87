/**
 * Load test of `rankgate serve` on loopback: throughput, p50/p95 latency of the requests it accepted, and how
 * many it accepted and shed (503 + Retry-After: its bounded queue was full) at 1, 8, 32, 64 and 128 concurrent
 * clients, for two kinds of client: `polite` ones that wait the Retry-After seconds after a 503, and `eager` ones
 * that retry at once, without any backoff (the worst case a server sees from naive clients). Prints figures;
 * asserts nothing about time (exit 1 only when a request failed: an error, a timeout, or any answer but 200 and a
 * shed 503).
 *
 *   node --import tsx bench/serve-load.ts [--requests 300] [--seconds 30] [--clients 1,8,32,64,128]
 *        [--kinds polite,eager] [--db DIR] [--simulate-ms MS]
 *        [--max-concurrent N] [--max-queue N] [--max-queue-wait-ms MS]   (passed to rankgate serve)
 *
 * - Index: a PGlite index of the demo corpus (datasets/corpus, c300, use-lite), built on first use into
 *   .rankgate/serve-load/db (about a minute) and reused afterwards; --db uses another data directory.
 * - Server: the real CLI, `node bin/rankgate.js serve --port 0 --host 127.0.0.1 --db DIR`, as a child process
 *   (so the load generator does not share its event loop), stopped with SIGTERM at the end.
 * - Load: POST /api/v1/search with the English golden queries (datasets/golden/golden-set-en.json) in a fixed
 *   rotation; each level stops after --requests requests or --seconds seconds, whichever comes first; a
 *   request is shed when it gets 503 {code: "overloaded"} with a Retry-After header (a polite client then waits
 *   the Retry-After seconds before its next request; an eager one sends it at once), failed when it errors, takes
 *   over 30 s, or answers anything else but 200 with a results array. --requests counts accepted ones.
 * - Latency: per accepted request, client-side wall time; nearest-rank percentiles. req/s counts accepted
 *   requests only (answers with results), so shedding never inflates it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'rankgate.js');

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '300' },
    seconds: { type: 'string', default: '30' },
    clients: { type: 'string', default: '1,8,32,64,128' },
    kinds: { type: 'string', default: 'polite,eager' },
    db: { type: 'string' },
    'max-concurrent': { type: 'string' },
    'max-queue': { type: 'string' },
    'max-queue-wait-ms': { type: 'string' },
    'simulate-ms': { type: 'string' },
    'sim-server': { type: 'boolean' },
  },
});

/**
 * --simulate-ms MS: instead of `rankgate serve` on PGlite, the same HTTP front (src/search/http.ts, serve's default
 * queue settings) over a search that takes MS of wall time and no CPU, one at a time like serve's search thread. It
 * measures the queueing and shedding policy apart from how much CPU a shared machine leaves the search.
 */
if (values['sim-server']) {
  const ms = Number(values['simulate-ms']);
  const { startSearchServer } = await import('../src/search/http.ts');
  let tail: Promise<unknown> = Promise.resolve();
  const service = {
    async search() {
      const mine = tail.then(() => new Promise((r) => setTimeout(r, ms)));
      tail = mine;
      await mine;
      return { hits: [], routing: { route: 'search' as const, safety: false, reasons: [] }, diagnostics: null as never, serviceMs: ms };
    },
    async close() {},
  };
  const num = (k: 'max-concurrent' | 'max-queue' | 'max-queue-wait-ms', d: number) => (values[k] !== undefined ? Number(values[k]) : d);
  const srv = await startSearchServer({ service, port: 0, host: '127.0.0.1', maxConcurrent: num('max-concurrent', 2), maxQueue: num('max-queue', 16), maxQueueWaitMs: num('max-queue-wait-ms', 500), log: () => {} });
  console.error(`simulated serve: listening on ${srv.url}`);
  await new Promise((r) => process.once('SIGTERM', r));
  await srv.close();
  process.exit(0);
}
const serveFlags = (['max-concurrent', 'max-queue', 'max-queue-wait-ms'] as const).flatMap((k) => (values[k] !== undefined ? [`--${k}`, values[k]!] : []));
const maxRequests = Number(values.requests);
const maxSeconds = Number(values.seconds);
const levels = values.clients!.split(',').map(Number);
const kinds = values.kinds!.split(',') as ('polite' | 'eager')[];
for (const k of kinds) if (k !== 'polite' && k !== 'eager') throw new Error(`--kinds: expected polite and/or eager, got '${k}'`);
const dataDir = values.db ?? join(ROOT, '.rankgate', 'serve-load', 'db');

function percentile(xs: number[], p: number): number {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1))] ?? NaN;
}

const simulate = values['simulate-ms'];
if (!simulate && !existsSync(join(dataDir, 'PG_VERSION'))) {
  console.error(`building the demo index in ${dataDir} (datasets/corpus, c300, use-lite; about a minute) ...`);
  const r = spawnSync(process.execPath, [BIN, 'ingest', '--db', dataDir, '--corpus', join(ROOT, 'datasets', 'corpus'), '--chunk-size', '300'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: undefined },
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const golden = JSON.parse(readFileSync(join(ROOT, 'datasets', 'golden', 'golden-set-en.json'), 'utf8')) as { query: string }[];
const queries = golden.map((g) => g.query);

const serverArgs = simulate
  ? ['--import', 'tsx', fileURLToPath(import.meta.url), '--sim-server', '--simulate-ms', simulate, ...serveFlags]
  : [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--db', dataDir, ...serveFlags];
const server = spawn(process.execPath, serverArgs, {
  cwd: ROOT,
  env: { ...process.env, DATABASE_URL: undefined, NO_COLOR: '1' },
  stdio: ['ignore', 'inherit', 'pipe'],
});
const stop = () => {
  if (server.exitCode === null) server.kill('SIGTERM');
};
process.on('exit', stop);
process.on('SIGINT', () => process.exit(130));

const url = await new Promise<string>((resolve, reject) => {
  let err = '';
  const t = setTimeout(() => reject(new Error(`rankgate serve did not start in 120 s:\n${err}`)), 120_000);
  server.stderr!.on('data', (d) => {
    err += d;
    const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(err);
    if (m) {
      clearTimeout(t);
      resolve(m[1]!);
    }
  });
  server.on('exit', (code) => reject(new Error(`rankgate serve exited (${code}):\n${err}`)));
});
server.stderr!.on('data', (d) => process.stderr.write(`[serve] ${d}`));

/** serverMs: what the server says it spent on an accepted request (x-rankgate-queue-ms + x-rankgate-search-ms). */
type Outcome = { kind: 'ok' | 'shed' | 'failed'; ms: number; why?: string; retryAfterS?: number; serverMs?: number };

async function one(query: string): Promise<Outcome> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${url}/api/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, limit: 10 }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await res.json()) as { results?: unknown; code?: string };
    const ms = performance.now() - t0;
    if (res.status === 503 && body.code === 'overloaded' && res.headers.get('retry-after')) return { kind: 'shed', ms, retryAfterS: Number(res.headers.get('retry-after')) };
    if (res.status !== 200 || !Array.isArray(body.results)) return { kind: 'failed', ms, why: `HTTP ${res.status} ${JSON.stringify(body).slice(0, 120)}` };
    return { kind: 'ok', ms, serverMs: Number(res.headers.get('x-rankgate-queue-ms')) + Number(res.headers.get('x-rankgate-search-ms')) };
  } catch (e) {
    return { kind: 'failed', ms: performance.now() - t0, why: (e as Error).message };
  }
}

// warm-up: model load, routing exemplars, first query plans
for (const q of queries.slice(0, 5)) {
  const r = await one(q);
  if (r.kind !== 'ok') throw new Error(`warm-up request failed: ${r.why ?? r.kind}`);
}

console.log(`rankgate serve load test: ${url} (loopback), ${simulate ? `simulated search of ${simulate} ms (no CPU), one at a time` : `PGlite ${dataDir}`}, ${queries.length} golden queries in rotation`);
console.log(`serve flags: ${serveFlags.join(' ') || '(defaults)'}; each level: at most ${maxRequests} accepted requests or ${maxSeconds} s`);
console.log('p50/p95/max over the accepted requests; shed = 503 + Retry-After (queue full); failed = anything else');
console.log('polite clients wait Retry-After after a 503; eager clients retry at once');
console.log('req/s counts accepted requests; "vs 1" is req/s over the same kind\'s 1-client req/s (when measured)');
console.log('srv p95 ms: p95 of the server\'s own queue + search time of accepted requests (its headers): the rest of p95 is');
console.log('the round trip through both processes\' event loops, which a loaded machine stretches\n');
console.log('kind    clients   requests   req/s    vs 1    p50 ms    p95 ms    max ms   accepted   shed   failed   shed p95 ms  srv p95 ms');
let totalFailed = 0;
const single: Record<string, number> = {};
for (const kind of kinds) for (const clients of levels) {
  let next = 0;
  const lat: number[] = [];
  const srvLat: number[] = [];
  const shedLat: number[] = [];
  const failures: string[] = [];
  const deadline = performance.now() + maxSeconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      // --requests counts accepted requests: an eager client's instant retries do not end the level early
      while (performance.now() < deadline && lat.length < maxRequests) {
        const i = next++;
        const r = await one(queries[i % queries.length]!);
        if (r.kind === 'ok') {
          lat.push(r.ms);
          srvLat.push(r.serverMs!);
        }
        else if (r.kind === 'shed') {
          shedLat.push(r.ms);
          // a polite client waits as told before its next request; an eager one does not
          if (kind === 'polite') await new Promise((res) => setTimeout(res, Math.max(0, r.retryAfterS ?? 1) * 1000));
        }
        else failures.push(r.why ?? 'failed');
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  totalFailed += failures.length;
  const n = lat.length + shedLat.length + failures.length;
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
  const rate = lat.length / secs;
  if (clients === 1) single[kind] = rate;
  const vs = single[kind] ? `${Math.round((100 * rate) / single[kind]!)}%` : '-';
  console.log(
    `${kind.padEnd(6)} ${String(clients).padStart(7)} ${String(n).padStart(10)} ${rate.toFixed(1).padStart(7)} ${vs.padStart(7)} ${f(percentile(lat, 50)).padStart(9)} ${f(percentile(lat, 95)).padStart(9)} ${f(
      lat.length ? Math.max(...lat) : NaN,
    ).padStart(9)} ${String(lat.length).padStart(10)} ${String(shedLat.length).padStart(6)} ${String(failures.length).padStart(8)} ${f(percentile(shedLat, 95)).padStart(13)} ${f(percentile(srvLat, 95)).padStart(11)}`,
  );
  for (const why of [...new Set(failures)].slice(0, 5)) console.log(`          failed: ${why}`);
}
stop();
await new Promise((r) => (server.exitCode === null ? server.once('exit', r) : r(null)));
console.log(`\nfailed requests: ${totalFailed}`);
process.exitCode = totalFailed ? 1 : 0;
