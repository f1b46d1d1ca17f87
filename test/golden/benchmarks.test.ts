/** The real BEIR SciFact test split from ../shared/benchmarks reads into the canonical model. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadGolden } from '../../src/golden/index.ts';
import { ROOT } from './helpers.ts';

const SCIFACT = join(ROOT, '..', 'shared', 'benchmarks', 'scifact');

test('BEIR SciFact test split: 300 queries, 339 binary judgements, query text only', (t) => {
  if (!existsSync(join(SCIFACT, 'queries.jsonl'))) return t.skip(`needs ${SCIFACT} (BEIR SciFact, see /work/shared/benchmarks/README.md)`);
  const g = loadGolden(SCIFACT);
  assert.equal(g.format, 'beir');
  assert.equal(g.queries.length, 300);
  assert.equal(g.queries.reduce((n, q) => n + q.expected.length, 0), 339);
  assert.ok(g.queries.every((q) => q.expected.every((r) => r.doc_id && r.grade === 1 && r.relevant)));
  assert.ok(g.queries.every((q) => q.query.trim().length > 0 && q.category === 'scifact'));
});
