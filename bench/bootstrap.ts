/**
 * Bootstrap from logs at a million rows (`npm run bench:bootstrap`): generates, seeded and in a temporary folder
 * (never committed, removed at the end), a feedback export of 10^6 rows (CSV: 20,000 distinct queries typed in a few
 * spellings each, 50,000 documents, scores 0-3) and a UBI click log of 10^6 events (~95,000 searches of 10 results over
 * 2,000 distinct queries: ~950,000 impression events and ~50,000 clicks with a position bias) and bootstraps each in a process of its own,
 * printing the wall time, the peak resident set (the child's process.resourceUsage().maxRSS), rows per second and the
 * size of the golden set written. Targets (issue 44): <= 60 s and <= 500 MB each on a 2-core machine.
 *
 *   npm run bench:bootstrap [-- --rows 1000000 --keep]
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../src/metrics/significance.ts';

const SELF = fileURLToPath(import.meta.url);

/** Lines written through a buffer (a million rows without a million-line string). */
function writer(path: string) {
  const fd = openSync(path, 'w');
  let buf = '';
  return {
    line(s: string) {
      buf += s + '\n';
      if (buf.length > 1 << 20) {
        writeSync(fd, buf);
        buf = '';
      }
    },
    close() {
      if (buf) writeSync(fd, buf);
      closeSync(fd);
    },
  };
}

const WORDS = ['calm', 'mind', 'grief', 'river', 'lamp', 'fear', 'death', 'love', 'teacher', 'practice', 'breath', 'devotion', 'purpose', 'work', 'night', 'anxious', 'peace', 'heart', 'empty', 'light'];

function queryText(i: number, rnd: () => number): string {
  const n = 2 + (i % 4);
  const ws: string[] = [];
  let x = i * 2654435761;
  for (let k = 0; k < n; k++) {
    ws.push(WORDS[(x >>> 0) % WORDS.length]!);
    x = Math.imul(x ^ (x >>> 13), 1103515245) + 12345;
  }
  const s = `${ws.join(' ')} ${i}`;
  const r = rnd();
  return r < 0.7 ? s : r < 0.85 ? s.toUpperCase() : s.replace(' ', '  ');
}

/** Zipf-like query popularity: a few queries are searched very often. */
const popular = (rnd: () => number, n: number) => Math.min(n - 1, Math.floor(n * Math.pow(rnd(), 2.2)));

export function generateFeedback(path: string, rows: number, seed = 7): void {
  const rnd = mulberry32(seed);
  const w = writer(path);
  w.line('search_log_id,query,doc,score,time');
  const Q = 20_000;
  const D = 50_000;
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < rows; i++) {
    const q = popular(rnd, Q);
    const good = rnd() < 0.8;
    const doc = good ? `doc-${(q * 7 + Math.floor(rnd() * 5)) % D}` : `doc-${Math.floor(rnd() * D)}`;
    const score = good ? (rnd() < 0.7 ? 3 : 2) : Math.floor(rnd() * 2);
    w.line(`${i},${queryText(q, rnd)},${doc},${score},${new Date(t0 + i * 1000).toISOString()}`);
  }
  w.close();
}

export function generateClicks(dir: string, events: number, seed = 11): { queries: number; events: number } {
  const rnd = mulberry32(seed);
  const qw = writer(join(dir, 'ubi_queries.jsonl'));
  const ew = writer(join(dir, 'ubi_events.jsonl'));
  const Q = 2_000;
  const D = 50_000;
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  let n = 0;
  let searches = 0;
  const examine = [0.9, 0.6, 0.45, 0.35, 0.3, 0.25, 0.2, 0.17, 0.15, 0.12];
  while (n < events) {
    const q = popular(rnd, Q);
    const id = `q${searches++}`;
    const ts = new Date(t0 + searches * 1000).toISOString();
    const hits = Array.from({ length: 10 }, (_, i) => (rnd() < 0.5 ? `doc-${(q * 7 + i) % D}` : `doc-${Math.floor(rnd() * D)}`));
    qw.line(JSON.stringify({ application: 'bench', query_id: id, client_id: `c${searches % 5000}`, user_query: queryText(q, rnd), query_response_hit_ids: hits, timestamp: ts }));
    for (let i = 0; i < 10 && n < events; i++, n++)
      ew.line(JSON.stringify({ action_name: 'impression', query_id: id, client_id: 'c', timestamp: ts, event_attributes: { object: { object_id: hits[i], object_id_field: 'id' }, position: { ordinal: i + 1 } } }));
    for (let i = 0; i < 10 && n < events; i++) {
      const relevant = hits[i] === `doc-${(q * 7 + i) % D}`; // the query's own document for that slot
      if (rnd() < examine[i]! * (relevant ? 0.35 : 0.05)) {
        ew.line(JSON.stringify({ action_name: 'click', query_id: id, client_id: 'c', timestamp: ts, event_attributes: { object: { object_id: hits[i], object_id_field: 'id' }, position: { ordinal: i + 1 } } }));
        n++;
      }
    }
  }
  qw.close();
  ew.close();
  return { queries: searches, events: n };
}

/** The child: one bootstrap, timed, with its own peak RSS. */
async function child(kind: string, input: string, out: string): Promise<void> {
  const { bootstrapFromLogs } = await import('../src/judgments/bootstrap-run.ts');
  const { DEFAULTS } = await import('../src/judgments/bootstrap.ts');
  const t = process.hrtime.bigint();
  const from = kind === 'clicks' ? [join(input, 'ubi_queries.jsonl'), join(input, 'ubi_events.jsonl')] : [input];
  const r = await bootstrapFromLogs({ ...DEFAULTS, from, out });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  const s = r.summary;
  process.stdout.write(JSON.stringify({ ms, maxRssKb: process.resourceUsage().maxRSS, rows: kind === 'clicks' ? s.ubiEvents : s.feedbackRows, queries: s.queries.length, pairs: s.keptPairs, added: r.golden!.merge.added.length }) + '\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') return child(argv[1]!, argv[2]!, argv[3]!);
  const rowsAt = argv.indexOf('--rows');
  const rows = rowsAt >= 0 ? Number(argv[rowsAt + 1]) : 1_000_000;
  const keep = argv.includes('--keep');
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-bench-bootstrap-'));
  try {
    let t = Date.now();
    generateFeedback(join(dir, 'feedback.csv'), rows);
    const c = generateClicks(dir, rows);
    const size = (p: string) => `${(statSync(join(dir, p)).size / 1048576).toFixed(0)} MB`;
    console.log(
      `generated in ${((Date.now() - t) / 1000).toFixed(1)} s (${dir}): feedback.csv ${rows.toLocaleString('en-US')} rows (${size('feedback.csv')}); ubi_queries.jsonl ${c.queries.toLocaleString('en-US')} searches (${size('ubi_queries.jsonl')}), ubi_events.jsonl ${c.events.toLocaleString('en-US')} events (${size('ubi_events.jsonl')})`,
    );
    console.log(`machine: load average ${loadavg().map((x) => x.toFixed(2)).join(', ')} before the runs (2 cores: a load above 2 means others are running too)`);
    for (const [kind, input] of [
      ['feedback', join(dir, 'feedback.csv')],
      ['clicks', dir],
    ] as const) {
      const out = join(dir, `gold-${kind}.jsonl`);
      t = Date.now();
      const p = spawnSync(process.execPath, ['--import', 'tsx', SELF, '--child', kind, input, out], { encoding: 'utf8', maxBuffer: 1 << 24 });
      const wall = (Date.now() - t) / 1000;
      if (p.status !== 0) throw new Error(`${kind}: ${p.stderr || p.stdout}`);
      const r = JSON.parse(p.stdout.trim().split('\n').pop()!) as { ms: number; maxRssKb: number; rows: number; queries: number; pairs: number; added: number };
      const mb = r.maxRssKb / 1024;
      console.log(
        `${kind.padEnd(8)} ${r.rows.toLocaleString('en-US')} ${kind === 'clicks' ? 'events' : 'rows'}: bootstrap ${(r.ms / 1000).toFixed(1)} s (process ${wall.toFixed(1)} s with start-up), ` +
          `peak RSS ${mb.toFixed(0)} MB, ${Math.round(r.rows / (r.ms / 1000)).toLocaleString('en-US')} rows/s; ${r.queries.toLocaleString('en-US')} queries, ${r.pairs.toLocaleString('en-US')} pairs kept; ` +
          `golden set ${(statSync(out).size / 1048576).toFixed(1)} MB (${r.added.toLocaleString('en-US')} entries) · target <= 60 s, <= 500 MB: ${r.ms <= 60_000 && mb <= 500 ? 'met' : 'MISSED'}`,
      );
    }
    console.log(`machine: load average ${loadavg().map((x) => x.toFixed(2)).join(', ')} after the runs`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
