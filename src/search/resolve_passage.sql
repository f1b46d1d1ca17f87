-- Chunk ids of one variant whose content contains a verbatim substring.
-- $1 variant id, $2 LIKE pattern: '%' || substring with \ % _ escaped by a backslash || '%'
SELECT c.id
FROM book_chunks c
WHERE c.variant = $1 AND c.content LIKE $2 ESCAPE '\'
ORDER BY c.id COLLATE "C"
