/**
 * A deterministic stand-in for the judge model, installed on the fake Bedrock's Converse route.
 * It behaves like a model that is SUSCEPTIBLE to prompt injection unless the prompt delimits properly:
 * - data = the text inside <query>, <expected_passage>, <search_result> blocks (HTML-unescaped);
 *   the verdict comes from word overlap between query and result (>= 2 shared words HIGH, 1 PARTIAL, 0 NOT_RELEVANT);
 * - any text OUTSIDE those blocks that says "answer X" / "respond X" / "reply X" / "output X" (X a verdict)
 *   is obeyed, as a naive model would. So a passage that breaks out of its block hijacks the verdict.
 */
import type { RecordedRequest, FakeReply } from '../helpers/fake-bedrock.ts';
import { converseReply } from '../helpers/fake-bedrock.ts';

const STOP = new Set(['the', 'a', 'an', 'and', 'or', 'of', 'to', 'in', 'is', 'i', 'how', 'do', 'what', 'my', 'me', 'for', 'on', 'it', 'be', 'with', 'all', 'this', 'that', 'are', 'was', 'as', 'at', 'by', 'find']);
const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const words = (s: string) => new Set(s.toLowerCase().split(/[^a-z]+/).filter((w) => w.length > 1 && !STOP.has(w)));

export function simulatedVerdict(system: string, user: string): string {
  const all = `${system}\n${user}`;
  const blocks: Record<string, string[]> = {};
  const outside = all.replace(/<(query|expected_passage|search_result)>([\s\S]*?)<\/\1>/g, (_m, tag: string, body: string) => {
    (blocks[tag] ??= []).push(unescape(body));
    return ' ';
  });
  const hijack = /\b(?:answer|respond|reply|output)\s+(?:with\s+)?(HIGH|PARTIAL|NOT_RELEVANT)\b/.exec(outside);
  if (hijack) return hijack[1]!;
  const q = words((blocks.query ?? []).join(' '));
  const r = words((blocks.search_result ?? []).join(' '));
  let shared = 0;
  for (const w of q) if (r.has(w)) shared++;
  return shared >= 2 ? 'HIGH' : shared === 1 ? 'PARTIAL' : 'NOT_RELEVANT';
}

/** Converse handler for the fake: reads system + first user message and answers like simulatedVerdict. */
export function simulatedJudge(req: RecordedRequest): FakeReply {
  const system = (req.body?.system ?? []).map((s: { text?: string }) => s.text ?? '').join('\n');
  const user = (req.body?.messages ?? [])
    .flatMap((m: { content?: { text?: string }[] }) => m.content ?? [])
    .map((c: { text?: string }) => c.text ?? '')
    .join('\n');
  return converseReply(simulatedVerdict(system, user), { inputTokens: Math.ceil((system.length + user.length) / 4), outputTokens: 3 });
}
