/**
 * Bench: convert an 86,000-row Natural Questions CSV (the size of the NQ evaluation spec's filtered set) to the
 * prepared JSON, the way `rankgate golden convert nq.csv --to nq-json -o prepared.json` does
 * (read + validate into the canonical model, render, atomic write). Prints the median of 3 runs
 * and one end-to-end CLI run. Target: < 10 s.
 *
 *   node --import tsx bench/golden-convert.ts [rows]
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadGolden, renderGolden } from '../src/golden/index.ts';
import { writeFileAtomic } from '../src/util/atomic.ts';

const ROWS = Number(process.argv[2] ?? 86_000);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// deterministic pseudo-random text (xorshift), NQ-like lengths: question ~9 words, long answer ~100 words
let seed = 42;
const rnd = () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
};
const WORDS = 'the of and in to a is was for on as by with he that from his at it an are which were also first be this has had one their or new its after but who not have they two her been other she when time all during there into school more may years over only most can city would later some such used about film states world united known national three county made series where under american song season team many part'.split(' ');
const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(' ');
const q = (s: string) => `"${s.replace(/"/g, '""')}"`;

const dir = mkdtempSync(join(tmpdir(), 'rankgate-bench-nq-'));
try {
  const csv = join(dir, 'nq.csv');
  const parts = ['question,long_answer,short_answer'];
  for (let i = 0; i < ROWS; i++) {
    const long = `${words(60 + Math.floor(rnd() * 80))}, "quoted" ${words(10)}`;
    parts.push([q(`${words(5 + Math.floor(rnd() * 8))} ${i}`), q(long), q(words(1 + Math.floor(rnd() * 4)))].join(','));
  }
  writeFileSync(csv, `${parts.join('\n')}\n`);
  const mb = (p: string) => (statSync(p).size / 1024 / 1024).toFixed(1);
  console.log(`generated ${ROWS} rows, ${mb(csv)} MB CSV`);

  const times: number[] = [];
  for (let run = 1; run <= 3; run++) {
    const out = join(dir, `prepared-${run}.json`);
    const t0 = performance.now();
    const g = loadGolden(csv);
    const files = await renderGolden('nq-json', g.queries, g.meta, out);
    for (const [p, text] of files) writeFileAtomic(p, text);
    const ms = performance.now() - t0;
    times.push(ms);
    console.log(`run ${run}: ${(ms / 1000).toFixed(2)} s (${g.queries.length} queries, ${mb(out)} MB JSON)`);
  }
  times.sort((a, b) => a - b);
  console.log(`median of 3 (in-process): ${(times[1]! / 1000).toFixed(2)} s  [target < 10 s]`);

  const t0 = performance.now();
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'golden', 'convert', csv, '--to', 'nq-json', '-o', join(dir, 'cli.json')], { encoding: 'utf8' });
  console.log(`CLI end to end (incl. node + tsx startup): ${((performance.now() - t0) / 1000).toFixed(2)} s, exit ${r.status}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
