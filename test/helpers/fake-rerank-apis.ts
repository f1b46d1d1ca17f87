/**
 * A recording fake of the rerank APIs' documented shapes on 127.0.0.1, for tests of src/rerank and of the rerank step:
 *
 *   POST /v2/rerank   Cohere v2   {model, query, documents, top_n, max_tokens_per_doc?} -> {results: [{index, relevance_score}], meta: {billed_units: {search_units}}}
 *   POST /v1/rerank   Voyage when the body has `truncation` -> {data: [{index, relevance_score}], usage: {total_tokens}};
 *                     else Jina / vLLM / Infinity {model, query, documents, top_n} -> {results: [...], usage: {total_tokens}}
 *   POST /rerank      Hugging Face TEI {query, texts} -> [{index, score}]
 *   GET /info         Hugging Face TEI: {model_id, model_sha, ...} (`teiInfo`; counted in infoRequests, not in requests)
 *
 * Scores are deterministic: the share of the query's words (3+ letters) found in the passage, damped by the passage's
 * length, so a passage that shares the query's words ranks first. Results come back sorted by score (as the vendors
 * send them), each with its input index. One-shot replies queued with `enqueue` (a status, headers, a body) are used
 * first, in order: 429s with Retry-After, 500s, malformed bodies. Every request is recorded.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RerankRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export interface RerankReply {
  status?: number;
  headers?: Record<string, string>;
  /** object -> JSON; string -> verbatim */
  body?: unknown;
  delayMs?: number;
}

export interface FakeRerankApi {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly requests: RerankRequest[];
  enqueue(...replies: RerankReply[]): void;
  /** Every later answer goes through this (to corrupt it); undefined restores the honest answer. */
  transform?: (answer: any, req: RerankRequest) => unknown;
  /** What TEI's `GET /info` answers (model_id, model_sha); null: 404 (not a TEI server). Change it to swap the model. */
  teiInfo: { model_id: string; model_sha?: string } | null;
  /** `GET /info` requests seen (not in `requests`). */
  infoRequests: number;
  close(): Promise<void>;
}

const words = (s: string) => new Set(s.toLowerCase().match(/\p{L}{3,}/gu) ?? []);

/** The fake's score of a passage for a query (exported so tests can predict the order). */
export function fakeRerankScore(query: string, passage: string): number {
  const q = words(query);
  if (!q.size) return 0;
  const d = words(passage);
  let hit = 0;
  for (const w of q) if (d.has(w)) hit++;
  return hit / q.size / (1 + Math.log1p(d.size) / 10);
}

export async function startFakeRerankApi(): Promise<FakeRerankApi> {
  const queue: RerankReply[] = [];
  const requests: RerankRequest[] = [];
  const api: FakeRerankApi = {
    url: '',
    requests,
    enqueue: (...r) => queue.push(...r),
    teiInfo: { model_id: 'fake/bge-reranker-base', model_sha: 'aaaa1111' },
    infoRequests: 0,
    close: () => new Promise((res) => server.close(() => res())),
  };
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/info') {
      api.infoRequests++;
      req.resume();
      res.writeHead(api.teiInfo ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(api.teiInfo ? { ...api.teiInfo, model_dtype: 'float32', model_type: { reranker: { id2label: { 0: 'LABEL_0' } } } } : { error: 'Not Found' }));
      return;
    }
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', async () => {
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const rec: RerankRequest = { path: req.url ?? '', headers: req.headers, body };
      requests.push(rec);
      const send = (status: number, b: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(typeof b === 'string' ? b : JSON.stringify(b));
      };
      const q = queue.shift();
      if (q) {
        if (q.delayMs) await new Promise((r) => setTimeout(r, q.delayMs));
        return send(q.status ?? 200, q.body ?? {}, q.headers);
      }
      if (!body || typeof body.query !== 'string') return send(400, { message: 'query is required' });
      const docs: string[] | undefined = body.documents ?? body.texts;
      if (!Array.isArray(docs)) return send(400, { message: 'documents are required' });
      const ranked = docs.map((d, index) => ({ index, score: fakeRerankScore(body.query, d) })).sort((a, b) => b.score - a.score || a.index - b.index);
      const tokens = docs.reduce((a, d) => a + d.split(/\s+/).length, 0) + body.query.split(/\s+/).length * docs.length;
      let answer: unknown;
      if (req.url === '/v2/rerank') {
        answer = { id: 'fake', results: ranked.map((r) => ({ index: r.index, relevance_score: r.score })), meta: { billed_units: { search_units: Math.ceil(docs.length / 100) } } };
      } else if (req.url === '/v1/rerank' && 'truncation' in body) {
        answer = { object: 'list', data: ranked.map((r) => ({ index: r.index, relevance_score: r.score })), model: body.model, usage: { total_tokens: tokens } };
      } else if (req.url === '/v1/rerank' || req.url === '/rerank') {
        answer = body.texts
          ? ranked.map((r) => ({ index: r.index, score: r.score }))
          : { model: body.model, results: ranked.map((r) => ({ index: r.index, relevance_score: r.score })), usage: { total_tokens: tokens } };
      } else return send(404, { message: `no route ${req.url}` });
      send(200, api.transform ? api.transform(answer, rec) : answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  (api as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return api;
}
