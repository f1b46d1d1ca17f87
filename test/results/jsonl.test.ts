/**
 * JSONL results (promptfoo's `--output results.jsonl`: one row a line, no summary), read row by row through the same
 * parser as JSON; compact rows (src/results/compact.ts) re-score the same; the afterAll hook's re-gate file
 * (src/results/regate.ts) re-gates like the rows it came from. Rows built here; the real eval is test/harness/jsonl.test.ts.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { readLinesSync } from '../../src/util/lines.ts';
import { parseResultsObject } from '../../src/results/read.ts';
import { JSONL_LIMITS, readResultsFile, resultRows } from '../../src/results/stream.ts';
import { compactGrading, compactHarness, dedupeRowMetadata, shownText } from '../../src/results/compact.ts';
import { afterEach as afterEachHook } from '../../assertions/gate.ts';
import { compactRow, outputPathsOf, outputsOfRecord, regatePathFor, verifyEvidence, writeRegateFile } from '../../src/results/regate.ts';
import { digestRows } from '../../src/results/record.ts';
import { scoreRanking, checkIntegrity } from '../../src/results/score.ts';
import { PROMPTFOO_WRITE_KEY, noWriteInArgv, noWriteRefusal, promptfooWrites, rowsUnderNoWrite } from '../../src/results/nowrite.ts';
import { isUserError } from '../../src/errors.ts';
import { baselineFrom, identityMismatches } from '../../src/gate/baseline.ts';
import { buildReport } from '../../src/results/summary.ts';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';
import { selectionIdentity } from '../../src/golden/testcases.ts';
import { shardOf } from '../../src/golden/promptfoo.ts';
import type { HarnessOutput } from '../../src/results/types.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const SEL = { ...selectionIdentity(['q1', 'q2', 'q3', 'q4'].map((id) => ({ id }))), files: ['datasets/golden/x.json'] };
const LONG = 'Calm is a lamp that burns steadily when the mind is still and the breath is slow. '.repeat(20).trim();

function golden(id: string) {
  return GoldenQuerySchema.parse({
    id,
    query: `query ${id}`,
    language: 'en',
    category: id === 'q4' ? 'practice' : 'direct',
    // q1, q2: a chunk reference; q3, q4: a passage substring without resolution (matched on content)
    expected: id === 'q1' || id === 'q2' ? [{ chunk_id: `${id}-hit-2`, grade: 3, relevant: true }] : [{ passage_substring: `needle of ${id}`, grade: 2, relevant: true }],
    expected_routing: 'search',
  });
}

function harness(id: string): HarnessOutput {
  const hits = Array.from({ length: 10 }, (_, i) => ({
    rank: i + 1,
    chunkId: `${id}-hit-${i + 1}`,
    documentId: `doc-${i}`,
    score: 1 - i / 10,
    // q3's needle sits at rank 4 (beyond the snippets), q4's nowhere; rank 5 of every row stops mid-sentence
    content: (i === 3 && id === 'q3' ? `${LONG} the needle of ${id} is here.` : LONG) + (i === 4 ? ' and then' : ''),
    channels: {},
  }));
  return { ids: hits.map((h) => h.chunkId), hits, routing: { route: 'search', safety: false } as never, practice_bridge: false, safety: false, latencyMs: 5 };
}

function row(id: string, testIdx: number, promptIdx = 0) {
  const g = golden(id);
  const h = harness(id);
  const s = scoreRanking(g, h, { harness: h })!;
  return {
    promptIdx,
    testIdx,
    success: s.recall_at_3 > 0,
    latencyMs: 5,
    provider: { id: 'file://providers/search.ts', label: promptIdx ? 'col-b' : 'col-a' },
    namedScores: { n_ranked: 1, recall_at_3: s.recall_at_3, routing_ok: 1 },
    gradingResult: { pass: true, componentResults: [{ pass: true, reason: 'ok', assertion: { value: 'file://assertions/rank.ts' } }] },
    testCase: { vars: { query: g.query }, metadata: { id, golden: g, selection: SEL } },
    response: { output: 'readable text', metadata: { harness: h, diagnostics: null, rankgate: '0.1.0' } },
  };
}

const IDS = ['q1', 'q2', 'q3', 'q4'];
const ROWS = [...IDS.map((id, i) => row(id, i, 0)), ...IDS.map((id, i) => row(id, i, 1))];

function jsonDoc(rows: ReturnType<typeof row>[]) {
  const cols = ['col-a', 'col-b'].map((label, pi) => {
    const mine = rows.filter((r) => r.promptIdx === pi);
    const sum = (k: 'n_ranked' | 'recall_at_3' | 'routing_ok') => mine.reduce((a, r) => a + r.namedScores[k], 0);
    const pass = mine.filter((r) => r.success).length;
    return { provider: label, label, metrics: { namedScores: { n_ranked: sum('n_ranked'), recall_at_3: sum('recall_at_3'), routing_ok: sum('routing_ok') }, testPassCount: pass, testFailCount: mine.length - pass, testErrorCount: 0 } };
  });
  return { evalId: 'eval-x', results: { timestamp: '2026-11-26T10:00:00.000Z', prompts: cols, results: rows } };
}

const summary = (p: ReturnType<typeof parseResultsObject>) =>
  p.columns.map((c) => ({ label: c.label, index: c.index, sel: c.selection, q: c.queries.map((q) => ({ id: q.id, r: q.retrieval, ro: q.routing, e: q.error, i: q.integrity, pass: q.promptfooPass })) }));

describe('JSONL results (src/results/stream.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-jsonl-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const jsonl = join(dir, 'results.jsonl');
  writeFileSync(jsonl, ROWS.map((r) => JSON.stringify(r)).join('\r\n') + '\r\n');

  it('reads lines in chunks: CRLF, a multi-byte character split across chunks, no final newline', () => {
    const f = join(dir, 'lines.txt');
    writeFileSync(f, 'één\r\nzwei€\n\nlast');
    for (const chunk of [1, 2, 3, 1 << 20]) assert.deepEqual([...readLinesSync(f, chunk)], ['één', 'zwei€', '', 'last'], `chunk ${chunk}`);
    // a line many chunks long (a topK-150 row is ~100 KB), a newline as a chunk's first or last byte, a stale newline
    // left in the reused chunk buffer past the bytes read
    const long = 'ä' + 'x'.repeat(5000) + '€';
    writeFileSync(f, `${long}\nab\n\n${long}`);
    for (const chunk of [3, 4, 7, 64, 5003]) assert.deepEqual([...readLinesSync(f, chunk)], [long, 'ab', '', long], `chunk ${chunk}`);
    writeFileSync(f, 'a\n\nbcdefg');
    assert.deepEqual([...readLinesSync(f, 4)], ['a', '', 'bcdefg']);
  });

  it('a JSONL file gives the same per-query records as the JSON document of the same rows, without the summary', () => {
    const fromJson = parseResultsObject(jsonDoc(ROWS), 'results.json');
    const fromJsonl = readResultsFile(jsonl);
    assert.equal(fromJsonl.format, 'jsonl');
    assert.deepEqual(summary(fromJsonl), summary(fromJson));
    assert.equal(fromJsonl.columns[0]!.counts, null, 'no counts in JSONL');
    assert.deepEqual(fromJsonl.columns[0]!.namedScores, {}, 'no column sums in JSONL');
    assert.equal(fromJsonl.columns[0]!.queries.find((q) => q.id === 'q3')!.retrieval!.best_rank, 4, 'the passage matched on content');
  });

  it('a JSONL baseline carries its provider config (the rows say it): no "another provider config" note on an unchanged re-run', () => {
    const cfg = { module: './search.ts', chunkSize: 300, databaseUrl: 'postgres://u:secret@db/x' };
    const carried = ROWS.map((r) => ({ ...r, response: { ...r.response, metadata: { ...r.response.metadata, providerConfig: cfg } } }));
    const f = join(dir, 'carried.jsonl');
    writeFileSync(f, carried.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const fromJsonl = readResultsFile(f).columns[0]!;
    assert.equal(fromJsonl.config.chunkSize, 300);
    assert.doesNotMatch(JSON.stringify(fromJsonl.config), /secret/, 'redacted');
    assert.equal(fromJsonl.configUnknown, undefined);
    const b = baselineFrom(fromJsonl, buildReport(fromJsonl));
    assert.equal(b.config.chunkSize, 300);
    assert.equal(b.config_recorded, undefined);
    // the same run again, as JSONL, as the eval's own JSON (config from the results' providers), and as the re-gate record
    const again = readResultsFile(f).columns[0]!;
    assert.deepEqual(identityMismatches(b, again, buildReport(again)), []);
    const doc = { ...jsonDoc(ROWS), config: { providers: [{ id: 'file://providers/search.ts', label: 'col-a', config: cfg }] } };
    const fromJson = parseResultsObject(doc, 'results.json').columns[0]!;
    assert.deepEqual(identityMismatches(b, fromJson, buildReport(fromJson)), []);
    const rg = join(dir, 'carried.rankgate.jsonl');
    writeRegateFile(rg, { evalId: 'eval-x', output: f, code: 0, verdict: [] }, carried);
    const regated = readResultsFile(rg).columns[0]!;
    assert.deepEqual(identityMismatches(b, regated, buildReport(regated)), []);
    // a setting that really differs is named, alone
    const changed = { ...fromJson, config: { ...fromJson.config, chunkSize: 500 } };
    assert.deepEqual(identityMismatches(b, changed, buildReport(changed)).map((m) => [m.field, m.baseline, m.run]), [['provider config', 'chunkSize=300', 'chunkSize=500']]);
    // rows that do not carry a config (an older rankgate): unknown, never "(none)"; a baseline of them records that
    const old = readResultsFile(jsonl).columns[0]!;
    assert.equal(old.configUnknown, true);
    const oldBase = baselineFrom(old, buildReport(old));
    assert.equal(oldBase.config_recorded, false);
    assert.deepEqual(identityMismatches(oldBase, fromJson, buildReport(fromJson)), []);
    assert.deepEqual(identityMismatches(b, old, buildReport(old)), []);
    // a baseline an older rankgate wrote from JSONL (provider and label only) has recorded no config either
    const legacy = { ...oldBase, config: { provider: 'file://providers/search.ts', label: 'col-a' } } as typeof oldBase;
    delete legacy.config_recorded;
    assert.deepEqual(identityMismatches(legacy, fromJson, buildReport(fromJson)), []);
  });

  it('JSON keeps its cross-checks through the row-at-a-time parser (a column sum that disagrees with its rows)', () => {
    const d = jsonDoc(ROWS);
    d.results.prompts[0]!.metrics.namedScores.n_ranked = 99;
    assert.throws(() => parseResultsObject(d, 'x.json'), /n_ranked = 99 but its rows sum to 4/);
  });

  it('a bad line is one error naming the file and the line; a file with no rows is refused', () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, JSON.stringify(ROWS[0]) + '\n{"promptIdx": 0, truncated\n');
    assert.throws(() => readResultsFile(bad), (e: Error) => isUserError(e) && /bad\.jsonl: line 2: not JSON/.test(e.message));
    const arr = join(dir, 'arr.jsonl');
    writeFileSync(arr, '[1, 2]\n');
    assert.throws(() => readResultsFile(arr), /arr\.jsonl: line 1: expected a promptfoo result row/);
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '\n');
    assert.throws(() => readResultsFile(empty), /empty\.jsonl: no result rows/);
    const dup = join(dir, 'dup.jsonl');
    writeFileSync(dup, [ROWS[0], ROWS[1], ROWS[0]].map((r) => JSON.stringify(r)).join('\n'));
    assert.throws(() => readResultsFile(dup), /query 'q1' appears twice in column 'col-a'/);
    assert.throws(() => readResultsFile(join(dir, 'missing.jsonl')), /missing\.jsonl: cannot read \(ENOENT\)/);
  });

  it('rankgate gate and judge-agreement rows read JSONL; the gate says which checks JSONL cannot have', () => {
    assert.equal([...resultRows(jsonl)].length, 8);
    const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'gate', jsonl, '--floors', join(dir, 'none.yaml'), '--allow-partial'], { encoding: 'utf8', cwd: dir });
    assert.match(r.stderr + r.stdout, /no such floors file/);
    const g = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'gate', jsonl, '--column', 'col-b'], { encoding: 'utf8', cwd: dir, env: { ...process.env, RANKGATE_ALLOW_PARTIAL: '1' } });
    assert.ok(g.stdout.includes(JSONL_LIMITS), g.stdout + g.stderr);
    assert.match(g.stdout, /col-b: 4 queries/);
  });

  it('rankgate merge: JSONL shards merge to JSONL rows (testIdx renumbered, full selection); JSON and JSONL not mixed', () => {
    const shard = (ids: string[], index: number) =>
      ids.map((id, i) => {
        const r = row(id, i, 0);
        return { ...r, testCase: { ...r.testCase, metadata: { ...r.testCase.metadata, selection: { ...SEL, shard: { index, count: 2 }, shardSize: 2 } } } };
      });
    const s1 = join(dir, 's1.jsonl');
    const s2 = join(dir, 's2.jsonl');
    // each query in the shard RANKGATE_SHARD puts it in (src/golden/promptfoo.ts shardOf)
    const part = (i: number) => IDS.filter((id) => shardOf(id, 2) === i);
    assert.ok(part(1).length && part(2).length, 'both shards hold queries');
    writeFileSync(s1, shard(part(1), 1).map((r) => JSON.stringify(r)).join('\n') + '\n');
    writeFileSync(s2, shard(part(2), 2).map((r) => JSON.stringify(r)).join('\n') + '\n');
    const out = join(dir, 'merged.jsonl');
    const m = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'merge', out, s2, s1], { encoding: 'utf8' });
    assert.equal(m.status, 0, m.stderr);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.testCase.metadata.id, l.testIdx]), [...part(1), ...part(2)].map((id, i) => [id, i]), 'shard order, testIdx renumbered');
    assert.deepEqual(lines[3].testCase.metadata.selection, SEL);
    assert.deepEqual(summary(readResultsFile(out)).map((c) => c.q.map((q) => q.r)), [IDS.map((id) => ROWS.find((r) => r.testCase.metadata.id === id)!).map((r) => parseResultsObject(jsonDoc(ROWS), 'x').columns[0]!.queries.find((q) => q.id === r.testCase.metadata.id)!.retrieval)]);
    const json = join(dir, 's3.json');
    writeFileSync(json, '{}');
    const mixed = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'merge', join(dir, 'm2.jsonl'), s1, json], { encoding: 'utf8' });
    assert.equal(mixed.status, 2);
    assert.match(mixed.stderr, /s3\.json: is JSON but .*s1\.jsonl is JSONL/);
    const incomplete = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'merge', join(dir, 'm3.jsonl'), s1], { encoding: 'utf8' });
    assert.equal(incomplete.status, 2);
    assert.match(incomplete.stderr, /missing shard 2\/2/);
  });
});

describe('compact rows (src/results/compact.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-compact-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const writeRows = (name: string, rows: unknown[]) => {
    const f = join(dir, name);
    writeFileSync(f, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    return f;
  };
  const jsonl = writeRows('results.jsonl', ROWS);
  it('keeps full content where a reader needs it, the shown text for the rest of the top 5, none below; scores and integrity unchanged', () => {
    for (const id of IDS) {
      const g = golden(id);
      const h = harness(id);
      const c = compactHarness(h, g, { harness: h });
      assert.deepEqual(scoreRanking(g, c, { harness: c }), scoreRanking(g, h, { harness: h }), id);
      assert.deepEqual(checkIntegrity(c), checkIntegrity(h), `${id}: integrity computed before compaction`);
      assert.deepEqual(checkIntegrity(c, 3), checkIntegrity(h, 3));
      assert.ok(c.hits[0]!.content.length <= 300 && c.hits[0]!.content.length > 200, `${id}: a snippet at rank 1`);
      assert.equal(c.hits[4]!.content, shownText(harness(id).hits[4]!.content), `${id}: the review's shown text at rank 5`);
      assert.equal(c.hits[5]!.content, '', `${id}: nothing at rank 6`);
      assert.deepEqual(c.textKept, { hits: 5, chars: 300 }, `${id}: the rule the row was compacted with`);
    }
    const q3 = compactHarness(harness('q3'), golden('q3'), {});
    assert.equal(q3.hits[3]!.content, harness('q3').hits[3]!.content, 'the hit matching the passage keeps its content');
    const q1 = compactHarness(harness('q1'), golden('q1'), {});
    assert.equal(q1.hits[1]!.content, LONG, 'the hit matching the chunk reference keeps its content (judge agreement)');
    const judged = compactHarness(harness('q4'), golden('q4'), {}, { judged: true });
    assert.ok(judged.hits.every((h) => h.content.length >= LONG.length), 'a judged row keeps the top 10');
    assert.ok(Buffer.byteLength(JSON.stringify(q1, null, 2)) < Buffer.byteLength(JSON.stringify(harness('q1'), null, 2)) / 3);
  });

  it('no hit keeps its channel ranks; a top-5 snippet keeps only what the readers take (rank, ids, score, content, path, title, heading)', () => {
    const h = harness('q1');
    h.hits = h.hits.map((x, i) => ({ ...x, path: `books/${x.documentId}.md`, bookSlug: 'b', chapterNumber: i, channels: { keyword: { rank: i + 1, score: 2 } } }));
    const c = compactHarness(h, golden('q1'), { harness: h });
    assert.ok(c.hits.every((x) => !('channels' in x)), 'channels dropped everywhere, full hits too');
    assert.deepEqual(Object.keys(c.hits[0]!).sort(), ['chunkId', 'content', 'documentId', 'path', 'rank', 'score']);
    assert.equal(c.hits[1]!.chapterNumber, 1, 'the hit matching the chunk reference is kept whole (but for channels)');
    assert.equal(c.hits[1]!.content, LONG);
    assert.deepEqual(readResultsFile(jsonl).columns[0]!.queries.find((q) => q.id === 'q1')!.top.map((t) => Object.keys(t).length), [5, 5, 5], 'QueryRecord.top takes five fields (no path in these rows)');
  });

  it("dedupeRowMetadata drops the row's copies of response.metadata and the golden query, nothing else", () => {
    const h = harness('q1');
    const response = { output: 'text', metadata: { harness: h, diagnostics: { variant: 'c300' }, params: { topK: 10 }, rankgate: '0.1.0', extra: null } };
    const testCase = { metadata: { id: 'q1', category: 'direct', language: 'en', tags: 'x', golden: golden('q1'), selection: SEL } };
    const row = {
      response,
      testCase,
      // promptfoo's row metadata: {...testCase.metadata, ...response.metadata}; a value equal but not the same object
      // (a JSON round trip) is a copy too; a key whose value differs from its namesake is the row's own
      metadata: { ...testCase.metadata, ...response.metadata, params: JSON.parse(JSON.stringify(response.metadata.params)), diagnostics: { variant: 'other' }, sessionId: 's1' } as Record<string, unknown>,
    };
    assert.deepEqual(dedupeRowMetadata(row).sort(), ['golden', 'harness', 'params', 'selection']);
    assert.deepEqual(Object.keys(row.metadata).sort(), ['category', 'diagnostics', 'extra', 'id', 'language', 'rankgate', 'sessionId', 'tags']);
    assert.equal(row.response.metadata.harness, h, 'response.metadata untouched');
    assert.ok(testCase.metadata.golden, 'testCase.metadata untouched');
    assert.deepEqual(dedupeRowMetadata({ metadata: null }), []);
    assert.deepEqual(dedupeRowMetadata({ metadata: { harness: h } }), [], 'nothing to compare with: kept');
  });

  it('compactGrading drops only copies: component named scores equal to the row\'s, unit weights of metrics at most one assertion names', () => {
    const row: any = {
      namedScores: { a: 1, b: 0.5, c: 2, t: 1 },
      gradingResult: {
        namedScores: { a: 1, b: 0.5, c: 2, t: 1 },
        namedScoreWeights: { a: 1, b: 1, c: 2, t: 1 },
        componentResults: [
          { namedScores: { a: 1, b: 0.5 }, assertion: { type: 'javascript', metric: 'b' } },
          { namedScores: { c: 3 }, assertion: { type: 'javascript' } }, // not a copy: its value differs from the row's
          { namedScores: { t: 1 }, assertion: { type: 'javascript', metric: 'b' } }, // a second assertion names metric b
        ],
      },
    };
    assert.equal(compactGrading(row), 5);
    assert.equal(row.gradingResult.componentResults[0].namedScores, undefined);
    assert.deepEqual(row.gradingResult.componentResults[1].namedScores, { c: 3 });
    assert.equal(row.gradingResult.componentResults[2].namedScores, undefined);
    assert.deepEqual(row.gradingResult.namedScoreWeights, { b: 1, c: 2 }, 'b: two assertions count it (weight 1 is not the count 2); c: not 1');
    assert.deepEqual(row.gradingResult.namedScores, { a: 1, b: 0.5, c: 2, t: 1 }, 'the grading result keeps its named scores');
    const templated: any = { namedScores: { x: 1 }, gradingResult: { namedScoreWeights: { x: 1 }, componentResults: [{ assertion: { metric: '{{m}}' } }] } };
    compactGrading(templated);
    assert.deepEqual(templated.gradingResult.namedScoreWeights, { x: 1 }, 'a templated metric name is rendered per row by promptfoo: weights kept');
    assert.equal(compactGrading({ gradingResult: null }), 0);
  });

  it('the afterEach hook dedupes the row it is handed, and the rows read the same afterwards', async () => {
    const rows = ROWS.map((r) => JSON.parse(JSON.stringify(r)) as Record<string, any>);
    for (const r of rows) r.metadata = { ...r.testCase.metadata, ...r.response.metadata };
    const before = readResultsFile(writeRows('dedupe-before.jsonl', rows));
    for (const r of rows) await afterEachHook({ result: r });
    assert.ok(rows.every((r) => !('harness' in r.metadata) && !('golden' in r.metadata) && r.metadata.id !== undefined));
    assert.deepEqual(summary(readResultsFile(writeRows('dedupe-after.jsonl', rows))), summary(before));
  });
});

describe('the re-gate record (src/results/regate.ts)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-regate-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('finds promptfoo output paths and puts the record beside the first JSON/JSONL one', () => {
    assert.deepEqual(outputPathsOf(['node', 'pf', 'eval', '-c', 'x.yaml', '-o', 'a.html', 'out/r.jsonl', '--no-cache']), ['a.html', 'out/r.jsonl']);
    assert.deepEqual(outputPathsOf(['eval', '--output=r.json']), ['r.json']);
    assert.deepEqual(outputPathsOf(['eval'], 'cfg.json'), ['cfg.json']);
    assert.deepEqual(outputPathsOf(['eval']), []);
    assert.equal(regatePathFor(['a.html', 'out/r.jsonl']), join('out', 'r.jsonl.rankgate.jsonl'));
    assert.equal(regatePathFor(['results.json']), 'results.json.rankgate.jsonl');
    assert.equal(regatePathFor([]), null);
    assert.equal(regatePathFor(['x.rankgate.jsonl']), null, 'never over itself');
  });

  it('F1: -o full.json then -o full.jsonl in one folder keep one record each; an older shared name only for its own run', () => {
    const sub = mkdtempSync(join(dir, 'f1-'));
    const runRows = (run: string) => ROWS.map((r) => ({ ...r, response: { ...r.response, metadata: { ...r.response.metadata, rankgateRun: run } } }));
    const [a, b] = [runRows('aaaaaaaa-0000-4000-8000-000000000001'), runRows('bbbbbbbb-0000-4000-8000-000000000002')];
    const json = join(sub, 'full.json');
    const jsonl = join(sub, 'full.jsonl');
    const record = (rows: typeof a, output: string, path = regatePathFor([output])!) => {
      const d = digestRows(rows);
      writeRegateFile(path, { output, outputs: [output], runId: rows[0]!.response.metadata.rankgateRun, rows: d.rows, digest: d.digest }, rows);
      return path;
    };
    // the first eval (-o full.json), then the second (-o full.jsonl) in the same folder
    writeFileSync(json, JSON.stringify(jsonDoc(a)));
    assert.equal(record(a, json), join(sub, 'full.json.rankgate.jsonl'));
    writeFileSync(jsonl, b.map((r) => JSON.stringify(r)).join('\n') + '\n');
    assert.equal(record(b, jsonl), join(sub, 'full.jsonl.rankgate.jsonl'));
    assert.deepEqual(verifyEvidence(json), { problem: null, loud: null }, 'the honest JSON file keeps its own record');
    assert.deepEqual(verifyEvidence(jsonl), { problem: null, loud: null });
    // an older rankgate's shared name: read for the file whose run it records, not for the other
    rmSync(join(sub, 'full.json.rankgate.jsonl'));
    rmSync(join(sub, 'full.jsonl.rankgate.jsonl'));
    const legacy = join(sub, 'full.rankgate.jsonl');
    const d = digestRows(b);
    writeRegateFile(legacy, { runId: b[0]!.response.metadata.rankgateRun, rows: d.rows, digest: d.digest }, b); // no output named
    assert.deepEqual(verifyEvidence(jsonl), { problem: null, loud: null }, 'the old name still serves the file it belongs to');
    const other = verifyEvidence(json);
    assert.equal(other.problem, null, 'not "rows of another run": that record is not this file\'s');
    assert.match(other.loud ?? '', /LOUD: no record of this eval beside .*full\.json \(the afterAll hook writes <output>\.rankgate\.jsonl/);
    assert.deepEqual(outputsOfRecord('r/full.rankgate.jsonl'), ['r/full.jsonl', 'r/full.json']);
    assert.deepEqual(outputsOfRecord('r/full.json.rankgate.jsonl'), ['r/full.json']);
  });

  it('compact rows re-score to the same records as the full rows; the header is recognised, not a row', () => {
    const f = join(dir, 'results.rankgate.jsonl');
    writeRegateFile(f, { evalId: 'eval-x', output: 'results.json', code: 1, verdict: ['rankgate gate FAILED (exit 1)'] }, ROWS);
    const parsed = readResultsFile(f) as ReturnType<typeof readResultsFile> & { regate?: { code?: number } };
    assert.equal(parsed.regate?.code, 1);
    assert.equal(parsed.evalId, 'eval-x');
    assert.deepEqual(summary(parsed), summary(parseResultsObject(jsonDoc(ROWS), 'x')));
    const full = Buffer.byteLength(JSON.stringify(ROWS[2]));
    const small = Buffer.byteLength(JSON.stringify(compactRow(ROWS[2])));
    assert.ok(small < full / 2, `compact row ${small} B vs ${full} B`);
    assert.equal([...resultRows(f)].length, ROWS.length, 'the header is not a row');
  });
});

describe("promptfoo's --no-write across its releases (src/results/nowrite.ts)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-nowrite-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  /** ROWS as a --no-write run of rankgate's provider leaves them (promptfooWrite: false in every row's metadata). */
  const unkept = () => structuredClone(ROWS).map((r) => ((r.response.metadata as Record<string, unknown>)[PROMPTFOO_WRITE_KEY] = false, r));
  writeFileSync(join(dir, 'floors.yaml'), 'overall: { recall_at_3: 0.1 }\n');
  const gate = (file: string, target: string) =>
    spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'gate', file, '--floors', join(dir, 'floors.yaml'), '--update-baseline', '--baseline', target], { encoding: 'utf8', cwd: dir });

  it("reads --no-write from promptfoo's command line and config; knows which releases keep rows under it", () => {
    assert.equal(noWriteInArgv(['node', 'promptfoo', 'eval', '-c', 'x.yaml', '--no-write', '-o', 'r.json']), true);
    assert.equal(noWriteInArgv(['node', 'promptfoo', 'eval', '--no-cache']), false);
    assert.equal(noWriteInArgv(['node', 'promptfoo', 'eval', '--', '--no-write']), false, 'after --, not an option');
    assert.equal(noWriteInArgv(['node', 'promptfoo', 'eval', '--no-writes']), false);
    assert.equal(promptfooWrites(['eval']), true);
    assert.equal(promptfooWrites(['eval', '--no-write']), false);
    assert.equal(promptfooWrites(['eval'], { write: false }), false, "a config's commandLineOptions.write: false");
    assert.equal(promptfooWrites(['eval'], { write: true, cache: false }), true);
    assert.equal(rowsUnderNoWrite('0.121.20'), false);
    assert.equal(rowsUnderNoWrite('0.120.1'), false);
    assert.equal(rowsUnderNoWrite('0.123.1'), true);
    assert.equal(rowsUnderNoWrite('0.124.0-beta.1'), true);
    assert.equal(rowsUnderNoWrite('1.0.0'), true);
    assert.equal(rowsUnderNoWrite('0.122.2'), null, 'not verified: unknown');
    assert.equal(rowsUnderNoWrite(null), null);
    assert.equal(rowsUnderNoWrite('latest'), null);
    // a results format rankgate has not verified is not read as if it were format 3
    const d = { ...jsonDoc(ROWS), results: { ...jsonDoc(ROWS).results, version: 4 } };
    assert.throws(() => parseResultsObject(d, 'x.json'), (e: Error) => isUserError(e) && /x\.json: results\.version 4: rankgate reads promptfoo's results format 3/.test(e.message));
    assert.equal(parseResultsObject({ ...d, results: { ...d.results, version: 3 } }, 'x.json').columns.length, 2);
  });

  it("a row's promptfooWrite: false makes its column unkept; rankgate's provider stamp without it, kept; neither, unknown", () => {
    assert.equal(parseResultsObject(jsonDoc(ROWS), 'x').columns[0]!.written, true);
    const one = structuredClone(ROWS);
    (one[5]!.response.metadata as Record<string, unknown>)[PROMPTFOO_WRITE_KEY] = false;
    const cols = parseResultsObject(jsonDoc(one), 'x').columns;
    assert.deepEqual(cols.map((c) => c.written), [true, false], 'one marked row is enough');
    const bare = structuredClone(ROWS).map((r) => (delete (r.response.metadata as { rankgate?: string }).rankgate, r));
    assert.equal(parseResultsObject(jsonDoc(bare), 'x').columns[0]!.written, undefined);
    // the re-gate record keeps the marker in its compact rows
    assert.equal((compactRow(unkept()[0]) as { response: { metadata: Record<string, unknown> } }).response.metadata[PROMPTFOO_WRITE_KEY], false);
    assert.equal((compactRow(ROWS[0]) as { response: { metadata: Record<string, unknown> } }).response.metadata[PROMPTFOO_WRITE_KEY], undefined);
  });

  it('noWriteRefusal: marked rows, the hook\'s record, the config, or rows a row-keeping promptfoo cannot vouch for', () => {
    const col = (rows: typeof ROWS) => parseResultsObject(jsonDoc(rows), 'x').columns[0]!;
    assert.equal(noWriteRefusal(col(ROWS), { promptfooVersion: '0.123.1' }), null, "rankgate's rows without the marker: kept");
    assert.match(noWriteRefusal(col(unkept()), { promptfooVersion: '0.121.20' })!, /--no-write` run \(its rows say so/);
    assert.match(noWriteRefusal(col(ROWS), { regate: { written: false } })!, /the afterAll hook's record says so/);
    assert.match(noWriteRefusal(col(ROWS), { commandLineOptions: { write: false } })!, /commandLineOptions\.write: false/);
    const bare = structuredClone(ROWS).map((r) => (delete (r.response.metadata as { rankgate?: string }).rankgate, r));
    assert.match(noWriteRefusal(col(bare), { promptfooVersion: '0.123.1' })!, /cannot tell whether promptfoo 0\.123\.1 kept this run/);
    assert.match(noWriteRefusal(col(bare), { promptfooVersion: '0.122.0' })!, /cannot tell/, 'an unverified release: fail closed');
    assert.equal(noWriteRefusal(col(bare), { promptfooVersion: '0.121.20' }), null, '0.121 keeps no rows under --no-write: rows mean a kept run');
    assert.equal(noWriteRefusal(col(bare), {}), null, 'no version, no marker (JSONL of another provider): nothing says so');
  });

  it('rankgate gate --update-baseline refuses a --no-write run, JSON, JSONL or re-gate record, in one line, writing nothing', () => {
    const rows = unkept().filter((r) => r.promptIdx === 0);
    const files = {
      json: join(dir, 'nw.json'),
      jsonl: join(dir, 'nw.jsonl'),
      record: join(dir, 'kept.rankgate.jsonl'),
    };
    const doc = jsonDoc(rows);
    doc.results.prompts.pop();
    writeFileSync(files.json, JSON.stringify({ ...doc, metadata: { promptfooVersion: '0.123.1' } }));
    writeFileSync(files.jsonl, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    // rows without the marker, but the hook saw --no-write (a config's commandLineOptions.write: false)
    writeRegateFile(files.record, { evalId: 'eval-x', output: 'kept.jsonl', code: 0, verdict: [], written: false }, ROWS.filter((r) => r.promptIdx === 0));
    for (const [what, f] of Object.entries(files)) {
      const target = join(dir, `never-${what}.json`);
      const r = gate(f, target);
      assert.equal(r.status, 2, `${what}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line: ${r.stderr}`);
      assert.match(r.stderr, /--update-baseline: a `promptfoo eval --no-write` run \((its rows|the afterAll hook's record) say/, what);
      assert.ok(!existsSync(target), `${what}: no baseline written`);
    }
    // promptfoo's own JSONL of that run, rows unmarked: the hook's record beside it says the run was not kept
    const unmarked = ROWS.filter((r) => r.promptIdx === 0).map((r) => JSON.stringify(r)).join('\n') + '\n';
    writeFileSync(join(dir, 'kept.jsonl'), unmarked);
    const beside = gate(join(dir, 'kept.jsonl'), join(dir, 'never-beside.json'));
    assert.equal(beside.status, 2, beside.stdout + beside.stderr);
    assert.match(beside.stderr, /the afterAll hook's record says so/);
    // the same rows, kept: the baseline is written
    const kept = join(dir, 'ok.jsonl');
    writeFileSync(kept, unmarked);
    const ok = gate(kept, join(dir, 'baseline.json'));
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.ok(existsSync(join(dir, 'baseline.json')), ok.stdout + ok.stderr);
  });
});
