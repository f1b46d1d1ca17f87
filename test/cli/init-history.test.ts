/**
 * init's scheduled history job (docs/history.md), in-process: the GitHub workflow (valid for GitHub's own parser: a
 * weekly schedule and a `history` dispatch input, the pull-request job kept off the schedule, `contents: write` on the
 * history job only, the schedule's model caches restorable by pull requests), the --action workflow (the Action with
 * `history: true`) and the GitLab job (a scheduled pipeline). Then the workflow's own history step run as the runner
 * runs it, in a team repository whose `origin` is a local bare repository: the branch rankgate-history is created.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import yaml from 'js-yaml';
import { run } from '../../src/cli/init.ts';
import { fixtureEvalInto } from '../harness/helpers.ts';
import { workflowErrors } from '../helpers/workflow.ts';
import { ROOT, helpdeskFiles, tempDir } from './helpers.ts';

interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  with?: Record<string, string | boolean>;
}
interface Job {
  if?: string;
  permissions?: Record<string, string>;
  steps: Step[];
}
interface Workflow {
  on: { schedule: { cron: string }[]; workflow_dispatch: { inputs: Record<string, { type: string; default: unknown }> }; pull_request: unknown };
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
}

async function quiet<T>(f: () => Promise<T>): Promise<T> {
  const log = console.log;
  console.log = () => {};
  try {
    return await f();
  } finally {
    console.log = log;
  }
}

function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'Dana', GIT_AUTHOR_EMAIL: 'd@example.com', GIT_COMMITTER_NAME: 'Dana', GIT_COMMITTER_EMAIL: 'd@example.com' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** A team repository with rankgate in node_modules (the paths init writes are node_modules/rankgate/...). */
function team(prefix: string): string {
  const dir = tempDir(prefix);
  writeFileSync(join(dir, 'package.json'), '{"name":"team","private":true}\n');
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'rankgate'));
  symlinkSync(join(ROOT, 'bin', 'rankgate.js'), join(dir, 'node_modules', '.bin', 'rankgate'));
  helpdeskFiles(dir);
  return dir;
}

const SCHEDULE_KEY = /rankgate-model-cache-\$\{\{ github\.base_ref \|\| github\.ref_name \}\}-schedule-/;

test('init\'s workflow: a weekly history job on the default branch, contents: write on it only, valid for GitHub; its push step against a bare origin', async () => {
  const dir = team('init-history');
  try {
    assert.equal(await quiet(() => run(['--golden', join(dir, 'eval/golden.yaml'), '--corpus', join(dir, 'help'), '--dir', dir, '--yes'])), 0);
    const text = readFileSync(join(dir, '.github/workflows/search-eval.yml'), 'utf8');
    assert.deepEqual(await workflowErrors(text), []);
    const wf = yaml.load(text) as Workflow;
    assert.deepEqual(wf.on.schedule, [{ cron: '17 4 * * 1' }]);
    assert.match(text, /Change it here \(e\.g\. '17 4 \* \* \*' for every day\)/);
    assert.deepEqual(wf.on.workflow_dispatch.inputs.history, { description: 'Evaluate the default branch and append the run to the history (branch rankgate-history)', type: 'boolean', default: false });
    assert.deepEqual(wf.permissions, { contents: 'read', 'pull-requests': 'write' });
    assert.equal(wf.jobs.eval!.if, "${{ github.event_name != 'schedule' && !(github.event_name == 'workflow_dispatch' && inputs.history) }}");
    const h = wf.jobs.history!;
    assert.deepEqual(h.permissions, { contents: 'write' }, 'contents: write on the history job only');
    assert.match(h.if!, /^\$\{\{ github\.event_name == 'schedule' \|\| \(github\.event_name == 'workflow_dispatch' && inputs\.history && github\.ref == format\('refs\/heads\/\{0\}', github\.event\.repository\.default_branch\)\) \}\}$/);
    assert.equal(h.steps.find((s) => s.name === 'Eval (promptfoo)')!.env!.RANKGATE_BASE_REF, 'none');
    const step = h.steps.find((s) => s.id === 'history')!;
    assert.equal(step.run, 'bash node_modules/rankgate/action/history-push.sh');
    assert.equal(h.steps.at(-1)!.if, "always() && steps.history.outputs.exit-code != '0'");
    // the model caches: the schedule saves under its event, and both jobs restore the base branch's schedule saves
    for (const job of [wf.jobs.eval!, h]) {
      const cache = job.steps.find((s) => s.with?.path === '.rankgate/cache')!;
      assert.match(String(cache.with!.key), /-\$\{\{ github\.event_name \}\}-\$\{\{ github\.run_id \}\}$/);
      assert.match(String(cache.with!['restore-keys']), SCHEDULE_KEY);
      assert.doesNotMatch(String(cache.with!['restore-keys']), /pull_request/);
    }

    // the history step as the runner runs it: bash, in the checkout, origin a bare repository
    const origin = join(dir, '..', `${dir.split('/').pop()}-origin.git`);
    git(dir, ['init', '-q', '--bare', origin]);
    writeFileSync(join(dir, '.gitignore'), 'node_modules/\nresults.json*\n.gh-output\n');
    git(dir, ['init', '-q', '-b', 'main']);
    git(dir, ['add', '.']);
    git(dir, ['commit', '-q', '-m', 'rankgate init']);
    git(dir, ['remote', 'add', 'origin', origin]);
    git(dir, ['push', '-q', 'origin', 'main']);
    await fixtureEvalInto(dir);
    writeFileSync(join(dir, '.gh-output'), '');
    const r = spawnSync('bash', ['-c', step.run!], {
      cwd: dir,
      encoding: 'utf8',
      env: { PATH: `${join(dir, 'node_modules', '.bin')}:${process.env.PATH}`, HOME: process.env.HOME, GITHUB_OUTPUT: join(dir, '.gh-output'), GITHUB_RUN_ID: '9001', GITHUB_REPOSITORY: 'acme/helpdesk', ...step.env, RESULTS: 'results.json' },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /rankgate history: pushed [0-9a-f]{7,} to origin rankgate-history \(1 line\)/);
    assert.match(readFileSync(join(dir, '.gh-output'), 'utf8'), /^exit-code=1\npushed=true\n$/m, 'the fixture fails init\'s floors: exit 1, for the next step');
    assert.match(git(origin, ['show', 'rankgate-history:history.jsonl']), /^\{"v":1,"repo":"acme\/helpdesk","run":"9001"/);
    console.log(`init's history step against a bare origin:\n${r.stdout.trim()}\n${r.stderr.trim()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('init --action: the history job calls the Action with history: true; init --ci gitlab: a scheduled pipeline job', async () => {
  const dir = team('init-history-action');
  try {
    assert.equal(await quiet(() => run(['--golden', join(dir, 'eval/golden.yaml'), '--corpus', join(dir, 'help'), '--dir', dir, '--action', '--yes'])), 0);
    const text = readFileSync(join(dir, '.github/workflows/search-eval.yml'), 'utf8');
    assert.deepEqual(await workflowErrors(text), []);
    const wf = yaml.load(text) as Workflow;
    assert.deepEqual(wf.on.schedule, [{ cron: '17 4 * * 1' }]);
    assert.deepEqual(wf.jobs.history!.permissions, { contents: 'write' });
    const uses = wf.jobs.history!.steps.find((s) => s.uses?.startsWith('rankgate/rankgate@'))!;
    assert.deepEqual(uses.with, { config: 'promptfooconfig.yaml', floors: 'config/gate.yaml', comment: false, history: true });
    assert.match(wf.jobs.eval!.if!, /github\.event_name != 'schedule'/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const gl = team('init-history-gitlab');
  try {
    assert.equal(await quiet(() => run(['--golden', join(gl, 'eval/golden.yaml'), '--corpus', join(gl, 'help'), '--dir', gl, '--ci', 'gitlab', '--yes'])), 0);
    const job = yaml.load(readFileSync(join(gl, '.gitlab/rankgate.gitlab-ci.yml'), 'utf8')) as Record<string, { rules?: { if: string }[]; script?: string[]; extends?: string; cache?: { policy: string }[] }>;
    const h = job['search-eval-history']!;
    assert.equal(h.extends, 'search-eval');
    assert.deepEqual(h.rules, [{ if: '$CI_PIPELINE_SOURCE == "schedule" && $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH' }]);
    assert.match(h.script!.join('\n'), /RESULTS=results\.jsonl bash node_modules\/rankgate\/action\/history-push\.sh/);
    assert.match(h.script!.join('\n'), /RANKGATE_HISTORY_TOKEN/);
    assert.equal(job['search-eval-index']!.rules![0]!.if, '$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE != "schedule"', 'the schedule evaluates once');
  } finally {
    rmSync(gl, { recursive: true, force: true });
  }
});
