/**
 * The tests loader's contract beyond the TestCase shape: config keys refused with a did-you-mean, the
 * selection identity on every test case, sharding (RANKGATE_SHARD=i/N), duplicate ids across files, queries
 * with nothing to score, and what a person sees from a real `npx promptfoo eval` when the selection is bad.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import generateTests from '../../datasets/tests.ts';
import { isUserError } from '../../src/errors.ts';
import { loadGoldenFile } from '../../src/golden/index.ts';
import { parseShard, shardOf, shardQueries } from '../../src/golden/promptfoo.ts';
import { selectionIdentity } from '../../src/golden/testcases.ts';
import { FIX, ROOT, tempDir } from './helpers.ts';

const DES = join(FIX, 'des058', 'golden-set-en.json');
const YAML = join(FIX, 'yaml', 'queries.yaml');
const DEMO = join(ROOT, 'datasets', 'golden', 'golden-set-en.json');
const ENV = ['RANKGATE_GOLDEN', 'RANKGATE_LANG', 'RANKGATE_CATEGORY', 'RANKGATE_TAG', 'RANKGATE_SHARD'];

async function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));
  for (const k of ENV) delete process.env[k];
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const k of ENV) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

/** Rejects with a one-line UserError matching `re`. */
async function refuses(p: Promise<unknown>, re: RegExp) {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isUserError(e), `expected a UserError, got ${String(e)}`);
    assert.doesNotMatch(e.message, /\n/, 'one line');
    assert.match(e.message, re);
    return true;
  });
}

test('loader config: unknown keys and values are refused with a did-you-mean, before any query runs', async () => {
  await withEnv({}, async () => {
    await refuses(generateTests({ goldn: DES } as never), /^tests loader config \(file:\/\/datasets\/tests\.ts\): unknown key 'goldn'; did you mean 'golden'\? \(valid: category, format, golden, judgments, language, shard, tag\)$/);
    await refuses(generateTests({ golden: DES, catgory: 'direct' } as never), /unknown key 'catgory'; did you mean 'category'\?/);
    await refuses(generateTests({ golden: DES, format: 'jsnl' }), /format: unknown golden-set format 'jsnl'; did you mean 'jsonl'\?/);
    await refuses(generateTests({ golden: DES, language: 'english' }), /language: 'english' is not a language, expected ISO 639-1 codes/);
    await refuses(generateTests({ golden: DES, tag: 3 } as never), /tag: got 3, expected a string, a comma list or a list of strings/);
    await refuses(generateTests({ golden: DES, shard: { index: 1, cout: 2 } } as never), /shard: unknown key 'cout'; did you mean 'count'\? \(valid: count, index\)/);
  });
});

test('metadata.selection: identity of the full selection (sorted ids, sha256, 16 hex), its size and files', async () => {
  const tests = await withEnv({}, () => generateTests({ golden: [DES, YAML] }));
  const ids = [...loadGoldenFile(DES), ...loadGoldenFile(YAML)].map((q) => q.id);
  const expectedId = createHash('sha256').update([...ids].sort().join('\n')).digest('hex').slice(0, 16);
  assert.equal(tests.length, 8);
  for (const t of tests) {
    assert.deepEqual(t.metadata.selection, { id: expectedId, size: 8, files: ['test/fixtures/golden/des058/golden-set-en.json', 'test/fixtures/golden/yaml/queries.yaml'] });
  }
  assert.deepEqual(selectionIdentity(ids.map((id) => ({ id }))), { id: expectedId, size: 8 });
  // order-independent; a filter makes a different selection
  assert.deepEqual(selectionIdentity([...ids].reverse().map((id) => ({ id }))), { id: expectedId, size: 8 });
  const direct = await withEnv({ RANKGATE_CATEGORY: 'direct' }, () => generateTests({ golden: DES }));
  assert.deepEqual(direct[0]!.metadata.selection, { ...selectionIdentity([{ id: 'en-direct-001' }]), files: ['test/fixtures/golden/des058/golden-set-en.json'], filter: { category: ['direct'], of: 5 } });
});

test('shards: the N shards partition the selection, carry their shard, and stay put when queries are added', async (t) => {
  const all = await withEnv({}, () => generateTests({ golden: DEMO }));
  const full = all[0]!.metadata.selection!;
  for (const n of [1, 2, 3, 7]) {
    const seen: string[] = [];
    for (let i = 1; i <= n; i++) {
      const part = await withEnv({ RANKGATE_SHARD: `${i}/${n}` }, () => generateTests({ golden: DEMO }));
      for (const tc of part) {
        assert.deepEqual(tc.metadata.selection, { ...full, shard: { index: i, count: n }, shardSize: part.length }, 'identity is the full selection');
        assert.equal(shardOf(tc.metadata.id, n), i);
      }
      seen.push(...part.map((x) => x.metadata.id));
    }
    assert.equal(new Set(seen).size, seen.length, `no overlap at N=${n}`);
    assert.deepEqual([...seen].sort(), all.map((x) => x.metadata.id).sort(), `union = full selection at N=${n}`);
  }
  // the loader config takes { index, count } too; the environment wins
  const cfg = await withEnv({}, () => generateTests({ golden: DEMO, shard: { index: 2, count: 3 } }));
  const env = await withEnv({ RANKGATE_SHARD: '2/3' }, () => generateTests({ golden: DEMO, shard: '1/3' }));
  assert.deepEqual(cfg.map((x) => x.metadata.id), env.map((x) => x.metadata.id));
  // stability: adding queries to the file does not move any existing query to another shard
  const d = tempDir(t);
  const grown = join(d, 'golden-set-en.json');
  const base = JSON.parse(readFileSync(DEMO, 'utf8')) as Record<string, unknown>[];
  const extra = Array.from({ length: 40 }, (_, i) => ({ id: `en-new-${i}`, query: `new question ${i}`, language: 'en', category: 'direct', expected_routing: 'search', expected_passages: [{ passage_substring: `new passage ${i}`, relevance: 'high' }] }));
  writeFileSync(grown, JSON.stringify([...base.slice(0, 30), ...extra, ...base.slice(30)]));
  for (let i = 1; i <= 4; i++) {
    const before = (await withEnv({ RANKGATE_SHARD: `${i}/4` }, () => generateTests({ golden: DEMO }))).map((x) => x.metadata.id);
    const after = (await withEnv({ RANKGATE_SHARD: `${i}/4` }, () => generateTests({ golden: grown }))).map((x) => x.metadata.id);
    assert.deepEqual(after.filter((id) => !id.startsWith('en-new-')), before, `shard ${i}/4 keeps its queries`);
  }
  assert.deepEqual(shardQueries([{ id: 'a' }, { id: 'b' }], { index: 1, count: 1 }), [{ id: 'a' }, { id: 'b' }]);
});

test('shard syntax: i/N, 1-based; anything else is one line naming the setting', async () => {
  assert.deepEqual(parseShard('1/4'), { index: 1, count: 4 });
  assert.deepEqual(parseShard(' 4 / 4 '), { index: 4, count: 4 });
  for (const bad of ['3/2', '0/0', '0/3', 'x', '1/', '-1/2', '1.5/2']) {
    await withEnv({ RANKGATE_SHARD: bad }, () => refuses(generateTests({ golden: DES }), /^RANKGATE_SHARD: .*expected i\/N with 1 <= i <= N/));
  }
  await withEnv({}, () => refuses(generateTests({ golden: DES, shard: '3/2' }), /^tests loader config \(file:\/\/datasets\/tests\.ts\): shard: '3\/2': shard 3 of 2 does not exist/));
  // more shards than queries: a shard with nothing is refused, never an empty eval
  await withEnv({ RANKGATE_SHARD: '1/200' }, async () => {
    const ids = await generateTests({ golden: DES }).then(
      (tc) => tc.map((x) => x.metadata.id),
      (e: unknown) => (isUserError(e) && /holds no query/.test(e.message) ? 'refused' : Promise.reject(e)),
    );
    assert.ok(ids === 'refused' || ids.length > 0);
  });
});

test('duplicate ids across the selected files are refused (the same file twice, or two files sharing an id)', async (t) => {
  await withEnv({ RANKGATE_GOLDEN: `${DES},${DES}` }, () => refuses(generateTests(), /golden-set-en\.json: \(en-direct-001\) id: the file is selected twice/));
  const d = tempDir(t);
  const copy = join(d, 'other.json');
  writeFileSync(copy, JSON.stringify([{ id: 'en-dark_night-001', query: 'another question', language: 'en', category: 'direct', expected_routing: 'search', expected_passages: [{ passage_substring: 'another passage', relevance: 'high' }] }]));
  await withEnv({ RANKGATE_GOLDEN: `${DES},${copy}` }, () => refuses(generateTests(), /other\.json: \(en-dark_night-001\) id: duplicate id, already in test\/fixtures\/golden\/des058\/golden-set-en\.json/));
});

test('a blind-test YAML with expected_path: (typo) is refused by the loader: never a silently unscored row', async (t) => {
  const d = tempDir(t);
  const p = join(d, 'queries.yaml');
  writeFileSync(p, '- id: q1\n  query: how to find inner peace\n  expected_path:\n    - the-lamp-within.md\n');
  await withEnv({ RANKGATE_GOLDEN: p }, async () => {
    await assert.rejects(generateTests(), (e: unknown) => {
      assert.ok(isUserError(e));
      assert.match(e.message, /queries\.yaml:3 \(q1\) expected_path: unknown field "expected_path"; did you mean 'expected_paths'\?/);
      return true;
    });
  });
  writeFileSync(p, '- id: q1\n  query: how to find inner peace\n  intent: nothing else\n');
  await withEnv({ RANKGATE_GOLDEN: p }, () =>
    assert.rejects(generateTests(), (e: unknown) => isUserError(e) && /\(q1\) expected_paths: nothing to score \(no reference\), expected one of: a path in expected_paths/.test(e.message)),
  );
});

test('an alias bomb (< 1 KB) given to the loader is refused in bounded time', async (t) => {
  const p = join(tempDir(t), 'bomb.yaml');
  writeFileSync(p, aliasBomb());
  assert.ok(readFileSync(p).length < 1024);
  const t0 = Date.now();
  await withEnv({ RANKGATE_GOLDEN: p }, () => assert.rejects(generateTests(), (e: unknown) => isUserError(e) && /bomb\.yaml:1 \(file\) yaml: refused: the document expands to more than [\d,]+ values, the limit for the [\d,]+ values it holds as written/.test(e.message)));
  assert.ok(Date.now() - t0 < 30_000, `bounded (took ${Date.now() - t0} ms)`);
});

/** 9 levels, each referring to the previous one 10 times: 10^9 values when expanded, ~600 bytes. */
export function aliasBomb(): string {
  const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++) {
    const name = String.fromCharCode(97 + i);
    const prev = String.fromCharCode(96 + i);
    lines.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(', ')}]`);
  }
  lines.push('queries: [*i]');
  return `${lines.join('\n')}\n`;
}

// ------------------------------------------------------------------ through a real `npx promptfoo eval`

function promptfooEval(dir: string, env: Record<string, string>, extra: string[] = []) {
  const cfg = join(dir, 'promptfooconfig.yaml');
  writeFileSync(
    cfg,
    [
      'description: loader through the promptfoo CLI, echo provider, no search',
      "prompts: ['{{query}}']",
      'providers: [echo]',
      `tests: file://${join(ROOT, 'datasets', 'tests.ts')}`,
      '',
    ].join('\n'),
  );
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !ENV.includes(k)));
  // `npx promptfoo` from the repository (where the install is), the config and all output in a temp dir
  const r = spawnSync('npx', ['--no-install', 'promptfoo', 'eval', '-c', cfg, '--no-cache', '--no-write', '--no-table', '--no-progress-bar', '-o', join(dir, 'out.json'), ...extra], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...clean, PROMPTFOO_CONFIG_DIR: join(dir, '.promptfoo'), PROMPTFOO_DISABLE_TELEMETRY: '1', PROMPTFOO_DISABLE_UPDATE: '1', PROMPTFOO_PASS_RATE_THRESHOLD: '0', ...env },
    timeout: 180_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const noStack = (s: string) => assert.doesNotMatch(s, /\n\s+at .+:\d+:\d+\)?$/m, `stack trace in output:\n${s}`);

test('npx promptfoo eval: a missing golden file is one line, exit 2, no stack', (t) => {
  // One bad selection through the CLI: every loader error leaves promptfoo the same way. The messages of each kind
  // (a language without a set, a bad shard, a file selected twice) are checked in-process above and below.
  const d = tempDir(t);
  const r = promptfooEval(d, { RANKGATE_GOLDEN: 'nope.yaml' });
  assert.equal(r.code, 2, `${r.out}\n${r.err}`);
  assert.match(r.err, /^rankgate: .*nope\.yaml: golden set not found, expected an existing golden-set file/m);
  assert.equal(r.err.split('\n').filter((l) => l.startsWith('rankgate: ')).length, 1, 'said once');
  noStack(r.out + r.err);
});

test('from the environment: a language without a set names the file and the shipped languages; a shard that does not exist names RANKGATE_SHARD', async () => {
  await withEnv({ RANKGATE_LANG: 'fr' }, () => refuses(generateTests(), /^datasets\/golden\/golden-set-fr\.json: golden set not found, expected a golden set for that language \(shipped: en, es, hi;/));
  await withEnv({ RANKGATE_GOLDEN: DES, RANKGATE_SHARD: '3/2' }, () => refuses(generateTests(), /^RANKGATE_SHARD: '3\/2': shard 3 of 2 does not exist/));
});

test('npx promptfoo eval: shards and --filter-range both select rows of the loaded golden set', async (t) => {
  const d = tempDir(t);
  const rows = (extra: string[], env: Record<string, string>) => {
    const r = promptfooEval(d, { RANKGATE_GOLDEN: DES, ...env }, extra);
    assert.equal(r.code, 0, r.out + r.err);
    const j = JSON.parse(readFileSync(join(d, 'out.json'), 'utf8')) as { results: { results: { testCase: { metadata: { id: string; selection: { shard?: unknown } } } }[] } };
    return j.results.results.map((x) => x.testCase.metadata);
  };
  // what the loader selects, in-process (its sharding is checked above); the CLI must run exactly those rows
  const all = (await withEnv({ RANKGATE_GOLDEN: DES }, () => generateTests())).map((x) => x.metadata.id as string);
  const shard1 = (await withEnv({ RANKGATE_GOLDEN: DES, RANKGATE_SHARD: '1/2' }, () => generateTests())).map((x) => x.metadata.id as string);
  assert.equal(all.length, 5);
  assert.ok(shard1.length > 0 && shard1.length < all.length);
  const s1 = rows([], { RANKGATE_SHARD: '1/2' });
  assert.deepEqual(s1.map((m) => m.id).sort(), [...shard1].sort());
  assert.ok(s1.every((m) => JSON.stringify(m.selection.shard) === '{"index":1,"count":2}'));
  const ranged = rows(['--filter-range', '1:3'], {});
  assert.deepEqual(ranged.map((m) => m.id), all.slice(1, 3));
});
