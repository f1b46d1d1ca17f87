import { readFileSync, writeFileSync } from 'node:fs';

/**
 * A two-column results document for the blind review's tests: column 0 the baseline, column 1 the candidate, each
 * with a label, provider id and config whose every value is a marker string that must never reach the review page.
 */
export const MARKERS = {
  baselineLabel: 'zqBaselineLabel hybrid rrf6161',
  candidateLabel: 'zqCandidateLabel rm3 fb7717',
  providerId: 'file://providers/zqprovider-search.ts',
  baselineConfig: { mode: 'hybrid', rrfK: 6161, chunkSize: 313, embedder: 'zq-embedder-base' },
  candidateConfig: { mode: 'hybrid', rrfK: 6161, chunkSize: 313, embedder: 'zq-embedder-base', expansion: { mode: 'rm3', fbDocs: 7717, fbTerms: 7727, originalQueryWeight: 0.5151 } },
};

/** Strings of either column's configuration that must not be in the page (labels, provider id, parameters, chunk ids, scores). */
export function forbiddenStrings(): string[] {
  return [
    MARKERS.baselineLabel,
    MARKERS.candidateLabel,
    'zqBaselineLabel',
    'zqCandidateLabel',
    'zqprovider',
    '6161',
    '7717',
    '7727',
    '0.5151',
    'zq-embedder-base',
    'rm3',
    'c313:',
    '0.8765',
    'baseline',
    'candidate',
  ];
}

/**
 * The forbidden strings `text` holds. A numeric marker (6161, 0.5151, …) counts only as a number of its own, not inside
 * a longer run of digits and letters: the page's random export id and key digest are hex, and may hold "7717" by
 * chance (seen once, in the Node 24 leg).
 */
export function leaks(text: string): string[] {
  return forbiddenStrings().filter((f) =>
    /^[\d.]+$/.test(f) ? new RegExp(`(?<![\\w.])${f.replaceAll('.', '\\.')}(?![\\w])`).test(text) : text.includes(f),
  );
}

/**
 * Options: `errored` query indices whose candidate row is a provider error (promptfoo's failureReason 2, no ranking);
 * `failed` indices whose rows in both columns FAILED their assertions (failureReason 1, `error` set by promptfoo, the
 * ranking there: a review must keep them); `identical` indices whose two columns return the same hits.
 */
export function reviewResultsDoc(n = 12, opts: { errored?: number[]; failed?: number[]; identical?: number[] } = {}): unknown {
  const rows: unknown[] = [];
  const labels = [MARKERS.baselineLabel, MARKERS.candidateLabel];
  for (const promptIdx of [0, 1]) {
    for (let i = 0; i < n; i++) {
      const golden = { id: `q${String(i).padStart(2, '0')}`, query: `how do lamps work ${i}`, language: 'en', category: 'direct', expected: [{ chunk_id: `c313:doc${i}#0`, grade: 3, relevant: true }] };
      const errored = promptIdx === 1 && opts.errored?.includes(i);
      const failed = opts.failed?.includes(i);
      const col = opts.identical?.includes(i) ? 0 : promptIdx;
      const hits = Array.from({ length: 6 }, (_, k) => ({
        rank: k + 1,
        chunkId: `c313:doc${i}-${col}-${k}#${k}`,
        documentId: `doc${i}-${col}-${k}`,
        score: 0.8765 - k / 100,
        path: `notes/lamp-${i}-${col}-${k}.md`,
        title: `Lamp note ${i}.${col}.${k}`,
        content: `Text of lamp note ${i}.${col}.${k} <b>bold?</b> & more.`,
        channels: { keyword: { rank: k + 1, score: 12.5 }, vector: { rank: k + 2, score: 0.8765 } },
      }));
      rows.push({
        promptIdx,
        testIdx: i,
        success: !errored && !failed,
        ...(failed && !errored ? { failureReason: 1, error: 'candidate_generation_miss: no relevant reference returned: expected c313:doc (grade 3)' } : {}),
        latencyMs: 5 + i,
        testCase: { metadata: { golden } },
        provider: { id: MARKERS.providerId, label: labels[promptIdx] },
        ...(errored ? { failureReason: 2, error: 'provider error: service down', response: { error: 'service down' } } : {}),
        ...(errored
          ? {}
          : {
              response: {
                output: { ids: hits.map((h) => h.chunkId), hits, routing: { route: 'search', safety: false, reasons: [] }, practice_bridge: false, safety: false, latencyMs: 5 + i },
              },
            }),
      });
    }
  }
  return {
    evalId: 'eval-review-test',
    results: { timestamp: '2026-11-26T00:00:00Z', prompts: labels.map((l) => ({ provider: l })), results: rows },
    config: {
      providers: [
        { id: MARKERS.providerId, label: labels[0], config: MARKERS.baselineConfig },
        { id: MARKERS.providerId, label: labels[1], config: MARKERS.candidateConfig },
      ],
    },
  };
}

/**
 * A two-column JSONL results file from a real eval's results (the demo's compact rows, as promptfoo wrote them): column
 * 0 the rows as they are, column 1 the same rows with ranks 1-5 reversed (so pairs differ and the expected documents
 * move). Returns the file and, per query id, the 0-based shown positions (per column) of the hits the row kept whole
 * (longer than the shown cut: they matched a golden reference), i.e. the expected documents.
 */
export function realTwoColumnResults(resultsJson: string, dir: string): { file: string; expected: Map<string, { baseline: Set<number>; candidate: Set<number> }> } {
  const rows = (JSON.parse(readFileSync(resultsJson, 'utf8')) as { results: { results: Record<string, any>[] } }).results.results;
  const lines: string[] = [];
  const expected = new Map<string, { baseline: Set<number>; candidate: Set<number> }>();
  for (const [col, label] of [[0, 'A demo'], [1, 'B top 5 reversed']] as const) {
    for (const row of rows) {
      const r = JSON.parse(JSON.stringify(row));
      r.promptIdx = col;
      r.provider = { ...(r.provider ?? {}), label };
      const h = r.response?.metadata?.harness;
      if (col === 1 && h) for (const x of h.hits) if (x.rank <= 5) x.rank = 6 - x.rank;
      const id = r.testCase.metadata.golden.id as string;
      const e = expected.get(id) ?? expected.set(id, { baseline: new Set(), candidate: new Set() }).get(id)!;
      for (const x of h?.hits ?? []) if (x.rank <= 5 && String(x.content ?? '').replace(/\s+/g, ' ').trim().length > 300) (col === 0 ? e.baseline : e.candidate).add(x.rank - 1);
      lines.push(JSON.stringify(r));
    }
  }
  const file = `${dir}/results.jsonl`;
  writeFileSync(file, lines.join('\n') + '\n');
  return { file, expected };
}
