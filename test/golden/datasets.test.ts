/**
 * CI validates every golden set kept in datasets/golden/ (any supported format): a broken or
 * inconsistent set fails `npm test` with the one-line problems.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readGoldenFile } from '../../src/golden/index.ts';
import { ROOT } from './helpers.ts';

const DIR = join(ROOT, 'datasets', 'golden');
const EXT = /\.(json|jsonl|ya?ml|csv)$/i;

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (EXT.test(name)) out.push(p);
  }
  return out;
}

test('every golden set under datasets/golden/ is valid', (t) => {
  const files = existsSync(DIR) ? walk(DIR) : [];
  if (files.length === 0) return t.skip(`needs golden sets in ${DIR}`);
  const ids = new Map<string, string>();
  for (const f of files) {
    const g = readGoldenFile(f);
    assert.equal(g.errorCount, 0, `${relative(ROOT, f)}:\n${g.lines.join('\n')}`);
    assert.ok(g.queries.length > 0, `${relative(ROOT, f)} has no queries`);
    // ids are unique across the sets directly under datasets/golden (the ones evaluated together), so
    // reports and baselines never mix two queries; drafts in subfolders may repeat them
    if (relative(DIR, f).includes('/')) continue;
    for (const q of g.queries) {
      const prev = ids.get(q.id);
      assert.equal(prev, undefined, `id ${q.id} is used in ${prev} and ${relative(ROOT, f)}`);
      ids.set(q.id, relative(ROOT, f));
    }
  }
});
