/**
 * One contender of the lock race (test/reliability/lock-race.test.ts): for each round r it waits for
 * `<ctl>/go.<r>` (which holds the instant to start at), spins until that instant, calls lockDataDir, and
 * when it wins holds the lock for HOLD ms while proving it is alone: it creates `<ctl>/holder` with O_EXCL on
 * entry (EEXIST = two holders at once) and removes it on exit. It reports `<ctl>/done.<r>.<pid>`:
 * "won" | "busy" | "overlap" | "error <message>".
 */
import { existsSync, openSync, closeSync, readFileSync, renameSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { lockDataDir } from '../../src/db/lock.ts';

const [dir, ctl, roundsArg, holdArg] = process.argv.slice(2);
const rounds = Number(roundsArg);
const HOLD = Number(holdArg ?? 15);
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

for (let r = 0; r < rounds; r++) {
  const go = join(ctl, `go.${r}`);
  while (!existsSync(go)) sleep(1);
  const at = Number(readFileSync(go, 'utf8'));
  while (Date.now() < at) {
    /* spin: every contender leaves at the same instant */
  }
  let result = 'busy';
  try {
    const release = lockDataDir(dir!);
    result = 'won';
    let fd: number | undefined;
    try {
      fd = openSync(join(ctl, 'holder'), 'wx');
    } catch {
      result = 'overlap';
    }
    appendFileSync(join(ctl, 'log'), `${r} enter ${process.pid} ${process.hrtime.bigint()}\n`);
    sleep(HOLD);
    appendFileSync(join(ctl, 'log'), `${r} exit ${process.pid} ${process.hrtime.bigint()}\n`);
    if (fd !== undefined) {
      closeSync(fd);
      rmSync(join(ctl, 'holder'), { force: true });
    }
    release();
  } catch (e) {
    const msg = (e as Error).message;
    result = /in use by process/.test(msg) ? 'busy' : `error ${msg.split('\n')[0]}`;
  }
  writeFileSync(join(ctl, `.done.${r}.${process.pid}`), result);
  renameSync(join(ctl, `.done.${r}.${process.pid}`), join(ctl, `done.${r}.${process.pid}`)); // never read half-written
}
