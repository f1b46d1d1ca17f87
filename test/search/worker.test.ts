/**
 * The search worker (src/search/worker.ts): the provider's services run in a worker thread that serves one request
 * at a time. Checked here: same answers as in the thread, serviceMs excludes queueing, errors keep their message,
 * a dying thread fails its requests instead of hanging them, and an idle worker never keeps a process alive.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isUserError } from '../../src/errors.ts';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModuleService } from '../../src/search/module.ts';
import { WorkerSearchService, workerExecArgv } from '../../src/search/worker.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE = join(ROOT, 'test', 'fixtures', 'harness');
const canned = join(FIXTURE, 'fixture-service.ts');
const faults = join(FIXTURE, 'worker-faults.ts');
const start = (path: string, config: Record<string, unknown> = {}) => WorkerSearchService.start({ kind: 'module', path, label: path, config });

describe('search worker', () => {
  it("starts whatever flags the parent runs with: only heap, source-map and warning flags go to the thread (Node 24's test runner passes flags a Worker refuses)", async () => {
    assert.deepEqual(
      workerExecArgv(['--import', 'tsx', '--stack-trace-limit=10', '--v8-pool-size=4', '--max-old-space-size=2048', '--disable-warning', 'ExperimentalWarning', '--enable-source-maps', '--test']),
      ['--max-old-space-size=2048', '--disable-warning', 'ExperimentalWarning', '--enable-source-maps'],
    );
    const saved = [...process.execArgv];
    process.execArgv.push('--stack-trace-limit=10', '--v8-pool-size=4', '--expose-gc');
    try {
      const svc = await start(canned);
      try {
        assert.ok((await svc.search('what is love', { mode: 'hybrid', topK: 3 })).hits.length > 0);
      } finally {
        await svc.close();
      }
    } finally {
      process.execArgv.splice(0, process.execArgv.length, ...saved);
    }
  });

  it('answers exactly as the same module in this thread, and resolves passages', async () => {
    const inThread = await loadModuleService(canned, 'fixture', {});
    const svc = await start(canned);
    try {
      for (const mode of ['hybrid', 'keyword', 'semantic'] as const) {
        const a = await inThread.search('what is love', { mode, topK: 5 });
        const { serviceMs, ...b } = await svc.search('what is love', { mode, topK: 5 });
        assert.deepEqual(b, a, mode);
        assert.ok(a.hits.length > 0);
        assert.equal(typeof serviceMs, 'number');
      }
      const subs = ['love', 'no such passage anywhere'];
      assert.deepEqual(await svc.resolvePassages(subs, { chunkSize: 300, embedder: 'x' }), await inThread.resolvePassages!(subs, { chunkSize: 300, embedder: 'x' }));
    } finally {
      await svc.close();
    }
  });

  it('serves one request at a time and times each from its start: serviceMs has no queueing', async () => {
    const svc = await start(faults, { delayMs: 60 });
    try {
      const t0 = performance.now();
      const rs = await Promise.all(['a', 'b', 'c', 'd'].map((q) => svc.search(q)));
      const wall = performance.now() - t0;
      assert.deepEqual(rs.map((r) => r.hits[0]!.chunkId), ['c-a', 'c-b', 'c-c', 'c-d'], 'answers in request order');
      for (const r of rs) assert.ok(r.serviceMs! >= 59, `serviceMs ${r.serviceMs} covers the search`);
      // one at a time: the four service times fit in the wall time only if none counts the wait before its start
      // (with the queue counted they would sum to ~2.5x the wall time); no fixed bound, so a loaded machine holds
      const sum = rs.reduce((s, r) => s + r.serviceMs!, 0);
      assert.ok(sum <= wall + 5, `serviceMs ${rs.map((r) => r.serviceMs!.toFixed(0)).join(', ')} sum to ${sum.toFixed(0)} ms > the ${wall.toFixed(0)} ms wall time: queueing counted`);
      assert.ok(wall >= 4 * 59, `four 60 ms searches one after another took ${wall.toFixed(0)} ms`);
    } finally {
      await svc.close();
    }
  });

  it('keeps the error message of a failing search and of a service that cannot be built', async () => {
    const svc = await start(canned, { failOn: 'boom' });
    try {
      await assert.rejects(svc.search('boom'), /^Error: fixture failure for "boom"$/);
      assert.equal((await svc.search('what is love')).hits.length > 0, true, 'the worker survives a failed search');
    } finally {
      await svc.close();
    }
    await assert.rejects(start(faults, { fault: 'create' }), /fixture: cannot connect to the index/);
    await assert.rejects(start(join(FIXTURE, 'chunks.json')), /does not export createSearchService|Unknown file extension|json/i);
    await assert.rejects(start(join(FIXTURE, 'no-such-module.ts')), /Cannot find module|ERR_MODULE_NOT_FOUND|no-such-module/);
  });

  it('a result that cannot cross threads is an error naming worker: false, not a hang', async () => {
    const svc = await start(faults, { fault: 'uncloneable' });
    try {
      await assert.rejects(svc.search('x'), /cannot be passed between threads.*worker: false/);
      assert.equal((await loadModuleService(faults, 'f', { fault: 'uncloneable' }).then((s) => s.search('x'))).hits.length, 1, 'in the thread it works');
    } finally {
      await svc.close();
    }
  });

  it('a hung search times out in the worker too, and the next request is served', async () => {
    const svc = await start(faults, { fault: 'hang' });
    try {
      const t0 = performance.now();
      const [hung, next] = await Promise.allSettled([svc.search('hang', {}, { timeoutMs: 300 }), svc.search('after', {}, { timeoutMs: 300 })]);
      assert.equal(hung.status, 'rejected');
      assert.match(String((hung as PromiseRejectedResult).reason), /search timed out after 300 ms/);
      assert.equal(next.status === 'fulfilled' && next.value.hits[0]!.chunkId, 'c-after', 'the query behind the hung one gets its answer');
      assert.ok(performance.now() - t0 < 2000);
    } finally {
      await svc.close();
    }
  });

  it('a worker that dies fails the pending and later requests with a clear error', async () => {
    const svc = await start(faults, { fault: 'exit' });
    assert.equal((await svc.search('fine')).hits[0]!.chunkId, 'c-fine');
    await assert.rejects(svc.search('crash'), /search worker exited \(code 3\)/);
    await assert.rejects(svc.search('fine'), /search worker exited \(code 3\)/);
    await svc.close();
  });

  it('an idle worker does not keep the process alive; close() ends it', () => {
    const script = `
      import { WorkerSearchService } from ${JSON.stringify(join(ROOT, 'src', 'search', 'worker.ts'))};
      const svc = await WorkerSearchService.start({ kind: 'module', path: ${JSON.stringify(canned)}, label: 'f', config: {} });
      await svc.search('what is love');
      console.log('searched');
    `;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.signal, null, 'the process exited by itself (not killed by the timeout)');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'searched');
  });

  it('a user mistake in the thread stays a UserError here (one line, exit 2, no stack)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rg-worker-usererror-'));
    try {
      const mod = join(dir, 'bad-config.ts');
      writeFileSync(mod, `import { UserError } from ${JSON.stringify(join(ROOT, 'src', 'errors.ts'))};
export function createSearchService() { throw new UserError('my-search.yaml: field "index" is missing'); }
`);
      await assert.rejects(start(mod), (e: unknown) => isUserError(e) && (e as Error).message === 'my-search.yaml: field "index" is missing');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
