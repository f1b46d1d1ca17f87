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
import { FIXTURE, ROOT, defaultEvalRun, promptfooEval, rankgate, tempDir } from './helpers.ts';

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

describe("the afterEach hook's grading compaction (src/results/compact.ts compactGrading)", () => {
  const dir = tempDir('grading');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('drops the copies of the named scores in the grading result, and every column sum promptfoo adds stays the same', async () => {
    // the fixture config (three assertions a row) with absolute paths, once with the afterEach hook and once without
    const yaml = readFileSync(join(FIXTURE, 'promptfooconfig.yaml'), 'utf8')
      .replaceAll('file://../../../', `file://${ROOT}/`)
      .replace('module: ./fixture-service.ts', `module: ${join(FIXTURE, 'fixture-service.ts')}`)
      .replace('tests: file://tests.ts', `tests: file://${join(FIXTURE, 'tests.ts')}`);
    const withHook = join(dir, 'with.yaml');
    const without = join(dir, 'without.yaml');
    writeFileSync(withHook, yaml);
    writeFileSync(without, yaml.replace(/^.*assertions\/gate\.ts:afterEach\n/m, ''));
    assert.notEqual(readFileSync(without, 'utf8'), yaml, 'the hook line was removed');
    const env = { RANKGATE_GATE: 'off' };
    const [a, b] = await Promise.all([promptfooEval(withHook, join(dir, 'with.json'), env), promptfooEval(without, join(dir, 'without.json'), env)]);
    assert.equal(a.code, 0, a.stderr.slice(-2000));
    assert.equal(b.code, 0, b.stderr.slice(-2000));
    const A = JSON.parse(readFileSync(join(dir, 'with.json'), 'utf8')).results;
    const B = JSON.parse(readFileSync(join(dir, 'without.json'), 'utf8')).results;
    // latency (promptfoo's total, the hook's p50/p95/mean) differs between any two runs, and promptfoo adds the rows in
    // the order they complete (the last bit of a sum, docs/scale.md); counts, weights and every other sum must not differ
    const noLatency = (o: Record<string, number> = {}) => Object.fromEntries(Object.entries(o).filter(([k]) => !k.includes('latency')));
    const metrics = (d: any) =>
      d.prompts.map((p: any) => ({ ...p.metrics, score: null, totalLatencyMs: 0, tokenUsage: null, namedScores: null, namedScoresCount: noLatency(p.metrics.namedScoresCount), namedScoreWeights: noLatency(p.metrics.namedScoreWeights) }));
    assert.deepEqual(metrics(A), metrics(B), 'namedScoresCount, namedScoreWeights and every count are the same');
    // sums (the column's score and each named score) within 1e-12 relative: their last bits follow the completion order
    const close = (x: number, y: number) => Math.abs(x - y) <= 1e-12 * Math.max(1, Math.abs(y));
    for (const [i, p] of (A.prompts as any[]).entries()) {
      assert.ok(close(p.metrics.score, B.prompts[i].metrics.score), `column ${i} score: ${p.metrics.score} with the hook, ${B.prompts[i].metrics.score} without`);
      const sa = noLatency(p.metrics.namedScores);
      const sb = noLatency(B.prompts[i].metrics.namedScores);
      assert.deepEqual(Object.keys(sa).sort(), Object.keys(sb).sort());
      for (const k of Object.keys(sa)) assert.ok(close(sa[k]!, sb[k]!), `column ${i} ${k}: ${sa[k]} with the hook, ${sb[k]} without`);
    }
    const byId = (d: any) => new Map(d.results.map((r: any) => [`${r.promptIdx}:${r.testCase.metadata.id}`, r]));
    const rowsB = byId(B);
    let dropped = 0;
    for (const [k, r] of byId(A) as Map<string, any>) {
      const o = rowsB.get(k) as any;
      assert.deepEqual(noLatency(r.namedScores), noLatency(o.namedScores), `${k}: the row's named scores`);
      assert.deepEqual(noLatency(r.gradingResult.namedScores), noLatency(o.gradingResult.namedScores), `${k}: the grading result's named scores`);
      assert.equal(r.gradingResult.componentResults.length, o.gradingResult.componentResults.length);
      for (const c of r.gradingResult.componentResults) assert.equal(c.namedScores, undefined, `${k}: ${c.assertion.value} keeps no copy`);
      assert.equal(r.gradingResult.namedScoreWeights, undefined, `${k}: no unit weights`);
      dropped += JSON.stringify(o.gradingResult).length - JSON.stringify(r.gradingResult).length;
    }
    assert.ok(dropped > 0);
    // and the gate reads both files to the same verdict
    const [ga, gb] = await Promise.all([rankgate(['gate', join(dir, 'with.json')]), rankgate(['gate', join(dir, 'without.json')])]);
    assert.equal(ga.code, gb.code, ga.stdout + gb.stdout);
    assert.equal(verdictOf(ga.stdout + ga.stderr), verdictOf(gb.stdout + gb.stderr));
    assert.ok(verdictOf(ga.stdout + ga.stderr));
  });
});
