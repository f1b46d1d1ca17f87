-- The tsvector GIN index is built per variant after its rows are loaded (a bulk build is far faster
-- than maintaining one global GIN row by row during ingest); see src/ingest/pipeline.ts.
DROP INDEX IF EXISTS {{schema}}.book_chunks_tsv_idx;
