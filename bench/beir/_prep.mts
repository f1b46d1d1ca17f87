import { resolve } from 'node:path';
import { openDatabase } from '../../src/db/index.ts';
import { ensureIndex, benchPaths } from './index-corpus.ts';
const p = benchPaths(process.cwd(), 'scifact');
const db = await openDatabase({ dataDir: p.dataDir, url: undefined });
const r = await ensureIndex({ db, corpus: resolve('../shared/benchmarks/scifact/corpus.jsonl'), recordFile: p.recordFile, chunkSize: 512, embedder: 'use-lite' });
console.log(JSON.stringify(r));
await db.close();
