/**
 * The targets a provider config names, checked when the eval starts, before any query (providers/search.ts): a
 * `corpus:` path that does not exist, a `module:` that does not exist, cannot be loaded or has no createSearchService
 * export, a `url:` that refuses a probe request. Each is ONE line naming the config file, the providers[] entry and
 * the key (a UserError; under promptfoo's CLI the provider prints it and exits 2). Without this, a wrong path was
 * found only after every row had errored.
 *
 * The url probe is one search request in the service's own shape (query "rankgate preflight probe", topK 1). It stops
 * the eval only when the service cannot be the right one: the connection is refused or the host unknown, or it answers
 * 401/403/404/405. A slow answer, a 5xx or a malformed body are left to the rows (per-query errors, unreachableAfter),
 * where a flaky service is measured as such. `preflight: false` in the provider config skips every check.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { UserError } from '../errors.ts';
import { readOnlyByEnv, resolveDatabaseTarget, writePrivilegeProblem } from '../db/index.ts';
import { redactText } from '../util/redact.ts';
import { didYouMean } from '../util/suggest.ts';
import { moduleFactory } from './module.ts';
import type { ServiceTarget } from './open.ts';
import { configKeyWhere } from './provider-config.ts';
import { HttpSearchService, shapeOf } from './url.ts';

/** Ceiling on the probe's wait: refusals come back at once, and a slow service is not refused (the rows measure it). */
const PROBE_TIMEOUT_MS = 5_000;

/** Why a probe answer means no query can succeed; undefined when it does not. */
export function probeRefusal(message: string): string | undefined {
  if (/failed: (connection refused|host not found)/.test(message)) return message;
  const m = /-> HTTP (401|403|404|405)\b/.exec(message);
  return m ? message : undefined;
}

/** A path the config gave that does not exist: where it points, and a did-you-mean among its folder's entries. */
function missingPath(given: string, basePath: string): string | undefined {
  const abs = isAbsolute(given) ? given : resolve(basePath, given);
  if (existsSync(abs)) return undefined;
  const shown = relative(process.cwd(), abs);
  let near = '';
  try {
    const dir = dirname(abs);
    const hint = didYouMean(basename(abs), readdirSync(dir));
    if (hint) near = hint.replace(/'([^']+)'/, (_m, n: string) => `'${given.slice(0, given.length - basename(abs).length)}${n}'`);
  } catch {
    // the folder is missing too
  }
  return `${given} does not exist (looked for ${shown && !shown.startsWith('..') ? shown : abs})${near}`;
}

/**
 * Throws one UserError line for the first target of `c` that cannot work. `providerId` and `basePath` name the config
 * entry in the message.
 */
export async function preflightTarget(c: ServiceTarget & { preflight?: boolean }, basePath: string, providerId: string): Promise<void> {
  if (c.preflight === false) return;
  const where = (key: string) => configKeyWhere(basePath, providerId, key, c[key]);
  if (c.url) {
    const svc = new HttpSearchService(c.url, shapeOf(c.url, c.urlShape), Math.min(c.timeoutMs ?? PROBE_TIMEOUT_MS, PROBE_TIMEOUT_MS), 0);
    try {
      await svc.search('rankgate preflight probe', { topK: 1 });
    } catch (e) {
      const why = probeRefusal((e as Error).message);
      if (why) throw new UserError(`${where('url')}: ${c.url} refused a probe request (${why}); no query can succeed (preflight: false skips this check)`);
    }
    return;
  }
  if (c.module) {
    const missing = missingPath(c.module, basePath);
    if (missing) throw new UserError(`${where('module')}: ${missing}`);
    const path = isAbsolute(c.module) ? c.module : resolve(basePath, c.module);
    let found: Awaited<ReturnType<typeof moduleFactory>>;
    try {
      found = await moduleFactory(path);
    } catch (e) {
      const msg = ((e as Error).message ?? String(e)).split('\n')[0];
      throw new UserError(`${where('module')}: ${c.module} cannot be loaded: ${msg}`);
    }
    if (!found.factory) {
      const names = found.exports.filter((n) => n !== 'default');
      throw new UserError(
        `${where('module')}: ${c.module} does not export createSearchService(config) (named, or on its default export)` +
          `; it exports ${names.length ? names.join(', ') : 'nothing by name'}${didYouMean('createSearchService', names)}`,
      );
    }
    return;
  }
  if (c.corpus) {
    const missing = missingPath(c.corpus, basePath);
    if (missing) throw new UserError(`${where('corpus')}: ${missing}`);
    // the eval would ingest (autoIngest): a server role that cannot write is refused now, not in every row
    if (c.autoIngest !== false && !readOnlyByEnv()) {
      const target = resolveDatabaseTarget({ url: c.databaseUrl, dataDir: c.dataDir });
      if (target.kind === 'postgres') {
        const problem = await writePrivilegeProblem(target.url, undefined, redactText(target.url));
        if (problem) throw new UserError(problem);
      }
    }
  }
}

const started = new Map<string, Promise<void>>();

/** preflightTarget once per service identity (columns sharing a service share its checks). */
export function preflightOnce(key: string, c: ServiceTarget & { preflight?: boolean }, basePath: string, providerId: string): Promise<void> {
  let p = started.get(key);
  if (!p) {
    p = preflightTarget(c, basePath, providerId);
    started.set(key, p);
    p.catch(() => {});
  }
  return p;
}
