/**
 * Caps on query text, shared by the golden readers (src/golden), the search service and its expansion stage
 * (src/search) and the embedders' query path: a query is read, expanded and embedded only up to these, so no text a
 * golden file or a model gives can make one query's embedding take minutes (USE-lite's time grows faster than the
 * text: 10,000 characters embed in ~0.13 s, 20,000 in ~0.6 s, 40,000 in ~5 s, 120,000 in ~42 s on a CI-class core).
 *
 * Why 10,000 characters: real search queries are short (Natural Questions ~50 characters, MS MARCO ~35); the longest
 * of the common benchmarks are BEIR ArguAna's, whole arguments used as queries (~190 words, ~1,100 characters on
 * average, a few several thousand). 10,000 holds every one of them with room to spare.
 */

/** Longest query text (characters): a golden query, each golden `expansion:` string, a model's rewrite or HyDE passage. */
export const MAX_QUERY_CHARS = 10_000;

/** Most `expansion:` strings one golden query may hold (each runs as its own query through both channels). */
export const MAX_EXPANSION_STRINGS = 20;

/** "12,345" */
export const count = (n: number) => n.toLocaleString('en-US');
