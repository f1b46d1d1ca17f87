/**
 * datasets/tests.ts, the promptfoo test loader: TestCase shape, selection by config and environment,
 * and a real promptfoo evaluate() that loads it the way promptfooconfig.yaml does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import generateTests from '../../datasets/tests.ts';
import { isUserError } from '../../src/errors.ts';
import { loadGoldenFile } from '../../src/golden/index.ts';
import { FIX, ROOT } from './helpers.ts';

const DES = join(FIX, 'des058', 'golden-set-en.json');
const YAML = join(FIX, 'yaml', 'queries.yaml');
const ENV = ['RANKGATE_GOLDEN', 'RANKGATE_LANG', 'RANKGATE_CATEGORY', 'RANKGATE_TAG'];

function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
  for (const k of ENV) delete process.env[k];
  Object.assign(process.env, env);
  return fn().finally(() => {
    for (const k of ENV) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });
}

test('TestCase shape: one var (query), no description, id/category/language and ground truth in metadata', async () => {
  const tests = await withEnv({}, () => generateTests({ golden: DES }));
  const golden = loadGoldenFile(DES);
  assert.equal(tests.length, golden.length);
  const t = tests[1]!;
  assert.equal('description' in t, false, 'no description column in promptfoo view');
  assert.deepEqual(t.vars, { query: "I can't stop crying" });
  assert.equal(t.metadata.id, 'en-dark_night-001');
  assert.equal(t.metadata.category, 'dark_night');
  for (const tc of tests) for (const v of Object.values(tc.vars)) assert.equal(typeof v, 'string');
  assert.deepEqual(Object.keys(t.metadata), ['id', 'category', 'language', 'tags', 'golden', 'selection']);
  assert.equal(t.metadata.tags, 'fear');
  assert.equal(tests[0]!.metadata.tags, 'love,god-realization');
  assert.deepEqual(t.metadata.golden, golden[1]);
  assert.equal(t.metadata.golden.expect_safety, true);
});

test('selection by language, category and tag through loader config', async () => {
  await withEnv({}, async () => {
    const ids = async (cfg: Parameters<typeof generateTests>[0]) => (await generateTests(cfg)).map((t) => t.metadata.id);
    assert.deepEqual(await ids({ golden: DES, category: 'direct,adversarial' }), ['en-direct-001', 'en-adversarial-001']);
    assert.deepEqual(await ids({ golden: DES, tag: 'god-realization' }), ['en-direct-001', 'en-metaphorical-001']);
    assert.deepEqual(await ids({ golden: [DES, YAML], language: 'zh' }), ['yaml-0']);
    assert.deepEqual(await ids({ golden: [DES, YAML], language: 'all', tag: ['logs', 'fear'] }), ['en-dark_night-001', 'pinned-weekly-log']);
  });
});

test('selection through the environment overrides the config', async () => {
  const ids = await withEnv({ RANKGATE_GOLDEN: `${DES},${YAML}`, RANKGATE_CATEGORY: 'metaphorical,logs' }, async () => (await generateTests({ golden: 'nope.json', category: 'direct' })).map((t) => t.metadata.id));
  assert.deepEqual(ids, ['en-metaphorical-001', 'pinned-weekly-log']);
  const en = await withEnv({ RANKGATE_GOLDEN: YAML, RANKGATE_LANG: 'en', RANKGATE_TAG: 'technical' }, async () => (await generateTests()).map((t) => t.metadata.id));
  assert.deepEqual(en, ['yaml-1']);
});

test('a missing or broken golden file is a UserError naming the file', async () => {
  await withEnv({}, async () => {
    await assert.rejects(generateTests({ golden: join(FIX, 'nope.json') }), (e: unknown) => isUserError(e) && /nope\.json: golden set not found/.test(e.message));
  });
});

test('a selection that matches nothing is a UserError, not an empty eval', async () => {
  await withEnv({ RANKGATE_GOLDEN: DES, RANKGATE_CATEGORY: 'emotional' }, async () => {
    await assert.rejects(generateTests(), (e: unknown) => isUserError(e) && /^RANKGATE_CATEGORY \/ category: no query in .*golden-set-en\.json has category 'emotional' \(categories there: adversarial, dark_night, direct, metaphorical, technique_boundary\)$/.test(e.message));
  });
  // a typo in one value of a list is refused too (never a silently smaller run), with a did-you-mean
  await withEnv({ RANKGATE_GOLDEN: DES, RANKGATE_CATEGORY: 'direct,metaphoric' }, async () => {
    await assert.rejects(generateTests(), (e: unknown) => isUserError(e) && /has category 'metaphoric'; did you mean 'metaphorical'\?/.test(e.message));
  });
  await withEnv({ RANKGATE_GOLDEN: DES, RANKGATE_TAG: 'feer' }, async () => {
    await assert.rejects(generateTests(), (e: unknown) => isUserError(e) && /^RANKGATE_TAG \/ tag: no query in .* has tag 'feer'; did you mean 'fear'\?/.test(e.message));
  });
  // filters that each exist but select nothing together
  await withEnv({ RANKGATE_GOLDEN: DES, RANKGATE_CATEGORY: 'direct', RANKGATE_TAG: 'fear' }, async () => {
    await assert.rejects(generateTests(), (e: unknown) => isUserError(e) && /no golden query matches category direct, tag fear in .*golden-set-en\.json \(5 queries there/.test(e.message));
  });
});

test('promptfoo evaluate() loads file://datasets/tests.ts with config (echo provider, offline)', async () => {
  const { default: promptfoo } = await import('promptfoo');
  const suite = {
    prompts: ['{{query}}'],
    providers: ['echo'],
    tests: [{ path: `file://${join(ROOT, 'datasets', 'tests.ts')}`, config: { golden: DES, category: 'direct,dark_night' } }],
    writeLatestResults: false,
  };
  const ev = await withEnv({}, () => promptfoo.evaluate(suite as never, { maxConcurrency: 1, cache: false, showProgressBar: false } as never));
  const summary = (await ev.toEvaluateSummary()) as { results: { testCase: { metadata: Record<string, unknown> }; vars: Record<string, string>; response?: { output?: unknown } }[] };
  const rows = summary.results.map((r) => [r.testCase.metadata.id, r.vars.query, r.response?.output, (r.testCase.metadata.golden as { id: string }).id]);
  assert.deepEqual(rows, [
    ['en-direct-001', 'What did Yogananda say about divine mother?', 'What did Yogananda say about divine mother?', 'en-direct-001'],
    ['en-dark_night-001', "I can't stop crying", "I can't stop crying", 'en-dark_night-001'],
  ]);
});

test('default selection is datasets/golden/golden-set-<lang>.json', async (t) => {
  const { existsSync } = await import('node:fs');
  const en = join(ROOT, 'datasets', 'golden', 'golden-set-en.json');
  if (!existsSync(en)) return t.skip(`needs ${en} (the demo golden set)`);
  const tests = await withEnv({}, () => generateTests());
  assert.deepEqual(tests.map((x) => x.metadata.id), loadGoldenFile(en).map((q) => q.id));
  assert.ok(tests.every((x) => x.metadata.language === 'en'));
});
