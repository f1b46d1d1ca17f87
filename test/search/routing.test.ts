import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { DEMO_ROUTING_PATH, createRouter, loadRoutingConfig, parseRoutingConfig, cosine } from '../../src/search/routing.ts';
import type { Embedder } from '../../src/embeddings/types.ts';
import type { SearchHit } from '../../src/search/types.ts';

const config = loadRoutingConfig(DEMO_ROUTING_PATH); // datasets/routing.yaml, the demo corpus's rules
const tmp = mkdtempSync(join(tmpdir(), 'rankgate-routing-'));
test.after(() => rmSync(tmp, { recursive: true, force: true }));

function hit(content: string, channels: SearchHit['channels'], rank = 1): SearchHit {
  return { chunkId: `c${rank}`, documentId: 'd', rank, score: 1 / rank, content, channels };
}
const GRIEF = hit('Grief is love with nowhere to go. The wave that loses a neighbour still rests on the same sea.', {
  keyword: { rank: 1, score: 7.2 },
  vector: { rank: 1, score: 0.55 },
});

/** Deterministic bag-of-words embedder: counts of hashed words in 64 buckets; counts calls. */
class WordEmbedder implements Embedder {
  readonly id = 'test-bow';
  readonly dimension = 64;
  readonly maxBatch = 8;
  calls = 0;
  vec(text: string): number[] {
    const v = new Array<number>(64).fill(0);
    for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
      let h = 0;
      for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
      v[h % 64]! += 1;
    }
    return v;
  }
  async embedDocuments(texts: string[]) {
    return texts.map((t) => this.vec(t));
  }
  async embedQuery(text: string) {
    this.calls++;
    return this.vec(text);
  }
}

test('practice_bridge: technique-instruction requests match the shipped patterns (en, es, hi)', async () => {
  const r = createRouter(config);
  for (const q of [
    'How do I practice the Kriya technique step by step?',
    'teach me the breathing technique',
    'How should I do the breathing exercise?',
    'Give me step-by-step instructions for the meditation technique',
    'what are the steps of pranayama',
    '¿Cómo practico la técnica de respiración?',
    'Enséñame la técnica de meditación',
    'ध्यान की विधि सिखाइए',
    'क्रिया योग क्या है',
  ]) {
    const d = await r.route(q, [GRIEF]);
    assert.equal(d.route, 'practice_bridge', q);
    assert.match(d.reasons.join(' '), /practice_bridge: pattern/);
  }
});

test('practice_bridge: ordinary questions about the teaching are not routed there', async () => {
  const r = createRouter(config);
  for (const q of ['What does the book say about meditation?', 'how do I find peace when I am sad', 'why is devotion important', 'the breath of the ocean']) {
    const d = await r.route(q, [GRIEF]);
    assert.notEqual(d.route, 'practice_bridge', q);
  }
});

test('practice_bridge: semantic similarity to exemplars, vectors computed once, threshold honoured', async () => {
  const cfg = parseRoutingConfig({
    practice_bridge: { patterns: [], exemplars: ['show me the secret breathing method', 'unrelated exemplar about gardens'], similarity_threshold: 0.8 },
  });
  const emb = new WordEmbedder();
  const r = createRouter(cfg, emb);
  const near = await r.route('please show me the secret breathing method', [GRIEF]);
  assert.equal(near.route, 'practice_bridge');
  assert.match(near.reasons[0]!, /cosine 0\.\d{3} to exemplar "show me the secret breathing method" >= 0.8/);
  const far = await r.route('grief and love', [GRIEF]);
  assert.equal(far.route, 'search');
  // 2 exemplars once + 2 queries (no queryVector given) = 4 embedQuery calls
  assert.equal(emb.calls, 4);
  // a supplied query vector is used instead of embedding the query again
  await r.route('anything', [GRIEF], emb.vec('show me the secret breathing method'));
  assert.equal(emb.calls, 4);
  // without an embedder only patterns apply
  assert.equal((await createRouter(cfg).route('please show me the secret breathing method', [GRIEF])).route, 'search');
});

test('no_results: off-topic queries fall under the threshold, on-topic ones do not (hybrid signals)', async () => {
  const r = createRouter(config);
  const offTopic = [hit('Grief is love with nowhere to go.', { keyword: { rank: 1, score: 0.4 }, vector: { rank: 1, score: 0.12 } })];
  for (const q of ['what is the weather in Paris tomorrow', 'best restaurant near me']) {
    const d = await r.route(q, offTopic);
    assert.equal(d.route, 'no_results', q);
    assert.ok(d.topRelevance !== undefined && d.topRelevance < 0.3);
    assert.match(d.reasons.join(' '), /no_results: top relevance/);
  }
  const on = await r.route('how do I live with grief', [GRIEF]);
  assert.equal(on.route, 'search');
  // vector 0.55 -> (0.55-0.2)/0.4 = 0.875; keyword: terms {live, grief} -> grief found = 0.5 -> 0.6*0.875+0.4*0.5
  assert.ok(Math.abs(on.topRelevance! - (0.6 * 0.875 + 0.4 * 0.5)) < 1e-9, String(on.topRelevance));
  assert.equal((await r.route('anything', [])).route, 'no_results');
});

test('no_results: keyword-only relevance is query-term coverage with stopwords and stem prefixes', () => {
  const r = createRouter(config);
  const kw = (content: string) => hit(content, { keyword: { rank: 1, score: 3 } });
  const rel = r.relevance('Meditating on devotion', [kw('Devotion grows when meditation is daily.')]);
  assert.equal(rel.signals, 'keyword_only');
  assert.equal(rel.keyword, 1); // meditating ~ meditation (prefix "medit"), devotion exact
  assert.equal(rel.threshold, 0.6);
  const half = r.relevance('weather in Paris', [kw('The weather of the mind passes.')]);
  assert.equal(half.top, 0.5);
  const semantic = r.relevance('x', [hit('y', { vector: { rank: 1, score: 0.4 } })]);
  assert.equal(semantic.signals, 'vector_only');
  assert.ok(Math.abs(semantic.top - 0.5) < 1e-12);
  // the best of the first consider_top (5) hits counts, later ones do not
  const hits = [1, 2, 3, 4, 5].map((i) => hit('nothing relevant', { vector: { rank: i, score: 0.1 } }, i));
  hits.push(hit('late', { vector: { rank: 6, score: 0.9 } }, 6));
  assert.equal(r.relevance('q', hits).top, 0);
});

test('safety: crisis lexicon flags en/es/hi phrases as whole words, independent of route', async () => {
  const r = createRouter(config);
  for (const q of [
    'I want to die',
    'sometimes I think I should just end it all',
    'I want to KILL MYSELF',
    "there's no reason to live",
    'I don’t want to live anymore', // curly apostrophe
    'quiero morir',
    'No tengo razon para vivir', // accent folded
    'मैं मरना चाहता हूँ',
    'आत्महत्या के विचार',
  ]) {
    const d = await r.route(q, [GRIEF]);
    assert.equal(d.safety, true, q);
    assert.match(d.reasons.join(' '), /safety: crisis lexicon/);
  }
  for (const q of ['the wave does not die, it returns to the sea', 'a suitcase of memories', 'how to end a meditation session', 'diet and fasting']) {
    assert.equal((await r.route(q, [GRIEF])).safety, false, q);
  }
});

test('safety: a crisis query with weak hits still routes to search (suppress_no_results), unless configured off', async () => {
  const weak = [hit('unrelated', { vector: { rank: 1, score: 0.05 } })];
  const on = await createRouter(config).route('I want to die', weak);
  assert.deepEqual([on.route, on.safety], ['search', true]);
  assert.match(on.reasons.join(' '), /no_results suppressed for a safety query/);
  const cfg = parseRoutingConfig({ ...structuredClone(config), safety: { ...config.safety, suppress_no_results: false } });
  const off = await createRouter(cfg).route('I want to die', weak);
  assert.deepEqual([off.route, off.safety], ['no_results', true]);
  // per-language only when check_all_languages is false
  const lang = parseRoutingConfig({ safety: { check_all_languages: false, lexicon: { es: ['quiero morir'] } } });
  assert.equal(createRouter(lang).safety('quiero morir', 'en').flagged, false);
  assert.equal(createRouter(lang).safety('quiero morir', 'es').flagged, true);
});

test('every rule can be switched off in YAML', async () => {
  const cfg = parseRoutingConfig({ practice_bridge: { enabled: false, patterns: ['kriya'] }, no_results: { enabled: false }, safety: { enabled: false, lexicon: { en: ['want to die'] } } });
  const d = await createRouter(cfg).route('kriya: I want to die', []);
  assert.deepEqual(d, { route: 'search', safety: false, reasons: [] });
});

test('hostile queries: regex metacharacters, SQL, template syntax, 100 KB, NUL, RTL and emoji are routed without throwing', async () => {
  const r = createRouter(config);
  for (const q of ["'; DROP TABLE book_chunks; --", '%_\\', '{{ query }} {% raw %}', 'a'.repeat(100_000), 'nul\u0000byte', 'مرحبا بالعالم', '🌊🌊🌊', 'e\u0301\u0301\u0301', '((((((', '']) {
    const d = await r.route(q, [GRIEF]);
    assert.ok(['search', 'no_results', 'practice_bridge'].includes(d.route));
  }
});

test('loadRoutingConfig: every problem is ONE line naming the file, the line and the key (did-you-mean for unknown keys)', () => {
  const bad = (name: string, text: string) => {
    const p = join(tmp, name);
    writeFileSync(p, text);
    return p;
  };
  const oneLine = (fn: () => unknown, expected: RegExp) =>
    assert.throws(fn, (e: unknown) => {
      const err = e as Error;
      assert.equal(err.name, 'UserError');
      assert.doesNotMatch(err.message, /\n/, 'one line');
      assert.match(err.message, expected);
      return true;
    });
  oneLine(() => loadRoutingConfig(bad('a.yaml', 'practice_bridge: [unclosed\n')), /a\.yaml:\d+:\d+: not valid YAML/);
  oneLine(() => loadRoutingConfig(bad('b.yaml', 'practice_bridge:\n  similarity_threshold: high\n')), /b\.yaml:2: practice_bridge\.similarity_threshold: /);
  oneLine(() => loadRoutingConfig(bad('c.yaml', "practice_bridge:\n  patterns: ['(unclosed']\n")), /c\.yaml:2: practice_bridge\.patterns\.0: not a valid regular expression/);
  oneLine(() => loadRoutingConfig(bad('d.yaml', 'no_results:\n  cosine_floor: 0.5\n  cosine_ceiling: 0.4\n')), /d\.yaml:3: no_results\.cosine_ceiling: cosine_ceiling must be greater/);
  // unknown keys, at every level: did-you-mean and the valid keys of that level
  oneLine(
    () => loadRoutingConfig(bad('e.yaml', 'safety:\n  enabled: true\n  lexikon: {}\n')),
    /^.*e\.yaml:3: safety: unknown key 'lexikon'; did you mean 'lexicon'\? \(valid: check_all_languages, enabled, lexicon, patterns, suppress_no_results\)$/,
  );
  oneLine(() => loadRoutingConfig(bad('f.yaml', 'version: 1\nsafty: {}\n')), /f\.yaml:2: unknown key 'safty'; did you mean 'safety'\? \(valid: no_results, practice_bridge, safety, version\)$/);
  oneLine(
    () => loadRoutingConfig(bad('g.yaml', 'no_results:\n  thresholds: { both: 0.3, vector_only: 0.3, keyword_only: 0.5, keywrd_only: 1 }\n')),
    /g\.yaml:2: no_results\.thresholds: unknown key 'keywrd_only'; did you mean 'keyword_only'\? \(valid: both, keyword_only, vector_only\)$/,
  );
  oneLine(
    () => loadRoutingConfig(bad('h.yaml', 'no_results:\n  language_thresholds:\n    hi: { vectr_only: 0.2 }\n')),
    /h\.yaml:3: no_results\.language_thresholds\.hi: unknown key 'vectr_only'; did you mean 'vector_only'\? \(valid: both, keyword_only, vector_only\)$/,
  );
  oneLine(() => loadRoutingConfig(join(tmp, 'missing.yaml')), /missing\.yaml: routing config not found/);
  // an alias bomb (< 1 KB) is refused in bounded time (src/util/yaml.ts)
  const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
  for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
  const bomb = bad('bomb.yaml', `${levels.join('\n')}\n`);
  assert.ok(Buffer.byteLength(levels.join('\n')) < 1024);
  const t0 = Date.now();
  oneLine(() => loadRoutingConfig(bomb), /bomb\.yaml: refused: the document expands to more than/);
  assert.ok(Date.now() - t0 < 20_000, 'bounded');
  // the demo's file round-trips through the schema unchanged
  assert.deepEqual(parseRoutingConfig(yaml.load(yaml.dump(config))), config);
});

test('cosine', () => {
  assert.equal(cosine([1, 0], [1, 0]), 1);
  assert.equal(cosine([1, 0], [0, 1]), 0);
  assert.equal(cosine([0, 0], [1, 1]), 0);
});

test('no_results: vector signal ignored for languages the embedder does not model; per-language thresholds; script detection', () => {
  const emb = new WordEmbedder();
  const cfg = parseRoutingConfig({
    no_results: {
      vector_languages_by_embedder: { 'test-bow': ['en'] },
      script_languages: { Devanagari: 'hi' },
      language_thresholds: { hi: { keyword_only: 0.2 } },
      thresholds: { both: 0.35, vector_only: 0.35, keyword_only: 0.6 },
    },
  });
  const r = createRouter(cfg, emb);
  const h = hit('मन को शांति मिलती है', { keyword: { rank: 1, score: 2 }, vector: { rank: 1, score: 0.9 } });
  const hi = r.relevance('मन को सुकून कैसे मिले', [h]); // no language given: Devanagari -> hi
  assert.equal(hi.signals, 'keyword_only');
  assert.equal(hi.vector, undefined);
  assert.equal(hi.threshold, 0.2);
  const en = r.relevance('quiet mind', [h], 'en');
  assert.equal(en.signals, 'both');
  assert.equal(en.threshold, 0.35);
  // an embedder id without an entry is trusted for every language
  const other = createRouter(parseRoutingConfig({ no_results: { vector_languages_by_embedder: { 'use-lite': ['en'] } } }), emb);
  assert.equal(other.relevance('मन', [h], 'hi').signals, 'both');
  assert.throws(() => parseRoutingConfig({ no_results: { script_languages: { Klingon: 'tlh' } } }, 'r.yaml'), {
    message: /^r\.yaml: no_results\.script_languages\.Klingon: unknown Unicode script "Klingon"/,
  });
});

test('a SearchService given no routing config does no routing: every query routes search, no safety flag', async () => {
  const { openPgliteFixture, FIXTURE_EMBEDDER } = await import('./fixture.ts');
  const { createSearchService } = await import('../../src/search/service.ts');
  const db = await openPgliteFixture();
  const defaults = { chunkSize: 48, embedder: FIXTURE_EMBEDDER.id };
  const plain = await createSearchService({ db, embedder: FIXTURE_EMBEDDER, defaults });
  // rules that send every query to no_results and flag "zzz" as a safety phrase, to show they are what routes
  const strict = await createSearchService({
    db,
    embedder: FIXTURE_EMBEDDER,
    defaults,
    routing: parseRoutingConfig({ no_results: { thresholds: { both: 1, vector_only: 1, keyword_only: 1 } }, safety: { lexicon: { en: ['zzz'] } } }),
  });
  try {
    for (const q of ['quantum chromodynamics on a lattice', 'zzz', 'how do I sleep when worried']) {
      const r = await plain.search(q, { routing: true });
      assert.deepEqual([r.routing.route, r.routing.safety, r.routing.reasons], ['search', false, []], q);
      const s = await strict.search(q, { routing: true });
      // a safety query is never sent to no_results (suppress_no_results, default on)
      assert.equal(s.routing.route, q === 'zzz' ? 'search' : 'no_results', q);
      assert.equal(s.routing.safety, q === 'zzz', q);
      assert.ok(s.routing.reasons.length > 0, q);
    }
  } finally {
    await plain.close();
    await strict.close();
    await db.close();
  }
});
