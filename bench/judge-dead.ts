/**
 * How long a dead judge holds an eval: a real `promptfoo eval` of 10 queries (the reliability fixture service,
 * 2 results per query to judge = 20 judgements) with the Bedrock judge pointed at a server on 127.0.0.1 that
 * accepts connections and never answers. Prints the wall time, the connections the dead endpoint received and
 * how the judgements ended. Default deadlines unless given (the judge's own env settings apply too).
 *
 *   node --import tsx bench/judge-dead.ts [--timeout-ms N] [--call-timeout-ms N] [--unreachable-after N] [--budget-s N]
 *
 * Before the call timeout and the unreachable cut-off, each judgement took 9 attempts x 30 s (273.7 s) and a
 * 10-query eval was still running after 420 s.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: { 'timeout-ms': { type: 'string' }, 'call-timeout-ms': { type: 'string' }, 'unreachable-after': { type: 'string' }, 'budget-s': { type: 'string' } },
});
const judgeConfig: Record<string, number> = {};
if (values['timeout-ms']) judgeConfig.timeoutMs = Number(values['timeout-ms']);
if (values['call-timeout-ms']) judgeConfig.callTimeoutMs = Number(values['call-timeout-ms']);
if (values['unreachable-after']) judgeConfig.unreachableAfter = Number(values['unreachable-after']);
if (values['budget-s']) judgeConfig.budgetSeconds = Number(values['budget-s']);

const sockets = new Set<Socket>();
let connections = 0;
const dead = createServer((s) => {
  connections++;
  sockets.add(s);
  s.on('data', () => {});
  s.on('error', () => {});
  s.on('close', () => sockets.delete(s));
});
await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
const endpoint = `http://127.0.0.1:${(dead.address() as { port: number }).port}`;

const dir = mkdtempSync(join(tmpdir(), 'rankgate-judge-dead-'));
const golden = Array.from({ length: 10 }, (_, i) => ({
  id: `dj-${i}`,
  query: `what is still water ${i}`,
  language: 'en',
  category: 'direct',
  expected: [{ chunk_id: 'lake#c1', grade: 3, relevant: true }],
}));
writeFileSync(join(dir, 'golden.json'), JSON.stringify(golden));
const fixtures = join(ROOT, 'test', 'fixtures', 'reliability');
const config = join(dir, 'promptfooconfig.yaml');
writeFileSync(
  config,
  `prompts: ['{{query}}']
providers:
  - id: file://${ROOT}/providers/search.ts
    label: lake
    config: { module: ${join(fixtures, 'fault-service.ts')} }
defaultTest:
  assert:
    - type: javascript
      value: file://${ROOT}/assertions/judge.ts:judged
      config: ${JSON.stringify({ mode: 'bedrock', endpoint, region: 'us-east-1', cacheDir: join(dir, 'cache'), ...judgeConfig })}
tests: file://${join(fixtures, 'tests.ts')}
env:
  PROMPTFOO_PASS_RATE_THRESHOLD: '0'
`,
);
const out = join(dir, 'results.json');
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PROMPTFOO_CONFIG_DIR: join(dir, 'pf'),
  PROMPTFOO_DISABLE_TELEMETRY: '1',
  PROMPTFOO_DISABLE_UPDATE: '1',
  PROMPTFOO_DISABLE_SHARING: '1',
  RANKGATE_RELIABILITY_GOLDEN: join(dir, 'golden.json'),
  AWS_ACCESS_KEY_ID: 'AKIDFAKEFAKEFAKE',
  AWS_SECRET_ACCESS_KEY: 'fake-secret-key',
  NO_COLOR: '1',
};
delete env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME;
const t0 = performance.now();
const code = await new Promise<number | null>((resolve) => {
  const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js'), 'eval', '-c', config, '--output', out, '--no-cache', '--no-table', '--no-progress-bar'], {
    env,
    stdio: ['ignore', 'ignore', process.env.BENCH_SHOW ? 'inherit' : 'ignore'],
  });
  child.on('close', resolve);
});
const secs = (performance.now() - t0) / 1000;
for (const s of sockets) s.destroy();
dead.close();
const rows = JSON.parse(readFileSync(out, 'utf8')).results.results as { gradingResult?: { componentResults?: { reason: string }[] } }[];
const reasons = rows.map((r) => (r.gradingResult?.componentResults ?? []).map((c) => c.reason).join(' '));
console.log(`dead judge, 10-query promptfoo eval, judge config ${JSON.stringify(judgeConfig)} (defaults otherwise)`);
console.log(`  wall time            ${secs.toFixed(1)} s (promptfoo exit ${code})`);
console.log(`  rows                 ${rows.length}, with a judge error: ${reasons.filter((x) => /JUDGE ERROR/.test(x)).length}`);
console.log(`  cut off as unreachable ${reasons.filter((x) => /unreachable/.test(x)).length} rows`);
console.log(`  connections to the dead endpoint: ${connections}`);
if (process.env.BENCH_SHOW) for (const x of reasons) console.log("   ", x.slice(0, 400));
rmSync(dir, { recursive: true, force: true });
