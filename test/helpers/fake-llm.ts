/**
 * A fake chat-model server on 127.0.0.1 speaking two vendors' public HTTP APIs, as their references document them:
 *
 * - OpenAI Chat Completions, `POST /v1/chat/completions` (platform.openai.com/docs/api-reference/chat/create):
 *   request `{ model, messages: [{role, content}], temperature, max_tokens }` with `Authorization: Bearer KEY`;
 *   response `{ id, object: "chat.completion", created, model, choices: [{ index, message: { role: "assistant",
 *   content }, finish_reason }], usage: { prompt_tokens, completion_tokens, total_tokens } }`; errors
 *   `{ error: { message, type, code } }`, 429 with `retry-after` (seconds). Every OpenAI-compatible server
 *   (vLLM, TEI, LiteLLM, …) serves the same shape.
 * - Anthropic Messages, `POST /v1/messages` (docs.anthropic.com/en/api/messages): request `{ model, system,
 *   messages: [{role, content}], max_tokens, temperature }` with `x-api-key: KEY` and `anthropic-version`; response
 *   `{ id, type: "message", role: "assistant", model, content: [{ type: "text", text }], stop_reason: "end_turn",
 *   usage: { input_tokens, output_tokens } }`; errors `{ type: "error", error: { type, message } }`, 429
 *   `rate_limit_error` with `retry-after`.
 *
 * `reply(req)` decides each answer from the parsed request (the prompt text is in `req.text`): a string is the
 * model's text, `{ status, retryAfter? }` an HTTP error. Every request is recorded.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface LlmRequest {
  api: 'openai' | 'anthropic';
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** All message text of the request (system + user), for deciding a reply. */
  text: string;
}

export type LlmReply = string | { status: number; retryAfter?: number; message?: string };

export interface FakeLlm {
  url: string;
  port: number;
  requests: LlmRequest[];
  reply: (req: LlmRequest) => LlmReply;
  close(): Promise<void>;
}

function textOf(body: Record<string, unknown>): string {
  const parts: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) if (k === 'content' || k === 'text' || k === 'system') walk(x);
  };
  walk(body.system);
  walk(body.messages);
  return parts.join('\n');
}

/**
 * `opts.apiKey`: the one key the fake accepts (as `Authorization: Bearer KEY` or `x-api-key: KEY`); any other request,
 * `GET /v1/models` included, gets the vendors' 401 `invalid_api_key`. Without it every key (or none) is accepted and
 * GET routes are 404, as a local server without a models list.
 */
export async function startFakeLlm(reply: (req: LlmRequest) => LlmReply = () => 'HIGH', opts: { apiKey?: string } = {}): Promise<FakeLlm> {
  const fake: FakeLlm = { url: '', port: 0, requests: [], reply, close: async () => {} };
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    const path = (req.url ?? '').split('?')[0]!;
    const api = path.endsWith('/messages') ? 'anthropic' : path.endsWith('/chat/completions') ? 'openai' : null;
    res.setHeader('content-type', 'application/json');
    if (opts.apiKey !== undefined) {
      const got = String(req.headers['x-api-key'] ?? String(req.headers.authorization ?? '').replace(/^Bearer /, ''));
      if (got !== opts.apiKey) {
        res.statusCode = 401;
        res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
        return;
      }
      if (req.method === 'GET' && /\/models$/.test(path)) {
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model', object: 'model' }] }));
        return;
      }
    }
    if (req.method !== 'POST' || !api) {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw);
    } catch {
      res.statusCode = 400;
      res.end(JSON.stringify({ error: { message: 'invalid JSON' } }));
      return;
    }
    const r: LlmRequest = { api, path, headers: req.headers, body, text: textOf(body) };
    fake.requests.push(r);
    const out = fake.reply(r);
    if (typeof out !== 'string') {
      res.statusCode = out.status;
      if (out.retryAfter !== undefined) res.setHeader('retry-after', String(out.retryAfter));
      const message = out.message ?? (out.status === 429 ? 'Rate limit reached' : 'server error');
      res.end(JSON.stringify(api === 'anthropic' ? { type: 'error', error: { type: out.status === 429 ? 'rate_limit_error' : 'api_error', message } } : { error: { message, type: out.status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } }));
      return;
    }
    const model = String(body.model ?? 'unknown');
    if (api === 'anthropic') {
      res.end(JSON.stringify({ id: `msg_${fake.requests.length}`, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: out }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 120, output_tokens: 3 } }));
    } else {
      res.end(
        JSON.stringify({
          id: `chatcmpl-${fake.requests.length}`,
          object: 'chat.completion',
          created: 1767225600,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: out }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 2, total_tokens: 102 },
        }),
      );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  fake.port = typeof addr === 'object' && addr ? addr.port : 0;
  fake.url = `http://127.0.0.1:${fake.port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

/** The <search_result> text of a relevance prompt (escaped as the prompt escapes it): the last one, in the user
 * message (the system prompt names the tags too). */
export function searchResultOf(text: string): string {
  const all = [...text.matchAll(/<search_result>([\s\S]*?)<\/search_result>/g)];
  return all.at(-1)?.[1] ?? '';
}
