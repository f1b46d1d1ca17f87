/**
 * One promptfoo per repository, and the gate knows which (issue 29): `rankgate eval` runs the project's own promptfoo
 * and refuses (exit 2, one line) one whose engines exclude this Node; the verdict records Node's and promptfoo's
 * versions; `rankgate init` writes a workflow on the Node the installed promptfoo accepts, whose gate ends an eval
 * that did not start as exit 2 (never 1), and a .env that keeps promptfoo's history where `rankgate eval` keeps it.
 * promptfoo packages are fakes built in temp folders (no real eval runs here).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import yaml from 'js-yaml';
import { workflowErrors } from '../helpers/workflow.ts';
import { planInit } from '../../src/cli/init.ts';
import { gateColumn, verdictLines } from '../../src/gate/verdict.ts';
import { DEFAULT_FLOORS } from '../../src/gate/floors.ts';
import { parseResultsObject } from '../../src/results/read.ts';
import { regateHeaderBeside } from '../../src/results/regate.ts';
import { REGATE_KEY } from '../../src/results/stream.ts';
import { fakeProject } from '../helpers/fake-promptfoo.ts';
import { RANKGATE_BIN, tempDir } from './helpers.ts';

const node = process.versions.node;

function rankgate(args: string[], cwd: string) {
  return spawnSync(process.execPath, [RANKGATE_BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 120_000 });
}

test('rankgate eval: a promptfoo whose engines exclude this Node is exit 2, one line naming both versions, nothing written', () => {
  const dir = fakeProject({ version: '99.1.0', engines: { node: '>=99.0.0' } });
  try {
    writeFileSync(join(dir, 'promptfooconfig.yaml'), "prompts: ['{{query}}']\n");
    const r = rankgate(['eval'], dir);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`the project's promptfoo 99\\.1\\.0 requires Node >=99\\.0\\.0 and this is Node ${node.replace(/\./g, '\\.')}: it cannot start here`));
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.ok(!existsSync(join(dir, 'data')), 'no output folder or report written');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rankgate eval runs the project\'s own promptfoo (what its `npx promptfoo` runs), and one that writes no results is exit 2', () => {
  const dir = fakeProject({ version: '0.123.1', engines: { node: '>=1.0.0' } });
  try {
    // this fake promptfoo records how it was started, and writes no results
    writeFileSync(join(dir, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js'), "require('fs').writeFileSync('ran.json', JSON.stringify(process.argv.slice(2)));\n");
    writeFileSync(join(dir, 'promptfooconfig.yaml'), "prompts: ['{{query}}']\n");
    const r = rankgate(['eval'], dir);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    const argv = JSON.parse(readFileSync(join(dir, 'ran.json'), 'utf8')) as string[];
    assert.deepEqual(argv.slice(0, 3), ['eval', '-c', 'promptfooconfig.yaml']);
    assert.match(r.stderr, new RegExp(`promptfoo 0\\.123\\.1 at node_modules/promptfoo, Node ${node.replace(/\./g, '\\.')}\\)`));
    assert.match(r.stderr, /promptfoo eval exited with code 0 and wrote no results/);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the verdict records the toolchain: in the verdict object, and one line under its first', () => {
  const doc = {
    evalId: 'e1',
    results: { timestamp: '2026-11-26T10:00:00.000Z', prompts: [{ provider: 'col', label: 'col', metrics: { namedScores: {}, testPassCount: 0, testFailCount: 0, testErrorCount: 0 } }], results: [] },
    metadata: { promptfooVersion: '0.123.1', nodeVersion: 'v24.21.0', platform: 'linux' },
  };
  const parsed = parseResultsObject(doc, 'results.json');
  assert.deepEqual(parsed.toolchain, { node: '24.21.0', promptfoo: '0.123.1' }, 'read from promptfoo\'s output metadata');
  const v = gateColumn(parsed.columns[0]!, { floors: DEFAULT_FLOORS, floorsSource: 'config/gate.yaml', toolchain: parsed.toolchain });
  assert.deepEqual(v.toolchain, { node: '24.21.0', promptfoo: '0.123.1' });
  const lines = verdictLines(v);
  assert.match(lines[0]!, /^rankgate gate ERROR \(exit 2\)/);
  assert.equal(lines[1], '  on Node 24.21.0 · promptfoo 0.123.1');
  assert.equal(lines.filter((l) => l.includes('promptfoo 0.123.1')).length, 1);
  // a file that does not say: no toolchain line, null in the verdict (never this process's versions passed off as the eval's)
  const { metadata: _m, ...bare } = doc;
  const v2 = gateColumn(parseResultsObject(bare, 'results.json').columns[0]!, { floors: DEFAULT_FLOORS, floorsSource: 'config/gate.yaml' });
  assert.equal(v2.toolchain, null);
  assert.ok(!verdictLines(v2).some((l) => l.includes('on Node')));
});

test('the hook\'s record beside a JSONL output gives its toolchain: only the same eval\'s (its output, written just before)', () => {
  const dir = tempDir('toolchain-regate');
  try {
    const out = join(dir, 'results.jsonl');
    const rec = join(dir, 'results.jsonl.rankgate.jsonl');
    writeFileSync(out, '{}\n');
    const header = (output: string) => JSON.stringify({ [REGATE_KEY]: { evalId: 'e1', output, code: 0, verdict: [], toolchain: { node: '24.21.0', promptfoo: '0.123.1' } } }) + '\n{}\n';
    writeFileSync(rec, header('results.jsonl'));
    assert.deepEqual(regateHeaderBeside(out)?.toolchain, { node: '24.21.0', promptfoo: '0.123.1' });
    writeFileSync(rec, header('other.jsonl'));
    assert.equal(regateHeaderBeside(out), null, 'a record of another output');
    writeFileSync(rec, header('results.jsonl'));
    const old = new Date(Date.now() - 600_000);
    utimesSync(rec, old, old);
    assert.equal(regateHeaderBeside(out), null, 'a record of an earlier eval');
    writeFileSync(rec, 'not json\n');
    assert.equal(regateHeaderBeside(out), null);
    rmSync(rec);
    assert.equal(regateHeaderBeside(out), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

type Step = { name?: string; uses?: string; run?: string; id?: string; if?: string; with?: Record<string, unknown> };

function initIn(dir: string, nodeVersion: string) {
  mkdirSync(join(dir, 'docs'), { recursive: true });
  writeFileSync(join(dir, 'docs', 'a.md'), '# A\n\nSome text.\n');
  writeFileSync(join(dir, 'golden.yaml'), yaml.dump([{ id: 'q1', query: 'refund', category: 'billing', expected_paths: ['a.md'] }]));
  return planInit({ golden: join(dir, 'golden.yaml'), corpus: join(dir, 'docs'), dir, node: nodeVersion, today: '2026-11-26' });
}

test('init: the workflow sets up the Node the installed promptfoo accepts, says why, and .env shares promptfoo\'s history', async () => {
  const latest = fakeProject({ version: '0.123.1', engines: { node: '>=22.22.0' } });
  try {
    const on20 = initIn(latest, 'v20.20.2');
    assert.equal(on20.plan.node.major, 22);
    const wfText = on20.files.find((f) => f.path === '.github/workflows/search-eval.yml')!.content;
    assert.deepEqual(await workflowErrors(wfText), []);
    const steps = (yaml.load(wfText) as { jobs: { eval: { steps: Step[] } } }).jobs.eval.steps;
    assert.equal(steps.find((s) => s.uses?.startsWith('actions/setup-node'))!.with!['node-version'], 22);
    assert.match(wfText, /# Node 22: the lowest of Node 20\/22\/24 that promptfoo 0\.123\.1 accepts \(engines >=22\.22\.0\); the Node running rankgate init \(20\.20\.2\) is outside it\.\n\s+- uses: actions\/setup-node/);
    assert.equal(initIn(latest, 'v24.21.0').plan.node.major, 24, 'the Node running init, when promptfoo accepts it');
    const env = on20.files.find((f) => f.path === '.env')!.content;
    assert.match(env, /^PROMPTFOO_CONFIG_DIR=\.promptfoo$/m, 'the folder rankgate eval gives promptfoo (resolve(\'.promptfoo\'))');
  } finally {
    rmSync(latest, { recursive: true, force: true });
  }
  const pinned = fakeProject({ version: '0.121.20', engines: { node: '^20.20.0 || >=22.22.0' } });
  try {
    const p = initIn(pinned, 'v20.20.2');
    assert.equal(p.plan.node.major, 20);
    assert.match(p.plan.node.why, /the Node running rankgate init \(20\.20\.2\), which promptfoo 0\.121\.20 accepts/);
  } finally {
    rmSync(pinned, { recursive: true, force: true });
  }
});

test('init\'s workflow: an eval that did not start ends the job as exit 2 (setup), a failed floor as 1, a pass as 0', () => {
  const dir = fakeProject({ version: '0.123.1', engines: { node: '>=22.22.0' } });
  try {
    const wf = yaml.load(initIn(dir, 'v24.21.0').files.find((f) => f.path === '.github/workflows/search-eval.yml')!.content) as { jobs: { eval: { steps: Step[] } } };
    const steps = wf.jobs.eval.steps;
    const gate = steps.find((s) => s.id === 'gate')!;
    const fail = steps.find((s) => s.name === 'Fail when the gate fails')!;
    assert.equal(gate.if, 'always()', 'the gate step runs whatever the eval step did');
    // the steps' shell, with the expressions GitHub would fill in and an `npx` that stands for `rankgate gate`
    const bin = join(dir, 'shim');
    mkdirSync(bin);
    const sh = (script: string, exprs: Record<string, string>, env: Record<string, string>) => {
      const text = script.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, k: string) => exprs[k] ?? '');
      return spawnSync('bash', ['-e', '-c', text], { cwd: dir, encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ...env } });
    };
    const job = (gateExit: number | null) => {
      writeFileSync(join(bin, 'npx'), `#!/bin/sh\necho "npx $*" >&2\nexit ${gateExit ?? 0}\n`);
      chmodSync(join(bin, 'npx'), 0o755);
      if (gateExit === null) rmSync(join(dir, 'results.jsonl'), { force: true });
      else writeFileSync(join(dir, 'results.jsonl'), '{}\n');
      const out = join(dir, 'gh-output');
      writeFileSync(out, '');
      // the step's env: a manual run has no base branch (BASE_REF none); a pull request's is origin/<base>
      const g = sh(gate.run!, { 'steps.eval.outcome': gateExit === null ? 'failure' : 'success', 'steps.baseline.outputs.path': '' }, { GITHUB_OUTPUT: out, BASE_REF: 'none' });
      assert.equal(g.status, 0, g.stderr);
      const code = /^code=(.*)$/m.exec(readFileSync(out, 'utf8'))?.[1] ?? '';
      if (code === '0') return { code: 0, log: g.stdout + g.stderr };
      const f = sh(fail.run!, { 'steps.gate.outputs.code': code }, {});
      return { code: f.status, log: g.stdout + g.stderr + f.stdout + f.stderr };
    };
    const notStarted = job(null);
    assert.equal(notStarted.code, 2, notStarted.log);
    assert.match(notStarted.log, /promptfoo eval did not start or wrote no results \(eval step: failure\): a broken setup \(exit 2\)/);
    assert.equal(job(1).code, 1, 'a floor fails');
    assert.equal(job(2).code, 2, 'the gate itself says nothing trustworthy');
    const pass = job(0);
    assert.equal(pass.code, 0);
    assert.match(pass.log, /npx rankgate gate results\.jsonl --base-ref none --comment comment\.md/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
