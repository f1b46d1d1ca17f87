/**
 * Ingest on every core: SciFact's corpus (5,183 abstracts -> 5,539 chunks at chunk size 512, bench:beir's default)
 * ingested with USE-lite embedding in 1 thread (in process, as before) and in N worker threads (src/embeddings/pool.ts),
 * each into a new PGlite database, then ingested again into the same database (the embedding cache: nothing embedded).
 *
 *   node --import tsx bench/ingest-cores.ts [BEIR folder] [--workers 1,2] [--chunks N] [--chunk-size 512]
 *
 *   folder        a BEIR folder with corpus.jsonl, read in place (default ../shared/benchmarks/scifact beside the
 *                 repository); absent: the benchmark says so and exits 0
 *   --workers     thread counts to measure, in order (default 1 and os.availableParallelism())
 *   --chunks N    only the first documents, up to N chunks (a quick ratio; default: the whole corpus)
 *
 * Each thread count runs in its own child process, so its peak RSS (process.resourceUsage().maxRSS: every thread of
 * the process, the models included) is its own. Printed per run: wall time of the ingest (chunk, embed, write, BM25
 * postings, HNSW; the PGlite database is created before the clock starts), the embedding's part, chunks/s, peak RSS,
 * CPU seconds of the ingest (user + system, all threads: with the load averages, what an idle machine would take), the
 * re-ingest's wall time and texts embedded (must be 0), and the load averages (`uptime`) before and after: this
 * machine is shared, so read the figures with them.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO = resolve(fileURLToPath(new URL('..', import.meta.url)));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { workers: { type: 'string' }, chunks: { type: 'string' }, 'chunk-size': { type: 'string' }, child: { type: 'string' } },
});
const folder = resolve(positionals[0] ?? join(REPO, '..', 'shared', 'benchmarks', 'scifact'));
const chunkSize = Number(values['chunk-size'] ?? 512);
const maxChunks = values.chunks ? Number(values.chunks) : undefined;
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

interface RunResult {
  workers: number;
  documents: number;
  chunks: number;
  embedded: number;
  wallS: number;
  embedS: number;
  reWallS: number;
  reEmbedded: number;
  peakRssMb: number;
  /** CPU seconds (user + system, every thread of the process) of the first ingest. */
  cpuS: number;
  loadBefore: string;
  loadAfter: string;
}

async function child(workers: number): Promise<RunResult> {
  const { readCorpus } = await import('../src/ingest/readers.ts');
  const { chunkDocument } = await import('../src/ingest/chunker.ts');
  const { ingestCorpus, createProgressReporter } = await import('../src/ingest/pipeline.ts');
  const { createEmbedder } = await import('../src/embeddings/index.ts');
  const { openDatabase } = await import('../src/db/index.ts');
  let documents = await readCorpus(join(folder, 'corpus.jsonl'), 'beir');
  if (maxChunks !== undefined) {
    let n = 0;
    const keep = [];
    for (const d of documents) {
      if (n >= maxChunks) break;
      keep.push(d);
      n += chunkDocument(d, { chunkSize, overlap: 0 }).length;
    }
    documents = keep;
  }
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-ingest-cores-'));
  // a run stopped by a signal leaves no database behind
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  }
  const db = await openDatabase({ dataDir: join(dir, 'db') });
  const embedder = await createEmbedder('use-lite', { workers });
  try {
    const loadBefore = load();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    // progress on stderr (a line every 10 s while embedding): a long run can be followed
    const first = await ingestCorpus({ db, documents, chunkSizes: [chunkSize], embedder, onProgress: createProgressReporter() });
    const wallS = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const loadAfter = load();
    const t1 = performance.now();
    const again = await ingestCorpus({ db, documents, chunkSizes: [chunkSize], embedder });
    const reWallS = (performance.now() - t1) / 1000;
    const v = first.variants[0]!;
    return {
      workers,
      documents: documents.length,
      chunks: v.chunks,
      embedded: v.embedded,
      wallS,
      embedS: v.embedMs / 1000,
      reWallS,
      reEmbedded: again.variants[0]!.embedded,
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      cpuS: (cpu.user + cpu.system) / 1e6,
      loadBefore,
      loadAfter,
    };
  } finally {
    await embedder.close?.();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.child) {
  const r = await child(Number(values.child));
  process.stdout.write(JSON.stringify(r) + '\n');
  process.exit(0);
}

if (!existsSync(join(folder, 'corpus.jsonl'))) {
  console.log(`bench/ingest-cores: no BEIR corpus at ${folder} (corpus.jsonl): skipped. Give a BEIR folder, e.g. SciFact's.`);
  process.exit(0);
}
const counts = (values.workers ?? `1,${availableParallelism()}`).split(',').map(Number);
const rows: RunResult[] = [];
for (const w of counts) {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), folder, '--child', String(w), '--chunk-size', String(chunkSize), ...(maxChunks ? ['--chunks', String(maxChunks)] : [])];
  const r = spawnSync(process.execPath, args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
  if (r.status !== 0) {
    console.error(`bench/ingest-cores: the run with ${w} thread(s) failed (exit ${r.status})`);
    process.exit(1);
  }
  const res = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as RunResult;
  rows.push(res);
  console.log(
    `${String(w).padStart(2)} thread${w > 1 ? 's' : ' '}  ${res.chunks} chunks (${res.documents} docs)  ingest ${res.wallS.toFixed(1)} s ` +
      `(embed ${res.embedS.toFixed(1)} s)  ${(res.chunks / res.wallS).toFixed(2)} chunks/s  CPU ${res.cpuS.toFixed(1)} s  peak RSS ${res.peakRssMb.toFixed(0)} MB  ` +
      `re-ingest ${res.reWallS.toFixed(1)} s, embedded ${res.reEmbedded}  load ${res.loadBefore} -> ${res.loadAfter}`,
  );
}
const base = rows[0]!;
for (const r of rows.slice(1)) console.log(`speed-up ${r.workers} threads vs ${base.workers}: ${(base.wallS / r.wallS).toFixed(2)}x ingest, ${(base.embedS / r.embedS).toFixed(2)}x embedding`);
console.log(`\n${folder}, chunk size ${chunkSize}, USE-lite (batches of 64), PGlite; ${availableParallelism()} cores; node ${process.version}`);
