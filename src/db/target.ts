/**
 * Which database a command talks to: ONE rule for every CLI (ingest, search, serve, golden check, eval) and the
 * promptfoo provider, so `RANKGATE_DATA_DIR=elsewhere rankgate ingest` and the eval that follows use the same index.
 *
 *   1. an explicit server URL (`--db postgres://…`, provider `databaseUrl:`)
 *   2. an explicit PGlite data directory (`--db DIR`, provider `dataDir:`)
 *   3. the environment: `DATABASE_URL` (a server), else `RANKGATE_DATA_DIR` (a PGlite directory)
 *   4. the default PGlite directory `.rankgate/db`
 *
 * Something given on the command line or in the config always beats the environment; relative directories are
 * taken from the working directory.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UserError } from '../errors.ts';

export const DEFAULT_DATA_DIR = '.rankgate/db';

export type DatabaseTarget =
  | { kind: 'postgres'; url: string; source: string }
  | { kind: 'pglite'; dataDir: string; source: string };

export interface TargetInput {
  /** A `--db` flag value: `postgres://…` or a directory. */
  db?: string;
  /** An explicit server URL (provider `databaseUrl:`). */
  url?: string;
  /** An explicit PGlite directory (provider `dataDir:`), or `memory://`. */
  dataDir?: string;
}

export const isServerUrl = (s: string): boolean => /^postgres(ql)?:\/\//i.test(s);

export function resolveDatabaseTarget(input: TargetInput = {}, env: NodeJS.ProcessEnv = process.env): DatabaseTarget {
  const nonEmpty = (s: string | undefined) => (s !== undefined && s.trim() !== '' ? s : undefined);
  const flag = nonEmpty(input.db);
  if (flag !== undefined) {
    if (isServerUrl(flag)) return { kind: 'postgres', url: flag, source: '--db' };
    return { kind: 'pglite', dataDir: checkDir(flag, '--db'), source: '--db' };
  }
  const url = nonEmpty(input.url);
  if (url !== undefined) return { kind: 'postgres', url, source: 'databaseUrl' };
  const dir = nonEmpty(input.dataDir);
  if (dir !== undefined) return { kind: 'pglite', dataDir: checkDir(dir, 'dataDir'), source: 'dataDir' };
  const envUrl = nonEmpty(env.DATABASE_URL);
  if (envUrl !== undefined) {
    if (!isServerUrl(envUrl)) throw new UserError(`DATABASE_URL: expected a postgres:// URL, got ${JSON.stringify(envUrl.slice(0, 80))} (unset it to use the embedded PGlite)`);
    return { kind: 'postgres', url: envUrl, source: 'DATABASE_URL' };
  }
  const envDir = nonEmpty(env.RANKGATE_DATA_DIR);
  if (envDir !== undefined) return { kind: 'pglite', dataDir: checkDir(envDir, 'RANKGATE_DATA_DIR'), source: 'RANKGATE_DATA_DIR' };
  return { kind: 'pglite', dataDir: DEFAULT_DATA_DIR, source: 'default' };
}

function checkDir(dir: string, source: string): string {
  if (dir.startsWith('memory://')) return dir;
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    throw new UserError(`${source} ${dir}: embedded database (PGlite) data directory expected, but it is a file (give a directory, or a postgres:// URL)`);
  }
  return dir;
}

/** The target as a short key (service sharing, messages): 'postgres:URL' or 'pglite:/abs/dir'. */
export function targetKey(t: DatabaseTarget): string {
  return t.kind === 'postgres' ? `postgres:${t.url}` : `pglite:${t.dataDir.startsWith('memory://') ? t.dataDir : resolve(t.dataDir)}`;
}
