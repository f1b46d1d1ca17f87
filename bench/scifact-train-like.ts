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
/** The JSON objects of a JSONL file with their lines; a line that is not an object with a string `_id` is one error naming file, line and field. */
function readJsonl(file: string): { line: string; obj: Doc }[] {
  const out: { line: string; obj: Doc }[] = [];
  let n = 0;
  for (const line of readLinesSync(file)) {
    n++;
    if (!line.trim()) continue;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch {
      fail(`${file}: line ${n}: not JSON`);
    }
    if (!obj || typeof obj !== 'object' || typeof (obj as Doc)._id !== 'string') fail(`${file}: line ${n}: field _id: expected a string`);
    out.push({ line, obj: obj as Doc });
  }
  return out;
}
const corpus = readJsonl(join(from, 'corpus.jsonl'));
const queries = readJsonl(join(from, 'queries.jsonl'));
const qrelsFile = join(from, 'qrels', 'test.tsv');
const qrels = readFileSync(qrelsFile, 'utf8')
  .split('\n')
  .map((l, i) => ({ l: l.replace(/\r$/, ''), i }))
  .slice(1)
  .filter(({ l }) => l.trim())
  .map(({ l, i }) => {
    const r = l.split('\t');
    if (r.length < 3 || !r[0] || !r[1]) fail(`${qrelsFile}: line ${i + 1}: expected query-id<TAB>corpus-id<TAB>score`);
    return r;
  });
const judged = new Set(qrels.map((r) => r[1]!));
const judgedQueries = new Set(qrels.map((r) => r[0]!));
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const others = corpus.map((c) => c.obj).filter((d) => !judged.has(d._id) && typeof d.title === 'string' && d.title.trim()).sort((a, b) => (sha(a._id) < sha(b._id) ? -1 : 1));
if (others.length < nTitles) fail(`only ${others.length} unjudged abstracts with a title, --titles ${nTitles}`);
const titled = others.slice(0, nTitles);
const keep = new Set([...judged, ...titled.map((d) => d._id), ...others.slice(nTitles, Math.max(nTitles, nDocs - judged.size)).map((d) => d._id)]);
const claims = queries.filter((q) => judgedQueries.has(q.obj._id)).map((q) => q.line);

// everything read and checked before the first file is written
mkdirSync(join(out, 'qrels'), { recursive: true });
writeLinesAtomic(join(out, 'corpus.jsonl'), corpus.filter((c) => keep.has(c.obj._id)).map((c) => c.line));
writeLinesAtomic(join(out, 'queries.jsonl'), [...claims, ...titled.map((d) => JSON.stringify({ _id: `t${d._id}`, text: d.title!.trim(), metadata: {} }))]);
writeLinesAtomic(join(out, 'qrels', 'train.tsv'), ['query-id\tcorpus-id\tscore', ...qrels.map((r) => r.join('\t')), ...titled.map((d) => `t${d._id}\t${d._id}\t1`)]);
process.stdout.write(`${out}: ${keep.size} abstracts, ${claims.length + titled.length} queries (${claims.length} test claims + ${titled.length} titles), ${qrels.length + titled.length} judgements in qrels/train.tsv\n`);
