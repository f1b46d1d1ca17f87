/**
 * Ingest stays inside the corpus: symbolic links leading outside the corpus folder (to a file, to a folder, broken)
 * and special files (a fifo, a socket) are skipped with one counted warning; links that stay inside are followed only
 * with followSymlinks (`rankgate ingest --follow-symlinks`, RANKGATE_FOLLOW_SYMLINKS=1), and a link cycle ends.
 * Everything is built here, in a temporary folder.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCorpus } from '../../src/ingest/readers.ts';

const md = (slug: string, text: string) => `---\nslug: ${slug}\n---\n# ${slug}\n\n${text}\n`;

describe('the corpus walk stays inside the corpus folder', { timeout: 60_000 }, () => {
  const base = mkdtempSync(join(tmpdir(), 'rankgate-corpus-bounds-'));
  const corpus = join(base, 'corpus');
  const outside = join(base, 'outside');
  let server: Server | undefined;

  before(async () => {
    mkdirSync(join(corpus, 'sub'), { recursive: true });
    mkdirSync(join(corpus, '.hidden'), { recursive: true });
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(corpus, 'a.md'), md('a', 'the lake at dawn'));
    writeFileSync(join(corpus, 'sub', 'c.md'), md('c', 'a reed in the wind'));
    writeFileSync(join(corpus, '.hidden', 'd.md'), md('d', 'kept out of the walk, reached by a link inside'));
    writeFileSync(join(outside, 'secret.md'), md('secret', 'OUTSIDE-SECRET credentials of the runner'));
    writeFileSync(join(outside, 'b.md'), md('b', 'OUTSIDE-SECRET in a folder'));
    symlinkSync(join(outside, 'secret.md'), join(corpus, 'leak.md')); // a file outside
    symlinkSync(outside, join(corpus, 'leakdir')); // a folder outside
    symlinkSync('../../outside/secret.md', join(corpus, 'sub', 'relative-leak.md')); // relative, outside
    symlinkSync(join(base, 'nowhere.md'), join(corpus, 'broken.md')); // broken
    symlinkSync(join(corpus, '.hidden', 'd.md'), join(corpus, 'inside.md')); // a file inside
    symlinkSync('..', join(corpus, 'sub', 'loop')); // a folder inside: a cycle when followed
    execFileSync('mkfifo', [join(corpus, 'pipe.md')]); // reading it would block for ever
    server = createServer();
    await new Promise<void>((r) => server!.listen(join(corpus, 'sock.md'), r));
  });
  after(() => {
    server?.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('by default: only the regular files inside; every link and special file skipped, counted in one warning', async () => {
    const warnings: string[] = [];
    const docs = await readCorpus(corpus, undefined, { onWarning: (l) => warnings.push(l), followSymlinks: false });
    assert.deepEqual(docs.map((d) => d.id).sort(), ['a', 'c']);
    assert.ok(docs.every((d) => !JSON.stringify(d).includes('OUTSIDE-SECRET')));
    assert.equal(warnings.length, 1, warnings.join('\n'));
    const w = warnings[0]!;
    assert.match(w, /^warning: .*corpus: skipped 8 entries: 4 symbolic links leading outside the corpus \(/);
    assert.match(w, /broken\.md -> \(a broken link\)/);
    assert.match(w, /leak\.md -> .*outside\/secret\.md/);
    assert.match(w, /2 symbolic links inside it, not followed without --follow-symlinks \(inside\.md, sub\/loop\)/);
    assert.match(w, /2 special files \(pipe\.md: fifo, sock\.md: socket\)$/);
  });

  it('followSymlinks: links inside are read, the cycle ends, links outside stay skipped', async () => {
    const warnings: string[] = [];
    const docs = await readCorpus(corpus, 'markdown', { onWarning: (l) => warnings.push(l), followSymlinks: true });
    assert.deepEqual(docs.map((d) => d.id).sort(), ['a', 'c', 'd']);
    assert.ok(docs.every((d) => !JSON.stringify(d).includes('OUTSIDE-SECRET')));
    assert.match(warnings[0]!, /skipped 6 entries: 4 symbolic links leading outside the corpus .*; 2 special files/);
    assert.doesNotMatch(warnings[0]!, /inside it/);
  });

  it('RANKGATE_FOLLOW_SYMLINKS=1 is the same opt-in (for the provider\'s corpus: and other callers)', async () => {
    process.env.RANKGATE_FOLLOW_SYMLINKS = '1';
    try {
      const docs = await readCorpus(corpus, undefined, { onWarning: () => {} });
      assert.deepEqual(docs.map((d) => d.id).sort(), ['a', 'c', 'd']);
    } finally {
      delete process.env.RANKGATE_FOLLOW_SYMLINKS;
    }
  });

  it('a corpus named as a fifo is refused at once; a BEIR folder whose corpus.jsonl leads outside is not read', async () => {
    await assert.rejects(readCorpus(join(corpus, 'pipe.md')), /pipe\.md: a fifo, not a corpus: expected a folder or a regular file/);
    const beir = join(base, 'beir');
    mkdirSync(beir);
    writeFileSync(join(outside, 'corpus.jsonl'), '{"_id": "x", "text": "OUTSIDE-SECRET"}\n');
    symlinkSync(join(outside, 'corpus.jsonl'), join(beir, 'corpus.jsonl'));
    const warnings: string[] = [];
    await assert.rejects(readCorpus(beir, undefined, { onWarning: (l) => warnings.push(l) }), /cannot tell the corpus format/);
    assert.match(warnings.join('\n'), /skipped 1 entry: 1 symbolic link leading outside the corpus \(corpus\.jsonl -> .*outside\/corpus\.jsonl\)/);
  });
});
