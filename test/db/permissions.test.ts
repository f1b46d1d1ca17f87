/**
 * Files only their owner can write, whatever the umask: under umask 0, a new PGlite data directory (made by initdb,
 * then one unpacked from the template) is 0700 with its files 0600, also after writes and a reopen; a directory of
 * another user is refused; the template is trusted only in a folder of this user closed to others, as a file of this
 * user not writable by others, read through one descriptor (a link or a fifo in its place is not read); the files of
 * writeFileAtomic (baselines, reports, caches) are never writable by others.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPglite } from '../../src/db/index.ts';
import { readTemplate } from '../../src/db/pglite-template.ts';
import { writeFileAtomic } from '../../src/util/atomic.ts';

const tmp = mkdtempSync(join(tmpdir(), 'rankgate-perms-'));
const ROOT = process.getuid?.() === 0;
const OTHER = 54321; // a uid no account here has

/** Every entry under `dir` (and `dir` itself) whose mode lets group or others in: [path, octal mode]. */
function openToOthers(dir: string): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (st.isSymbolicLink()) return;
    if (st.isDirectory() ? (st.mode & 0o777) !== 0o700 : (st.mode & 0o777) !== 0o600) out.push(`${p.slice(dir.length) || '.'} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(join(p, n));
  };
  walk(dir);
  return out;
}

async function withTemplateAsync<T>(path: string, f: () => Promise<T>): Promise<T> {
  const prev = process.env.RANKGATE_PGLITE_TEMPLATE;
  process.env.RANKGATE_PGLITE_TEMPLATE = path;
  try {
    return await f();
  } finally {
    if (prev === undefined) delete process.env.RANKGATE_PGLITE_TEMPLATE;
    else process.env.RANKGATE_PGLITE_TEMPLATE = prev;
  }
}

function withTemplate<T>(path: string, f: () => T): T {
  const prev = process.env.RANKGATE_PGLITE_TEMPLATE;
  process.env.RANKGATE_PGLITE_TEMPLATE = path;
  try {
    return f();
  } finally {
    if (prev === undefined) delete process.env.RANKGATE_PGLITE_TEMPLATE;
    else process.env.RANKGATE_PGLITE_TEMPLATE = prev;
  }
}

describe('owner-only files whatever the umask', () => {
  let umask = 0;
  const template = join(tmp, 'tpl', 'template.tar.gz');
  before(() => {
    umask = process.umask(0); // the worst umask: every file Node or PGlite creates would be world-writable
  });
  after(() => {
    process.umask(umask);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('a data directory made by initdb, then one from the template: 0700 folders, 0600 files, after writes and a reopen', async () => {
    for (const name of ['by-initdb', 'from-template']) {
      const dir = join(tmp, name);
      const pglite = await withTemplateAsync(template, () => createPglite(dir));
      assert.deepEqual(openToOthers(dir), [], `${name}: right after creation`);
      await pglite.exec('CREATE TABLE t (x int); INSERT INTO t SELECT generate_series(1, 1000); CREATE INDEX ON t (x)');
      await pglite.close();
      assert.deepEqual(openToOthers(dir), [], `${name}: files made by the writes, after close`);
      const again = await createPglite(dir, { access: 'read' });
      await again.close();
      assert.deepEqual(openToOthers(dir), [], `${name}: after a reopen`);
    }
    assert.ok(statSync(template).isFile(), 'the first creation kept the template, the second used it');
    assert.equal(statSync(template).mode & 0o777, 0o600);
    assert.equal(statSync(join(tmp, 'tpl')).mode & 0o777, 0o700);
  });

  it('a directory an older rankgate left open (0777, files 0666) is made owner-only when opened', async () => {
    const dir = join(tmp, 'old');
    const src = join(tmp, 'by-initdb');
    execFileSync('cp', ['-a', src, dir]);
    const loosen = (p: string) => {
      const st = lstatSync(p);
      chmodSync(p, st.isDirectory() ? 0o777 : 0o666);
      if (st.isDirectory()) for (const n of readdirSync(p)) loosen(join(p, n));
    };
    loosen(dir);
    assert.ok(openToOthers(dir).length > 900);
    const p = await createPglite(dir, { access: 'read' });
    assert.deepEqual(openToOthers(dir), [], 'tightened when opened');
    await p.close();
  });

  it('a data directory of another user is refused, before PGlite starts', { skip: !ROOT && 'needs root to give a directory to another uid' }, async () => {
    const dir = join(tmp, 'foreign');
    execFileSync('cp', ['-a', join(tmp, 'by-initdb'), dir]);
    chownSync(dir, OTHER, OTHER);
    await assert.rejects(createPglite(dir, { access: 'read' }), new RegExp(`foreign: the data directory belongs to user ${OTHER}, not to this user \\(0\\)`));
    const empty = join(tmp, 'foreign-empty');
    mkdirSync(empty);
    chownSync(empty, OTHER, OTHER);
    await assert.rejects(createPglite(empty), /belongs to user 54321/);
    assert.deepEqual(readdirSync(empty), [], 'nothing written into it');
  });

  it('the template: not read from a folder or file another user owns or may write, a link or a fifo; read otherwise', () => {
    assert.ok(withTemplate(template, readTemplate), 'the good copy is read');
    const cases: [string, (dir: string, file: string) => void][] = [
      ['file writable by others', (_d, f) => chmodSync(f, 0o666)],
      ['folder writable by others', (d) => chmodSync(d, 0o777)],
      ['a symbolic link to a good copy', (_d, f) => (rmSync(f), symlinkSync(template, f))],
      ['a fifo', (_d, f) => (rmSync(f), execFileSync('mkfifo', [f]))],
      ['the folder is a link to a good folder', (d) => (rmSync(d, { recursive: true }), symlinkSync(join(tmp, 'tpl'), d))],
      ...(ROOT
        ? ([
            ['file of another user', (_d, f) => chownSync(f, OTHER, OTHER)],
            ['folder of another user (made first, in the shared temp dir)', (d) => chownSync(d, OTHER, OTHER)],
          ] as [string, (dir: string, file: string) => void][])
        : []),
    ];
    for (const [what, spoil] of cases) {
      const d = join(tmp, `t-${what.replace(/\W+/g, '-')}`);
      mkdirSync(d, { mode: 0o700 });
      const f = join(d, 'template.tar.gz');
      copyFileSync(template, f);
      chmodSync(f, 0o600);
      assert.ok(withTemplate(f, readTemplate), `${what}: the copy is read before it is spoiled`);
      spoil(d, f);
      assert.equal(withTemplate(f, readTemplate), undefined, `${what}: not read`);
    }
  });

  it('writeFileAtomic: a new file is 0644 under umask 0; a private file stays private; a group-writable one loses it', () => {
    const f = join(tmp, 'out', 'baseline.json');
    writeFileAtomic(f, '{}');
    assert.equal(statSync(f).mode & 0o777, 0o644);
    assert.equal(statSync(join(tmp, 'out')).mode & 0o777, 0o755);
    chmodSync(f, 0o600);
    writeFileAtomic(f, '{"a":1}');
    assert.equal(statSync(f).mode & 0o777, 0o600);
    chmodSync(f, 0o666);
    writeFileAtomic(f, '{"a":2}');
    assert.equal(statSync(f).mode & 0o777, 0o644);
  });
});
