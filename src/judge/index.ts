export * from './judge.ts';
export * from './prompt.ts';
export * from './spec.ts';
export * from './config.ts';
export * from './query.ts';
export { JudgeCache, DEFAULT_JUDGE_CACHE_DIR } from './cache.ts';
export { judgeSetupProblem } from './setup.ts';
