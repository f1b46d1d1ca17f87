-- The index variant for (chunk size, embedder), with its BM25 statistics.
-- $1 chunk size, $2 embedder id
SELECT v.id, v.name, v.chunk_size, v.embedder, v.dimension, v.overlap, v.params, v.chunk_count,
       v.document_count, v.build_ms, v.corpus_id, v.corpus, s.n, s.avgdl
FROM index_variants v
LEFT JOIN bm25_stats s ON s.variant = v.id
WHERE v.chunk_size = $1 AND v.embedder = $2
