/**
 * Seals that mean what they say (src/util/seal.ts): with the CI's RANKGATE_SEAL_KEY a baseline and an eval record are
 * keyed, and an edited file whose unkeyed digest was recomputed (P4, P5 of the hardening round) no longer passes as
 * sealed; without a key the digests are accident checks, and a keyed file is said unverified.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';
import { baselineFrom, baselineInconsistency, baselineSealNote, sealBaseline, sealOf } from '../../src/gate/baseline.ts';
import { checkEvidence, recordSealText, type RecordEvidence } from '../../src/results/record.ts';
import { buildReport } from '../../src/results/summary.ts';
import type { Column, QueryRecord } from '../../src/results/read.ts';
import { sealText } from '../../src/util/seal.ts';

const KEY = Buffer.from('ci-secret-'.repeat(4));
const OTHER = Buffer.from('attacker--'.repeat(4));

function q(id: string, r3: number): QueryRecord {
  return {
    id, query: id, category: 'a', language: 'en', tags: [], error: null,
    golden: GoldenQuerySchema.parse({ id, query: id, language: 'en', category: 'a', expected: [{ chunk_id: 'a', grade: 3, relevant: true }] }),
    retrieval: { recall_at_1: r3, recall_at_3: r3, recall_at_5: r3, recall_at_10: r3, trec_recall_at_10: r3, mrr: r3, ndcg_at_10: r3, precision_at_5: r3 / 5, ap_at_10: r3, found: r3, best_rank: r3 ? 1 : null, last_expected_rank: null, answerable_at_10: null, relevant_refs: 1, level: 'chunk', bucket: 'rank1_hit' },
    routing: null, integrity: [], latencyMs: 1, top: [], promptfooPass: true, judged: false,
  };
}
const col: Column = { index: 0, label: 'c', providerId: 'p', config: { topK: 10 }, namedScores: {}, queries: [q('q1', 1), q('q2', 0)], counts: null, selection: { id: null, size: 2 }, identity: { engine: 'pglite', variant: 'v', corpusId: 'c1', corpus: 'docs' } };

describe('baseline seals', () => {
  const plain = baselineFrom(col, buildReport(col));

  it('keyed with the CI key: verified with it, unverifiable without it, a mismatch with another key', () => {
    const b = sealBaseline(plain, KEY);
    assert.match(b.identity!.seal!, /^hmac-sha256:/);
    assert.equal(baselineInconsistency(b), null);
    assert.equal(baselineSealNote('b.json', b, KEY), null);
    assert.match(baselineSealNote('b.json', b, null)!, /LOUD: baseline b\.json: keyed seal NOT VERIFIED: RANKGATE_SEAL_KEY is not set here/);
  });

  it('P4: an edited baseline whose unkeyed seal was recomputed is not proof where the key is set', () => {
    const b = sealBaseline(plain, KEY);
    const forged = sealBaseline({ ...b, config: { ...b.config, topK: 99 } }, null);
    assert.match(forged.identity!.seal!, /^sha256:/);
    assert.match(baselineSealNote('b.json', forged, KEY)!, /LOUD: baseline b\.json: only an unkeyed seal while RANKGATE_SEAL_KEY is set: anyone could have written it/);
    // an edit without any re-sealing is a mismatch, keyed or not; the whole file is covered now, config included
    const edited = { ...b, config: { ...b.config, topK: 99 } };
    const saved = process.env.RANKGATE_SEAL_KEY;
    process.env.RANKGATE_SEAL_KEY = KEY.toString();
    try {
      assert.match(baselineInconsistency(edited)!, /identity\.seal: keyed seal does NOT match/);
    } finally {
      if (saved === undefined) delete process.env.RANKGATE_SEAL_KEY;
      else process.env.RANKGATE_SEAL_KEY = saved;
    }
    const unkeyed = sealBaseline(plain, null);
    assert.match(baselineInconsistency({ ...unkeyed, config: { topK: 1 } })!, /identity\.seal does not match/);
  });

  it('a baseline of an older rankgate (a bare digest over identity and entries) still reads', () => {
    const old = { ...plain, identity: { ...plain.identity!, seal: sealOf(plain) } };
    assert.equal(baselineInconsistency(old), null);
  });
});

describe('eval record seals', () => {
  const got = { rows: 2, digest: 'd'.repeat(64), runs: ['run-1'], unmarked: 0 };
  const rec: RecordEvidence = { runId: 'run-1', rows: 2, digest: 'd'.repeat(64) };

  it('with the key: a keyed record verifies; an unsealed one (P5: digest recomputed by hand) or another key is exit 2', () => {
    const sealed = { ...rec, seal: sealText('record', recordSealText(rec), KEY) };
    assert.deepEqual(checkEvidence('r.jsonl', got, sealed, 'r.rankgate.jsonl', KEY), { problem: null, loud: null });
    assert.match(checkEvidence('r.jsonl', got, rec, 'r.rankgate.jsonl', KEY).problem!, /record r\.rankgate\.jsonl is not sealed with RANKGATE_SEAL_KEY, which is set here: it was not written by an eval that held the CI's key/);
    const resealed = { ...rec, seal: sealText('record', recordSealText(rec), OTHER) };
    assert.match(checkEvidence('r.jsonl', got, resealed, 'r.rankgate.jsonl', KEY).problem!, /keyed seal does NOT match/);
    // no record at all under the key: no proof either
    assert.match(checkEvidence('r.jsonl', got, null, 'r.jsonl.rankgate.jsonl', KEY).problem!, /no eval record beside it .* while RANKGATE_SEAL_KEY is set/);
    const edited = { ...sealed, rows: 3 };
    assert.match(checkEvidence('r.jsonl', { ...got, rows: 3 }, edited, 'r.rankgate.jsonl', KEY).problem!, /keyed seal does NOT match/);
  });

  it('without the key: the digest is checked as before, and a keyed record is said unverified', () => {
    assert.deepEqual(checkEvidence('r.jsonl', got, rec, 'r.rankgate.jsonl', null), { problem: null, loud: null });
    const sealed = { ...rec, seal: sealText('record', recordSealText(rec), KEY) };
    assert.match(checkEvidence('r.jsonl', got, sealed, 'r.rankgate.jsonl', null).loud!, /keyed seal NOT VERIFIED/);
    assert.match(checkEvidence('r.jsonl', { ...got, digest: 'e'.repeat(64) }, rec, 'r.rankgate.jsonl', null).problem!, /do not match the record/);
  });
});
