-- RM3 pseudo-relevance feedback (src/search/expand.ts): what the relevance model is estimated from, in one query.
--   kind 'q': the query's terms, tf = occurrences in the query (the lexemes of to_tsvector(<config>, query), as the
--             keyword channel analyses it; Anserini's query vector counts repeated terms the same way)
--   kind 'd': the terms of each feedback chunk, tf from its stored tsvector (the same tf as bm25_postings), with the
--             term's df and the variant's chunk count n (for Anserini's df/n > 0.1 filter)
-- $1 variant id, $2 regconfig, $3 query text, $4 feedback chunk ids (text[])
SELECT 'q' AS kind, NULL::text AS chunk, u.lexeme AS term, coalesce(cardinality(u.positions), 1)::float8 AS tf,
       NULL::float8 AS df, NULL::float8 AS n
FROM unnest(to_tsvector($2::regconfig, $3::text)) AS u
UNION ALL
SELECT 'd', c.id, u.lexeme, coalesce(cardinality(u.positions), 1)::float8, t.df::float8, st.n::float8
FROM book_chunks c
CROSS JOIN LATERAL unnest(c.tsv) AS u
JOIN bm25_terms t ON t.variant = $1 AND t.term = u.lexeme
CROSS JOIN (SELECT n FROM bm25_stats WHERE variant = $1) AS st
WHERE c.variant = $1 AND c.id = ANY($4::text[])
ORDER BY 1, 2, 3
