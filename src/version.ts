/** rankgate's version (package.json), recorded in every result row (providers/search.ts metadata.rankgate) so shards of different versions are never merged. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './util/package-root.ts';

// packageRoot: the same answer from src/ (tsx) and from the compiled dist/src/
export const RANKGATE_VERSION: string = (JSON.parse(readFileSync(join(packageRoot(import.meta.url), 'package.json'), 'utf8')) as { version: string }).version;
