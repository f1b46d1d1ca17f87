/**
 * Hostile golden ids, categories, tags and column labels in the PR comment and its Mermaid chart: a backtick, `<!--`,
 * a line break, a pipe or an @mention must not add or split a table row, open an HTML comment, close a code block or
 * a chart, or notify anyone. The report is built from query records the way `rankgate gate` builds it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderComment, renderMarkdown } from '../../src/report/markdown.ts';
import { mermaidCategoryChart } from '../../src/report/html/mermaid.ts';
import { mdCode, mdText, mermaidLabel } from '../../src/report/escape.ts';
import { buildReport } from '../../src/results/summary.ts';
import { compareWithBaseline, baselineFrom } from '../../src/gate/baseline.ts';
import type { Column, QueryRecord } from '../../src/results/read.ts';

const HOSTILE = [
  'q`1` | x',
  'q2 <!-- hidden',
  'q3\n| injected | row |',
  'q4 @octocat @org/team',
  'q5 ``` end',
  'q6\r\n<!--\n-->',
  'q7 %%{init: {"theme": "dark"}}%% "; x-axis [evil]',
  'q8 $x$ **b** [l](http://e) <img src=x>',
];
const HOSTILE_CATS = ['cat|pipe', 'cat`tick`', 'cat\n<!--', 'cat "quote"]', 'cat @someone', 'cat %%{init}%%'];

function record(id: string, category: string, recall: number): QueryRecord {
  return {
    id,
    query: `query ${id}`,
    category,
    language: 'en',
    tags: ['tag|x', 'tag\n<!--', '@tagger'],
    golden: { id, query: `query ${id}`, category, language: 'en', expected: [{ document_id: 'd1' }] } as unknown as QueryRecord['golden'],
    error: null,
    retrieval: {
      recall_at_1: recall, recall_at_3: recall, recall_at_5: recall, recall_at_10: recall, trec_recall_at_10: recall, mrr: recall,
      ndcg_at_10: recall, precision_at_5: recall / 5, ap_at_10: recall, found: recall > 0 ? 1 : 0, best_rank: recall > 0 ? 1 : null,
      last_expected_rank: recall > 0 ? 1 : null, answerable_at_10: null, relevant_refs: 1, level: 'document', bucket: recall > 0 ? 'rank1_hit' : 'candidate_generation_miss',
    } as QueryRecord['retrieval'],
    routing: null,
    integrity: [],
    latencyMs: 5,
    top: [{ rank: 1, chunkId: `c\`|${id}`, documentId: 'd9', score: 1, content: 'top | result\n<!-- `x`' }],
    promptfooPass: recall > 0,
    judged: false,
  };
}

function column(label: string, recall: (i: number) => number): Column {
  const queries = HOSTILE.map((id, i) => record(id, HOSTILE_CATS[i % HOSTILE_CATS.length]!, recall(i)));
  return { index: 0, label, providerId: 'p', config: {}, namedScores: {}, queries, counts: null, selection: null, identity: null };
}

/** GFM splits a table row on pipes not preceded by a backslash (inside code spans too). */
const cells = (row: string) => row.replace(/^\||\|$/g, '').split(/(?<!\\)\|/).length;

/** The tables of a Markdown text: each a header, a delimiter row and its body rows (consecutive lines starting with |). */
function tables(md: string): string[][] {
  const out: string[][] = [];
  let cur: string[] | null = null;
  for (const line of md.split('\n')) {
    if (line.startsWith('|')) (cur ??= []).push(line);
    else if (cur) out.push(cur), (cur = null);
  }
  if (cur) out.push(cur);
  return out;
}

function checkStructure(md: string, what: string): void {
  // no line starts an HTML block, and the only HTML comment is the marker
  const lines = md.split('\n');
  assert.equal(lines.filter((l) => /^\s*</.test(l) && !l.startsWith('<!-- rankgate:')).length, 0, `${what}: a line starts with HTML`);
  // code blocks and code spans show their content literally (no HTML, no mention): look at the rest
  const text = md.replace(/^```mermaid\n[\s\S]*?\n```$/gm, '').replace(/(?<![\\`])(`+)(?!`)(.*?[^`\\])\1(?!`)/g, '');
  assert.equal((text.match(/(?<!\\)<!--/g) ?? []).length, md.startsWith('<!-- rankgate:') ? 1 : 0, `${what}: an unescaped <!--`);
  assert.doesNotMatch(text, /(?<!\w)@(?!\u200b)[A-Za-z]/, `${what}: a live @mention outside a code span`);
  // every table keeps its shape: each row has the header's cell count
  for (const t of tables(md)) {
    const n = cells(t[0]!);
    for (const row of t) assert.equal(cells(row), n, `${what}: row ${JSON.stringify(row)} has another cell count than its header`);
  }
  // fences pair up: every ``` line opens or closes a block, and the chart block holds only chart statements
  const fences = lines.filter((l) => /^`{3,}/.test(l));
  assert.equal(fences.length % 2, 0, `${what}: an unclosed code block`);
}

test('hostile ids, categories, tags and labels keep the PR comment\'s tables, chart and markup intact', () => {
  const base = column('base `label` | <!--', () => 1);
  const head = column('head\n<!-- label --> @someone', (i) => (i % 2 ? 0 : 1));
  const report = buildReport(head, { language: 'en', timestamp: '2026-11-26T00:00:00Z' });
  const delta = compareWithBaseline(baselineFrom(base, buildReport(base, { timestamp: 't0' })), head, report);
  assert.ok(delta.regressed.length >= 3, 'the regressed list names hostile ids');

  const comment = renderComment(report, delta);
  checkStructure(comment, 'comment');
  const catTable = tables(comment)[0]!;
  assert.equal(catTable.length, 2 + HOSTILE_CATS.length, 'one category row per category, none added or lost');
  for (const { id } of delta.regressed) assert.ok(comment.includes(`- ${mdCode(id)} (`), `regressed id ${JSON.stringify(id)} shown as one code span`);

  const md = renderMarkdown(report, delta);
  checkStructure(md, 'summary');
  const failures = tables(md).find((t) => t[0]!.startsWith('| id |'))!;
  assert.equal(failures.length, 2 + report.failures.length, 'one failure row per failed query');
  assert.equal(md.split('\n').filter((l) => l.startsWith('# ')).length, 1, 'the label adds no heading');

  // the chart: one fenced block, x-axis of exactly one quoted label per category, bar of as many values
  const chart = mermaidCategoryChart(report, delta);
  const body = chart.split('\n');
  assert.equal(body[0], '```mermaid');
  assert.equal(body.at(-1), '```');
  assert.equal(body.length, 8, 'title, x-axis, y-axis, bar, line: no statement added by a label');
  const axis = /^ {2}x-axis \[(.*)\]$/.exec(body[3]!);
  assert.ok(axis, body[3]);
  const labels = axis[1]!.match(/"[^"]*"/g)!;
  assert.equal(labels.length, HOSTILE_CATS.length);
  assert.equal(axis[1]!.replace(/"[^"]*"/g, '').replace(/[ ,]/g, ''), '', 'nothing but labels on the axis');
  assert.doesNotMatch(body[3]!, /%%|#|;|`|[<>{}]/, 'no directive, entity, separator, backtick or HTML from a label');
  assert.equal(/ {2}bar \[(.*)\]/.exec(chart)![1]!.split(',').length, HOSTILE_CATS.length);
});

test('escapers: what each context gets', () => {
  assert.equal(mdCode('a`b'), '``a`b``');
  assert.equal(mdCode('`a'), '`` `a ``');
  assert.equal(mdCode('a|b', { table: true }), '`a\\|b`');
  assert.equal(mdCode('x\n<!--'), '`x <!--`');
  assert.equal(mdText('a|b <!-- @me'), 'a\\|b \\<!-- @\u200bme');
  assert.equal(mermaidLabel('a"b\nc%%{x}%%#1;'), '"a\'b c％％(x)％％＃1；"');
});
