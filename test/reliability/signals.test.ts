/**
 * SIGINT / SIGTERM in the middle of work, through the real CLIs:
 * - `rankgate ingest` (PGlite): the index is as before or complete, never half a variant, and still opens;
 * - `rankgate gate --update-baseline`: the baseline is the old one or the new one, whole, at every moment;
 * - `promptfoo eval --output` (search provider + gate hook): an earlier results file is not clobbered by a
 *   partial one.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, CORPUS, FIXTURES, ROOT, copyIndexFixture, killChildren, promptfooEval, rankgate, spawnNode, tempDir } from './helpers.ts';
import { fixtureEvalInto } from '../harness/helpers.ts';

after(killChildren);

describe('interrupting an ingest', () => {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} while a new variant is written: the index is as before or complete, and opens`, async () => {
      const db = await copyIndexFixture(`sig-ingest-${signal}`);
      try {
        const ing = spawnNode([BIN, 'ingest', '--db', db, '--corpus', CORPUS, '--chunk-size', '40'], { env: { DATABASE_URL: undefined } });
        // non-TTY progress: this line is printed after embedding, right before the write transaction
        await ing.waitFor(/ingest c40:use-lite: embedded \d+ new texts/, 90_000);
        ing.child.kill(signal);
        const r = await ing.result;
        assert.notEqual(r.code, 0, `an interrupted ingest must not report success:\n${r.stdout}\n${r.stderr}`);
        // the variant that existed before is intact
        const old = await rankgate(['search', '--db', db, '--chunk-size', '300', '--json', 'still water'], { DATABASE_URL: undefined });
        assert.equal(old.code, 0, old.stderr);
        assert.ok(JSON.parse(old.stdout).hits.length > 0);
        // the interrupted one is either absent (clear message) or complete
        const neu = await rankgate(['search', '--db', db, '--chunk-size', '40', '--json', 'still water'], { DATABASE_URL: undefined });
        if (neu.code === 0) {
          const n = JSON.parse(neu.stdout).hits.length;
          assert.ok(n > 0, 'a committed variant answers');
        } else {
          assert.equal(neu.code, 2, neu.stderr);
          assert.match(neu.stderr, /index variant c40:use-lite not found/);
        }
        // and a re-run completes
        const again = await rankgate(['ingest', '--db', db, '--corpus', CORPUS, '--chunk-size', '40', '--json'], { DATABASE_URL: undefined });
        assert.equal(again.code, 0, again.stderr);
        const chunks = JSON.parse(again.stdout).variants[0].chunks as number;
        assert.ok(chunks > 7, `c40 cuts the 3 documents finer than c300 (7 chunks), got ${chunks}`);
      } finally {
        rmSync(join(db, '..'), { recursive: true, force: true });
      }
    });
  }
});

describe('interrupting rankgate gate --update-baseline', () => {
  const dir = tempDir('sig-gate');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the baseline is always the old or the new one, whole', async () => {
    // the harness fixture's plain eval, run once per `npm test` and shared with test/harness/eval.test.ts
    // (test/harness/helpers.ts: fixtureEvalRun); a copy of its results and re-gate record here
    const ev = await fixtureEvalInto(dir);
    const out = ev.results;
    assert.ok(readFileSync(out, 'utf8').length > 100, ev.stderr.slice(-2000));
    const baseline = join(dir, 'baseline.json');
    const oldText = JSON.stringify({ rankgate_baseline: 1, created: 'old', column: 'x', config: {}, summary: {}, queries: {} }, null, 2) + '\n';
    writeFileSync(baseline, oldText);
    const full = await rankgate(['gate', out, '--baseline', join(dir, 'full.json'), '--update-baseline']);
    assert.ok([0, 1].includes(full.code!), full.stderr);
    const newQueries = Object.keys(JSON.parse(readFileSync(join(dir, 'full.json'), 'utf8')).queries).sort();
    let sawOld = 0;
    let sawNew = 0;
    for (const delay of [150, 400, 700, 1000, 1300, 1600, 2000, 2600]) {
      writeFileSync(baseline, oldText);
      const p = spawnNode([BIN, 'gate', out, '--baseline', baseline, '--update-baseline']);
      await new Promise((r) => setTimeout(r, delay));
      p.child.kill(delay % 2 ? 'SIGTERM' : 'SIGINT');
      await p.result;
      const text = readFileSync(baseline, 'utf8');
      const doc = JSON.parse(text); // never half-written
      if (text === oldText) sawOld++;
      else {
        assert.deepEqual(Object.keys(doc.queries).sort(), newQueries);
        sawNew++;
      }
    }
    assert.equal(sawOld + sawNew, 8);
    const leftovers = readdirSync(dir).filter((f) => f.includes('.tmp-'));
    assert.ok(leftovers.length <= 8, `temp files: ${leftovers.join(', ')}`);
  });
});

describe('interrupting promptfoo eval', () => {
  const dir = tempDir('sig-eval');
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} midway: an earlier results file is not replaced by a partial one`, async () => {
      const out = join(dir, `results-${signal}.json`);
      const previous = join(ROOT, 'test', 'fixtures', 'reliability', 'golden.json'); // any earlier file: its bytes must survive
      copyFileSync(previous, out);
      const before = readFileSync(out, 'utf8');
      const config = join(dir, `slow-${signal}.yaml`);
      const log = join(dir, `queries-${signal}.jsonl`);
      writeFileSync(
        config,
        `prompts: ['{{query}}']
providers:
  - id: file://${ROOT}/providers/search.ts
    label: slow
    config: { module: ${join(FIXTURES, 'fault-service.ts')}, timeoutMs: 5000, delayMs: 1500, logFile: ${log} }
defaultTest:
  assert:
    - type: javascript
      value: file://${ROOT}/assertions/rank.ts:rank
tests: file://${join(FIXTURES, 'tests.ts')}
evaluateOptions: { maxConcurrency: 1 }
env: { PROMPTFOO_PASS_RATE_THRESHOLD: '0' }
`,
      );
      const ev = promptfooEval(config, out);
      // interrupt once the second query reached the service (of six, 1.5 s each)
      const deadline = Date.now() + 90_000;
      while (Date.now() < deadline && (existsSync(log) ? readFileSync(log, 'utf8').split('\n').length - 1 : 0) < 2) {
        await new Promise((r) => setTimeout(r, 100));
      }
      ev.child.kill(signal);
      const r = await ev.result;
      const after = readFileSync(out, 'utf8');
      if (after !== before) {
        const doc = JSON.parse(after);
        assert.equal(doc.results.results.length, 6, `a replaced results file must be complete (exit ${r.code}):\n${r.stderr.slice(-1500)}`);
      }
      // promptfoo treats SIGINT as "pause" and exits 0 without writing --output; SIGTERM ends it by the signal.
      // Either way no partial file replaces the earlier one (checked above).
      if (signal === 'SIGTERM') assert.ok(r.code !== 0, `exit ${r.code} signal ${r.signal}`);
    });
  }
});
