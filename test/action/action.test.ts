/**
 * The GitHub Action (action.yml, composite): its shape (inputs used, outputs wired, every run step a script of action/
 * that exists), and its scripts run as the runner runs them (bash, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files,
 * npx resolving rankgate from the repository's node_modules): the gate step on the harness fixture's results, the exit
 * step, the eval step's shard and merge handling (promptfoo and merge replaced by a recording shim: what they run is
 * tested elsewhere), the setup step's version check, and the PR comment's create-or-update.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import yaml from 'js-yaml';
import { ROOT, fixtureEvalInto, tempDir } from '../harness/helpers.ts';
import { runActionScript as runScript } from '../helpers/action-step.ts';
// @ts-expect-error plain JavaScript module without types
import { MARKER, upsertComment } from '../../action/comment.mjs';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
  shell?: string;
  'continue-on-error'?: boolean;
}
const action = yaml.load(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as {
  name: string;
  inputs: Record<string, { description: string; default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
};

test('action.yml: a composite action whose inputs are all used, outputs wired to its gate step, run steps scripts of action/', () => {
  assert.equal(action.runs.using, 'composite');
  const text = readFileSync(join(ROOT, 'action.yml'), 'utf8');
  for (const k of ['config', 'floors', 'baseline', 'comment', 'sweep', 'judge', 'shard', 'merge', 'fail-on-gate', 'history']) {
    assert.ok(action.inputs[k]?.description, `input ${k}`);
    assert.match(text, new RegExp(`inputs\\.${k.replace('-', '\\-')}\\b`), `input ${k} is used`);
  }
  for (const k of ['exit-code', 'verdict', 'results', 'report']) assert.match(action.outputs[k]!.value, /^\$\{\{ steps\.gate\.outputs\.[\w-]+ \}\}$/);
  const ids = new Set(action.runs.steps.map((s) => s.id).filter(Boolean));
  assert.ok(ids.has('gate') && ids.has('eval'));
  for (const s of action.runs.steps) {
    if (s.run) {
      assert.equal(s.shell, 'bash', `${s.name}: composite run steps name their shell`);
      const m = /\$GITHUB_ACTION_PATH\/(action\/[\w.-]+)/.exec(s.run);
      assert.ok(m, `${s.name}: runs a script of action/`);
      assert.ok(existsSync(join(ROOT, m[1]!)), `${m[1]} exists`);
    } else assert.match(s.uses ?? '', /^actions\/(cache|download-artifact|upload-artifact|github-script)@v\d+$/, `${s.name}: a pinned official action`);
  }
  // fork-safe comment: skipped unless the head repository is this one, and never fails the job
  const comment = action.runs.steps.find((s) => s.uses?.startsWith('actions/github-script'))!;
  assert.match(comment.if!, /github\.event\.pull_request\.head\.repo\.full_name == github\.repository/);
  assert.equal(comment['continue-on-error'], true);
  // caches: the model caches restore only what runs on the base branch saved (never a pull request's own)
  const model = action.runs.steps.find((s) => s.uses?.startsWith('actions/cache') && /\.rankgate\/cache$/.test(s.with?.path ?? ''))!;
  assert.ok(model, 'a model-cache step');
  assert.doesNotMatch(model.with!['restore-keys']!, /pull_request/);
  assert.match(model.with!['restore-keys']!, /rankgate-model-cache-\$\{\{ github\.base_ref \|\| github\.ref_name \}\}-push-/);
  // the schedule's caches are restorable by pull requests
  assert.match(model.with!['restore-keys']!, /rankgate-model-cache-\$\{\{ github\.base_ref \|\| github\.ref_name \}\}-schedule-/);
  // history: never on a pull request; the last step decides by its code when it ran (a drift beyond max_drift: 1)
  const hist = action.runs.steps.find((s) => s.id === 'history')!;
  assert.match(hist.if!, /inputs\.history == 'true'/);
  assert.match(hist.if!, /\(github\.event_name == 'schedule' \|\| github\.event_name == 'workflow_dispatch'\)/, 'the history only on a schedule or a manual run');
  const exit = action.runs.steps.find((s) => s.run?.includes('action-exit.sh'))!;
  assert.equal(exit.env!.CODE, '${{ steps.gate.outputs.exit-code }}');
  assert.equal(exit.env!.HISTORY_CODE, '${{ steps.history.outputs.exit-code }}', 'the worse of the two decides');
  // judged by the base branch on a pull request
  assert.equal(action.runs.steps.find((s) => s.id === 'gate')!.env!.BASE_REF, "${{ github.event.pull_request.base.sha || 'none' }}");
});

/** A team repository whose node_modules holds this rankgate (as an install would link its bin). */
function teamRepo(prefix: string): string {
  const dir = tempDir(prefix);
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'rankgate'));
  symlinkSync(join(ROOT, 'bin', 'rankgate.js'), join(dir, 'node_modules', '.bin', 'rankgate'));
  return dir;
}

/** A shim for a command of node_modules/.bin: records its arguments, touches the --output file. */
function shim(dir: string, name: string): string {
  const log = join(dir, `${name}.args`);
  const p = join(dir, 'node_modules', '.bin', name);
  rmSync(p, { force: true });
  writeFileSync(p, `#!/usr/bin/env bash\nprintf '%s\\n' "$*" >> '${log}'\nenv | grep -E '^RANKGATE_' | sort >> '${log}'\nfor ((i=1;i<=$#;i++)); do if [ "\${!i}" = --output ]; then j=$((i+1)); echo '{}' > "\${!j}"; fi; done\nexit 0\n`);
  chmodSync(p, 0o755);
  return log;
}

test('the gate step gates the results, writes the summary and the outputs, and always exits 0; the exit step decides', async () => {
  const dir = teamRepo('action-gate');
  try {
    const run = await fixtureEvalInto(dir);
    const r = await runScript('action-gate.sh', dir, { RESULTS: 'results.json', BASE_REF: 'none', INPUT_FLOORS: 'config/gate.yaml', INPUT_BASELINE: '', INPUT_SWEEP: 'none' });
    assert.equal(r.code, 0, r.out);
    assert.equal(r.outputs['exit-code'], String(run.code === 100 ? 1 : run.code), r.out);
    assert.match(r.outputs.verdict!, /^rankgate gate (PASSED|FAILED|ERROR) \(exit \d\)/);
    assert.equal(r.outputs.results, 'results.json');
    assert.equal(r.outputs.report, 'rankgate-out/report.html');
    assert.equal(r.outputs.comment, 'rankgate-out/comment.md');
    assert.ok(existsSync(join(dir, 'rankgate-out', 'report.html')));
    assert.ok(r.summary.includes(MARKER), 'the step summary is the comment');
    // no results: exit 2, said
    const none = await runScript('action-gate.sh', dir, { RESULTS: 'missing.jsonl', BASE_REF: 'none' });
    assert.equal(none.outputs['exit-code'], '2');
    assert.match(none.outputs.verdict!, /the eval wrote no results/);
    for (const [code, want] of [['0', 0], ['1', 1], ['2', 2], ['', 2], ['7', 2]] as const) {
      const e = await runScript('action-exit.sh', dir, { CODE: code });
      assert.equal(e.code, want, `CODE=${code}: ${e.out}`);
    }
    // the scheduled run: the worse of the gate's and the history step's codes (a passing history never hides a failing gate)
    for (const [code, hist, want] of [['1', '0', 1], ['0', '1', 1], ['0', '2', 2], ['1', '', 1], ['2', '0', 2]] as const) {
      const e = await runScript('action-exit.sh', dir, { CODE: code, HISTORY_CODE: hist });
      assert.equal(e.code, want, `CODE=${code} HISTORY_CODE=${hist}: ${e.out}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the eval step: one shard (RANKGATE_SHARD, no gate), a bad shard said, a merge of the shards (records left out)', async () => {
  const dir = teamRepo('action-eval');
  try {
    writeFileSync(join(dir, 'promptfooconfig.yaml'), 'providers: []\n');
    const pf = shim(dir, 'promptfoo');
    const rg = shim(dir, 'rankgate');
    const base = { INPUT_CONFIG: 'promptfooconfig.yaml', INPUT_FLOORS: 'config/gate.yaml', INPUT_JUDGE: 'openai:chat:m', INPUT_MERGE: 'false', RANKGATE_BASE_REF: 'origin/main' };
    const one = await runScript('action-eval.sh', dir, { ...base, INPUT_SHARD: '2/4' });
    assert.equal(one.code, 0, one.out);
    assert.deepEqual([one.outputs.results, one.outputs['shard-index']], ['rankgate-out/results-shard-2.jsonl', '2']);
    const args = readFileSync(pf, 'utf8');
    assert.match(args, /^eval -c promptfooconfig\.yaml --no-cache --no-progress-bar --no-table --output rankgate-out\/results-shard-2\.jsonl$/m);
    for (const v of ['RANKGATE_SHARD=2/4', 'RANKGATE_GATE=off', 'RANKGATE_JUDGE=openai:chat:m', 'RANKGATE_BASE_REF=origin/main', 'RANKGATE_GATE_FLOORS=config/gate.yaml']) assert.ok(args.includes(v), `${v} in\n${args}`);
    const bad = await runScript('action-eval.sh', dir, { ...base, INPUT_SHARD: '5/4' });
    assert.match(bad.out, /input shard '5\/4': expected i\/N with 1 <= i <= N/);
    assert.equal(bad.outputs.results, '');
    mkdirSync(join(dir, 'rankgate-shards'));
    for (const f of ['results-shard-1.jsonl', 'results-shard-2.jsonl', 'results-shard-1.jsonl.rankgate.jsonl']) writeFileSync(join(dir, 'rankgate-shards', f), '{}\n');
    const merged = await runScript('action-eval.sh', dir, { ...base, INPUT_SHARD: '', INPUT_MERGE: 'true' });
    assert.equal(merged.outputs.results, 'rankgate-out/results.jsonl');
    assert.match(readFileSync(rg, 'utf8'), /^merge rankgate-out\/results\.jsonl rankgate-shards\/results-shard-1\.jsonl rankgate-shards\/results-shard-2\.jsonl$/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the setup step uses the repository\'s rankgate when it is the action\'s version, and installs that version otherwise', async () => {
  const dir = teamRepo('action-setup');
  try {
    const same = await runScript('action-setup.sh', dir, {});
    assert.equal(same.code, 0, same.out);
    assert.doesNotMatch(same.out, /installing/);
    assert.match(same.out, new RegExp(`^rankgate ${VERSION.replace(/\./g, '\\.')} \\(Node v`, 'm'));
    // another version in node_modules: npm install of this action's version (npm shimmed: no registry here)
    rmSync(join(dir, 'node_modules', 'rankgate'));
    mkdirSync(join(dir, 'node_modules', 'rankgate'));
    writeFileSync(join(dir, 'node_modules', 'rankgate', 'package.json'), JSON.stringify({ name: 'rankgate', version: '0.0.1' }));
    const npm = shim(dir, 'npm');
    const other = await runScript('action-setup.sh', dir, {});
    assert.match(other.out, new RegExp(`node_modules holds rankgate 0\\.0\\.1; installing rankgate@${VERSION.replace(/\./g, '\\.')}, this action's version`));
    assert.match(readFileSync(npm, 'utf8'), new RegExp(`^install --no-save --no-audit --no-fund rankgate@${VERSION.replace(/\./g, '\\.')}$`, 'm'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the PR comment: created once, then updated in place (found by its marker)', async () => {
  const dir = tempDir('action-comment');
  try {
    const file = join(dir, 'comment.md');
    writeFileSync(file, 'verdict\n');
    const comments: { id: number; body: string }[] = [{ id: 1, body: 'someone else' }];
    const calls: string[] = [];
    const github = {
      paginate: async () => comments,
      rest: {
        issues: {
          listComments: 'list',
          createComment: async (a: { body: string }) => (calls.push('create'), comments.push({ id: 2, body: a.body }), { data: { id: 2 } }),
          updateComment: async (a: { comment_id: number; body: string }) => (calls.push(`update ${a.comment_id}`), (comments.find((c) => c.id === a.comment_id)!.body = a.body)),
        },
      },
    };
    const context = { repo: { owner: 'o', repo: 'r' }, issue: { number: 7 } };
    assert.deepEqual(await upsertComment({ github, context, file }), { created: 2 });
    writeFileSync(file, 'verdict 2\n');
    assert.deepEqual(await upsertComment({ github, context, file }), { updated: 2 });
    assert.deepEqual(calls, ['create', 'update 2']);
    assert.equal(comments.length, 2);
    assert.equal(comments[1]!.body, `${MARKER}\nverdict 2\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
