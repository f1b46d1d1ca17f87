/**
 * The demo's rerank sweep (RANKGATE_SWEEP=rerank) against a local fake reranker: what each budget does to the demo's
 * numbers and failure buckets, how many requests each query sends, and that a re-run sends none.
 *
 *   node --import tsx bench/rerank-sweep.ts [--rerankers tei:rerank] [--keep DIR]
 *
 * The fake (test/helpers/fake-rerank-apis.ts) answers every documented shape on 127.0.0.1; its scores are the share of
 * the query's words found in a passage. It is a stand-in to exercise the stage, not a model: the figures say what the
 * harness measures and reports, not what a real reranker would gain. The eval runs `npx promptfoo eval -c
 * promptfooconfig.sweep.ts` twice with the same score cache (a temp dir); the second run must send nothing.
 * Prints per column: Recall@3, MRR@10, nDCG@10, the failure buckets, and the requests the fake received. Asserts nothing.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readResultsFile } from '../src/results/stream.ts';
import { rerankReport } from '../src/results/summary.ts';
import { startFakeRerankApi } from '../test/helpers/fake-rerank-apis.ts';

const { values } = parseArgs({ options: { rerankers: { type: 'string', default: 'tei:rerank' }, keep: { type: 'string' } } });
const ROOT = resolve(import.meta.dirname, '..');
const dir = values.keep ?? mkdtempSync(join(tmpdir(), 'rankgate-rerank-sweep-'));
const fake = await startFakeRerankApi();
const env = {
  ...process.env,
  RANKGATE_SWEEP: 'rerank',
  RANKGATE_SWEEP_RERANKERS: values.rerankers!,
  TEI_BASE_URL: fake.url,
  COHERE_BASE_URL: fake.url,
  VOYAGE_API_BASE_URL: `${fake.url}/v1`,
  JINA_BASE_URL: `${fake.url}/v1`,
  VLLM_BASE_URL: `${fake.url}/v1`,
  COHERE_API_KEY: process.env.COHERE_API_KEY ?? 'fake',
  VOYAGE_API_KEY: process.env.VOYAGE_API_KEY ?? 'fake',
  JINA_API_KEY: process.env.JINA_API_KEY ?? 'fake',
  RANKGATE_RERANK_CACHE_DIR: join(dir, 'rerank-cache'),
  RANKGATE_GATE: 'off',
  PROMPTFOO_CONFIG_DIR: join(dir, 'promptfoo'),
  PROMPTFOO_DISABLE_TELEMETRY: '1',
  PROMPTFOO_DISABLE_UPDATE: '1',
  PROMPTFOO_DISABLE_DEBUG_LOG: '1',
};

/** One eval in a child process; spawned asynchronously, so the fake in this process keeps answering. */
async function run(out: string): Promise<{ seconds: number; code: number | null; requests: number; passages: number }> {
  const before = fake.requests.length;
  const t0 = performance.now();
  const child = spawn('npx', ['--no-install', 'promptfoo', 'eval', '-c', 'promptfooconfig.sweep.ts', '-o', out, '--no-cache', '--no-table', '--no-progress-bar'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-3000)));
  const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
  if (code !== 0) process.stderr.write(stderr);
  const reqs = fake.requests.slice(before);
  return { seconds: (performance.now() - t0) / 1000, code, requests: reqs.length, passages: reqs.reduce((a, q) => a + ((q.body?.texts ?? q.body?.documents)?.length ?? 0), 0) };
}

try {
  const first = await run(join(dir, 'first.jsonl'));
  const again = await run(join(dir, 'again.jsonl'));
  const parsed = readResultsFile(join(dir, 'first.jsonl'));
  const f4 = (x: number) => x.toFixed(4);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  console.log(`rerank sweep of the demo (${parsed.columns.length} columns; rerankers ${values.rerankers}; fake reranker at ${fake.url}; load ${(await import('node:os')).loadavg()[0]!.toFixed(1)})\n`);
  console.log('| column | queries | Recall@3 | MRR@10 | nDCG@10 | buckets |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const c of parsed.columns) {
    const ranked = c.queries.filter((q) => q.retrieval);
    const buckets = new Map<string, number>();
    for (const q of ranked) buckets.set(q.retrieval!.bucket, (buckets.get(q.retrieval!.bucket) ?? 0) + 1);
    const b = [...buckets.entries()].sort((x, y) => y[1] - x[1]).map(([k, n]) => `${k} ${n}`).join(', ');
    console.log(
      `| ${c.label} | ${ranked.length}${c.queries.some((q) => q.error) ? ` (${c.queries.filter((q) => q.error).length} errored)` : ''} | ${f4(mean(ranked.map((q) => q.retrieval!.recall_at_3)))} | ${f4(mean(ranked.map((q) => q.retrieval!.mrr)))} | ${f4(mean(ranked.map((q) => q.retrieval!.ndcg_at_10)))} | ${b} |`,
    );
  }
  console.log('\nthe rerank stage (per-stage metrics over the reranked rows; latency is the stage\'s own):\n');
  console.log('| column | first-stage Recall@budget | first-stage Recall@3 | gain Recall@3 | gain nDCG@10 | stage p50 / p95 ms | requests / query |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const c of parsed.columns) {
    const r = rerankReport(c.queries);
    if (!r) continue;
    const n = (x: number | null, d = 4) => (x === null ? 'n/a' : x.toFixed(d));
    console.log(`| ${c.label} | ${n(r.first_stage_recall_at_budget)} | ${n(r.first_stage_recall_at_3)} | ${n(r.rerank_gain_recall_at_3)} | ${n(r.rerank_gain_ndcg_at_10)} | ${n(r.latency_ms.p50, 1)} / ${n(r.latency_ms.p95, 1)} | ${n(r.requests_per_query, 2)} |`);
  }
  const rerankedRows = parsed.columns.filter((c) => !/no-rerank$/.test(c.label)).reduce((a, c) => a + c.queries.length, 0);
  console.log(
    `\nfirst run: exit ${first.code} in ${first.seconds.toFixed(1)} s; the fake got ${first.requests} requests (${first.passages} passages) for ${rerankedRows} reranked rows` +
      ` (with warm-up and the probe; a column's budget goes in one request when it fits the API's batch, TEI: 32 passages)`,
  );
  console.log(`re-run (same score cache): exit ${again.code} in ${again.seconds.toFixed(1)} s; the fake got ${again.requests} requests`);
} finally {
  await fake.close();
  if (!values.keep) rmSync(dir, { recursive: true, force: true });
}
