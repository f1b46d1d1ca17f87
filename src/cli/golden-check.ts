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
 *
 * When rankgate knows the corpus (--corpus, or the documents of the index in the database), every expected `path`,
 * `doc_id` and rankgate chunk id must name one of its documents: one line per one that does not, FILE:LINE, with a
 * did-you-mean against the corpus's paths (src/golden/corpus-refs.ts); exit 2 (the golden set is wrong input).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../errors.ts';
import { parseCliArgs, serviceDbOptions } from './args.ts';
import { loadGoldenFile } from '../golden/index.ts';
import type { GoldenQuery } from '../golden/schema.ts';
import { createSearchService, type SearchService } from '../search/service.ts';
import { corpusKeys, unknownDocumentLines, type CorpusDocKey } from '../golden/corpus-refs.ts';
import { readCorpus } from '../ingest/readers.ts';
import { safeTerminal } from '../util/terminal.ts';

export const USAGE = `usage: rankgate golden check [--chunk-size 200,300,500] [--embedder ID] [--db URL|DIR] [--corpus PATH] [FILES...]

  FILES              golden sets (default: every file under datasets/golden/)
  --chunk-size LIST  variants to check (default: every chunk size indexed for the embedder)
  --embedder ID      embedder of the variants (default use-lite)
  --db URL|DIR       postgres://... server or PGlite data directory
                     (default: $DATABASE_URL, else $RANKGATE_DATA_DIR, else .rankgate/db; read-only without --corpus)
  --corpus PATH      ingest missing variants from this corpus first (and refuse an index of another corpus)
  --json             print the resolution table as JSON

Expected paths, doc ids and chunk ids are checked against the corpus's documents (--corpus, else the index in the
database): one that no document has is an error (FILE:LINE, did-you-mean), exit 2. Unresolved substrings: exit 1.`;

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

  const corpusDocs = values.corpus ? corpusKeys(await readCorpus(values.corpus)) : null;
  const anySubstring = sets.some(({ queries }) => queries.some((q) => q.expected.some((r) => r.passage_substring)));
  // with --corpus and no passage substring, nothing needs the index
  const svc =
    corpusDocs && !anySubstring && !sizesFlag
      ? null
      : await createSearchService({
          ...serviceDbOptions(values.db),
          routing: false,
          autoIngest: values.corpus ? { corpus: values.corpus } : undefined,
        });
  try {
    const known = corpusDocs ? { name: values.corpus!, docs: corpusDocs } : await indexedDocuments(svc!);
    const docLines = known ? sets.flatMap(({ file, queries }) => unknownDocumentLines(file, queries, known.docs, known.name)) : [];
    let sizes = sizesFlag;
    if (!sizes && (!anySubstring || !svc) && known) sizes = [];
    if (!sizes) {
      sizes = (await svc!.listVariants()).filter((v) => v.embedder === embedder).map((v) => v.chunkSize);
      if (!sizes.length) {
        throw new UserError(
          `no index variant for embedder ${embedder} in ${svc!.db.describe}; run rankgate ingest first or pass --corpus`,
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
        const resolved = await svc!.resolvePassages([...new Set(subs.map((x) => x.s))], { chunkSize, embedder });
        for (const { q, s } of subs) checks.push({ file, queryId: q.id, substring: s, variant, chunks: resolved.get(s) ?? [] });
      }
    }
    const failures = checks.filter((c) => c.chunks.length === 0);
    const vague = checks.filter((c) => c.chunks.length > MAX_CHUNKS_PER_SUBSTRING);
    if (values.json) {
      console.log(JSON.stringify({ checks, failures: failures.length, warnings: vague.length, unknown_documents: docLines }, null, 2));
    } else {
      const short = (s: string) => JSON.stringify(s.length > 60 ? s.slice(0, 57) + '...' : s);
      for (const c of vague) {
        console.error(safeTerminal(`warning: ${c.file}: query ${c.queryId}: passage_substring ${short(c.substring)} matches ${c.chunks.length} chunks in ${c.variant} (more than ${MAX_CHUNKS_PER_SUBSTRING}): make it more specific`));
      }
      for (const c of failures) {
        console.error(safeTerminal(`error: ${c.file}: query ${c.queryId}: passage_substring ${short(c.substring)} resolves to no chunk in ${c.variant}`));
      }
      // golden ids and file names: one line each (src/util/terminal.ts)
      for (const l of docLines) console.error(safeTerminal(`error: ${l}`));
      console.log(
        `golden check: ${checks.length} substring resolutions over ${sizes.length} variant(s) (${sizes.map((s) => `c${s}:${embedder}`).join(', ')}): ` +
          `${failures.length} unresolved, ${vague.length} matching more than ${MAX_CHUNKS_PER_SUBSTRING} chunks; ` +
          (known ? `expected documents against corpus ${known.name} (${known.docs.length} documents): ${docLines.length} not found` : 'expected documents not checked (no corpus known: pass --corpus or ingest one)'),
      );
    }
    return docLines.length ? 2 : failures.length ? 1 : 0;
  } finally {
    await svc?.close();
  }
}

/** The documents of the index in the database and the corpus it was built from; null when it holds none. */
async function indexedDocuments(svc: SearchService): Promise<{ name: string; docs: CorpusDocKey[] } | null> {
  const docs = await svc.db.pool.query<{ id: string; path: string | null }>('SELECT id, path FROM documents ORDER BY id');
  if (!docs.rowCount) return null;
  const v = await svc.db.pool.query<{ corpus: string | null }>('SELECT corpus FROM index_variants WHERE corpus IS NOT NULL ORDER BY built_at DESC LIMIT 1');
  const count = new Map<string, number>();
  for (const d of docs.rows) if (d.path) count.set(d.path, (count.get(d.path) ?? 0) + 1);
  // a path many documents share (every record of a JSONL file) names none of them
  const keys = docs.rows.map((d) => ({ id: d.id, path: d.path && count.get(d.path) === 1 ? d.path : null }));
  return { name: v.rows[0]?.corpus ?? `of the index in ${svc.db.describe}`, docs: keys };
}
