/**
 * Hybrid fusion on BEIR SciFact, tuned honestly: the RRF k and channel weights are picked on the
 * even-numbered test queries and reported on the odd-numbered ones (SciFact ships no dev qrels), next to
 * each single channel. Answers "does hybrid beat both of its own channels with this embedder?" without
 * choosing the winner on the numbers it reports.
 *
 *   node --import tsx bench/scifact-heldout.ts [BEIR_DIR] [--data-dir .rankgate/bench/scifact/db]
 *        [--chunk-size 512] [--depth 150] [--ks 5,10,20,60] [--weights 0.9,0.8,0.6,0.5]
 *
 * Reuses the index `npm run bench:beir` builds (title + text, chunks of 512 tokens, USE-lite); documents are
 * ranked by their best chunk; nDCG@10 as trec_eval ndcg_cut_10 (src/metrics).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createSearchService } from '../src/search/index.ts';
import { createEmbedder } from '../src/embeddings/index.ts';
import { ndcg_cut_k } from '../src/metrics/index.ts';
import type { SearchParams } from '../src/search/types.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'data-dir': { type: 'string', default: '.rankgate/bench/scifact/db' },
    'chunk-size': { type: 'string', default: '512' },
    depth: { type: 'string', default: '150' },
    ks: { type: 'string', default: '5,10,20,60' },
    weights: { type: 'string', default: '0.9,0.8,0.6,0.5' },
  },
});
const dir = positionals[0] ?? '../shared/benchmarks/scifact';
const dataDir = values['data-dir']!;
for (const p of [join(dir, 'queries.jsonl'), join(dir, 'qrels/test.tsv')]) {
  if (!existsSync(p)) throw new Error(`${p} is missing: pass a BEIR folder with a test split`);
}
if (!existsSync(dataDir)) throw new Error(`${dataDir} is missing: run 'npm run bench:beir' first to build the index`);

const qrels = new Map<string, Map<string, number>>();
for (const line of readFileSync(join(dir, 'qrels/test.tsv'), 'utf8').trim().split('\n').slice(1)) {
  const [q, d, s] = line.split('\t');
  if (!qrels.has(q!)) qrels.set(q!, new Map());
  qrels.get(q!)!.set(d!, Number(s));
}
const queries = readFileSync(join(dir, 'queries.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { _id: string; text: string })
  .filter((q) => qrels.has(q._id));

const depth = Number(values.depth);
const embedder = await createEmbedder('use-lite');
const svc = await createSearchService({
  dataDir,
  embedder,
  defaults: { chunkSize: Number(values['chunk-size']), embedder: 'use-lite', candidates: depth, topK: depth, routing: false },
});

const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
async function score(p: Partial<SearchParams>): Promise<{ even: number; odd: number; all: number }> {
  const even: number[] = [];
  const odd: number[] = [];
  for (let i = 0; i < queries.length; i++) {
    const q = queries[i]!;
    const r = await svc.search(q.text, p);
    const docs: string[] = [];
    for (const h of r.hits) if (!docs.includes(h.documentId)) docs.push(h.documentId);
    (i % 2 ? odd : even).push(ndcg_cut_k(docs, qrels.get(q._id)!, 10));
  }
  return { even: mean(even), odd: mean(odd), all: mean([...even, ...odd]) };
}

const rows: { name: string; s: { even: number; odd: number; all: number } }[] = [];
const keyword = await score({ mode: 'keyword' });
rows.push({ name: 'keyword (BM25)', s: keyword });
const semantic = await score({ mode: 'semantic' });
rows.push({ name: 'semantic (USE-lite)', s: semantic });
let best: { name: string; s: { even: number; odd: number; all: number } } | undefined;
for (const k of values.ks!.split(',').map(Number)) {
  for (const w of values.weights!.split(',').map(Number)) {
    const name = `hybrid RRF k=${k}, ${w}/${+(1 - w).toFixed(2)} keyword/vector`;
    const s = await score({ mode: 'hybrid', rrfK: k, weights: { keyword: w, vector: +(1 - w).toFixed(2) } });
    console.error(`${name}: even ${s.even.toFixed(4)} odd ${s.odd.toFixed(4)}`);
    if (!best || s.even > best.s.even) best = { name, s };
  }
}
rows.push({ name: `best hybrid picked on even queries: ${best!.name.replace('hybrid ', '')}`, s: best!.s });
await svc.close();

const f = (x: number) => x.toFixed(4);
console.log(`\nBEIR SciFact test (${queries.length} queries): nDCG@10, hybrid tuned on the ${Math.ceil(queries.length / 2)} even-numbered queries, reported on the ${Math.floor(queries.length / 2)} odd-numbered ones\n`);
console.log('| run | even (tuning) | odd (held out) | all |');
console.log('|---|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${f(r.s.even)} | ${f(r.s.odd)} | ${f(r.s.all)} |`);
const b = best!.s;
console.log(
  `\nheld out: hybrid ${f(b.odd)} vs keyword ${f(keyword.odd)} (${b.odd >= keyword.odd ? '+' : ''}${f(b.odd - keyword.odd)}) and semantic ${f(semantic.odd)}: ` +
    (b.odd > keyword.odd && b.odd > semantic.odd ? 'hybrid is above both of its channels' : 'hybrid is NOT above both of its channels'),
);
