/**
 * Sharded evaluation on one machine, and the projection to N runners.
 *
 *   node --import tsx bench/shard.ts [--chunks 100000] [--queries 10000] [--shards 2] [--embed-chunks 200] [--fresh]
 *
 * Index: `--chunks` synthetic ~300-token chunks (bench/synthetic.ts) with free hashing vectors, on the Postgres server
 * ($RANKGATE_BENCH_DATABASE_URL, else $RANKGATE_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:55432/rankgate) in
 * the schema rgbench_shard_<chunks>, kept between runs (--fresh rebuilds it).
 * Golden set: `--queries` NQ-style questions (one answer document each) as a BEIR folder, through the repository's
 * tests loader (datasets/tests.ts), rankgate's provider (module: bench/shard/service.ts) and the default rank
 * assertion, derived means and hooks (floors off), maxConcurrency 4, exactly as a user's eval.
 *
 * Measured: one `promptfoo eval` process over every query; `--shards` processes at once (RANKGATE_SHARD=i/N) and
 * `rankgate merge` of their results; a 50-query run for the fixed start-up cost. Checked: the merged file's gate
 * report equals the single run's (latency aside). Projected (stated as such): wall time for 86,000 queries on 8 and
 * 32 runners = start-up + 86,000/N x the measured per-query cost + the merge scaled linearly (runner setup,
 * npm ci and the index restore not included).
 * Ingest with the embedder sharded: `rankgate embed-cache build` of `--embed-chunks` chunks with USE-lite in one
 * process vs `--shards` processes at once, then the ingest from the merged cache (PGlite), chunks/s end to end.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/index.ts';
import { ingestCorpus } from '../src/ingest/pipeline.ts';
import { HashEmbedder, corpus, harnessConfigYaml, nqStyleQueries } from './synthetic.ts';

const ROOT = join(import.meta.dirname, '..');
const PROMPTFOO = join(ROOT, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');
const RANKGATE = join(ROOT, 'bin', 'rankgate.js');

function run(args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; ms: number; out: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ...env } as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, ms: performance.now() - t0, out }));
  });
}

const s = (ms: number) => (ms / 1000).toFixed(1);

async function main() {
  const { values: v } = parseArgs({
    options: {
      chunks: { type: 'string', default: '100000' },
      queries: { type: 'string', default: '10000' },
      shards: { type: 'string', default: '2' },
      'embed-chunks': { type: 'string', default: '200' },
      fresh: { type: 'boolean', default: false },
      'skip-embed': { type: 'boolean', default: false },
    },
  });
  const nChunks = Number(v.chunks);
  const nQueries = Number(v.queries);
  const nShards = Number(v.shards);
  const url = process.env.RANKGATE_BENCH_DATABASE_URL ?? process.env.RANKGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:55432/rankgate';
  const password = decodeURIComponent(new URL(url).password);
  const urlNoPassword = Object.assign(new URL(url), { password: '' }).toString();
  const schema = `rgbench_shard_${nChunks}`;
  const dim = 384;
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-bench-shard-'));
  const lines: string[] = [];
  const say = (l: string) => {
    lines.push(l);
    console.log(l);
  };
  say(`bench/shard: ${nQueries} NQ-style queries over ${nChunks} chunks on Postgres (${schema}); 2-core machine, load average ${loadavg()[0]!.toFixed(1)} at start (shared with other work)`);
  try {
    // 1. The index, built once and kept.
    const c = corpus(nChunks);
    const db = await openDatabase({ url, schema });
    try {
      if (v.fresh) await db.pool.query('DELETE FROM book_chunks').catch(() => {});
      const have = Number((await db.pool.query<{ n: string }>('SELECT count(*)::text AS n FROM book_chunks')).rows[0]!.n);
      if (have < nChunks) {
        const t0 = performance.now();
        const st = await ingestCorpus({ db, documents: c.docs, chunkSizes: [300], embedder: new HashEmbedder(dim) });
        say(`index: ingested ${st.variants[0]!.chunks} chunks in ${s(performance.now() - t0)} s (${(st.variants[0]!.chunks / ((performance.now() - t0) / 1000)).toFixed(0)} chunks/s, hashing vectors)`);
      } else say(`index: ${have} chunks already in ${schema} (reused)`);
    } finally {
      await db.close();
    }

    // 2. The golden set: a BEIR folder (queries.jsonl + qrels/test.tsv), one answer document per question.
    const qs = nqStyleQueries(c, nQueries);
    const golden = join(dir, 'nq-style');
    mkdirSync(join(golden, 'qrels'), { recursive: true });
    writeFileSync(join(golden, 'queries.jsonl'), qs.map((q) => JSON.stringify({ _id: q.id, text: q.text })).join('\n') + '\n');
    writeFileSync(join(golden, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\n' + qs.map((q) => `${q.id}\t${q.docId}\t1`).join('\n') + '\n');
    const small = join(dir, 'nq-style-50');
    mkdirSync(join(small, 'qrels'), { recursive: true });
    writeFileSync(join(small, 'queries.jsonl'), qs.slice(0, 50).map((q) => JSON.stringify({ _id: q.id, text: q.text })).join('\n') + '\n');
    writeFileSync(join(small, 'qrels', 'test.tsv'), 'query-id\tcorpus-id\tscore\n' + qs.slice(0, 50).map((q) => `${q.id}\t${q.docId}\t1`).join('\n') + '\n');

    // 3. The eval config (absolute paths): the user's default harness over this service.
    const config = join(dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      harnessConfigYaml(
        ROOT,
        'bench/shard',
        `  - id: file://${ROOT}/providers/search.ts
    label: hybrid rrf60 c300 bench-hash
    config: { module: ${ROOT}/bench/shard/service.ts, databaseUrl: '${urlNoPassword}', schema: ${schema}, dim: ${dim}, mode: hybrid, vectorSearch: hnsw, candidates: 50, topK: 10, chunkSize: 300, routing: false }`,
        4,
      ),
    );
    const pf = (name: string, goldenDir: string, extra: Record<string, string> = {}) =>
      run([PROMPTFOO, 'eval', '-c', config, '--no-cache', '--no-table', '--no-progress-bar', '--output', join(dir, `${name}.json`)], {
        PROMPTFOO_CONFIG_DIR: join(dir, `pf-${name}`),
        // a databaseUrl holding a password is refused (promptfoo would store it): it comes from the environment
        ...(password ? { PGPASSWORD: password } : {}),
        PROMPTFOO_DISABLE_TELEMETRY: '1',
        PROMPTFOO_DISABLE_UPDATE: '1',
        PROMPTFOO_DISABLE_SHARING: '1',
        PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
        RANKGATE_GOLDEN: goldenDir,
        RANKGATE_SHARD: undefined,
        DATABASE_URL: undefined,
        ...extra,
      });
    const check = (name: string, r: { code: number; out: string }) => {
      if (r.code !== 0) throw new Error(`${name}: exit ${r.code}\n${r.out.slice(-3000)}`);
    };

    const startup = await pf('startup', small);
    check('50-query run', startup);
    const single = await pf('single', golden);
    check('single process', single);
    const shardRuns = await Promise.all(Array.from({ length: nShards }, (_, k) => pf(`shard-${k + 1}`, golden, { RANKGATE_SHARD: `${k + 1}/${nShards}` })));
    shardRuns.forEach((r, k) => check(`shard ${k + 1}`, r));
    const shardWall = Math.max(...shardRuns.map((r) => r.ms));
    const merge = await run([RANKGATE, 'merge', join(dir, 'merged.json'), ...shardRuns.map((_, k) => join(dir, `shard-${k + 1}.json`))]);
    check('merge', merge);

    // 4. Equality: the gate's report of the merged file vs the single run's.
    const rep = async (name: string) => {
      // Floors of this golden set (the repository's config/gate.yaml names the demo's categories).
      writeFileSync(join(dir, 'floors.yaml'), 'overall:\n  recall_at_3: 0.5\n');
      const r = await run([RANKGATE, 'gate', join(dir, `${name}.json`), '--floors', join(dir, 'floors.yaml'), '--report', join(dir, `${name}-report.json`)]);
      if (r.code !== 0 && r.code !== 1) throw new Error(`gate ${name}: exit ${r.code}\n${r.out.slice(-2000)}`);
      return JSON.stringify(JSON.parse(readFileSync(join(dir, `${name}-report.json`), 'utf8')), (k, x) => (/latency|eval_id|evalId|timestamp|generated_at/.test(k) ? undefined : x));
    };
    const [a, b] = [await rep('single'), await rep('merged')];
    const r3 = (JSON.parse(readFileSync(join(dir, 'single-report.json'), 'utf8')) as { overall_recall_at_3?: number }).overall_recall_at_3;

    const perQuery = (single.ms - startup.ms) / (nQueries - 50);
    const fixed = startup.ms - 50 * perQuery;
    // The merge's own time (the CLI reports it) scales with the rows; the process start does not.
    const mergeOwn = Number(/ in (\d+) ms/.exec(merge.out)?.[1] ?? merge.ms);
    const mergeFixed = Math.max(0, merge.ms - mergeOwn);
    const mergePerQuery = mergeOwn / nQueries;
    const project = (n: number) => fixed + (86_000 / n) * perQuery + (n > 1 ? mergeFixed + 86_000 * mergePerQuery : 0);
    const mb = (f: string) => (statSync(join(dir, f)).size / 1e6).toFixed(0);
    say('');
    say('| run | queries | wall s | queries/s |');
    say('|---|---:|---:|---:|');
    say(`| one process | ${nQueries} | ${s(single.ms)} | ${(nQueries / (single.ms / 1000)).toFixed(1)} |`);
    say(`| ${nShards} shards at once on this machine | ${nQueries} | ${s(shardWall)} (shards ${shardRuns.map((r) => s(r.ms)).join(', ')}) | ${(nQueries / (shardWall / 1000)).toFixed(1)} |`);
    say(`| rankgate merge of the ${nShards} results files (${shardRuns.map((_, k) => mb(`shard-${k + 1}.json`) + ' MB').join(' + ')}) | ${nQueries} | ${s(merge.ms)} (merge itself ${s(mergeOwn)}) | |`);
    say(`| 50-query run (fixed start-up ${s(fixed)} s) | 50 | ${s(startup.ms)} | |`);
    say('');
    say(`equality: gate report of the merged file ${a === b ? 'IDENTICAL to' : 'DIFFERS from'} the single run's (every per-category metric, bucket, routing, judge field; latency aside); Recall@3 ${r3?.toFixed(4)}`);
    say(`per-query cost ${perQuery.toFixed(2)} ms (one process, 4 rows at a time), merge ${(mergePerQuery * 1000).toFixed(1)} ms per 1,000 queries`);
    say(`PROJECTION (not measured) for 86,000 queries, one column, runners as fast as this machine, excluding runner setup, npm ci and the index restore:`);
    for (const n of [1, 8, 32]) say(`  ${String(n).padStart(2)} runner${n > 1 ? 's' : ' '}: ${(project(n) / 60_000).toFixed(1)} min (start-up ${s(fixed)} s + ${(86_000 / n).toFixed(0)} queries x ${perQuery.toFixed(2)} ms${n > 1 ? ` + merge ${s(mergeFixed + 86_000 * mergePerQuery)} s` : ''})`);
    const rowBytes = statSync(join(dir, 'single.json')).size / nQueries;
    say(`results file: ${(rowBytes / 1000).toFixed(1)} KB per row here, so 86,000 rows in ONE file would be ~${((86_000 * rowBytes) / 1e9).toFixed(1)} GB: past the longest string V8 can hold (~0.5 GB), for promptfoo's own --output as for the merge`);

    // 5. Ingest with the embedder sharded: USE-lite over --embed-chunks chunks, 1 process vs N at once.
    if (!v['skip-embed']) {
      const ne = Number(v['embed-chunks']);
      const ec = join(dir, 'embed-corpus.jsonl');
      writeFileSync(ec, corpus(ne).docs.map((d) => JSON.stringify({ id: d.id, title: d.title, text: (d as unknown as { sections: { text: string }[] }).sections[0]!.text })).join('\n') + '\n');
      const build = (shard: string, out: string) => run([RANKGATE, 'embed-cache', 'build', '--shard', shard, '--corpus', ec, '--chunk-size', '300', '--out', out]);
      const one = await build('1/1', join(dir, 'emb-all.jsonl'));
      check('embed 1/1', one);
      const t0 = performance.now();
      const parts = await Promise.all(Array.from({ length: nShards }, (_, k) => build(`${k + 1}/${nShards}`, join(dir, `emb-${k + 1}.jsonl`))));
      parts.forEach((r, k) => check(`embed ${k + 1}/${nShards}`, r));
      const partsWall = performance.now() - t0;
      const ing = async (files: string[], name: string) => {
        const t = performance.now();
        const dbDir = join(dir, `db-${name}`);
        check('import', await run([RANKGATE, 'embed-cache', 'import', ...files, '--db', dbDir], { DATABASE_URL: undefined }));
        const r = await run([RANKGATE, 'ingest', '--corpus', ec, '--chunk-size', '300', '--db', dbDir, '--json'], { DATABASE_URL: undefined });
        check('ingest', r);
        const st = JSON.parse(r.out.slice(r.out.indexOf('{'))) as { variants: { chunks: number; embedded: number }[] };
        return { ms: performance.now() - t, chunks: st.variants[0]!.chunks, embedded: st.variants[0]!.embedded };
      };
      const i1 = await ing([join(dir, 'emb-all.jsonl')], 'one');
      const iN = await ing(parts.map((_, k) => join(dir, `emb-${k + 1}.jsonl`)), 'sharded');
      say('');
      say(`ingest with USE-lite embedding, ${i1.chunks} chunks (PGlite; the ingest after the cache embedded ${i1.embedded} / ${iN.embedded}):`);
      say('| embedder | embed wall s | embed chunks/s | ingest from cache s (incl. new PGlite) | chunks/s end to end |');
      say('|---|---:|---:|---:|---:|');
      say(`| 1 process | ${s(one.ms)} | ${(i1.chunks / (one.ms / 1000)).toFixed(1)} | ${s(i1.ms)} | ${(i1.chunks / ((one.ms + i1.ms) / 1000)).toFixed(1)} |`);
      say(`| ${nShards} processes at once | ${s(partsWall)} | ${(iN.chunks / (partsWall / 1000)).toFixed(1)} | ${s(iN.ms)} | ${(iN.chunks / ((partsWall + iN.ms) / 1000)).toFixed(1)} |`);
    }
    say('');
    say(`load average at the end ${loadavg()[0]!.toFixed(1)} (2 cores; other engineers' work ran at the same time)`);
    writeFileSync(join(tmpdir(), 'rankgate-bench-shard-last.txt'), lines.join('\n') + '\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
