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

/** How a format spells what makes a query checkable, for the "nothing to score" message. */
export interface ExpectationNames {
  /** a relevant reference, e.g. `a passage with relevance "high"` */
  relevant: string;
  /** the safety expectation, e.g. `safety_interstitial: true`; undefined for formats without one */
  safety?: string;
}

/**
 * Why rankgate can score or check nothing of this query (a reason for the message), or undefined when it can.
 * A query is checkable when it has
 *   - a RELEVANT reference: Recall@k, MRR, nDCG and the judge all need one (graded-only references, e.g. DES-058
 *     "partial" passages or blind-test `relevance:` paths outside expected_paths, score nothing on their own:
 *     src/results/score.ts scoreRanking), or
 *   - a stated expected_routing of practice_bridge or no_results (a pass/fail routing check: technique-boundary and
 *     adversarial queries), or
 *   - expect_safety: true (the safety flag is checked).
 * Whatever else the entry states does not make it checkable: an expected_routing of `search` alone only says
 * "some results come back" (every non-empty ranking passes; the DES-058 spec gives a search query 1-3 expected
 * passages), expect_safety: false is never checked, and a retrieval_intent, notes or tags score nothing.
 */
export function unscorableReason(q: Pick<GoldenQuery, 'origin' | 'expected' | 'expected_routing' | 'expect_safety'>, names: ExpectationNames = GENERIC_NAMES): string | undefined {
  if (q.expected.some((r) => r.relevant)) return undefined;
  const stated = routingStated(q);
  if (stated && (q.expected_routing === 'practice_bridge' || q.expected_routing === 'no_results')) return undefined;
  if (q.expect_safety === true) return undefined;
  const why: string[] = [];
  const n = q.expected.length;
  why.push(n ? `${n} reference${n > 1 ? 's' : ''}, none relevant: graded-only references score nothing on their own` : 'no reference');
  if (stated) why.push(`expected_routing '${q.expected_routing}' only says results come back`);
  if (q.expect_safety === false) why.push('expect_safety false is never checked');
  const want = [names.relevant];
  if (q.origin === undefined || ROUTING_FORMATS.has(q.origin.format)) want.push('an expected_routing of practice_bridge or no_results');
  if (names.safety) want.push(names.safety);
  const list = want.length > 1 ? `one of: ${want.join('; ')}` : want[0];
  return `nothing to score (${why.join('; ')}), expected ${list} (a query without a checkable expectation would pass unscored)`;
}

const GENERIC_NAMES: ExpectationNames = { relevant: 'a relevant reference', safety: 'expect_safety: true' };

/** Whether rankgate can score or check anything of this query (see unscorableReason). */
export function hasExpectation(q: Pick<GoldenQuery, 'origin' | 'expected' | 'expected_routing' | 'expect_safety'>): boolean {
  return unscorableReason(q) === undefined;
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
