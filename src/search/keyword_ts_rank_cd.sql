-- Keyword channel, Postgres ts_rank_cd (cover density; no IDF: a baseline, not BM25).
-- The query is the OR of the distinct lexemes of to_tsvector(<config>, query).
-- $1 variant id, $2 regconfig, $3 query text, $4 k1 (unused), $5 b (unused), $6 limit, $7..$10 filters
WITH q AS (
  SELECT string_agg('''' || replace(replace(u.lexeme, '\', '\\'), '''', '''''') || '''', ' | ')::tsquery AS tsq,
         $4::float8 AS unused_k1, $5::float8 AS unused_b
  FROM unnest(to_tsvector($2::regconfig, $3::text)) AS u
)
SELECT c.id, ts_rank_cd(c.tsv, q.tsq)::float8 AS score
FROM book_chunks c, q
WHERE q.tsq IS NOT NULL
  AND c.variant = $1
  AND c.tsv @@ q.tsq
  AND ($7::text IS NULL OR c.language = $7 OR c.language LIKE $7 || '-%')
  AND ($8::text IS NULL OR c.book_slug = $8)
  AND ($9::text IS NULL OR c.path LIKE $9 ESCAPE '\')
  AND ($10::text[] IS NULL OR EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document AND d.tags @> $10::text[]))
ORDER BY round(ts_rank_cd(c.tsv, q.tsq)::numeric, 9) DESC, c.id COLLATE "C"
LIMIT $6
