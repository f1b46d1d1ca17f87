/**
 * The toolchain reader (src/util/toolchain.ts): npm's engines ranges read the way npm reads them (prereleases
 * included), unreadable ranges failing closed, the repository's promptfoo found before rankgate's own, broken installs
 * named, and the Node a CI workflow should set up. Fake promptfoo packages are built in temp folders.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isUserError } from '../../src/errors.ts';
import { fakeProject } from '../helpers/fake-promptfoo.ts';
import { acceptedLines, ciNodeFor, parseVersion, resolvePromptfoo, satisfies, startProblem, testedPromptfooRange, toolchainOf, toolchainOfOutput } from '../../src/util/toolchain.ts';

test('engines ranges: the forms npm packages state, as npm reads them', () => {
  const pf = '^20.20.0 || >=22.22.0';
  for (const [v, ok] of [
    ['20.20.0', true], ['v20.20.2', true], ['20.19.9', false], ['21.7.0', false], ['22.21.9', false], ['22.22.0', true], ['24.21.0', true], ['25.0.0', true],
  ] as const) assert.equal(satisfies(v, pf), ok, `${v} in ${pf}`);
  assert.equal(satisfies('22.23.3', '>=22.22.0'), true);
  assert.equal(satisfies('20.20.2', '>=22.22.0'), false);
  assert.equal(satisfies('20.20.2', '>= 20'), true, 'a space after the operator');
  assert.equal(satisfies('18.20.0', '18 || 20 || >=22'), true, 'bare majors');
  assert.equal(satisfies('19.0.0', '18 || 20 || >=22'), false);
  assert.equal(satisfies('20.16.0', '>=20.16.0 <21 || >=22.3.0'), true, 'AND within a set');
  assert.equal(satisfies('21.0.0', '>=20.16.0 <21 || >=22.3.0'), false);
  assert.equal(satisfies('20.5.1', '20.x'), true);
  assert.equal(satisfies('20.5.1', '~20.4'), false);
  assert.equal(satisfies('0.121.20', '^0.121.0'), true);
  assert.equal(satisfies('0.122.0', '^0.121.0'), false, 'a 0.x caret holds the minor');
  assert.equal(satisfies('0.123.1', '>=0.121.20 <0.124.0'), true);
  assert.equal(satisfies('0.124.0', '>=0.121.20 <0.124.0'), false);
  assert.equal(satisfies('1.2.3', '*'), true);
  assert.equal(satisfies('1.2.3', ''), true);
});

test('prerelease versions: ordered below their release, and an upper bound keeps out the next line\'s prereleases', () => {
  assert.equal(satisfies('22.22.0-rc.1', '>=22.22.0'), false);
  assert.equal(satisfies('24.0.0-nightly20260101', '>=22.22.0'), true);
  assert.equal(satisfies('0.124.0-beta.1', '>=0.121.20 <0.124.0'), false, 'not a tested release');
  assert.equal(satisfies('21.0.0-pre', '^20.20.0'), false);
  assert.equal(satisfies('1.0.0-alpha.10', '>1.0.0-alpha.9'), true, 'numeric identifiers compare as numbers');
  assert.equal(satisfies('1.0.0-alpha', '>1.0.0-1'), true, 'alphanumeric above numeric');
  assert.deepEqual(parseVersion('v24.21.0'), { n: [24, 21, 0], pre: [] });
  assert.equal(parseVersion('24.21'), null);
});

test('a range or version the reader cannot read is null (the caller fails closed), never a guess', () => {
  for (const r of ['>=abc', '1.2.3 - 2.0.0', 'latest', '>=1.x.3', 'node >= 20', '^20.20.0 ||| >=22']) assert.equal(satisfies('20.20.0', r), null, r);
  assert.equal(satisfies('not-a-version', '>=20'), null);
  assert.equal(acceptedLines('>=abc'), null);
  assert.deepEqual(acceptedLines('>=22.22.0'), [22, 24]);
  assert.deepEqual(acceptedLines('^20.20.0 || >=22.22.0'), [20, 22, 24]);
  assert.deepEqual(acceptedLines(null), [20, 22, 24]);
});

test('the repository\'s promptfoo is found before rankgate\'s own; its version, engines and bin read from its package.json', () => {
  const dir = fakeProject({ version: '0.123.1', engines: { node: '>=22.22.0' } });
  try {
    mkdirSync(join(dir, 'sub', 'deeper'), { recursive: true });
    for (const from of [dir, join(dir, 'sub', 'deeper')]) {
      const pf = resolvePromptfoo(from)!;
      assert.equal(pf.from, 'project');
      assert.equal(pf.version, '0.123.1');
      assert.equal(pf.engines, '>=22.22.0');
      assert.equal(pf.bin, join(dir, 'node_modules', 'promptfoo', 'dist', 'src', 'entrypoint.js'));
    }
    const problem = startProblem(resolvePromptfoo(dir)!, 'v20.20.2');
    assert.match(problem!, /promptfoo 0\.123\.1 requires Node >=22\.22\.0 and this is Node 20\.20\.2: it cannot start here\. Run on Node 22 or 24 .*npm i -D promptfoo@0\.121\.20/);
    assert.equal(startProblem(resolvePromptfoo(dir)!, 'v24.21.0'), null);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // a folder without promptfoo: rankgate's own copy (this checkout's devDependency)
  const empty = realpathSync(mkdtempSync(join(tmpdir(), 'rankgate-toolchain-')));
  try {
    const own = resolvePromptfoo(empty)!;
    assert.equal(own.from, 'rankgate');
    assert.match(own.version, /^0\.\d+\.\d+/);
    assert.equal(satisfies(own.version, testedPromptfooRange()!), true, 'rankgate\'s own promptfoo is in its tested range');
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

test('a broken promptfoo install is exit 2 naming its package.json; engines that cannot be read fail closed', () => {
  for (const [pkg, why] of [
    ['{"name": "promptfoo", "version": ', /package\.json: cannot read promptfoo's package\.json \(Unexpected end/],
    // node_modules/promptfoo without its package.json: broken, not absent (never a silent fallback to another copy)
    [null, /package\.json: cannot read promptfoo's package\.json \(ENOENT\)/],
    [{ version: 123 }, /package\.json: version: expected promptfoo's version string, got 123/],
  ] as const) {
    const dir = fakeProject(pkg as Record<string, unknown> | string | null);
    try {
      assert.throws(() => resolvePromptfoo(dir), (e: Error) => isUserError(e) && e.exitCode === 2 && why.test(e.message) && e.message.includes(join(dir, 'node_modules', 'promptfoo')));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const odd = fakeProject({ version: '9.0.0', engines: { node: 'node 20 or newer' } });
  try {
    assert.match(startProblem(resolvePromptfoo(odd)!, 'v20.20.2')!, /promptfoo 9\.0\.0 .* states engines\.node 'node 20 or newer', which rankgate cannot read against Node 20\.20\.2/);
  } finally {
    rmSync(odd, { recursive: true, force: true });
  }
  const none = fakeProject({ version: '9.0.0' });
  try {
    assert.equal(startProblem(resolvePromptfoo(none)!, 'v20.20.2'), null, 'no engines: no constraint');
  } finally {
    rmSync(none, { recursive: true, force: true });
  }
});

test('the CI Node: the running line when promptfoo accepts it, else the lowest of 20/22/24 it accepts', () => {
  const latest = { version: '0.123.1', engines: '>=22.22.0' };
  const pinned = { version: '0.121.20', engines: '^20.20.0 || >=22.22.0' };
  assert.equal(ciNodeFor(latest, 'v24.21.0').major, 24);
  assert.equal(ciNodeFor(latest, 'v22.23.3').major, 22);
  const low = ciNodeFor(latest, 'v20.20.2');
  assert.equal(low.major, 22);
  assert.match(low.why, /lowest of Node 20\/22\/24 that promptfoo 0\.123\.1 accepts \(engines >=22\.22\.0\); the Node running rankgate init \(20\.20\.2\) is outside it/);
  assert.equal(ciNodeFor(latest, 'v22.21.0').major, 22, 'an older 22 running init: CI\'s newest 22 is accepted');
  assert.equal(ciNodeFor(pinned, 'v20.20.2').major, 20);
  assert.equal(ciNodeFor(pinned, 'v23.1.0').major, 20, 'an odd line is not an LTS to pin');
  assert.equal(ciNodeFor({ version: '9.0.0', engines: '>=abc' }, 'v20.20.2').major, 20);
  assert.match(ciNodeFor({ version: '9.0.0', engines: '>=abc' }, 'v20.20.2').why, /engines '>=abc' accept none .* that rankgate can read/);
});

test('the toolchain record: this Node and the given promptfoo; a results file\'s own metadata', () => {
  assert.deepEqual(toolchainOf({ version: '0.123.1' }, 'v24.21.0'), { node: '24.21.0', promptfoo: '0.123.1' });
  assert.deepEqual(toolchainOf(null, 'v20.20.2'), { node: '20.20.2', promptfoo: null });
  assert.deepEqual(toolchainOfOutput({ promptfooVersion: '0.121.20', nodeVersion: 'v20.20.2', platform: 'linux' }), { node: '20.20.2', promptfoo: '0.121.20' });
  assert.deepEqual(toolchainOfOutput({ promptfooVersion: '0.121.20' }), { node: null, promptfoo: '0.121.20' });
  for (const bad of [null, undefined, 'x', {}, { promptfooVersion: 3 }]) assert.equal(toolchainOfOutput(bad), null);
});
