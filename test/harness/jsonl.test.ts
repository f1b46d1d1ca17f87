/**
 * Evals of any size: the shared default eval's rows are compact (src/results/compact.ts) and its afterAll hook left a
 * re-gate record beside the output that `rankgate gate` re-gates to the same verdict; the same rows as JSONL gate like
 * the JSON; and one real eval whose --output promptfoo cannot write (the path is a directory) ends with the hook's
 * verdict and the command to re-gate from the record.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE, defaultEvalRun, promptfooEval, rankgate, tempDir } from './helpers.ts';

/** The verdict line the hook and `rankgate gate` print: `rankgate gate FAILED (exit 1) for 'label': N queries · Recall@3 x · MRR@10 y`. */
const verdictOf = (text: string) => text.match(/rankgate gate (PASSED|FAILED|ERROR) \(exit \d\)[^\n]*/)?.[0];

describe('JSONL and the re-gate record on the default eval', () => {
  const dir = tempDir('jsonl');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('rows are compact: no content below the top 3 unless a reference matches it, no candidates on a found query', async () => {
    const r = await defaultEvalRun();
    const rows = JSON.parse(readFileSync(r.results, 'utf8')).results.results as any[];
    assert.ok(rows.length > 0);
    for (const row of rows) {
      const h = row.response.metadata.harness;
      assert.ok(Array.isArray(h.integrity), `${row.testCase.metadata.id}: integrity computed before compaction`);
      for (const hit of h.hits.filter((x: { rank: number }) => x.rank > 3)) {
        if (hit.content) assert.ok(row.testCase.metadata.golden.expected.length > 0, 'content below the top 3 only for a matching hit');
        else assert.deepEqual(Object.keys(hit).sort(), ['chunkId', 'content', 'documentId', 'rank', 'score'].concat(hit.path !== undefined ? ['path'] : []).sort());
      }
    }
    const harnessBytes = rows.reduce((a, x) => a + Buffer.byteLength(JSON.stringify(x.response.metadata.harness, null, 2)), 0) / rows.length;
    assert.ok(harnessBytes < 6000, `metadata.harness ${Math.round(harnessBytes)} B a row pretty-printed (was ~18,600 B before compaction)`);
  });

  it('the hook wrote results.rankgate.jsonl beside results.json, and `rankgate gate` re-gates it to the same verdict', async () => {
    const r = await defaultEvalRun();
    const record = r.results.replace(/\.json$/, '.rankgate.jsonl');
    assert.ok(existsSync(record), record);
    const header = JSON.parse(readFileSync(record, 'utf8').split('\n')[0]!).rankgate_regate;
    assert.equal(header.code, r.code);
    assert.equal(verdictOf(header.verdict.join('\n')), verdictOf(r.output));
    const g = await rankgate(['gate', record, '--floors', join(r.work, 'config', 'gate.yaml')]);
    assert.equal(g.code, r.code, g.stdout + g.stderr);
    assert.equal(verdictOf(g.stdout + g.stderr), verdictOf(r.output));
    assert.match(g.stdout, /re-gating from the eval's own record/);
  });

  it('the same rows as JSONL (what --output results.jsonl writes) gate to the same verdict as the JSON', async () => {
    const r = await defaultEvalRun();
    const rows = JSON.parse(readFileSync(r.results, 'utf8')).results.results as unknown[];
    const jsonl = join(dir, 'results.jsonl');
    writeFileSync(jsonl, rows.map((x) => JSON.stringify(x)).join('\n') + '\n');
    const floors = join(r.work, 'config', 'gate.yaml');
    const [a, b] = await Promise.all([rankgate(['gate', r.results, '--floors', floors]), rankgate(['gate', jsonl, '--floors', floors])]);
    assert.equal(b.code, a.code, b.stdout + b.stderr);
    assert.equal(verdictOf(b.stdout + b.stderr), verdictOf(a.stdout + a.stderr));
    assert.match(b.stdout, /JSONL results \(promptfoo writes rows only\)/);
    const rep = await rankgate(['report', jsonl, '--html', join(dir, 'report.html')]);
    assert.equal(rep.code, 0, rep.stderr);
    assert.ok(readFileSync(join(dir, 'report.html'), 'utf8').length > 1000);
  });
});

describe('an eval whose output promptfoo cannot write', () => {
  const dir = tempDir('unwritable');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('ends with the verdict and the command to re-gate from the record, which gives the same verdict', async () => {
    const out = join(dir, 'results.json');
    mkdirSync(out); // promptfoo's write fails (EISDIR) after the afterAll hook has gated
    const r = await promptfooEval(join(FIXTURE, 'promptfooconfig.yaml'), out);
    const record = join(dir, 'results.rankgate.jsonl');
    assert.notEqual(r.code, 0, r.stderr);
    assert.ok(r.stderr.includes(`promptfoo did not write ${out}; this eval's verdict and per-query scores are in ${record}: re-gate with \`npx rankgate gate ${record}\``), r.stderr.slice(-2000));
    const g = await rankgate(['gate', record]);
    assert.equal(verdictOf(g.stdout + g.stderr), verdictOf(r.stderr));
    assert.ok(verdictOf(r.stderr));
  });
});
