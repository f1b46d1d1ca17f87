// Entry of the search worker thread (src/search/worker.ts). Plain JavaScript: the thread starts without the
// TypeScript loader that promptfoo registers in its own thread, so register tsx here, then load the host.
import { register } from 'tsx/esm/api';

register();
await import('./worker-host.ts');
