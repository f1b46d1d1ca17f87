// The url: transport (src/search/url.ts) against hostile services on 127.0.0.1: redirects to another origin,
// oversized and endless bodies, ranks that contradict list order. Every case is an error row (a thrown error),
// never a quietly different ranking.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpSearchService } from '../../src/search/url.ts';
import { validateProviderConfig } from '../../src/search/provider-config.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const servers: ReturnType<typeof createServer>[] = [];
after(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A fake service on 127.0.0.1; `hits` counts the requests it got. */
async function fake(handler: Handler): Promise<{ url: string; origin: string; hits: () => number }> {
  let n = 0;
  const s = createServer((req, res) => {
    n++;
    handler(req, res);
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return { url: `${origin}/api/v1/search`, origin, hits: () => n };
}

const answer = (results: unknown[]): Handler => (req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ results }));
  });
};

test('a redirect to another origin is not followed: an error naming both URLs, and the other host gets nothing', async () => {
  const other = await fake(answer([{ chunk_id: 'evil', rank: 1 }]));
  for (const status of [301, 302, 303, 307, 308]) {
    const svc = await fake((req, res) => {
      req.resume();
      res.writeHead(status, { location: `${other.origin}/api/v1/search` });
      res.end();
    });
    const client = new HttpSearchService(svc.url, 'portal', 5000, 0);
    await assert.rejects(client.search('lake'), (e: Error) => {
      assert.ok(e.message.includes(svc.url), e.message);
      assert.ok(e.message.includes(`${other.origin}/api/v1/search`), e.message);
      assert.match(e.message, new RegExp(`HTTP ${status} redirect to .*another origin .*not followed`));
      return true;
    });
  }
  assert.equal(other.hits(), 0, 'the other origin was never asked');
  // same host, other scheme or port is another origin too
  const port = await fake((req, res) => {
    req.resume();
    res.writeHead(307, { location: 'https://127.0.0.1/api/v1/search' });
    res.end();
  });
  await assert.rejects(new HttpSearchService(port.url, 'portal', 5000, 0).search('lake'), /another origin \(https:\/\/127\.0\.0\.1/);
});

test('a same-origin 307/308 is followed with the POST body; a same-origin 301/302/303 and a redirect loop are errors', async () => {
  const bodies: string[] = [];
  const svc = await fake((req, res) => {
    let b = '';
    req.on('data', (d) => (b += d));
    req.on('end', () => {
      if (req.url === '/api/v1/search') {
        res.writeHead(308, { location: '/api/v1/search/' });
        res.end();
      } else if (req.url === '/api/v1/search/') {
        bodies.push(b);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ results: [{ chunk_id: 'a' }, { chunk_id: 'b' }] }));
      } else if (req.url === '/loop') {
        res.writeHead(307, { location: '/loop' });
        res.end();
      } else {
        res.writeHead(302, { location: '/api/v1/search/' });
        res.end();
      }
    });
  });
  const r = await new HttpSearchService(svc.url, 'portal', 5000, 0).search('lake heron', { topK: 2 });
  assert.deepEqual(r.hits.map((h) => h.chunkId), ['a', 'b']);
  assert.deepEqual(JSON.parse(bodies[0]!), { query: 'lake heron', limit: 2 }, 'the query reached the final address');
  await assert.rejects(new HttpSearchService(`${svc.origin}/old`, 'portal', 5000, 0).search('x'), /HTTP 302 redirect to .*\/api\/v1\/search\/: not followed, since a 302 turns the POST into a GET/);
  await assert.rejects(new HttpSearchService(`${svc.origin}/loop`, 'portal', 5000, 0).search('x'), /more than 5 redirects/);
});

test('a body over maxResponseBytes is an error, read as a stream and abandoned: an endless body is never read whole', async () => {
  let sent = 0;
  let closed!: () => void;
  const gone = new Promise<void>((r) => (closed = r));
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  const svc = await fake((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }); // chunked, no Content-Length: only reading tells
    res.write('{"results": [');
    const pump = () => {
      while (!res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
        if (sent > 700 * 1024 * 1024) return void res.end(']}'); // the 700 MB body of the report
      }
    };
    res.on('close', closed);
    pump();
  });
  const cap = 1024 * 1024;
  await assert.rejects(new HttpSearchService(svc.url, 'portal', 30_000, 0, cap).search('x'), (e: Error) => {
    assert.match(e.message, /response body over the 1 MB limit \(maxResponseBytes: 1048576\); not read further/);
    return true;
  });
  await gone;
  assert.ok(sent < 64 * 1024 * 1024, `the client stopped reading early: the server got rid of ${sent} bytes, not 700 MB`);
});

test('a declared Content-Length over the cap (default 16 MB) is refused before the body is read', async () => {
  let closed!: () => void;
  const gone = new Promise<void>((r) => (closed = r));
  const svc = await fake((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(16 * 1024 * 1024 + 1) });
    res.write('{"results": [');
    res.on('close', closed); // never ends: the client must not wait for the rest
  });
  await assert.rejects(new HttpSearchService(svc.url, 'portal', 30_000, 0).search('x'), /over the 16 MB limit \(maxResponseBytes: 16777216\); not read further \(Content-Length 16777217\)/);
  await gone;
  // an answer at the cap is read
  const ok = await fake(answer([{ chunk_id: 'a', content: 'x'.repeat(2000) }]));
  assert.equal((await new HttpSearchService(ok.url, 'portal', 5000, 0, 4096).search('x')).hits.length, 1);
});

test('a rank that contradicts list order is an error naming the result; ranks in list order or absent are read', async () => {
  const bad = await fake(answer([{ chunk_id: 'a', rank: 2 }, { chunk_id: 'b', rank: 1 }]));
  await assert.rejects(new HttpSearchService(bad.url, 'portal', 5000, 0).search('x'), /result 0 \(chunk_id "a"\) has rank 2 but is number 1 in the list; rank must match list order/);
  for (const results of [[{ chunk_id: 'a', rank: 1 }, { chunk_id: 'b', rank: 3 }], [{ chunk_id: 'a', rank: '1' }], [{ chunk_id: 'a', rank: 1.5 }]]) {
    const svc = await fake(answer(results));
    await assert.rejects(new HttpSearchService(svc.url, 'portal', 5000, 0).search('x'), /rank must match list order/, JSON.stringify(results));
  }
  const good = await fake(answer([{ chunk_id: 'a', rank: 1 }, { chunk_id: 'b', rank: 2 }, { chunk_id: 'c' }, { chunk_id: 'd', rank: null }]));
  const r = await new HttpSearchService(good.url, 'portal', 5000, 0).search('x');
  assert.deepEqual(r.hits.map((h) => [h.chunkId, h.rank]), [['a', 1], ['b', 2], ['c', 3], ['d', 4]]);
});

test('maxResponseBytes is a provider config key: an integer from 1024 to 2^31, else one line naming it', () => {
  const ctx = { basePath: '/nonexistent', providerId: 'file://providers/search.ts', argv: [] };
  validateProviderConfig({ url: 'http://127.0.0.1:9/api/v1/search', maxResponseBytes: 1048576 }, ctx);
  for (const v of [512, 1.5, '16MB', 2 ** 32]) {
    assert.throws(() => validateProviderConfig({ url: 'http://127.0.0.1:9/api/v1/search', maxResponseBytes: v }, ctx), /config\.maxResponseBytes: expected an integer from 1024 to 2147483648/);
  }
  assert.throws(() => validateProviderConfig({ url: 'http://127.0.0.1:9/api/v1/search', maxResponseByte: 1e6 }, ctx), /did you mean 'maxResponseBytes'/);
});

test('a reranked service: diagnostics.rerank (camelCase or snake_case) is read, checked, and a wrong field errors naming it', async () => {
  const body = (rerank: unknown): Handler => (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: [{ chunk_id: 'a' }, { chunk_id: 'b' }], diagnostics: { rerank } }));
    });
  };
  const ok = await fake(body({ reranker: 'bge-reranker', budget: 3, first_stage: ['b', 'a', 'c', 'd'], reranked: ['a', 'b', 'c'], ms: 12.5, cost_usd: 0.0001 }));
  const r = await new HttpSearchService(ok.url, 'portal', 5000, 0).search('lake');
  assert.deepEqual(r.diagnostics.rerank, { budget: 3, firstStage: ['b', 'a', 'c', 'd'], reranker: 'bge-reranker', reranked: ['a', 'b', 'c'], ms: 12.5, costUsd: 0.0001 });
  assert.deepEqual(r.diagnostics.keywordCandidates, []);
  // no block: today's behaviour (no diagnostics)
  const plain = await fake(answer([{ chunk_id: 'a' }]));
  assert.equal((await new HttpSearchService(plain.url, 'portal', 5000, 0).search('lake')).diagnostics, null);
  const bad: [unknown, RegExp][] = [
    [{ firstStage: ['a'], budget: 0 }, /diagnostics\.rerank\.budget: expected a positive integer .*got 0/],
    [{ firstStage: ['a'], budget: 2.5 }, /diagnostics\.rerank\.budget: expected a positive integer/],
    [{ firstStage: ['a'], budget: '5' }, /diagnostics\.rerank\.budget: expected a positive integer .*got "5"/],
    [{ budget: 5 }, /diagnostics\.rerank\.firstStage: missing/],
    [{ firstStage: 'a,b', budget: 5 }, /diagnostics\.rerank\.firstStage: expected an array of result ids/],
    [{ firstStage: ['a', 7], budget: 5 }, /diagnostics\.rerank\.firstStage\[1\]: expected a result id .*got 7/],
    [{ firstStage: ['a', 'a'], budget: 5 }, /diagnostics\.rerank\.firstStage\[1\]: id "a" appears twice/],
    [{ firstStage: Array.from({ length: 10_001 }, (_, i) => `c${i}`), budget: 5 }, /diagnostics\.rerank\.firstStage: 10001 ids, more than 10000/],
    [{ firstStage: ['a', 'b', 'c'], budget: 2, reranked: ['c'] }, /diagnostics\.rerank\.reranked\[0\]: id "c" is not among the first 2 \(budget\) ids of firstStage/],
    [{ firstStage: ['a'], budget: 1, reranker: 5 }, /diagnostics\.rerank\.reranker: expected a name/],
    [{ firstStage: ['a'], budget: 1, ms: -1 }, /diagnostics\.rerank\.ms: expected a finite number >= 0/],
    [{ firstStage: ['a'], budget: 1, firstStageIds: [] }, /diagnostics\.rerank\.firstStageIds: unknown field/],
    ['yes', /diagnostics\.rerank: expected an object/],
    // W4: a block that contradicts itself or the results it came with
    [{ firstStage: ['a', 'b', 'c'], budget: 5000 }, /diagnostics\.rerank\.budget: 5000 is more than the 3 ids of firstStage: the reranker cannot have seen more candidates/],
    [{ firstStage: ['a', 'b', 'c'], budget: 3, ms: 1e300 }, /diagnostics\.rerank\.ms: expected a number of at most 5000 ms \(the call's deadline, timeoutMs/],
    [{ firstStage: ['a', 'b', 'c'], budget: 3, costUsd: 1e300 }, /diagnostics\.rerank\.costUsd: expected a number of at most 10 \(USD for one query\), got 1e\+300/],
    [{ firstStage: ['a', 'b', 'c'], budget: 3, tokens: 1e12 }, /diagnostics\.rerank\.tokens: expected a number of at most 100000000/],
    [{ firstStage: ['a', 'b', 'c'], budget: 2, requests: 3 }, /diagnostics\.rerank\.requests: expected a number of at most the budget \(2/],
    [{ firstStage: ['a', 'b', 'c'], budget: 0 }, /diagnostics\.rerank\.budget: expected a positive integer .*0 only with an empty firstStage/],
    [{ firstStage: ['x', 'b', 'y'], budget: 2 }, /diagnostics\.rerank: result 1 \("a"\) is not among the ids of firstStage: a reranker only reorders its first stage/],
    // forged gain: the first stage says b then a were its order past the budget, the results say a then b
    [{ firstStage: ['c', 'b', 'a'], budget: 1, reranked: ['c'] }, /diagnostics\.rerank: results 1 and 2 \("a", "b"\) are not in the block's final order .*: the results past the budget out of first-stage order/],
    [{ firstStage: ['b', 'a', 'c'], budget: 2, reranked: ['b', 'a'] }, /diagnostics\.rerank: results 1 and 2 \("a", "b"\) are not in the block's final order .*: the budget out of the order of reranked/],
    [{ firstStage: ['b', 'c', 'a'], budget: 1 }, /diagnostics\.rerank: results 1 and 2 \("a", "b"\) are not in the block's final order .*a result from inside the budget after one from past it/],
  ];
  for (const [rerank, re] of bad) {
    const svc = await fake(body(rerank));
    await assert.rejects(new HttpSearchService(svc.url, 'portal', 5000, 0).search('lake'), (e: Error) => {
      assert.match(e.message, re);
      assert.match(e.message, /docs\/search\.md#a-reranked-service/);
      assert.equal(e.message.includes('\n'), false, 'one line');
      return true;
    });
  }
});

test('a module: service\'s diagnostics.rerank is checked the same way (withServiceRerank)', async () => {
  const { withServiceRerank } = await import('../../src/search/service-rerank.ts');
  const res = (d: unknown) => ({ hits: [], routing: { route: 'search' as const, safety: false, reasons: [] }, diagnostics: d as never });
  const kept = withServiceRerank(res({ variant: 'v', keywordCandidates: ['k'], vectorCandidates: [], timings: {}, rerank: { budget: 2, firstStage: ['x', 'y'], requests: 1 } }), 'module m');
  assert.deepEqual(kept.diagnostics.rerank, { budget: 2, firstStage: ['x', 'y'], requests: 1 });
  assert.deepEqual(kept.diagnostics.keywordCandidates, ['k'], 'the rest of the diagnostics kept');
  assert.throws(() => withServiceRerank(res({ rerank: { budget: -3, firstStage: [] } }), 'module ./s.ts: search() diagnostics'), (e: Error) => /^module \.\/s\.ts: search\(\) diagnostics\.rerank\.budget: expected a positive integer/.test(e.message));
  assert.throws(() => withServiceRerank(res([1]), 'module m'), /module m: expected an object/);
  assert.equal(withServiceRerank(res(null), 'module m').diagnostics, null, 'no diagnostics: as before');
  // the module's results against its block, and its deadline: the provider's timeoutMs (else MAX_STAGE_MS)
  const hits = (ids: string[]) => ids.map((id, i) => ({ chunkId: id, documentId: id.split('#')[0]!, rank: i + 1, score: 0, content: '', channels: {} }));
  const withHits = (ids: string[], rerank: unknown) => ({ ...res({ rerank }), hits: hits(ids) });
  assert.ok(withServiceRerank(withHits(['d2#c1', 'd1#c4'], { budget: 2, firstStage: ['d1', 'd2', 'd3'], reranked: ['d2', 'd1'] }), 'module m').diagnostics.rerank, 'a first stage of documents places chunk results by their document');
  assert.throws(() => withServiceRerank(withHits(['z'], { budget: 1, firstStage: ['a'] }), 'module m'), /module m\.rerank: result 1 \("z"\) is not among the ids of firstStage/);
  assert.throws(() => withServiceRerank(withHits([], { budget: 1, firstStage: ['a'], ms: 700_000 }), 'module m'), /ms: expected a number of at most 600000 ms \(MAX_STAGE_MS/);
  assert.throws(() => withServiceRerank(withHits([], { budget: 1, firstStage: ['a'], ms: 2_000 }), 'module m', 1_000), /ms: expected a number of at most 1000 ms \(the call's deadline/);
});

test('S1: a url:\'s credentials never sit in the provider config: a password, a secret query parameter, a key: one line each with the environment form', () => {
  const ctx = { basePath: '/nonexistent', providerId: 'file://providers/search.ts', argv: [] };
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ url: 'http://evaluser:s3cr3t-pw@127.0.0.1:9/api/v1/search' }, /config\.url holds a password \(promptfoo would store it in its own database with the eval\): leave it out of the config and pass it from the environment: RANKGATE_URL_PASSWORD=… \(HTTP Basic, with the url's user name: http:\/\/user@host\/…\), RANKGATE_URL_API_KEY=… \(Authorization: Bearer\) or RANKGATE_URL_HEADERS=/],
    [{ url: 'http://127.0.0.1:9/api/v1/search?api_key=abc123' }, /config\.url holds a secret in its query \(api_key=…;/],
    [{ url: 'http://127.0.0.1:9/api/v1/search', api_key: 'abc123' }, /config\.api_key: a url: service's credentials/],
    [{ url: 'http://127.0.0.1:9/api/v1/search', apiKey: 'abc123' }, /config\.apiKey: a url: service's credentials/],
    [{ url: 'http://127.0.0.1:9/api/v1/search', headers: { Authorization: 'Bearer abc123' } }, /config\.headers: a url: service's credentials/],
  ];
  for (const [config, re] of cases) {
    assert.throws(() => validateProviderConfig(config, ctx), (e: Error) => {
      assert.match(e.message, re);
      assert.ok(!e.message.includes('s3cr3t-pw') && !e.message.includes('abc123'), 'the secret itself is never printed');
      assert.equal(e.message.includes('\n'), false);
      return true;
    });
  }
  // a user name alone is no secret
  validateProviderConfig({ url: 'http://evaluser@127.0.0.1:9/api/v1/search' }, ctx);
});

test('S1: the environment forms: RANKGATE_URL_PASSWORD (Basic with the url\'s user), RANKGATE_URL_API_KEY, RANKGATE_URL_HEADERS; a bad JSON is one line', async () => {
  const seen: Record<string, string | undefined>[] = [];
  const svc = await fake((req, res) => {
    seen.push({ authorization: req.headers.authorization, key: req.headers['x-api-key'] as string | undefined });
    answer([{ chunk_id: 'a' }])(req, res);
  });
  const saved = { ...process.env };
  try {
    process.env.RANKGATE_URL_PASSWORD = 'pw-from-env-123';
    await new HttpSearchService(svc.url.replace('http://', 'http://evaluser@'), 'portal', 5000, 0).search('q');
    assert.equal(seen.at(-1)!.authorization, `Basic ${Buffer.from('evaluser:pw-from-env-123').toString('base64')}`);
    delete process.env.RANKGATE_URL_PASSWORD;
    process.env.RANKGATE_URL_API_KEY = 'key-from-env-456';
    process.env.RANKGATE_URL_HEADERS = '{"x-api-key": "hdr-from-env-789"}';
    await new HttpSearchService(svc.url, 'portal', 5000, 0).search('q');
    assert.deepEqual(seen.at(-1), { authorization: 'Bearer key-from-env-456', key: 'hdr-from-env-789' });
    process.env.RANKGATE_URL_HEADERS = '{"x-api-key": 5}';
    await assert.rejects(new HttpSearchService(svc.url, 'portal', 5000, 0).search('q'), /RANKGATE_URL_HEADERS: expected a JSON object of header names and string values/);
    const { redactText } = await import('../../src/util/redact.ts');
    process.env.RANKGATE_URL_HEADERS = '{"x-api-key": "hdr-from-env-789"}';
    process.env.RANKGATE_URL_PASSWORD = 'pw-from-env-123';
    assert.equal(redactText('echo pw-from-env-123 key-from-env-456 hdr-from-env-789'), 'echo *** *** ***', 'every value is a secret');
  } finally {
    process.env = saved;
  }
});
