-- Contents and metadata of the fused top-K chunks of one variant.
-- $1 variant id, $2 chunk ids
SELECT c.id, c.document, c.content, c.path, c.book_slug, c.chapter, c.language
FROM book_chunks c
WHERE c.variant = $1 AND c.id = ANY($2::text[])
