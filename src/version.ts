/** rankgate's version (package.json), recorded in every result row (providers/search.ts metadata.rankgate) so shards of different versions are never merged. */
import { readFileSync } from 'node:fs';

export const RANKGATE_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
