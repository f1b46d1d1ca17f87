/**
 * BEIR benchmark through promptfoo: `npm run bench:beir -- [folder] [options]`
 *
 *   folder              a BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv
 *                       (default ../shared/benchmarks/scifact)
 *   --split S           qrels split (default test)
 *   --name N            dataset name: index dir .rankgate/bench/<N>, report beir-<N>.md (default: folder name)
 *   --queries N         only the first N judged queries (quick run)
 *   --sweep none|small  small (default): RRF k 20/60/100 x weights 1:1, 0.6/0.4, 0.4/0.6, best by nDCG@10
 *   --chunk-size T      chunk budget in tokens (default 512: ~1.07 chunks per SciFact abstract)
 *   --depth D           chunks returned and candidates per channel (default 150, at least 100)
 *   --embedder ID       default use-lite
 *   --concurrency J     promptfoo -j (default 1, so latency is not queueing)
 *   --reingest          rebuild the index even when ingest.json matches the corpus
 *   --work-dir DIR      where .rankgate/bench lives (default: the repository root)
 *   --anchors FILE      README with the published figures (default: README.md beside the folder)
 *   --report-only       no eval: re-score the last promptfoo results (.rankgate/bench/<name>/results.jsonl)
 *   --no-gate           do not gate the results at the end
 *
 * Steps: import queries + qrels with src/golden's BEIR reader -> promptfoo test cases (document-level
 * judgements); ingest corpus.jsonl into a PGlite data dir .rankgate/bench/<name>/db once (reused after);
 * `promptfoo eval` a generated config whose columns are keyword (BM25), semantic, hybrid (RRF defaults)
 * and the sweep; nDCG@10 / MRR@10 from assertions/rank.ts and Recall@100 from bench/beir/assert.ts, all on
 * document-collapsed rankings. Prints a Markdown table and writes .rankgate/bench/beir-<name>.md and .json
 * (atomically), and the promptfoo results (JSONL, one row a line) as .rankgate/bench/<name>/results.jsonl, then gates
 * them with `rankgate gate` in its own process (zero floors: the evidence is checked, not the quality) and prints its
 * verdict, wall time and peak RSS (--no-gate skips it).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { openDatabase } from '../src/db/index.ts';
import { UserError } from '../src/errors.ts';
import { writeFileAtomic } from '../src/util/atomic.ts';
import { defaultAnchorsFile, importBeir, readAnchors } from './beir/import.ts';
import { benchPaths, ensureIndex } from './beir/index-corpus.ts';
import { REPO, bestHybrid, buildConfig, columnsFor, gateResults, readPfRows, runPromptfoo, summarize, type PfOutput } from './beir/run.ts';
import { renderMarkdown } from './beir/report.ts';

function int(name: string, v: string | undefined, def: number, min: number): number {
  if (v === undefined) return def;
  if (!/^\d+$/.test(v) || Number(v) < min) throw new UserError(`--${name}: got '${v}', expected an integer >= ${min}`);
  return Number(v);
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      split: { type: 'string' },
      name: { type: 'string' },
      queries: { type: 'string' },
      sweep: { type: 'string' },
      'chunk-size': { type: 'string' },
      depth: { type: 'string' },
      embedder: { type: 'string' },
      concurrency: { type: 'string' },
      reingest: { type: 'boolean' },
      'work-dir': { type: 'string' },
      anchors: { type: 'string' },
      'report-only': { type: 'boolean' },
      'no-gate': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write('usage: npm run bench:beir -- [BEIR folder] [--split test] [--queries N] [--sweep none|small] [--chunk-size 512] [--depth 150] [--reingest] [--report-only] [--no-gate]\n');
    return 0;
  }
  if (positionals.length > 1) throw new UserError(`expected one BEIR folder, got ${positionals.length}: ${positionals.join(' ')}`);
  const sweep = values.sweep ?? 'small';
  if (sweep !== 'none' && sweep !== 'small') throw new UserError(`--sweep: got '${sweep}', expected none or small`);
  const folder = resolve(positionals[0] ?? join(REPO, '..', 'shared', 'benchmarks', 'scifact'));
  const chunkSize = int('chunk-size', values['chunk-size'], 512, 16);
  const depth = int('depth', values.depth, 150, 100);
  if (depth > 1000) throw new UserError(`--depth: got ${depth}, expected at most 1000`);
  const concurrency = int('concurrency', values.concurrency, 1, 1);
  const queries = values.queries === undefined ? undefined : int('queries', values.queries, 0, 1);
  const embedder = values.embedder ?? 'use-lite';
  const workDir = values['work-dir'] ? resolve(values['work-dir']) : REPO;

  const imp = importBeir(folder, { split: values.split, queries, name: values.name });
  if (!/^[A-Za-z0-9._-]+$/.test(imp.name)) throw new UserError(`--name: got '${imp.name}', expected letters, digits, '.', '_' or '-'`);
  const log = (s: string) => process.stderr.write(`bench:beir ${s}\n`);
  log(`${imp.name}: ${imp.tests.length} queries (${imp.judgedQueries} judged in ${imp.split}), ${imp.judgements} judgements`);

  const paths = benchPaths(workDir, imp.name);
  delete process.env.DATABASE_URL;
  const db = await openDatabase({ dataDir: paths.dataDir });
  let ensured;
  try {
    ensured = await ensureIndex({ db, corpus: imp.corpus, recordFile: paths.recordFile, chunkSize, embedder, force: values.reingest, log });
  } finally {
    await db.close();
  }

  const columns = columnsFor(sweep);
  const resultsFile = join(paths.dir, 'results.jsonl');
  const outBase = join(workDir, '.rankgate', 'bench', `beir-${imp.name}`);
  let pf: PfOutput;
  let evalSeconds: number;
  if (values['report-only']) {
    if (!existsSync(resultsFile)) throw new UserError(`${resultsFile}: file not found, expected the results of an earlier run (drop --report-only)`);
    pf = readPfRows(resultsFile);
    const prev = existsSync(`${outBase}.json`) ? (JSON.parse(readFileSync(`${outBase}.json`, 'utf8')) as { evalSeconds?: number }) : {};
    evalSeconds = prev.evalSeconds ?? NaN;
    log(`re-scoring ${resultsFile} (no eval)`);
  } else {
    log(`promptfoo eval: ${columns.length} columns x ${imp.tests.length} queries`);
    const t0 = performance.now();
    pf = await runPromptfoo({
      config: buildConfig({ name: imp.name, tests: imp.tests, columns, dataDir: paths.dataDir, chunkSize, embedder, depth }),
      concurrency,
      resultsFile,
      expectedRows: columns.length * imp.tests.length,
      log,
    });
    evalSeconds = (performance.now() - t0) / 1000;
  }
  const summary = summarize(pf, columns, imp.tests.length, ensured.record.documents);
  const best = bestHybrid(summary);
  const anchorsFile = values.anchors ? resolve(values.anchors) : defaultAnchorsFile(folder);
  const anchors = readAnchors(anchorsFile, imp.name);
  const shown = (p: string) => (isAbsolute(p) && !relative(REPO, p).startsWith('..') ? relative(REPO, p) || '.' : p);
  const cmd = ['npm run bench:beir --', ...argv.filter((a) => a !== '--report-only')].join(' ').replace(/ --$/, '');
  const md = renderMarkdown({
    name: imp.name,
    split: imp.split,
    queries: imp.tests.length,
    judgedQueries: imp.judgedQueries,
    judgements: imp.judgements,
    chunkSize,
    embedder,
    depth,
    ingest: ensured.record,
    reusedIndex: !ensured.ingested,
    columns: summary,
    best,
    anchors,
    anchorsFile: anchors.length ? shown(anchorsFile) : undefined,
    evalSeconds,
    command: cmd,
    concurrency,
  });
  process.stdout.write(md);
  writeFileAtomic(`${outBase}.md`, md);
  writeFileAtomic(
    `${outBase}.json`,
    JSON.stringify(
      {
        name: imp.name,
        split: imp.split,
        queries: imp.tests.length,
        chunkSize,
        depth,
        embedder,
        ingest: ensured.record,
        reusedIndex: !ensured.ingested,
        evalSeconds,
        best: best?.label ?? null,
        columns: summary,
        anchors,
      },
      null,
      2,
    ) + '\n',
  );
  log(`wrote ${shown(outBase)}.md and .json`);
  if (!values['no-gate']) {
    const rows = pf.results.results.length;
    const bytes = statSync(resultsFile).size;
    log(`results ${shown(resultsFile)}: ${rows} rows, ${(bytes / 1e6).toFixed(1)} MB (${Math.round(bytes / rows)} bytes a row, one JSON line each)`);
    const g = gateResults(resultsFile);
    log(`rankgate gate ${shown(resultsFile)}: exit ${g.code} in ${g.secs.toFixed(1)} s${g.peakMb !== null ? `, peak RSS ${g.peakMb.toFixed(0)} MB` : ''} · ${g.verdict}`);
    if (g.code === 2) return 2;
  }
  return 0;
}

const isMain = process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname);
if (isMain) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      if (e instanceof UserError) {
        process.stderr.write(`bench:beir: ${e.message}\n`);
        process.exitCode = e.exitCode ?? 2;
      } else if (e instanceof TypeError && (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
        process.stderr.write(`bench:beir: ${(e as Error).message}\n`);
        process.exitCode = 2;
      } else {
        process.stderr.write(`bench:beir: ${(e as Error)?.stack ?? String(e)}\n`);
        process.exitCode = 1;
      }
    },
  );
}
