/**
 * Caches are never evidence from the pull request (issue 43.2, 43.5): what every cache file of rankgate goes through
 * (src/util/cache-files.ts) and the rerank and judge caches on top of it. Each reproduction of the round's report:
 *   W1  TEI's model changes behind the same URL: the old model's scores are a miss (GET /info once per reranker)
 *   W2  a planted score of 99 (an API whose scores are in [0, 1]) or an llm: grade of 7: refused, a LOUD note, scored live
 *   H3  a fifo where a cache file should be: skipped at once (never opened for reading), counted
 *   C1  a symbolic link to /dev/zero: skipped at once (a link out of the cache folder), counted
 *   P3  cache files tracked by git: refused in CI (one line naming them), ignored with a LOUD warning elsewhere
 * and a file over the size cap, a judge verdict no fresh answer could be.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createReranker, parseRerankerId, RerankCache, scorePassages } from '../../src/rerank/index.ts';
import { cacheNoteCounts, readCacheFile, trackedCacheFiles, untrackedCacheFiles } from '../../src/util/cache-files.ts';
import { JudgeCache } from '../../src/judge/cache.ts';
import { isUserError } from '../../src/errors.ts';
import { fakeRerankScore, startFakeRerankApi, type FakeRerankApi } from '../helpers/fake-rerank-apis.ts';

const QUERY = 'calm lake water at dawn';
// a key of the environment (every *_API_KEY is redacted): the judge cache below must never keep it
process.env.RANKGATE_TEST_SECRET_FOR_CACHE_API_KEY = 'sk-judge-cache-key-123456';
const PASSAGES = ['The lake was calm at dawn and the water held the sky.', 'Bread rises when the yeast is warm.'];

/** The one cache file under `dir` (the rerank cache writes one a query). */
function onlyFile(dir: string): string {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out.push(join(d, e.name));
    }
  };
  walk(dir);
  assert.equal(out.length, 1, out.join(', '));
  return out[0]!;
}

/** stderr written while `fn` runs. */
async function stderrOf(fn: () => Promise<unknown> | unknown): Promise<string> {
  const write = process.stderr.write;
  let text = '';
  process.stderr.write = ((c: unknown) => ((text += String(c)), true)) as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stderr.write = write;
  }
  return text;
}

describe('the rerank score cache: producer, range, file kinds', () => {
  let fake: FakeRerankApi;
  let dir: string;
  before(async () => {
    fake = await startFakeRerankApi();
    dir = mkdtempSync(join(tmpdir(), 'rankgate-cache-files-'));
  });
  after(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = () => ({ TEI_BASE_URL: fake.url, COHERE_BASE_URL: fake.url, COHERE_API_KEY: 'co-cache-test-key' });

  test('W1: TEI serves another model behind the same URL: the old scores are a miss, scored again', async () => {
    const cache = new RerankCache(join(dir, 'w1'));
    fake.teiInfo = { model_id: 'BAAI/bge-reranker-base', model_sha: 'aaaa' };
    const first = createReranker('tei:rerank', { env: env() });
    fake.requests.length = 0;
    const a = await scorePassages(first, QUERY, PASSAGES, cache);
    assert.equal(a.usage.requests, 1);
    const again = await scorePassages(first, QUERY, PASSAGES, cache);
    assert.equal(again.usage.requests, 0, 'the same model: cached');
    assert.equal((await scorePassages(createReranker('tei:rerank', { env: env() }), QUERY, PASSAGES, cache)).usage.requests, 0);
    assert.equal(fake.infoRequests, 1, '/info read once per process and base URL');
    // the next run (a new process: a fresh module) finds another model behind the same URL
    const nextRun = async (tag: string) => {
      const { createHttpReranker } = (await import(`../../src/rerank/http.ts?run=${tag}`)) as typeof import('../../src/rerank/http.ts');
      return createHttpReranker(parseRerankerId('tei:rerank'), { env: env() });
    };
    fake.teiInfo = { model_id: 'BAAI/bge-reranker-v2-m3', model_sha: 'bbbb' };
    const swapped = await scorePassages(await nextRun('2'), QUERY, PASSAGES, cache);
    assert.equal(swapped.usage.requests, 1, "another model's scores are never reused");
    assert.equal(swapped.cached, 0);
    fake.teiInfo = { model_id: 'BAAI/bge-reranker-base', model_sha: 'aaaa' };
    assert.equal((await scorePassages(await nextRun('3'), QUERY, PASSAGES, cache)).usage.requests, 0, 'the first model back: its own scores');
  });

  test('W2: a planted score of 99 (Cohere: [0, 1]) is refused with a LOUD note and scored live; the file is rewritten', async () => {
    const root = join(dir, 'w2');
    const cache = new RerankCache(root);
    const r = createReranker('cohere:rerank:rerank-v3.5', { env: env() });
    await scorePassages(r, QUERY, PASSAGES, cache);
    const file = onlyFile(root);
    const j = JSON.parse(readFileSync(file, 'utf8'));
    const bread = Object.keys(j.scores)[1]!;
    j.scores[bread] = 99; // the unrelated passage would go to #1
    writeFileSync(file, JSON.stringify(j));
    fake.requests.length = 0;
    let s!: Awaited<ReturnType<typeof scorePassages>>;
    const err = await stderrOf(async () => (s = await scorePassages(r, QUERY, PASSAGES, cache)));
    assert.deepEqual(s.scores, PASSAGES.map((p) => fakeRerankScore(QUERY, p)), 'the live scores, not 99');
    assert.equal(fake.requests.length, 1);
    assert.match(err, /LOUD: cache .*w2: .*: 99 \(a score outside cohere:rerank:rerank-v3\.5's documented range \(a number from 0 to 1\)\): treated as a miss, recomputed live/);
    assert.equal(cacheNoteCounts()[root]?.["a score outside cohere:rerank:rerank-v3.5's documented range (a number from 0 to 1)"], 1);
    assert.ok(Object.values(JSON.parse(readFileSync(file, 'utf8')).scores).every((x) => (x as number) <= 1), 'the planted score is gone');
  });

  test('an answer outside the documented range is a malformed answer, never a score', async () => {
    fake.transform = (a) => ({ ...a, results: a.results.map((x: { index: number }, i: number) => ({ ...x, relevance_score: i === 0 ? 1.5 : 0.1 })) });
    try {
      await assert.rejects(createReranker('cohere:rerank:rerank-v3.5', { env: env() }).score(QUERY, PASSAGES), /results"\[0\]\.relevance_score is 1\.5, outside the API's documented range \(a number from 0 to 1\)/);
    } finally {
      fake.transform = undefined;
    }
  });

  test('H3 and C1: a fifo and a link to /dev/zero where a cache file is: skipped at once, counted, scored live', async () => {
    for (const kind of ['fifo', 'zero'] as const) {
      const root = join(dir, `h3-${kind}`);
      const cache = new RerankCache(root);
      const r = createReranker('cohere:rerank:rerank-v3.5', { env: env() });
      await scorePassages(r, QUERY, PASSAGES, cache);
      const file = onlyFile(root);
      rmSync(file);
      if (kind === 'fifo') execFileSync('mkfifo', [file]);
      else symlinkSync('/dev/zero', file);
      fake.requests.length = 0;
      const t0 = performance.now();
      let s!: Awaited<ReturnType<typeof scorePassages>>;
      const err = await stderrOf(async () => (s = await scorePassages(r, QUERY, ['A calm lake at dawn.'], cache)));
      assert.ok(performance.now() - t0 < 5000, `${kind}: not blocked`);
      assert.equal(s.usage.requests, 1, `${kind}: scored live`);
      assert.match(err, kind === 'fifo' ? /LOUD: cache .*h3-fifo: .* \(a fifo, not a regular file\): treated as a miss/ : /LOUD: cache .*h3-zero: .* -> \/dev\/zero \(a symbolic link out of the cache folder\): treated as a miss/);
    }
  });

  test('a file over the size cap is skipped without reading it; an llm: grade of 7 is refused', () => {
    const root = join(dir, 'big');
    mkdirSync(root, { recursive: true });
    const big = join(root, 'big.json');
    writeFileSync(big, Buffer.alloc(64, 0x20));
    assert.equal(readCacheFile(big, root, new Set(), 32), undefined);
    assert.match(JSON.stringify(cacheNoteCounts()[root]), /over the 32-byte cap of a cache file/);
    assert.equal(readCacheFile(big, root, new Set(), 1024)?.length, 64);
    // llm: grades are 0-3: a cached 7 never reaches the ranking
    const llmRoot = join(dir, 'llm');
    const c = new RerankCache(llmRoot);
    const scope = { reranker: 'llm:openai:chat:m', endpoint: 'http://x/v1', settings: [], range: { min: 0, max: 3, integer: true } };
    c.put(scope, QUERY, PASSAGES, [3, 0]);
    assert.deepEqual(c.get(scope, QUERY, PASSAGES), [3, 0]);
    const file = onlyFile(llmRoot);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/:3([,}])/, ':7$1'));
    assert.deepEqual(c.get(scope, QUERY, PASSAGES), [undefined, undefined], 'the whole file refused');
    // another producer (endpoint) in the file: a miss
    c.put(scope, QUERY, PASSAGES, [3, 0]);
    writeFileSync(file, readFileSync(file, 'utf8').replace('http://x/v1', 'http://y/v1'));
    assert.deepEqual(c.get(scope, QUERY, PASSAGES), [undefined, undefined]);
  });

  test('a judge verdict no fresh answer could be is refused with a note; the producer is checked', () => {
    const root = join(dir, 'judge');
    const c = new JudgeCache(root);
    const parts = { model: 'openai:chat:m', endpoint: 'http://x/v1', promptVersion: 'relevance-v1', query: 'q', passage: 'p' };
    c.set(parts, { verdict: 'HIGH', raw: 'HIGH (key sk-judge-cache-key-123456 echoed)', inputTokens: 1, outputTokens: 1 });
    assert.equal(c.get(parts)?.verdict, 'HIGH');
    const file = onlyFile(root);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /sk-judge-cache-key-123456/, 'the raw answer is redacted before it is kept');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"HIGH"', '"MAYBE"'));
    c.refuse(parts, c.get(parts)!.verdict);
    assert.match(JSON.stringify(cacheNoteCounts()[root]), /a verdict no fresh answer could be/);
    writeFileSync(file, readFileSync(file, 'utf8').replace('http://x/v1', 'http://evil/v1'));
    assert.equal(c.get(parts), undefined, "another endpoint's verdict is a miss");
  });
});

describe('P3: cache files tracked by git are never evidence', () => {
  let repo: string;
  before(() => {
    repo = mkdtempSync(join(tmpdir(), 'rankgate-tracked-'));
    const git = (...a: string[]) => execFileSync('git', ['-C', repo, ...a], { stdio: 'ignore' });
    git('init', '-q');
    for (const d of ['ci', 'local', 'files', 'pfcache']) {
      mkdirSync(join(repo, d, 'ab'), { recursive: true });
      writeFileSync(join(repo, d, 'ab', 'planted.json'), '{}');
    }
    writeFileSync(join(repo, 'files', 'emb.jsonl'), '');
    writeFileSync(join(repo, 'files', 'own.jsonl'), '');
    git('add', 'ci', 'local', 'files/ab', 'files/emb.jsonl', 'pfcache');
  });
  after(() => {
    rmSync(repo, { recursive: true, force: true });
  });

  test('in CI: refused in one line naming them (and again on every later use)', () => {
    const check = () => trackedCacheFiles(join(repo, 'ci'), 'rerank', { CI: 'true' });
    for (let i = 0; i < 2; i++) {
      assert.throws(check, (e: Error) => {
        assert.ok(isUserError(e));
        assert.equal(e.message.includes('\n'), false, 'one line');
        assert.match(e.message, /ci\/ab\/planted\.json is tracked by git in the rerank cache: caches are never evidence from the repository; remove them with git rm --cached -r .* and use the workflow cache/);
        return true;
      });
    }
    assert.throws(() => untrackedCacheFiles([join(repo, 'files', 'emb.jsonl'), join(repo, 'files', 'own.jsonl')], 'embedding', { CI: '1' }), /files\/emb\.jsonl is tracked by git \(the embedding cache\)/);
  });

  test("promptfoo's own model-answer cache (a committed .promptfoo/cache) is refused in CI before a model is called", async () => {
    const { loadChatProvider } = await import('../../src/llm/provider.ts');
    const saved = { ...process.env };
    try {
      process.env.PROMPTFOO_CACHE_PATH = join(repo, 'pfcache');
      process.env.CI = 'true';
      await assert.rejects(loadChatProvider('openai:chat:m', {}), (e: Error) => isUserError(e) && /pfcache\/ab\/planted\.json is tracked by git in the promptfoo's model-answer cache: caches are never evidence/.test(e.message));
    } finally {
      process.env = saved;
    }
  });

  test('outside CI: a LOUD warning, and those files ignored (every lookup in them a miss)', async () => {
    const root = join(repo, 'local');
    let ignored!: Set<string>;
    const err = await stderrOf(() => (ignored = trackedCacheFiles(root, 'rerank', { CI: '' })));
    assert.match(err, /LOUD: .*local\/ab\/planted\.json is tracked by git in the rerank cache .*: ignored \(1 file\)/);
    assert.deepEqual([...ignored], [join(root, 'ab', 'planted.json')]);
    assert.equal(readCacheFile(join(root, 'ab', 'planted.json'), root, ignored), undefined);
    assert.deepEqual(untrackedCacheFiles([join(repo, 'files', 'emb.jsonl'), join(repo, 'files', 'own.jsonl')], 'embedding', { CI: '' }), [join(repo, 'files', 'own.jsonl')]);
    // not a repository: nothing to check
    const plain = mkdtempSync(join(tmpdir(), 'rankgate-untracked-'));
    try {
      assert.equal(trackedCacheFiles(plain, 'rerank', { CI: 'true' }).size, 0);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
  });
});
