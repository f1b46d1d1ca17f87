import { test } from 'node:test';
import assert from 'node:assert/strict';
import { editDistance, suggest, unknownKeyMessage } from '../../src/util/suggest.ts';
import { loadYaml } from '../../src/util/yaml.ts';
import { parseCliArgs } from '../../src/cli/args.ts';

test('editDistance counts a transposition as one edit', () => {
  assert.equal(editDistance('recall', 'recal'), 1);
  assert.equal(editDistance('hybird', 'hybrid'), 1);
  assert.equal(editDistance('abc', 'xyz'), 3);
});

test('suggest finds near keys case- and dash-insensitively, and nothing for far ones', () => {
  assert.equal(suggest('recal_at_3', ['recall_at_3', 'mrr_at_10']), 'recall_at_3');
  assert.equal(suggest('rrfk', ['rrfK', 'mode']), 'rrfK');
  assert.equal(suggest('use-light', ['use-lite', 'titan-v2']), 'use-lite');
  assert.equal(suggest('zzzzzz', ['recall_at_3']), undefined);
  assert.match(unknownKeyMessage('g.yaml', 'overall', 'recal_at_3', ['recall_at_3', 'mrr_at_10']), /g\.yaml: overall: unknown key 'recal_at_3'; did you mean 'recall_at_3'\? \(valid: mrr_at_10, recall_at_3\)/);
});

test('loadYaml refuses an alias bomb in bounded time, and cycles, naming the file', () => {
  const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
  for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill('*' + String.fromCharCode(96 + i)).join(',')}]`);
  const t0 = Date.now();
  assert.throws(() => loadYaml(levels.join('\n'), 'bomb.yaml'), /bomb\.yaml: refused: the document expands to more than/);
  assert.ok(Date.now() - t0 < 5000);
  assert.throws(() => loadYaml('a: 1\nb: [\n', 'bad.yaml'), /bad\.yaml:\d+:\d+: not valid YAML/);
  assert.deepEqual(loadYaml('a: &x [1, 2]\nb: *x\n', 'ok.yaml'), { a: [1, 2], b: [1, 2] });
});

test('parseCliArgs names an unknown option with a did-you-mean', () => {
  const opts = { baseline: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;
  assert.throws(() => parseCliArgs(['--baselin', 'x'], opts, 'usage: x'), (e: Error) => /unknown option '--baselin'; did you mean '--baseline'\?\nusage: x/.test(e.message) && (e as { exitCode?: number }).exitCode === 2);
  assert.equal(parseCliArgs(['--baseline', 'b.json', 'r.json'], opts, 'u').values.baseline, 'b.json');
});
