-- rankgate schema: one migration set for PGlite and server Postgres (driven through `pg` on both).
-- Needs the `vector` extension (pgvector >= 0.7); the migrator creates it or fails with a clear message.

CREATE TABLE IF NOT EXISTS documents (
  id        text PRIMARY KEY,
  slug      text,
  title     text NOT NULL DEFAULT '',
  language  text NOT NULL DEFAULT 'en',
  path      text,
  tags      text[] NOT NULL DEFAULT '{}',
  metadata  jsonb NOT NULL DEFAULT '{}'
);

-- One index variant per (chunk size, embedder): a sweep over either needs no re-ingest of the others.
CREATE TABLE IF NOT EXISTS index_variants (
  id              serial PRIMARY KEY,
  name            text NOT NULL UNIQUE,          -- e.g. 'c300:use-lite'
  chunk_size      integer NOT NULL,
  embedder        text NOT NULL,
  dimension       integer NOT NULL,
  overlap         integer NOT NULL DEFAULT 0,
  params          jsonb NOT NULL DEFAULT '{}',   -- chunker/text-config/hnsw parameters used
  document_count  integer NOT NULL DEFAULT 0,
  chunk_count     integer NOT NULL DEFAULT 0,
  embedded_count  integer NOT NULL DEFAULT 0,    -- vectors computed (cache misses) during the build
  build_ms        integer NOT NULL DEFAULT 0,
  built_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (chunk_size, embedder)
);

CREATE TABLE IF NOT EXISTS book_chunks (
  key          serial PRIMARY KEY,             -- compact surrogate for postings
  variant      integer NOT NULL REFERENCES index_variants(id) ON DELETE CASCADE,
  id           text NOT NULL,                  -- chunk id '<documentId>#c<size>-<index>' (or the source's own)
  document     text NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  chunk_index  integer NOT NULL,
  content      text NOT NULL,
  language     text NOT NULL,
  text_config  text NOT NULL,                  -- regconfig used for tsv ('english', 'spanish', 'hindi', 'simple')
  token_count  integer NOT NULL,
  tsv          tsvector NOT NULL,
  doc_len      integer NOT NULL,               -- BM25 document length: sum of term frequencies in tsv
  embedding    vector,                         -- dimension = index_variants.dimension; HNSW index per variant
  book_slug    text,
  chapter      integer,
  path         text,
  metadata     jsonb NOT NULL DEFAULT '{}',
  UNIQUE (variant, id)
);
CREATE INDEX IF NOT EXISTS book_chunks_tsv_idx ON book_chunks USING gin (tsv);
CREATE INDEX IF NOT EXISTS book_chunks_document_idx ON book_chunks (document);

-- SQL BM25: postings built from the stored tsvector, per variant.
CREATE TABLE IF NOT EXISTS bm25_postings (
  variant  integer NOT NULL REFERENCES index_variants(id) ON DELETE CASCADE,
  term     text NOT NULL,
  chunk    integer NOT NULL,                   -- book_chunks.key
  tf       integer NOT NULL,
  doc_len  integer NOT NULL,
  PRIMARY KEY (variant, term, chunk)
);
CREATE TABLE IF NOT EXISTS bm25_terms (
  variant  integer NOT NULL REFERENCES index_variants(id) ON DELETE CASCADE,
  term     text NOT NULL,
  df       integer NOT NULL,
  PRIMARY KEY (variant, term)
);
CREATE TABLE IF NOT EXISTS bm25_stats (
  variant  integer PRIMARY KEY REFERENCES index_variants(id) ON DELETE CASCADE,
  n        integer NOT NULL,                   -- chunks in the variant
  avgdl    double precision NOT NULL           -- mean doc_len
);

-- Embeddings by (embedder id, sha256 of the exact text): unchanged text is never re-embedded.
CREATE TABLE IF NOT EXISTS embedding_cache (
  embedder    text NOT NULL,
  sha256      text NOT NULL,
  embedding   vector NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (embedder, sha256)
);
