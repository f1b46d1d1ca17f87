/** Markdown of a BEIR benchmark run: our columns, the best sweep cell, and the published anchors beside them. */
import type { Anchor } from './import.ts';
import type { ColumnSummary } from './run.ts';
import type { IngestRecord } from './index-corpus.ts';

export interface ReportInput {
  name: string;
  split: string;
  queries: number;
  judgedQueries: number;
  judgements: number;
  chunkSize: number;
  embedder: string;
  depth: number;
  ingest: IngestRecord;
  reusedIndex: boolean;
  columns: ColumnSummary[];
  best?: ColumnSummary;
  anchors: Anchor[];
  anchorsFile?: string;
  evalSeconds: number;
  command: string;
  /** promptfoo -j of the eval (1: latency is not queueing) */
  concurrency?: number;
}

const f4 = (x: number) => (Number.isFinite(x) ? x.toFixed(4) : '—');
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');

export function renderMarkdown(r: ReportInput): string {
  const L: string[] = [];
  L.push(`### BEIR ${r.name} (${r.split} split), through promptfoo`);
  L.push('');
  L.push(
    `${r.queries} queries${r.queries < r.judgedQueries ? ` (first ${r.queries} of ${r.judgedQueries} judged)` : ''}, ${r.judgements} judgements; ` +
      `${r.ingest.documents} documents as ${r.ingest.chunks} chunks of <= ${r.chunkSize} tokens (title + text), embedder ${r.embedder}; ` +
      `documents ranked by their best chunk; ${r.depth} chunks retrieved per query and channel.`,
  );
  L.push('');
  L.push('| column | nDCG@10 | Recall@100 | MRR@10 | p50 ms | p95 ms |');
  L.push('|---|---:|---:|---:|---:|---:|');
  for (const c of r.columns.filter((c) => c.kind !== 'sweep')) {
    L.push(`| ${c.label} | ${f4(c.ndcg10)} | ${f4(c.recall100)} | ${f4(c.mrr10)} | ${ms(c.latencyP50)} | ${ms(c.latencyP95)} |`);
  }
  if (r.best && r.columns.some((c) => c.kind === 'sweep')) {
    const b = r.best;
    L.push(`| best of sweep: ${b.label.replace(/^sweep /, '').replace(/^hybrid \((.*)\)$/, '$1')} | ${f4(b.ndcg10)} | ${f4(b.recall100)} | ${f4(b.mrr10)} | ${ms(b.latencyP50)} | ${ms(b.latencyP95)} |`);
  }
  for (const a of r.anchors) {
    L.push(`| *published:* ${a.system} | ${a.ndcg10 === null ? '—' : a.ndcg10.toFixed(4)} | ${a.recall100 === null ? '—' : a.recall100.toFixed(4)} | — | — | — |`);
  }
  L.push('');
  const errs = r.columns.filter((c) => c.errors > 0);
  if (errs.length) L.push(`Errored rows (counted as 0): ${errs.map((c) => `${c.label} ${c.errors}`).join(', ')}.`, '');
  const short = r.columns.filter((c) => c.short > 0);
  if (short.length) L.push(`Queries whose ranking held fewer than 100 documents (or the whole corpus), which caps their Recall@100: ${short.map((c) => `${c.label} ${c.short}`).join(', ')}.`, '');
  const sweep = r.columns.filter((c) => c.kind === 'sweep' || c.kind === 'hybrid');
  if (sweep.length > 1) {
    L.push('RRF sweep (nDCG@10; weights keyword/vector), picked on the same queries it reports (optimistic: no held-out split):');
    L.push('');
    L.push('| RRF k | w1:1 | w0.6/0.4 | w0.4/0.6 |');
    L.push('|---:|---:|---:|---:|');
    for (const k of [20, 60, 100]) {
      const cell = (kw: number, v: number) => {
        const c = sweep.find((s) => s.params.rrfK === k && s.params.weights?.keyword === kw && s.params.weights?.vector === v);
        return c ? f4(c.ndcg10) + (c === r.best ? ' **best**' : '') : '—';
      };
      L.push(`| ${k} | ${cell(1, 1)} | ${cell(0.6, 0.4)} | ${cell(0.4, 0.6)} |`);
    }
    L.push('');
  }
  L.push(
    `Ingest: ${(r.ingest.ingestMs / 1000).toFixed(1)} s (read ${(r.ingest.readMs / 1000).toFixed(1)} s, embed ${(r.ingest.embedMs / 1000).toFixed(1)} s for ${r.ingest.embedded} texts, ${r.ingest.cached} from cache; PGlite)` +
      `${r.reusedIndex ? `, measured ${r.ingest.at}; this run reused the index` : ''}. ` +
      `Eval: ${Number.isFinite(r.evalSeconds) ? r.evalSeconds.toFixed(0) : '?'} s for ${r.columns.length} columns x ${r.queries} queries. Latency = the provider's in-process search call ` +
      `(query embedding + SQL + fusion), ${(r.concurrency ?? 1) > 1 ? `${r.concurrency} queries at a time (promptfoo -j ${r.concurrency}: it includes waiting for the database and the cores)` : 'queries run one at a time'}.`,
  );
  if (r.anchorsFile && r.anchors.length) L.push('', `Published figures from ${r.anchorsFile}.`);
  L.push('', `Reproduce: \`${r.command}\``, '');
  return L.join('\n');
}
