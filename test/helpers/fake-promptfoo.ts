/** A team's project folder with a fake promptfoo package in node_modules (its package.json as the test wants it). */
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A project folder with node_modules/promptfoo holding `pkg` as its package.json (a string: written as is). */
export function fakeProject(pkg: Record<string, unknown> | string | null): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rankgate-toolchain-')));
  writeFileSync(join(dir, 'package.json'), '{"name":"team","version":"1.0.0","private":true}\n');
  const pf = join(dir, 'node_modules', 'promptfoo');
  mkdirSync(join(pf, 'dist', 'src'), { recursive: true });
  writeFileSync(join(pf, 'dist', 'src', 'index.cjs'), 'module.exports = {};\n');
  writeFileSync(join(pf, 'dist', 'src', 'entrypoint.js'), 'process.exit(0);\n');
  if (pkg !== null) writeFileSync(join(pf, 'package.json'), typeof pkg === 'string' ? pkg : JSON.stringify({ name: 'promptfoo', main: './dist/src/index.cjs', bin: { promptfoo: 'dist/src/entrypoint.js' }, ...pkg }));
  return dir;
}
