/**
 * Golden queries -> promptfoo test cases: the conversion, which depends on the golden model only.
 *
 * TestCase shape (the cross-team contract):
 *   { vars: { query },                                               the only var: `promptfoo view` shows one column per var
 *     metadata: { id, category, language, tags: "<comma list>", golden: <GoldenQuery>,
 *                 selection: { id, size, files, filter?, shard?, shardSize? } } }
 * No description (promptfoo's view would give it a column repeating the query); id, category and language are
 * metadata: filter on them with `--filter-metadata category=emotional` or the view's metadata filter.
 * Ground truth stays in metadata: array-valued vars would be expanded into one test per element.
 * Which queries and files make a selection: src/golden/promptfoo.ts.
 */
import { createHash } from 'node:crypto';
import type { GoldenQuery } from './schema.ts';

export interface SelectionIdentity {
  /** first 16 hex digits of sha256 of the sorted query ids joined by "\n" */
  id: string;
  /** number of queries */
  size: number;
}

export interface Shard {
  /** 1-based */
  index: number;
  count: number;
}

/**
 * A declared filter (RANKGATE_LANG / RANKGATE_CATEGORY / RANKGATE_TAG or the loader config) that left queries of the
 * selected files out: the values asked for and `of`, the number of queries in the files before filtering. Absent when
 * nothing was filtered out. The gate reads it: a filtered run is compared with the baseline on its own queries and said
 * "partial"; a baseline is never written from it.
 */
export interface SelectionFilter {
  language?: string[];
  category?: string[];
  tag?: string[];
  of: number;
}

export interface SelectionMeta extends SelectionIdentity {
  /** golden files, repo-relative when inside this repository */
  files: string[];
  filter?: SelectionFilter;
  shard?: Shard;
  /** queries in this shard */
  shardSize?: number;
}

export interface GoldenTestCase {
  vars: { query: string };
  metadata: { id: string; category: string; language: string; tags: string; golden: GoldenQuery; selection?: SelectionMeta; baseGolden?: GoldenQuery };
}

/** The identity of a golden selection: ids sorted (code-unit order), joined by "\n", sha256, first 16 hex. */
export function selectionIdentity(queries: readonly { id: string }[]): SelectionIdentity {
  const ids = queries.map((q) => q.id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { id: createHash('sha256').update(ids.join('\n')).digest('hex').slice(0, 16), size: ids.length };
}

export function toTestCase(q: GoldenQuery, selection?: SelectionMeta): GoldenTestCase {
  return {
    vars: { query: q.query },
    metadata: { id: q.id, category: q.category, language: q.language, tags: q.tags.join(','), golden: q, ...(selection ? { selection } : {}) },
  };
}

export function toTestCases(qs: readonly GoldenQuery[], selection?: SelectionMeta): GoldenTestCase[] {
  return qs.map((q) => toTestCase(q, selection));
}
