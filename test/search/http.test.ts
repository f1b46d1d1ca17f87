import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startSearchServer, type RunningServer } from '../../src/search/http.ts';
import { createRouter, loadRoutingConfig } from '../../src/search/routing.ts';
import type { SearchHit, SearchParams, SearchResponse, SearchServiceLike } from '../../src/search/types.ts';

/** A small in-memory search service: keyword overlap ranking, the shipped routing rules. */
class MemoryService implements SearchServiceLike {
  readonly router = createRouter(loadRoutingConfig());
  calls: { query: string; params?: Partial<SearchParams> }[] = [];
  failNext = false;
  delayMs = 0;
  docs = [
    { id: 'lake#c300-0', doc: 'lake', text: 'The lake is still in the early morning and the heron waits.' },
    { id: 'lake#c300-1', doc: 'lake', text: 'Grief is love with nowhere to go; the heron flies over the lake.' },
    { id: 'wind#c300-0', doc: 'wind', text: 'The wind is the restless mind that comes and goes.' },
  ];
  async search(query: string, params?: Partial<SearchParams>): Promise<SearchResponse> {
    this.calls.push({ query, params });
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    if (this.failNext) {
      this.failNext = false;
      throw new Error('database went away');
    }
    const terms = query.toLowerCase().match(/\p{L}+/gu) ?? [];
    const hits: SearchHit[] = this.docs
      .map((d) => ({ d, s: terms.filter((t) => d.text.toLowerCase().includes(t)).length }))
      .filter((x) => x.s > 0)
      .sort((a, b) => b.s - a.s || a.d.id.localeCompare(b.d.id))
      .slice(0, params?.topK ?? 10)
      .map((x, i) => ({
        chunkId: x.d.id,
        documentId: x.d.doc,
        rank: i + 1,
        score: x.s,
        content: x.d.text,
        bookSlug: x.d.doc,
        channels: { keyword: { rank: i + 1, score: x.s } },
      }));
    const routing = params?.routing === false ? { route: 'search' as const, safety: false, reasons: [] } : await this.router.route(query, hits);
    return { hits, routing, diagnostics: { variant: 'mem', keywordCandidates: hits.map((h) => h.chunkId), vectorCandidates: [], timings: {} } };
  }
  async close() {}
}

const service = new MemoryService();
const logged: string[] = [];
let srv: RunningServer;
before(async () => {
  srv = await startSearchServer({
    service,
    port: 0,
    host: '127.0.0.1',
    maxBodyBytes: 4096,
    maxQueryChars: 500,
    bodyTimeoutMs: 300,
    headersTimeoutMs: 300,
    requestTimeoutMs: 2000,
    searchTimeoutMs: 500,
    log: (l) => logged.push(l),
  });
});
after(() => srv.close());

async function post(path: string, body: string | Buffer, contentType = 'application/json') {
  const res = await fetch(srv.url + path, { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : new Uint8Array(body) });
  const text = await res.text();
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `non-JSON ${res.status}: ${text}`);
  return { status: res.status, json: JSON.parse(text) as Record<string, any> };
}

/** Raw request over a socket: returns everything the server sent until it closed (or `waitMs` passed). */
function raw(chunks: { data: string; afterMs?: number }[], waitMs = 3000): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const sock = connect(srv.port, '127.0.0.1');
    let text = '';
    let closed = false;
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ text, closed });
    }, waitMs);
    sock.on('data', (d) => (text += d.toString()));
    sock.on('close', () => {
      closed = true;
      clearTimeout(timer);
      resolve({ text, closed });
    });
    sock.on('error', (e) => (text ? undefined : reject(e)));
    sock.on('connect', async () => {
      for (const c of chunks) {
        if (c.afterMs) await new Promise((r) => setTimeout(r, c.afterMs));
        if (!sock.destroyed) sock.write(c.data);
      }
    });
  });
}

test('portal endpoint: results, practice_bridge and safety flags, routing decision', async () => {
  const r = await post('/api/v1/search', JSON.stringify({ query: 'heron lake', language: 'en', limit: 2 }));
  assert.equal(r.status, 200);
  assert.deepEqual(r.json.results.map((x: any) => x.chunk_id), ['lake#c300-0', 'lake#c300-1']);
  assert.deepEqual(Object.keys(r.json.results[0]).slice(0, 5), ['chunk_id', 'document_id', 'content', 'score', 'rank']);
  assert.equal(r.json.results[0].book_slug, 'lake');
  assert.equal(r.json.practice_bridge, false);
  assert.equal(r.json.safety, false);
  assert.equal(r.json.routing.route, 'search');
  assert.equal(service.calls.at(-1)!.params!.topK, 2);
  assert.equal(service.calls.at(-1)!.params!.language, 'en');

  const bridge = await post('/api/v1/search', JSON.stringify({ query: 'teach me the kriya technique step by step' }));
  assert.equal(bridge.json.practice_bridge, true);
  assert.deepEqual(bridge.json.results, [], 'technique instructions are never returned');

  const crisis = await post('/api/v1/search', JSON.stringify({ query: 'I want to end it all, grief' }));
  assert.equal(crisis.json.safety, true);
  assert.equal(crisis.json.routing.route, 'search');
});

test('typed endpoints: {query, limit} -> {result: [{chunk_id, document_id, content, score, rank}]}, mode passed, routing off', async () => {
  for (const mode of ['semantic', 'keyword', 'hybrid']) {
    const r = await post(`/search/v1/${mode}`, JSON.stringify({ query: 'the wind and the lake', limit: 1 }));
    assert.equal(r.status, 200);
    assert.equal(r.json.result.length, 1);
    assert.deepEqual(Object.keys(r.json.result[0]), ['chunk_id', 'document_id', 'content', 'score', 'rank']);
    assert.equal(service.calls.at(-1)!.params!.mode, mode);
    assert.equal(service.calls.at(-1)!.params!.routing, false);
  }
});

test('oversized body -> 413 JSON (declared and streamed), connection closed', async () => {
  const big = JSON.stringify({ query: 'x'.repeat(10_000) });
  const r = await post('/api/v1/search', big);
  assert.equal(r.status, 413);
  assert.equal(r.json.code, 'payload_too_large');
  // chunked (no content-length): counted while streaming
  const chunked = await raw([
    { data: 'POST /api/v1/search HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n' },
    { data: `2000\r\n${'y'.repeat(0x2000)}\r\n` },
    { data: `2000\r\n${'y'.repeat(0x2000)}\r\n0\r\n\r\n` },
  ]);
  assert.match(chunked.text, /^HTTP\/1\.1 413/);
  assert.match(chunked.text, /"code":"payload_too_large"/);
  assert.ok(chunked.closed);
});

test('wrong content type -> 415 JSON', async () => {
  for (const ct of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']) {
    const r = await post('/api/v1/search', JSON.stringify({ query: 'lake' }), ct);
    assert.equal(r.status, 415, ct);
    assert.equal(r.json.code, 'unsupported_media_type');
  }
  assert.equal((await post('/api/v1/search', JSON.stringify({ query: 'lake' }), 'application/json; charset=UTF-8')).status, 200);
});

test('malformed JSON, invalid UTF-8 and non-object bodies -> 400 JSON', async () => {
  const cases: [string | Buffer, string][] = [
    ['{"query": "lake",}', 'malformed_json'],
    ['', 'malformed_json'],
    [Buffer.from([0x7b, 0x22, 0x71, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]), 'invalid_utf8'],
    ['["lake"]', 'bad_request'],
    ['"lake"', 'bad_request'],
    ['null', 'bad_request'],
  ];
  for (const [body, code] of cases) {
    const r = await post('/api/v1/search', body);
    assert.equal(r.status, 400, String(body));
    assert.equal(r.json.code, code, String(body));
  }
});

test('empty, whitespace, oversized, NUL, lone-surrogate queries and bad limit/language/mode -> 400 naming the field', async () => {
  const cases: [unknown, RegExp][] = [
    [{}, /field 'query': expected a string/],
    [{ query: 42 }, /field 'query': expected a string, got number/],
    [{ query: '' }, /field 'query': expected a non-empty string/],
    [{ query: ' \t\n ' }, /field 'query': expected a non-empty string/],
    [{ query: 'a'.repeat(501) }, /field 'query': 501 characters is over the 500-character limit/],
    [{ query: 'lake\u0000' }, /field 'query': contains a NUL/],
    [{ query: 'lake \ud800' }, /field 'query': contains unpaired surrogates/],
    [{ query: 'lake', limit: 0 }, /field 'limit': expected an integer from 1 to 100/],
    [{ query: 'lake', limit: '5' }, /field 'limit'/],
    [{ query: 'lake', limit: 1.5 }, /field 'limit'/],
    [{ query: 'lake', language: 'english; drop table' }, /field 'language'/],
    [{ query: 'lake', mode: 'fuzzy' }, /field 'mode'/],
  ];
  for (const [body, re] of cases) {
    const r = await post('/api/v1/search', JSON.stringify(body));
    assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
    assert.match(r.json.error, re);
  }
});

test('odd but valid queries are searched: SQL, LIKE wildcards, template syntax, RTL, combining marks, emoji', async () => {
  for (const q of ["lake'; DROP TABLE book_chunks; --", '100% _lake_ \\', '{{ query }} {% if %} lake', 'بحيرة lake', 'e\u0301 lake', '🌊 lake']) {
    const r = await post('/search/v1/keyword', JSON.stringify({ query: q, limit: 3 }));
    assert.equal(r.status, 200, q);
    assert.equal(service.calls.at(-1)!.query, q.trim(), 'query passed through verbatim');
  }
});

test('unknown path -> 404, wrong method -> 405, health -> 200', async () => {
  const nf = await post('/api/v2/search', '{}');
  assert.equal(nf.status, 404);
  assert.equal(nf.json.code, 'not_found');
  const get = await fetch(`${srv.url}/api/v1/search`);
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
  assert.equal((await get.json()).code, 'method_not_allowed');
  const h = await fetch(`${srv.url}/health`);
  assert.equal(h.status, 200);
  assert.deepEqual(await h.json(), { status: 'ok', running: 0, queued: 0, maxConcurrent: 4, maxQueue: 16 });
});

test('a failing service -> 500 JSON logged, a slow one -> 504; the server keeps serving', async () => {
  service.failNext = true;
  const r = await post('/api/v1/search', JSON.stringify({ query: 'lake' }));
  assert.equal(r.status, 500);
  assert.equal(r.json.code, 'internal_error');
  assert.doesNotMatch(r.json.error, /database went away/, 'no internals leak to the client');
  assert.match(logged.join('\n'), /database went away/);
  service.delayMs = 800;
  const slow = await post('/api/v1/search', JSON.stringify({ query: 'lake' }));
  service.delayMs = 0;
  assert.equal(slow.status, 504);
  assert.equal((await post('/api/v1/search', JSON.stringify({ query: 'lake' }))).status, 200);
});

test('slow clients: a stalled body gets 408 JSON, stalled headers get 408 and the socket closed; others are served meanwhile', async () => {
  const slowBody = raw([
    { data: 'POST /api/v1/search HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":' },
  ]);
  const slowHeaders = raw([{ data: 'POST /api/v1/search HTTP/1.1\r\nHost: t\r\n' }]);
  // served while both slow clients hold their sockets
  const ok = await post('/api/v1/search', JSON.stringify({ query: 'wind' }));
  assert.equal(ok.status, 200);
  const b = await slowBody;
  assert.match(b.text, /^HTTP\/1\.1 408/);
  assert.match(b.text, /"code":"request_timeout"/);
  assert.ok(b.closed, 'slow-body socket closed');
  const h = await slowHeaders;
  assert.ok(h.closed, 'slow-header socket closed');
  assert.match(h.text, /^HTTP\/1\.1 408/);
});

test('garbage that is not HTTP gets 400 and the connection closed', async () => {
  const r = await raw([{ data: '\u0000\u0001GARBAGE\r\n\r\n' }]);
  assert.ok(r.closed);
  assert.match(r.text, /^HTTP\/1\.1 400/);
});

test('after all the abuse above, a normal request still succeeds', async () => {
  const r = await post('/api/v1/search', JSON.stringify({ query: 'grief heron', limit: 5 }));
  assert.equal(r.status, 200);
  assert.equal(r.json.results[0].chunk_id, 'lake#c300-1');
});

/** A service whose searches wait for the test to open a gate: what the server does meanwhile is deterministic. */
class GatedService implements SearchServiceLike {
  private open = true;
  private waiters: (() => void)[] = [];
  started = 0;
  close_() {
    this.open = false;
  }
  release() {
    this.open = true;
    for (const w of this.waiters.splice(0)) w();
  }
  async search(): Promise<SearchResponse> {
    this.started++;
    if (!this.open) await new Promise<void>((r) => this.waiters.push(r));
    return { hits: [], routing: { route: 'search', safety: false, reasons: [] }, diagnostics: { variant: 'gated', keywordCandidates: [], vectorCandidates: [], timings: {} } };
  }
  async close() {}
}

test('overload: a full queue or a wait over the limit gets 503 + Retry-After on arrival, while the searches are still running', async () => {
  const gated = new GatedService();
  const s2 = await startSearchServer({ service: gated, port: 0, host: '127.0.0.1', maxConcurrent: 1, maxQueue: 3, maxQueueWaitMs: 100, log: () => {} });
  try {
    const one = async () => {
      const res = await fetch(`${s2.url}/search/v1/keyword`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'lake' }) });
      const body = (await res.json()) as Record<string, any>;
      return { status: res.status, body, retryAfter: res.headers.get('retry-after'), queueMs: Number(res.headers.get('x-rankgate-queue-ms')) };
    };
    assert.equal((await one()).status, 200); // one search measured (instant): the queue can estimate waits from now on
    gated.close_();
    const all = Array.from({ length: 12 }, one);
    // every request that is not admitted is answered while no search has finished: nothing waits to be shed
    const settled: Awaited<ReturnType<typeof one>>[] = [];
    for (const p of all) p.then((r) => settled.push(r));
    while (settled.length < 8) await new Promise((r) => setTimeout(r, 20));
    const health = (await (await fetch(`${s2.url}/health`)).json()) as Record<string, number>;
    assert.equal(health.running, 1);
    assert.equal(health.queued, 3, 'the queue holds maxQueue requests');
    assert.equal(settled.length, 8, 'the other 8 are already answered');
    for (const r of settled) {
      assert.equal(r.status, 503);
      assert.equal(r.body.code, 'overloaded');
      assert.equal(r.retryAfter, '1');
      assert.match(r.body.error, /server busy: .*queue limit 3/);
    }
    // the admitted ones wait longer than maxQueueWaitMs here, and are still served: a request is never shed after waiting
    await new Promise((r) => setTimeout(r, 300));
    gated.release();
    const rs = await Promise.all(all);
    assert.equal(rs.filter((r) => r.status === 200).length, 4, rs.map((r) => r.status).join(','));
    assert.equal(gated.started, 1 + 4, 'only admitted requests reach the service');
    assert.equal((await one()).status, 200, 'serves normally once the burst is over');
  } finally {
    gated.release();
    await s2.close();
  }
});

test('overload: the expected wait (queued x mean search time) over the limit is shed at once, before the body is read', async () => {
  const gated = new GatedService();
  const s2 = await startSearchServer({ service: gated, port: 0, host: '127.0.0.1', maxConcurrent: 1, maxQueue: 50, maxQueueWaitMs: 400, log: () => {} });
  try {
    const post = () => fetch(`${s2.url}/search/v1/keyword`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'lake' }) });
    // teach it that a search holds its slot ~250 ms
    gated.close_();
    const first = post();
    while (gated.started < 1) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 250));
    gated.release();
    assert.equal((await first).status, 200);
    gated.close_();
    const running = post(); // takes the slot
    while (gated.started < 2) await new Promise((r) => setTimeout(r, 10));
    const queued = post(); // expected wait ~250 ms <= 400: admitted
    while (((await (await fetch(`${s2.url}/health`)).json()) as any).queued < 1) await new Promise((r) => setTimeout(r, 10));
    // the next one would wait ~500 ms: 503 at once, with only headers sent (its declared body never arrives)
    const sock = connect(s2.port, '127.0.0.1');
    const text = await new Promise<string>((resolve) => {
      let t = '';
      sock.on('data', (d) => {
        t += d.toString();
        if (t.includes('\r\n\r\n') && /"code":"overloaded"/.test(t)) resolve(t);
      });
      sock.write('POST /search/v1/keyword HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n');
    });
    sock.destroy();
    assert.match(text, /^HTTP\/1\.1 503 /);
    assert.match(text, /retry-after: 1/i);
    assert.match(text, /1 searches waiting, about \d+ ms before this one could start \(queue wait limit 400 ms\)/);
    gated.release();
    assert.equal((await running).status, 200);
    assert.equal((await queued).status, 200);
  } finally {
    gated.release();
    await s2.close();
  }
});
