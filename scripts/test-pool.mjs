/**
 * The test process of scripts/run-tests.mjs: node:test's run() over the files IN THE ORDER GIVEN (longest first),
 * N at once, each in its own child process as with `node --test`. (`node --test FILE...` sorts its files by name on
 * Node 20, so the slowest files could start last and the run ended on one busy core: the order is why this exists.)
 *
 *   node --import tsx scripts/test-pool.mjs --jobs N --reporter dot|spec|tap --events FILE -- FILE...
 *
 * The chosen reporter writes to stdout, scripts/test-events-reporter.mjs to the events file. Exit 1 when a test or
 * a file failed, else 0. The children inherit this process's flags (`--import tsx`), as under `node --test`.
 */
import { createWriteStream } from 'node:fs';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { run } from 'node:test';
import * as reporters from 'node:test/reporters';
import eventsReporter from './test-events-reporter.mjs';

const args = process.argv.slice(2);
const dashdash = args.indexOf('--');
const own = args.slice(0, dashdash);
const files = args.slice(dashdash + 1);
const opt = (name) => own[own.indexOf(name) + 1];
const jobs = Number(opt('--jobs'));
const reporterName = opt('--reporter');
const eventsFile = opt('--events');

const reporter = reporters[reporterName];
// dot and tap are async generator functions; spec is a function that makes a Transform stream (Node 20 and 24)
const toStdout = reporter.constructor.name === 'AsyncGeneratorFunction' ? reporter : reporter();

let failed = false;
const stream = run({ files, concurrency: jobs });
stream.on('test:fail', (d) => {
  if (d.todo === undefined || d.todo === false) failed = true;
});
const a = new PassThrough({ objectMode: true });
const b = new PassThrough({ objectMode: true });
stream.pipe(a);
stream.pipe(b);
await Promise.all([
  pipeline(a, toStdout, process.stdout, { end: false }),
  pipeline(b, eventsReporter, createWriteStream(eventsFile)),
]);
process.exitCode = failed ? 1 : 0;
