/**
 * rankgate embed-cache: the embedding cache as files, so N machines embed a large corpus 1/N each.
 *
 *   rankgate embed-cache build --shard i/N --out shard-i.jsonl [--corpus PATH] [--format F] [--chunk-size 300[,..]]
 *                              [--overlap N] [--embedder ID] [--embed-workers N] [--cache FILE.jsonl...]
 *       embed the distinct chunk texts of shard i of N (by the texts' sha256) into a cache file; entries already in
 *       --cache files are reused, not re-embedded
 *   rankgate embed-cache merge OUT.jsonl IN.jsonl...        one cache file from many (same key = same vector, or refused)
 *   rankgate embed-cache import IN.jsonl... [--db URL|DIR]  load into the database's embedding cache; then
 *                                                           `rankgate ingest` embeds nothing it holds
 *   rankgate embed-cache export OUT.jsonl [--db URL|DIR] [--embedder ID]   the database's cache as a file
 *
 * Exit 0 on success, 2 on bad input (one line).
 */
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { untrackedCacheFiles } from '../util/cache-files.ts';
import { parseChunkSizes, parseCliArgs, parseDbFlag, parseIntFlag } from './args.ts';
import { didYouMean } from '../util/suggest.ts';

const USAGE = `usage: rankgate embed-cache build --shard i/N --out FILE.jsonl [--corpus PATH] [--format F] [--chunk-size 300[,200,500]]
                                [--overlap N] [--embedder ID] [--cache FILE.jsonl ...]
       rankgate embed-cache merge OUT.jsonl IN.jsonl [IN.jsonl ...]
       rankgate embed-cache import IN.jsonl [IN.jsonl ...] [--db URL|DIR]
       rankgate embed-cache export OUT.jsonl [--db URL|DIR] [--embedder ID]

  --embed-workers N  use-lite: threads embedding at once (~300 MB each); default $RANKGATE_EMBED_WORKERS, else every core`;

const SUB = ['build', 'merge', 'import', 'export'];

export function parseShardFlag(v: string | undefined): { index: number; count: number } {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(v ?? '');
  if (!m) throw new UserError(`--shard: expected i/N with 1 <= i <= N (e.g. 1/4; shards are numbered from 1), got ${JSON.stringify(v ?? '')}`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index < 1 || index > count) throw new UserError(`--shard ${v}: shard ${index} of ${count} does not exist, expected i/N with 1 <= i <= N`);
  return { index, count };
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '--help' || sub === '-h') {
    console.log(USAGE);
    return sub ? 0 : 2;
  }
  if (!SUB.includes(sub)) throw new UserError(`unknown subcommand '${sub}'${didYouMean(sub, SUB)}\n${USAGE}`);
  const { values: v, positionals } = parseCliArgs(
    rest,
    {
      shard: { type: 'string' },
      out: { type: 'string' },
      corpus: { type: 'string' },
      format: { type: 'string' },
      'chunk-size': { type: 'string' },
      overlap: { type: 'string' },
      embedder: { type: 'string' },
      'embed-workers': { type: 'string' },
      cache: { type: 'string', multiple: true },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  const shardMod = await import('../ingest/embed-shard.ts');
  if (sub === 'merge') {
    if (positionals.length < 2) throw new UserError(`merge: expected OUT.jsonl and at least one cache file\n${USAGE}`);
    const [out, ...ins] = positionals as [string, ...string[]];
    const all = shardMod.readCacheFiles(ins);
    writeFileAtomic(out, shardMod.serializeCache(all.values()));
    console.log(`${out}: ${all.size} embeddings from ${ins.length} file${ins.length === 1 ? '' : 's'}`);
    return 0;
  }
  if (sub === 'build') {
    if (positionals.length) throw new UserError(`build: unexpected argument ${JSON.stringify(positionals[0])}\n${USAGE}`);
    const shard = parseShardFlag(v.shard);
    if (!v.out) throw new UserError(`build: --out FILE.jsonl is required (where the shard's embeddings go)\n${USAGE}`);
    const { CORPUS_FORMATS, readCorpus } = await import('../ingest/readers.ts');
    const { validateChunkOptions } = await import('../ingest/chunker.ts');
    if (v.format !== undefined && !(CORPUS_FORMATS as readonly string[]).includes(v.format)) {
      throw new UserError(`--format: expected one of ${CORPUS_FORMATS.join(', ')}, got ${JSON.stringify(v.format)}`);
    }
    const chunkSizes = parseChunkSizes(v['chunk-size'] ?? '300');
    const overlap = parseIntFlag('overlap', v.overlap, 0) ?? 0;
    for (const chunkSize of chunkSizes) validateChunkOptions({ chunkSize, overlap });
    const embeddings = await import('../embeddings/index.ts');
    const embedderId = embeddings.resolveEmbedderId(v.embedder ?? 'use-lite');
    const workers = embeddings.embedWorkerCount(v['embed-workers']);
    const embedder = await embeddings.createEmbedder(embedderId, embedderId === 'use-lite' ? { workers } : {}).catch((e: unknown) => {
      if ((e as Error)?.name === 'EmbedderCallError') throw new UserError(`embedder ${(e as Error).message}`);
      throw e;
    });
    const t0 = performance.now();
    try {
      await embedder.init?.();
      // entries of earlier cache files under this embedder's key (or the bare id an older rankgate wrote)
      const keys = new Set([embeddings.embeddingCacheKey(embedder, 'document'), ...embeddings.legacyCacheKeys(embedderId)]);
      const known = new Map<string, number[]>();
      for (const e of shardMod.readCacheFiles(untrackedCacheFiles(v.cache ?? [], 'embedding')).values()) if (keys.has(e.embedder) && e.embedding.length === embedder.dimension) known.set(e.sha256, e.embedding);
      const documents = await readCorpus(v.corpus ?? 'datasets/corpus', v.format as Parameters<typeof readCorpus>[1]);
      const texts = shardMod.chunkTexts(documents, chunkSizes, overlap);
      const r = await shardMod.embedShard(texts, embedder, shard, known);
      writeFileAtomic(v.out, shardMod.serializeCache(r.entries));
      const s = (performance.now() - t0) / 1000;
      console.log(
        `${v.out}: shard ${shard.index}/${shard.count}: ${r.entries.length} of ${texts.size} distinct chunk texts (${embedderId}), ` +
          `embedded ${r.embedded}, reused ${r.reused}, ${s.toFixed(1)} s${r.embedded ? ` (${(r.embedded / s).toFixed(1)} texts/s)` : ''}`,
      );
    } catch (e) {
      const name = (e as Error)?.name;
      if (name === 'EmbedderCallError' || name === 'BedrockCallError') {
        throw new UserError(`embedder ${name === 'BedrockCallError' ? `${embedderId}: ` : ''}${(e as Error).message}; ${v.out} was not written`);
      }
      throw e;
    } finally {
      await embedder.close?.().catch(() => {});
    }
    return 0;
  }
  const { openDatabase } = await import('../db/index.ts');
  if (sub === 'import') {
    if (!positionals.length) throw new UserError(`import: expected at least one cache file\n${USAGE}`);
    // cache files git tracks came with the commit (a pull request's own vectors): refused in CI, left out elsewhere
    const files = untrackedCacheFiles(positionals, 'embedding');
    const all = shardMod.readCacheFiles(files);
    const db = await openDatabase(parseDbFlag(v.db));
    try {
      const n = await shardMod.importCache(db, all.values());
      console.log(`${db.describe}: ${n} embeddings added to the cache (${all.size - n} already there)`);
    } finally {
      await db.close();
    }
    return 0;
  }
  // export: only reads the database (never creates, migrates or repairs it)
  if (positionals.length !== 1) throw new UserError(`export: expected one OUT.jsonl\n${USAGE}`);
  const db = await openDatabase({ ...parseDbFlag(v.db), access: 'read' });
  try {
    const embeddings = await import('../embeddings/index.ts');
    const embedder = v.embedder ? embeddings.resolveEmbedderId(v.embedder) : undefined;
    const entries = await shardMod.exportCache(db, embedder, embedder ? embeddings.legacyCacheKeys(embedder) : []);
    writeFileAtomic(positionals[0]!, shardMod.serializeCache(entries));
    console.log(`${positionals[0]}: ${entries.length} embeddings from ${db.describe}`);
  } finally {
    await db.close();
  }
  return 0;
}
