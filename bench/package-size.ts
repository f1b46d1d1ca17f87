/**
 * The published tarball's figures (npm run bench:package): packed and unpacked size, file count, the largest files and
 * the bytes per top-level folder, against the budget of scripts/pack-report.mjs (which test/package/pack.test.ts checks).
 */
// @ts-expect-error plain JavaScript module without types
import { BUDGET, budgetProblems, packReport } from '../scripts/pack-report.mjs';

interface Rep {
  filename: string;
  packedBytes: number;
  unpackedBytes: number;
  fileCount: number;
  files: { path: string; size: number }[];
  byTop: Record<string, number>;
}
const t0 = performance.now();
const rep = packReport() as Rep;
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
console.log(`${rep.filename}: ${kb(rep.packedBytes)} packed (budget ${kb(BUDGET.packedBytes)}), ${kb(rep.unpackedBytes)} unpacked (budget ${kb(BUDGET.unpackedBytes)}), ${rep.fileCount} files (budget ${BUDGET.files}); npm pack --dry-run in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.log('\nbytes by top-level entry:');
for (const [k, v] of Object.entries(rep.byTop).sort((a, b) => b[1] - a[1])) console.log(`  ${k.padEnd(16)} ${kb(v).padStart(10)}`);
console.log('\nlargest files:');
for (const f of [...rep.files].sort((a, b) => b.size - a.size).slice(0, 10)) console.log(`  ${kb(f.size).padStart(10)}  ${f.path}`);
const problems = budgetProblems(rep) as string[];
console.log(problems.length ? `\nBUDGET BROKEN:\n${problems.map((p) => `  ${p}`).join('\n')}` : '\nwithin the budget');
