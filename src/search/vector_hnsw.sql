-- Vector channel, approximate: the variant's partial HNSW index on embedding::{{type}}({{dim}})
-- (created by the ingestion pipeline; {{type}} is vector up to 2,000 dimensions, halfvec up to 4,000).
-- The score is computed on the full-precision vector; halfvec only orders the candidates.
-- Run with SET LOCAL hnsw.ef_search >= limit; with filters, hnsw.iterative_scan = strict_order keeps scanning until enough rows pass them.
-- {{dim}} is the variant's dimension (an integer from index_variants), {{type}} vector or halfvec; the rest are parameters.
-- $1 variant id, $2 query vector, $3 limit, $4..$7 filters
SELECT c.id, 1 - (c.embedding::vector({{dim}}) <=> $2::vector({{dim}})) AS score
FROM book_chunks c
WHERE c.variant = $1
  AND ($4::text IS NULL OR c.language = $4 OR c.language LIKE $4 || '-%')
  AND ($5::text IS NULL OR c.book_slug = $5)
  AND ($6::text IS NULL OR c.path LIKE $6 ESCAPE '\')
  AND ($7::text[] IS NULL OR EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document AND d.tags @> $7::text[]))
ORDER BY c.embedding::{{type}}({{dim}}) <=> $2::{{type}}({{dim}})
LIMIT $3
