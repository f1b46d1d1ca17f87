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

  it('rows are compact: no content below the top 5 unless a reference matches it, the shown text above, no candidates on a found query', async () => {
    const r = await defaultEvalRun();
    const rows = JSON.parse(readFileSync(r.results, 'utf8')).results.results as any[];
    assert.ok(rows.length > 0);
    for (const row of rows) {
      const h = row.response.metadata.harness;
      assert.ok(Array.isArray(h.integrity), `${row.testCase.metadata.id}: integrity computed before compaction`);
      assert.deepEqual(h.textKept, { hits: 5, chars: 300 }, 'the rule the row was compacted with (the blind review reads it)');
      for (const hit of h.hits.filter((x: { rank: number }) => x.rank <= 5)) assert.ok(hit.content.length > 0, 'text at every rank the review shows');
      for (const hit of h.hits.filter((x: { rank: number }) => x.rank > 5)) {
        if (hit.content) assert.ok(row.testCase.metadata.golden.expected.length > 0, 'content below the top 5 only for a matching hit');
        else assert.deepEqual(Object.keys(hit).sort(), ['chunkId', 'content', 'documentId', 'rank', 'score'].concat(hit.path !== undefined ? ['path'] : []).sort());
      }
    }
    const harnessBytes = rows.reduce((a, x) => a + Buffer.byteLength(JSON.stringify(x.response.metadata.harness, null, 2)), 0) / rows.length;
    assert.ok(harnessBytes < 6000, `metadata.harness ${Math.round(harnessBytes)} B a row pretty-printed (was ~18,600 B before compaction)`);
  });

  it('the hook wrote results.json.rankgate.jsonl beside results.json, and `rankgate gate` re-gates it to the same verdict', async () => {
    const r = await defaultEvalRun();
    const record = `${r.results}.rankgate.jsonl`;
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

describe("evidence that cannot be re-assembled: the run id on every row, the record's row count and digest", () => {
  const dir = tempDir('evidence');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('every row carries the run id of the record; picked rows of two runs, edited rows and a missing record are said', async () => {
    const r = await defaultEvalRun();
    const record = `${r.results}.rankgate.jsonl`;
    const header = JSON.parse(readFileSync(record, 'utf8').split('\n')[0]!).rankgate_regate;
    const rows = JSON.parse(readFileSync(r.results, 'utf8')).results.results as any[];
    assert.match(header.runId, /^[0-9a-f-]{36}$/);
    assert.equal(header.rows, rows.length);
    assert.match(header.digest, /^[0-9a-f]{64}$/);
    for (const row of rows) assert.equal(row.response.metadata.rankgateRun, header.runId, `${row.testCase.metadata.id}: the run id`);
    const floors = join(r.work, 'config', 'gate.yaml');
    // a copy of the record for a copy of the results (the record names its output file)
    const copyRecord = (name: string) => {
      const [h, ...rest] = readFileSync(record, 'utf8').split('\n');
      const o = JSON.parse(h!);
      o.rankgate_regate.output = join(dir, name);
      writeFileSync(join(dir, `${name}.rankgate.jsonl`), [JSON.stringify(o), ...rest].join('\n'));
    };
    // the eval's own JSON and its rows as JSONL beside a copy of the record: the rows match it, nothing said
    const jsonl = join(dir, 'run.jsonl');
    writeFileSync(jsonl, rows.map((x) => JSON.stringify(x)).join('\n') + '\n');
    copyRecord('run.jsonl');
    const [own, asJsonl] = await Promise.all([rankgate(['gate', r.results, '--floors', floors]), rankgate(['gate', jsonl, '--floors', floors])]);
    assert.equal(own.code, r.code, own.stdout + own.stderr);
    assert.equal(asJsonl.code, r.code, asJsonl.stdout + asJsonl.stderr);
    assert.doesNotMatch(own.stdout + asJsonl.stdout, /LOUD: no record/);
    // the better of two runs, picked per query: the rows of another run are refused (exit 2), with or without a record
    const other = '00000000-0000-4000-8000-000000000002';
    const picked = rows.map((x, i) => (i % 2 ? { ...x, response: { ...x.response, metadata: { ...x.response.metadata, rankgateRun: other } } } : x));
    const pickedFile = join(dir, 'picked.jsonl');
    writeFileSync(pickedFile, picked.map((x) => JSON.stringify(x)).join('\n') + '\n');
    const p1 = await rankgate(['gate', pickedFile, '--floors', floors]);
    assert.equal(p1.code, 2, p1.stdout + p1.stderr);
    assert.match(p1.stderr, /picked\.jsonl: its rows come from 2 different eval runs/);
    copyRecord('picked.jsonl');
    const p2 = await rankgate(['gate', pickedFile, '--floors', floors]);
    assert.equal(p2.code, 2, p2.stdout + p2.stderr);
    assert.match(p2.stderr, /its rows come from 2 different eval runs .*its record .* from one/);
    // one row dropped (or edited) under the eval's own record: the rows do not match it
    const edited = join(dir, 'edited.jsonl');
    writeFileSync(edited, rows.slice(1).map((x) => JSON.stringify(x)).join('\n') + '\n');
    copyRecord('edited.jsonl');
    const e = await rankgate(['gate', edited, '--floors', floors]);
    assert.equal(e.code, 2, e.stdout + e.stderr);
    assert.match(e.stderr, new RegExp(`edited\\.jsonl: its ${rows.length - 1} rows do not match the record .*\\(${rows.length} rows, digest [0-9a-f]{12}; the file's [0-9a-f]{12}\\): rows were added, removed or edited after the eval`));
    // no record beside: gated, and said LOUD at the top of the verdict
    const bare = join(dir, 'bare.jsonl');
    writeFileSync(bare, readFileSync(jsonl));
    const b = await rankgate(['gate', bare, '--floors', floors]);
    assert.equal(b.code, r.code, b.stdout + b.stderr);
    assert.match(b.stdout, /LOUD: no record of this eval beside .*bare\.jsonl/);
    assert.match(b.stdout + b.stderr, /note: LOUD: no record of this eval/);
    // rankgate merge checks each shard against its record and writes its own record, which the gate trusts
    const merged = join(dir, 'merged.jsonl');
    const m = await rankgate(['merge', merged, jsonl]);
    assert.equal(m.code, 0, m.stdout + m.stderr);
    assert.ok(existsSync(join(dir, 'merged.jsonl.rankgate.jsonl')));
    const g = await rankgate(['gate', merged, '--floors', floors]);
    assert.equal(g.code, r.code, g.stdout + g.stderr);
    assert.doesNotMatch(g.stdout, /LOUD: no record/);
    const bad = await rankgate(['merge', join(dir, 'merged2.jsonl'), pickedFile]);
    assert.equal(bad.code, 2, bad.stdout + bad.stderr);
    assert.match(bad.stderr, /different eval runs/);
  });
});

describe('an eval whose output promptfoo cannot write', () => {
  const dir = tempDir('unwritable');
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('ends with the verdict and the command to re-gate from the record, which gives the same verdict', async () => {
    const out = join(dir, 'results.json');
    mkdirSync(out); // promptfoo's write fails (EISDIR) after the afterAll hook has gated
    const r = await promptfooEval(join(FIXTURE, 'promptfooconfig.yaml'), out);
    const record = join(dir, 'results.json.rankgate.jsonl');
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
