import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { run as ingest } from '../../src/cli/ingest.ts';
import { parseChunkSizes, parseDbFlag } from '../../src/cli/args.ts';
import { run as search, parseWeights, searchParamsFromFlags } from '../../src/cli/search.ts';
import { run as serve } from '../../src/cli/serve.ts';

const userError = (re: RegExp) => (e: Error) => {
  assert.equal(e.name, 'UserError', `${e.name}: ${e.message}`);
  assert.match(e.message, re);
  return true;
};

test('ingest: bad flags fail before anything is opened, naming the flag', async () => {
  await assert.rejects(ingest(['--chunk-size', '300,abc']), userError(/--chunk-size: "abc" is not a whole number/));
  await assert.rejects(ingest(['--chunk-size', '8']), userError(/chunk size: expected an integer >= 16/));
  await assert.rejects(ingest(['--overlap', '300', '--chunk-size', '300']), userError(/overlap: expected an integer from 0 to 299/));
  await assert.rejects(ingest(['--format', 'csv']), userError(/--format: expected one of markdown, jsonl, beir, nq/));
  await assert.rejects(ingest(['--embedder', 'nope']), userError(/unknown embedder "nope"/));
  await assert.rejects(ingest(['--bogus']), userError(/unknown option '--bogus'[\s\S]*usage: rankgate ingest/));
  await assert.rejects(ingest(['--corpus', 'test/fixtures/corpus/does-not-exist']), userError(/does-not-exist: corpus not found/));
  await assert.rejects(ingest(['--corpus', 'test/fixtures/corpus/nq.json', '--format', 'beir']), userError(/nq\.json:1: expected one JSON object per line .*use --format nq/));
});

test('ingest flag parsing', () => {
  assert.deepEqual(parseChunkSizes('300,200,500,300'), [300, 200, 500]);
  assert.deepEqual(parseDbFlag('postgres://u@h:5432/db'), { url: 'postgres://u@h:5432/db' });
  assert.deepEqual(parseDbFlag('postgresql://h/db'), { url: 'postgresql://h/db' });
  assert.deepEqual(parseDbFlag('.rankgate/other'), { dataDir: '.rankgate/other' });
  assert.deepEqual(parseDbFlag(undefined), {});
});

test('search: flags map onto SearchParams; bad ones name the flag', async () => {
  assert.deepEqual(
    searchParamsFromFlags({ mode: 'keyword', 'top-k': '5', 'rrf-k': '30', weights: '0.3,0.7', 'chunk-size': '200', scorer: 'ts_rank_cd', vector: 'exact', language: 'es', book: 'lago' }),
    {
      mode: 'keyword',
      topK: 5,
      rrfK: 30,
      chunkSize: 200,
      weights: { keyword: 0.3, vector: 0.7 },
      keywordScorer: 'ts_rank_cd',
      vectorSearch: 'exact',
      language: 'es',
      filters: { language: 'es', book: 'lago' },
    },
  );
  assert.deepEqual(searchParamsFromFlags({ expansion: 'rm3' }).expansion, { source: 'rm3', fbDocs: 10, fbTerms: 10, originalQueryWeight: 0.5 });
  const hyde = searchParamsFromFlags({ expansion: 'hyde', 'expansion-provider': 'openai:chat:m' }).expansion;
  assert.equal(hyde?.source === 'llm' && `${hyde.kind} ${hyde.provider}`, 'hyde openai:chat:m');
  assert.throws(() => searchParamsFromFlags({ expansion: 'golden' }), userError(/--expansion golden: the golden expansion strings come from a golden entry/));
  assert.throws(() => searchParamsFromFlags({ expansion: 'rewrites' }), userError(/^RANKGATE_EXPANSION=rewrites \(--expansion rewrites\): a model writes the rewrites; name it with --expansion-provider ID/));
  assert.throws(() => searchParamsFromFlags({ expansion: 'rm9' }), userError(/unknown expansion 'rm9'/));
  assert.deepEqual(parseWeights('1,0'), { keyword: 1, vector: 0 });
  for (const w of ['1', '0,0', 'a,b', '-1,2', '1,2,3', ',1']) assert.throws(() => parseWeights(w), userError(/--weights/));
  await assert.rejects(search([]), userError(/missing the query/));
  await assert.rejects(search(['a', 'b']), userError(/expected one query/));
  await assert.rejects(search(['   ']), userError(/the query is empty/));
  await assert.rejects(search(['q', '--mode', 'fuzzy']), userError(/--mode: expected one of hybrid, keyword, semantic/));
  await assert.rejects(search(['q', '--top-k', '0']), userError(/--top-k: expected a whole number from 1/));
  await assert.rejects(search(['q', '--language', 'english!']), userError(/--language/));
  await assert.rejects(search(['q', '--routing', 'test/fixtures/corpus/missing.yaml']), userError(/missing\.yaml: routing config not found/));
});

test('serve: bad flags name the flag', async () => {
  await assert.rejects(serve(['--port', '70000']), userError(/--port: expected a whole number from 0 to 65535/));
  await assert.rejects(serve(['--max-body', '10']), userError(/--max-body/));
  await assert.rejects(serve(['extra']), userError(/unexpected argument "extra"/));
});

test('the rankgate command prints one line, no stack trace, exit code 2', () => {
  const r = spawnSync(process.execPath, ['bin/rankgate.js', 'ingest', '--corpus', 'test/fixtures/corpus/docs.jsonl', '--format', 'nq'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /^rankgate ingest: test\/fixtures\/corpus\/docs\.jsonl: looks like JSONL/);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  const h = spawnSync(process.execPath, ['bin/rankgate.js', 'serve', '--help'], { encoding: 'utf8' });
  assert.equal(h.status, 0);
  assert.match(h.stdout, /POST \/api\/v1\/search/);
});
