/**
 * The benchmark's promptfoo provider: rankgate's own providers/search.ts, with the output slimmed for
 * deep rankings. A BEIR run asks for ~150 hits per query and column (Recall@100 needs 100 documents);
 * passage text and first-stage candidate lists would make promptfoo hold (and write) hundreds of MB, and
 * no BEIR measure reads them. Everything the rank assertions read (rank, chunkId, documentId, score,
 * latencyMs, routing) is passed through unchanged.
 */
import SearchProvider from '../../providers/search.ts';

/** Rows answered by every column of this eval (one promptfoo process), for the progress line. */
let answered = 0;

export default class BeirSearchProvider extends SearchProvider {
  static override extraConfigKeys = ['benchRows'];
  override async callApi(prompt: string, context?: Parameters<SearchProvider['callApi']>[1]) {
    const r = await super.callApi(prompt, context);
    const total = Number(this.config.benchRows);
    answered++;
    if (total > 0 && (answered % 100 === 0 || answered === total)) process.stderr.write(`bench:beir eval ${answered}/${total} rows\n`);
    const h = r.metadata?.harness; // the structured ranking (the output itself is the readable top 10)
    if (r.metadata && h) {
      r.metadata = {
        ...r.metadata,
        harness: { ...h, ids: [], hits: h.hits.map((x) => ({ rank: x.rank, chunkId: x.chunkId, documentId: x.documentId, score: x.score, content: '' })) },
      };
    }
    if (r.metadata?.diagnostics) {
      const d = r.metadata.diagnostics;
      r.metadata = { ...r.metadata, diagnostics: { ...d, keywordCandidates: [], vectorCandidates: [] } };
    }
    return r;
  }
}
