/**
 * What `npm pack` puts in rankgate's tarball, against its budget: the tarball holds exactly what runs (the compiled
 * dist/, the TypeScript sources promptfoo loads through file://node_modules/rankgate/…, config, docs, the tests loader,
 * the GitHub Action's scripts), never tests, fixtures, benches, CI scripts or data. Read by test/package/pack.test.ts
 * (the budget, checked in CI) and bench/package-size.ts (the figures).
 */
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The budget: packed and unpacked bytes, files. Raise it on purpose, in its own commit, saying why. */
export const BUDGET = { packedBytes: 1_500_000, unpackedBytes: 4_600_000, files: 600 };

/** Paths that must never be in the tarball (a prefix or a pattern). */
export const FORBIDDEN = [/^test\//, /^test-dist\//, /^bench\//, /^\.ci\//, /^\.github\//, /^scripts\//, /(^|\/)fixtures\//, /^datasets\/(corpus|golden)\//, /^data\//, /\.tgz$/, /(^|\/)\.env$/, /(^|\/)node_modules\//];

/** The paths that must be there for rankgate to run from a team's node_modules. */
export const REQUIRED = ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'bin/rankgate.js', 'dist/src/cli/index.js', 'providers/search.ts', 'assertions/gate.ts', 'datasets/tests.ts', 'src/search/keyword_bm25.sql', 'action/action-gate.sh'];

/** `npm pack --dry-run --json` of the checkout (its prepare builds dist first). */
export function packReport(root = ROOT) {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  const json = JSON.parse(out.slice(out.indexOf('[')));
  const r = json[0];
  const files = r.files.map((f) => ({ path: f.path, size: f.size }));
  const byTop = {};
  for (const f of files) {
    const k = f.path.includes('/') ? f.path.slice(0, f.path.indexOf('/') + 1) : f.path;
    byTop[k] = (byTop[k] ?? 0) + f.size;
  }
  return { name: r.name, version: r.version, filename: r.filename, packedBytes: r.size, unpackedBytes: r.unpackedSize, fileCount: r.entryCount, files, byTop };
}

/** The budget's verdict on a report: the lines that break it (empty when it holds). */
export function budgetProblems(rep) {
  const out = [];
  if (rep.packedBytes > BUDGET.packedBytes) out.push(`tarball ${rep.packedBytes} bytes > budget ${BUDGET.packedBytes}`);
  if (rep.unpackedBytes > BUDGET.unpackedBytes) out.push(`unpacked ${rep.unpackedBytes} bytes > budget ${BUDGET.unpackedBytes}`);
  if (rep.fileCount > BUDGET.files) out.push(`${rep.fileCount} files > budget ${BUDGET.files}`);
  for (const f of rep.files) if (FORBIDDEN.some((re) => re.test(f.path))) out.push(`${f.path} must not be in the tarball`);
  const have = new Set(rep.files.map((f) => f.path));
  for (const p of REQUIRED) if (!have.has(p)) out.push(`${p} is missing from the tarball`);
  return out;
}
