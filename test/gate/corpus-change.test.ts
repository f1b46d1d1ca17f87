/**
 * Corpus versions compared, not refused (src/gate/corpus-change.ts, in-process): a baseline keeps a hash per document;
 * a run on the same corpus source with edited content is compared on the shared queries and lists LOUD the documents
 * added, changed and removed and the golden queries whose expected documents changed (verdict notes, PR comment beside
 * the regressed queries). Another source stays exit 2 unless accepted; a url: service's corpus is said unknown.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';
import { baselineFrom } from '../../src/gate/baseline.ts';
import { runCorpus, runCorpusFor } from '../../src/gate/corpus-change.ts';
import { DEFAULT_REGRESSION, type Floors } from '../../src/gate/floors.ts';
import { gateColumn, verdictLines } from '../../src/gate/verdict.ts';
import { corpusIdentity } from '../../src/ingest/identity.ts';
import { readCorpus } from '../../src/ingest/readers.ts';
import { renderComment } from '../../src/report/markdown.ts';
import { buildReport } from '../../src/results/summary.ts';
import type { Column, QueryRecord } from '../../src/results/read.ts';
import { tempDir } from '../harness/helpers.ts';

const floors: Floors = { overall: { recall_at_3: 0.1 }, categories: {}, metric_family: 'strict', regression: { ...DEFAULT_REGRESSION, metrics: ['recall_at_3'] } };

/** A query expecting `path`, found at rank 1 (hit) or not at all. */
function q(id: string, path: string, hit: boolean): QueryRecord {
  const r = hit ? 1 : 0;
  return {
    id, query: id, category: 'c', language: 'en', tags: [], error: null,
    golden: GoldenQuerySchema.parse({ id, query: id, language: 'en', category: 'c', expected: [{ path, grade: 3, relevant: true }] }),
    retrieval: { recall_at_1: r, recall_at_3: r, recall_at_5: r, recall_at_10: r, trec_recall_at_10: r, mrr: r, ndcg_at_10: r, precision_at_5: r / 5, ap_at_10: r, found: r, best_rank: hit ? 1 : null, last_expected_rank: null, answerable_at_10: null, relevant_refs: 1, level: 'document', bucket: hit ? 'rank1_hit' : 'not_diagnosed' },
    routing: null, integrity: [], latencyMs: 1,
    top: [{ rank: 1, chunkId: hit ? `${path}#c300-0` : 'other#c300-0', documentId: hit ? path.replace(/^.*\/|\.md$/g, '') : 'other', score: 1, content: '', path: hit ? path : 'x/other.md' }],
    promptfooPass: true, judged: false,
  };
}

function corpusDir(root: string): string {
  const dir = join(root, 'kb');
  mkdirSync(join(dir, 'brakes'), { recursive: true });
  mkdirSync(join(dir, 'tyres'), { recursive: true });
  writeFileSync(join(dir, 'brakes', 'disc-brake-squeal.md'), '# Disc brake squeal\n\nSqueal comes from glazed pads.\n');
  writeFileSync(join(dir, 'brakes', 'pad-wear.md'), '# Pad wear\n\nReplace pads at 3 mm.\n');
  writeFileSync(join(dir, 'tyres', 'pressure.md'), '# Tyre pressure\n\nCheck monthly.\n');
  writeFileSync(join(dir, 'other.md'), '# Other\n\nNothing.\n');
  return dir;
}

async function column(dir: string, hits: boolean[]): Promise<Column> {
  const ident = corpusIdentity(await readCorpus(dir), dir);
  const paths = ['brakes/disc-brake-squeal.md', 'brakes/pad-wear.md', 'tyres/pressure.md'];
  const queries = Array.from({ length: 24 }, (_, i) => q(`q${String(i).padStart(2, '0')}`, paths[i % 3]!, hits[i] ?? true));
  return { index: 0, label: 'ours', providerId: 'p', config: { corpus: dir }, namedScores: {}, queries, counts: null, selection: { id: 's', size: 24 }, identity: { engine: 'pglite', variant: 'c300:use-lite', corpusId: ident.id, corpus: ident.path } };
}

describe('corpus versions', () => {
  it('one edited document: compared on the shared queries, the document and the queries expecting it said LOUD, and in the PR comment beside the regressed queries', async () => {
    const root = tempDir('corpus-change');
    try {
      const dir = corpusDir(root);
      const before = await column(dir, []);
      const run0 = await runCorpus(before);
      assert.equal(run0.known, true);
      const b = baselineFrom(before, buildReport(before), run0.known ? run0.documents : undefined);
      assert.equal(Object.keys(b.identity!.documents!).length, 4);
      assert.deepEqual(b.identity!.documents!['pad-wear'], { h: b.identity!.documents!['pad-wear']!.h, p: 'brakes/pad-wear.md' });

      writeFileSync(join(dir, 'brakes', 'pad-wear.md'), '# Pad wear\n\nReplace pads at 2 mm.\n');
      // the PR: the 8 pad-wear queries (q01, q04, …, q22) now miss
      const after = await column(dir, Array.from({ length: 24 }, (_, i) => i % 3 !== 1));
      assert.notEqual(after.identity!.corpusId, before.identity!.corpusId);
      const corpus = await runCorpusFor(after, b);
      const v = gateColumn(after, { floors, floorsSource: 'gate.yaml', baseline: { path: 'base.json', data: b }, corpus });
      assert.ok(!v.reasons.some((r) => /another corpus/.test(r)), v.reasons.join('\n'));
      assert.equal(v.regression!.shared, 24, 'compared on the shared queries');
      const notes = v.notes.join('\n');
      assert.match(notes, /LOUD: corpus \S+kb changed since the baseline base\.json \(corpus \w{12} -> \w{12}\): compared per query on the 24 shared queries; documents: 1 changed, 0 added, 0 removed/);
      assert.match(notes, /LOUD: documents changed: brakes\/pad-wear\.md$/m);
      assert.match(notes, /LOUD: golden queries whose expected documents changed: q01 \(brakes\/pad-wear\.md\), q04 .*q22 \(brakes\/pad-wear\.md\)$/m);
      assert.equal(v.code, 1, 'a 33-point drop on 24 queries is a regression');
      assert.match(v.reasons.join('\n'), /regression: overall recall_at_3 1\.0000 -> 0\.6667/);
      const comment = renderComment(v.report, v.delta, v);
      assert.match(comment, /- `q01` \(c\): recall_at_3 1\.00 → 0\.00, .* · \*\*expected document changed: `brakes\/pad-wear\.md`\*\*/);
      assert.match(comment, /The corpus `\S+kb` changed since the baseline/);
      assert.match(comment, /- changed \(1\): `brakes\/pad-wear\.md`/);

      // added and removed documents; a query whose expected document was removed
      unlinkSync(join(dir, 'tyres', 'pressure.md'));
      writeFileSync(join(dir, 'brakes', 'rotor.md'), '# Rotors\n\nWarped rotors judder.\n');
      const again = await column(dir, []);
      const v2 = gateColumn(again, { floors, floorsSource: 'gate.yaml', baseline: { path: 'base.json', data: b }, corpus: await runCorpusFor(again, b) });
      const n2 = v2.notes.join('\n');
      assert.match(n2, /documents: 1 changed, 1 added, 1 removed/);
      assert.match(n2, /documents added: brakes\/rotor\.md$/m);
      assert.match(n2, /documents removed: tyres\/pressure\.md$/m);
      assert.match(n2, /q02 \(tyres\/pressure\.md\)/);
      assert.equal(v2.code, 0, verdictLines(v2).join('\n'));

      // the results say one content, the disk holds another (edited after the eval): compared, which documents unknown
      writeFileSync(join(dir, 'other.md'), '# Other\n\nEdited after the eval.\n');
      const stale = gateColumn(again, { floors, floorsSource: 'gate.yaml', baseline: { path: 'base.json', data: b }, corpus: await runCorpusFor(again, b) });
      assert.match(stale.notes.join('\n'), /which documents changed is unknown: \S+kb is no longer the corpus this run evaluated/);
      assert.equal(stale.code, 0);

      // a baseline of an older rankgate (no document hashes): compared, said unknown
      const old = { ...b, identity: { ...b.identity!, documents: undefined } };
      const vo = gateColumn(after, { floors, floorsSource: 'gate.yaml', baseline: { path: 'base.json', data: old }, corpus: await runCorpusFor(after, old) });
      assert.match(vo.notes.join('\n'), /which documents changed is unknown: the baseline records no per-document hashes .*re-baseline/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('another corpus source stays exit 2 unless accepted; a url: service says its corpus is unknown and compares as before', async () => {
    const root = tempDir('corpus-source');
    try {
      const dir = corpusDir(root);
      const base = await column(dir, []);
      const r0 = await runCorpus(base);
      const b = baselineFrom(base, buildReport(base), r0.known ? r0.documents : undefined);
      const elsewhere = { ...base, identity: { ...base.identity!, corpus: 'manuals/', corpusId: 'f'.repeat(64) } };
      const v = gateColumn(elsewhere, { floors, floorsSource: 'gate.yaml', baseline: { path: 'base.json', data: b }, corpus: await runCorpusFor(elsewhere, b) });
      assert.equal(v.code, 2);
      assert.match(v.reasons[0]!, /was measured on another corpus: baseline \S+kb \(\w{64}\); this run manuals\/ \(f{64}\): the comparison is meaningless; re-baseline, or accept with --accept-baseline-mismatch/);
      const ok = gateColumn(elsewhere, { floors, floorsSource: 'gate.yaml', baseline: { path: 'base.json', data: b }, acceptMismatch: true });
      assert.equal(ok.code, 0);
      assert.match(ok.notes.join('\n'), /LOUD: .*another corpus.*\(accepted\)/);

      const url = { ...base, config: { url: 'http://127.0.0.1:9/search' }, identity: null };
      const ur = await runCorpus(url);
      assert.equal(ur.known, false);
      const ub = baselineFrom(url, buildReport(url));
      assert.equal(ub.identity!.documents, undefined);
      const uv = gateColumn(url, { floors, floorsSource: 'gate.yaml', baseline: { path: 'base.json', data: ub }, corpus: await runCorpusFor(url, ub) });
      assert.equal(uv.code, 0);
      assert.match(uv.notes.join('\n'), /corpus not compared with the baseline: 'ours' is a url: service: its corpus is its own, rankgate does not know its documents/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
