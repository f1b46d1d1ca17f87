/**
 * `rankgate init` in a team's own repository, end to end: rankgate installed from its packed tarball, init
 * against a 14-article help-centre corpus and a blind-test YAML golden set (the demo's is DES-058 JSON), then a
 * real `npx promptfoo eval` there and `npx rankgate gate` on its output. Plus the choices init makes from the
 * golden set (floors by size, routing only when routes are stated, the workflow's paths) and its refusals.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, sep } from 'node:path';
import yaml from 'js-yaml';
import { workflowErrors } from '../helpers/workflow.ts';
import { floorFor, planInit } from '../../src/cli/init.ts';
import { loadFloors } from '../../src/gate/floors.ts';
import { parseRoutingConfig } from '../../src/search/routing.ts';
import { startFakeLlm } from '../helpers/fake-llm.ts';
import { fakeEnv, startFakeEmbeddingApi } from '../helpers/fake-embedding-apis.ts';
import { consumerRepo, helpdeskFiles, packRankgate, removeDir, run, tempDir, RANKGATE_BIN, FIXTURES } from './helpers.ts';

/**
 * One `npm pack` for the file (~2 s of CPU each): both end-to-end tests install rankgate from the same tarball into
 * a repository of their own (consumerRepo unpacks it afresh per repository; only the .tgz is shared, read-only).
 */
const packDir = tempDir('init-pack');
after(() => removeDir(packDir));
let tarball: string | undefined;
const packedRankgate = (): string => (tarball ??= packRankgate(packDir));

test('init -> npx promptfoo eval -> npx rankgate gate in a fresh repo with rankgate installed from its tarball', async () => {
  const t0 = Date.now();
  const tmp = tempDir('init');
  const repo = join(tmp, 'helpdesk');
  mkdirSync(repo);
  try {
    consumerRepo(repo, packedRankgate());
    helpdeskFiles(repo);
    // what the tarball ships: the runtime, not the repo's tests, benchmarks or demo data
    const pkg = join(repo, 'node_modules', 'rankgate');
    for (const f of ['bin/rankgate.js', 'src/cli/init.ts', 'providers/search.ts', 'assertions/gate.ts', 'datasets/tests.ts', 'datasets/routing.yaml']) {
      assert.ok(existsSync(join(pkg, f)), `the tarball ships ${f}`);
    }
    for (const f of ['test', 'bench', 'datasets/golden', 'datasets/corpus', '.github']) assert.ok(!existsSync(join(pkg, f)), `the tarball leaves out ${f}`);

    const env = { PROMPTFOO_CONFIG_DIR: join(tmp, 'promptfoo-home'), NODE_OPTIONS: undefined };
    const init = await run('npx', ['--no-install', 'rankgate', 'init', '--golden', 'eval/golden.yaml', '--corpus', 'help'], { cwd: repo, env });
    assert.equal(init.code, 0, init.stderr + init.stdout);
    assert.match(init.stdout, /16 golden queries in eval\/golden\.yaml \(4 categories\)/);

    // the workflow watches the team's paths, not rankgate's
    const wfText = readFileSync(join(repo, '.github/workflows/search-eval.yml'), 'utf8');
    assert.deepEqual(await workflowErrors(wfText), []);
    const wf = yaml.load(wfText) as { on: { pull_request: { paths: string[] } }; jobs: { eval: { steps: { uses?: string; run?: string; 'continue-on-error'?: boolean; name?: string }[] } } };
    const paths = wf.on.pull_request.paths;
    for (const p of ['eval/golden.yaml', 'help/**', 'config/**', 'promptfooconfig.yaml', 'package-lock.json']) assert.ok(paths.includes(p), `watches ${p}: ${paths}`);
    assert.ok(!paths.some((p) => p.startsWith('src/') || p.startsWith('providers/')), `no rankgate-internal paths: ${paths}`);
    const steps = wf.jobs.eval.steps;
    assert.ok(steps.some((s) => s.uses?.startsWith('actions/cache') ), 'caches the index');
    // the model caches from the workflow's cache, keyed by the base branch (issue 43.2): never a pull request's own
    const model = steps.find((s) => s.uses?.startsWith('actions/cache') && (s as { with?: { path?: string } }).with?.path === '.rankgate/cache') as { with?: Record<string, string> } | undefined;
    assert.ok(model, 'a model-cache step');
    assert.match(model!.with!['restore-keys']!, /rankgate-model-cache-\$\{\{ github\.base_ref \|\| github\.ref_name \}\}-push-/);
    assert.doesNotMatch(model!.with!['restore-keys']!, /pull_request/);
    // judged by the base branch (floors, expectations, baseline read with git at origin/<base>); CODEOWNERS documented
    assert.match(steps.find((s) => s.name === 'Gate')?.run ?? '', /npx rankgate gate results\.jsonl --base-ref "\$BASE_REF" --comment comment\.md/);
    assert.match(wfText, /fetch-depth: 0/);
    assert.match(wfText, /#\s+\/config\/ \/eval\/golden\.yaml \/promptfooconfig\.yaml \/package\.json \/package-lock\.json \/\.github\/workflows\/\s+@your-org\/search-owners/);
    assert.equal(steps.find((s) => s.name === 'Post or update the PR comment')?.['continue-on-error'], true, 'a fork PR comment failure never fails the job');
    assert.ok(steps.some((s) => s.run?.includes('GITHUB_STEP_SUMMARY')));

    // gate floors from the size: 16 queries -> 0.8 - 1.645*sqrt(0.16/16) = 0.6355 -> 0.63; no category has 10 queries
    const floors = loadFloors(join(repo, 'config/gate.yaml'));
    assert.equal(floors.overall.recall_at_3, 0.63);
    assert.deepEqual(floors.categories, {});
    assert.ok(!existsSync(join(repo, 'config/routing.yaml')), 'no routing rules for a golden set without routes');
    const cfg = yaml.load(readFileSync(join(repo, 'promptfooconfig.yaml'), 'utf8')) as { providers: { id: string; config: Record<string, unknown> }[]; tests: { path: string }[] };
    assert.equal(cfg.providers[0]!.id, 'file://node_modules/rankgate/providers/search.ts');
    assert.equal(cfg.providers[0]!.config.routing, false);
    assert.equal(cfg.tests[0]!.path, 'file://node_modules/rankgate/datasets/tests.ts');
    assert.match(readFileSync(join(repo, '.gitignore'), 'utf8'), /^\.rankgate\/$/m);
    assert.match(readFileSync(join(repo, '.gitignore'), 'utf8'), /^node_modules\/$/m, 'a repository without a .gitignore never commits node_modules');
    // eval outputs, reports and the blind review's unblinding key are never committed by a first `git add -A`
    const gi = tempDir('gitignore');
    writeFileSync(join(gi, '.gitignore'), readFileSync(join(repo, '.gitignore'), 'utf8'));
    spawnSync('git', ['init', '-q', gi]);
    const ignored = spawnSync('git', ['-C', gi, 'check-ignore', '--no-index', 'data/eval/results/eval-en-x.json', 'sweep-results/eval-en-x.md', 'report.html', 'review/review.key.json', 'review.key.json', 'review/pair-a.key.json'], { encoding: 'utf8' });
    assert.deepEqual(ignored.stdout.trim().split('\n'), ['data/eval/results/eval-en-x.json', 'sweep-results/eval-en-x.md', 'report.html', 'review/review.key.json', 'review.key.json', 'review/pair-a.key.json'], ignored.stderr);
    assert.equal(spawnSync('git', ['-C', gi, 'check-ignore', '--no-index', 'review/review.html', 'config/search-baseline.json'], { encoding: 'utf8' }).stdout, '', 'the page and the baseline stay');
    removeDir(gi);
    // the judge assertion is there, off until configured (and saying so), so RANKGATE_JUDGE works as in the demo
    const judgeAssert = (cfg as unknown as { defaultTest: { assert: { value: string; config?: { mode?: string } }[] } }).defaultTest.assert.find((a) => /judge\.ts:judged$/.test(a.value));
    assert.deepEqual(judgeAssert?.config, { mode: 'off' });
    assert.match(readFileSync(join(repo, 'promptfooconfig.yaml'), 'utf8'), /OFF until you configure it[\s\S]*RANKGATE_JUDGE/);

    // the documented way: JSONL results, and the baseline written from them
    const ev = await run('npx', ['--no-install', 'promptfoo', 'eval', '-o', 'results.jsonl', '--no-progress-bar', '--no-table'], { cwd: repo, env, timeoutMs: 240_000 });
    assert.equal(ev.code, 0, ev.stderr.slice(-3000));
    assert.match(ev.stderr, /16 queries · Success@3 \d\.\d+/);
    assert.match(ev.stderr, /gate PASSED/);
    assert.doesNotMatch(ev.stderr, /ExperimentalWarning/, 'the .npmrc init wrote silences DecompressInterceptor');
    assert.doesNotMatch(ev.stderr, /\n\s+at /, 'no stack trace');
    assert.match(ev.stderr, /rankgate: judge: off \(configured \(promptfoo config defaultTest\.assert\[\d\] \(assertions\/judge\.ts:judged\): config\.mode=off\)\)/);

    const gate = await run('npx', ['--no-install', 'rankgate', 'gate', 'results.jsonl'], { cwd: repo, env });
    assert.equal(gate.code, 0, gate.stderr + gate.stdout);
    assert.match(gate.stdout, /\| account \| 6 \|/);
    assert.match(gate.stdout, /gate PASSED/);

    // the first baseline, where gate.yaml says (when this rankgate's gate has the regression check), then compared with
    if (/^regression:/m.test(readFileSync(join(repo, 'config/gate.yaml'), 'utf8'))) {
      const upd = await run('npx', ['--no-install', 'rankgate', 'gate', 'results.jsonl', '--update-baseline'], { cwd: repo, env });
      assert.equal(upd.code, 0, upd.stderr + upd.stdout);
      assert.ok(existsSync(join(repo, 'config/search-baseline.json')), 'baseline written at regression.baseline');
      // a JSONL baseline carries the provider config it was measured on
      assert.equal(JSON.parse(readFileSync(join(repo, 'config/search-baseline.json'), 'utf8')).config.corpus, 'help');
      const again = await run('npx', ['--no-install', 'rankgate', 'gate', 'results.jsonl'], { cwd: repo, env });
      assert.equal(again.code, 0, again.stderr + again.stdout);
      assert.doesNotMatch(again.stdout + again.stderr, /regression check off/);
      assert.doesNotMatch(again.stdout + again.stderr, /another provider config/);
    }

    // RANKGATE_JUDGE names the judge that runs, over the config's mode: off and over auto's pick of other keys
    // (ANTHROPIC_API_KEY set): a local OpenAI-compatible fake gets every judgement, the Anthropic fake none. The
    // same eval is the unchanged re-run against the JSONL baseline: no "another provider config" note.
    const llm = await startFakeLlm(() => 'NOT_RELEVANT');
    try {
      const judgeEnv = { ...env, RANKGATE_JUDGE: 'openai:chat:M', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${llm.url}/v1`, ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: llm.url, PROMPTFOO_CACHE_ENABLED: 'false' };
      const judged = await run('npx', ['--no-install', 'promptfoo', 'eval', '-o', 'judged.jsonl', '--no-progress-bar', '--no-table'], { cwd: repo, env: judgeEnv, timeoutMs: 240_000 });
      assert.equal(judged.code, 0, judged.stderr.slice(-3000));
      assert.match(judged.stderr, /rankgate: judge: openai:chat:M \(configured \(RANKGATE_JUDGE=openai:chat:M, over .*config\.mode=off\)\)/);
      assert.ok(llm.requests.length > 0, 'the judge was asked');
      assert.deepEqual([...new Set(llm.requests.map((r) => [r.api, r.body.model].join(' ')))], ['openai M']);
      assert.match(judged.stderr, /judge: openai:chat:M \(relevance-v1\) · 16 of 16 queries judged/);
      assert.doesNotMatch(judged.stderr + judged.stdout, /another provider config/);
    } finally {
      await llm.close();
    }
    // an unknown judge setting is exit 2 before any row, through promptfoo and through rankgate eval
    const bogus = await run('npx', ['--no-install', 'promptfoo', 'eval', '-o', 'bogus.jsonl', '--no-progress-bar', '--no-table'], { cwd: repo, env: { ...env, RANKGATE_JUDGE: 'bogus' }, timeoutMs: 240_000 });
    assert.equal(bogus.code, 2, bogus.stderr.slice(-2000));
    assert.match(bogus.stderr, /rankgate gate ERROR \(exit 2\): judge mode "bogus" \(RANKGATE_JUDGE\): expected one of/);
    assert.doesNotMatch(bogus.stderr, /\n\s+at /, 'no stack trace');
    assert.ok(!existsSync(join(repo, 'bogus.jsonl')), 'no row written');
    const bogusEval = await run('npx', ['--no-install', 'rankgate', 'eval'], { cwd: repo, env: { ...env, RANKGATE_JUDGE: 'bogus' } });
    assert.equal(bogusEval.code, 2, bogusEval.stderr);
    assert.match(bogusEval.stderr, /judge mode "bogus" \(RANKGATE_JUDGE\)/);
    assert.doesNotMatch(bogusEval.stderr, /promptfoo eval -c/, 'refused before promptfoo starts');
    // the sweep in the team's repo: two embedders (the offline use-lite and a local fake of Voyage's API) over the
    // team's corpus and golden set; an unknown sweep is one line naming the sweeps, exit 2
    const bogusSweep = await run('npx', ['--no-install', 'rankgate', 'eval', '--sweep', 'bogus'], { cwd: repo, env });
    assert.equal(bogusSweep.code, 2, bogusSweep.stderr);
    assert.equal(bogusSweep.stderr.trim(), "rankgate eval: --sweep: unknown sweep 'bogus'; the sweeps are quick, embedders, rrf, chunk, modes, rerank, full, expansion");
    const voyage = await startFakeEmbeddingApi('voyage');
    try {
      const sw = await run('npx', ['--no-install', 'rankgate', 'eval', '--sweep', 'embedders', '--out-dir', 'sweep-results'], { cwd: repo, env: { ...env, ...fakeEnv(voyage) }, timeoutMs: 300_000 });
      const head = sw.stderr.split('\n').filter((l) => /^rankgate eval:|embedders skipped/.test(l)).join('\n');
      console.log(`# transcript: npx rankgate eval --sweep embedders (exit ${sw.code})\n${head}\n${sw.stdout.trimEnd()}`);
      assert.equal(sw.code, 0, sw.stderr.slice(-3000) + sw.stdout);
      assert.match(sw.stderr, /promptfoo eval -c promptfooconfig\.yaml --sweep embedders \(5 columns\)/);
      assert.ok(voyage.requests.length > 0, 'the Voyage fake embedded the corpus and the queries');
      const report = JSON.parse(readFileSync(join(repo, readdirSync(join(repo, 'sweep-results')).filter((f) => /^eval-en-.*Z\.json$/.test(f)).map((f) => join('sweep-results', f))[0]!), 'utf8')) as { columns: { column: string; config: Record<string, unknown>; overall_recall_at_3: number }[] };
      assert.deepEqual(report.columns.map((c) => c.column), [
        'hybrid rrf60 w1:1 c300 use-lite 512-d',
        'keyword-only bm25 c300',
        'semantic-only c300 use-lite 512-d',
        'semantic-only c300 voyage-3-large 1024-d',
        'hybrid rrf60 w1:1 c300 voyage-3-large 1024-d',
      ]);
      for (const c of report.columns) {
        assert.equal(c.config.corpus, 'help', `${c.column} searches the team's corpus`);
        assert.equal(typeof c.overall_recall_at_3, 'number', `${c.column} measured the team's 16 queries`);
      }
      assert.deepEqual(readdirSync(repo).filter((f) => f.startsWith('.rankgate-sweep')), [], 'the temporary sweep config is removed');
    } finally {
      await voyage.close();
    }
    // the blind-test framework's configs in the team's repo, offline: A (the team's column), B (RM3 on BM25) and C
    // (the golden set's expansion:, which two of its 16 entries have); the shipping criteria of B and C against A
    const ex = await run('npx', ['--no-install', 'rankgate', 'eval', '--sweep', 'expansion', '--out-dir', 'expansion-results'], { cwd: repo, env, timeoutMs: 300_000 });
    assert.equal(ex.code, 0, ex.stderr.slice(-3000) + ex.stdout);
    const exFile = readdirSync(join(repo, 'expansion-results')).find((f) => /^eval-en-.*Z\.json$/.test(f))!;
    const exReport = JSON.parse(readFileSync(join(repo, 'expansion-results', exFile), 'utf8')) as { columns: { column: string; expansion?: string }[]; shipping: { candidate: string; criteria: { name: string; passed: boolean | null }[] }[] };
    assert.deepEqual(exReport.columns.map((c) => c.column.split(' · ')[0]), ['A: hybrid rrf60 w1:1 c300 use-lite 512-d', 'B: rm3 10/10/0.5', 'C: golden expansion rrf']);
    assert.equal(exReport.columns[0]!.expansion, undefined);
    assert.match(exReport.columns[1]!.expansion!, /^expansion rm3: \d+ of 16 queries expanded/);
    assert.equal(exReport.columns[2]!.expansion, 'expansion golden rrf: 2 of 16 queries expanded (14 ran unchanged)');
    assert.deepEqual(exReport.shipping.map((v) => [v.candidate.split(' · ')[0], v.criteria[3]!.passed]), [['B: rm3 10/10/0.5', null], ['C: golden expansion rrf', null]]);
    assert.match(ex.stderr, /\[C: golden expansion rrf · [^\]]+\] ship: (yes|no) \(16 queries\)\n(    . .*\n){6}/);

    // the same results against a floor they miss: exit 1, the failed floor named
    writeFileSync(join(repo, 'config/gate.yaml'), readFileSync(join(repo, 'config/gate.yaml'), 'utf8').replace('recall_at_3: 0.63', 'recall_at_3: 0.99'));
    const failed = await run('npx', ['--no-install', 'rankgate', 'gate', 'results.jsonl'], { cwd: repo, env });
    assert.equal(failed.code, 1, failed.stdout + failed.stderr);
    assert.match(failed.stdout + failed.stderr, /recall_at_3\b.*0\.99/);
    assert.match(failed.stdout + failed.stderr, /gate FAILED/);

    // init again: existing files are kept (exit 2, one line); --force rewrites them
    const again = await run(process.execPath, [join(pkg, 'bin', 'rankgate.js'), 'init', '--golden', 'eval/golden.yaml', '--corpus', 'help'], { cwd: repo, env });
    assert.equal(again.code, 2);
    assert.equal(again.stderr.trim().split('\n').length, 1, again.stderr);
    assert.match(again.stderr, /promptfooconfig\.yaml, config\/gate\.yaml, .* already exist .*--force/);
    const forced = await run(process.execPath, [join(pkg, 'bin', 'rankgate.js'), 'init', '--golden', 'eval/golden.yaml', '--corpus', 'help', '--force'], { cwd: repo, env });
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(loadFloors(join(repo, 'config/gate.yaml')).overall.recall_at_3, 0.63);
    assert.equal((readFileSync(join(repo, '.gitignore'), 'utf8').match(/^\.rankgate\/$/gm) ?? []).length, 1, '.gitignore lines are added once');
    console.log(`# init -> eval -> gate in a consumer repo: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    removeDir(tmp);
  }
});

test('init --url: the written config evaluates a team\'s HTTP search service, and the gate runs on its output', async () => {
  const tmp = tempDir('init-url');
  const repo = join(tmp, 'helpdesk');
  mkdirSync(repo);
  // the team's search service: word overlap over the help articles, in the portal shape
  const docs = readdirSync(join(FIXTURES, 'helpdesk', 'help'), { recursive: true, encoding: 'utf8' })
    .filter((p) => p.endsWith('.md'))
    .map((p) => ({ path: p.split(sep).join('/'), text: readFileSync(join(FIXTURES, 'helpdesk', 'help', p), 'utf8') }));
  const words = (t: string) => new Set(t.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []);
  let calls = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      calls++;
      const { query, limit } = JSON.parse(body) as { query: string; limit?: number };
      const q = words(query);
      const results = docs
        .map((d) => ({ d, score: [...words(d.text)].filter((w) => q.has(w)).length }))
        .sort((a, b) => b.score - a.score || a.d.path.localeCompare(b.d.path))
        .slice(0, limit ?? 10)
        .map(({ d, score }, i) => ({ chunk_id: `${d.path}#0`, document_id: d.path, path: d.path, content: d.text.slice(0, 400), score, rank: i + 1 }));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ results }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/search`;
  try {
    consumerRepo(repo, packedRankgate());
    helpdeskFiles(repo);
    const env = { PROMPTFOO_CONFIG_DIR: join(tmp, 'promptfoo-home'), NODE_OPTIONS: undefined };
    const init = await run('npx', ['--no-install', 'rankgate', 'init', '--golden', 'eval/golden.yaml', '--url', url], { cwd: repo, env });
    assert.equal(init.code, 0, init.stderr + init.stdout);
    assert.match(init.stdout, new RegExp(`evaluating your service at ${url.replace(/[./]/g, '\\$&')}`));
    const wf = yaml.load(readFileSync(join(repo, '.github/workflows/search-eval.yml'), 'utf8')) as { on: { pull_request: { paths: string[] } } };
    assert.ok(!wf.on.pull_request.paths.includes('help/**'), 'no corpus to watch: the service owns it');
    const ev = await run('npx', ['--no-install', 'promptfoo', 'eval', '-o', 'results.json', '--no-progress-bar', '--no-table'], { cwd: repo, env, timeoutMs: 240_000 });
    assert.equal(ev.code, 0, ev.stderr.slice(-3000));
    assert.ok(calls >= 16, `the service answered every golden query (${calls} calls)`);
    assert.doesNotMatch(ev.stderr, /ingesting/, 'no index is built for a url: service');
    const gate = await run('npx', ['--no-install', 'rankgate', 'gate', 'results.json'], { cwd: repo, env });
    assert.equal(gate.code, 0, gate.stderr + gate.stdout);
    assert.match(gate.stdout, /16 queries · Success@3 \d\.\d+/);
  } finally {
    server.close();
    removeDir(tmp);
  }
});

test('floors follow the golden set size (0.80 less the one-sided 95% margin, down to 0.01)', () => {
  assert.equal(floorFor(16), 0.63);
  assert.equal(floorFor(50), 0.7);
  assert.equal(floorFor(400), 0.76);
  assert.equal(floorFor(5), 0.5);
  assert.equal(floorFor(1), 0.14);
  assert.ok(floorFor(100_000) < 0.8 && floorFor(100_000) >= 0.79);
});

function goldenFile(dir: string, entries: object[]): string {
  const p = join(dir, 'golden.yaml');
  writeFileSync(p, yaml.dump(entries));
  return p;
}

test('a golden set stating routes gets config/routing.yaml with only those parts on, and routing checks', () => {
  const dir = tempDir('init-routes');
  try {
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs', 'a.md'), '# A\n\nSome text.\n');
    const entries = [
      ...Array.from({ length: 12 }, (_, i) => ({ id: `q${i}`, query: `refund question ${i}`, category: 'billing', expected_paths: ['a.md'] })),
      { id: 'none', query: 'weather on mars tomorrow', category: 'offtopic', expected_routing: 'no_results' },
      { id: 'crisis', query: 'I want to end my life', category: 'offtopic', expect_safety: true, expected_paths: ['a.md'] },
    ];
    const { files, plan } = planInit({ golden: goldenFile(dir, entries), corpus: join(dir, 'docs'), dir, today: '2026-01-01' });
    const routing = files.find((f) => f.path === 'config/routing.yaml');
    assert.ok(routing, 'routing.yaml planned');
    const rc = parseRoutingConfig(yaml.load(routing.content), 'routing.yaml');
    assert.equal(rc.no_results.enabled, true);
    assert.equal(rc.safety.enabled, true);
    assert.equal(rc.practice_bridge.enabled, false, 'no query expects practice_bridge');
    assert.ok(rc.safety.lexicon.en!.length > 5);
    const cfg = yaml.load(files.find((f) => f.path === 'promptfooconfig.yaml')!.content) as {
      providers: { config: Record<string, unknown> }[];
      defaultTest: { assert: { value: string }[] };
    };
    assert.equal(cfg.providers[0]!.config.routingConfig, 'config/routing.yaml');
    assert.ok(cfg.defaultTest.assert.some((a) => a.value.endsWith('assertions/routing.ts:routing')));
    // 14 queries: overall floor 0.8 - 1.645*sqrt(0.16/14) -> 0.62; billing (12 queries) has its own floor
    assert.equal(plan.floors.overall, 0.62);
    assert.deepEqual(plan.floors.categories, [['billing', floorFor(12)]]);
    const gate = files.find((f) => f.path === 'config/gate.yaml')!.content;
    assert.match(gate, /routing_accuracy: 0\.\d\d/);
    assert.match(gate, /offtopic \(2\)/);
    // the regression check (when this rankgate's gate has it): one query's worth at least, 1/14 -> 0.08
    if (plan.gateKeys.regression) assert.match(gate, /regression:\n  baseline: config\/search-baseline\.json\n  max_drop: 0\.08\n  alpha: 0\.05/);
  } finally {
    removeDir(dir);
  }
});

test('--url and --module: no corpus, no routing rules; the workflow watches the module folder', () => {
  const dir = tempDir('init-svc');
  try {
    const golden = goldenFile(dir, [{ id: 'a', query: 'hello', category: 'x', expected_paths: ['a.md'] }]);
    const u = planInit({ golden, url: 'http://localhost:8080/api/v1/search', dir });
    const ucfg = yaml.load(u.files[0]!.content) as { providers: { config: Record<string, unknown> }[] };
    assert.equal(ucfg.providers[0]!.config.url, 'http://localhost:8080/api/v1/search');
    assert.equal(ucfg.providers[0]!.config.corpus, undefined);
    assert.ok(!u.files.some((f) => f.path === 'config/routing.yaml'));
    mkdirSync(join(dir, 'search'));
    writeFileSync(join(dir, 'search', 'service.mts'), 'export function createSearchService() { return { search: async () => ({ hits: [] }) }; }\n');
    const m = planInit({ golden, module: join(dir, 'search', 'service.mts'), dir });
    const mcfg = yaml.load(m.files[0]!.content) as { providers: { config: Record<string, unknown> }[] };
    assert.equal(mcfg.providers[0]!.config.module, './search/service.mts');
    assert.ok(m.plan.watch.includes('search/**'), m.plan.watch.join(','));
    // one query: one query's worth would be a drop of 1.0; the regression threshold stays a valid 0..1 share
    assert.equal(m.plan.floors.maxDrop, 0.5);
  } finally {
    removeDir(dir);
  }
});

test('init refuses bad input with one line and exit 2', async () => {
  const dir = tempDir('init-bad');
  try {
    const golden = join(FIXTURES, 'helpdesk', 'golden.yaml');
    const cases: [string[], RegExp][] = [
      [['--golden', golden], /missing the search to evaluate: --corpus PATH/],
      [['--golden', golden, '--corpus', 'x', '--url', 'http://h/'], /give one search to evaluate, got --corpus and --url/],
      [['--golden', join(dir, 'nope.yaml'), '--corpus', dir], /--golden .*nope\.yaml: no such file or folder/],
      [['--corpus', dir], /missing --golden PATH/],
      [['--golden', golden, '--url', 'localhost:8080'], /--url localhost:8080: not an http\(s\) URL/],
      [['--golden', golden, '--corpus', dir, '--corpus-format', 'markdwn'], /did you mean 'markdown'/],
      [['--golden', golden, '--corpus', dir, '--gloden', 'x'], /unknown option '--gloden'.*did you mean '--golden'/],
      [['--golden', golden, '--corpus', dir, '--dir', join(dir, 'missing')], /--dir .*missing: no such folder/],
    ];
    for (const [args, re] of cases) {
      const r = await run(process.execPath, [RANKGATE_BIN, 'init', ...args], { cwd: dir });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr.split('\n')[0]!, re, args.join(' '));
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    }
  } finally {
    removeDir(dir);
  }
});
