/**
 * npm run bench:scifact-read — reads the BEIR SciFact test split from ../shared/benchmarks/scifact (never copied into
 * the repo) through the golden-set and corpus readers, and prints what it found next to the published counts
 * (300 queries, 339 judgements, 5,183 abstracts) and how long each read took. SciFact is a benchmark here, not a test:
 * a clone without ../shared runs every test.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadGolden } from '../src/golden/index.ts';
import { readCorpus } from '../src/ingest/readers.ts';

const dir = resolve(process.argv[2] ?? join('..', 'shared', 'benchmarks', 'scifact'));
if (!existsSync(join(dir, 'queries.jsonl'))) {
  console.error(`bench:scifact-read: ${dir} has no queries.jsonl (BEIR SciFact; see ../shared/benchmarks/README.md)`);
  process.exit(2);
}
let t = performance.now();
const g = loadGolden(dir);
const goldenMs = performance.now() - t;
const judgements = g.queries.reduce((n, q) => n + q.expected.length, 0);
const binary = g.queries.every((q) => q.expected.every((r) => r.doc_id && r.grade === 1 && r.relevant));
t = performance.now();
const docs = await readCorpus(dir);
const corpusMs = performance.now() - t;
const rows = [
  ['queries (test split)', g.queries.length, 300],
  ['judgements', judgements, 339],
  ['abstracts', docs.length, 5183],
];
console.log(`format ${g.format}; every judgement binary (grade 1, relevant): ${binary}`);
console.log('| what | read | published |\n|---|---:|---:|');
for (const [what, got, want] of rows) console.log(`| ${what} | ${got} | ${want}${got === want ? '' : ' (DIFFERS)'} |`);
console.log(`golden read ${goldenMs.toFixed(0)} ms, corpus read ${corpusMs.toFixed(0)} ms`);
process.exitCode = rows.every(([, got, want]) => got === want) && binary ? 0 : 1;
