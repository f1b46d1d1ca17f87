/**
 * `rankgate golden ...` end to end through bin/rankgate.js: exit codes, one-line problems, no stack traces.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { loadGoldenFile } from '../../src/golden/index.ts';
import { isUserError } from '../../src/errors.ts';
import { FIX, ROOT, tempDir } from './helpers.ts';

function rg(...args: string[]) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'golden', ...args], { cwd: ROOT, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const noStack = (s: string) => assert.doesNotMatch(s, /\n\s+at .+:\d+:\d+\)?$/m, `stack trace in output:\n${s}`);
const DES = join(FIX, 'des058', 'golden-set-en.json');
const YAML = join(FIX, 'yaml', 'queries.yaml');

test('validate: valid files exit 0 and say ok per file', () => {
  const r = rg('validate', DES, YAML, join(FIX, 'beir', 'mini'), join(FIX, 'trec', 'sgml'));
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /golden-set-en\.json: ok \(des058, 5 queries\)/);
  assert.match(r.out, /queries\.yaml: ok \(yaml, 3 queries\)/);
  assert.match(r.out, /mini: ok \(beir, 3 queries\)/);
  assert.match(r.out, /sgml: ok \(trec, 3 queries\)/);
  // a plain folder stands for every golden set under it (BEIR/TREC folders as one set each)
  const all = rg('validate', FIX);
  assert.equal(all.code, 0, all.out + all.err);
  assert.deepEqual(
    all.out.trim().split('\n').map((l) => l.replace(`${FIX}/`, '').replace(/: ok .*/, '')),
    ['beir/mini', 'des058/golden-set-en.json', 'jsonl/gold-set.jsonl', 'nq/nq.csv', 'nq/prepared.json', 'trec/sgml', 'trec/tsv', 'yaml/queries.yaml', 'yaml/wrapped.yaml'],
  );
});

test('validate: problems are one line each, exit 2, no stack trace', (t) => {
  const d = tempDir(t);
  const bad = join(d, 'golden-set-en.json');
  writeFileSync(bad, JSON.stringify([{ id: 'a', query: 'q', language: 'en', category: 'direct', expected_routing: 'maybe' }, { id: 'a', query: '', language: 'en', category: 'direct' }], null, 2));
  const broken = join(d, 'broken.yaml');
  writeFileSync(broken, '- query: a\n  tags: [x\n');
  const r = rg('validate', bad, broken, DES);
  assert.equal(r.code, 2);
  assert.deepEqual(r.out.trim().split('\n'), [
    `${bad}:7 (a) expected_routing: unknown routing "maybe", expected one of search, practice_bridge, no_results`,
    `${bad}:11 (a) query: is empty, expected a non-empty string`,
    `${broken}:3:1 (file) yaml: invalid YAML: unexpected end of the stream within a flow collection, expected valid YAML (check indentation, quotes, brackets and duplicate keys)`,
    `${DES}: ok (des058, 5 queries)`,
  ]);
  assert.match(r.err, /golden validate: 3 errors in 3 files/);
  noStack(r.out + r.err);
});

test('convert: YAML -> DES-058 file (atomic) and -> promptfoo on stdout; BEIR/TREC need -o', (t) => {
  const d = tempDir(t);
  const out = join(d, 'golden-set-zh.json');
  const r = rg('convert', YAML, '--to', 'des058', '-o', out);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(loadGoldenFile(out).map((q) => [q.id, q.expected.length]), [['yaml-0', 3], ['yaml-1', 1], ['pinned-weekly-log', 2]]);
  const pf = rg('convert', DES, '--to', 'promptfoo');
  assert.equal(pf.code, 0, pf.err);
  const tests = yaml.load(pf.out) as { vars: Record<string, unknown>; metadata: Record<string, unknown> }[];
  assert.equal(tests.length, 5);
  assert.deepEqual(tests[0]!.vars, { query: 'What did Yogananda say about divine mother?' });
  assert.equal(tests[0]!.metadata.id, 'en-direct-001');
  const trec = rg('convert', DES, '--to', 'trec');
  assert.equal(trec.code, 2);
  assert.match(trec.err, /--to trec writes several files, expected -o OUT/);
  const tdir = join(d, 'beir');
  assert.equal(rg('convert', join(FIX, 'jsonl', 'gold-set.jsonl'), '--to', 'beir', '-o', tdir).code, 0);
  assert.ok(existsSync(join(tdir, 'queries.jsonl')) && existsSync(join(tdir, 'qrels', 'test.tsv')));
  const bad = rg('convert', DES, '--to', 'excel');
  assert.equal(bad.code, 2);
  assert.match(bad.err, /unknown golden-set format 'excel'/);
  noStack(bad.err + trec.err);
});

test('convert refuses an invalid input and writes nothing', (t) => {
  const d = tempDir(t);
  const bad = join(d, 'bad.json');
  writeFileSync(bad, '[{"id": "a"}]');
  const out = join(d, 'out.yaml');
  const r = rg('convert', bad, '--to', 'yaml', '-o', out);
  assert.equal(r.code, 2);
  assert.match(r.err, /bad\.json:1 \(a\) query: missing, expected a non-empty string/);
  assert.equal(existsSync(out), false);
  noStack(r.err);
});

test('stats: counts per category, language, tag, routing; themes above 20% flagged', () => {
  const r = rg('stats', YAML, DES);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /queries\.yaml: 3 queries/);
  assert.match(r.out, /english\s+2\s+66\.7%\s+! above 20%/);
  assert.match(r.out, /theme balance: english 66\.7%, cjk 33\.3%/);
  assert.match(r.out, /all 2 files: 8 queries/);
  const j = rg('stats', DES, '--json');
  const s = JSON.parse(j.out) as { total: { category: Record<string, number>; routing: Record<string, number>; language: Record<string, number> } };
  assert.deepEqual(s.total.routing, { search: 3, no_results: 1, practice_bridge: 1 });
  assert.deepEqual(s.total.language, { en: 5 });
  assert.equal(s.total.category.dark_night, 1);
  assert.deepEqual((s.total as unknown as { missing_themes: string[] }).missing_themes, ['meditation', 'guru', 'death', 'healing', 'self-discipline']);
  assert.match(rg('stats', DES).out, /themes of the portal's DES-058 spec without a query: meditation, guru, death, healing, self-discipline/);
});

test('diff: added/changed pass, a removed or reused id fails', (t) => {
  const d = tempDir(t);
  const base = JSON.parse(readFileSync(DES, 'utf8')) as Record<string, unknown>[];
  const grown = join(d, 'grown.json');
  writeFileSync(grown, JSON.stringify([...base.map((q, i) => (i === 0 ? { ...q, notes: 'edited' } : q)), { id: 'en-direct-002', query: 'new one', language: 'en', category: 'direct', expected_routing: 'search', expected_passages: [{ passage_substring: 'the new passage', relevance: 'high' }] }]));
  let r = rg('diff', DES, grown);
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /added    en-direct-002/);
  assert.match(r.out, /changed  en-direct-001: notes/);
  const shrunk = join(d, 'shrunk.json');
  writeFileSync(shrunk, JSON.stringify(base.slice(1).map((q, i) => (i === 0 ? { ...q, query: 'a different question' } : q))));
  r = rg('diff', DES, shrunk);
  assert.equal(r.code, 1);
  assert.match(r.out, /REMOVED  en-direct-001: old queries are regression tests and are never removed/);
  assert.match(r.out, /REUSED   en-dark_night-001: was "I can't stop crying", now "a different question"/);
});

test('bootstrap: known-item queries, idempotent, reviewed entries untouched', (t) => {
  const d = tempDir(t);
  const corpus = join(d, 'corpus');
  mkdirSync(corpus);
  writeFileSync(join(corpus, 'wave.md'), '---\ntitle: The Wave and the Ocean\nslug: the-wave-and-the-ocean\nlanguage: en\n---\n\n# The Wave and the Ocean\n\n## Chapter 1: Waves\n\nThe wave is the ocean.\n');
  writeFileSync(join(corpus, 'lamp.md'), '---\ntitle: The Lamp Within\nslug: the-lamp-within\nlanguage: en\n---\n\n# The Lamp Within\n\nText.\n');
  const out = join(d, 'known.jsonl');
  writeFileSync(out, '{"id":"known-the-lamp-within","query":"lamp book by hand","relevant_case_law_ids":["the-lamp-within"],"source":"chair","note":"reviewed"}\n');
  const r1 = rg('bootstrap', '--corpus', corpus, '--out', out);
  assert.equal(r1.code, 0, r1.out + r1.err);
  assert.match(r1.out, /2 documents -> .*: 1 added, 0 updated, 0 unchanged, 1 left alone/);
  const first = readFileSync(out, 'utf8');
  const qs = loadGoldenFile(out);
  assert.deepEqual(qs.map((q) => [q.id, q.query, q.source]), [
    ['known-the-lamp-within', 'lamp book by hand', 'reviewed'],
    ['known-the-wave-and-the-ocean', 'The Wave and the Ocean', 'bootstrap'],
  ]);
  assert.equal(first.split('\n')[0], '{"id":"known-the-lamp-within","query":"lamp book by hand","relevant_case_law_ids":["the-lamp-within"],"source":"chair","note":"reviewed"}');
  assert.deepEqual(qs[1]!.expected, [{ doc_id: 'the-wave-and-the-ocean', grade: 3, relevant: true }]);
  const r2 = rg('bootstrap', '--corpus', corpus, '--out', out);
  assert.equal(r2.code, 0);
  assert.match(r2.out, /0 added, 0 updated, 1 unchanged/);
  assert.equal(readFileSync(out, 'utf8'), first);
});

test('check routes to src/cli/golden-check.ts when present, else says it is not available', async (t) => {
  if (existsSync(join(ROOT, 'src', 'cli', 'golden-check.ts'))) {
    const r = rg('check', '--help');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /usage: rankgate golden check/);
  }
  const { runCheck } = await import('../../src/cli/golden.ts');
  const missing = new URL(`file://${join(tempDir(t), 'golden-check.ts')}`);
  await assert.rejects(runCheck([], missing), (e: unknown) => isUserError(e) && /golden check: not available in this build .*golden-check\.ts is missing/.test(e.message));
});

test('usage errors: unknown subcommand and unknown flag exit 2 without a stack', () => {
  const a = rg('frobnicate');
  assert.equal(a.code, 2);
  assert.match(a.err, /unknown golden command 'frobnicate'/);
  const b = rg('validate', '--bogus', DES);
  assert.equal(b.code, 2);
  assert.match(b.err, /unknown option '--bogus'/);
  const c = rg('validate', '--quite', DES);
  assert.equal(c.code, 2);
  assert.match(c.err, /^rankgate golden: unknown option '--quite'; did you mean '--quiet'\?$/m);
  noStack(a.err + b.err + c.err);
});

test('validate: an alias bomb under 1 KB exits 2 in bounded time with one clear line', (t) => {
  const p = join(tempDir(t), 'bomb.yaml');
  const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(', ')}]`);
  lines.push('queries: [*i]');
  writeFileSync(p, `${lines.join('\n')}\n`);
  assert.ok(readFileSync(p).length < 1024);
  const t0 = Date.now();
  const r = rg('validate', p);
  const ms = Date.now() - t0;
  assert.equal(r.code, 2, r.out + r.err);
  assert.deepEqual(r.out.trim().split('\n'), [
    `${p}:1 (file) yaml: refused: the document expands to more than 101,020 values, the limit for the 102 values it holds as written (2,345,679,012 once its YAML aliases such as *name are written out); write the values out or split the file`,
  ]);
  assert.ok(ms < 30_000, `bounded: ${ms} ms`);
  noStack(r.out + r.err);
});

test('validate: an unknown field is an error with a did-you-mean; a query with nothing to score is an error', (t) => {
  const d = tempDir(t);
  const y = join(d, 'queries.yaml');
  // the blind-test shipping criteria's format, with expected_paths misspelled
  writeFileSync(y, '- id: bt-1\n  query: how to find inner peace\n  expected_path:\n    - the-lamp-within.md\n  relevence:\n    the-lamp-within.md: 3\n- id: bt-2\n  query: grief\n  expected_paths: [a.md]\n  owner: alice\n');
  let r = rg('validate', y);
  assert.equal(r.code, 2, r.out + r.err);
  assert.deepEqual(r.out.trim().split('\n'), [
    `${y}:3 (bt-1) expected_path: unknown field "expected_path"; did you mean 'expected_paths'? expected only blind-test YAML entry fields (an unknown field is an error, never ignored)`,
    `${y}:5 (bt-1) relevence: unknown field "relevence"; did you mean 'relevance'? expected only blind-test YAML entry fields (an unknown field is an error, never ignored)`,
    `${y}:10 (bt-2) owner: unknown field "owner", expected only blind-test YAML entry fields: id, query, language, category, intent, expected_paths, relevance, tags, filters, answer_contains, expansion, expected_passages, expected_routing, retrieval_intent, expect_safety, notes, source, slices (an unknown field is an error, never ignored)`,
  ]);
  // DES-058 passages and gold-set JSONL too
  const j = join(d, 'gold.jsonl');
  writeFileSync(j, '{"id":"g1","query":"q","relevant_case_law_id":["x"]}\n{"id":"g2","query":"q","relevant_case_law_ids":[]}\n');
  r = rg('validate', j);
  assert.equal(r.code, 2);
  assert.deepEqual(r.out.trim().split('\n'), [
    `${j}:1 (g1) relevant_case_law_ids: missing, expected a list of strings`,
    `${j}:1 (g1) relevant_case_law_id: unknown field "relevant_case_law_id"; did you mean 'relevant_case_law_ids'? expected only gold-set JSONL entry fields (an unknown field is an error, never ignored)`,
    `${j}:2 (g2) relevant_case_law_ids: nothing to score (no reference), expected one of: an id in relevant_case_law_ids (or a passage with relevance "high"); an expected_routing of practice_bridge or no_results; expect_safety: true (a query without a checkable expectation would pass unscored)`,
  ]);
  const des = join(d, 'golden-set-en.json');
  writeFileSync(des, JSON.stringify([{ id: 'a', query: 'q', language: 'en', category: 'direct', expected_routing: 'search', expected_passages: [{ passage_substring: 'x', relevanse: 'high' }] }], null, 2));
  r = rg('validate', des);
  assert.equal(r.code, 2);
  assert.match(r.out, /\(a\) expected_passages\[0\]\.relevanse: unknown field "relevanse"; did you mean 'relevance'\?/);
  noStack(r.out + r.err);
});

test('validate: ids with control characters or absurd length are errors', (t) => {
  const d = tempDir(t);
  const p = join(d, 'gold.jsonl');
  const rows = [
    { id: 'a\nb', query: 'q', relevant_case_law_ids: ['x'] },
    { id: 'nul\u0000', query: 'q', relevant_case_law_ids: ['x'] },
    { id: 'tab', query: 'q', relevant_case_law_ids: ['x\ty'] },
    { id: 'x'.repeat(100_000), query: 'q', relevant_case_law_ids: ['x'] },
    { id: 'fine', query: 'q', relevant_case_law_ids: ['x'.repeat(513)] },
  ];
  writeFileSync(p, `${rows.map((x) => JSON.stringify(x)).join('\n')}\n`);
  const r = rg('validate', p);
  assert.equal(r.code, 2, r.out + r.err);
  const out = r.out.trim().split('\n');
  assert.equal(out.length, 5, r.out);
  assert.ok(out.every((l) => l.length < 400), 'short lines');
  assert.match(out[0]!, /:1 \(a\\nb\) id: id "a\\nb" contains a control character \(U\+000A, newline\), expected an id without tabs, newlines or other control characters/);
  assert.match(out[1]!, /:2 \(nul\\u0000\) id: id "nul\\u0000" contains a control character \(U\+0000, NUL\)/);
  assert.match(out[2]!, /:3 \(tab\) relevant_case_law_ids\[0\]: doc_id "x\\ty" contains a control character \(U\+0009, tab\)/);
  assert.match(out[3]!, /:4 \(x{77}\.\.\.\) id: id "x{30,}\.\.\. is 100000 characters long, expected at most 512/);
  assert.match(out[4]!, /:5 \(fine\) relevant_case_law_ids\[0\]: doc_id "x+\.\.\. is 513 characters long, expected at most 512/);
  noStack(r.out + r.err);
});

test('validate A B: ids duplicated across the files of one selection are errors; stats accepts what validate accepts', (t) => {
  const d = tempDir(t);
  let r = rg('validate', DES, DES);
  assert.equal(r.code, 2);
  assert.match(r.out, new RegExp(`^${DES.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(en-direct-001\\) id: duplicate id, already in .*golden-set-en\\.json, expected ids unique across the files of one selection$`, 'm'));
  assert.match(r.err, /golden validate: 5 errors in 2 files/);
  const other = join(d, 'other.json');
  writeFileSync(other, JSON.stringify([{ id: 'en-adversarial-001', query: 'x', language: 'en', category: 'adversarial', expected_routing: 'no_results' }]));
  r = rg('validate', DES, other);
  assert.equal(r.code, 2);
  assert.deepEqual(r.out.trim().split('\n'), [`${DES}: ok (des058, 5 queries)`, `${other} (en-adversarial-001) id: duplicate id, already in ${DES}, expected ids unique across the files of one selection`]);
  // a folder: validate and stats accept the same paths
  mkdirSync(join(d, 'sets'));
  writeFileSync(join(d, 'sets', 'golden-set-en.json'), readFileSync(DES));
  writeFileSync(join(d, 'sets', 'queries.yaml'), readFileSync(YAML));
  assert.equal(rg('validate', join(d, 'sets')).code, 0);
  const s = rg('stats', join(d, 'sets'), '--json');
  assert.equal(s.code, 0, s.err);
  assert.equal((JSON.parse(s.out) as { total: { queries: number } }).total.queries, 8);
});

test('convert: a writer refuses values its format cannot hold, names file, id and field, and writes nothing', (t) => {
  const d = tempDir(t);
  const src = join(d, 'gold.jsonl');
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ id: 'a b', query: 'q', relevant_case_law_ids: ['x'] }, 'trec', /topics\.txt \(a b\) id: contains a space, which TREC topics and qrels cannot hold \(whitespace-separated columns\), expected an id without whitespace; nothing written$/],
    [{ id: 'a', query: 'q', relevant_case_law_ids: ['doc 1'] }, 'trec', /qrels\.txt \(a\) docno: "doc 1" contains a space, which a TREC qrels line cannot hold/],
    [{ id: 'a', query: 'see </top> here', relevant_case_law_ids: ['d'] }, 'trec', /topics\.txt \(a\) query: contains tag-like text "<\/top>", which SGML topics cannot hold/],
    [{ id: 'a', query: 'line one\nline two', relevant_case_law_ids: ['d'] }, 'trec', /topics\.txt \(a\) query: contains a newline, which an SGML <title> cannot hold/],
  ];
  for (const [row, to, re] of cases) {
    writeFileSync(src, `${JSON.stringify(row)}\n`);
    const out = join(d, `out-${to}`);
    mkdirSync(out, { recursive: true });
    const r = rg('convert', src, '--to', to, '-o', join(out, 'topics.txt'));
    assert.equal(r.code, 2, r.out + r.err);
    assert.match(r.err.trim(), re);
    assert.equal(r.err.trim().split('\n').length, 1);
    assert.deepEqual(readdirSync(out), [], 'nothing written');
    noStack(r.err);
  }
  // BEIR qrels are tab-separated: an id that survives JSON but holds a tab cannot be written... and validate refuses it first
  writeFileSync(src, `${JSON.stringify({ id: 'a', query: 'q', relevant_case_law_ids: ['d\te'] })}\n`);
  const r = rg('convert', src, '--to', 'beir', '-o', join(d, 'beir'));
  assert.equal(r.code, 2);
  assert.match(r.err, /doc_id "d\\te" contains a control character \(U\+0009, tab\)/);
  assert.equal(existsSync(join(d, 'beir')), false);
});

test('golden validate/stats DIR walk like the corpus walk: links out of the folder and fifos skipped with one counted warning, never quoted; a fifo named directly is refused unopened', (t) => {
  const dir = tempDir(t);
  const secret = join(dir, 'secret.txt');
  writeFileSync(secret, 'OPENAI_API_KEY=sk-walk-secret-0123456789\n');
  const d = join(dir, 'sets');
  mkdirSync(d);
  writeFileSync(join(d, 'ok.yaml'), readFileSync(YAML, 'utf8'));
  symlinkSync(secret, join(d, 'keys.yaml'));
  symlinkSync('/etc/passwd', join(d, 'passwd.json'));
  writeFileSync(join(d, 'settings.yaml'), 'title: x\nsecret_token: sk-walk-inside-0123456789\n');
  spawnSync('mkfifo', [join(d, 'pipe.yaml')]);
  const v = rg('validate', d);
  noStack(v.err);
  assert.match(v.err, /warning: .*sets: skipped 3 entries: 2 symbolic links leading outside the golden folder \(keys\.yaml -> .*secret\.txt, passwd\.json -> \/etc\/passwd\); 1 special file \(pipe\.yaml: fifo\)/);
  assert.match(v.out, /settings\.yaml:1 \(file\) root: got a mapping of 2 keys, expected a list of queries/);
  assert.match(v.out, /ok\.yaml: ok/);
  for (const s of [v.out, v.err]) assert.doesNotMatch(s, /sk-walk|root:x:0/, 'nothing of a file that is not a golden set is quoted');
  assert.equal(v.code, 2);
  for (const cmd of ['validate', 'stats']) {
    const f = rg(cmd, join(d, 'pipe.yaml'));
    assert.equal(f.code, 2, f.err);
    assert.match(f.out + f.err, /pipe\.yaml \(file\) format: a fifo, not a golden set: expected a file or a folder/);
  }
});
