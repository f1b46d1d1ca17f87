/**
 * The one canonical golden-set model. Every outside format (DES-058 JSON, blind-test YAML, gold-set
 * JSONL, Natural Questions, BEIR, TREC) is read into this and written back from it.
 *
 * Grades follow the blind-test rule: 3 direct answer, 2 strong supporting context, 1 related,
 * 0 irrelevant (negative grades are kept as given, e.g. TREC's -1, and give zero gain).
 * `relevant` says whether a reference counts for the binary measures (Recall@k, MRR, success):
 * each reader sets it by its format's rule (DES-058: relevance "high" only; blind-test: listed in
 * expected_paths; qrels: grade >= 1; NQ: the answer chunk). nDCG uses `grade`.
 */
import { z } from 'zod';

export const KNOWN_CATEGORIES = [
  'direct',
  'conceptual',
  'emotional',
  'metaphorical',
  'technique_boundary',
  'dark_night',
  'adversarial',
] as const;

export const ROUTINGS = ['search', 'practice_bridge', 'no_results'] as const;

export const ReferenceSchema = z
  .object({
    chunk_id: z.string().min(1).optional(),
    doc_id: z.string().min(1).optional(),
    path: z.string().min(1).optional(),
    passage_substring: z.string().min(1).optional(),
    book_slug: z.string().min(1).optional(),
    chapter_number: z.number().int().optional(),
    grade: z.number().int(),
    relevant: z.boolean(),
    answer_contains: z.string().min(1).optional(),
    /** true when the source gave no grade and the reader inferred it (blind-test YAML paths without a
     * `relevance` entry): the writer of that format then leaves it out again. */
    implied_grade: z.boolean().optional(),
    extra: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((r) => r.chunk_id ?? r.doc_id ?? r.path ?? r.passage_substring, {
    message: 'a reference needs one of chunk_id, doc_id, path or passage_substring',
  });
export type Reference = z.infer<typeof ReferenceSchema>;

export const FiltersSchema = z
  .object({
    folder: z.string().optional(),
    tags: z.array(z.string()).optional(),
    language: z.string().optional(),
    book: z.string().optional(),
  })
  .strict();
export type Filters = z.infer<typeof FiltersSchema>;

export const GoldenQuerySchema = z.object({
  id: z.string().min(1),
  query: z.string().refine((q) => q.trim().length > 0, { message: 'must not be empty' }),
  language: z.string().regex(/^[a-z]{2}$/, 'an ISO 639-1 code such as en, es, hi'),
  category: z.string().min(1),
  tags: z.array(z.string()).default([]),
  /** Named slices beyond category/language/tags, e.g. gold-set JSONL's practice_area and corpus. */
  slices: z.record(z.string(), z.string()).default({}),
  expected: z.array(ReferenceSchema).default([]),
  expected_routing: z.enum(ROUTINGS).default('search'),
  retrieval_intent: z.string().optional(),
  /** true when the query is crisis-adjacent and the search must raise the safety flag. */
  expect_safety: z.boolean().optional(),
  filters: FiltersSchema.optional(),
  expansion: z.array(z.string()).optional(),
  intent: z.string().optional(),
  notes: z.string().optional(),
  source: z.enum(['bootstrap', 'reviewed']).optional(),
  /** Fields of the source format that the model has no place for: kept, written back. */
  extra: z.record(z.string(), z.unknown()).optional(),
  /**
   * Where the entry came from, so the writer of the same format reproduces it: `format` (des058, yaml,
   * jsonl, nq-csv, nq-json, beir, trec), `derived` (canonical fields the reader filled in because the
   * format has no such field, e.g. `id` or `language` of a blind-test YAML entry; not written back) and
   * `raw` (original spellings of mapped values, e.g. gold-set `source: "chair"`).
   */
  origin: z
    .object({
      format: z.string(),
      derived: z.array(z.string()).optional(),
      raw: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});
export type GoldenQuery = z.infer<typeof GoldenQuerySchema>;

export const GoldenSetSchema = z.array(GoldenQuerySchema);
export type GoldenSet = z.infer<typeof GoldenSetSchema>;

/** Formats with an expected_routing field; the others (NQ, BEIR, TREC) never state a routing expectation. */
const ROUTING_FORMATS = new Set(['des058', 'yaml', 'jsonl']);

/**
 * Whether the golden set states this query's expected_routing (rather than the model's default `search`):
 * given in the entry of a format that has the field, or set in code (no `origin`). Scoring checks routing
 * only where this holds.
 */
export function routingStated(q: Pick<GoldenQuery, 'origin'>): boolean {
  if (!q.origin) return true;
  return ROUTING_FORMATS.has(q.origin.format) && !(q.origin.derived?.includes('expected_routing') ?? false);
}

/** Whether a query has anything to score: an expected reference, a stated expected_routing, or expect_safety. */
export function hasExpectation(q: Pick<GoldenQuery, 'origin' | 'expected' | 'expect_safety'>): boolean {
  return q.expected.length > 0 || q.expect_safety !== undefined || routingStated(q);
}

/** Longest id (query or reference) a golden set may hold. */
export const MAX_ID_LENGTH = 512;

/** Why an id cannot be used (control character, too long), or undefined when it is fine. */
export function badId(id: string): string | undefined {
  const m = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/.exec(id);
  if (m) return `contains a control character (U+${m[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}${CONTROL_NAMES[m[0]] ? `, ${CONTROL_NAMES[m[0]]}` : ''}), expected an id without tabs, newlines or other control characters`;
  if (id.length > MAX_ID_LENGTH) return `is ${id.length} characters long, expected at most ${MAX_ID_LENGTH}`;
  return undefined;
}

const CONTROL_NAMES: Record<string, string> = { '\n': 'newline', '\r': 'carriage return', '\t': 'tab', '\u0000': 'NUL' };
