/**
 * Bootstrap from logs (src/judgments/{logs,clicks,bootstrap,bootstrap-run}.ts, `rankgate golden bootstrap
 * --from-feedback`): the click model against a hand-computed example, feedback grouped by normalised query, golden
 * entries and labels each where they serve, a re-run byte for byte with chair rows untouched (their ids reserved), ids
 * not in the corpus refused and counted, and hostile logs refused in one line naming the file, the line and the field
 * with nothing written.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { run as golden } from '../../src/cli/golden.ts';
import { loadGolden } from '../../src/golden/index.ts';
import { PositionPrior, clickVerdict, coec, newClickStat } from '../../src/judgments/clicks.ts';
import { aggregateLogs, DEFAULTS, logQueryId, type LogBootstrapOptions } from '../../src/judgments/bootstrap.ts';
import { readJudgments, writeJudgments } from '../../src/judgments/file.ts';
import { logFiles, normaliseQuery } from '../../src/judgments/logs.ts';
import { runCli } from '../helpers/capture.ts';

const OPTS: LogBootstrapOptions = { ...DEFAULTS };

function tmp(t: { after: (f: () => void) => void }): string {
  const d = mkdtempSync(join(tmpdir(), 'rg-boot-'));
  t.after(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

const rg = (...args: string[]) => runCli('golden', golden, args);

const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const T0 = Date.parse('2026-05-01T10:00:00Z');
const at = (min: number) => new Date(T0 + min * 60_000).toISOString();

/**
 * The hand-computed example (docs/judgments.md). One query, four searches, two documents, two positions:
 *   q1: [A, B] click A@1    q2: [A, B] click A@1    q3: [B, A] click B@1    q4: [B, A] click A@2
 * Position prior: ctr(1) = 3 clicks / 4 impressions = 0.75, ctr(2) = 1 / 4 = 0.25.
 * A: shown twice at 1 and twice at 2: E = 2(0.75) + 2(0.25) = 2.0; 3 clicks: COEC 1.5 -> kept, grade 1.
 * B: the same positions, E = 2.0; 1 click: COEC 0.5 -> not kept.
 */
function ubiExample(dir: string, withImpressionEvents: boolean): string[] {
  const shown: Record<string, string[]> = { q1: ['A', 'B'], q2: ['A', 'B'], q3: ['B', 'A'], q4: ['B', 'A'] };
  const clicks: [string, string, number][] = [
    ['q1', 'A', 1],
    ['q2', 'A', 1],
    ['q3', 'B', 1],
    ['q4', 'A', 2],
  ];
  const typed = ['Inner  Peace', 'inner peace', 'ＩＮＮＥＲ peace', 'inner peace '];
  const queries = Object.keys(shown).map((id, i) => ({ query_id: id, user_query: typed[i], query_response_hit_ids: withImpressionEvents ? [] : shown[id], client_id: `c${i}`, timestamp: at(i) }));
  const ev = (action: string, q: string, doc: string, pos: number, min: number) => ({ action_name: action, query_id: q, client_id: 'c', timestamp: at(min), event_attributes: { object: { object_id: doc, object_id_field: 'id' }, position: { ordinal: pos } } });
  const events = [
    ...clicks.map(([q, d, p], i) => ev('click', q, d, p, 10 + i)),
    ...(withImpressionEvents ? Object.entries(shown).flatMap(([q, ds]) => ds.map((d, i) => ev('impression', q, d, i + 1, 5))) : []),
    { action_name: 'add_to_cart', query_id: 'q1', client_id: 'c', timestamp: at(20), event_attributes: { object: { object_id: 'A' } } },
  ];
  writeFileSync(join(dir, 'ubi_queries.jsonl'), jsonl(queries));
  writeFileSync(join(dir, 'ubi_events.jsonl'), jsonl(events));
  return [join(dir, 'ubi_queries.jsonl'), join(dir, 'ubi_events.jsonl')];
}

test('COEC against the hand-computed example: the prior per position, E, COEC, the grade; impressions from hit ids or from impression events', async (t) => {
  const p = new PositionPrior();
  for (const pos of [1, 1, 2, 2, 1, 1, 2, 2]) p.impression(pos);
  for (const pos of [1, 1, 1, 2]) p.click(pos);
  assert.equal(p.ctr(1), 0.75);
  assert.equal(p.ctr(2), 0.25);
  assert.equal(p.ctr(7), 0, 'a position never shown predicts no click');
  const a = { ...newClickStat(), clicks: 3, impressions: 4, expected: 2 * 0.75 + 2 * 0.25 };
  assert.equal(coec(a), 1.5);
  assert.deepEqual(clickVerdict(a, { minCoec: 1, minImpressions: 4, minClicks: 3 }), { keep: true, coec: 1.5, grade: 1 });
  assert.equal(clickVerdict(a, { minCoec: 1, minImpressions: 5, minClicks: 3 }).keep, false, 'fewer impressions than the minimum');
  assert.equal(clickVerdict(a, { minCoec: 1, minImpressions: 4, minClicks: 4 }).keep, false, 'fewer clicks than the minimum');
  assert.equal(clickVerdict({ ...a, clicks: 7 }, { minCoec: 1, minImpressions: 4, minClicks: 1 }).grade, 3, 'COEC 3.5 -> grade 3 (at most)');
  assert.equal(coec({ clicks: 2, expected: 0 }), null);

  const dir = tmp(t);
  for (const events of [false, true]) {
    const sub = join(dir, String(events));
    mkdirSync(sub);
    const s = await aggregateLogs({ files: logFiles(ubiExample(sub, events)) }, { ...OPTS, minImpressions: 4 });
    assert.equal(s.impressionSource, events ? 'events' : 'hit ids');
    assert.deepEqual(
      s.prior.map((r) => [r.position, r.clicks, r.impressions, r.ctr]),
      [
        [1, 3, 4, 0.75],
        [2, 1, 4, 0.25],
      ],
    );
    assert.equal(s.queries.length, 1, 'four spellings, one normalised query (NFKC, case, whitespace)');
    assert.equal(s.queries[0]!.norm, 'inner peace');
    assert.deepEqual(s.queries[0]!.docs, [{ doc: 'A', grade: 1, from: 'clicks', evidence: { clicks: 3, impressions: 4, coec: 1.5 }, time: Date.parse(at(13)) }]);
    assert.equal(s.otherEvents, 1, 'add_to_cart is not read');
  }
});

test('feedback: grouped by normalised query, kept at the threshold, graded by its best score, the form most typed shown', async (t) => {
  const dir = tmp(t);
  writeFileSync(
    join(dir, 'feedback.csv'),
    [
      'search_log_id,query,case_law_id,relevance_score,created_at',
      '1,"Calm  mind",d1,3,2026-05-02T09:00:00Z',
      '2,calm mind,d1,3,2026-05-02T09:05:00Z',
      '3,calm mind,d1,1,2026-05-02T09:06:00Z',
      '4,CALM MIND,d2,2,2026-05-02T09:07:00Z',
      '5,calm mind,d3,0,2026-05-02T09:08:00Z',
      '6,"calm, mind",d1,3,2026-05-02T09:09:00Z',
    ].join('\n') + '\n',
  );
  const s = await aggregateLogs({ files: logFiles([dir]) }, OPTS);
  assert.deepEqual(
    s.queries.map((q) => [q.norm, q.display, q.docs.map((d) => [d.doc, d.grade, d.evidence])]),
    [
      ['calm mind', 'calm mind', [['d1', 3, { feedback: 2, below: 1 }]]],
      ['calm, mind', 'calm, mind', [['d1', 3, { feedback: 1, below: 0 }]]],
    ],
    'd2 (2) and d3 (0) are below --min-score 3; punctuation makes another query',
  );
  const s2 = await aggregateLogs({ files: logFiles([dir]) }, { ...OPTS, minScore: 2 });
  assert.deepEqual(
    s2.queries[0]!.docs.map((d) => [d.doc, d.grade]),
    [
      ['d1', 3],
      ['d2', 2],
    ],
  );
  assert.equal(normaliseQuery('  Ｃａｌｍ\tMIND  '), 'calm mind');
  assert.match(logQueryId('calm mind'), /^log-calm-mind-[0-9a-f]{8}$/);
  assert.equal(logQueryId('calm mind'), logQueryId('calm mind'), 'the id is a function of the query');
});

/** A chair row written by hand (odd spacing, key order, an escape, a CRLF end): a re-render would change its bytes. */
const CHAIR = '{ "id": "log-calm-mind-9c3a5f00",  "source":"chair", "query": "calm mind", "relevant_case_law_ids": ["d9"], "note": "caf\\u00e9 reviewed" }\r';
const HAND = '{"id":"hand-1","query":"where is the lamp","relevant_case_law_ids":["d2"]}';

test('the CLI: queries into the golden set, labels for the queries it asks; twice = the same bytes; chair rows untouched, their ids reserved', async (t) => {
  const dir = tmp(t);
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  writeFileSync(
    join(logs, 'feedback.jsonl'),
    jsonl([
      { query: 'calm mind', doc: 'd1', score: 3, time: at(1) },
      { query: 'Where is the lamp', doc: 'd1', score: 3, time: at(2) },
      { query: 'where is the lamp', doc: 'd2', score: 3, time: at(3) },
      { query: 'a new need', doc: 'd3', score: 3, time: at(4) },
      { query: 'a new need', doc: 'd1', score: 2, time: at(5) },
      { query: 'Asked Elsewhere', doc: 'd4', score: 3, time: at(6) },
    ]),
  );
  ubiExample(logs, false);
  const out = join(dir, 'gold.jsonl');
  writeFileSync(out, `${CHAIR}\n${HAND}\n`);
  const other = join(dir, 'other.jsonl');
  writeFileSync(other, '{"id":"o1","query":"asked elsewhere","relevant_case_law_ids":["d1"]}\n');
  const judg = join(dir, 'judgments.jsonl');
  writeJudgments(judg, [{ query: 'hand-1', doc: 'd1', grade: 2, source: 'chair', reviewer: 'dafna', time: at(0) }]);
  const chairLabel = readFileSync(judg, 'utf8').split('\n')[1]!;
  const args = ['bootstrap', '--from-feedback', logs, '--out', out, '--judgments', judg, '--golden', other, '--min-impressions', '4'];
  const r1 = await rg(...args);
  assert.equal(r1.code, 0, r1.err);
  const first = readFileSync(out, 'utf8');
  const lines = first.split('\n');
  assert.equal(lines[0], CHAIR, 'the chair row: the same bytes (its CR too)');
  assert.equal(lines[1], HAND, 'a hand-written row: the same bytes');
  const ids = lines.slice(2).filter(Boolean).map((l) => JSON.parse(l).id as string);
  assert.deepEqual(ids, [logQueryId('a new need'), logQueryId('inner peace')], 'new queries appended in id order; calm mind and where is the lamp are asked already');
  const entry = loadGolden(out).queries.find((q) => q.id === logQueryId('a new need'))!;
  assert.deepEqual(
    entry.expected.map((r) => [r.doc_id, r.grade, r.relevant]),
    [['d3', 3, true]],
  );
  assert.equal(entry.source, 'bootstrap');
  assert.match(entry.notes!, /d3: 1 row scored >= 3/);
  const labels = await readJudgments(judg);
  assert.ok(readFileSync(judg, 'utf8').split('\n').includes(chairLabel), 'a chair label: the same line');
  assert.deepEqual(
    labels.map((j) => [j.query, j.doc, j.grade, j.source, JSON.stringify(j.evidence)]),
    [
      ['hand-1', 'd1', 2, 'chair', undefined],
      ['hand-1', 'd1', 3, 'bootstrap', '{"feedback":1,"below":0}'],
      ['log-calm-mind-9c3a5f00', 'd1', 3, 'bootstrap', '{"feedback":1,"below":0}'],
      ['o1', 'd4', 3, 'bootstrap', '{"feedback":1,"below":0}'],
    ],
    'labels for documents the asking query does not expect yet (hand-1 expects d2, so only d1)',
  );
  assert.match(r1.out, /1 reviewed \(chair\) row untouched/);
  const judgFirst = readFileSync(judg, 'utf8');

  const r2 = await rg(...args);
  assert.equal(r2.code, 0, r2.err);
  assert.equal(readFileSync(out, 'utf8'), first, 'the same logs: the same golden set, byte for byte');
  assert.equal(readFileSync(judg, 'utf8'), judgFirst, 'and the same judgments file');
  assert.match(r2.out, /0 added, 0 updated, 2 unchanged; 1 reviewed \(chair\) row untouched \(file unchanged\)/);

  // a generated id held by a chair row is reserved: the chair's row wins, the generator writes nothing under its id
  const taken = `{"id":"${logQueryId('a new need')}","query":"something the chair wrote","relevant_case_law_ids":["d7"],"source":"chair"}`;
  writeFileSync(out, `${taken}\n`);
  const r3 = await rg(...args);
  assert.equal(r3.code, 0, r3.err);
  assert.equal(readFileSync(out, 'utf8').split('\n')[0], taken);
  assert.match(r3.out, /1 id held by other entries, not written \(log-a-new-need-/);
});

test('ids not in the corpus: refused and counted; none in the corpus: exit 2, nothing written', async (t) => {
  const dir = tmp(t);
  const corpus = join(dir, 'corpus');
  mkdirSync(corpus);
  for (const id of ['d1', 'd2']) writeFileSync(join(corpus, `${id}.md`), `---\ntitle: Doc ${id}\nslug: ${id}\n---\n\nSome text about ${id}.\n`);
  const fb = join(dir, 'feedback.jsonl');
  writeFileSync(fb, jsonl([{ query: 'q one', doc: 'd1', score: 3, time: at(1) }, { query: 'q one', doc: 'gone-1', score: 3, time: at(2) }, { query: 'q two', doc: 'gone-2', score: 3, time: at(3) }]));
  const out = join(dir, 'gold.jsonl');
  const r = await rg('bootstrap', '--from-feedback', fb, '--corpus', corpus, '--out', out);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /2 of 3 log entries name 2 ids no document has \(gone-1, gone-2\): refused, left out/);
  assert.deepEqual(loadGolden(out).queries.map((q) => q.expected.map((e) => e.doc_id)), [['d1']]);

  const wrong = join(dir, 'wrong.jsonl');
  writeFileSync(wrong, jsonl([{ query: 'q', doc: 'x1', score: 3, time: at(1) }]));
  const out2 = join(dir, 'gold2.jsonl');
  const bad = await rg('bootstrap', '--from-feedback', wrong, '--corpus', corpus, '--out', out2);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /none of the 1 document ids the logs name is a document of corpus .*corpus \(e\.g\. x1\): logs of another index, or the wrong --corpus\? nothing written/);
  assert.equal(existsSync(out2), false);
});

test('hostile logs: one line naming the file, the line and the field; exit 2; nothing written', async (t) => {
  const dir = tmp(t);
  const out = join(dir, 'gold.jsonl');
  const before = `${CHAIR}\n`;
  const cases: [string, string, RegExp][] = [
    ['feedback.jsonl', '{"query":"a","doc":"d","score":3,"time":"2026-01-01"}\n{"query":"b", oops}\n', /feedback\.jsonl:2: not JSON \(.*\), expected one object a line/],
    ['feedback.csv', 'query,doc,score,time\na,d1,3,2026-01-01\nb,d1,7,2026-01-01\n', /feedback\.csv:3: field 'score': expected a whole score from 0 to 3 .*got "7"/],
    ['feedback.csv', 'query,doc,relevance_score,time\na,d1,2.5,2026-01-01\n', /feedback\.csv:2: field 'relevance_score': expected a whole score from 0 to 3/],
    ['feedback.csv', 'query,doc,score,time\n"a,d1,3\n', /feedback\.csv:\d+: not a CSV record/],
    ['feedback.jsonl', '{"query":"a","case_law_id":"d\\u0007x","score":3,"time":"2026-01-01"}\n', /feedback\.jsonl:1: field 'case_law_id': the id contains a control character \(U\+0007/],
    ['feedback.jsonl', `{"query":"${'q'.repeat(2001)}","doc":"d","score":3,"time":"2026-01-01"}\n`, /feedback\.jsonl:1: field 'query': 2001 characters, longer than the 2000 a query may have/],
    ['feedback.jsonl', '{"query":"a","doc":"d","score":3,"time":"yesterday"}\n', /feedback\.jsonl:1: field 'time': expected a time \(ISO 8601/],
    ['feedback.jsonl', '{"query":"a","doc":"d","time":"2026-01-01"}\n', /feedback\.jsonl:1: field 'score': missing, expected one of 'score', 'relevance_score'/],
    ['feedback.jsonl', `{"query":"a","doc":"d","score":3,"time":"2026-01-01","blob":"${'x'.repeat(1024 * 1024 + 10)}"}\n`, /feedback\.jsonl:1: a line longer than 1048576 bytes/],
    ['feedback.jsonl', '{"query":"a","doc":"d1","case_law_id":"d2","score":3,"time":"2026-01-01"}\n', /feedback\.jsonl:1: fields 'doc' and 'case_law_id' name the same thing/],
    ['notalog.jsonl', '{"id":"g1","query":"x","relevant_case_law_ids":["a"]}\n', /notalog\.jsonl:1: not a log this command reads \(fields: id, query, relevant_case_law_ids\)/],
  ];
  for (const [name, text, re] of cases) {
    writeFileSync(out, before);
    const f = join(dir, name);
    writeFileSync(f, text);
    const r = await rg('bootstrap', '--from-feedback', f, '--out', out, '--judgments', join(dir, 'j.jsonl'));
    assert.equal(r.code, 2, `${name}: ${r.out}${r.err}`);
    assert.match(r.err, re);
    assert.equal(r.err.trim().split('\n').length, 1, `one line: ${r.err}`);
    assert.equal(readFileSync(out, 'utf8'), before, `${name}: the golden set untouched`);
    assert.equal(existsSync(join(dir, 'j.jsonl')), false, `${name}: no judgments file`);
  }
  // UBI: a click without a position, an ordinal counted from 0, events without the queries store
  const q = join(dir, 'ubi_queries.jsonl');
  writeFileSync(q, jsonl([{ query_id: 'q1', user_query: 'a', query_response_hit_ids: ['d1'] }]));
  const e = join(dir, 'ubi_events.jsonl');
  const click = (position: unknown) => ({ action_name: 'click', query_id: 'q1', timestamp: at(1), event_attributes: { object: { object_id: 'd1' }, ...(position === undefined ? {} : { position }) } });
  for (const [events, re] of [
    [[click(undefined)], /ubi_events\.jsonl:1: field 'event_attributes\.position\.ordinal': expected the result's position, a whole number from 1 \(UBI counts from 1/],
    [[click({ ordinal: 0 })], /a log counting from 0 needs --ordinal-base 0\), got 0$/m],
    [[{ ...click({ ordinal: 1 }), timestamp: 'x' }], /ubi_events\.jsonl:1: field 'timestamp': expected a time/],
  ] as const) {
    writeFileSync(e, jsonl([...events]));
    const r = await rg('bootstrap', '--from-feedback', q, '--from-feedback', e, '--out', out);
    assert.equal(r.code, 2, r.out);
    assert.match(r.err, re);
  }
  writeFileSync(e, jsonl([click({ ordinal: 0 })]));
  const zero = await rg('bootstrap', '--from-feedback', `${q},${e}`, '--out', join(dir, 'z.jsonl'), '--ordinal-base', '0', '--min-impressions', '1', '--min-clicks', '1');
  assert.equal(zero.code, 0, zero.err);
  const alone = await rg('bootstrap', '--from-feedback', e, '--out', out);
  assert.equal(alone.code, 2);
  assert.match(alone.err, /ubi_events\.jsonl: UBI events without the ubi_queries store: give both/);
  const yaml = join(dir, 'set.yaml');
  writeFileSync(yaml, '- query: a\n  expected_paths: [d1]\n');
  const notJsonl = await rg('bootstrap', '--from-feedback', q, '--from-feedback', e, '--out', yaml);
  assert.match(notJsonl.err, /--out .*set\.yaml: bootstrap from logs writes gold-set JSONL, expected a \*\.jsonl file/);
  const nothing = await rg('bootstrap', '--from-feedback', q);
  assert.match(nothing.err, /nothing to write: give --out FILE/);
  const stray = await rg('bootstrap', '--corpus', dir, '--min-score', '2');
  assert.match(stray.err, /--min-score belongs to bootstrap --from-feedback LOG/);
});

test('known-item bootstrap into gold-set JSONL is line by line too: a hand-formatted chair row keeps its bytes, log entries are not its orphans', async (t) => {
  const dir = tmp(t);
  const corpus = join(dir, 'corpus');
  mkdirSync(corpus);
  writeFileSync(join(corpus, 'lamp.md'), '---\ntitle: The Lamp Within\nslug: the-lamp-within\n---\n\nText.\n');
  const out = join(dir, 'known.jsonl');
  const log = `{"id":"${logQueryId('calm mind')}","query":"calm mind","relevant_case_law_ids":["d1"],"source":"bootstrap"}`;
  writeFileSync(out, `${CHAIR}\n${log}\n`);
  const r1 = await rg('bootstrap', '--corpus', corpus, '--out', out);
  assert.equal(r1.code, 0, r1.err);
  assert.match(r1.out, /1 documents -> .*: 1 added, 0 updated, 0 unchanged$/m, 'no orphan: the log entry is not a known item');
  const text = readFileSync(out, 'utf8');
  assert.deepEqual(text.split('\n').slice(0, 2), [CHAIR, log]);
  assert.match(text.split('\n')[2]!, /^\{"id":"known-the-lamp-within","query":"The Lamp Within"/);
  const r2 = await rg('bootstrap', '--corpus', corpus, '--out', out);
  assert.match(r2.out, /0 added, 0 updated, 1 unchanged/);
  assert.equal(readFileSync(out, 'utf8'), text);
});

test('a million-row log is streamed: a bad row at line 1,000,000 is named, exit 2, nothing written', async (t) => {
  const dir = tmp(t);
  const f = join(dir, 'feedback.jsonl');
  const row = '{"query":"calm mind","doc":"d1","score":3,"time":"2026-05-01T10:00:00Z"}\n';
  writeFileSync(f, row.repeat(999_999) + '{"query":"calm mind","doc":"d1","score":30,"time":"2026-05-01T10:00:00Z"}\n');
  const out = join(dir, 'gold.jsonl');
  const r = await rg('bootstrap', '--from-feedback', f, '--out', out);
  assert.equal(r.code, 2);
  assert.match(r.err, /feedback\.jsonl:1000000: field 'score': expected a whole score from 0 to 3 .*got 30$/m);
  assert.equal(existsSync(out), false);
});
