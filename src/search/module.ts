/**
 * Load a team's own search module (`module:` in the provider config): it exports createSearchService(config)
 * (named, or on the default export) returning a SearchServiceLike. Shared by the provider (in-process) and the
 * search worker (src/search/worker-host.ts).
 */
import { pathToFileURL } from 'node:url';
import type { SearchServiceLike } from './types.ts';

type Factory = (cfg: Record<string, unknown>) => Promise<SearchServiceLike> | SearchServiceLike;

/** The module's createSearchService (named, or on the default export), or undefined; the names it exports otherwise. */
export async function moduleFactory(path: string): Promise<{ factory?: Factory; exports: string[] }> {
  const mod = (await import(pathToFileURL(path).href)) as { createSearchService?: Factory; default?: { createSearchService?: Factory } };
  const factory = mod.createSearchService ?? mod.default?.createSearchService;
  return { ...(typeof factory === 'function' ? { factory } : {}), exports: Object.keys(mod) };
}

/** `path` absolute; `label` is how the config names it (for messages); `config` goes to the factory as is. */
export async function loadModuleService(path: string, label: string, config: Record<string, unknown>): Promise<SearchServiceLike> {
  const { factory } = await moduleFactory(path);
  if (!factory) throw new Error(`module ${label} does not export createSearchService(config)`);
  const svc = await factory(config);
  if (!svc || typeof svc.search !== 'function') throw new Error(`module ${label}: createSearchService() did not return an object with search()`);
  return svc;
}
