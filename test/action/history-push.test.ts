/**
 * The scheduled job's push step (action/history-push.sh, used by init's workflow, the Action's `history` input and the
 * GitLab job) as the runner runs it: bash, GITHUB_OUTPUT, rankgate through node_modules/.bin, against a local bare
 * repository as `origin` (`git init --bare`). The first run creates the branch rankgate-history, the second appends on
 * top of it, a run that loses a race with another push appends again on the new tip, and a read-only remote (a
 * pre-receive hook that rejects every push, as a fork's or a read-only token's push is rejected) gives a notice and exit
 * 0 with the verdict's code in the step's output.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ROOT, fixtureEvalInto, tempDir } from '../harness/helpers.ts';
import { runActionScript } from '../helpers/action-step.ts';

function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'Dana', GIT_AUTHOR_EMAIL: 'd@example.com', GIT_COMMITTER_NAME: 'Dana', GIT_COMMITTER_EMAIL: 'd@example.com' } });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The push step with the job's environment (a run id, the repository, the results file). */
const push = (cwd: string, env: Record<string, string> = {}) => runActionScript('history-push.sh', cwd, { GITHUB_RUN_ID: '4242', GITHUB_REPOSITORY: 'acme/search', RESULTS: 'results.json', ...env });

describe('the history push step against a local bare repository', () => {
  const dir = tempDir('history-push');
  const team = join(dir, 'team');
  const origin = join(dir, 'origin.git');
  before(async () => {
    mkdirSync(join(team, 'config'), { recursive: true });
    mkdirSync(join(team, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(ROOT, join(team, 'node_modules', 'rankgate'));
    symlinkSync(join(ROOT, 'bin', 'rankgate.js'), join(team, 'node_modules', '.bin', 'rankgate'));
    writeFileSync(join(team, '.gitignore'), 'node_modules/\nresults.json*\n.gh/\n.pf/\n');
    writeFileSync(join(team, 'config', 'gate.yaml'), 'version: 1\noverall: { recall_at_3: 0.3 }\n');
    git(dir, ['init', '-q', '--bare', origin]);
    git(dir, ['init', '-q', '-b', 'main', team]);
    git(team, ['add', '.']);
    git(team, ['commit', '-q', '-m', 'floors']);
    git(team, ['remote', 'add', 'origin', origin]);
    git(team, ['push', '-q', 'origin', 'main']);
    await fixtureEvalInto(team);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const lines = () => git(origin, ['show', 'rankgate-history:history.jsonl']).split('\n');

  test('first run: creates the branch; second run: one more line on top; the checkout is left as it was', async () => {
    const head = git(team, ['rev-parse', 'HEAD']);
    const one = await push(team);
    assert.equal(one.code, 0, one.out);
    assert.deepEqual([one.outputs['exit-code'], one.outputs.pushed], ['0', 'true'], one.out);
    assert.match(one.out, /the branch rankgate-history does not exist yet on origin: this run starts it/);
    assert.match(one.out, /rankgate history: appended run 4242 \(commit [0-9a-f]{7}, exit 0\) to rankgate-history:history\.jsonl as line 1/);
    assert.match(one.out, /rankgate history: pushed [0-9a-f]{7,} to origin rankgate-history \(1 line\)/);
    const first = lines();
    assert.equal(first.length, 1);
    assert.match(first[0]!, /^\{"v":1,"repo":"acme\/search","run":"4242","commit":"[0-9a-f]{40}"/);
    assert.match(first[0]!, /"ids":\[/);
    const two = await push(team, { GITHUB_RUN_ID: '4243' });
    assert.deepEqual([two.code, two.outputs['exit-code'], two.outputs.pushed], [0, '0', 'true'], two.out);
    const second = lines();
    assert.equal(second.length, 2);
    assert.equal(second[0], first[0], 'the first line kept byte for byte');
    assert.match(second[1]!, /"run":"4243"/);
    assert.doesNotMatch(second[1]!, /"ids":/, 'the ids once per golden selection');
    assert.deepEqual(git(origin, ['log', '--format=%s', 'rankgate-history']).split('\n'), [`rankgate history: run 4243, exit 0`, `rankgate history: run 4242, exit 0`]);
    assert.equal(git(origin, ['rev-list', '--max-parents=0', 'rankgate-history']).length, 40, 'one root: its own history, not main\'s');
    assert.deepEqual(git(origin, ['ls-tree', '--name-only', 'rankgate-history']).split('\n'), ['history.jsonl']);
    assert.equal(git(team, ['rev-parse', 'HEAD']), head);
    assert.equal(git(team, ['status', '--porcelain']), '', 'nothing changed in the checkout');
  });

  test('a race lost to another run\'s push: appended again on the new tip, the other run\'s line kept', async () => {
    // rankgate that, while this run appends, lets another run push a line first (once)
    const other = join(dir, 'other');
    git(dir, ['clone', '-q', '-b', 'rankgate-history', origin, other]);
    const racer = join(team, 'node_modules', '.bin', 'racing-rankgate');
    writeFileSync(
      racer,
      `#!/usr/bin/env bash\nrankgate "$@"; code=$?\nif [ ! -e '${dir}/raced' ]; then touch '${dir}/raced'; cd '${other}' && echo '{"v":1,"other":"run"}' >> history.jsonl && git -c user.name=o -c user.email=o@x commit -qam other && git push -q origin rankgate-history; fi\nexit $code\n`,
    );
    chmodSync(racer, 0o755);
    const r = await push(team, { GITHUB_RUN_ID: '4244', RANKGATE: 'racing-rankgate' });
    assert.deepEqual([r.outputs['exit-code'], r.outputs.pushed], ['0', 'true'], r.out);
    assert.match(r.out, /rankgate-history moved on origin meanwhile: appending again on its new tip \(attempt 1 of 3\)/);
    const now = lines();
    assert.equal(now.length, 4);
    assert.equal(now[2], '{"v":1,"other":"run"}');
    assert.match(now[3]!, /"run":"4244"/);
  });

  test('a read-only remote (a fork, a read-only token): a notice, exit 0, the verdict\'s code in the output; nothing pushed', async () => {
    const hook = join(origin, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "remote: Permission to acme/search.git denied to github-actions[bot]." >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const before = git(origin, ['rev-parse', 'rankgate-history']);
    const r = await push(team, { GITHUB_RUN_ID: '4245' });
    assert.equal(r.code, 0, r.out);
    assert.deepEqual([r.outputs['exit-code'], r.outputs.pushed], ['0', 'false']);
    assert.match(r.out, /::notice::rankgate history: not pushed to rankgate-history on origin: .*(pre-receive hook declined|denied).*a fork or a read-only token: give the job permissions: contents: write/);
    assert.equal(git(origin, ['rev-parse', 'rankgate-history']), before);
    rmSync(hook);
  });
});
