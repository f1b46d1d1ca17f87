// Entry of rankgate's worker threads (src/util/worker.ts startTsWorker). Plain JavaScript: the thread starts without
// the TypeScript loader its parent may have registered (promptfoo's, or `node --import tsx`), so register tsx here,
// then load the entry module named in workerData. Both hooks: the ESM one for our own files, and the CommonJS one
// because a team's `module: my-search.ts` outside any "type": "module" package is compiled to CommonJS by tsx, and
// without the require hook Node 20 fails it with "Cannot require() ES Module ... in a cycle".
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';
import { register as registerCjs } from 'tsx/cjs/api';

registerCjs();
register();
await import(workerData.entry);
