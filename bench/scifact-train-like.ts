/**
 * A SciFact folder the size of SciFact's train split (809 queries), built from the test split in ../shared, for
 * `npm run bench:beir -- OUT --split train`: a 9,708-row sweep (809 queries x bench:beir's 12 columns).
 *
 *   node --import tsx bench/scifact-train-like.ts OUT [--from ../shared/benchmarks/scifact] [--titles 509] [--docs 1500]
 *
 * ../shared holds SciFact's test split only (300 claims); the real train claims are not on this machine. So:
 * - queries: the 300 test claims, plus the titles of `--titles` other abstracts as queries `t<doc id>`, each judged
 *   relevant (1) to its own abstract: 809 queries, 339 + 509 = 848 judgements in qrels/train.tsv;
 * - corpus: every abstract the test qrels judge, the titled ones, and other abstracts up to `--docs` (1,500 by
 *   default: a third of the corpus, so the ingest is a few minutes), in the source file's order.
 * Which abstracts: the unjudged ones ordered by sha256 of their id, the first `--titles` titled, the next ones added:
 * the same folder on every machine. Written outside the repository (never commit SciFact), each file atomically.
 * Title queries are easier than claims (the words are in the abstract's title): the table measures the harness at
 * this size, not a published figure.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeLinesAtomic } from '../src/util/atomic.ts';
import { readLinesSync } from '../src/util/lines.ts';

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: 'string', default: join(import.meta.dirname, '..', '..', 'shared', 'benchmarks', 'scifact') }, titles: { type: 'string', default: '509' }, docs: { type: 'string', default: '1500' } },
});
const out = positionals[0];
const from = resolve(opt.from!);
const nTitles = Number(opt.titles);
const nDocs = Number(opt.docs);
function fail(msg: string): never {
  process.stderr.write(`scifact-train-like: ${msg}\n`);
  process.exit(2);
}
if (!out) fail('usage: node --import tsx bench/scifact-train-like.ts OUT [--from SCIFACT] [--titles 509] [--docs 1500]');
for (const f of ['corpus.jsonl', 'queries.jsonl', join('qrels', 'test.tsv')]) if (!existsSync(join(from, f))) fail(`${join(from, f)} is missing: --from must be a BEIR SciFact folder (../shared/benchmarks/scifact)`);
if (!(Number.isInteger(nTitles) && nTitles >= 0 && Number.isInteger(nDocs) && nDocs > 0)) fail('--titles and --docs must be whole numbers');

interface Doc { _id: string; title?: string; text?: string }
const docs: Doc[] = [];
const lines: string[] = [];
for (const line of readLinesSync(join(from, 'corpus.jsonl'))) {
  if (!line.trim()) continue;
  docs.push(JSON.parse(line) as Doc);
  lines.push(line);
}
const qrels = readFileSync(join(from, 'qrels', 'test.tsv'), 'utf8').split('\n').slice(1).filter((l) => l.trim()).map((l) => l.split('\t'));
const judged = new Set(qrels.map((r) => r[1]!));
const judgedQueries = new Set(qrels.map((r) => r[0]!));
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const others = docs.filter((d) => !judged.has(d._id) && d.title?.trim()).sort((a, b) => (sha(a._id) < sha(b._id) ? -1 : 1));
if (others.length < nTitles) fail(`only ${others.length} unjudged abstracts with a title, --titles ${nTitles}`);
const titled = others.slice(0, nTitles);
const keep = new Set([...judged, ...titled.map((d) => d._id), ...others.slice(nTitles, Math.max(nTitles, nDocs - judged.size)).map((d) => d._id)]);

mkdirSync(join(out, 'qrels'), { recursive: true });
writeLinesAtomic(join(out, 'corpus.jsonl'), lines.filter((_, i) => keep.has(docs[i]!._id)));
const claims = [...readLinesSync(join(from, 'queries.jsonl'))].filter((l) => l.trim() && judgedQueries.has((JSON.parse(l) as { _id: string })._id));
writeLinesAtomic(join(out, 'queries.jsonl'), [...claims, ...titled.map((d) => JSON.stringify({ _id: `t${d._id}`, text: d.title!.trim(), metadata: {} }))]);
writeLinesAtomic(join(out, 'qrels', 'train.tsv'), ['query-id\tcorpus-id\tscore', ...qrels.map((r) => r.join('\t')), ...titled.map((d) => `t${d._id}\t${d._id}\t1`)]);
process.stdout.write(`${out}: ${keep.size} abstracts, ${claims.length + titled.length} queries (${claims.length} test claims + ${titled.length} titles), ${qrels.length + titled.length} judgements in qrels/train.tsv\n`);
