/**
 * The history at scale (`npm run bench:history`): generates, seeded and in a temporary folder (removed at the end), a
 * repository whose committed baseline changed in 1,000 commits (written with ONE `git fast-import`) and a history file
 * of 10,000 scheduled runs (the demo's shape: 66 queries in 7 categories, every run's per-query values), then:
 *
 *   - `rankgate history` in-process: the wall time and the git processes it started (one pass, not one per commit);
 *   - `rankgate history` as a process (node bin/rankgate.js): the wall time a user waits, start-up included;
 *   - `rankgate history --html`: the trend page's time and size.
 *
 * Targets (issue 45): `rankgate history` <= 10 s, the page <= 2 MB. Prints the figures with the machine's load
 * (`uptime`): the machine may be shared. Figures, not assertions.
 *
 *   npm run bench:history [-- --commits 1000 --lines 10000 --queries 66 --keep]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { sealBaseline, type Baseline } from '../src/gate/baseline.ts';
import { selectionIdentity } from '../src/golden/testcases.ts';
import { historyLine, perQueryOf, pointConfig, type PointMeta } from '../src/history/line.ts';
import { gitProcessCount } from '../src/util/git.ts';
import { demoLikeQueries, summaryOf } from '../test/history/helpers.ts';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const { values: o } = parseArgs({ options: { commits: { type: 'string', default: '1000' }, lines: { type: 'string', default: '10000' }, queries: { type: 'string', default: '66' }, keep: { type: 'boolean', default: false } } });
const COMMITS = Number(o.commits);
const LINES = Number(o.lines);
const N = Number(o.queries);

const dir = mkdtempSync(join(tmpdir(), 'rankgate-bench-history-'));
const repo = join(dir, 'team');
mkdirSync(join(repo, 'config'), { recursive: true });
const t0 = Date.now();
const START = Date.parse('2020-01-01T00:00:00Z');
const SPAN = 6.5 * 365 * 86_400_000;

// the baseline's 1,000 versions: the same golden set, the values drifting a little each time (seeded), sealed as
// `--update-baseline` seals them; one fast-import stream, one process
/** A new corpus every 250 commits, a provider setting tried for one commit in 200: the page's markers. */
const corpusOf = (i: number) => `corpus${Math.floor(i / 250)}`.padEnd(16, '0');
const configOf = (i: number): Record<string, unknown> => ({ provider: 'file://providers/search.ts', corpus: 'datasets/corpus', topK: 10, rrfK: i % 200 === 199 ? 40 : 60 });
const sel = selectionIdentity(Object.keys(demoLikeQueries(N)).map((id) => ({ id })));
const fi: string[] = [];
const gate = 'version: 1\noverall: { recall_at_3: 0.5 }\nregression:\n  baseline: config/search-baseline.json\n  max_drop: 0.02\n  alpha: 0.05\n';
fi.push('blob', 'mark :1', `data ${Buffer.byteLength(gate)}`, gate);
for (let i = 0; i < COMMITS; i++) {
  const queries = demoLikeQueries(N, 7, (i % 97) / 400);
  const b: Baseline = {
    rankgate_baseline: 1,
    created: new Date(START + (i * SPAN) / COMMITS).toISOString(),
    column: 'hybrid rrf60 c300 use-lite',
    config: configOf(i),
    summary: summaryOf(queries),
    queries,
    identity: { engine: 'pglite', variant: 'c300:use-lite', corpusId: corpusOf(i), corpus: 'datasets/corpus', selection: { id: sel.id, size: sel.size } },
  };
  const text = JSON.stringify(sealBaseline(b, null), null, 2) + '\n';
  fi.push('blob', `mark :${i + 2}`, `data ${Buffer.byteLength(text)}`, text);
}
let stream = '';
for (let i = 0; i < COMMITS; i++) {
  const when = Math.round((START + (i * SPAN) / COMMITS) / 1000);
  const msg = `baseline ${i + 1}`;
  stream += `commit refs/heads/main\nmark :${COMMITS + 10 + i}\ncommitter Bench <bench@example.com> ${when} +0000\ndata ${msg.length}\n${msg}\n`;
  if (i > 0) stream += `from :${COMMITS + 9 + i}\n`;
  else stream += `M 100644 :1 config/gate.yaml\n`;
  stream += `M 100644 :${i + 2} config/search-baseline.json\n\n`;
}
execFileSync('git', ['init', '-q', '-b', 'main', repo]);
execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, input: fi.join('\n') + '\n' + stream, maxBuffer: 1 << 30 });
execFileSync('git', ['checkout', '-q', 'main'], { cwd: repo });

// the history file: 10,000 runs, every 6 hours after the first commit, each measuring the newest baseline commit of
// its time (the force-push check looks every one up), the ids once (the first line)
const commits = execFileSync('git', ['rev-list', '--reverse', 'main'], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
const lines: string[] = [];
for (let i = 0; i < LINES; i++) {
  const at = START + (i * SPAN) / LINES + 3_600_000;
  const date = new Date(at).toISOString();
  // the baseline commit of its time: the run measures what it records
  const k = Math.min(COMMITS - 1, Math.floor(((at - START) / SPAN) * COMMITS));
  const meta: PointMeta = {
    repo: 'acme/search', run: String(1_000_000 + i), commit: commits[k]!, date, code: 0, column: 'hybrid rrf60 c300 use-lite',
    corpus: { id: corpusOf(k), path: 'datasets/corpus' }, golden: { id: sel.id, size: sel.size },
    config: pointConfig({ config: configOf(k) }), judge: 'judge: off',
    latency: { p50: 12 + (i % 7), p95: 40 + (i % 11) }, cost: null, provisional: 0.3 - (i / LINES) * 0.2, backlog: 400 - Math.floor((i / LINES) * 300),
  };
  lines.push(historyLine(meta, perQueryOf(demoLikeQueries(N, 7, (i % 89) / 400)), i === 0));
}
const file = join(repo, 'history.jsonl');
writeFileSync(file, lines.join('\n') + '\n');
const genS = (Date.now() - t0) / 1000;

// in-process: the time and the git processes
process.chdir(repo);
const { run } = await import('../src/cli/history.ts');
const quiet = async (argv: string[]) => {
  const log = console.log;
  const err = console.error;
  let out = '';
  console.log = (...a: unknown[]) => void (out += a.join(' ') + '\n');
  console.error = (...a: unknown[]) => void (out += a.join(' ') + '\n');
  try {
    return { code: await run(argv), out };
  } finally {
    console.log = log;
    console.error = err;
  }
};
let g0 = gitProcessCount();
let t1 = Date.now();
const r = await quiet(['--file', 'history.jsonl']);
const inProc = (Date.now() - t1) / 1000;
const gitN = gitProcessCount() - g0;
// as a process, start-up included
t1 = Date.now();
const child = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), 'history', '--file', 'history.jsonl'], { cwd: repo, encoding: 'utf8', maxBuffer: 1 << 26 });
const asProc = (Date.now() - t1) / 1000;
const page = join(dir, 'trend.html');
g0 = gitProcessCount();
t1 = Date.now();
const h = await quiet(['--file', 'history.jsonl', '--html', page]);
const pageS = (Date.now() - t1) / 1000;
const pageGit = gitProcessCount() - g0;
process.chdir(ROOT);

const mb = (b: number) => (b / 1024 / 1024).toFixed(2);
const head = r.out.split('\n')[0];
const drift = r.out.split('\n').filter((l) => /^drift over|^ {2}(drift|none):/.test(l)).map((l) => l.trim()).join('\n  ');
console.log(`rankgate history bench: ${COMMITS} baseline commits (${N} queries each) + a ${LINES}-line history file (${mb(statSync(file).size)} MB); generated in ${genS.toFixed(1)} s`);
console.log(`  ${head}`);
console.log(`  ${drift}`);
console.log(`  rankgate history, in-process: ${inProc.toFixed(2)} s, exit ${r.code}, ${gitN} git processes (target <= 10 s; one pass, never one per commit)`);
console.log(`  rankgate history, as a process (node bin/rankgate.js, start-up included): ${asProc.toFixed(2)} s, exit ${child.status}`);
console.log(`  rankgate history --html: ${pageS.toFixed(2)} s, exit ${h.code}, page ${mb(statSync(page).size)} MB (target <= 2 MB), ${pageGit} git processes`);
console.log(`  machine: ${cpus().length} cores; load: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
if (o.keep) console.log(`  kept: ${dir}`);
else rmSync(dir, { recursive: true, force: true });
