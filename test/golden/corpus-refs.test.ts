/**
 * Expected documents checked against the corpus (src/golden/corpus-refs.ts): `rankgate golden check --corpus` and the
 * eval's start refuse an expected path / doc_id / rankgate chunk id that no document has, FILE:LINE with a
 * did-you-mean against the corpus's paths.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { evalStartCheck, unknownDocumentLines } from '../../src/golden/corpus-refs.ts';
import { loadGoldenFile } from '../../src/golden/index.ts';
import { run as goldenCheck } from '../../src/cli/golden-check.ts';
import { tempDir } from '../harness/helpers.ts';
import { capture } from '../helpers/capture.ts';

function team(root: string): { corpus: string; golden: string } {
  const corpus = join(root, 'kb');
  mkdirSync(join(corpus, 'brakes'), { recursive: true });
  writeFileSync(join(corpus, 'brakes', 'disc-brake-squeal.md'), '# Disc brake squeal\n\nGlazed pads squeal.\n');
  writeFileSync(join(corpus, 'brakes', 'pad-wear.md'), '# Pad wear\n\nReplace pads at 3 mm.\n');
  writeFileSync(join(corpus, 'tyres.md'), '# Tyres\n\nCheck pressure monthly.\n');
  const golden = join(root, 'golden.yaml');
  writeFileSync(
    golden,
    [
      '# brakes and tyres',
      '- id: squeal',
      '  query: why do my brakes squeal',
      '  category: brakes',
      '  expected_paths: [brakes/disc-brake-squeal.md]',
      '- id: pads',
      '  query: when to replace pads',
      '  category: brakes',
      '  expected_paths:',
      '    - brakes/pad-wear.md',
      '    - brakes/pad-waer.md',
      '- id: rotor',
      '  query: warped rotor',
      '  category: brakes',
      '  expected_paths: [rotor.md]',
      '- id: tyres',
      '  query: tyre pressure',
      '  category: tyres',
      '  expected_paths: [disc-brake-squeal.md, tyres]',
      '',
    ].join('\n'),
  );
  return { corpus, golden };
}

describe('expected documents against the corpus', () => {
  it('one line per expected document no document has: FILE:LINE (query) field, did-you-mean by path and by file name', () => {
    const root = tempDir('corpus-refs');
    try {
      const { golden } = team(root);
      const docs = [
        { id: 'disc-brake-squeal', path: 'brakes/disc-brake-squeal.md' },
        { id: 'pad-wear', path: 'brakes/pad-wear.md' },
        { id: 'tyres', path: 'tyres.md' },
      ];
      const lines = unknownDocumentLines(golden, loadGoldenFile(golden), docs, 'kb');
      assert.deepEqual(lines, [
        `${golden}:11 (pads) expected path: no document of corpus kb (3 documents) has path (or id) "brakes/pad-waer.md"; did you mean "brakes/pad-wear.md"?; the query could never find it`,
        `${golden}:15 (rotor) expected path: no document of corpus kb (3 documents) has path (or id) "rotor.md"; the query could never find it`,
        `${golden}:19 (tyres) expected path: no document of corpus kb (3 documents) has path (or id) "disc-brake-squeal.md"; did you mean "brakes/disc-brake-squeal.md"?; the query could never find it`,
      ]);
      // doc ids and rankgate chunk ids name documents by id; other chunk ids are the source's own (not checked)
      const jsonl = join(root, 'gold.jsonl');
      writeFileSync(
        jsonl,
        [
          JSON.stringify({ id: 'a', query: 'squeal', category: 'c', expected: [{ doc_id: 'disc-brake-sqeal', grade: 3, relevant: true }] }),
          JSON.stringify({ id: 'b', query: 'pads', category: 'c', expected: [{ chunk_id: 'pad-wear#c300-0', grade: 3, relevant: true }, { chunk_id: 'padwear#c300-1', grade: 3, relevant: true }, { chunk_id: 'nq_000123', grade: 3, relevant: true }] }),
        ].join('\n') + '\n',
      );
      const jl = unknownDocumentLines(jsonl, [
        { id: 'a', query: 'squeal', language: 'en', category: 'c', tags: [], slices: {}, expected_routing: 'search', expected: [{ doc_id: 'disc-brake-sqeal', grade: 3, relevant: true }] },
        { id: 'b', query: 'pads', language: 'en', category: 'c', tags: [], slices: {}, expected_routing: 'search', expected: [{ chunk_id: 'pad-wear#c300-0', grade: 3, relevant: true }, { chunk_id: 'padwear#c300-1', grade: 3, relevant: true }, { chunk_id: 'nq_000123', grade: 3, relevant: true }] },
      ], docs, 'kb');
      assert.equal(jl.length, 2, jl.join('\n'));
      assert.match(jl[0]!, /gold\.jsonl:1 \(a\) expected doc_id: no document of corpus kb \(3 documents\) has id "disc-brake-sqeal"; did you mean "disc-brake-squeal"\?/);
      assert.match(jl[1]!, /gold\.jsonl:2 \(b\) expected chunk_id: .*the document of chunk id "padwear#c300-1"; did you mean "pad-wear"\?/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('rankgate golden check --corpus: exit 2 with the lines; a golden set whose documents all exist passes (no index needed)', async () => {
    const root = tempDir('corpus-refs-cli');
    try {
      const { corpus, golden } = team(root);
      const db = join(root, 'db');
      const bad = await capture(() => goldenCheck(['--corpus', corpus, '--db', db, golden]));
      assert.equal(bad.code, 2, bad.out + bad.err);
      assert.match(bad.err, new RegExp(`^error: ${golden.replace(/[.\\/]/g, '\\$&')}:11 \\(pads\\) expected path: .*"brakes/pad-waer\\.md"; did you mean "brakes/pad-wear\\.md"\\?`, 'm'));
      assert.equal(bad.err.trim().split('\n').length, 3, bad.err);
      assert.match(bad.out, /expected documents against corpus \S+kb \(3 documents\): 3 not found/);
      const good = join(root, 'good.yaml');
      writeFileSync(good, '- id: ok\n  query: squeal\n  category: brakes\n  expected_paths: [brakes/disc-brake-squeal.md, tyres]\n');
      const ok = await capture(() => goldenCheck(['--corpus', corpus, '--db', db, good]));
      assert.equal(ok.code, 0, ok.out + ok.err);
      assert.match(ok.out, /0 not found/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("the eval's start: the queries whose expected document is missing error alone (one line each, with advice), the full list once on stderr; nothing when every document exists", async () => {
    const root = tempDir('corpus-refs-start');
    try {
      const { corpus, golden } = team(root);
      const w = process.stderr.write;
      let err = '';
      process.stderr.write = ((s: string) => ((err += s), true)) as typeof process.stderr.write;
      let byQuery: Map<string, string>;
      try {
        byQuery = await evalStartCheck(corpus, undefined, [golden], 'kb');
        assert.equal(await evalStartCheck(corpus, undefined, [golden], 'kb'), byQuery, 'checked once');
      } finally {
        process.stderr.write = w;
      }
      assert.deepEqual([...byQuery.keys()].sort(), ['pads', 'rotor', 'tyres'], 'the query whose documents exist (squeal) is measured');
      assert.match(
        byQuery.get('pads')!,
        /^golden set: an expected document is not in the corpus \(nothing measured for this query\): .*golden\.yaml:11 \(pads\) expected path: .*"brakes\/pad-waer\.md"; did you mean "brakes\/pad-wear\.md"\?.*; update the golden set \(this query's expected document\) or the document's path in corpus kb$/,
      );
      assert.equal(err.match(/expected path:/g)?.length, 3, 'the full list once');
      assert.match(err, /those 3 queries error; the others are measured/);
      const good = join(root, 'good.yaml');
      writeFileSync(good, '- id: ok\n  query: squeal\n  category: brakes\n  expected_paths: [brakes/disc-brake-squeal.md]\n');
      assert.equal((await evalStartCheck(corpus, undefined, [good], 'kb')).size, 0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

it('a JSONL corpus: documents by id, the file name every record shares is no document path', async () => {
  const root = tempDir('corpus-refs-jsonl');
  try {
    const corpus = join(root, 'docs.jsonl');
    writeFileSync(corpus, [{ id: 'd1', title: 'One', text: 'first' }, { id: 'd2', title: 'Two', text: 'second' }].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const golden = join(root, 'g.yaml');
    writeFileSync(golden, '- id: a\n  query: one\n  category: c\n  expected_paths: [d1, docs.jsonl]\n');
    const w = process.stderr.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    let line: string | undefined;
    try {
      line = (await evalStartCheck(corpus, undefined, [golden], 'docs.jsonl')).get('a');
    } finally {
      process.stderr.write = w;
    }
    assert.match(line!, /g\.yaml:4 \(a\) expected path: no document of corpus docs\.jsonl \(2 documents\) has path \(or id\) "docs\.jsonl"/);
    assert.doesNotMatch(line!, /"d1"/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
