/**
 * A team's repository with rankgate installed as a dependency, the way `npm i -D ./rankgate-x.tgz` leaves it:
 * the packed tarball (`npm pack`: exactly the files package.json's `files` ships) unpacked in
 * node_modules/rankgate with its bin linked in node_modules/.bin, and rankgate's dependencies beside it.
 *
 * npm itself is not run: an offline `npm i` needs the registry's metadata for every dependency (ENOTCACHED here)
 * and would copy ~1.4 GB per run. The dependencies are symlinks to this checkout's node_modules instead, which is
 * what npm would put there (same versions, from the same lockfile).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'test', 'cli', 'fixtures');
export const RANKGATE_BIN = join(ROOT, 'bin', 'rankgate.js');

export { run, tempDir, type RunResult } from '../harness/helpers.ts';

/**
 * `npm pack` of this checkout into `dest`; returns the tarball's path. Lifecycle scripts are skipped; instead the
 * `rankgate` bin runs once first, which brings a compiled dist/ up to date when the checkout has one (it is packed
 * with the sources, as `prepare` would have built it).
 */
export function packRankgate(dest: string): string {
  execFileSync(process.execPath, [RANKGATE_BIN, '--help'], { cwd: ROOT, stdio: 'ignore' });
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dest], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const name = out.trim().split('\n').pop()!;
  return join(dest, name);
}

/** A fresh repository at `dir` with rankgate from `tarball` installed as a dependency. */
export function consumerRepo(dir: string, tarball: string): void {
  mkdirSync(join(dir, 'node_modules', 'rankgate'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'helpdesk', version: '1.0.0', private: true, devDependencies: { rankgate: `file:${tarball}` } }, null, 2) + '\n');
  execFileSync('tar', ['xzf', tarball, '-C', join(dir, 'node_modules', 'rankgate'), '--strip-components=1']);
  const deps = realpathSync(join(ROOT, 'node_modules'));
  for (const name of readdirSync(deps)) {
    if (name === 'rankgate' || name === '.bin' || name.startsWith('.')) continue;
    symlinkSync(join(deps, name), join(dir, 'node_modules', name));
  }
  symlinkSync('../rankgate/bin/rankgate.js', join(dir, 'node_modules', '.bin', 'rankgate'));
  symlinkSync(realpathSync(join(deps, '.bin', 'promptfoo')), join(dir, 'node_modules', '.bin', 'promptfoo'));
}

/** The help-centre corpus and golden set of test/cli/fixtures/helpdesk copied into `dir` (help/, eval/golden.yaml). */
export function helpdeskFiles(dir: string): void {
  cpSync(join(FIXTURES, 'helpdesk', 'help'), join(dir, 'help'), { recursive: true });
  mkdirSync(join(dir, 'eval'), { recursive: true });
  cpSync(join(FIXTURES, 'helpdesk', 'golden.yaml'), join(dir, 'eval', 'golden.yaml'));
}

export function removeDir(dir: string): void {
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
}
