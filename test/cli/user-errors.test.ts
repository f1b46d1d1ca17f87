/**
 * Every `rankgate` subcommand and the promptfoo tests loader, given a user mistake (an unknown option, a missing
 * file, a bad value), answers with ONE line naming the mistake (an unknown option with a did-you-mean), exit
 * code 2, and no stack trace. The usage text may follow the line; Node's and npm's own banners are ignored.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, run, tempDir, RANKGATE_BIN, ROOT } from './helpers.ts';

const STACK = /^\s+at .+[:(].*\d+:\d+\)?$/m;
const NOISE = [/^npm warn /, /^Node\.js 20 support in promptfoo ended/, /ExperimentalWarning/, /^\(Use `node --trace-warnings/];

/** The lines of stderr that are the error itself: before any usage block, without runtime banners. */
export function errorLines(stderr: string): string[] {
  const lines = stderr.split('\n');
  const end = lines.findIndex((l) => /^\s*usage:/i.test(l));
  return (end === -1 ? lines : lines.slice(0, end)).filter((l) => l.trim() && !NOISE.some((n) => n.test(l)));
}

interface Case {
  id: string;
  args: string[];
  /** what the one line must say */
  expect: RegExp;
  env?: Record<string, string | undefined>;
  /** run `promptfoo eval` instead of rankgate */
  promptfoo?: boolean;
  /** the command's output IS the problem list (golden validate): the one line is on stdout, a count on stderr */
  onStdout?: boolean;
}

const dir = tempDir('user-errors');
const qrels = join(dir, 'qrels.txt');
const runFile = join(dir, 'run.txt');
const golden = join(dir, 'golden.yaml');
const results = join(dir, 'results.json');
const floors = join(dir, 'gate.yaml');
const corpus = join(dir, 'corpus');
writeFileSync(qrels, 'q1 0 d1 1\nq2 0 d2 1\n');
writeFileSync(runFile, 'q1 Q0 d1 1 2.0 r\nq2 Q0 d3 1 1.0 r\n');
writeFileSync(golden, '- id: a\n  query: hello there\n  category: x\n  expected_paths: [a.md]\n');
writeFileSync(results, '{"not": "a promptfoo results file"}\n');
writeFileSync(floors, 'overall:\n  recall_at_3: 1.5\n');
mkdirSync(corpus);
writeFileSync(join(corpus, 'a.md'), '# A\n\nHello there.\n');
const db = join(dir, 'db');
const missing = join(dir, 'nope.yaml');
// the loader as a user's config reaches it: a config whose tests come from rankgate's datasets/tests.ts
const loaderConfig = join(dir, 'promptfooconfig.yaml');
writeFileSync(
  loaderConfig,
  `prompts: ['{{query}}']\nproviders: [echo]\ntests:\n  - path: file://${join(ROOT, 'datasets', 'tests.ts')}\n    config: { golden: ${JSON.stringify(golden)} }\n`,
);

const CASES: Case[] = [
  // trec-eval
  { id: 'trec-eval unknown option', args: ['trec-eval', '--qrel', qrels, runFile], expect: /unknown option '--qrel'/ },
  { id: 'trec-eval missing file', args: ['trec-eval', missing, runFile], expect: /nope\.yaml/ },
  { id: 'trec-eval bad value', args: ['trec-eval', '-m', 'nosuchmeasure', qrels, runFile], expect: /nosuchmeasure/ },
  // compare
  { id: 'compare unknown option', args: ['compare', '--resutls', results], expect: /unknown option '--resutls'.*did you mean '--results'/ },
  { id: 'compare missing file', args: ['compare', '--results', missing], expect: /nope\.yaml/ },
  { id: 'compare bad value', args: ['compare', '--qrels', qrels, '--seed', 'abc', runFile, runFile], expect: /--seed|abc/ },
  // golden
  { id: 'golden unknown option', args: ['golden', 'validate', '--formt', 'yaml', golden], expect: /unknown option '--formt'.*did you mean '--format'/ },
  { id: 'golden unknown subcommand', args: ['golden', 'valdate', golden], expect: /valdate.*did you mean 'validate'/ },
  { id: 'golden validate missing file', args: ['golden', 'validate', missing], expect: /nope\.yaml/, onStdout: true },
  { id: 'golden stats missing file', args: ['golden', 'stats', missing], expect: /nope\.yaml/ },
  { id: 'golden convert bad value', args: ['golden', 'convert', golden, '--to', 'xml'], expect: /xml/ },
  { id: 'golden validate bad value', args: ['golden', 'validate', '--format', 'xml', golden], expect: /xml/, onStdout: true },
  { id: 'golden bootstrap missing corpus', args: ['golden', 'bootstrap', '--corpus', missing], expect: /nope\.yaml/ },
  // ingest
  { id: 'ingest unknown option', args: ['ingest', '--chunksize', '300', '--corpus', corpus, '--db', db], expect: /unknown option '--chunksize'.*did you mean '--chunk-size'/ },
  { id: 'ingest missing file', args: ['ingest', '--corpus', missing, '--db', db], expect: /nope\.yaml/ },
  { id: 'ingest bad value', args: ['ingest', '--corpus', corpus, '--db', db, '--chunk-size', 'abc'], expect: /chunk-size|abc/ },
  // search
  { id: 'search unknown option', args: ['search', 'hello', '--topk', '3', '--db', db], expect: /unknown option '--topk'.*did you mean '--top-k'/ },
  { id: 'search missing file', args: ['search', 'hello', '--routing', missing, '--db', db], expect: /nope\.yaml/ },
  { id: 'search bad value', args: ['search', 'hello', '--mode', 'hybird', '--db', db], expect: /hybird.*did you mean 'hybrid'/ },
  // serve
  { id: 'serve unknown option', args: ['serve', '--prot', '0', '--db', db], expect: /unknown option '--prot'.*did you mean '--port'/ },
  { id: 'serve missing file', args: ['serve', '--port', '0', '--routing', missing, '--db', db], expect: /nope\.yaml/ },
  { id: 'serve bad value', args: ['serve', '--port', 'abc', '--db', db], expect: /port|abc/ },
  // eval
  { id: 'eval unknown option', args: ['eval', '--lnag', 'en'], expect: /unknown option '--lnag'.*did you mean '--lang'/ },
  { id: 'eval missing file', args: ['eval', '--config', missing], expect: /nope\.yaml/ },
  { id: 'eval bad value', args: ['eval', '--judge', 'maybe'], expect: /maybe/ },
  // gate
  { id: 'gate unknown option', args: ['gate', results, '--baseine', 'b.json'], expect: /unknown option '--baseine'.*did you mean '--baseline'/ },
  { id: 'gate missing file', args: ['gate', missing], expect: /nope\.yaml/ },
  { id: 'gate bad value', args: ['gate', results], expect: /results\.json/ },
  { id: 'gate bad floors value', args: ['gate', results, '--floors', floors], expect: /gate\.yaml|results\.json/ },
  // init
  { id: 'init unknown option', args: ['init', '--gloden', golden], expect: /unknown option '--gloden'.*did you mean '--golden'/ },
  { id: 'init missing file', args: ['init', '--golden', missing, '--corpus', corpus, '--dir', dir], expect: /nope\.yaml/ },
  { id: 'init bad value', args: ['init', '--golden', golden, '--corpus', corpus, '--dir', dir, '--chunk-size', 'abc'], expect: /chunk-size abc/ },
  // merge (shard results -> one results file)
  { id: 'merge unknown option', args: ['merge', join(dir, 'out.json'), results, '--quite'], expect: /unknown option '--quite'.*did you mean '--quiet'/ },
  { id: 'merge missing file', args: ['merge', join(dir, 'out.json'), missing], expect: /nope\.yaml/ },
  { id: 'merge bad value', args: ['merge', join(dir, 'out.json'), results], expect: /results\.json/ },
  // embed-cache
  { id: 'embed-cache unknown option', args: ['embed-cache', 'build', '--shrad', '1/2', '--out', join(dir, 'c.jsonl'), '--corpus', corpus], expect: /unknown option '--shrad'.*did you mean '--shard'/ },
  { id: 'embed-cache missing file', args: ['embed-cache', 'merge', join(dir, 'c.jsonl'), missing], expect: /nope\.yaml/ },
  { id: 'embed-cache bad value', args: ['embed-cache', 'build', '--shard', '3/2', '--out', join(dir, 'c.jsonl'), '--corpus', corpus], expect: /3\/2|shard/ },
  // report (the HTML report)
  { id: 'report unknown option', args: ['report', results, '--htm', join(dir, 'r.html')], expect: /unknown option '--htm'.*did you mean '--html'/ },
  { id: 'report missing file', args: ['report', missing, '--html', join(dir, 'r.html')], expect: /nope\.yaml/ },
  { id: 'report bad value', args: ['report', results, '--html', join(dir, 'r.html'), '--seed', 'abc'], expect: /seed|abc|results\.json/ },
  // judge agreement
  { id: 'judge unknown option', args: ['judge', 'agreement', results, '--limt', '5'], expect: /unknown option '--limt'.*did you mean '--limit'/ },
  { id: 'judge missing file', args: ['judge', 'agreement', missing], expect: /nope\.yaml/ },
  { id: 'judge bad value', args: ['judge', 'agreement', results, '--seed', 'abc'], expect: /--seed: expected an integer >= 0, got 'abc'/ },
  // review (the blind human review of criterion 4)
  { id: 'review unknown option', args: ['review', 'export', results, '--queris', '5'], expect: /unknown option '--queris'.*did you mean '--queries'/ },
  { id: 'review missing file', args: ['review', 'import', missing, '--key', missing], expect: /nope\.yaml: cannot read the review key file/ },
  { id: 'review bad value', args: ['review', 'export', results, '--baseline', '0', '--candidate', '1', '--queries', '0', '-o', join(dir, 'r.html')], expect: /--queries: expected a whole number from 1, got "0"/ },
  // history (quality over time) and its append (the scheduled run)
  { id: 'history unknown option', args: ['history', '--windw', '4'], expect: /unknown option '--windw'.*did you mean '--window'/ },
  { id: 'history missing file', args: ['history', 'append', missing, '--file', join(dir, 'history.jsonl')], expect: /nope\.yaml/ },
  { id: 'history bad value', args: ['history', '--window', 'abc'], expect: /--window: expected a whole number from 2 to 100000, got "abc"/ },
  // the command itself
  { id: 'rankgate unknown command', args: ['gaet'], expect: /unknown command 'gaet'.*did you mean 'gate'/ },
  { id: 'bad RANKGATE_WASM_TIERING_BUDGET', args: ['search', 'still water', '--db', join(dir, 'no-db')], env: { RANKGATE_WASM_TIERING_BUDGET: 'lots' }, expect: /RANKGATE_WASM_TIERING_BUDGET: 'lots' is not valid: a positive whole number of bytes .* or 'default'/ },
  // the promptfoo tests loader (datasets/tests.ts) inside a real eval
  { id: 'loader missing golden file', promptfoo: true, args: ['eval', '-c', loaderConfig, '--no-table', '--no-progress-bar', '--no-write'], env: { RANKGATE_GOLDEN: missing }, expect: /nope\.yaml/ },
  { id: 'loader unknown language', promptfoo: true, args: ['eval', '-c', loaderConfig, '--no-table', '--no-progress-bar', '--no-write'], env: { RANKGATE_LANG: 'fr' }, expect: /fr/ },
];

const PROMPTFOO_BIN = join(ROOT, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js');

test.after(() => removeDir(dir));

for (const c of CASES) {
  test(c.id, async () => {
    const argv = c.promptfoo ? [PROMPTFOO_BIN, ...c.args] : [RANKGATE_BIN, ...c.args];
    const r = await run(process.execPath, argv, { cwd: dir, env: { DATABASE_URL: undefined, RANKGATE_JUDGE: 'off', ...c.env }, timeoutMs: 60_000 });
    const check = () => {
      const shown = `exit ${r.code}\n${r.stderr.slice(-1500)}${r.stdout ? `\nstdout: ${r.stdout.slice(-500)}` : ''}`;
      assert.equal(r.code, 2, `expected exit 2, got ${shown}`);
      assert.doesNotMatch(r.stderr + r.stdout, STACK, `expected no stack trace, got ${shown}`);
      const lines = errorLines(c.onStdout ? r.stdout : r.stderr);
      assert.equal(lines.length, 1, `expected one line, got ${lines.length}: ${shown}`);
      assert.match(lines[0]!, c.expect, `expected the line to match ${c.expect}, got: ${lines[0]}`);
    };
    check();
  });
}

test('every rankgate subcommand has an unknown-option, a missing-file and a bad-value case here', async () => {
  const r = await run(process.execPath, [RANKGATE_BIN, '--help']);
  assert.equal(r.code, 0, r.stderr);
  const commands = [...r.stdout.matchAll(/^ {2}([a-z][a-z-]*) {2,}\S/gm)].map((m) => m[1]!);
  assert.ok(commands.length >= 10, `commands listed by rankgate --help: ${commands.join(', ')}`);
  for (const cmd of commands) {
    const mine = CASES.filter((c) => !c.promptfoo && c.args[0] === cmd).map((c) => c.id);
    for (const kind of ['unknown option', 'missing', 'bad value']) {
      assert.ok(mine.some((id) => id.includes(kind)), `rankgate ${cmd}: no '${kind}' case (has: ${mine.join(', ') || 'none'})`);
    }
  }
});

test('rankgate --version and -v print the package version (package.json, through src/version.ts)', async () => {
  const { main } = await import('../../src/cli/index.ts');
  const { capture } = await import('../helpers/capture.ts');
  const { readFileSync } = await import('node:fs');
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  for (const flag of ['--version', '-v']) {
    const r = await capture(() => main([flag]));
    assert.deepEqual([r.code, r.out.trim(), r.err], [0, version, ''], flag);
  }
});

test('rankgate ingest without --corpus ingests the corpus the promptfoo config names, never the demo\'s; none named: one line, exit 2', async () => {
  const { corpusOfConfig, run } = await import('../../src/cli/ingest.ts');
  const dir = tempDir('ingest-corpus');
  try {
    const cfg = join(dir, 'promptfooconfig.yaml');
    await assert.rejects(run(['--config', cfg, '--db', join(dir, 'db')]), (e: Error & { exitCode?: number }) => e.name === 'UserError' && e.exitCode === 2 && /^--config .*promptfooconfig\.yaml: no such file$/.test(e.message));
    assert.throws(() => corpusOfConfig(cfg, false), /: no corpus to ingest: no --corpus and no .*promptfooconfig\.yaml here; give the corpus with --corpus PATH, or name it as corpus: in the provider config/);
    writeFileSync(cfg, 'providers:\n  - id: file://node_modules/rankgate/providers/search.ts\n    config: { mode: hybrid }\n');
    assert.throws(() => corpusOfConfig(cfg, true), /names none \(no corpus: in a providers\/search\.ts entry's config\); give the corpus with --corpus PATH/);
    writeFileSync(cfg, 'providers:\n  - id: file://node_modules/rankgate/providers/search.ts\n    config: { corpus: help, corpusFormat: markdown }\n  - id: file://node_modules/rankgate/providers/search.ts\n    label: b\n    config: { corpus: ./help }\n');
    const got = corpusOfConfig(cfg, true);
    assert.equal(got.format, 'markdown');
    assert.match(got.corpus, /help$/);
    assert.match(got.where, /named by .*promptfooconfig\.yaml providers\[0\]\.config\.corpus/);
    writeFileSync(cfg, 'providers:\n  - id: file://providers/search.ts\n    config: { corpus: a }\n  - id: file://providers/search.ts\n    config: { corpus: b }\n');
    assert.throws(() => corpusOfConfig(cfg, true), /names 2 corpora \(.*a, .*b\): say which with --corpus PATH/);
  } finally {
    removeDir(dir);
  }
});
