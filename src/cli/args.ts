/**
 * parseArgs for every `rankgate` subcommand: an unknown or malformed option is one line naming it, with a
 * did-you-mean and the usage, as a UserError (exit 2, no stack trace).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UserError } from '../errors.ts';
import { didYouMean } from '../util/suggest.ts';
import { resolveDatabaseTarget } from '../db/target.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCliArgs<O extends Options>(argv: string[], options: O, usage: string, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    const err = e as Error & { code?: string };
    const flags = Object.entries(options).flatMap(([name, o]) => [`--${name}`, ...(o.short ? [`-${o.short}`] : [])]);
    const m = /Unknown option '([^']+)'/.exec(err.message);
    if (err.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && m) {
      const bad = m[1]!.split('=')[0]!;
      throw new UserError(`unknown option '${bad}'${didYouMean(bad, flags)}\n${usage}`);
    }
    throw new UserError(`${err.message.split('\n')[0]}\n${usage}`);
  }
}

// The flag parsers shared by ingest, search, serve, golden check and embed-cache. They lived in cli/ingest.ts, which
// made every command that imported them load the corpus readers and the tokenizer.

/**
 * `--db` -> the explicit target (`postgres://...` a server URL, anything else a PGlite data directory); without
 * `--db`, {} so the one resolver (src/db/target.ts) applies DATABASE_URL, RANKGATE_DATA_DIR, the default.
 */
export function parseDbFlag(db: string | undefined): { url?: string; dataDir?: string } {
  if (db === undefined || db === '') return {};
  const t = resolveDatabaseTarget({ db });
  return t.kind === 'postgres' ? { url: t.url } : { dataDir: t.dataDir };
}

/** The --db flag as createSearchService options (its URL field is `databaseUrl`, not `url`). */
export function serviceDbOptions(db: string | undefined): { databaseUrl?: string; dataDir?: string } {
  const { url, dataDir } = parseDbFlag(db);
  return { ...(url ? { databaseUrl: url } : {}), ...(dataDir ? { dataDir } : {}) };
}

export function parseChunkSizes(value: string): number[] {
  const parts = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (!parts.length) throw new UserError(`--chunk-size: expected token budgets such as 300 or 200,300,500, got ${JSON.stringify(value)}`);
  const sizes = parts.map((p) => {
    if (!/^\d+$/.test(p)) throw new UserError(`--chunk-size: "${p}" is not a whole number of tokens (expected e.g. 200,300,500)`);
    return Number(p);
  });
  return [...new Set(sizes)];
}

export function parseIntFlag(name: string, value: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    throw new UserError(`--${name}: expected a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}
