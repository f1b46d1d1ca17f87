/**
 * Every command that calls a model, a reranker or an embedder EXITS after its deadline error (issue 43 H1): against an
 * endpoint on 127.0.0.1 that accepts connections and never answers, each prints the deadline error in one line and the
 * process ends within the deadline + 5 s of it. The open handle that kept the process alive was promptfoo's own fetch of
 * an abandoned chat call (promptfoo 0.121 does not pass the abort signal on: its socket and its 300 s request timer
 * stayed); bin/rankgate.js now exits once the command has returned.
 *
 * The commands, spawned at once (the process itself is what is tested), each with a 1.5 s deadline:
 *   search --expansion rewrites          the expansion model (RANKGATE_EXPANSION_TIMEOUT_MS)
 *   search --rerank llm:openai:chat:M    the llm: reranker's model (RANKGATE_RERANK_TIMEOUT_MS)
 *   search --rerank tei:rerank           an HTTP reranker (RANKGATE_RERANK_TIMEOUT_MS / _CALL_TIMEOUT_MS)
 *   search --mode semantic               the query embedding (RANKGATE_EMBED_TIMEOUT_MS / _CALL_TIMEOUT_MS)
 *   ingest                               the document embedding (the same)
 *   review judge                         the review's judge stand-in (RANKGATE_LLM_TIMEOUT_MS)
 *   judge agreement                      the relevance judge (RANKGATE_JUDGE_TIMEOUT_MS / _CALL_TIMEOUT_MS)
 *   eval (promptfoo, the judge assertion) the relevance judge inside promptfoo's process
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { FIXTURES, RANKGATE_BIN, ROOT, tempDir } from './helpers.ts';
import { startFakeEmbeddingApi, type FakeEmbeddingApi } from '../helpers/fake-embedding-apis.ts';
import { reviewResultsDoc } from '../helpers/review-fixture.ts';

const DEADLINE_MS = 1500;
/** The longest a command may live after its deadline error was printed. */
const GRACE_MS = 5000;
/** A command still alive this long after its start has hung: killed, and the test fails. */
const HARD_KILL_MS = 120_000;

interface Timed {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  stdout: string;
  /** ms from the start until stderr first matched the deadline error (null: never). */
  errorAt: number | null;
  exitAt: number;
}

function spawnTimed(name: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, deadlineError: RegExp): Promise<Timed> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [RANKGATE_BIN, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let errorAt: number | null = null;
    const seen = () => {
      if (errorAt === null && deadlineError.test(stdout + stderr)) errorAt = performance.now() - t0;
    };
    child.stdout.on('data', (d) => ((stdout += d), seen()));
    child.stderr.on('data', (d) => ((stderr += d), seen()));
    const kill = setTimeout(() => child.kill('SIGKILL'), HARD_KILL_MS);
    child.on('close', (code, signal) => {
      clearTimeout(kill);
      resolve({ name, code, signal, stderr, stdout, errorAt, exitAt: performance.now() - t0 });
    });
  });
}

describe('every command exits after its deadline error (a dead endpoint: accepts, never answers)', () => {
  const dir = tempDir('deadline-exit');
  let dead: Server;
  const sockets = new Set<Socket>();
  let fake: FakeEmbeddingApi;
  let deadUrl = '';
  let results: Timed[] = [];

  before(async () => {
    dead = createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    deadUrl = `http://127.0.0.1:${(dead.address() as { port: number }).port}`;

    // one small index (the helpdesk corpus, embedded by the fake Ollama API), copied for each search: one process a
    // PGlite folder
    fake = await startFakeEmbeddingApi('ollama');
    const db = join(dir, 'db');
    const built = await spawnTimed(
      'ingest (setup)',
      ['ingest', '--corpus', join(FIXTURES, 'helpdesk', 'help'), '--db', db, '--embedder', 'ollama:embeddings:bge-m3'],
      { OLLAMA_BASE_URL: fake.baseUrl },
      dir,
      /$^/,
    );
    assert.equal(built.code, 0, built.stderr);
    const dbFor = (name: string) => {
      const d = join(dir, `db-${name}`);
      cpSync(db, d, { recursive: true, filter: (src) => !/\.rankgate\.lock\./.test(src) });
      return d;
    };

    // a review page and a results file whose top results are golden references (for the judges)
    const doc = reviewResultsDoc(4) as { results: { results: { testCase: { metadata: { golden: { expected: { chunk_id: string }[] } } }; response?: { output: { ids: string[]; hits: { chunkId: string }[] } } }[] } };
    for (const r of doc.results.results) {
      const out = r.response?.output;
      if (!out) continue;
      out.hits[0]!.chunkId = r.testCase.metadata.golden.expected[0]!.chunk_id;
      out.ids[0] = out.hits[0]!.chunkId;
    }
    const resultsFile = join(dir, 'results.json');
    writeFileSync(resultsFile, JSON.stringify(doc));
    const { run: review } = await import('../../src/cli/review.ts');
    const page = join(dir, 'review.html');
    const quiet = console.log;
    console.log = () => {};
    try {
      assert.equal(await review(['export', resultsFile, '--baseline', '0', '--candidate', '1', '--queries', '2', '-o', page, '--key', join(dir, 'review.key.json')]), 0);
    } finally {
      console.log = quiet;
    }

    // an eval whose judge assertion calls the dead model (the module: fixture service answers the searches)
    const fx = join(ROOT, 'test', 'fixtures', 'harness');
    const config = join(dir, 'promptfooconfig.yaml');
    writeFileSync(
      config,
      [
        'description: deadline exit',
        "prompts: ['{{query}}']",
        'providers:',
        `  - id: file://${join(ROOT, 'providers', 'search.ts')}`,
        '    label: fixture-hybrid',
        `    config: { module: ${join(fx, 'fixture-service.ts')}, mode: hybrid, topK: 10, chunkSize: 300 }`,
        'defaultTest:',
        '  assert:',
        `    - { type: javascript, value: 'file://${join(ROOT, 'assertions', 'rank.ts')}:rank' }`,
        `    - { type: javascript, value: 'file://${join(ROOT, 'assertions', 'judge.ts')}:judged' }`,
        `tests: file://${join(fx, 'tests.ts')}`,
        'extensions:',
        `  - file://${join(ROOT, 'assertions', 'gate.ts')}:beforeAll`,
        `  - file://${join(ROOT, 'assertions', 'gate.ts')}:afterAll`,
        '',
      ].join('\n'),
    );

    const pf = join(dir, '.promptfoo');
    mkdirSync(pf, { recursive: true });
    const base: NodeJS.ProcessEnv = {
      PROMPTFOO_CONFIG_DIR: pf,
      PROMPTFOO_DISABLE_TELEMETRY: '1',
      PROMPTFOO_DISABLE_UPDATE: '1',
      PROMPTFOO_DISABLE_SHARING: '1',
      PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
      PROMPTFOO_CACHE_ENABLED: 'false',
      OPENAI_API_KEY: 'sk-test-deadline',
      OPENAI_BASE_URL: `${deadUrl}/v1`,
      CI: '',
    };
    const ms = String(DEADLINE_MS);
    const q = 'how do I get a refund';
    const keyword = ['--mode', 'keyword', '--embedder', 'ollama:embeddings:bge-m3', '--no-routing'];
    results = await Promise.all([
      spawnTimed('search --expansion rewrites', ['search', q, '--db', dbFor('exp'), ...keyword, '--expansion', 'rewrites', '--expansion-provider', 'openai:chat:m'], { ...base, RANKGATE_EXPANSION_TIMEOUT_MS: ms }, dir, /no answer within 1500 ms/),
      spawnTimed('search --rerank llm:', ['search', q, '--db', dbFor('llm'), ...keyword, '--rerank', 'llm:openai:chat:m', '--rerank-k', '3'], { ...base, RANKGATE_RERANK_TIMEOUT_MS: ms }, dir, /no answer within 1500 ms/),
      spawnTimed('search --rerank tei:rerank', ['search', q, '--db', dbFor('tei'), ...keyword, '--rerank', 'tei:rerank', '--rerank-k', '3'], { ...base, TEI_BASE_URL: deadUrl, RANKGATE_RERANK_TIMEOUT_MS: ms, RANKGATE_RERANK_CALL_TIMEOUT_MS: ms }, dir, /no answer within 1500 ms|timed out/),
      spawnTimed('search (query embedding)', ['search', q, '--db', dbFor('emb'), '--mode', 'semantic', '--embedder', 'ollama:embeddings:bge-m3', '--no-routing'], { ...base, OLLAMA_BASE_URL: deadUrl, RANKGATE_EMBED_TIMEOUT_MS: ms, RANKGATE_EMBED_CALL_TIMEOUT_MS: ms }, dir, /no answer within 1500 ms/),
      spawnTimed('ingest (document embedding)', ['ingest', '--corpus', join(FIXTURES, 'helpdesk', 'help'), '--db', join(dir, 'db-new'), '--embedder', 'ollama:embeddings:bge-m3'], { ...base, OLLAMA_BASE_URL: deadUrl, RANKGATE_EMBED_TIMEOUT_MS: ms, RANKGATE_EMBED_CALL_TIMEOUT_MS: ms }, dir, /no answer within 1500 ms/),
      spawnTimed('review judge', ['review', 'judge', page, '--judge', 'openai:chat:m', '-o', join(dir, 'ratings-judge.json')], { ...base, RANKGATE_LLM_TIMEOUT_MS: ms }, dir, /no answer within 1500 ms/),
      spawnTimed('judge agreement', ['judge', 'agreement', resultsFile, '--judge', 'openai:chat:m', '--cache-dir', join(dir, 'judge-cache')], { ...base, RANKGATE_JUDGE_TIMEOUT_MS: ms, RANKGATE_JUDGE_CALL_TIMEOUT_MS: ms }, dir, /no answer within 1500 ms|unreachable/),
      spawnTimed('eval (judge in promptfoo)', ['eval', '--config', config, '--out-dir', join(dir, 'eval-out')], { ...base, RANKGATE_JUDGE: 'openai:chat:m', RANKGATE_JUDGE_TIMEOUT_MS: ms, RANKGATE_JUDGE_CALL_TIMEOUT_MS: ms, RANKGATE_GATE_FLOORS: join(dir, 'no-floors.yaml') }, dir, /unreachable/),
    ]);
  });

  after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => dead?.close(r));
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each prints its deadline error and exits within the deadline + 5 s of it, with a clear exit code', () => {
    const lines: string[] = [];
    for (const r of results) {
      const last = (r.stdout + r.stderr).trim().split('\n').filter((l) => !/ExperimentalWarning|--trace-warnings/.test(l)).slice(-1)[0] ?? '';
      lines.push(`${r.name}: exit ${r.code ?? r.signal} at ${Math.round(r.exitAt)} ms, deadline error at ${r.errorAt === null ? 'never' : Math.round(r.errorAt)} ms: ${last.slice(0, 200)}`);
    }
    const report = lines.join('\n');
    for (const r of results) {
      assert.notEqual(r.signal, 'SIGKILL', `${r.name} hung: killed after ${HARD_KILL_MS} ms\n${report}`);
      assert.ok(r.errorAt !== null, `${r.name}: no deadline error printed\n${r.stderr.slice(-2000)}\n${report}`);
      assert.ok(r.exitAt - r.errorAt! <= DEADLINE_MS + GRACE_MS, `${r.name}: exited ${Math.round(r.exitAt - r.errorAt!)} ms after its deadline error\n${report}`);
      assert.ok(r.code === 1 || r.code === 2, `${r.name}: exit ${r.code}, expected 1 or 2 (nothing measured / a failed gate)\n${report}`);
      assert.doesNotMatch(r.stderr, /^\s+at /m, `${r.name}: a stack trace\n${r.stderr.slice(-2000)}`);
    }
    process.stderr.write(`${report}\n`);
    assert.match(readFileSync(join(dir, 'review.html'), 'utf8'), /rankgate-review-page/, 'the review page the judge read');
  });
});
