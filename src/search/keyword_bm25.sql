-- Keyword channel, BM25 over the postings table of one index variant (Lucene/Okapi BM25):
--   score(d, q) = sum over query terms t in d of
--     idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
--   idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
-- All arithmetic in float8 (a bare 0.5 would make it numeric: exact but ~10x slower).
-- Query terms: the distinct lexemes of to_tsvector(<config>, query), each of weight 1; tf and |d| come from the
-- stored tsvector.
-- A weighted query (RM3's expanded query, src/search/expand.ts) gives its terms and weights instead ($11, $12):
--   score(d, q) = sum over terms t of q in d of  w(t) * [the BM25 term score above]
-- which is how Lucene scores Anserini's RM3 query (a BooleanQuery of SHOULD TermQuery(t) boosted by w(t) under BM25).
-- $1 variant id, $2 regconfig, $3 query text, $4 k1, $5 b, $6 limit,
-- $7 language, $8 book slug, $9 path LIKE pattern (escaped prefix || '%'), $10 tags (all required),
-- $11 weighted terms (text[], or NULL: the query text's lexemes), $12 their weights (float8[])
WITH q AS (
  SELECT DISTINCT u.lexeme AS term, 1::float8 AS weight
  FROM unnest(to_tsvector($2::regconfig, $3::text)) AS u
  WHERE $11::text[] IS NULL
  UNION ALL
  SELECT w.term, w.weight
  FROM unnest($11::text[], $12::float8[]) AS w(term, weight)
  WHERE $11::text[] IS NOT NULL
),
st AS (
  SELECT n, avgdl FROM bm25_stats WHERE variant = $1
),
scored AS (
  SELECT p.chunk,
         sum(q.weight * ln(1 + (st.n - t.df + 0.5::float8) / (t.df + 0.5::float8))
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
-- MATERIALIZED: computed once. Inlined, the planner evaluates the threshold subquery once per reference (two
-- top-N sorts of every scored row instead of one: ~40% of this query's time on PGlite at 100k chunks).
thr AS MATERIALIZED (
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
