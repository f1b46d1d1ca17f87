/**
 * rankgate from a registry, the way a team installs it (issue 46): run by CI's third leg (.ci/leg-registry.sh), which
 * starts a verdaccio on 127.0.0.1 holding promptfoo and rankgate's dependencies and no uplink (no network), and packs this
 * checkout and the previous release. Here:
 *   1. both packages are published to it (npm publish, as a release would);
 *   2. a fresh directory: `npm i -D promptfoo@<pinned> rankgate@<version>`, `npx rankgate@<version> init`, the eval
 *      (`npx promptfoo eval`), the gate and a baseline: the path the README gives;
 *   3. an upgrade: a directory on the previous release writes its baseline, upgrades to this version, and gates against
 *      that baseline (read, compared: no format refusal), then evaluates and gates again.
 * Needs RANKGATE_TEST_REGISTRY (and RANKGATE_TEST_PACKAGES, RANKGATE_TEST_PREVIOUS, RANKGATE_TEST_PROMPTFOO), which
 * only that leg sets.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { helpdeskFiles } from '../test/cli/helpers.ts';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const REGISTRY = process.env.RANKGATE_TEST_REGISTRY;
const PACKAGES = process.env.RANKGATE_TEST_PACKAGES;
const PREVIOUS = process.env.RANKGATE_TEST_PREVIOUS;
const PROMPTFOO = process.env.RANKGATE_TEST_PROMPTFOO;
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const missing = !REGISTRY || !PACKAGES || !PREVIOUS || !PROMPTFOO ? 'needs RANKGATE_TEST_REGISTRY, RANKGATE_TEST_PACKAGES, RANKGATE_TEST_PREVIOUS and RANKGATE_TEST_PROMPTFOO (.ci/leg-registry.sh starts the registry and sets them)' : false;

interface Run {
  code: number | null;
  out: string;
}

/** A command in `cwd` with npm pointed at the local registry only (its own npmrc, cache and HOME: nothing of the machine's). */
function sh(cwd: string, home: string, cmd: string, args: string[], timeoutMs = 600_000): Promise<Run> {
  return new Promise((resolve) => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: home,
      npm_config_userconfig: join(home, '.npmrc'),
      npm_config_cache: join(home, '.npm'),
      npm_config_registry: REGISTRY,
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      PROMPTFOO_CONFIG_DIR: join(cwd, '.promptfoo'),
      PROMPTFOO_DISABLE_TELEMETRY: '1',
      PROMPTFOO_DISABLE_UPDATE: '1',
      PROMPTFOO_DISABLE_SHARING: '1',
      PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
      NO_COLOR: '1',
      CI: 'true',
    };
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}

function teamDir(base: string, name: string): string {
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true }) + '\n');
  helpdeskFiles(dir);
  return dir;
}

const tail = (s: string, n = 3000) => s.slice(-n);

test('published to a registry, installed and used as a team would, and an upgrade keeps the baseline readable', { skip: missing, timeout: 3_600_000 }, async () => {
  const base = mkdtempSync(join(tmpdir(), 'rankgate-registry-'));
  const home = join(base, 'home');
  mkdirSync(home);
  // any token: the local registry lets anonymous publishes in (npm refuses to publish without one)
  writeFileSync(join(home, '.npmrc'), `registry=${REGISTRY}\n${REGISTRY!.replace(/^https?:/, '')}/:_authToken=local-test\n`);
  try {
    // 1. publish this version and the previous release
    const tgz = readdirSync(PACKAGES!).filter((f) => f.endsWith('.tgz'));
    for (const v of [PREVIOUS!, VERSION]) {
      const f = tgz.find((x) => x === `rankgate-${v}.tgz`);
      assert.ok(f, `${PACKAGES} holds rankgate-${v}.tgz (${tgz.join(', ')})`);
      const pub = await sh(base, home, 'npm', ['publish', join(PACKAGES!, f!), '--registry', REGISTRY!, '--tag', v === VERSION ? 'latest' : 'previous', '--provenance=false']);
      assert.equal(pub.code, 0, `npm publish rankgate@${v}: ${tail(pub.out)}`);
    }
    const info = await sh(base, home, 'npm', ['view', 'rankgate', 'versions', '--json']);
    assert.deepEqual(JSON.parse(info.out), [PREVIOUS, VERSION].sort());

    // 2. a team's first day: install, init, eval, gate, baseline
    const team = teamDir(base, 'team');
    const inst = await sh(team, home, 'npm', ['install', '-D', `promptfoo@${PROMPTFOO}`, `rankgate@${VERSION}`]);
    assert.equal(inst.code, 0, tail(inst.out));
    const ver = await sh(team, home, 'npx', ['rankgate', '--version']);
    assert.equal(ver.out.trim(), VERSION, ver.out);
    const init = await sh(team, home, 'npx', ['--registry', REGISTRY!, `rankgate@${VERSION}`, 'init', '--golden', 'eval/golden.yaml', '--corpus', 'help']);
    assert.equal(init.code, 0, tail(init.out));
    assert.match(init.out, /wrote promptfooconfig\.yaml/);
    const ev = await sh(team, home, 'npx', ['promptfoo', 'eval', '-o', 'results.jsonl', '--no-cache', '--no-table', '--no-progress-bar']);
    console.log(`# transcript: npx promptfoo eval (rankgate ${VERSION} from ${REGISTRY}), exit ${ev.code}\n${ev.out.split('\n').filter((l) => /^rankgate|PASSED|FAILED|ERROR/.test(l)).join('\n')}`);
    assert.ok(ev.code === 0 || ev.code === 1, tail(ev.out));
    const gate = await sh(team, home, 'npx', ['rankgate', 'gate', 'results.jsonl', '--update-baseline']);
    assert.equal(gate.code, ev.code, tail(gate.out));
    assert.match(gate.out, /baseline written: config\/search-baseline\.json/);

    // 3. an upgrade from the previous release: its baseline is read by this version
    const old = teamDir(base, 'upgrade');
    const oinst = await sh(old, home, 'npm', ['install', '-D', `promptfoo@${PROMPTFOO}`, `rankgate@${PREVIOUS}`]);
    assert.equal(oinst.code, 0, tail(oinst.out));
    const oinit = await sh(old, home, 'npx', ['rankgate', 'init', '--golden', 'eval/golden.yaml', '--corpus', 'help']);
    assert.equal(oinit.code, 0, tail(oinit.out));
    const oev = await sh(old, home, 'npx', ['promptfoo', 'eval', '-o', 'old.jsonl', '--no-cache', '--no-table', '--no-progress-bar']);
    assert.ok(oev.code === 0 || oev.code === 1, tail(oev.out));
    const obase = await sh(old, home, 'npx', ['rankgate', 'gate', 'old.jsonl', '--update-baseline']);
    assert.match(obase.out, /baseline written: config\/search-baseline\.json/, tail(obase.out));
    const up = await sh(old, home, 'npm', ['install', '-D', `rankgate@${VERSION}`]);
    assert.equal(up.code, 0, tail(up.out));
    const upv = await sh(old, home, 'npx', ['rankgate', '--version']);
    assert.equal(upv.out.trim(), VERSION);
    // the old results against the old baseline, by the new gate: read and compared, the same verdict
    const regate = await sh(old, home, 'npx', ['rankgate', 'gate', 'old.jsonl']);
    console.log(`# transcript: rankgate ${VERSION} gates the ${PREVIOUS} results against the ${PREVIOUS} baseline, exit ${regate.code}\n${tail(regate.out, 1500)}`);
    assert.equal(regate.code, obase.code, tail(regate.out));
    assert.doesNotMatch(regate.out, /format version|not a rankgate baseline|is not evidence/);
    assert.match(regate.out, /regression check/);
    // a fresh eval of the new version against the old baseline
    const nev = await sh(old, home, 'npx', ['promptfoo', 'eval', '-o', 'new.jsonl', '--no-cache', '--no-table', '--no-progress-bar']);
    assert.ok(nev.code === 0 || nev.code === 1, tail(nev.out));
    const ngate = await sh(old, home, 'npx', ['rankgate', 'gate', 'new.jsonl']);
    assert.equal(ngate.code, nev.code, tail(ngate.out));
    assert.match(ngate.out, /regression check .* on 16 shared queries/);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
