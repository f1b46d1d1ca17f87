/**
 * `rankgate golden check [--chunk-size 200,300,500] [--embedder ID] [--db URL|DIR] [--corpus PATH] [FILES...]`
 *
 * Resolves every `passage_substring` expectation of the golden sets against each index variant
 * (verbatim LIKE with %, _ and \ escaped; whitespace runs collapsed like the chunker does):
 * - a substring that resolves to no chunk in a variant is an error naming the file, the query id and the
 *   variant (exit 1): the query could never be judged right there;
 * - a substring that resolves to more than 3 chunks is a warning (too vague to pin one passage).
 * Default files: every golden set directly under datasets/golden/. Default chunk sizes: every variant of
 * the embedder present in the database. With --corpus, missing variants are ingested first.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.ts';
import { parseCliArgs, serviceDbOptions } from './args.ts';
import { loadGoldenFile } from '../golden/index.ts';
import type { GoldenQuery } from '../golden/schema.ts';
import { createSearchService } from '../search/service.ts';

export const USAGE = `usage: rankgate golden check [--chunk-size 200,300,500] [--embedder ID] [--db URL|DIR] [--corpus PATH] [FILES...]

  FILES              golden sets (default: every file under datasets/golden/)
  --chunk-size LIST  variants to check (default: every chunk size indexed for the embedder)
  --embedder ID      embedder of the variants (default use-lite)
  --db URL|DIR       postgres://... server or PGlite data directory
                     (default: $DATABASE_URL, else $RANKGATE_DATA_DIR, else .rankgate/db; read-only without --corpus)
  --corpus PATH      ingest missing variants from this corpus first (and refuse an index of another corpus)
  --json             print the resolution table as JSON`;

export const MAX_CHUNKS_PER_SUBSTRING = 3;

export interface SubstringCheck {
  file: string;
  queryId: string;
  substring: string;
  variant: string;
  chunks: string[];
}

const GOLDEN_EXT = /\.(json|jsonl|ya?ml|csv)$/i;

function defaultFiles(): string[] {
  const dir = 'datasets/golden';
  if (!existsSync(dir)) throw new UserError(`no golden files given and ${dir}/ does not exist`);
  return readdirSync(dir)
    .filter((f) => GOLDEN_EXT.test(f) && statSync(join(dir, f)).isFile())
    .sort()
    .map((f) => join(dir, f));
}

function parseSizes(v: string): number[] {
  const parts = v.split(',').map((s) => s.trim()).filter(Boolean);
  if (!parts.length || parts.some((p) => !/^\d+$/.test(p) || Number(p) <= 0)) {
    throw new UserError(`--chunk-size: expected positive whole numbers such as 200,300,500, got ${JSON.stringify(v)}`);
  }
  return [...new Set(parts.map(Number))];
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      'chunk-size': { type: 'string' },
      embedder: { type: 'string' },
      db: { type: 'string' },
      corpus: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    } as const,
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const embedder = values.embedder ?? 'use-lite';
  const sizesFlag = values['chunk-size'] !== undefined ? parseSizes(values['chunk-size']) : undefined;
  const files = positionals.length ? positionals : defaultFiles();
  for (const f of files) if (!existsSync(f)) throw new UserError(`${f}: no such golden-set file`);
  const sets: { file: string; queries: GoldenQuery[] }[] = files.map((file) => ({ file, queries: loadGoldenFile(file) }));

  const svc = await createSearchService({
    ...serviceDbOptions(values.db),
    routing: false,
    autoIngest: values.corpus ? { corpus: values.corpus } : undefined,
  });
  try {
    let sizes = sizesFlag;
    if (!sizes) {
      sizes = (await svc.listVariants()).filter((v) => v.embedder === embedder).map((v) => v.chunkSize);
      if (!sizes.length) {
        throw new UserError(
          `no index variant for embedder ${embedder} in ${svc.db.describe}; run rankgate ingest first or pass --corpus`,
        );
      }
    }
    const checks: SubstringCheck[] = [];
    for (const chunkSize of sizes) {
      const variant = `c${chunkSize}:${embedder}`;
      for (const { file, queries } of sets) {
        const subs = queries.flatMap((q) =>
          q.expected.filter((r) => r.passage_substring).map((r) => ({ q, s: r.passage_substring! })),
        );
        if (!subs.length) continue;
        const resolved = await svc.resolvePassages([...new Set(subs.map((x) => x.s))], { chunkSize, embedder });
        for (const { q, s } of subs) checks.push({ file, queryId: q.id, substring: s, variant, chunks: resolved.get(s) ?? [] });
      }
    }
    const failures = checks.filter((c) => c.chunks.length === 0);
    const vague = checks.filter((c) => c.chunks.length > MAX_CHUNKS_PER_SUBSTRING);
    if (values.json) {
      console.log(JSON.stringify({ checks, failures: failures.length, warnings: vague.length }, null, 2));
    } else {
      const short = (s: string) => JSON.stringify(s.length > 60 ? s.slice(0, 57) + '...' : s);
      for (const c of vague) {
        console.error(`warning: ${c.file}: query ${c.queryId}: passage_substring ${short(c.substring)} matches ${c.chunks.length} chunks in ${c.variant} (more than ${MAX_CHUNKS_PER_SUBSTRING}): make it more specific`);
      }
      for (const c of failures) {
        console.error(`error: ${c.file}: query ${c.queryId}: passage_substring ${short(c.substring)} resolves to no chunk in ${c.variant}`);
      }
      console.log(
        `golden check: ${checks.length} substring resolutions over ${sizes.length} variant(s) (${sizes.map((s) => `c${s}:${embedder}`).join(', ')}): ` +
          `${failures.length} unresolved, ${vague.length} matching more than ${MAX_CHUNKS_PER_SUBSTRING} chunks`,
      );
    }
    return failures.length ? 1 : 0;
  } finally {
    await svc.close();
  }
}
