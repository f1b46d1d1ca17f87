/**
 * Pooled judging of a sweep's results through the local fake OpenAI-compatible chat API (test/helpers/fake-llm.ts),
 * which grades each passage 0-3 deterministically by word overlap with the query: the pairs, the calls the fake received
 * (exactly one per distinct unlabelled (query, document) pair), cache hits and cost of a first run; a re-run against the
 * labels it wrote (0 pairs, 0 requests); a run into a fresh judgments file with the same verdict cache (every pair from
 * the cache, 0 requests). Prints figures; asserts nothing.
 *
 *   npx promptfoo eval -c promptfooconfig.sweep.ts --output sweep.jsonl          # RANKGATE_SWEEP=quick or full
 *   node --import tsx bench/pool.ts sweep.jsonl [--depth 10] [--judgments OUT.jsonl] [--keep-cache]
 *
 * Then: `rankgate gate sweep.jsonl --judgments OUT.jsonl` (or RANKGATE_JUDGMENTS=OUT.jsonl on the next eval) shows the
 * strict and the + labels figures side by side.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startFakeLlm, type LlmRequest } from '../test/helpers/fake-llm.ts';
import { run } from '../src/cli/judge.ts';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { depth: { type: 'string' }, judgments: { type: 'string' }, 'keep-cache': { type: 'boolean' } } });
const results = positionals[0];
if (!results) {
  console.error('usage: node --import tsx bench/pool.ts RESULTS.jsonl [--depth 10] [--judgments OUT.jsonl] [--keep-cache]');
  process.exit(2);
}

const STOP = new Set('the and for that this with from what does about into when where which their there have your will would could should been than then them they were how why who'.split(' '));
const words = (s: string) => new Set((s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length >= 4 && !STOP.has(w)));
const unescape = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The fake assessor: the share of the query's content words in the passage, as a grade 0-3. */
export function overlapGrade(req: LlmRequest): string {
  const q = [...req.text.matchAll(/<query>([\s\S]*?)<\/query>/g)].at(-1)?.[1] ?? '';
  const p = [...req.text.matchAll(/<passage>([\s\S]*?)<\/passage>/g)].at(-1)?.[1] ?? '';
  const qw = words(unescape(q));
  const pw = words(unescape(p));
  if (!qw.size) return '0';
  const share = [...qw].filter((w) => pw.has(w)).length / qw.size;
  return share >= 0.6 ? '3' : share >= 0.35 ? '2' : share > 0 ? '1' : '0';
}

const dir = mkdtempSync(join(tmpdir(), 'rg-bench-pool-'));
const cache = join(dir, 'cache');
const out = values.judgments ?? join(dir, 'judgments.jsonl');
const fake = await startFakeLlm(overlapGrade);
process.env.OPENAI_BASE_URL = `${fake.url}/v1`;
process.env.OPENAI_API_KEY = 'sk-fake-bench';
const depth = values.depth ?? '10';
const pool = async (what: string, judgments: string) => {
  const before = fake.requests.length;
  const t0 = Date.now();
  console.log(`\n== ${what}`);
  const code = await run(['pool', results, '--depth', depth, '--judgments', judgments, '--judge', 'openai:chat:gpt-4.1-mini', '--cache-dir', cache, '--max-cost', '5']);
  console.log(`== exit ${code} · requests the fake chat API received: ${fake.requests.length - before} · ${((Date.now() - t0) / 1000).toFixed(1)} s`);
};
try {
  await pool('first run', out);
  await pool('re-run against the labels it wrote', out);
  await pool('a fresh judgments file, the same verdict cache', join(dir, 'fresh.jsonl'));
  console.log(`\nlabels: ${out}`);
} finally {
  await fake.close();
  if (!values['keep-cache'] && !values.judgments) rmSync(dir, { recursive: true, force: true });
  else if (!values['keep-cache']) rmSync(cache, { recursive: true, force: true });
}
