-- Every index variant knows the corpus it was built from: corpus_id = sha256 over the sorted document ids and
-- the hashes of their contents (src/ingest/identity.ts), corpus = where it was read from (repo-relative when
-- inside the working directory). NULL: built by a rankgate older than this migration (corpus unknown).
ALTER TABLE index_variants ADD COLUMN IF NOT EXISTS corpus_id text;
ALTER TABLE index_variants ADD COLUMN IF NOT EXISTS corpus text;
