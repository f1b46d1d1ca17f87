/**
 * A pull request is judged by its base branch (src/gate/base-ref.ts, src/util/git.ts): a temporary git repository with
 * a `main` branch (floors, golden set, baseline from a real eval) and a pull request branch that degrades the search
 * AND edits what it would be judged by: the floors (max_drop 0.99, regression on routing only), the golden expectations
 * (rewritten to what the degraded search now returns) and the baseline. Gated as the workflow runs it
 * (`rankgate gate results.jsonl --base-ref main`, and GitHub's pull_request environment with no flag), the PR FAILS
 * against main's floors, expectations and baseline, with each change said LOUD at the top; without the base ref the same
 * files pass (what the attack did before). A cache file the pull request commits is refused by the eval in CI.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { PROMPTFOO_BIN, ROOT, run, tempDir } from '../harness/helpers.ts';
import { expectationChanges, floorsDiff } from '../../src/gate/base-ref.ts';
import { parseFloors } from '../../src/gate/floors.ts';
import { baseRefFrom, noBaseNote } from '../../src/util/git.ts';
import type { GoldenQuery } from '../../src/golden/schema.ts';

const RANKGATE = join(ROOT, 'bin', 'rankgate.js');
const file = (p: string) => pathToFileURL(p).href;

/** A team's search as a module: canned rankings per query; `degraded: true` returns the second-best document first. */
const SERVICE = `
const DOCS = {
  'a.md': 'Alpha: how to reset a password from the sign-in page.',
  'b.md': 'Beta: invoices are sent on the first day of the month.',
  'c.md': 'Gamma: invite a teammate from the members page.',
  'd.md': 'Delta: export your data as CSV from settings.',
  'e.md': 'Epsilon: two-factor authentication with an app.',
  'f.md': 'Zeta: change the billing address on an invoice.',
};
const RANK = {
  'reset password': ['a.md', 'e.md', 'c.md'],
  'when are invoices sent': ['b.md', 'f.md', 'd.md'],
  'invite a teammate': ['c.md', 'a.md', 'e.md'],
  'export data': ['d.md', 'b.md', 'f.md'],
  'two factor': ['e.md', 'a.md', 'd.md'],
  'billing address': ['f.md', 'b.md', 'c.md'],
  'password help': ['a.md', 'e.md', 'c.md', 'b.md', 'd.md'],
};
export function createSearchService(config = {}) {
  return {
    async search(query, params = {}) {
      let ids = query === 'warm up' ? [] : RANK[query];
      if (!ids) throw new Error('no canned answer for ' + query);
      // the degraded search puts what was third first: every expected document falls out of the top 1
      if (config.degraded) ids = [...ids].reverse();
      return {
        hits: ids.slice(0, params.topK ?? 10).map((p, i) => ({ chunkId: p + '#0', documentId: p, path: p, rank: i + 1, score: 1 / (i + 1), content: DOCS[p], channels: {} })),
        routing: { route: 'search', safety: false, reasons: [] },
        diagnostics: { variant: 'team', keywordCandidates: [], vectorCandidates: [], timings: {} },
      };
    },
    async close() {},
  };
}
`;

const GOLDEN = (expect: Record<string, string>) =>
  [
    ['pw', 'reset password', 'account'],
    ['inv', 'when are invoices sent', 'billing'],
    ['team', 'invite a teammate', 'account'],
    ['exp', 'export data', 'data'],
    ['2fa', 'two factor', 'account'],
    ['addr', 'billing address', 'billing'],
  ]
    .map(([id, q, tag]) => `- id: ${id}\n  query: "${q}"\n  expected_paths: ["${expect[id!]}"]\n  tags: [${tag}]\n`)
    .join('') +
  // a passage expectation: the rows keep the text of the hits the BASE's passage names (metadata.baseGolden), or the
  // gate could not find it below the top 3 (rows keep no text there)
  `- id: pass\n  query: "password help"\n  expected_paths: ["${expect.pass}"]\n  answer_contains: { "${expect.pass}": "${expect.pass === 'a.md' ? 'sign-in page' : 'members page'}" }\n  tags: [account]\n`;
const RIGHT = { pw: 'a.md', inv: 'b.md', team: 'c.md', exp: 'd.md', '2fa': 'e.md', addr: 'f.md', pass: 'a.md' };
/** What the degraded search returns first: the attacker's "expectations". */
const WRONG = { pw: 'c.md', inv: 'd.md', team: 'e.md', exp: 'f.md', '2fa': 'd.md', addr: 'c.md', pass: 'd.md' };

const FLOORS = (maxDrop: number, metrics: string) =>
  `overall:\n  recall_at_1: 0.5\nregression:\n  baseline: eval/baseline.json\n  max_drop: ${maxDrop}\n  alpha: 0.05\n  metrics: [${metrics}]\n`;

const CONFIG = (degraded: boolean) =>
  [
    'description: team search',
    "prompts: ['{{query}}']",
    'providers:',
    `  - id: ${file(join(ROOT, 'providers', 'search.ts'))}`,
    '    label: team',
    `    config: { module: ./service.mjs, topK: 5${degraded ? ', degraded: true' : ''} }`,
    'defaultTest:',
    '  assert:',
    `    - { type: javascript, value: '${file(join(ROOT, 'assertions', 'rank.ts'))}:rank' }`,
    '    - { type: javascript, value: ' + `'${file(join(ROOT, 'assertions', 'routing.ts'))}:routing' }`,
    'tests:',
    `  - path: ${file(join(ROOT, 'datasets', 'tests.ts'))}`,
    '    config: { golden: eval/golden.yaml }',
    'env:',
    "  PROMPTFOO_PASS_RATE_THRESHOLD: '0'",
    'extensions:',
    `  - ${file(join(ROOT, 'assertions', 'gate.ts'))}:beforeAll`,
    `  - ${file(join(ROOT, 'assertions', 'gate.ts'))}:afterEach`,
    `  - ${file(join(ROOT, 'assertions', 'gate.ts'))}:afterAll`,
    '',
  ].join('\n');

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' } }).toString();

/** Env of the children: no pull request of the machine's own CI leaks in (the tests set what they test). */
const clean = (extra: Record<string, string> = {}) => ({ GITHUB_EVENT_NAME: '', GITHUB_BASE_REF: '', RANKGATE_BASE_REF: '', RANKGATE_SEAL_KEY: '', ...extra });

test('floorsDiff and expectationChanges name each change with before and after', () => {
  const a = parseFloors({ overall: { recall_at_3: 0.8 }, regression: { baseline: 'b.json', max_drop: 0.02, metrics: ['recall_at_3', 'mrr_at_10'] } }, 'a');
  const b = parseFloors({ overall: { recall_at_3: 0.5 }, regression: { baseline: 'b.json', max_drop: 0.99, metrics: ['routing_accuracy'] } }, 'b');
  assert.deepEqual(floorsDiff(a, b), ['overall.recall_at_3 0.8 -> 0.5', 'regression.max_drop 0.02 -> 0.99', 'regression.metrics ["recall_at_3","mrr_at_10"] -> ["routing_accuracy"]']);
  assert.deepEqual(floorsDiff(a, a), []);
  const q = (over: Partial<GoldenQuery>): GoldenQuery =>
    ({ id: 'q', query: 'x', language: 'en', category: 'c', tags: [], slices: {}, expected: [{ path: 'a.md', grade: 3, relevant: true }], expected_routing: 'search', ...over }) as GoldenQuery;
  assert.deepEqual(expectationChanges(q({}), q({ notes: 'n', tags: ['t'] })), [], 'notes and tags do not judge');
  assert.deepEqual(expectationChanges(q({}), q({ expected: [{ path: 'b.md', grade: 3, relevant: true }] })), ['expected -a.md, +b.md']);
  assert.deepEqual(expectationChanges(q({}), q({ expected: [{ path: 'a.md', grade: 1, relevant: true }] })), ['grade of a.md 3 -> 1']);
  assert.deepEqual(expectationChanges(q({}), q({ expected_routing: 'no_results', category: 'adversarial' })), ['expected_routing search -> no_results', 'category c -> adversarial']);
});

test('the base ref comes from the flag, RANKGATE_BASE_REF or a pull_request event; none on purpose; never an option', () => {
  assert.deepEqual(baseRefFrom('origin/main', {}), { ref: 'origin/main', source: '--base-ref' });
  assert.deepEqual(baseRefFrom(undefined, { RANKGATE_BASE_REF: 'main' }), { ref: 'main', source: 'RANKGATE_BASE_REF' });
  assert.equal(baseRefFrom(undefined, { GITHUB_EVENT_NAME: 'push', GITHUB_BASE_REF: 'main' }), null);
  assert.equal(baseRefFrom(undefined, { GITHUB_EVENT_NAME: 'pull_request', GITHUB_BASE_REF: 'main' })?.ref, 'origin/main');
  assert.equal(baseRefFrom('none', { GITHUB_EVENT_NAME: 'pull_request', GITHUB_BASE_REF: 'main' }), null);
  assert.throws(() => baseRefFrom('--output=x', {}), /--base-ref: "--output=x" is not a git ref/);
  assert.throws(() => baseRefFrom('main:secrets.txt', {}), /is not a git ref/);
  // none on purpose during a pull request is said LOUD; outside one, nothing to say
  assert.match(noBaseNote('none', { GITHUB_EVENT_NAME: 'pull_request' })!, /^LOUD: no base ref \(--base-ref none\) on a pull_request event: this pull request is judged by its own floors/);
  assert.match(noBaseNote(undefined, { GITHUB_EVENT_NAME: 'pull_request', RANKGATE_BASE_REF: 'none' })!, /RANKGATE_BASE_REF none/);
  assert.equal(noBaseNote('none', { GITHUB_EVENT_NAME: 'schedule' }), null);
});

test('a pull request that degrades search and edits its floors, expectations and baseline is judged by the base branch: FAILED, each change LOUD', async () => {
  const repo = tempDir('base-ref');
  const home = join(repo, '.pf');
  const pf = (out: string, env: Record<string, string> = {}) =>
    run(process.execPath, [PROMPTFOO_BIN, 'eval', '-c', 'promptfooconfig.yaml', '-o', out, '--no-cache', '--no-table', '--no-progress-bar'], {
      cwd: repo,
      env: { ...clean(env), PROMPTFOO_CONFIG_DIR: home, PROMPTFOO_DISABLE_TELEMETRY: '1', PROMPTFOO_DISABLE_UPDATE: '1', PROMPTFOO_DISABLE_SHARING: '1' },
      timeoutMs: 240_000,
    });
  const gate = (args: string[], env: Record<string, string> = {}) => run(process.execPath, [RANKGATE, 'gate', ...args], { cwd: repo, env: { ...clean(), ...env } });

  mkdirSync(join(repo, 'eval'));
  mkdirSync(join(repo, 'config'));
  writeFileSync(join(repo, 'service.mjs'), SERVICE);
  writeFileSync(join(repo, 'eval', 'golden.yaml'), GOLDEN(RIGHT));
  writeFileSync(join(repo, 'config', 'gate.yaml'), FLOORS(0.02, 'recall_at_3, mrr_at_10'));
  writeFileSync(join(repo, 'promptfooconfig.yaml'), CONFIG(false));
  writeFileSync(join(repo, '.gitignore'), '.pf/\n*.jsonl\n');
  git(repo, 'init', '-q', '-b', 'main');
  // main's baseline, from a real eval of main
  const b = await pf('base.jsonl');
  assert.equal(b.code, 0, b.stderr.slice(-2000));
  const upd = await gate(['base.jsonl', '--update-baseline']);
  assert.equal(upd.code, 0, upd.stdout + upd.stderr);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'main');

  // the pull request: a degraded search, and everything it is judged by edited to pass
  git(repo, 'checkout', '-qb', 'pr');
  writeFileSync(join(repo, 'promptfooconfig.yaml'), CONFIG(true));
  writeFileSync(join(repo, 'eval', 'golden.yaml'), GOLDEN(WRONG));
  writeFileSync(join(repo, 'config', 'gate.yaml'), FLOORS(0.99, 'routing_accuracy'));
  // the workflow's eval step runs in the pull request's environment too: its hook judges by main as well
  const pr = await pf('pr.jsonl', { RANKGATE_BASE_REF: 'main' });
  assert.equal(pr.code, 1, pr.stderr.slice(-3000));
  assert.match(pr.stderr, /LOUD: this pull request CHANGES the floors: regression\.max_drop 0\.02 -> 0\.99/);
  assert.match(pr.stderr, /LOUD: this pull request CHANGES the expectations of 7 queries/);
  // the PR rewrites the baseline from its own run, too
  const rebase = await gate(['pr.jsonl', '--update-baseline']);
  assert.equal(rebase.code, 0, rebase.stdout + rebase.stderr);
  git(repo, 'commit', '-qam', 'pr');

  // without the base ref, the attack passes (what it did before)
  const naive = await gate(['pr.jsonl', '--base-ref', 'none']);
  assert.equal(naive.code, 0, `the files of the PR alone pass: ${naive.stdout}${naive.stderr}`);

  // the workflow: judged by main
  const judged = await gate(['pr.jsonl', '--base-ref', 'main', '--comment', 'comment.md', '--report', 'report.json']);
  const out = judged.stdout + judged.stderr;
  console.log(`# transcript: rankgate gate pr.jsonl --base-ref main (exit ${judged.code})\n${out.split('\n').filter((l) => /LOUD|rankgate gate|judged by|floor|regression:/.test(l)).join('\n')}`);
  assert.equal(judged.code, 1, out);
  assert.match(out, /judged by the base branch main \([0-9a-f]{7}\) \(--base-ref\)/);
  assert.match(out, /LOUD: this pull request CHANGES the floors: regression\.max_drop 0\.02 -> 0\.99; regression\.metrics \["recall_at_3","mrr_at_10"\] -> \["routing_accuracy"\] \(config\/gate\.yaml\)/);
  assert.match(out, /LOUD: this pull request CHANGES the expectations of 7 queries: 2fa \(expected -e\.md, \+d\.md\)/);
  // judged by the base's passage: its hit (rank 5 of the degraded search) kept its text because the eval knew the base
  assert.equal(JSON.parse(readFileSync(join(repo, 'report.json'), 'utf8')).metrics.answerable_at_10, 1);
  assert.match(out, /LOUD: this pull request CHANGES the baseline eval\/baseline\.json: Success@3 1\.0000 -> /);
  assert.match(out, /floor: overall recall_at_1 = 0\.0000 is below the floor 0\.5/);
  assert.match(out, /✗ regression: overall mrr_at_10 1\.0000 -> 0\.3143/);
  const comment = readFileSync(join(repo, 'comment.md'), 'utf8');
  assert.match(comment.split('\n')[0]!, /^> \*\*this pull request CHANGES the floors/);
  assert.match(comment, /CHANGES the expectations of 7 queries/);

  // GitHub's pull_request event, no flag: the same verdict (origin/main is what actions/checkout fetches)
  git(repo, 'update-ref', 'refs/remotes/origin/main', 'main');
  const gh = await gate(['pr.jsonl'], { GITHUB_EVENT_NAME: 'pull_request', GITHUB_BASE_REF: 'main' });
  assert.equal(gh.code, 1, gh.stdout + gh.stderr);
  assert.match(gh.stdout, /judged by the base branch origin\/main \([0-9a-f]{7}\) \(GITHUB_BASE_REF \(a pull_request event\)\)/);

  // the pull request also commits a cache file (a judge verdict it would like to be judged by): in CI the eval refuses
  // it before any query, naming it (caches come from the workflow's cache, keyed by the base branch)
  mkdirSync(join(repo, '.rankgate', 'cache', 'judge'), { recursive: true });
  writeFileSync(join(repo, '.rankgate', 'cache', 'judge', 'planted.json'), '{"verdict":"HIGH"}\n');
  git(repo, 'add', '-f', '.rankgate/cache/judge/planted.json');
  git(repo, 'commit', '-qm', 'pr: a cache file');
  const cached = await pf('cached.jsonl', { RANKGATE_BASE_REF: 'main', CI: 'true' });
  assert.equal(cached.code, 2, cached.stderr.slice(-2000));
  assert.match(cached.stderr, /\.rankgate\/cache\/judge\/planted\.json is tracked by git/);

  // a pull request event whose base was not fetched: exit 2, how to fetch it; never the PR's own files
  const unfetched = await gate(['pr.jsonl'], { GITHUB_EVENT_NAME: 'pull_request', GITHUB_BASE_REF: 'release' });
  assert.equal(unfetched.code, 2, unfetched.stdout + unfetched.stderr);
  assert.match(unfetched.stderr, /base ref 'origin\/release' is not in this clone: fetch it first \(actions\/checkout with fetch-depth: 0, or git fetch --no-tags origin release\)/);
});

// ------------------------------------------------------------------------------------------------ fail closed, cheaply
// expectationsAtBase on hand-built columns over a real git repository (no eval): what the independent review found
import { expectationsAtBase, gateInputs, restrictToBase } from '../../src/gate/base-ref.ts';
import { refReader } from '../../src/util/git.ts';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';
import type { Column, QueryRecord } from '../../src/results/read.ts';

function rec(id: string, query: string, path: string, r3 = 1): QueryRecord {
  // as the blind-test YAML reader gives it (the rows carry the same shape)
  const golden = GoldenQuerySchema.parse({ id, query, language: 'en', category: 'general', expected: [{ path, grade: 3, relevant: true, implied_grade: true }], origin: { format: 'yaml', derived: ['tags', 'language', 'category', 'expected_routing'] } });
  return {
    id, query, category: 'general', language: 'en', tags: [], golden, error: null,
    retrieval: { recall_at_1: r3, recall_at_3: r3, recall_at_5: r3, recall_at_10: r3, trec_recall_at_10: r3, mrr: r3, ndcg_at_10: r3, precision_at_5: r3 / 5, ap_at_10: r3, found: r3, best_rank: 1, last_expected_rank: null, answerable_at_10: null, relevant_refs: 1, level: 'path', bucket: 'rank1_hit' },
    routing: null, integrity: [], latencyMs: 1, top: [], promptfooPass: true, judged: false,
  } as unknown as QueryRecord;
}
const column = (files: string[], queries: QueryRecord[], extra: Partial<NonNullable<Column['selection']>> = {}): Column => ({ index: 0, label: 'c', providerId: 'p', config: {}, namedScores: {}, queries, counts: null, selection: { id: 'x', size: queries.length, files, ...extra }, identity: null });

test('fail closed on a pull request: a renamed golden file, a changed text, a filter, added queries, files outside the tree', async () => {
  const repo = tempDir('base-ref-units');
  const yml = (rows: [string, string, string][]) => rows.map(([id, q, p]) => `- id: ${id}\n  query: "${q}"\n  expected_paths: ["${p}"]\n`).join('');
  mkdirSync(join(repo, 'eval'));
  writeFileSync(join(repo, 'eval', 'golden.yaml'), yml([['a', 'alpha', 'a.md'], ['b', 'beta', 'b.md']]));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'base');
  const base = refReader({ ref: 'main', source: '--base-ref' }, repo);
  const cwd = process.cwd();
  process.chdir(repo);
  try {
    // the PR copies the golden file and rewrites b's expectation there: found by id in the base's file the rows do not name
    const copied = column(['eval/golden2.yaml'], [rec('a', 'alpha', 'a.md'), rec('b', 'beta', 'x.md')]);
    const baseline = { queries: { a: {}, b: {} }, identity: { selection: { files: ['eval/golden.yaml'] } } } as never;
    const e1 = await expectationsAtBase(base, copied, { baseline });
    assert.deepEqual([...e1.override.keys()], ['b'], 'judged by the base entry of b, found in the file the base baseline names');
    assert.match(e1.loud.join('\n'), /CHANGES the expectations of 1 query: b \(expected -b\.md, \+x\.md\)/);
    // without the base baseline naming the file, the base's entries cannot be found: its queries are exit 2, not "added"
    await assert.rejects(expectationsAtBase(base, copied, { baseline: { queries: { a: {}, b: {} } } as never }), /the base branch's baseline measures 2 queries \(a, b\) whose expectations are in none of the base's golden files/);
    // a changed text: an id never reused for another query
    await assert.rejects(expectationsAtBase(base, column(['eval/golden.yaml'], [rec('a', 'alpha  ', 'a.md'), rec('b', 'what is beta', 'b.md')])), /this pull request CHANGES the text of 1 query \(b\): an id is never reused/);
    // a filter or a shard of the golden set
    await assert.rejects(expectationsAtBase(base, column(['eval/golden.yaml'], [rec('a', 'alpha', 'a.md')], { filter: { tag: ['x'], of: 2 } })), /a pull request is judged on the whole golden set, and this run is a declared filter of it/);
    assert.equal((await expectationsAtBase(base, column(['eval/golden.yaml'], [rec('a', 'alpha', 'a.md')], { shard: { index: 1, count: 2 } }), { allowPartial: true })).override.size, 0);
    // golden files outside the work tree
    await assert.rejects(expectationsAtBase(base, column(['/elsewhere/golden.yaml'], [rec('a', 'alpha', 'a.md')])), /lie outside this git work tree/);
    // queries the PR adds: not gated until merged, said LOUD with their own figure
    const grown = column(['eval/golden.yaml'], [rec('a', 'alpha', 'a.md'), rec('b', 'beta', 'b.md', 0), rec('easy', 'gamma', 'c.md', 1)]);
    const e2 = await expectationsAtBase(base, grown);
    assert.deepEqual([...e2.added], ['easy']);
    assert.match(e2.loud.join('\n'), /ADDS 1 query \(easy\): not gated until merged \(the floors and the regression check are on the base branch's 2\); their Success@3 1\.0000 over 1 measured/);
    const gated = restrictToBase(grown, e2.added);
    assert.deepEqual(gated.queries.map((q) => q.id), ['a', 'b']);
    assert.equal(gated.selection?.size, 2);
    // --baseline on a pull request whose base floors configure no regression check: read at the base
    writeFileSync(join(repo, 'config.yaml'), 'overall:\n  recall_at_3: 0.5\n');
    writeFileSync(join(repo, 'b.json'), '{}');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'floors');
    const b2 = refReader({ ref: 'HEAD', source: '--base-ref' }, repo);
    // the regression check is on, against the named baseline as the base has it (here not a baseline: said, exit 2)
    assert.throws(() => gateInputs({ floorsPath: 'config.yaml', baselinePath: 'b.json', base: b2 }), /b\.json at HEAD \([0-9a-f]{7}\): not a rankgate baseline/);
  } finally {
    process.chdir(cwd);
  }
});
