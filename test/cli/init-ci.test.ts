/**
 * rankgate init's CI choices, in-process: --action (a workflow around the published GitHub Action, valid for GitHub's
 * parser, judged by the base branch), --ci gitlab (a GitLab job included from .gitlab-ci.yml: target branch fetched as
 * the base ref, the cache written by the default branch only), --ci none, and a bad value refused in one line.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import yaml from 'js-yaml';
import { run } from '../../src/cli/init.ts';
import { RANKGATE_VERSION } from '../../src/version.ts';
import { helpdeskFiles, tempDir } from './helpers.ts';
import { workflowErrors } from '../helpers/workflow.ts';

async function quiet<T>(f: () => Promise<T>): Promise<{ value: T; out: string }> {
  const log = console.log;
  let out = '';
  console.log = (...a: unknown[]) => void (out += a.join(' ') + '\n');
  try {
    return { value: await f(), out };
  } finally {
    console.log = log;
  }
}

function repo(prefix: string): string {
  const dir = tempDir(prefix);
  writeFileSync(join(dir, 'package.json'), '{"name":"team","private":true}\n');
  helpdeskFiles(dir);
  return dir;
}

test('init --action: a workflow around rankgate/rankgate@vMAJOR that GitHub accepts', async () => {
  const dir = repo('init-action');
  try {
    const { value, out } = await quiet(() => run(['--golden', join(dir, 'eval/golden.yaml'), '--corpus', join(dir, 'help'), '--dir', dir, '--action', '--yes']));
    assert.equal(value, 0, out);
    const text = readFileSync(join(dir, '.github/workflows/search-eval.yml'), 'utf8');
    assert.deepEqual(await workflowErrors(text), []);
    const wf = yaml.load(text) as { jobs: { eval: { steps: { uses?: string; with?: Record<string, string> }[] } }; on: { pull_request: { paths: string[] } } };
    const step = wf.jobs.eval.steps.find((s) => s.uses?.startsWith('rankgate/rankgate@'))!;
    assert.equal(step.uses, `rankgate/rankgate@v${RANKGATE_VERSION.split('.')[0]}`);
    assert.deepEqual(step.with, { config: 'promptfooconfig.yaml', floors: 'config/gate.yaml', sweep: "${{ inputs.sweep || 'none' }}" });
    assert.ok(wf.on.pull_request.paths.includes('eval/golden.yaml'));
    assert.match(text, /fetch-depth: 0/);
    assert.ok(!existsSync(join(dir, '.gitlab-ci.yml')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('init --ci gitlab: a merge-request job judged by the target branch, included from a new .gitlab-ci.yml (an existing one is left and the include said)', async () => {
  const dir = repo('init-gitlab');
  try {
    const { value, out } = await quiet(() => run(['--golden', join(dir, 'eval/golden.yaml'), '--corpus', join(dir, 'help'), '--dir', dir, '--ci', 'gitlab', '--yes']));
    assert.equal(value, 0, out);
    assert.ok(!existsSync(join(dir, '.github/workflows/search-eval.yml')));
    assert.deepEqual(yaml.load(readFileSync(join(dir, '.gitlab-ci.yml'), 'utf8')), { include: [{ local: '.gitlab/rankgate.gitlab-ci.yml' }] });
    const job = yaml.load(readFileSync(join(dir, '.gitlab/rankgate.gitlab-ci.yml'), 'utf8')) as Record<string, { script?: string[]; rules?: { if: string; changes?: string[] }[]; cache?: { policy: string }[]; variables?: Record<string, string>; artifacts?: { paths: string[] } }>;
    const j = job['search-eval']!;
    assert.equal(j.rules![0]!.if, '$CI_PIPELINE_SOURCE == "merge_request_event"');
    assert.ok(j.rules![0]!.changes!.includes('help/**'));
    assert.equal(j.variables!.GIT_DEPTH, '0');
    assert.equal(j.cache![0]!.policy, 'pull', 'a merge request never writes the cache');
    assert.equal(job['search-eval-index']!.cache![0]!.policy, 'pull-push');
    const script = j.script!.join('\n');
    assert.match(script, /git fetch --no-tags origin "\$CI_MERGE_REQUEST_TARGET_BRANCH_NAME"/);
    assert.match(script, /npx rankgate gate results\.jsonl --base-ref "\$RANKGATE_BASE_REF" --comment comment\.md/);
    // an existing pipeline is not rewritten: the include is said
    const again = repo('init-gitlab2');
    writeFileSync(join(again, '.gitlab-ci.yml'), 'test:\n  script: [npm test]\n');
    const r = await quiet(() => run(['--golden', join(again, 'eval/golden.yaml'), '--corpus', join(again, 'help'), '--dir', again, '--ci', 'gitlab', '--yes']));
    assert.equal(readFileSync(join(again, '.gitlab-ci.yml'), 'utf8'), 'test:\n  script: [npm test]\n');
    assert.match(r.out, /note: add the job to your pipeline: in \.gitlab-ci\.yml, include:/);
    rmSync(again, { recursive: true, force: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('init --ci none writes no CI file; a bad --ci is one line', async () => {
  const dir = repo('init-noci');
  try {
    const { value } = await quiet(() => run(['--golden', join(dir, 'eval/golden.yaml'), '--corpus', join(dir, 'help'), '--dir', dir, '--ci', 'none', '--yes']));
    assert.equal(value, 0);
    assert.ok(!existsSync(join(dir, '.github')) && !existsSync(join(dir, '.gitlab-ci.yml')));
    await assert.rejects(() => run(['--golden', join(dir, 'eval/golden.yaml'), '--corpus', join(dir, 'help'), '--dir', dir, '--ci', 'gitlb', '--yes']), /--ci gitlb: expected github, gitlab or none; did you mean 'gitlab'\?/);
    await assert.rejects(() => run(['--golden', 'x', '--corpus', 'y', '--action', '--ci', 'gitlab']), /--action is GitHub's: it cannot go with --ci gitlab/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
