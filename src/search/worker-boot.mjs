// Entry of the search worker thread (src/search/worker.ts). Plain JavaScript: the thread starts without the
// TypeScript loader that promptfoo registers in its own thread, so register tsx here, then load the host.
// Both hooks: the ESM one for our own files, and the CommonJS one because a team's `module: my-search.ts` outside
// any "type": "module" package is compiled to CommonJS by tsx, and without the require hook Node 20 fails it with
// "Cannot require() ES Module ... in a cycle".
import { register } from 'tsx/esm/api';
import { register as registerCjs } from 'tsx/cjs/api';

registerCjs();
register();
await import('./worker-host.ts');
