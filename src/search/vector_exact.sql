-- Vector channel, exact: a sequential scan over the variant's vectors (ground truth for HNSW).
-- score = cosine similarity = 1 - cosine distance. Ordered by the distance rounded to 1e-6 (pgvector sums
-- in float32; builds differ in the last bits), then id, so engines agree on ties.
-- $1 variant id, $2 query vector, $3 limit, $4..$7 filters
SELECT c.id, 1 - (c.embedding <=> $2::vector) AS score
FROM book_chunks c
WHERE c.variant = $1
  AND c.embedding IS NOT NULL
  AND ($4::text IS NULL OR c.language = $4 OR c.language LIKE $4 || '-%')
  AND ($5::text IS NULL OR c.book_slug = $5)
  AND ($6::text IS NULL OR c.path LIKE $6 ESCAPE '\')
  AND ($7::text[] IS NULL OR EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document AND d.tags @> $7::text[]))
ORDER BY round((c.embedding <=> $2::vector)::numeric, 6), c.id COLLATE "C"
LIMIT $3
