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

export function reviewResultsDoc(n = 12, opts: { errored?: number[] } = {}): unknown {
  const rows: unknown[] = [];
  const labels = [MARKERS.baselineLabel, MARKERS.candidateLabel];
  for (const promptIdx of [0, 1]) {
    for (let i = 0; i < n; i++) {
      const golden = { id: `q${String(i).padStart(2, '0')}`, query: `how do lamps work ${i}`, language: 'en', category: 'direct', expected: [{ chunk_id: `c313:doc${i}#0`, grade: 3, relevant: true }] };
      const errored = promptIdx === 1 && opts.errored?.includes(i);
      const hits = Array.from({ length: 6 }, (_, k) => ({
        rank: k + 1,
        chunkId: `c313:doc${i}-${promptIdx}-${k}#${k}`,
        documentId: `doc${i}-${promptIdx}-${k}`,
        score: 0.8765 - k / 100,
        path: `notes/lamp-${i}-${promptIdx}-${k}.md`,
        title: `Lamp note ${i}.${promptIdx}.${k}`,
        content: `Text of lamp note ${i}.${promptIdx}.${k} <b>bold?</b> & more.`,
        channels: { keyword: { rank: k + 1, score: 12.5 }, vector: { rank: k + 2, score: 0.8765 } },
      }));
      rows.push({
        promptIdx,
        testIdx: i,
        success: !errored,
        latencyMs: 5 + i,
        testCase: { metadata: { golden } },
        provider: { id: MARKERS.providerId, label: labels[promptIdx] },
        ...(errored ? { error: 'provider error: service down', response: { error: 'service down' } } : {}),
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
