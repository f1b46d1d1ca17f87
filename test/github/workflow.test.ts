/**
 * The PR gate workflow, checked with GitHub's own workflow parser (@actions/workflow-parser):
 * schema-valid, and wired the way issue 8 requires (triggers, Postgres+pgvector service, npm cache,
 * eval with --output, gate against the base branch's baseline, one updatable comment, artifact, failure).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { parseWorkflow, NoOperationTraceWriter, convertWorkflowTemplate } from '@actions/workflow-parser';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const path = join(root, '.github/workflows/search-eval.yml');
const content = readFileSync(path, 'utf8');

function parse(text: string) {
  const r = parseWorkflow({ name: 'search-eval.yml', content: text }, new NoOperationTraceWriter());
  return r;
}

test('GitHub workflow parser accepts the workflow with no errors', async () => {
  const r = parse(content);
  assert.deepEqual(r.context.errors.getErrors().map((e) => e.message), []);
  assert.ok(r.value, 'parser returned a template');
  const wf = await convertWorkflowTemplate(r.context, r.value);
  assert.deepEqual(r.context.errors.getErrors().map((e) => e.message), []);
  assert.deepEqual(wf.jobs.map((j) => j.id.value), ['eval', 'sweep']);
});

test('the parser used here does reject a broken workflow (the check above can fail)', () => {
  const broken = content.replace('runs-on: ubuntu-latest', 'runs-onn: ubuntu-latest');
  const errors = parse(broken).context.errors.getErrors().map((e) => e.message);
  assert.ok(errors.some((m) => /runs-onn/.test(m)), errors.join('\n'));
});

type Step = { uses?: string; run?: string; with?: Record<string, unknown>; if?: string; id?: string; 'continue-on-error'?: boolean };
const wf = yaml.load(content) as {
  on: { pull_request: { paths: string[] }; workflow_dispatch: unknown };
  jobs: Record<string, { services?: Record<string, { image: string }>; steps: Step[]; if?: string }>;
};

test('runs on pull requests touching search-affecting paths, and on manual dispatch', () => {
  const paths = wf.on.pull_request.paths;
  for (const p of ['src/search/**', 'src/ingest/**', 'src/embeddings/**', 'src/db/**', 'providers/**', 'assertions/**',
    'datasets/**', 'promptfooconfig.yaml', 'promptfooconfig.sweep.ts', 'package-lock.json']) {
    assert.ok(paths.includes(p), `trigger paths include ${p}`);
  }
  assert.ok('workflow_dispatch' in wf.on);
  // Migrations live under src/db: covered by src/db/**.
  assert.ok(existsSync(join(root, 'src/db')) || paths.includes('src/db/**'));
});

test('eval job: pgvector service, npm cache, ingest, eval --output, gate vs base baseline, comment, artifact, failure', () => {
  const job = wf.jobs.eval;
  assert.match(Object.values(job.services ?? {})[0]!.image, /pgvector/);
  const steps = job.steps;
  const node = steps.find((s) => s.uses?.startsWith('actions/setup-node'));
  assert.equal(node?.with?.cache, 'npm');
  const runs = steps.map((s) => s.run ?? '').join('\n');
  assert.match(runs, /npm ci/);
  assert.match(runs, /rankgate ingest/);
  assert.match(runs, /npx promptfoo eval .*--output results\.json/);
  assert.match(runs, /rankgate gate results\.json --baseline/);
  assert.match(runs, /git show "origin\/\$\{\{ github\.base_ref \}\}:data\/eval\/baseline\.json"/);
  assert.ok(steps.some((s) => s.uses?.startsWith('actions/upload-artifact')), 'uploads results as an artifact');
  const comment = steps.find((s) => s.uses?.startsWith('actions/github-script'));
  assert.ok(comment, 'posts a PR comment');
  const script = String(comment.with?.script);
  assert.match(script, /updateComment/, 'updates the existing comment in place');
  assert.match(script, /createComment/);
  assert.match(script, /rankgate:search-eval/, 'finds its own comment by a marker');
  const last = steps[steps.length - 1]!;
  assert.match(String(last.if), /steps\.gate\.outcome/);
  assert.match(last.run ?? '', /exit 1/);
});

test('every rankgate subcommand the workflow calls exists in the CLI', async () => {
  const { main } = await import('../../src/cli/index.ts');
  const used = new Set([...content.matchAll(/npx rankgate ([a-z-]+)/g)].map((m) => m[1]!));
  assert.ok(used.size >= 3);
  const src = readFileSync(join(root, 'src/cli/index.ts'), 'utf8');
  for (const cmd of used) assert.match(src, new RegExp(`['"]?${cmd}['"]?: \\{ module`), `rankgate ${cmd} is registered`);
  assert.equal(typeof main, 'function');
});

test('sweep runs as a separate job on manual dispatch only', () => {
  const job = wf.jobs.sweep;
  assert.match(String(job.if), /workflow_dispatch/);
  assert.match(job.steps.map((s) => s.run ?? '').join('\n'), /promptfoo eval -c promptfooconfig\.sweep\.ts/);
});
