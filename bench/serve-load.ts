/**
 * Load test of `rankgate serve` on loopback: throughput, p50/p95 latency and failed requests at 1, 8 and 32
 * concurrent clients. Prints figures; asserts nothing about time (exit 1 only when a request failed).
 *
 *   node --import tsx bench/serve-load.ts [--requests 150] [--seconds 45] [--clients 1,8,32] [--db DIR]
 *
 * - Index: a PGlite index of the demo corpus (datasets/corpus, c300, use-lite), built on first use into
 *   .rankgate/serve-load/db (about a minute) and reused afterwards; --db uses another data directory.
 * - Server: the real CLI, `node bin/rankgate.js serve --port 0 --host 127.0.0.1 --db DIR`, as a child process
 *   (so the load generator does not share its event loop), stopped with SIGTERM at the end.
 * - Load: POST /api/v1/search with the English golden queries (datasets/golden/golden-set-en.json) in a fixed
 *   rotation; each level stops after --requests requests or --seconds seconds, whichever comes first; a
 *   request is failed when it errors, takes over 30 s, or answers anything but 200 with a results array.
 * - Latency: per request, client-side wall time; nearest-rank percentiles.
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
    requests: { type: 'string', default: '150' },
    seconds: { type: 'string', default: '45' },
    clients: { type: 'string', default: '1,8,32' },
    db: { type: 'string' },
  },
});
const maxRequests = Number(values.requests);
const maxSeconds = Number(values.seconds);
const levels = values.clients!.split(',').map(Number);
const dataDir = values.db ?? join(ROOT, '.rankgate', 'serve-load', 'db');

function percentile(xs: number[], p: number): number {
  const v = [...xs].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1))] ?? NaN;
}

if (!existsSync(join(dataDir, 'PG_VERSION'))) {
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

const server = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--db', dataDir], {
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

async function one(query: string): Promise<{ ok: boolean; ms: number; why?: string }> {
  const t0 = performance.now();
  try {
    const res = await fetch(`${url}/api/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, limit: 10 }),
      signal: AbortSignal.timeout(30_000),
    });
    const body = (await res.json()) as { results?: unknown };
    const ms = performance.now() - t0;
    if (res.status !== 200 || !Array.isArray(body.results)) return { ok: false, ms, why: `HTTP ${res.status} ${JSON.stringify(body).slice(0, 120)}` };
    return { ok: true, ms };
  } catch (e) {
    return { ok: false, ms: performance.now() - t0, why: (e as Error).message };
  }
}

// warm-up: model load, routing exemplars, first query plans
for (const q of queries.slice(0, 5)) {
  const r = await one(q);
  if (!r.ok) throw new Error(`warm-up request failed: ${r.why}`);
}

console.log(`rankgate serve load test: ${url} (loopback), PGlite ${dataDir}, ${queries.length} golden queries in rotation`);
console.log(`each level: at most ${maxRequests} requests or ${maxSeconds} s\n`);
console.log('clients   requests   req/s    p50 ms    p95 ms    max ms   failed');
let totalFailed = 0;
for (const clients of levels) {
  let next = 0;
  const lat: number[] = [];
  const failures: string[] = [];
  const deadline = performance.now() + maxSeconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        const i = next++;
        if (i >= maxRequests) return;
        const r = await one(queries[i % queries.length]!);
        lat.push(r.ms);
        if (!r.ok) failures.push(r.why ?? 'failed');
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  totalFailed += failures.length;
  console.log(
    `${String(clients).padStart(7)} ${String(lat.length).padStart(10)} ${(lat.length / secs).toFixed(1).padStart(7)} ${percentile(lat, 50).toFixed(1).padStart(9)} ${percentile(lat, 95)
      .toFixed(1)
      .padStart(9)} ${Math.max(...lat).toFixed(1).padStart(9)} ${String(failures.length).padStart(8)}`,
  );
  for (const f of [...new Set(failures)].slice(0, 5)) console.log(`          failed: ${f}`);
}
stop();
await new Promise((r) => (server.exitCode === null ? server.once('exit', r) : r(null)));
console.log(`\nfailed requests: ${totalFailed}`);
process.exitCode = totalFailed ? 1 : 0;
