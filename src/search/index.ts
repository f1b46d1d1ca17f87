export { createSearchService, DEFAULT_SEARCH_PARAMS, SearchService, fuseRrf, escapeLike } from './service.ts';
export type { CreateSearchServiceOptions, AutoIngestOptions, VariantInfo } from './service.ts';
export type * from './types.ts';
