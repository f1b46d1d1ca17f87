/**
 * Corpus model shared by the readers (src/ingest/readers.ts), the chunker (src/ingest/chunker.ts)
 * and the ingestion pipeline (src/ingest/pipeline.ts). Contract: fields may be added (optional),
 * never renamed or removed.
 */

/** One section of a document: chunks never cross a section boundary. */
export interface DocumentSection {
  /** Chapter number from a heading `## Chapter N: Title` or `## N. Title`. */
  chapterNumber?: number;
  /** Heading text of the section (without the leading `#`s), if any. */
  heading?: string;
  text: string;
}

/** A chunk supplied by the source itself (NQ prepared JSON): passed through, its id kept. */
export interface PrechunkedPassage {
  id: string;
  content: string;
  /** Source metadata of that chunk, if any. */
  metadata?: Record<string, unknown>;
}

export interface CorpusDocument {
  id: string;
  slug?: string;
  title: string;
  /** BCP 47 language tag, e.g. 'en', 'es', 'hi'. */
  language: string;
  /** Source file path (relative to the corpus root where known). */
  path?: string;
  tags: string[];
  metadata: Record<string, unknown>;
  sections: DocumentSection[];
  /** Chunks given by the source (NQ prepared JSON keeps its own ids `nq_XXXXXX`); the chunker passes them through. */
  prechunked?: PrechunkedPassage[];
}

export interface ChunkMetadata {
  bookSlug?: string;
  chapterNumber?: number;
  heading?: string;
  path?: string;
  [key: string]: unknown;
}

export interface Chunk {
  /** `<documentId>#c<chunkSize>-<index>`, or the source's own id when prechunked. */
  id: string;
  documentId: string;
  /** 0-based position within the document. */
  chunkIndex: number;
  content: string;
  language: string;
  /** o200k token count of `content`. */
  tokenCount: number;
  metadata: ChunkMetadata;
}

export type CorpusFormat = 'markdown' | 'jsonl' | 'beir' | 'nq';

export interface ChunkOptions {
  /** Token budget per chunk (o200k); standard sizes 200, 300, 500. */
  chunkSize: number;
  /** Tokens of overlap carried from the end of the previous chunk, as whole sentences. Default 0. */
  overlap?: number;
}
