/**
 * Proof by mutation: real `promptfoo eval` runs over the fixture search service give one PASSING results file
 * (keyword mode, Recall@3 0.625 >= floor 0.6) and one FAILING one (hybrid mode, Recall@3 0.5 < 0.6), plus their
 * --no-write, partial, empty and dead-service counterparts. The --no-write runs are what the installed promptfoo
 * makes of them (src/results/nowrite.ts: 0.121 keeps no rows, only the column sums; 0.123 keeps the rows); the
 * sums-only starting points are 0.121's shape whichever promptfoo ran (0.123's rows removed, as 0.121 leaves them).
 * Each corruption below is applied to one of them and gated through the real CLI (`node bin/rankgate.js gate`); the exit code must be the contract's: 0 pass, 1 a floor
 * or significant regression fails, 2 bad input / nothing trustworthy measured. Above all, no corruption of the
 * failing file may exit 0. The table (corruption -> exit code) is printed at the end.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { PROMPTFOO_VERSION, promptfooEval, rankgate, tempDir, type RunResult } from '../harness/helpers.ts';
import { SELECTION_SIZE_KEY } from '../../src/results/read.ts';
import { rowsUnderNoWrite } from '../../src/results/nowrite.ts';
import { closedPort, resummarise, writeGateConfig } from './helpers.ts';
import { sealBaseline } from '../../src/gate/baseline.ts';

type Doc = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const FLOORS = 'overall: { recall_at_3: 0.6 }\ncategories:\n  technique_boundary: { routing_accuracy: 1.0 }\n';

interface Mutation {
  name: string;
  from: 'pass' | 'fail' | 'nw-pass' | 'nw-fail' | 'sums-pass' | 'sums-fail' | 'dead' | 'first3' | 'zzz';
  /** Change the parsed results (return a string to write it verbatim); default: unchanged. */
  mutate?: (d: Doc) => Doc | string;
  floors?: string;
  /** A baseline written from the PASSING file, then changed by this function. */
  baseline?: (b: Doc) => Doc;
  /** Keep the baseline's seal as it was (the edit without re-sealing); default: re-sealed. */
  keepSeal?: boolean;
  args?: string[];
  expect: 0 | 1 | 2;
  /** stdout+stderr must match. */
  says?: RegExp;
}

/** Recompute promptfoo's per-column counts and the checked sums from the rows (a "consistent" corruption). */
function resync(d: Doc): Doc {
  for (const [i, p] of d.results.prompts.entries()) {
    const rows = d.results.results.filter((r: Doc) => (r.promptIdx ?? 0) === i);
    p.metrics.testPassCount = rows.filter((r: Doc) => r.success && !r.error).length;
    p.metrics.testErrorCount = rows.filter((r: Doc) => r.error).length;
    p.metrics.testFailCount = rows.length - p.metrics.testPassCount - p.metrics.testErrorCount;
    for (const k of ['n_ranked', 'recall_at_3', 'routing_ok']) p.metrics.namedScores[k] = rows.reduce((a: number, r: Doc) => a + (r.namedScores?.[k] ?? 0), 0);
  }
  return d;
}

/** Keep only the rows `keep` accepts (a smaller run of the same file), counts and checked sums resynced. */
function keepRows(d: Doc, keep: (r: Doc) => boolean): Doc {
  d.results.results = d.results.results.filter(keep);
  return resync(d);
}

/** The golden selection identity of ids (src/golden/testcases.ts): what a golden file with just these queries gives. */
function selectionIdOf(ids: string[]): string {
  return createHash('sha256').update([...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).join('\n')).digest('hex').slice(0, 16);
}

/** Give every row the selection of exactly its own queries (plus `extra` fields): a golden set that really holds only them. */
function ownSelection(d: Doc, extra: Doc = {}): Doc {
  const ids = d.results.results.map((r: Doc) => r.testCase.metadata.id);
  for (const r of d.results.results) r.testCase.metadata.selection = { ...r.testCase.metadata.selection, id: selectionIdOf(ids), size: ids.length, ...extra };
  return d;
}

const catOf = (r: Doc) => r.testCase.metadata.category;
/** The queries the passing run misses at rank 3 (the hard ones). */
const hard = (r: Doc) => r.namedScores?.n_ranked === 1 && r.namedScores?.recall_at_3 === 0;

const sums = (d: Doc) => d.results.prompts[0].metrics.namedScores;

const rowOf = (d: Doc, id: string) => d.results.results.find((r: Doc) => r.testCase.metadata.id === id);

/** Does the installed promptfoo keep the rows of a --no-write run? (null: a release not verified: the before hook fails.) */
const NW_ROWS = rowsUnderNoWrite(PROMPTFOO_VERSION);

/** promptfoo 0.121's --no-write shape from a run with rows: no rows; the selection size the hook then records in the sums. */
function sumsOnly(d: Doc): Doc {
  for (const p of d.results.prompts) {
    const ns = p.metrics.namedScores;
    delete ns.latency_p50_ms; // the hook records latencies from rows only
    delete ns.latency_p95_ms;
    ns[SELECTION_SIZE_KEY] = d.results.results.filter((r: Doc) => (r.promptIdx ?? 0) === d.results.prompts.indexOf(p)).length;
  }
  d.results.results = [];
  return d;
}

const MUTATIONS: Mutation[] = [
  { name: 'unchanged passing file', from: 'pass', expect: 0, says: /gate PASSED \(exit 0\)/ },
  { name: 'unchanged failing file', from: 'fail', expect: 1, says: /overall recall_at_3 = 0\.5000 is below the floor 0\.6/ },
  { name: 'rows reordered (passing)', from: 'pass', mutate: (d) => (d.results.results.reverse(), d), expect: 0 },
  { name: 'rows reordered (failing)', from: 'fail', mutate: (d) => (d.results.results.reverse(), d), expect: 1 },
  { name: 'one row dropped', from: 'fail', mutate: (d) => (d.results.results.pop(), d), expect: 2, says: /has 9 rows but .* counts 10/ },
  { name: 'one row dropped, counts and sums resynced', from: 'pass', mutate: (d) => (d.results.results.splice(0, 1), resync(d)), expect: 2, says: /partial: 9 of 10 queries/ },
  { name: 'missed rows dropped, resynced (failing file)', from: 'fail', mutate: (d) => ((d.results.results = d.results.results.filter((r: Doc) => r.namedScores?.recall_at_3 !== 0)), resync(d)), expect: 2, says: /partial: \d of 10 queries/ },
  { name: 'a row duplicated', from: 'fail', mutate: (d) => (d.results.results.push(structuredClone(d.results.results[0])), d), expect: 2, says: /appears twice/ },
  { name: 'a row duplicated, resynced', from: 'pass', mutate: (d) => (d.results.results.push(structuredClone(d.results.results[0])), resync(d)), expect: 2, says: /appears twice/ },
  { name: 'all rows removed (the --no-write shape)', from: 'fail', mutate: (d) => ((d.results.results = []), d), expect: 1, says: /from the column sums/ },
  { name: 'all rows removed and the column metrics too', from: 'pass', mutate: (d) => ((d.results.results = []), delete d.results.prompts[0].metrics, d), expect: 2, says: /no evaluated queries/ },
  { name: 'wrong promptIdx (1, no such column)', from: 'pass', mutate: (d) => ((d.results.results[3].promptIdx = 1), d), expect: 2, says: /promptIdx 1 names no entry/ },
  { name: 'promptIdx a string', from: 'pass', mutate: (d) => ((d.results.results[3].promptIdx = '0'), d), expect: 2, says: /promptIdx: expected an index/ },
  { name: 'row namedScores recall_at_3 = "NaN"', from: 'fail', mutate: (d) => ((d.results.results[2].namedScores.recall_at_3 = 'NaN'), d), expect: 2, says: /results\[2\]\.namedScores\.recall_at_3: expected a finite number, got "NaN"/ },
  { name: 'row namedScores mrr = null (NaN in JSON)', from: 'pass', mutate: (d) => ((d.results.results[0].namedScores.mrr = null), d), expect: 2, says: /namedScores\.mrr: expected a finite number, got null/ },
  { name: 'column sum recall_at_3 a string', from: 'fail', mutate: (d) => ((d.results.prompts[0].metrics.namedScores.recall_at_3 = '9'), d), expect: 2, says: /metrics\.namedScores\.recall_at_3: expected a finite number/ },
  { name: 'column namedScores missing', from: 'pass', mutate: (d) => (delete d.results.prompts[0].metrics.namedScores, d), expect: 2, says: /metrics\.namedScores \('fixture-keyword'\): missing/ },
  { name: 'column namedScores missing (--no-write)', from: 'nw-fail', mutate: (d) => (delete d.results.prompts[0].metrics.namedScores, d), expect: 2, says: /metrics\.namedScores .*missing/ },
  { name: 'column sum recall_at_3 inflated', from: 'fail', mutate: (d) => ((d.results.prompts[0].metrics.namedScores.recall_at_3 = 8), d), expect: 2, says: /recall_at_3 = 8 but its rows sum to 4/ },
  { name: 'row outputs swapped to hits, sums resynced', from: 'fail', mutate: (d) => {
      for (const r of d.results.results) if (r.namedScores?.recall_at_3 === 0 && r.namedScores?.n_ranked === 1) r.namedScores.recall_at_3 = 1;
      return resync(d);
    }, expect: 2, says: /re-scoring the rows gives/ },
  { name: 'golden metadata stripped from missed rows', from: 'fail', mutate: (d) => {
      for (const r of d.results.results) if (r.namedScores?.recall_at_3 === 0) delete r.testCase.metadata.golden;
      return d;
    }, expect: 2, says: /re-scoring the rows gives/ },
  { name: 'extra column without rows', from: 'pass', mutate: (d) => (d.results.prompts.push({ ...structuredClone(d.results.prompts[0]), provider: 'extra' }), d), expect: 2, says: /column 'extra' .*has no rows/ },
  { name: 'column renamed', from: 'pass', mutate: (d) => ((d.results.prompts[0].provider = 'renamed'), d), expect: 2, says: /is not the provider of its column/ },
  { name: 'truncated JSON', from: 'pass', mutate: (d) => JSON.stringify(d).slice(0, 5000), expect: 2, says: /not JSON/ },
  { name: 'empty file', from: 'pass', mutate: () => '', expect: 2, says: /not JSON/ },
  { name: 'not promptfoo output', from: 'pass', mutate: () => '{"results": {}}', expect: 2, says: /expected promptfoo output JSON/ },
  { name: 'promptfoo counts edited', from: 'pass', mutate: (d) => ((d.results.prompts[0].metrics.testPassCount += 1), d), expect: 2, says: /counts 11/ },
  { name: 'a row errored (routing-only query), resynced', from: 'pass', mutate: (d) => {
      const r = rowOf(d, 'fx-adversarial-001');
      Object.assign(r, { error: 'search failed: connect ECONNREFUSED 127.0.0.1:9', success: false, namedScores: {}, response: { error: 'search failed: connect ECONNREFUSED 127.0.0.1:9' } });
      return resync(d);
    }, expect: 2, says: /1 of 10 queries errored: 1× search failed: connect ECONNREFUSED/ },
  { name: 'a row errored, under max_error_rate 0.2', from: 'pass', floors: FLOORS + 'max_error_rate: 0.2\n', mutate: (d) => {
      const r = rowOf(d, 'fx-adversarial-001');
      Object.assign(r, { error: 'search failed: timed out', success: false, namedScores: {}, response: { error: 'search failed: timed out' } });
      return resync(d);
    }, expect: 0, says: /under max_error_rate 0\.2/ },
  { name: 'every row errored (real dead url: service)', from: 'dead', expect: 2, says: /10 of 10 queries errored: \d+× search failed: [^\n]*connection refused \(nothing listening at 127\.0\.0\.1:\d+/ },
  { name: 'selection metadata removed (older results file)', from: 'fail', mutate: (d) => {
      for (const r of d.results.results) delete r.testCase.metadata.selection;
      return d;
    }, expect: 1, says: /golden selection unknown/ },
  { name: 'selection size edited to 66', from: 'pass', mutate: (d) => {
      for (const r of d.results.results) r.testCase.metadata.selection.size = 66;
      return d;
    }, expect: 2, says: /partial: 10 of 66 queries/ },
  { name: 'rows from two golden selections', from: 'pass', mutate: (d) => ((d.results.results[4].testCase.metadata.selection.id = 'ffffffffffffffff'), d), expect: 2, says: /different golden selections/ },
  { name: 'bad golden in a row', from: 'pass', mutate: (d) => ((d.results.results[1].testCase.metadata.golden.language = 'english'), d), expect: 2, says: /testCase\.metadata\.golden\.language/ },
  { name: 'floors typo recal_at_3', from: 'fail', floors: 'overall: { recal_at_3: 0.6 }\n', expect: 2, says: /overall: unknown metric 'recal_at_3'; did you mean 'recall_at_3'\?/ },
  { name: 'floors unknown top-level key', from: 'fail', floors: 'overal: { recall_at_3: 0.6 }\n', expect: 2, says: /unknown key 'overal'; did you mean 'overall'\?/ },
  { name: 'floors file empty', from: 'fail', floors: '', expect: 2, says: /empty gate configuration/ },
  { name: 'floors on a misspelt category', from: 'fail', floors: 'overall: { recall_at_3: 0.1 }\ncategories:\n  technque_boundary: { routing_accuracy: 1.0 }\n', expect: 2, says: /no technque_boundary queries in the results; did you mean 'technique_boundary'\?/ },
  { name: 'floors categories shape wrong', from: 'fail', floors: 'categories:\n  technique_boundary: 1.0\n', expect: 2, says: /categories\.technique_boundary: expected a map of metric: floor/ },
  { name: 'floor out of range', from: 'pass', floors: 'overall: { recall_at_3: 60 }\n', expect: 2, says: /expected a floor between 0 and 1, got 60/ },
  { name: 'floor on a metric no query of the category measures', from: 'pass', floors: 'categories:\n  adversarial: { recall_at_3: 0.5 }\n', expect: 2, says: /cannot be checked: no adversarial query measures recall_at_3/ },
  // promptfoo 0.121 keeps no rows under --no-write (the gate reads the sums), 0.123 keeps them (the gate reads the rows)
  { name: `--no-write output (real run, passing; promptfoo ${PROMPTFOO_VERSION})`, from: 'nw-pass', expect: 0, says: NW_ROWS ? /gate PASSED \(exit 0\) for 'fixture-keyword': 10 of 10 queries · Success@3 0\.6250 \(DES-058 Recall@3\) · MRR@10 0\.5625\n/ : /from the column sums/ },
  { name: `--no-write output (real run, failing; promptfoo ${PROMPTFOO_VERSION})`, from: 'nw-fail', expect: 1, says: /overall recall_at_3 = 0\.5000 is below the floor 0\.6/ },
  { name: `--no-write output vs a baseline (promptfoo ${PROMPTFOO_VERSION})`, from: 'nw-pass', baseline: (b) => b, expect: NW_ROWS ? 0 : 2, says: NW_ROWS ? /regression check .* on 10 shared queries/ : /needs per-query rows/ },
  { name: 'sums only (passing)', from: 'sums-pass', expect: 0, says: /Success@3 0\.6250 \(DES-058 Recall@3\) · MRR@10 0\.5625 \(from the column sums\)/ },
  { name: 'sums only vs a baseline', from: 'sums-pass', baseline: (b) => b, expect: 2, says: /needs per-query rows/ },
  { name: 'partial run --filter-first-n 3 (real run)', from: 'first3', expect: 2, says: /partial: 3 of 10 queries/ },
  { name: 'partial run accepted with --allow-partial', from: 'first3', args: ['--allow-partial'], expect: 0, says: /NOT CHECKED/ },
  { name: '0 rows --filter-pattern zzz (real run)', from: 'zzz', expect: 2, says: /no evaluated queries/ },
  { name: 'baseline from another golden set', from: 'pass', baseline: (b) => {
      b.queries = Object.fromEntries(Object.entries(b.queries).map(([k, v]) => [`other-${k}`, v]));
      delete b.identity.selection; // else its identity check refuses the baseline itself
      return b;
    }, expect: 2, says: /none of them in the baseline/ },
  { name: 'baseline identity block copied from another corpus (corpus swap hidden)', from: 'pass', keepSeal: true,
    baseline: (b) => ((b.identity.corpusId = 'f'.repeat(64)), (b.identity.documents = { 'other.md': { h: '0123456789abcdef' } }), b), expect: 2, says: /identity\.seal does not match the identity block/ },
  { name: 'baseline from another corpus', from: 'pass', baseline: (b) => ((b.identity.corpusId = 'sha256:other'), (b.identity.corpus = 'other-docs/'), b), expect: 2, says: /another corpus/ },
  { name: 'baseline from another corpus, accepted', from: 'pass', args: ['--accept-baseline-mismatch'], baseline: (b) => ((b.identity.corpusId = 'sha256:other'), b), expect: 0, says: /LOUD: .*another corpus/ },
  { name: 'baseline with another provider config (loud, compared)', from: 'pass', baseline: (b) => ((b.config.topK = 5), b), expect: 0, says: /LOUD: .*provider config: baseline topK=5; this run topK=10/ },
  { name: 'failing run vs the passing baseline', from: 'fail', baseline: (b) => b, expect: 1, says: /minimum detectable drop of recall_at_3/ },
  // The baseline's queries are the contract (issue 25, point 2)
  { name: 'one category run against the full baseline (selection of that category, no declared filter)', from: 'pass', baseline: (b) => b,
    mutate: (d) => ownSelection(keepRows(d, (r) => catOf(r) === 'conceptual')), expect: 2, says: /lacks 7 of the 10 queries of baseline .*\(2 direct, .*no longer in the golden set/ },
  { name: 'golden set with its hard queries deleted, against the full baseline', from: 'pass', baseline: (b) => b,
    mutate: (d) => ownSelection(keepRows(d, (r) => !hard(r))), expect: 2, says: /lacks 3 of the 10 queries .*old queries are never removed/ },
  { name: 'hard queries deleted, new queries appended in their place (same count)', from: 'pass', baseline: (b) => b,
    mutate: (d) => {
      for (const r of d.results.results.filter(hard)) r.testCase.metadata.id = r.testCase.metadata.golden.id = `new-${r.testCase.metadata.id}`;
      return ownSelection(d);
    }, expect: 2, says: /lacks 3 of the 10 queries/ },
  { name: 'hard queries not run (--filter-pattern), --allow-partial', from: 'pass', baseline: (b) => b, args: ['--allow-partial'],
    mutate: (d) => keepRows(d, (r) => !hard(r)), expect: 2, says: /lacks 3 of the 10 queries .*declare the subset with RANKGATE_CATEGORY/ },
  { name: 'one category, declared filter (RANKGATE_CATEGORY), against the full baseline', from: 'pass', baseline: (b) => b, floors: 'overall: { recall_at_3: 0.3 }\n',
    mutate: (d) => ownSelection(keepRows(d, (r) => catOf(r) === 'conceptual'), { filter: { category: ['conceptual'], of: 10 } }),
    expect: 0, says: /^rankgate gate PASSED \(exit 0\) for 'fixture-keyword': PARTIAL \(declared filter category conceptual: 3 of the golden files' 10 queries; compared on 3 of the baseline's 10 queries\)/m },
  { name: 'declared filter, but a baseline query of that category gone from the golden set', from: 'pass', baseline: (b) => b,
    mutate: (d) => ownSelection(keepRows(d, (r) => catOf(r) === 'direct' && r.testCase.metadata.id !== 'fx-direct-002'), { filter: { category: ['direct'], of: 9 } }),
    expect: 2, says: /lacks 1 of the 10 queries .*\(1 direct; e\.g\. fx-direct-002\): they are no longer in the golden set \(its declared subset: category direct\)/ },
  { name: 'new queries appended to the golden set: compared on the shared ones', from: 'pass',
    baseline: (b) => resummarise(((b.queries = Object.fromEntries(Object.entries(b.queries).filter(([id]) => id !== 'fx-direct-002'))), delete b.identity.selection, b)), expect: 0, says: /gate PASSED \(exit 0\)/ },
  // Every file the gate reads is cross-checked (issue 25, point 3): the baseline
  { name: 'baseline per-query value edited (a miss made a hit)', from: 'fail', baseline: (b) => {
      const id = Object.keys(b.queries).find((k) => b.queries[k].recall_at_3 === 0)!;
      b.queries[id].recall_at_3 = 1;
      return b;
    }, expect: 2, says: /b\d+\.json: queries\["[^"]+"\]: recall_at_3 1 .* but mrr/ },
  { name: 'baseline per-query values edited consistently (recall and mrr) but not the summary', from: 'fail', baseline: (b) => {
      for (const q of Object.values(b.queries) as Doc[]) if (q.recall_at_3 === 0) Object.assign(q, { recall_at_3: 1, mrr: 1 });
      return b;
    }, expect: 2, says: /b\d+\.json: summary\.overall_recall_at_3 is 0\.625 but the per-query recall_at_3 values average 1\.0000/ },
  { name: 'baseline per-query value out of range', from: 'pass', baseline: (b) => ((b.queries[Object.keys(b.queries)[0]!].ndcg_at_10 = 1.7), b), expect: 2, says: /ndcg_at_10: expected null or a number in \[0, 1\], got 1\.7/ },
  { name: 'baseline: a category mean edited', from: 'fail', baseline: (b) => ((b.summary.categories.direct.recall_at_3 = 0.1), b), expect: 2, says: /summary\.categories\.direct\.recall_at_3 is 0\.1 but its per-query values average 1\.0000/ },
  { name: 'baseline: its regressed (hard) queries deleted', from: 'fail', baseline: (b) => {
      for (const id of Object.keys(b.queries)) if (b.queries[id].recall_at_3 === 0) delete b.queries[id];
      return b;
    }, expect: 2, says: /summary\.total_queries is 10 but the file holds 7 per-query entries/ },
  { name: 'baseline: hard queries deleted and the summary recomputed', from: 'fail', baseline: (b) => {
      for (const id of Object.keys(b.queries)) if (b.queries[id].recall_at_3 === 0) delete b.queries[id];
      return resummarise(b);
    }, expect: 2, says: /identity\.selection\.size is 10 but the file holds 7 per-query entries/ },
  { name: 'baseline: hard queries deleted, summary and selection size recomputed', from: 'fail', baseline: (b) => {
      for (const id of Object.keys(b.queries)) if (b.queries[id].recall_at_3 === 0) delete b.queries[id];
      b.identity.selection.size = 7;
      return resummarise(b);
    }, expect: 2, says: /identity\.selection\.id [0-9a-f]{16} is not the identity of the 7 query ids it holds/ },
  { name: 'baseline without a summary', from: 'pass', baseline: (b) => (delete b.summary, b), expect: 2, says: /summary: missing/ },
  // the column sums alone (promptfoo 0.121's --no-write shape: no rows)
  { name: '--no-write: one category sum edited', from: 'sums-fail', mutate: (d) => ((sums(d).recall_at_3_emotional = 1 - sums(d).recall_at_3_emotional), d), expect: 2, says: /namedScores\.(avg_)?recall_at_3_emotional .*the sums were edited/ },
  { name: '--no-write: a category count edited', from: 'sums-fail', mutate: (d) => ((sums(d).n_conceptual += 1), d), expect: 2, says: /n_conceptual is 4 but namedScoresCount\.n_conceptual says 3/ },
  { name: '--no-write: overall and category sums edited together', from: 'sums-fail', mutate: (d) => {
      const ns = sums(d);
      ns.recall_at_3 += 1;
      ns.recall_at_3_emotional += 1;
      return d;
    }, expect: 2, says: /namedScores\.\S*recall_at_3\S* .*the sums were edited or are not promptfoo's \(a --no-write file is checked by its sums alone\)/ },
  { name: '--no-write: every copy of Recall@3 edited (sums, view key, means)', from: 'sums-fail', mutate: (d) => {
      const ns = sums(d);
      ns.recall_at_3 += 1;
      ns['#1 Success@3'] += 1;
      ns.recall_at_3_emotional += 1;
      ns.avg_recall_at_3 = ns.recall_at_3 / ns.n_ranked;
      ns.avg_recall_at_3_emotional = ns.recall_at_3_emotional / ns.n_emotional;
      return d;
    }, expect: 2, says: /namedScores\.recall_at_3\S* .*the sums were edited/ },
  { name: '--no-write: routing sums edited', from: 'sums-pass', mutate: (d) => ((sums(d).routing_ok_technique_boundary = 0), d), expect: 2, says: /routing_ok is 10 but the categories' routing_ok_<category> add up to 9/ },
];

describe('gate mutations through `rankgate gate` (real promptfoo runs as the starting points)', () => {
  const dir = tempDir('gate-mut');
  const files: Record<string, string> = {};
  const table: { name: string; from: string; expect: number; got: number }[] = [];
  after(() => {
    console.log(['', '| corruption | from | expected exit | got |', '|---|---|---:|---:|', ...table.map((t) => `| ${t.name} | ${t.from} | ${t.expect} | ${t.got} |`)].join('\n'));
    rmSync(dir, { recursive: true, force: true });
  });

  before(async () => {
    const floors = join(dir, 'floors.yaml');
    writeFileSync(floors, FLOORS);
    // Each run its own promptfoo config dir (helpers.ts): parallel runs on one SQLite database lose rows (the gate
    // then rightly says so, exit 2), which is not what these starting points are for.
    const env = { RANKGATE_GATE_FLOORS: floors };
    const pass = writeGateConfig(dir, 'pass', { label: 'fixture-keyword', provider: { mode: 'keyword' } });
    const fail = writeGateConfig(dir, 'fail', { label: 'fixture-hybrid' });
    const dead = writeGateConfig(dir, 'dead', { label: 'dead-url', provider: { url: `http://127.0.0.1:${await closedPort()}/api/v1/search`, preflight: false } });
    const runs: [string, string, string[], number][] = [
      ['pass', pass, [], 0],
      ['fail', fail, [], 1],
      ['nw-pass', pass, ['--no-write'], 0],
      ['nw-fail', fail, ['--no-write'], 1],
      ['dead', dead, [], 2],
      ['first3', pass, ['--filter-first-n', '3'], 2],
      ['zzz', pass, ['--filter-pattern', 'zzz'], 2],
    ];
    const out: RunResult[] = await Promise.all(runs.map(([name, cfg, extra]) => promptfooEval(cfg, join(dir, `${name}.json`), env, extra)));
    runs.forEach(([name, , , code], i) => {
      files[name] = join(dir, `${name}.json`);
      // The hook gives the same exit code as the CLI will on the unchanged file, and prints the verdict last.
      assert.equal(out[i]!.code, code, `promptfoo eval (${name}) exit\n${out[i]!.stderr.slice(-3000)}`);
      const last = (out[i]!.stdout + out[i]!.stderr).trimEnd().split('\n');
      assert.ok(last.some((l) => /^rankgate gate (PASSED|FAILED|ERROR) \(exit \d\)/.test(l)), `${name}: verdict printed`);
      if (name === 'zzz') assert.match(out[i]!.stderr, /rankgate gate ERROR \(exit 2\)[^\n]*\n(\s+(note: |on Node )[^\n]*\n)*\s+✗ no evaluated queries/, 'a 0-row run says why');
    });
    // --no-write as the installed promptfoo does it; the sums-only starting points (0.121's shape) from those runs
    assert.notEqual(NW_ROWS, null, `promptfoo ${PROMPTFOO_VERSION}: its --no-write shape is not verified (src/results/nowrite.ts rowsUnderNoWrite)`);
    for (const nw of ['nw-pass', 'nw-fail']) {
      const d = JSON.parse(readFileSync(files[nw]!, 'utf8'));
      assert.equal(d.results.results.length, NW_ROWS ? 10 : 0, `promptfoo ${PROMPTFOO_VERSION} keeps ${NW_ROWS ? 'every' : 'no'} row under --no-write`);
      files[nw.replace('nw', 'sums')] = join(dir, `${nw.replace('nw', 'sums')}.json`);
      writeFileSync(files[nw.replace('nw', 'sums')]!, JSON.stringify(NW_ROWS ? sumsOnly(d) : d));
    }
    const b = await rankgate(['gate', files.pass!, '--floors', floors, '--update-baseline', '--baseline', join(dir, 'baseline.json')]);
    assert.equal(b.code, 0, b.stderr);
  });

  it(`applies ${MUTATIONS.length} corruptions; each exits as the contract says, and none of the failing file's exits 0`, async () => {
    assert.ok(MUTATIONS.length >= 30);
    const failures: string[] = [];
    const runOne = async (m: Mutation, i: number) => {
      let file = files[m.from]!;
      if (m.mutate) {
        const d = JSON.parse(readFileSync(file, 'utf8'));
        const r = m.mutate(d);
        file = join(dir, `m${i}.json`);
        writeFileSync(file, typeof r === 'string' ? r : JSON.stringify(r));
      }
      const floors = join(dir, `f${i}.yaml`);
      writeFileSync(floors, m.floors ?? FLOORS);
      const args = ['gate', file, '--floors', floors, ...(m.args ?? [])];
      if (m.baseline) {
        // re-sealed after the edit (src/gate/baseline.ts sealOf), so each case reaches the check it is about; keepSeal:
        // the edit as an attacker makes it, without recomputing the seal
        const edited = m.baseline(JSON.parse(readFileSync(join(dir, 'baseline.json'), 'utf8')));
        const b = m.keepSeal ? edited : sealBaseline(edited);
        const bf = join(dir, `b${i}.json`);
        writeFileSync(bf, JSON.stringify(b));
        args.push('--baseline', bf);
      }
      const r = await rankgate(args);
      table[i] = { name: m.name, from: m.from, expect: m.expect, got: r.code };
      const text = r.stdout + r.stderr;
      if (r.code !== m.expect) failures.push(`${m.name}: expected exit ${m.expect}, got ${r.code}\n${text.slice(-1500)}`);
      else if (m.says && !m.says.test(text)) failures.push(`${m.name}: output does not match ${m.says}\n${text.slice(-1500)}`);
      if (/\n\s+at /.test(r.stderr)) failures.push(`${m.name}: stack trace printed`);
      if (m.from.endsWith('fail') && r.code === 0) failures.push(`${m.name}: the failing file exited 0`);
    };
    for (let i = 0; i < MUTATIONS.length; i += 4) await Promise.all(MUTATIONS.slice(i, i + 4).map((m, j) => runOne(m, i + j)));
    assert.deepEqual(failures, []);
  });

  it('--update-baseline refuses a partial, filtered, sharded or errored run whatever the flags, in one line, keeping the old baseline', async () => {
    const floors = join(dir, 'floors.yaml');
    const base = JSON.parse(readFileSync(files.pass!, 'utf8'));
    const made = (name: string, d: Doc) => {
      const f = join(dir, `ub-${name}.json`);
      writeFileSync(f, JSON.stringify(d));
      return f;
    };
    const cases: [string, string, string[], RegExp][] = [
      ['first 3 (real --filter-first-n run), --allow-partial', files.first3!, ['--allow-partial'], /partial run: 3 of the 10 queries of its golden selection/],
      ['first 3, RANKGATE_ALLOW_PARTIAL in gate.yaml', files.first3!, [], /partial run: 3 of the 10/],
      ['declared category filter', made('cat', ownSelection(keepRows(structuredClone(base), (r) => catOf(r) === 'direct'), { filter: { category: ['direct'], of: 10 } })), ['--allow-partial'], /filtered golden selection \(category direct: 2 of 10 queries\)/],
      ['one shard', made('shard', ((d: Doc) => {
        for (const r of d.results.results) r.testCase.metadata.selection = { ...r.testCase.metadata.selection, shard: { index: 1, count: 1 }, shardSize: d.results.results.length };
        return d;
      })(structuredClone(base))), [], /one shard \(1\/1\) of the golden selection/],
      ['an errored row, under max_error_rate', made('err', (() => {
        const d = structuredClone(base);
        Object.assign(rowOf(d, 'fx-adversarial-001'), { error: 'search failed: timed out', success: false, namedScores: {}, response: { error: 'search failed: timed out' } });
        return resync(d);
      })()), ['--floors', join(dir, 'lenient-errors.yaml')], /1 of 10 queries of 'fixture-keyword' errored/],
    ];
    writeFileSync(join(dir, 'lenient-errors.yaml'), FLOORS + 'max_error_rate: 0.5\nallow_partial: true\n');
    writeFileSync(join(dir, 'lenient.yaml'), FLOORS + 'allow_partial: true\n');
    for (const [what, file, extra, re] of cases) {
      const target = join(dir, `never-ub-${what.replace(/\W+/g, '-')}.json`);
      const fl = extra.includes('--floors') ? [] : ['--floors', what.includes('gate.yaml') ? join(dir, 'lenient.yaml') : floors];
      const r = await rankgate(['gate', file, ...fl, ...extra, '--update-baseline', '--baseline', target]);
      assert.equal(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line: ${r.stderr}`);
      assert.match(r.stderr, /--update-baseline: .*was left as it was/, what);
      assert.match(r.stderr, re, what);
      assert.ok(!existsSync(target), `${what}: no baseline written`);
    }
    // a complete run of a golden set whose hard queries were deleted does not replace the baseline that has them,
    // named with --baseline or as gate.yaml's regression.baseline (the old queries are never removed)
    const shrunk = made('shrunk', ownSelection(keepRows(structuredClone(base), (r) => !hard(r))));
    const kept = join(dir, 'kept-baseline.json');
    const keptText = readFileSync(join(dir, 'baseline.json'), 'utf8');
    writeFileSync(kept, keptText);
    writeFileSync(join(dir, 'with-baseline.yaml'), `${FLOORS}regression:\n  baseline: ${kept}\n`);
    for (const args of [['--floors', floors, '--baseline', kept], ['--floors', join(dir, 'with-baseline.yaml')]]) {
      const r = await rankgate(['gate', shrunk, ...args, '--update-baseline']);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /--update-baseline: the run lacks 3 of the 10 queries of the baseline it would replace \(2 conceptual, 1 emotional; .*old queries are never removed .*delete .*kept-baseline\.json first/);
      assert.equal(readFileSync(kept, 'utf8'), keptText);
    }
    // a baseline that is not evidence (edited) is replaced by --update-baseline from a complete run, not kept
    const edited = JSON.parse(readFileSync(join(dir, 'baseline.json'), 'utf8'));
    edited.summary.total_queries = 3;
    const target = join(dir, 'edited-baseline.json');
    writeFileSync(target, JSON.stringify(edited));
    const r = await rankgate(['gate', files.pass!, '--floors', floors, '--update-baseline', '--baseline', target]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /note: the baseline to be replaced is not compared: .*edited-baseline\.json: summary\.total_queries is 3 but the file holds 10/);
    assert.equal(JSON.parse(readFileSync(target, 'utf8')).summary.total_queries, 10);
    // replacing an existing baseline (gate.yaml's): never "No baseline: this is the first run"
    const again = await rankgate(['gate', files.pass!, '--floors', join(dir, 'with-baseline.yaml'), '--update-baseline']);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stdout + again.stderr, /first run/);
    assert.match(again.stdout, /Nothing compared: regression check not run: --update-baseline replaces the baseline \S*kept-baseline\.json with this run \(not compared with it\)/);
  });

  it('--update-baseline refuses a 0-row run, a --no-write run and a dead-service run, keeping the old baseline', async () => {
    const floors = join(dir, 'floors.yaml');
    for (const name of ['zzz', 'nw-pass', 'dead']) {
      const target = join(dir, `never-${name}.json`);
      const r = await rankgate(['gate', files[name]!, '--floors', floors, '--update-baseline', '--baseline', target]);
      assert.equal(r.code, 2, `${name}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${name}: one line: ${r.stderr}`);
      assert.match(r.stderr, /--update-baseline: .*was left as it was/);
      // promptfoo 0.121's --no-write run has no rows; 0.123's has them, and they say promptfoo did not keep the run
      if (name === 'nw-pass') assert.match(r.stderr, NW_ROWS ? /a `promptfoo eval --no-write` run \(its rows say so/ : /the results hold no per-query rows/);
      assert.ok(!existsSync(target), `${name}: no baseline written`);
      // an existing baseline is left byte for byte
      const existing = join(dir, 'baseline.json');
      const before = readFileSync(existing, 'utf8');
      const again = await rankgate(['gate', files[name]!, '--floors', floors, '--update-baseline', '--baseline', existing]);
      assert.equal(again.code, 2, `${name}: ${again.stderr}`);
      assert.match(again.stderr, /--update-baseline: .*was left as it was/);
      assert.equal(readFileSync(existing, 'utf8'), before, `${name}: the existing baseline is unchanged`);
    }
  });

  it(`the afterAll hook's re-gate record of a --no-write run (promptfoo ${PROMPTFOO_VERSION}) says so, and is never a baseline`, async () => {
    const record = join(dir, 'nw-pass.json.rankgate.jsonl');
    // the hook writes its record only when promptfoo hands it rows: 0.121 keeps none under --no-write
    assert.equal(existsSync(record), NW_ROWS, `promptfoo ${PROMPTFOO_VERSION}: a re-gate record ${NW_ROWS ? 'is' : 'is not'} written`);
    if (!existsSync(record)) return;
    assert.equal(JSON.parse(readFileSync(record, 'utf8').split('\n')[0]!).rankgate_regate.written, false);
    assert.equal(JSON.parse(readFileSync(join(dir, 'pass.json.rankgate.jsonl'), 'utf8').split('\n')[0]!).rankgate_regate.written, undefined, 'a kept run says nothing');
    const target = join(dir, 'never-record.json');
    const r = await rankgate(['gate', record, '--floors', join(dir, 'floors.yaml'), '--update-baseline', '--baseline', target]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /--update-baseline: a `promptfoo eval --no-write` run .*was left as it was/);
    assert.ok(!existsSync(target));
  });

  it('CI: a pull request that changes the baseline is said LOUD at the top of the gate and the PR comment, with the figures before and after', async () => {
    const base = join(dir, 'baseline.json');
    const head = join(dir, 'head-baseline.json');
    // the PR's copy: every miss made a hit, re-summarised and re-sealed (a consistent rewrite)
    const b = JSON.parse(readFileSync(base, 'utf8'));
    for (const q of Object.values(b.queries) as Doc[]) if (q.recall_at_3 === 0) Object.assign(q, { recall_at_3: 1, mrr: 1 });
    writeFileSync(head, JSON.stringify(sealBaseline(resummarise(b))));
    const comment = join(dir, 'head-comment.md');
    const r = await rankgate(['gate', files.pass!, '--floors', join(dir, 'floors.yaml'), '--baseline', base, '--head-baseline', head, '--comment', comment]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const line = /LOUD: this pull request CHANGES the baseline \S*head-baseline\.json: Success@3 0\.6250 -> 1\.0000, MRR@10 0\.5625 -> 0\.9375, queries 10 -> 10 \(\d+ changed\); this run is compared with the base branch's baseline/;
    assert.match(r.stdout.split('\n').find((l) => l.startsWith('LOUD')) ?? '', line);
    assert.match(r.stdout, /note: LOUD: this pull request CHANGES the baseline/, 'in the verdict too');
    assert.match(readFileSync(comment, 'utf8').split('\n')[0]!, /^> \*\*this pull request CHANGES the baseline .*Success@3 0\.6250 -> 1\.0000/);
    // the PR leaves the baseline as it is: nothing said
    const same = await rankgate(['gate', files.pass!, '--floors', join(dir, 'floors.yaml'), '--baseline', base, '--head-baseline', base]);
    assert.equal(same.code, 0);
    assert.doesNotMatch(same.stdout + same.stderr, /CHANGES the baseline/);
  });
});
