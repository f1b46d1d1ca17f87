/**
 * Bounded YAML everywhere (src/util/yaml.ts): a document whose aliases expand past the budget (values or
 * characters, relative to the file's size) or that contains itself is refused with one line naming the file, by
 * every reader of user YAML: golden sets, markdown front matter, config/gate.yaml, routing files, and
 * `rankgate eval`'s pre-check of the promptfoo config (before promptfoo parses it). The measure is linear in the
 * text, so the refusal is quick whatever the expansion (timings: bench/yaml-bounds.ts, no timed assertions here).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { isUserError } from '../../src/errors.ts';
import { YAML_BUDGET, loadYaml, measureExpanded, precheckYaml, yamlBudget } from '../../src/util/yaml.ts';
import { readGoldenFile } from '../../src/golden/index.ts';
import { readMarkdownFile } from '../../src/ingest/readers.ts';
import { loadFloors } from '../../src/gate/floors.ts';
import { loadRoutingConfig } from '../../src/search/routing.ts';

const ROOT = join(import.meta.dirname, '..', '..');

function tempDir(t: { after: (fn: () => void) => void }): string {
  const d = mkdtempSync(join(tmpdir(), 'rankgate-yaml-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/**
 * A mapping `l0 .. l{levels}`: l0 is a list of `width` copies of `leaf`, each further level a list of `width`
 * aliases to the previous one. Expanded, the last level holds width^(levels+1) leaves.
 */
function aliasBomb(leaf: string, width: number, levels: number, indent = ''): string {
  const lines = [`${indent}l0: &l0 [${Array(width).fill(JSON.stringify(leaf)).join(', ')}]`];
  for (let i = 1; i <= levels; i++) lines.push(`${indent}l${i}: &l${i} [${Array(width).fill(`*l${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}

/** The issue's case: ~18 KB whose anchors expand to a million strings of 1.7 KB (1.7 GB of text). */
const MILLION = aliasBomb('x'.repeat(1700), 10, 5);
/** Few values, long ones: 1,111 copies of a 100 KB string (106 MB of text), far under the value budget. */
const LONG = aliasBomb('y'.repeat(100_000), 10, 3).replace(/^l0: &l0 \[.*\]$/m, `l0: &l0 ["${'y'.repeat(100_000)}"]`);

/** One line, naming the file, saying refused. */
function refusedOneLine(e: unknown, file: string, what: RegExp): boolean {
  assert.ok(isUserError(e), `not a UserError: ${String(e)}`);
  const m = (e as Error).message;
  assert.ok(!m.includes('\n'), `more than one line: ${m}`);
  assert.ok(m.includes(file), `file not named: ${m}`);
  assert.match(m, what);
  return true;
}

test('the measure counts every alias as a full copy (values and characters), and finds cycles', () => {
  assert.ok(MILLION.length > 17_000 && MILLION.length < 19_000, `${MILLION.length}`);
  const doc = yaml.load(MILLION, { schema: yaml.CORE_SCHEMA });
  const m = measureExpanded(doc);
  assert.notEqual(m, 'cycle');
  const { nodes, bytes } = m as { nodes: number; bytes: number };
  // the root and levels of 11, 111, ... 1,111,111 values (level i: a list of 10 copies of level i-1); the
  // strings are 10 + 100 + ... + 10^6 = 1,111,110 of 1,700 characters; keys l0..l5
  assert.equal(nodes, 1 + 11 + 111 + 1111 + 11_111 + 111_111 + 1_111_111);
  assert.equal(bytes, 6 * 2 + 1_111_110 * 1700);
  assert.deepEqual(measureExpanded(yaml.load('a: [b, cc]\nd: 1\n')), { nodes: 5, bytes: 1 + 1 + 2 + 1 + 1, written: { nodes: 5, bytes: 6 } });
  assert.equal(measureExpanded(yaml.load('a: &x [1, *x]\n')), 'cycle');
  // as written: the root, 6 lists, 10 strings and 50 aliases
  assert.deepEqual((m as { written: object }).written, { nodes: 1 + 6 + 10 + 50, bytes: 12 + 10 * 1700 });
  assert.deepEqual(yamlBudget({ nodes: 1000, bytes: 2000 }), { maxNodes: YAML_BUDGET.baseNodes + 10_000, maxBytes: YAML_BUDGET.baseBytes + 20_000 });
  // capped for big documents, but never below what the document holds as written
  assert.deepEqual(yamlBudget({ nodes: 3e6, bytes: 1e8 }), { maxNodes: YAML_BUDGET.maxNodes, maxBytes: YAML_BUDGET.maxBytes });
  assert.deepEqual(yamlBudget({ nodes: 3e7, bytes: 3e8 }), { maxNodes: 3e7, maxBytes: 3e8 });
});

test('loadYaml refuses a million-string bomb (values) and a long-string bomb (characters) in one line', () => {
  assert.throws(() => loadYaml(MILLION, 'million.yaml'), (e) =>
    refusedOneLine(e, 'million.yaml', /^million\.yaml: refused: the document expands to more than [\d,]+ values, the limit for the 67 values it holds as written \(1,234,567 once its YAML aliases such as \*name are written out\); write the values out or split the file$/),
  );
  assert.throws(() => loadYaml(LONG, 'long.yaml'), (e) => refusedOneLine(e, 'long.yaml', /^long\.yaml: refused: the document expands to more than \d+\.\d MB of text, the limit for the 97\.\d KB of text it holds as written \(10\d\.\d MB once its YAML aliases/));
  // padding does not buy a budget: 8 MB of comments and blank lines around the same bomb
  const padded = `${'# padding\n'.repeat(800_000)}${MILLION}${'\n'.repeat(100_000)}`;
  assert.throws(() => loadYaml(padded, 'padded.yaml'), (e) => refusedOneLine(e, 'padded.yaml', /more than 100,670 values, the limit for the 67 values it holds as written/));
  // keys count too: one long key reused through aliases of the mapping
  const keys = `k0: &k0 {${'z'.repeat(200_000)}: 1}\nk1: [${Array(40).fill('*k0').join(', ')}]\n`;
  assert.throws(() => loadYaml(keys, 'keys.yaml'), (e) => refusedOneLine(e, 'keys.yaml', /of text/));
  assert.throws(() => loadYaml('a: &a [1, *a]\n', 'cycle.yaml'), (e) => refusedOneLine(e, 'cycle.yaml', /a cycle/));
  assert.throws(() => loadYaml(`${'['.repeat(5000)}${']'.repeat(5000)}`, 'deep.yaml'), (e) => refusedOneLine(e, 'deep.yaml', /^deep\.yaml:\d+:\d+: not valid YAML \(/));
});

test('ordinary files pass: no aliases (even large), and a block of settings reused through aliases', () => {
  // 200,000 values without aliases (1.2 MB): far above the base budget, inside the per-character one
  const big = `queries:\n${Array.from({ length: 100_000 }, (_, i) => `  - q${i}`).join('\n')}\n`;
  assert.equal((loadYaml(big, 'big.yaml') as { queries: string[] }).queries.length, 100_000);
  // a 40-word list reused by 30 rules
  const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(', ');
  const reuse = `common: &c [${words}]\nrules:\n${Array.from({ length: 30 }, (_, i) => `  r${i}: {terms: *c, weight: ${i}}`).join('\n')}\n`;
  assert.equal(Object.keys((loadYaml(reuse, 'reuse.yaml') as { rules: object }).rules).length, 30);
  for (const f of ['promptfooconfig.yaml', 'config/gate.yaml', 'datasets/routing.yaml', 'datasets/golden/queries.yaml']) {
    precheckYaml(readFileSync(join(ROOT, f), 'utf8'), f);
    loadYaml(readFileSync(join(ROOT, f), 'utf8'), f);
  }
});

test('the promptfoo pre-check reads promptfoo YAML 1.1 forms, counts merge keys at full weight, and refuses duplicate << keys', () => {
  precheckYaml('when: 2026-01-01\nblob: !!binary aGVsbG8=\nbase: &b {a: 1}\nderived: {<<: *b, c: 2}\n', 'ok.yaml');
  // a merge chain: each level merges the previous one ten times through a list: counted like aliases
  const merge = ['m0: &m0 {a: "x"}'];
  for (let i = 1; i <= 8; i++) merge.push(`m${i}: &m${i} {<<: [${Array(10).fill(`*m${i - 1}`).join(', ')}], k${i}: [${Array(10).fill(`*m${i - 1}`).join(', ')}]}`);
  assert.throws(() => precheckYaml(merge.join('\n'), 'merge.yaml'), (e) => refusedOneLine(e, 'merge.yaml', /refused: the document expands to more than/));
  assert.throws(() => precheckYaml('a: &a {x: 1}\nb:\n  <<: *a\n  <<: *a\n', 'dup.yaml'), (e) => refusedOneLine(e, 'dup.yaml', /^dup\.yaml:\d+:\d+: not valid YAML \(duplicated mapping key\)$/));
});

test('every reader of user YAML refuses the million-string bomb in one line naming the file', async (t) => {
  const d = tempDir(t);
  // golden set (blind-test YAML)
  const golden = join(d, 'queries.yaml');
  writeFileSync(golden, MILLION);
  const g = readGoldenFile(golden);
  assert.equal(g.errorCount, 1);
  assert.match(g.lines[0]!, /queries\.yaml:1 \(file\) yaml: refused: the document expands to more than [\d,]+ values/);
  // markdown front matter
  const md = join(d, 'doc.md');
  writeFileSync(md, `---\ntitle: A\n${MILLION}---\n# A\n\ntext\n`);
  await assert.rejects(readMarkdownFile(md, d), (e) => refusedOneLine(e, md, /refused: the document expands to more than/));
  // gate floors
  const gate = join(d, 'gate.yaml');
  writeFileSync(gate, MILLION);
  assert.throws(() => loadFloors(gate), (e) => refusedOneLine(e, gate, /refused: the document expands to more than/));
  // routing rules
  const routing = join(d, 'routing.yaml');
  writeFileSync(routing, LONG);
  assert.throws(() => loadRoutingConfig(routing), (e) => refusedOneLine(e, routing, /refused: the document expands to more than .* of text/));
});

test('rankgate eval pre-checks the promptfoo config: exit 2, one line, before promptfoo starts', (t) => {
  const d = tempDir(t);
  const cfg = join(d, 'promptfooconfig.yaml');
  writeFileSync(cfg, `description: bomb\n${MILLION}`);
  const out = join(d, 'out');
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'eval', '--config', cfg, '--out-dir', out], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 2, r.stdout + r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /promptfooconfig\.yaml: refused: the document expands to more than [\d,]+ values/);
  assert.doesNotMatch(r.stderr, /promptfoo eval -c/);
  assert.equal(existsSync(out), false, 'nothing written, promptfoo never started');
  // a .json config is parsed by promptfoo's YAML loader too: pre-checked the same way
  const json = join(d, 'promptfooconfig.json');
  writeFileSync(json, MILLION);
  const j = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'eval', '--config', json, '--out-dir', out], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(j.status, 2, j.stdout + j.stderr);
  assert.match(j.stderr, /promptfooconfig\.json: refused/);
});
