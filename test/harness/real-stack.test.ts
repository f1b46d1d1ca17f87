/**
 * The real stack through promptfoo: rankgate's own SearchService on a fresh PGlite database, the two-document
 * fixture corpus ingested on first use (progress on stderr), USE-lite embeddings, keyword-only and hybrid
 * columns. Distinctive words make the expected ranks certain: "zephyrine" and "quillwort" occur in one chunk
 * each, so both are rank 1; real-003's passage is in no document (missing_expected_source).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE, close, promptfooEval, tempDir, type RunResult } from './helpers.ts';

interface Row {
  provider: { label: string };
  testCase: { metadata: { id: string } };
  namedScores: Record<string, number>;
  response: { output: string; metadata: { harness: { ids: string[] }; resolution?: Record<string, string[]>; diagnostics: { keywordCandidates: string[] } } };
}

describe('real SearchService (PGlite, autoIngest) through promptfoo', () => {
  const dir = tempDir('harness-real');
  const out = join(dir, 'real.json');
  let run: RunResult;
  let rows: Row[];
  let cols: Record<string, Record<string, number>>;
  before(async () => {
    run = await promptfooEval(join(FIXTURE, 'real', 'promptfooconfig.yaml'), out, { RANKGATE_DATA_DIR: join(dir, 'db'), DATABASE_URL: undefined });
    const d = JSON.parse(readFileSync(out, 'utf8'));
    rows = d.results.results;
    cols = Object.fromEntries(d.results.prompts.map((p: { provider: string; metrics: { namedScores: Record<string, number> } }) => [p.provider, p.metrics.namedScores]));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const row = (label: string, id: string) => rows.find((r) => r.provider.label === label && r.testCase.metadata.id === id)!;

  it('builds the index on first use with progress, then evaluates both columns without errors', () => {
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.match(run.stderr, /index variant c200:use-lite is missing .*; ingesting .*corpus/);
    assert.equal(rows.length, 6);
    assert.ok(rows.every((r) => r.response?.metadata?.harness?.ids.length > 0));
  });

  it('resolves expected passage substrings to chunk ids of the column index variant', () => {
    const r = row('real keyword-only c200', 'real-001');
    assert.deepEqual(r.response.metadata.resolution, { 'trimmed the zephyrine lanterns every evening': ['lantern-keepers#c200-0'] });
    assert.equal(r.response.metadata.harness.ids[0], 'lantern-keepers#c200-0');
    assert.match(r.response.output, /^#1 ✓ Lantern Keepers( · ch\. 1)? · expected, grade 3$/m, 'readable output: title and the expected mark');
    assert.equal(r.namedScores.bucket_rank1_hit, 1);
    assert.equal(r.namedScores.recall_at_1, 1);
  });

  it('scores document judgements on the collapsed ranking, and buckets an unresolvable passage', () => {
    for (const label of ['real keyword-only c200', 'real hybrid c200']) {
      assert.equal(row(label, 'real-002').namedScores.mrr, 1, `${label}: marsh-notes first`);
      const miss = row(label, 'real-003');
      assert.deepEqual(miss.response.metadata.resolution, { 'this sentence appears in no fixture document': [] });
      assert.equal(miss.namedScores.bucket_missing_expected_source, 1);
      assert.ok(close(cols[label]!.avg_recall_at_3!, 2 / 3));
    }
    // first-stage candidates stay on a row whose ranking returned nothing relevant (compact rows: src/results/compact.ts)
    const r1 = row('real hybrid c200', 'real-001');
    if (r1.namedScores.found === 0) assert.ok(r1.response.metadata.diagnostics.keywordCandidates.includes('lantern-keepers#c200-0'));
    else assert.deepEqual(r1.response.metadata.diagnostics.keywordCandidates, []);
    assert.ok(row('real hybrid c200', 'real-003').response.metadata.diagnostics.keywordCandidates.length > 0, 'kept on the row that found nothing');
  });
});
