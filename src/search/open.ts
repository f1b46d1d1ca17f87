/**
 * Which search service a provider config names, and one shared instance of it per identity: a `url:` service
 * (url.ts), a team's `module:` (module.ts), or rankgate's own (service.ts), the in-process ones in a worker thread
 * by default (worker.ts). Columns that differ only in search params share one service (refcounted).
 */
import { isAbsolute, resolve } from 'node:path';
import { loadModuleService } from './module.ts';
import { SEARCH_PARAM_KEYS } from './provider-config.ts';
import type { SearchServiceLike } from './types.ts';
import { DEFAULT_MAX_RESPONSE_BYTES, HttpSearchService, shapeOf } from './url.ts';
import { WorkerSearchService } from './worker.ts';

/** The service settings of a provider config (the rest of it is search params and the provider's own keys). */
export interface ServiceTarget {
  module?: string;
  url?: string;
  urlShape?: 'portal' | 'nq';
  timeoutMs?: number;
  unreachableAfter?: number;
  maxResponseBytes?: number;
  corpus?: string;
  corpusFormat?: 'markdown' | 'jsonl' | 'beir' | 'nq';
  autoIngest?: boolean;
  databaseUrl?: string;
  dataDir?: string;
  routingConfig?: string | false;
  worker?: boolean;
  [k: string]: unknown;
}

const abs = (basePath: string, p: string) => (isAbsolute(p) ? p : resolve(basePath, p));

/** What a module's createSearchService(config) gets: the config without module/basePath/worker and without the
 * search params, which go with every search call, so columns that differ only in params share one service. */
export function moduleConfig(c: ServiceTarget): Record<string, unknown> {
  const { module: _m, basePath: _b, worker: _w, ...rest } = c;
  for (const k of SEARCH_PARAM_KEYS) delete (rest as Record<string, unknown>)[k];
  return rest;
}

/** The identity of the service a config names (kind + location + the settings that make it another service). */
export function serviceKey(c: ServiceTarget, basePath: string): string {
  if (c.url) return `url:${c.url}:${shapeOf(c.url, c.urlShape)}:${c.timeoutMs ?? 10000}:${c.unreachableAfter ?? 3}:${c.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES}`;
  const key = c.module
    ? `module:${abs(basePath, c.module)}:${JSON.stringify(moduleConfig(c))}`
    : `rankgate:${c.databaseUrl ?? process.env.DATABASE_URL ?? ''}:${c.dataDir ? abs(basePath, c.dataDir) : ''}:${c.corpus ? abs(basePath, c.corpus) : ''}:${String(c.routingConfig ?? '')}:${c.autoIngest ?? ''}`;
  return key + (c.worker === false ? ':in-thread' : ':worker');
}

/** A new service for a config (relative paths against basePath). */
export async function openService(c: ServiceTarget, basePath: string): Promise<SearchServiceLike> {
  if (c.url) return new HttpSearchService(c.url, shapeOf(c.url, c.urlShape), c.timeoutMs ?? 10000, c.unreachableAfter ?? 3, c.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
  if (c.module) {
    const path = abs(basePath, c.module);
    const config = { ...moduleConfig(c), basePath };
    if (c.worker !== false) return WorkerSearchService.start({ kind: 'module', path, label: c.module, config });
    return loadModuleService(path, c.module, config);
  }
  // with autoIngest: false the corpus is still checked against the index variant's (never ingested)
  const autoIngest = c.corpus
    ? { corpus: abs(basePath, c.corpus), ...(c.corpusFormat ? { format: c.corpusFormat } : {}), ...(c.autoIngest === false ? { ingest: false } : {}) }
    : undefined;
  const options = {
    ...(c.databaseUrl ? { databaseUrl: c.databaseUrl } : {}),
    ...(c.dataDir ? { dataDir: abs(basePath, c.dataDir) } : {}),
    ...(c.routingConfig !== undefined ? { routing: c.routingConfig === false ? (false as const) : abs(basePath, c.routingConfig) } : {}),
    ...(autoIngest ? { autoIngest } : {}),
  };
  if (c.worker !== false) return WorkerSearchService.start({ kind: 'rankgate', options });
  const { createSearchService } = await import('./service.ts');
  return createSearchService(options);
}

/** Shared services: one per service identity, refcounted by their users. */
const services = new Map<string, { promise: Promise<SearchServiceLike>; refs: number }>();

/** The shared service of `key`, built by `create` on first use; `ref` counts the caller as a new user. */
export function acquireService(key: string, create: () => Promise<SearchServiceLike>, ref: boolean): Promise<SearchServiceLike> {
  let entry = services.get(key);
  if (!entry) {
    const promise = create();
    entry = { promise, refs: 0 };
    services.set(key, entry);
    promise.catch(() => services.delete(key));
  }
  if (ref) entry.refs++;
  return entry.promise;
}

/** One user of `key` is done: the service is closed when its last user is. */
export async function releaseService(key: string): Promise<void> {
  const entry = services.get(key);
  if (!entry) return;
  entry.refs--;
  if (entry.refs <= 0) {
    services.delete(key);
    const svc = await entry.promise.catch(() => undefined);
    await svc?.close().catch(() => {});
  }
}
