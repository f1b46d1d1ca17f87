/** Format detection from folder layout, name and content; --format overrides it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectFormat, loadGolden, parseFormatName } from '../../src/golden/index.ts';
import { isUserError } from '../../src/errors.ts';
import { FIX, read, tempDir } from './helpers.ts';

test('detects every fixture from its name or layout', () => {
  const cases: [string, string][] = [
    ['des058/golden-set-en.json', 'des058'],
    ['yaml/queries.yaml', 'yaml'],
    ['jsonl/gold-set.jsonl', 'jsonl'],
    ['nq/nq.csv', 'nq-csv'],
    ['nq/prepared.json', 'nq-json'],
    ['beir/mini', 'beir'],
    ['beir/mini/queries.jsonl', 'beir'],
    ['trec/sgml', 'trec'],
    ['trec/sgml/topics.301-303.txt', 'trec'],
    ['trec/tsv/topics.tsv', 'trec'],
  ];
  for (const [p, f] of cases) assert.equal(detectFormat(join(FIX, p)), f, p);
});

test('detects by content when the name says nothing', (t) => {
  const d = tempDir(t);
  const cases: [string, string][] = [
    [read(join(FIX, 'des058', 'golden-set-en.json')), 'des058'],
    [read(join(FIX, 'nq', 'prepared.json')), 'nq-json'],
    [read(join(FIX, 'yaml', 'queries.yaml')), 'yaml'],
    [read(join(FIX, 'yaml', 'wrapped.yaml')), 'yaml'],
    [read(join(FIX, 'jsonl', 'gold-set.jsonl')), 'jsonl'],
    [read(join(FIX, 'nq', 'nq.csv')), 'nq-csv'],
    [`\uFEFF${read(join(FIX, 'nq', 'nq.csv'))}`, 'nq-csv'],
  ];
  cases.forEach(([text, f], i) => {
    const p = join(d, `golden${i}`);
    writeFileSync(p, text);
    assert.equal(detectFormat(p), f, `case ${i}`);
  });
});

test('--format overrides detection; aliases are accepted; unknown names are a UserError', (t) => {
  const p = join(tempDir(t), 'set.txt');
  writeFileSync(p, read(join(FIX, 'jsonl', 'gold-set.jsonl')));
  assert.equal(loadGolden(p, { format: 'gold-set' }).queries.length, 3);
  assert.equal(parseFormatName('blind-test'), 'yaml');
  assert.equal(parseFormatName('nq', 'x.json'), 'nq-json');
  assert.equal(parseFormatName('nq', 'x.csv'), 'nq-csv');
  assert.throws(() => parseFormatName('xlsx'), (e: unknown) => isUserError(e) && /unknown golden-set format 'xlsx', expected one of des058, yaml, jsonl, nq-csv, nq-json, beir, trec/.test(e.message));
  // forcing the wrong format gives problems, not a crash
  const f = loadGolden.bind(null, join(FIX, 'yaml', 'queries.yaml'), { format: 'des058' });
  assert.throws(f, (e: unknown) => isUserError(e) && /queries\.yaml:1:1 \(file\) json: invalid JSON/.test(e.message));
});
