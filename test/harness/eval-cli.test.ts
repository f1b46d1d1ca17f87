/**
 * `rankgate eval` (npm run eval:search): runs promptfoo on a config and writes the DES-058 report JSON and the
 * Markdown summary under --out-dir, exit code from the gate. Uses the harness fixture config (module: service).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE, rankgate, tempDir } from './helpers.ts';
import { closedPort, writeGateConfig } from '../gate/helpers.ts';

describe('rankgate eval', () => {
  const dir = tempDir('eval-cli');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes eval-{lang}-{timestamp}.json (+ .md, + promptfoo results) and exits 1 on a failed gate', async () => {
    const out = join(dir, 'results');
    const env = { PROMPTFOO_CONFIG_DIR: join(dir, 'pf'), PROMPTFOO_DISABLE_DEBUG_LOG: '1' };
    const r = await rankgate(['eval', '--config', join(FIXTURE, 'promptfooconfig.yaml'), '--out-dir', out, '--verbose'], env);
    assert.equal(r.code, 1, r.stderr.slice(-2000));
    const files = readdirSync(out).sort();
    assert.equal(files.length, 4);
    assert.match(files[0]!, /^eval-en-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.json$/);
    assert.match(files[1]!, /^eval-en-.*\.md$/);
    assert.match(files[2]!, /^eval-en-.*\.promptfoo\.json$/);
    assert.match(files[3]!, /^eval-en-.*\.promptfoo\.json\.rankgate\.jsonl$/, "the afterAll hook's re-gate record beside promptfoo's output");
    const rep = JSON.parse(readFileSync(join(out, files[0]!), 'utf8'));
    assert.equal(rep.language, 'en');
    assert.equal(rep.total_queries, 10);
    assert.equal(rep.overall_recall_at_3, 0.5);
    assert.equal(rep.gate_passed, false);
    assert.equal(rep.queries.length, 10, '--verbose adds per-query detail');
    assert.match(r.stdout, /fx-conceptual-001\s+conceptual\s+Success@3 0\s+MRR 0\s+rank -\s+first_stage_top10_miss/);
    assert.match(readFileSync(join(out, files[1]!), 'utf8'), /^# Search quality: fixture-hybrid/);

    const floors = join(dir, 'floors.yaml');
    writeFileSync(floors, 'overall: { recall_at_3: 0.5 }\n');
    const ok = await rankgate(['eval', '--config', join(FIXTURE, 'promptfooconfig.yaml'), '--out-dir', out, '--floors', floors], env);
    assert.equal(ok.code, 0, ok.stderr.slice(-2000));
  });

  it('exits 2 when the service is down (errored queries are not a quality result), the verdict printed last', async () => {
    const cfg = writeGateConfig(dir, 'dead', { label: 'dead-url', provider: { url: `http://127.0.0.1:${await closedPort()}/api/v1/search`, preflight: false } });
    const env = { PROMPTFOO_CONFIG_DIR: join(dir, 'pf-dead'), PROMPTFOO_DISABLE_DEBUG_LOG: '1' };
    const r = await rankgate(['eval', '--config', cfg, '--out-dir', join(dir, 'dead')], env);
    assert.equal(r.code, 2, r.stderr.slice(-2000));
    const last = r.stderr.trimEnd().split('\n');
    const head = last.reduce((at, l, i) => (l.startsWith('rankgate gate ERROR (exit 2)') ? i : at), -1);
    assert.ok(head >= 0 && last.slice(head + 1).every((l) => l.startsWith('  ')), r.stderr.slice(-1500));
    assert.match(last.slice(head).join('\n'), /10 of 10 queries errored: \d+× search failed: .*connection refused/);
    const md = readdirSync(join(dir, 'dead')).find((f) => f.endsWith('.md'))!;
    assert.match(readFileSync(join(dir, 'dead', md), 'utf8'), /\*\*10 of 10 queries errored\*\*/);
  });

  it('rejects bad flags with exit 2 before running anything', async () => {
    const r = await rankgate(['eval', '--lang', 'english']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--lang: expected en, es, hi \(a comma list\) or all, got 'english'/);
    const c = await rankgate(['eval', '--config', join(dir, 'missing.yaml')]);
    assert.equal(c.code, 2);
    assert.match(c.stderr, /missing\.yaml: no such promptfoo config/);
    const j = await rankgate(['eval', '--judge', 'gpt']);
    assert.equal(j.code, 2);
    assert.match(j.stderr, /judge mode "gpt" \(--judge\): expected one of bedrock, similarity, off, auto, or a promptfoo chat provider id/);
    const x = await rankgate(['eval', '--expansion', 'rm4']);
    assert.equal(x.code, 2);
    assert.match(x.stderr, /RANKGATE_EXPANSION \(--expansion\): unknown expansion 'rm4': expected one of golden, golden-append, rm3, rewrites, hyde, off/);
    assert.doesNotMatch(x.stderr, /\n\s+at /, 'no stack trace');
    const xp = await rankgate(['eval', '--expansion-provider', 'openai:chat:m']);
    assert.equal(xp.code, 2);
    assert.match(xp.stderr, /--expansion-provider: says which model writes the expansions of --expansion rewrites or --expansion hyde/);
    const u = await rankgate(['eval', '--allow-partal']);
    assert.equal(u.code, 2);
    assert.match(u.stderr, /unknown option '--allow-partal'; did you mean '--allow-partial'\?/);
    const h = await rankgate(['eval', '--help']);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /exit codes: 0 every floor and the regression check pass; 1 a quality floor or a significant regression fails;/);
    assert.doesNotMatch(j.stderr, /\n\s+at /, 'no stack trace');
  });
});
