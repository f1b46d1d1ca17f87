/**
 * Calibrate the similarity heuristic's thresholds on a golden set + corpus (default: the demo set).
 *
 *   node --import tsx src/judge/calibrate.ts [golden.json] [corpus dir]
 *
 * Positives: for a query with two or more expected "high" passages, the chunk holding passage B,
 * scored against the query and the OTHER expected passages (the judge's real case: a different but
 * relevant passage). Partials: chunks holding a "partial" passage, scored the same way.
 * Negatives: chunks of other books, scored against the query and all expected passages.
 * Prints the score distributions and the thresholds that best separate them (max Youden J), so the
 * constants in SIMILARITY_THRESHOLDS can be set from evidence. Deterministic; no network.
 */
import { readCorpus } from '../ingest/readers.ts';
import { chunkDocument } from '../ingest/chunker.ts';
import { loadGoldenFile } from '../golden/index.ts';
import { createEmbedder } from '../embeddings/index.ts';
import { cosine } from '../embeddings/vector.ts';

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

export interface Calibration {
  positives: number[];
  partials: number[];
  negatives: number[];
  high: number;
  partial: number;
}

function bestCut(pos: number[], neg: number[]): number {
  const cands = [...new Set([...pos, ...neg].map((x) => Math.round(x * 100) / 100))].sort((a, b) => a - b);
  let best = { j: -Infinity, t: 0.5 };
  for (const t of cands) {
    const tpr = pos.filter((x) => x >= t).length / pos.length;
    const fpr = neg.filter((x) => x >= t).length / neg.length;
    if (tpr - fpr > best.j) best = { j: tpr - fpr, t };
  }
  return best.t;
}

export async function calibrate(goldenPath: string, corpusPath: string, chunkSize = 300): Promise<Calibration> {
  const golden = (await loadGoldenFile(goldenPath)).filter((g) => g.language === 'en');
  const docs = (await readCorpus(corpusPath)).filter((d) => d.language === 'en');
  const chunks = docs.flatMap((d) => chunkDocument(d, { chunkSize, overlap: 0 }));
  const embedder = await createEmbedder('use-lite');
  const vecs = await embedder.embedDocuments(chunks.map((c) => c.content));
  const vecOf = new Map(chunks.map((c, i) => [c.id, vecs[i]!]));
  const positives: number[] = [];
  const partials: number[] = [];
  const negatives: number[] = [];
  for (const g of golden) {
    const subs = g.expected.filter((r) => r.passage_substring);
    if (!subs.length) continue;
    const texts = [g.query, ...subs.map((r) => r.passage_substring!)];
    const [qv, ...ev] = await embedder.embedDocuments(texts);
    const books = new Set(subs.map((r) => r.book_slug).filter(Boolean));
    const score = (cv: number[], skip: number) => Math.max(cosine(cv, qv!), ...ev.filter((_, i) => i !== skip).map((e) => cosine(cv, e)));
    subs.forEach((r, i) => {
      const holder = chunks.find((c) => norm(c.content).includes(norm(r.passage_substring!)));
      if (!holder) return;
      const others = subs.filter((_, j) => j !== i);
      if (r.relevant && others.some((o) => o.relevant)) positives.push(score(vecOf.get(holder.id)!, i));
      if (!r.relevant) partials.push(score(vecOf.get(holder.id)!, i));
    });
    for (const c of chunks) {
      if (books.size && books.has(c.metadata.bookSlug ?? '')) continue;
      negatives.push(score(vecOf.get(c.id)!, -1));
    }
  }
  return { positives, partials, negatives, high: bestCut(positives, [...partials, ...negatives]), partial: bestCut([...positives, ...partials], negatives) };
}

const q = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(3) : 'n/a';
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const [goldenPath = 'datasets/golden/golden-set-en.json', corpusPath = 'datasets/corpus'] = process.argv.slice(2);
  const c = await calibrate(goldenPath, corpusPath);
  for (const [name, xs] of [['positives (other high passage)', c.positives], ['partials', c.partials], ['negatives (other books)', c.negatives]] as const) {
    console.log(`${name}: n=${xs.length} p10=${q(xs, 0.1)} p50=${q(xs, 0.5)} p90=${q(xs, 0.9)}`);
  }
  console.log(`suggested thresholds: high=${c.high} partial=${c.partial}`);
}
