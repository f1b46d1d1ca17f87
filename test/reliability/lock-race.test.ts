/**
 * One writer per PGlite data directory, provably (src/db/lock.ts): 8 processes call lockDataDir at the same
 * instant (a barrier: each spins until a shared start time), for 60 rounds. Every third round starts from a
 * STALE lock (the record of a process that has exited), so the race is also a race for the takeover. A winner
 * proves it is alone by creating a sentinel file with O_EXCL while it holds the lock. Never two holders; at
 * least one winner per round; the losers get "in use", nothing else. The lock record is never empty or partial.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, tempDir } from './helpers.ts';
import { processStartTime } from '../../src/db/lock.ts';

const WORKERS = 8;
const ROUNDS = 60;

describe('the PGlite data-directory lock under a simultaneous race', () => {
  const base = tempDir('lock-race');
  after(() => rmSync(base, { recursive: true, force: true }));

  it(`${WORKERS} processes x ${ROUNDS} rounds at one instant, a third of them from a stale lock: never two holders`, async () => {
    const dir = join(base, 'db');
    const ctl = join(base, 'ctl');
    mkdirSync(dir);
    mkdirSync(ctl);
    const worker = join(ROOT, 'test', 'reliability', 'lock-worker.ts');
    const procs = Array.from({ length: WORKERS }, () =>
      spawn(process.execPath, ['--import', 'tsx', worker, dir, ctl, String(ROUNDS), '15'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] }),
    );
    const errs: string[] = [];
    for (const p of procs) p.stderr!.on('data', (d) => errs.push(String(d)));
    const exited = procs.map((p) => new Promise<number | null>((res) => p.on('close', (c) => res(c))));
    // a pid that no longer runs, for the stale records
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    assert.equal(processStartTime(dead), 'gone');
    const t0 = Date.now();
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const outcomes: string[][] = [];
    try {
      // the workers need a moment to start (tsx); the first barrier waits for them
      let startAt = Date.now() + 4000;
      for (let r = 0; r < ROUNDS; r++) {
        if (r % 3 === 2) {
          // plant a stale record as the newest generation: what a holder killed with SIGKILL leaves behind
          const gens = readdirSync(dir).map((n) => /^\.rankgate\.lock\.(\d+)$/.exec(n)).filter(Boolean).map((m) => Number(m![1]));
          const next = (gens.length ? Math.max(...gens) : 0) + 1;
          const tmp = join(ctl, `stale.${r}`);
          writeFileSync(tmp, JSON.stringify({ pid: dead, start: '1', command: 'rankgate ingest (killed)', since: new Date().toISOString() }));
          linkSync(tmp, join(dir, `.rankgate.lock.${next}`));
        }
        writeFileSync(join(ctl, `go.${r}.tmp`), String(startAt));
        // rename: a worker never sees a half-written start time
        (await import('node:fs')).renameSync(join(ctl, `go.${r}.tmp`), join(ctl, `go.${r}`));
        const deadline = Date.now() + 30_000;
        for (;;) {
          const done = readdirSync(ctl).filter((n) => n.startsWith(`done.${r}.`));
          if (done.length === WORKERS) {
            outcomes.push(done.map((n) => readFileSync(join(ctl, n), 'utf8')));
            break;
          }
          if (Date.now() > deadline) throw new Error(`round ${r}: only ${done.length} of ${WORKERS} workers reported; stderr: ${errs.join('').slice(-2000)}`);
          await sleep(5);
        }
        startAt = Date.now() + 40;
      }
    } finally {
      const killer = setTimeout(() => {
        for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
      }, 10_000);
      await Promise.all(exited);
      clearTimeout(killer);
    }
    const codes = await Promise.all(exited);
    assert.deepEqual(codes, Array(WORKERS).fill(0), errs.join(''));

    const all = outcomes.flat();
    assert.equal(all.filter((o) => o === 'overlap').length, 0, 'two processes held the lock at once');
    const errors = all.filter((o) => o.startsWith('error'));
    assert.deepEqual(errors, [], 'losers only ever see "in use"');
    outcomes.forEach((o, r) => assert.ok(o.includes('won'), `round ${r}: nobody got the lock (${o.join(', ')})`));
    // the enter/exit log: intervals never overlap
    const events = readFileSync(join(ctl, 'log'), 'utf8').trim().split('\n').map((l) => {
      const [round, kind, pid, t] = l.split(' ');
      return { round: Number(round), kind, pid, t: BigInt(t!) };
    });
    const enters = events.filter((e) => e.kind === 'enter');
    const exits = events.filter((e) => e.kind === 'exit');
    assert.equal(enters.length, exits.length);
    const spans = enters.map((e) => ({ ...e, end: exits.find((x) => x.pid === e.pid && x.round === e.round)!.t })).sort((a, b) => (a.t < b.t ? -1 : 1));
    for (let i = 1; i < spans.length; i++) {
      assert.ok(spans[i]!.t > spans[i - 1]!.end, `holders overlap: ${spans[i - 1]!.pid} (round ${spans[i - 1]!.round}) and ${spans[i]!.pid} (round ${spans[i]!.round})`);
    }
    // every lock record left is complete JSON (never empty or partial); no temp files left behind
    for (const n of readdirSync(dir)) {
      assert.match(n, /^\.rankgate\.lock\.\d+$/, `left behind: ${n}`);
      assert.doesNotThrow(() => JSON.parse(readFileSync(join(dir, n), 'utf8')), n);
    }
    assert.ok(!existsSync(join(ctl, 'holder')));
    const won = all.filter((o) => o === 'won').length;
    console.log(`# lock race: ${WORKERS} processes x ${ROUNDS} rounds (${Math.floor(ROUNDS / 3)} from a stale lock): ${won} holds, ${all.length - won} "in use", 0 overlaps, ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });
});
