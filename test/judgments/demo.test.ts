/**
 * The demo's logs (datasets/feedback/): the seeded generator reproduces the committed logs byte for byte, and the
 * documented command bootstraps, from the committed file's chair rows alone, exactly the committed golden set and
 * judgments file, twice, with the chair rows untouched.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { demoLogs, FEEDBACK_DIR } from '../../bench/demo-logs.ts';
import { run as golden } from '../../src/cli/golden.ts';
import { loadGolden } from '../../src/golden/index.ts';
import { capture } from '../helpers/capture.ts';

const ROOT = join(FEEDBACK_DIR, '..', '..');

test('the generator reproduces the committed demo logs byte for byte', () => {
  for (const [name, text] of Object.entries(demoLogs())) assert.equal(readFileSync(join(FEEDBACK_DIR, name), 'utf8'), text, `datasets/feedback/${name}: run npm run demo:logs`);
});

test('the demo bootstrap: from its chair rows, the committed golden set and judgments; twice the same bytes; chair rows untouched', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-demo-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const committed = readFileSync(join(FEEDBACK_DIR, 'gold-set.jsonl'), 'utf8');
  const chair = committed.split('\n').filter((l) => l && JSON.parse(l).source === 'chair');
  assert.equal(chair.length, 2, 'the demo starts from two chair rows');
  const out = join(dir, 'gold-set.jsonl');
  writeFileSync(out, chair.map((l) => `${l}\n`).join(''));
  const judg = join(dir, 'judgments.jsonl');
  const g = (l: string) => join(ROOT, 'datasets', 'golden', `golden-set-${l}.json`);
  const args = ['bootstrap', '--from-feedback', FEEDBACK_DIR, '--corpus', join(ROOT, 'datasets', 'corpus'), '--out', out, '--judgments', judg, '--golden', g('en'), '--golden', g('es'), '--golden', g('hi')];
  const r1 = await capture(() => golden(args));
  assert.equal(r1.code, 0, r1.err);
  assert.match(r1.out, /7 of 1,892 log entries name 1 id no document has \(the-silent-mountain\): refused, left out/);
  assert.equal(readFileSync(out, 'utf8'), committed, 'the committed datasets/feedback/gold-set.jsonl');
  assert.equal(readFileSync(judg, 'utf8'), readFileSync(join(FEEDBACK_DIR, 'judgments.jsonl'), 'utf8'), 'the committed datasets/feedback/judgments.jsonl');
  const r2 = await capture(() => golden(args));
  assert.equal(r2.code, 0, r2.err);
  assert.equal(readFileSync(out, 'utf8'), committed, 'twice: identical bytes');
  assert.deepEqual(readFileSync(out, 'utf8').split('\n').slice(0, 2), chair, 'the chair rows, byte for byte');
  const qs = loadGolden(out).queries;
  assert.ok(qs.filter((q) => q.source === 'bootstrap').length >= 10);
});
