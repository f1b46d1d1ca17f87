/**
 * promptfoo test loader: golden set(s) -> TestCases.
 *
 *   tests: file://datasets/tests.ts                       # default: datasets/golden/golden-set-en.json
 *   tests:
 *     - path: file://datasets/tests.ts
 *       config: { golden: [datasets/golden/golden-set-es.json], language: es, category: direct, tag: fear, shard: 1/4 }
 *
 * promptfoo imports this file and calls the default export with the `config` object (or undefined).
 * Config keys: golden, language, category, tag, format, shard, judgments; any other key is refused (did-you-mean).
 * Environment variables override the config: RANKGATE_GOLDEN (comma-separated paths, any supported
 * format), RANKGATE_LANG (code(s) or `all`), RANKGATE_CATEGORY, RANKGATE_TAG (comma lists), RANKGATE_SHARD
 * (`i/N`, 1-based: this run evaluates the i-th of N disjoint shards, by a stable hash of the query id),
 * RANKGATE_JUDGMENTS (a judgments file: each test case carries its query's labels in metadata.labels, scored as the
 * `+ labels` figures beside the strict ones: docs/judgments.md).
 * Each TestCase: one var { query } (the matrix shows the query and the outputs), ground truth and the id,
 * category and language in metadata { id, category, language, tags, golden, selection } (filters: --filter-metadata).
 *
 * Bad input (missing golden file, unknown config key, duplicate ids across files, a query with nothing to
 * score, a bad shard) is a UserError. promptfoo would print it with a stack trace and exit 1 (the code of
 * a failed gate), so under the promptfoo CLI this loader prints the one line to stderr and exits 2 itself;
 * called from code (promptfoo's evaluate(), tests) it throws the UserError.
 */
import { isUserError } from '../src/errors.ts';
import { generateTestCases, type Selection } from '../src/golden/promptfoo.ts';
import type { GoldenTestCase } from '../src/golden/testcases.ts';
import { attachLabels, judgmentsSetting, outsideLine } from '../src/judgments/eval-input.ts';

/** The promptfoo CLI (`npx promptfoo eval`, `promptfoo eval`): argv[1] is its bin or dist entry point. */
function underPromptfooCli(): boolean {
  return /[\\/](promptfoo|promptfoo[\\/]dist[\\/]src[\\/]main\.js)$/.test(process.argv[1] ?? '') || /[\\/]node_modules[\\/]\.bin[\\/]promptfoo$/.test(process.argv[1] ?? '') || /[\\/]promptfoo[\\/]dist[\\/]/.test(process.argv[1] ?? '');
}

export async function generateTests(config?: Selection): Promise<GoldenTestCase[]> {
  try {
    const tests = generateTestCases(config);
    // a judgments file (RANKGATE_JUDGMENTS, or judgments: here): its labels go on the test cases (docs/judgments.md)
    const judgments = judgmentsSetting(config);
    if (judgments) {
      const { info } = await attachLabels(tests, judgments);
      const used = tests.reduce((a, t) => a + ((t.metadata as { labels?: unknown[] }).labels?.length ?? 0), 0);
      process.stderr.write(`rankgate: judgments: ${judgments}: ${used} labels of the ${tests.length} selected queries (${info.labels} in the file; review backlog ${info.pending} pending)\n`);
      const outside = outsideLine(info);
      if (outside) process.stderr.write(`rankgate: ${outside}\n`);
    }
    return tests;
  } catch (e) {
    if (isUserError(e) && underPromptfooCli()) {
      process.stderr.write(`rankgate: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
}

export default generateTests;
