/**
 * `rankgate ingest [--corpus PATH] [--format markdown|jsonl|beir|nq] [--chunk-size 300[,200,500]]
 *   [--overlap N] [--embedder use-lite|voyage:voyage-3-large|openai:embedding:MODEL|...] [--db URL|DIR] [--json]`
 * Reads the corpus (src/ingest/readers.ts), then ingestCorpus (src/ingest/pipeline.ts) builds one index
 * variant per chunk size for the embedder. Flags are checked before anything is opened or read.
 */
import type { parseArgs } from 'node:util';
import { UserError } from '../errors.ts';
import { isConnectionLost, surviveLostConnections } from '../db/connection.ts';
import { CORPUS_FORMATS, readCorpus } from '../ingest/readers.ts';
import { validateChunkOptions } from '../ingest/chunker.ts';
import type { CorpusFormat } from '../ingest/types.ts';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { loadYaml } from '../util/yaml.ts';
import { parseChunkSizes, parseCliArgs, parseDbFlag, parseIntFlag } from './args.ts';

export const USAGE = `usage: rankgate ingest [--corpus PATH] [--format markdown|jsonl|beir|nq] [--chunk-size 300[,200,500]]
                      [--overlap N] [--embedder ID] [--embed-workers N] [--db URL|DIR] [--replace] [--follow-symlinks] [--json]
                      [--config promptfooconfig.yaml]

  --corpus PATH      folder of Markdown, a .jsonl file, a BEIR folder (corpus.jsonl) or NQ prepared .json
                     (default: the corpus: the promptfoo config's search provider names, the one its eval would
                     ingest; none named: refused)
  --config FILE      the promptfoo config whose provider names the corpus (default promptfooconfig.yaml)
  --format F         markdown | jsonl | beir | nq (default: detected from the name and content)
  --chunk-size LIST  token budgets (o200k), comma-separated; one index variant each (default 300)
  --overlap N        tokens of whole-sentence overlap between chunks (default 0)
  --embedder ID      use-lite (default, offline), openai:embedding:MODEL, voyage:MODEL, cohere:embedding:MODEL,
                     ollama:embeddings:MODEL, bedrock:embeddings:MODEL (ID@N: N dimensions); aliases titan-v2[-256|-512],
                     cohere-v3[-english|-multilingual]. Keys and base URLs from the environment (docs/search.md)
  --embed-workers N  use-lite: threads embedding at once, each with its own model (~300 MB each); 1 embeds in this
                     thread (default: $RANKGATE_EMBED_WORKERS, else every core Node may use)
  --db URL|DIR       postgres://... server, or a PGlite data directory
                     (default: $DATABASE_URL, else $RANKGATE_DATA_DIR, else .rankgate/db)
  --replace          the database holds the index of another corpus: replace it (without this, ingest refuses)
  --follow-symlinks  read symbolic links whose target stays inside the corpus folder (also RANKGATE_FOLLOW_SYMLINKS=1);
                     links leading outside it, and fifos, sockets and devices, are always skipped with a warning
  --json             print the ingest statistics as JSON

A database holds the index of one corpus; every index variant records the corpus it was built from (a hash
of its documents). Documents that left the corpus are removed with their chunks.`;

/** parseArgs through parseCliArgs (did-you-mean for unknown options); kept for the CLIs that still call it. */
export function strictParse<T extends Parameters<typeof parseArgs>[0]>(config: T, usage: string) {
  type Options = NonNullable<Parameters<typeof parseCliArgs>[1]>;
  const c = config as { args?: string[]; options?: Options; allowPositionals?: boolean };
  return parseCliArgs(c.args ?? [], c.options ?? {}, usage, c.allowPositionals ?? true) as unknown as ReturnType<typeof parseArgs<T & { strict: true }>>;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      corpus: { type: 'string' },
      format: { type: 'string' },
      'chunk-size': { type: 'string' },
      overlap: { type: 'string' },
      embedder: { type: 'string' },
      'embed-workers': { type: 'string' },
      db: { type: 'string' },
      replace: { type: 'boolean' },
      'follow-symlinks': { type: 'boolean' },
      json: { type: 'boolean' },
      config: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    } as const,
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length > (values.corpus ? 0 : 1)) {
    throw new UserError(`unexpected argument ${JSON.stringify(positionals.at(-1))}\n\n${USAGE}`);
  }
  // no corpus given: the one the promptfoo config's search provider names (what its eval would ingest), never a
  // default folder (the demo's corpus ingested into a team's index was the old default's surprise)
  const named = (values.corpus as string | undefined) ?? positionals[0];
  const fromConfig = named === undefined ? corpusOfConfig((values.config as string | undefined) ?? 'promptfooconfig.yaml', values.config !== undefined) : null;
  const corpus = named ?? fromConfig!.corpus;
  if (fromConfig) process.stderr.write(`rankgate ingest: corpus ${corpus} (${fromConfig.where})\n`);
  const format = (values.format as string | undefined) ?? fromConfig?.format;
  if (format !== undefined && !(CORPUS_FORMATS as readonly string[]).includes(format)) {
    throw new UserError(`--format: expected one of ${CORPUS_FORMATS.join(', ')}, got ${JSON.stringify(format)}`);
  }
  const chunkSizes = parseChunkSizes((values['chunk-size'] as string | undefined) ?? '300');
  const overlap = parseIntFlag('overlap', values.overlap as string | undefined, 0) ?? 0;
  for (const chunkSize of chunkSizes) validateChunkOptions({ chunkSize, overlap });
  const embeddings = await import('../embeddings/index.ts');
  const embedderId = embeddings.resolveEmbedderId((values.embedder as string | undefined) ?? 'use-lite');
  const dbFlag = parseDbFlag(values.db as string | undefined); // checked before the corpus is read

  // credentials and base URL checked (no request sent) before the corpus is read or the database opened
  // checked with the other flags; a pool is started only for the local model (HTTP embedders batch and overlap requests)
  const workers = embeddings.embedWorkerCount(values['embed-workers'] as string | undefined);
  const embedder = await embeddings.createEmbedder(embedderId, embedderId === 'use-lite' ? { workers } : {}).catch((e: unknown) => {
    if ((e as Error)?.name === 'EmbedderCallError') throw new UserError(`embedder ${(e as Error).message}`);
    throw e;
  });
  let db: Awaited<ReturnType<typeof import('../db/index.ts').openDatabase>> | undefined;
  try {
    const documents = await readCorpus(corpus, format as CorpusFormat | undefined, values['follow-symlinks'] ? { followSymlinks: true } : {});
    const { openDatabase } = await import('../db/index.ts');
    const { ingestCorpus, createProgressReporter, formatPlan } = await import('../ingest/pipeline.ts');
    const opened = await openDatabase({ ...dbFlag, access: 'write' });
    db = opened;
    surviveLostConnections(opened);
    const stats = await ingestCorpus({
      db,
      documents,
      chunkSizes,
      embedder,
      overlap,
      corpusPath: corpus,
      replace: Boolean(values.replace),
      onProgress: values.json ? undefined : createProgressReporter(),
      onPlan: (p) => process.stderr.write(formatPlan(p) + '\n'),
    }).catch((e: unknown) => {
      const name = (e as Error)?.name;
      if (name === 'BedrockCallError' || name === 'EmbedderCallError') {
        const what = name === 'BedrockCallError' ? `${embedderId}${embedder?.endpoint ? ` at ${embedder.endpoint}` : ''}: ${(e as Error).message}` : (e as Error).message;
        throw new UserError(
          `embedder ${what}; the index variant being built was not written ` +
            `(a variant is written whole or not at all; vectors already received are cached): check the endpoint, model and key, then run the ingest again`,
        );
      }
      if (!isConnectionLost(e)) throw e;
      throw new UserError(
        `database ${opened.describe}: connection lost during the ingest (${(e as Error).message}); ` +
          `the interrupted index variant was rolled back (each variant is written in one transaction): run the ingest again`,
        1,
      );
    });
    if (values.json) {
      console.log(JSON.stringify({ ...stats, corpus, corpusId: stats.corpus.id, database: db.describe, documents: documents.length }, null, 2));
    } else {
      console.log(`ingested ${documents.length} documents from ${corpus} (corpus ${stats.corpus.id.slice(0, 12)}) into ${db.describe}`);
      if (stats.replaced.length) console.log(`  replaced ${stats.replaced.join(', ')} (another corpus; --replace)`);
      if (stats.removedDocuments) console.log(`  removed ${stats.removedDocuments} document${stats.removedDocuments > 1 ? 's' : ''} that left the corpus`);
      for (const n of stats.notes) console.log(`  note: ${n}`);
      for (const v of stats.variants) {
        console.log(
          `  ${v.variant.padEnd(24)} ${String(v.chunks).padStart(7)} chunks  embedded ${v.embedded}, cached ${v.cached}  ` +
            `(embed ${(v.embedMs / 1000).toFixed(1)} s, write ${(v.writeMs / 1000).toFixed(1)} s, index ${(v.buildMs / 1000).toFixed(1)} s)`,
        );
      }
      console.log(`  total ${(stats.totalMs / 1000).toFixed(1)} s`);
    }
    return 0;
  } finally {
    await embedder.close?.().catch(() => {});
    await db?.close();
  }
}

/**
 * The corpus the promptfoo config's search provider names (`corpus:` of a providers/search.ts entry, resolved against
 * the config's folder, and its `corpusFormat:`): what `promptfoo eval` would ingest on first use. None, several
 * different ones, or no config: a one-line UserError saying to give --corpus.
 */
export function corpusOfConfig(file: string, explicit: boolean): { corpus: string; format?: string; where: string } {
  const give = 'give the corpus with --corpus PATH, or name it as corpus: in the provider config of your promptfoo config';
  if (!existsSync(file)) throw new UserError(explicit ? `--config ${file}: no such file` : `no corpus to ingest: no --corpus and no ${file} here; ${give}`);
  const doc = loadYaml(readFileSync(file, 'utf8'), file) as { providers?: unknown } | null;
  const found = new Map<string, { corpus: string; format?: string; where: string }>();
  (Array.isArray(doc?.providers) ? doc!.providers : []).forEach((p: unknown, i: number) => {
    const e = p as { id?: unknown; config?: { corpus?: unknown; corpusFormat?: unknown } } | null;
    const c = e?.config?.corpus;
    if (!e || typeof e.id !== 'string' || !/providers\/search\.ts$/.test(e.id) || typeof c !== 'string' || !c.trim()) return;
    const abs = isAbsolute(c) ? c : join(dirname(file), c);
    const shown = relative(process.cwd(), abs) || '.';
    if (!found.has(shown)) found.set(shown, { corpus: shown, ...(typeof e.config!.corpusFormat === 'string' ? { format: e.config!.corpusFormat } : {}), where: `named by ${file} providers[${i}].config.corpus` });
  });
  if (!found.size) throw new UserError(`no corpus to ingest: no --corpus, and ${file} names none (no corpus: in a providers/search.ts entry's config); ${give}`);
  if (found.size > 1) throw new UserError(`${file} names ${found.size} corpora (${[...found.keys()].join(', ')}): say which with --corpus PATH`);
  return [...found.values()][0]!;
}
