/**
 * A team's first pull requests with the gate, in a temp repository from `rankgate init` (the help-centre corpus and
 * golden set of test/cli/fixtures/helpdesk; rankgate linked into node_modules, as an install would put it):
 * (a) a PR that edits one document is compared on the shared queries with a LOUD list of the changed documents (the
 *     hook of `promptfoo eval`, `rankgate gate` and the PR comment); a PR that removes a document the golden set
 *     expects errors that one query (FILE:LINE, advice: the golden set or the document's path), the others are
 *     measured and compared, and nothing unmeasured is drawn as a drop;
 * (b) an HTTP service returning slugs where the golden set says paths: exit 2 with the two ids side by side, never a
 *     floor failure.
 * The transcripts are printed (`# transcript`) for the note.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join, sep } from 'node:path';
import { FIXTURES, ROOT, RANKGATE_BIN, helpdeskFiles, removeDir, run, tempDir } from './helpers.ts';
import { PROMPTFOO_BIN } from '../harness/helpers.ts';

const PF_ENV = {
  PROMPTFOO_DISABLE_TELEMETRY: '1',
  PROMPTFOO_DISABLE_UPDATE: '1',
  PROMPTFOO_DISABLE_SHARING: '1',
  PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
  PROMPTFOO_DISABLE_DEBUG_LOG: '1',
  NODE_OPTIONS: '--disable-warning=ExperimentalWarning',
};

/** A team repository with rankgate in node_modules (a link to this checkout) and the help-centre files. */
function teamRepo(tmp: string): string {
  const repo = join(tmp, 'helpdesk');
  mkdirSync(join(repo, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(repo, 'node_modules', 'rankgate'));
  writeFileSync(join(repo, 'package.json'), JSON.stringify({ name: 'helpdesk', private: true }) + '\n');
  helpdeskFiles(repo);
  return repo;
}

const rankgate = (repo: string, args: string[], env: Record<string, string>) => run(process.execPath, [RANKGATE_BIN, ...args], { cwd: repo, env });
const promptfoo = (repo: string, out: string, env: Record<string, string>) =>
  run(process.execPath, [PROMPTFOO_BIN, 'eval', '-o', out, '--no-cache', '--no-table', '--no-progress-bar'], { cwd: repo, env: { ...PF_ENV, ...env }, timeoutMs: 300_000 });

/** The verdict block of a command's output (from the gate's headline on). */
const verdict = (text: string) => {
  const heads = [...text.matchAll(/^rankgate gate (PASSED|FAILED|ERROR)/gm)];
  return heads.length ? text.slice(heads[heads.length - 1]!.index).trimEnd() : text.trimEnd();
};

test('(a) a PR that edits one document: compared on the shared queries, the changed document and its queries LOUD; a removed expected document errors its one query, the others compared, no drop drawn', async () => {
  const tmp = tempDir('team-pr');
  try {
    const repo = teamRepo(tmp);
    const env = { PROMPTFOO_CONFIG_DIR: join(tmp, 'promptfoo-home') };
    const init = await rankgate(repo, ['init', '--golden', 'eval/golden.yaml', '--corpus', 'help'], env);
    assert.equal(init.code, 0, init.stderr + init.stdout);

    const base = await promptfoo(repo, 'base.json', env);
    assert.equal(base.code, 0, base.stderr.slice(-3000));
    const upd = await rankgate(repo, ['gate', 'base.json', '--update-baseline'], env);
    assert.equal(upd.code, 0, upd.stderr + upd.stdout);
    assert.match(upd.stdout, /baseline written: config\/search-baseline\.json \(16 queries, .*corpus help with 14 document hashes\)/);

    // the PR: one sentence of one article
    const doc = join(repo, 'help', 'account', 'reset-password.md');
    writeFileSync(doc, readFileSync(doc, 'utf8').replace('The link works for 30 minutes and only once.', 'The link works for one hour and only once.'));
    const pr = await promptfoo(repo, 'pr.json', env);
    const prVerdict = verdict(pr.stderr);
    console.log(`# transcript (a): npx promptfoo eval after editing help/account/reset-password.md (exit ${pr.code})\n${prVerdict}`);
    assert.ok(pr.code === 0 || pr.code === 1, `compared, not refused: exit ${pr.code}\n${pr.stderr.slice(-3000)}`);
    assert.doesNotMatch(pr.stderr, /another corpus|comparison is meaningless/);
    assert.match(prVerdict, /note: LOUD: corpus help changed since the baseline config\/search-baseline\.json \(corpus \w{12} -> \w{12}\): compared per query on the 16 shared queries; documents: 1 changed, 0 added, 0 removed/);
    assert.match(prVerdict, /note: LOUD: documents changed: account\/reset-password\.md$/m);
    assert.match(prVerdict, /note: LOUD: golden queries whose expected documents changed: pw-email-missing \(account\/reset-password\.md\), pw-forgot \(account\/reset-password\.md\)$/m);
    assert.match(prVerdict, /regression check .* on 16 shared queries/);

    const gate = await rankgate(repo, ['gate', 'pr.json', '--comment', 'comment.md'], env);
    assert.equal(gate.code, pr.code, gate.stderr + gate.stdout);
    assert.match(gate.stdout + gate.stderr, /LOUD: documents changed: account\/reset-password\.md/);
    const comment = readFileSync(join(repo, 'comment.md'), 'utf8');
    assert.match(comment, /The corpus `help` changed since the baseline/);
    assert.match(comment, /- changed \(1\): `account\/reset-password\.md`/);
    assert.match(comment, /golden queries whose expected documents changed \(2\): `pw-email-missing` \(account\/reset-password\.md\), `pw-forgot`/);

    // a document the golden set expects is removed from the corpus: that one query errors (advice: the golden set or
    // the document's path), the 15 others are measured and compared; nothing unmeasured is drawn as a drop
    rmSync(join(repo, 'help', 'account', 'invite-teammates.md'));
    const gone = await promptfoo(repo, 'gone.json', env);
    const goneVerdict = verdict(gone.stderr);
    console.log(`# transcript (a'): npx promptfoo eval after removing help/account/invite-teammates.md (exit ${gone.code})\n${goneVerdict}`);
    assert.equal(gone.code, 2, gone.stderr.slice(-3000));
    assert.match(gone.stderr, /: eval\/golden\.yaml:27 \(add-member\) expected path: no document of corpus help \(13 documents\) has path \(or id\) "account\/invite-teammates\.md"/);
    assert.match(goneVerdict, /1 of 16 queries errored: 1× golden set: an expected document is not in the corpus \(nothing measured for this query\)/);
    assert.match(goneVerdict, /update the golden set \(the query's expected document\), or the document's path in the corpus/);
    assert.doesNotMatch(goneVerdict, /fix the service/);
    assert.match(goneVerdict, /regression check .* on 16 shared queries/);
    assert.match(goneVerdict, /1 errored queries left out of the regression check/);
    const goneGate = await rankgate(repo, ['gate', 'gone.json', '--comment', 'gone.md'], env);
    console.log(`# transcript (a''): npx rankgate gate gone.json (exit ${goneGate.code})\n${goneGate.stdout.trimEnd()}\n${goneGate.stderr.trimEnd()}`);
    assert.equal(goneGate.code, 2, goneGate.stdout + goneGate.stderr);
    const goneOut = goneGate.stdout + readFileSync(join(repo, 'gone.md'), 'utf8');
    assert.match(goneOut, /on the 15 queries measured: overall Success@3/);
    assert.match(goneOut, /\*\*1 of 16 queries errored\*\*: 1× golden set: an expected document is not in the corpus .*\(left out of the comparison/);
    assert.match(goneOut, /\*\*0 regressed, 0 improved\*\*, 15 unchanged\./, 'the errored query is in no regressed or improved list');
    assert.doesNotMatch(goneOut, /▼/, 'no drop drawn');
  } finally {
    removeDir(tmp);
  }
});

test('(b) a service returning slugs where the golden set says paths: exit 2 with one golden id and one returned id side by side', async () => {
  const tmp = tempDir('team-ids');
  // the team's service: word overlap over the help articles, naming each by its slug (file name without .md)
  const docs = readdirSync(join(FIXTURES, 'helpdesk', 'help'), { recursive: true, encoding: 'utf8' })
    .filter((p) => p.endsWith('.md'))
    .map((p) => ({ slug: basename(p, '.md'), text: readFileSync(join(FIXTURES, 'helpdesk', 'help', p.split('/').join(sep)), 'utf8') }));
  const words = (t: string) => new Set(t.toLowerCase().match(/[a-z0-9]{3,}/g) ?? []);
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const { query, limit } = JSON.parse(body) as { query: string; limit?: number };
      const q = words(query);
      const results = docs
        .map((d) => ({ d, score: [...words(d.text)].filter((w) => q.has(w)).length }))
        .sort((a, b) => b.score - a.score || a.d.slug.localeCompare(b.d.slug))
        .slice(0, limit ?? 10)
        .map(({ d, score }, i) => ({ chunk_id: `${d.slug}-0`, document_id: d.slug, content: d.text.slice(0, 300), score, rank: i + 1 }));
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ results }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/search`;
  try {
    const repo = teamRepo(tmp);
    const env = { PROMPTFOO_CONFIG_DIR: join(tmp, 'promptfoo-home') };
    const init = await rankgate(repo, ['init', '--golden', 'eval/golden.yaml', '--url', url], env);
    assert.equal(init.code, 0, init.stderr + init.stdout);
    const ev = await promptfoo(repo, 'results.json', env);
    const v = verdict(ev.stderr);
    console.log(`# transcript (b): npx promptfoo eval against a slug-returning service (exit ${ev.code})\n${v}`);
    assert.equal(ev.code, 2, ev.stderr.slice(-3000));
    assert.match(v, /✗ ids: no expected id of any of the 16 queries with results appears in their results: the golden set names documents by paths, the service by names; nothing was measured/);
    assert.match(v, /golden set {2}path {9}(\S+\.md) +\(query \S+\)\n {4}service {5}document_id {2}(\S+) +\(rank \d+, the same document by its name\?\)/);
    assert.match(v, /docs\/adopting\.md, section "How returned ids are matched to the golden set"/);
    assert.doesNotMatch(ev.stderr, /below the floor/);
    const gate = await rankgate(repo, ['gate', 'results.json'], env);
    assert.equal(gate.code, 2, gate.stdout + gate.stderr);
    assert.match(gate.stderr, /✗ ids: no expected id/);
  } finally {
    server.close();
    removeDir(tmp);
  }
});
