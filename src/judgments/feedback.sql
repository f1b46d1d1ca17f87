-- rankgate golden bootstrap --from-feedback sql: explicit feedback joined with the search log, one row per feedback.
-- The shape of the legal gold-set harness (seed 004): search_relevance_feedback(search_log_id, case_law_id,
-- relevance_score) joined with search_logs(id, query, created_at). Copy this file, change the table and column
-- names to your own, and pass it with --sql FILE. The query must return the four columns named below:
--   query  the search as the user typed it        doc   the id of the document the feedback is about
--   score  the relevance, a whole number 0-3      time  when it was searched (timestamp)
-- rankgate runs it in a READ ONLY transaction through a cursor (a million rows stream in bounded memory): a role
-- with SELECT on these two tables is all it needs (docs/judgments.md "The SQL query and its role").
SELECT l.query            AS query,
       f.case_law_id::text AS doc,
       f.relevance_score  AS score,
       l.created_at       AS time
FROM search_relevance_feedback f
JOIN search_logs l ON l.id = f.search_log_id
