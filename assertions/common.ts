/** Glue shared by the assertion files: read the golden query, the provider output and metadata from promptfoo's context. */
import { GoldenQuerySchema, type GoldenQuery } from '../src/golden/schema.ts';
import { parseOutput } from '../src/results/score.ts';
import type { HarnessMetadata, HarnessOutput } from '../src/results/types.ts';

export interface AssertionContext {
  vars?: Record<string, unknown>;
  test?: { metadata?: Record<string, unknown>; description?: string };
  config?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  providerResponse?: { metadata?: Record<string, unknown> };
}

export interface GradingResult {
  pass: boolean;
  score: number;
  reason: string;
  namedScores?: Record<string, number>;
  metadata?: Record<string, unknown>;
}

/** The golden query of the test (metadata.golden from datasets/tests.ts), validated. Throws when absent. */
export function goldenFrom(context: AssertionContext): GoldenQuery {
  const raw = context.test?.metadata?.golden;
  if (raw === undefined) {
    throw new Error(
      `test ${context.test?.description ?? JSON.stringify(context.vars?.query ?? '')} has no metadata.golden (load tests with file://datasets/tests.ts)`,
    );
  }
  const r = GoldenQuerySchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new Error(`metadata.golden.${i.path.join('.') || '(root)'} of test ${context.test?.description ?? ''}: ${i.message}`);
  }
  return r.data;
}

/** The structured ranking of the row: metadata.harness (readable-text output), or the output itself (older form). */
export function outputFrom(output: unknown, context?: AssertionContext): HarnessOutput {
  return parseOutput(output, context ? metadataFrom(context) : undefined);
}

/** `config.failRow: true` makes a check fail its row; by default checks beyond the golden expectation only record metrics. */
export function failsRow(context: AssertionContext): boolean {
  const v = context.config?.failRow;
  return v === true || v === 'true';
}

export function metadataFrom(context: AssertionContext): HarnessMetadata | undefined {
  return (context.metadata ?? context.providerResponse?.metadata) as HarnessMetadata | undefined;
}
