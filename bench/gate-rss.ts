/**
 * Peak RSS of `rankgate gate` on a large JSONL results file (issue: evals of any size). Writes a synthetic file of N
 * rows shaped like promptfoo's (golden metadata, a 10-hit ranking with the top 3 snippets, the rank assertion's named
 * scores, a padding field standing for promptfoo's own per-row fields), then gates it in a child process and prints
 * its wall time and peak RSS (GNU time's maximum resident set). No promptfoo run: the reading and re-scoring only.
 *
 *   node --import tsx bench/gate-rss.ts [ROWS...]     (default 10000 100000)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeLinesAtomic } from '../src/util/atomic.ts';
import { selectionIdentity } from '../src/golden/testcases.ts';

const ROOT = join(import.meta.dirname, '..');
const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
const text = 'Calm is a lamp that burns steadily when the mind is still and the breath is slow, and grief is a river. ';

function* rows(n: number): Generator<string> {
  const ids = Array.from({ length: n }, (_, i) => ({ id: `q${i}` }));
  const sel = { ...selectionIdentity(ids), files: ['synthetic.json'] };
  const pad = 'p'.repeat(8000); // promptfoo's own per-row fields (gradingResult, tokenUsage, prompt...) at the demo's size
  for (let i = 0; i < n; i++) {
    const id = `q${i}`;
    const hits = Array.from({ length: 10 }, (_, r) => ({ rank: r + 1, chunkId: `d${(i + r) % 5000}#c300-${r}`, documentId: `d${(i + r) % 5000}`, score: 1 - r / 10, content: r < 3 ? text.repeat(2).slice(0, 200) : '' }));
    const golden = { id, query: `synthetic query ${i}`, language: 'en', category: ['direct', 'practice', 'concept'][i % 3], tags: [], expected: [{ doc_id: `d${(i + (i % 4)) % 5000}`, grade: 2, relevant: true }], expected_routing: 'search' };
    yield JSON.stringify({
      promptIdx: 0,
      testIdx: i,
      success: true,
      latencyMs: 5,
      provider: { id: 'file://providers/search.ts', label: 'synthetic' },
      namedScores: { n_ranked: 1, routing_ok: 1 },
      testCase: { vars: { query: golden.query }, metadata: { id, golden, selection: sel } },
      response: { output: 'readable list', metadata: { harness: { ids: hits.map((h) => h.chunkId), hits, routing: { route: 'search', safety: false, reasons: [] }, practice_bridge: false, safety: false, latencyMs: 5, integrity: [] } } },
      padding: pad,
    });
  }
}

const dir = mkdtempSync(join(tmpdir(), 'rankgate-gate-rss-'));
try {
  for (const n of sizes.length ? sizes : [10_000, 100_000]) {
    const file = join(dir, `results-${n}.jsonl`);
    writeLinesAtomic(file, rows(n));
    const mb = statSync(file).size / 1e6;
    const t0 = performance.now();
    // peak RSS of the gate process (GNU time's %M, KB)
    const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, join(ROOT, 'bin', 'rankgate.js'), 'gate', file, '--allow-partial'], { encoding: 'utf8', cwd: dir, maxBuffer: 1 << 26 });
    const peakKb = Number(r.stderr.trim().split('\n').pop());
    const secs = (performance.now() - t0) / 1000;
    const verdict = (r.stdout + r.stderr).split('\n').find((l) => /^rankgate gate (PASSED|FAILED|ERROR)/.test(l)) ?? '(no verdict line)';
    console.log(`${n} rows (${mb.toFixed(0)} MB JSONL): rankgate gate exit ${r.status} in ${secs.toFixed(1)} s, peak RSS ${(peakKb / 1024).toFixed(0)} MB · ${verdict}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
