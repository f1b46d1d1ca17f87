/** rankgate's version (package.json), recorded in every result row (providers/search.ts metadata.rankgate) so shards of different versions are never merged. */
import { readFileSync } from 'node:fs';

/** rankgate's package.json: one folder up from src/ in the sources, two from dist/src/ in the compiled build. */
function packageVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'rankgate' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not this one
    }
  }
  throw new Error(`rankgate: no package.json of rankgate above ${new URL('.', import.meta.url).pathname}`);
}

export const RANKGATE_VERSION: string = packageVersion();
