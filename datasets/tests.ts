/**
 * promptfoo test loader: golden set(s) -> TestCases.
 *
 *   tests: file://datasets/tests.ts                       # default: datasets/golden/golden-set-en.json
 *   tests:
 *     - path: file://datasets/tests.ts
 *       config: { golden: [datasets/golden/golden-set-es.json], language: es, category: direct, tag: fear }
 *
 * promptfoo imports this file and calls the default export with the `config` object (or undefined).
 * Environment variables override the config: RANKGATE_GOLDEN (comma-separated paths, any supported
 * format), RANKGATE_LANG (code(s) or `all`), RANKGATE_CATEGORY, RANKGATE_TAG (comma lists).
 * Each TestCase: one var { query } (the matrix shows the query and the outputs), ground truth and the id,
 * category and language in metadata { id, category, language, tags, golden } (filters: --filter-metadata).
 */
import { mergeSelection, selectQueries, toTestCases, type GoldenTestCase, type Selection } from '../src/golden/promptfoo.ts';

export async function generateTests(config?: Selection): Promise<GoldenTestCase[]> {
  return toTestCases(selectQueries(mergeSelection(config)));
}

export default generateTests;
