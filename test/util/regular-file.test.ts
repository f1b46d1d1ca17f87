/**
 * src/util/regular-file.ts: every file a user names (a golden set and its --qrels, the files of a BEIR folder, a TREC
 * run or qrels given to trec-eval, the results given to gate / report / merge / review import) is opened without
 * blocking and refused in one line when it is a fifo: never waited on. Each command runs with a spawn timeout, so a
 * hang fails the test (signal SIGKILL) instead of stalling the suite.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotRegularFileError, readRegularFileSync } from '../../src/util/regular-file.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const FIX = join(ROOT, 'test', 'fixtures', 'golden');

function rankgate(args: string[]) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin', 'rankgate.js'), ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
  return { code: r.status, signal: r.signal, out: r.stdout ?? '', err: r.stderr ?? '' };
}
const fifo = (p: string) => {
  const r = spawnSync('mkfifo', [p]);
  assert.equal(r.status, 0, `mkfifo ${p}: ${r.stderr}`);
};

test('readRegularFileSync refuses a fifo without waiting for a writer; a regular file reads as readFileSync', () => {
  const d = mkdtempSync(join(tmpdir(), 'rankgate-fifo-'));
  try {
    fifo(join(d, 'p'));
    assert.throws(() => readRegularFileSync(join(d, 'p')), (e: Error) => e instanceof NotRegularFileError && e.message === 'a fifo, not a regular file');
    assert.throws(() => readRegularFileSync('/dev/zero'), (e: Error) => e instanceof NotRegularFileError && e.message === 'a device, not a regular file');
    assert.match(readRegularFileSync(join(FIX, 'trec', 'tsv', 'qrels.tsv'), 'utf8'), /\S/);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});

test('a fifo given as --qrels, inside a BEIR folder, to trec-eval, or as the results of gate / report / merge / review import: one line naming it, exit 2, no hang', () => {
  const d = mkdtempSync(join(tmpdir(), 'rankgate-fifo-'));
  try {
    const pipe = join(d, 'pipe.jsonl');
    fifo(pipe);
    // BEIR folders: queries.jsonl a fifo; qrels/test.tsv a fifo
    const beirQ = join(d, 'beir-q');
    cpSync(join(FIX, 'beir', 'mini'), beirQ, { recursive: true });
    rmSync(join(beirQ, 'queries.jsonl'));
    fifo(join(beirQ, 'queries.jsonl'));
    const beirR = join(d, 'beir-r');
    cpSync(join(FIX, 'beir', 'mini'), beirR, { recursive: true });
    rmSync(join(beirR, 'qrels', 'test.tsv'));
    fifo(join(beirR, 'qrels', 'test.tsv'));
    const qrels = join(FIX, 'trec', 'tsv', 'qrels.tsv');
    mkdirSync(join(d, 'out'));
    const cases: [string, string[], RegExp][] = [
      ['golden --qrels', ['golden', 'validate', join(FIX, 'trec', 'tsv', 'topics.tsv'), '--qrels', pipe], /pipe\.jsonl.*a fifo, not a regular file, expected a golden-set file/],
      ['golden stats --qrels', ['golden', 'stats', join(FIX, 'trec', 'tsv', 'topics.tsv'), '--qrels', pipe], /pipe\.jsonl.*a fifo, not a regular file/],
      ['BEIR queries.jsonl', ['golden', 'validate', beirQ], /queries\.jsonl.*a fifo, not a regular file/],
      ['BEIR qrels', ['golden', 'validate', beirR], /test\.tsv.*a fifo, not a regular file/],
      ['trec-eval qrels', ['trec-eval', pipe, qrels], /pipe\.jsonl.*a fifo, not a regular file/],
      ['trec-eval run', ['trec-eval', qrels, pipe], /pipe\.jsonl.*a fifo, not a regular file/],
      ['gate', ['gate', pipe], /pipe\.jsonl.*a fifo, not a regular file/],
      ['report', ['report', pipe, '--html', join(d, 'out', 'r.html')], /pipe\.jsonl.*a fifo, not a regular file/],
      ['merge', ['merge', join(d, 'out', 'm.jsonl'), pipe], /pipe\.jsonl.*a fifo, not a regular file/],
      ['review import', ['review', 'import', pipe, '--key', pipe], /pipe\.jsonl.*a fifo, not a regular file/],
    ];
    for (const [name, args, re] of cases) {
      const r = rankgate(args);
      assert.equal(r.signal, null, `${name}: killed after the timeout: it waited on the fifo`);
      assert.equal(r.code, 2, `${name}: ${r.out}${r.err}`);
      const text = (r.out + r.err).trim();
      assert.match(text, re, name);
      assert.doesNotMatch(text, /\n\s+at .+:\d+:\d+\)?$/m, `${name}: stack trace`);
      if (!name.startsWith('golden') && !name.startsWith('BEIR')) assert.equal(r.err.trim().split('\n').length, 1, `${name}: one line: ${r.err}`);
    }
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
});
