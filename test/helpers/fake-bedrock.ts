/**
 * A recording fake of the Bedrock Runtime HTTP API, for tests that drive the REAL AWS SDK
 * (and promptfoo's Bedrock provider) on 127.0.0.1 with no network.
 *
 * - Listens on 127.0.0.1:<random port> with plain node:http (clients need `NodeHttpHandler`).
 * - Records every request: method, path, model id (URL-decoded), operation (`invoke`, `converse`, ...),
 *   headers (so SigV4 signing can be checked) and the parsed JSON body.
 * - Replies per (model, operation): one-shot replies queued with `enqueue` / `throttle` are used
 *   first (in order), then the handler installed with `on`, then the built-in default:
 *   Titan v2 and Cohere v3 return deterministic vectors derived from the text; Converse answers "HIGH".
 * - A reply can set status, headers, a JSON or raw (malformed) body, and a delay.
 *
 *   const fake = await startFakeBedrock();
 *   fake.throttle('amazon.titan-embed-text-v2:0', 'invoke', 1);   // one 429 ThrottlingException
 *   fake.on('*', 'converse', (req) => converseReply('PARTIAL'));
 *   ... new BedrockRuntimeClient({ endpoint: fake.url, region: 'us-east-1', credentials: FAKE_CREDENTIALS,
 *                                  requestHandler: new NodeHttpHandler() })
 *   await fake.close();
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

export const FAKE_CREDENTIALS = { accessKeyId: 'AKIDFAKEFAKEFAKE', secretAccessKey: 'fake-secret-key' } as const;
export const FAKE_REGION = 'us-east-1';

export interface RecordedRequest {
  method: string;
  path: string;
  /** URL-decoded model id from /model/<id>/<operation>. */
  modelId: string;
  /** Last path segment: invoke, converse, invoke-with-response-stream, converse-stream. */
  operation: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON body, or undefined when it is not JSON. */
  body: any;
  /** Status the fake answered with. */
  status?: number;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** Object -> JSON; string -> sent verbatim (use for malformed bodies). */
  body?: unknown;
  /** Wait this long before answering (timeouts). */
  delayMs?: number;
}

export type FakeHandler = (req: RecordedRequest) => FakeReply | Promise<FakeReply>;

export interface FakeBedrock {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests for one model (and operation). */
  requestsFor(modelId: string, operation?: string): RecordedRequest[];
  /** Install the handler for a model id (or '*') and operation. */
  on(modelId: string, operation: string, handler: FakeHandler): void;
  /** Remove a handler installed with `on` (the default reply applies again). */
  off(modelId: string, operation: string): void;
  /** Queue one-shot replies, used before any handler. */
  enqueue(modelId: string, operation: string, ...replies: FakeReply[]): void;
  /** Queue `n` 429 ThrottlingException replies. */
  throttle(modelId: string, operation: string, n?: number): void;
  /** Forget recorded requests (handlers and queues stay). */
  clearRequests(): void;
  close(): Promise<void>;
}

export function throttlingReply(): FakeReply {
  return {
    status: 429,
    headers: { 'x-amzn-errortype': 'ThrottlingException' },
    body: { message: 'Too many requests, please wait before trying again.' },
  };
}

export function serverErrorReply(status = 500, type = 'InternalServerException'): FakeReply {
  return { status, headers: { 'x-amzn-errortype': type }, body: { message: `fake ${type}` } };
}

export function validationErrorReply(message = 'Malformed input request'): FakeReply {
  return { status: 400, headers: { 'x-amzn-errortype': 'ValidationException' }, body: { message } };
}

/** A Converse response carrying `text`, with token usage. */
export function converseReply(text: string, usage = { inputTokens: 100, outputTokens: 3 }): FakeReply {
  return {
    body: {
      output: { message: { role: 'assistant', content: [{ text }] } },
      stopReason: 'end_turn',
      usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens },
      metrics: { latencyMs: 1 },
    },
  };
}

/** Deterministic unit-ish vector for a text (sha256-seeded), so tests can check which text got which vector. */
export function fakeVector(text: string, dim: number): number[] {
  const out: number[] = [];
  let block = 0;
  while (out.length < dim) {
    const h = createHash('sha256').update(`${block++}\u0000${text}`).digest();
    for (let i = 0; i + 1 < h.length && out.length < dim; i += 2) out.push((h.readUInt16BE(i) - 32768) / 32768);
  }
  return out;
}

function defaultReply(req: RecordedRequest): FakeReply {
  if (req.operation === 'invoke' && req.modelId.startsWith('amazon.titan-embed-text-v2')) {
    const text = String(req.body?.inputText ?? '');
    const dim = Number(req.body?.dimensions ?? 1024);
    return { body: { embedding: fakeVector(text, dim), inputTextTokenCount: text.split(/\s+/).filter(Boolean).length } };
  }
  if (req.operation === 'invoke' && req.modelId.startsWith('cohere.embed-')) {
    const texts: string[] = Array.isArray(req.body?.texts) ? req.body.texts : [];
    if (texts.length > 96) return validationErrorReply('texts: at most 96 texts');
    if (texts.some((t) => t.length > 2048)) return validationErrorReply('texts: each text at most 2048 characters');
    return {
      body: { id: 'fake', response_type: 'embeddings_floats', texts, embeddings: texts.map((t) => fakeVector(t, 1024)) },
    };
  }
  if (req.operation === 'converse') return converseReply('HIGH');
  return { status: 404, headers: { 'x-amzn-errortype': 'ResourceNotFoundException' }, body: { message: `fake: no model ${req.modelId}` } };
}

export async function startFakeBedrock(): Promise<FakeBedrock> {
  const requests: RecordedRequest[] = [];
  const handlers = new Map<string, FakeHandler>();
  const queues = new Map<string, FakeReply[]>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const key = (m: string, op: string) => `${m}\u0000${op}`;

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const m = /^\/model\/([^/]+)\/([^/]+)$/.exec(url.pathname);
      let body: any;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = undefined;
      }
      const rec: RecordedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        modelId: m ? decodeURIComponent(m[1]!) : '',
        operation: m ? m[2]! : '',
        headers: req.headers,
        rawBody,
        body,
      };
      requests.push(rec);
      let reply: FakeReply;
      try {
        const q = queues.get(key(rec.modelId, rec.operation)) ?? queues.get(key('*', rec.operation));
        const h = handlers.get(key(rec.modelId, rec.operation)) ?? handlers.get(key('*', rec.operation));
        reply = q && q.length ? q.shift()! : h ? await h(rec) : defaultReply(rec);
      } catch (e) {
        reply = serverErrorReply(500, 'InternalServerException');
        reply.body = { message: `fake handler threw: ${(e as Error).message}` };
      }
      const send = () => {
        if (res.destroyed) return;
        const status = reply.status ?? 200;
        rec.status = status;
        const payload = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? {});
        res.writeHead(status, {
          'content-type': 'application/json',
          'x-amzn-requestid': `fake-${requests.length}`,
          ...(reply.headers ?? {}),
        });
        res.end(payload);
      };
      if (reply.delayMs) {
        const t = setTimeout(() => {
          timers.delete(t);
          send();
        }, reply.delayMs);
        timers.add(t);
      } else send();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const enqueue = (modelId: string, operation: string, ...replies: FakeReply[]) => {
    const k = key(modelId, operation);
    queues.set(k, [...(queues.get(k) ?? []), ...replies]);
  };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    requestsFor: (modelId, operation) => requests.filter((r) => r.modelId === modelId && (!operation || r.operation === operation)),
    on: (modelId, operation, handler) => void handlers.set(key(modelId, operation), handler),
    off: (modelId, operation) => void handlers.delete(key(modelId, operation)),
    enqueue,
    throttle: (modelId, operation, n = 1) => enqueue(modelId, operation, ...Array.from({ length: n }, throttlingReply)),
    clearRequests: () => void requests.splice(0, requests.length),
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * A Bedrock endpoint that is up but dead: it accepts TCP connections on 127.0.0.1 and never answers (nor closes
 * them). `connections` counts the connections made; close() destroys them.
 */
export interface DeadBedrock {
  readonly url: string;
  readonly connections: number;
  close(): Promise<void>;
}

export async function startDeadBedrock(): Promise<DeadBedrock> {
  const { createServer: createTcpServer } = await import('node:net');
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createTcpServer((s) => {
    connections++;
    sockets.add(s);
    s.on('data', () => {}); // read and ignore the request
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
