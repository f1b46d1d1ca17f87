-- bench/search.ts's equality oracle: src/search/keyword_bm25.sql as it was before the threshold CTE was
-- MATERIALIZED (commit 0dbeaf9), kept verbatim below this header. The bench checks, for every query, that the
-- service's keyword candidates equal this query's rows (ids in order, scores to 1e-9).
-- Keyword channel, BM25 over the postings table of one index variant (Lucene/Okapi BM25):
--   score(d, q) = sum over query terms t in d of
--     idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
--   idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
-- All arithmetic in float8 (a bare 0.5 would make it numeric: exact but ~10x slower).
-- Query terms: the distinct lexemes of to_tsvector(<config>, query); tf and |d| come from the stored tsvector.
-- $1 variant id, $2 regconfig, $3 query text, $4 k1, $5 b, $6 limit,
-- $7 language, $8 book slug, $9 path LIKE pattern (escaped prefix || '%'), $10 tags (all required)
WITH q AS (
  SELECT DISTINCT u.lexeme AS term
  FROM unnest(to_tsvector($2::regconfig, $3::text)) AS u
),
st AS (
  SELECT n, avgdl FROM bm25_stats WHERE variant = $1
),
scored AS (
  SELECT p.chunk,
         sum(ln(1 + (st.n - t.df + 0.5::float8) / (t.df + 0.5::float8))
             * p.tf * ($4::float8 + 1)
             / (p.tf + $4::float8 * (1 - $5::float8 + $5::float8 * p.doc_len / st.avgdl))) AS score
  FROM q
  JOIN bm25_terms t ON t.variant = $1 AND t.term = q.term
  JOIN bm25_postings p ON p.variant = $1 AND p.term = q.term
  CROSS JOIN st
  GROUP BY p.chunk
),
-- Without filters only the rows that can reach the top $6 are joined to book_chunks: those scoring at
-- least the $6-th best score minus 1e-9 (a superset of every row whose score rounded to 1e-9 ties it).
thr AS (
  SELECT CASE WHEN $7::text IS NULL AND $8::text IS NULL AND $9::text IS NULL AND $10::text[] IS NULL
              THEN (SELECT score FROM scored ORDER BY score DESC OFFSET $6 - 1 LIMIT 1) END AS t
)
SELECT c.id, s.score
FROM scored s
CROSS JOIN thr
JOIN book_chunks c ON c.key = s.chunk
WHERE (thr.t IS NULL OR s.score >= thr.t - 1e-9)
  AND ($7::text IS NULL OR c.language = $7 OR c.language LIKE $7 || '-%')
  AND ($8::text IS NULL OR c.book_slug = $8)
  AND ($9::text IS NULL OR c.path LIKE $9 ESCAPE '\')
  AND ($10::text[] IS NULL OR EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document AND d.tags @> $10::text[]))
ORDER BY round(s.score::numeric, 9) DESC, c.id COLLATE "C"
LIMIT $6
