/** The judgments file (src/judgments/file.ts): round trip byte for byte, sorted, checked line by line, which label counts. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { effectiveLabels, mergeLabels, pendingLabels, readJudgments, writeJudgments, type Judgment } from '../../src/judgments/file.ts';

const T = '2026-11-29T10:00:00.000Z';
const llm = (query: string, doc: string, grade: number): Judgment => ({ query, doc, grade, source: 'llm', provider: 'openai:chat:m', model: 'm', prompt: 'relevance-v1', time: T });

test('written sorted with its header, read back equal, and rewritten byte for byte', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-judg-'));
  try {
    const p = join(dir, 'judgments.jsonl');
    const labels: Judgment[] = [llm('q2', 'b.md', 1), { query: 'q1', doc: 'a.md', grade: 3, source: 'chair', reviewer: 'dafna', was: { source: 'llm', grade: 2 }, time: T }, llm('q1', 'a.md', 2), { query: 'q1', doc: 'c.md', grade: 3, source: 'bootstrap', evidence: { feedback: 4 }, time: T }];
    writeJudgments(p, labels);
    const text = readFileSync(p, 'utf8');
    assert.equal(text.split('\n')[0], '{"rankgate_judgments":1}');
    assert.deepEqual(text.trim().split('\n').slice(1).map((l) => { const o = JSON.parse(l); return `${o.query} ${o.doc} ${o.source}`; }), ['q1 a.md chair', 'q1 a.md llm', 'q1 c.md bootstrap', 'q2 b.md llm']);
    const back = await readJudgments(p);
    writeJudgments(p, back);
    assert.equal(readFileSync(p, 'utf8'), text, 'idempotent: the same labels give the same bytes');
    const eff = effectiveLabels(back);
    assert.equal(eff.get('q1')!.get('a.md')!.source, 'chair', 'a person beats a model');
    assert.deepEqual(pendingLabels(back).map((j) => `${j.query} ${j.doc}`), ['q1 c.md', 'q2 b.md']);
    assert.equal(mergeLabels(back, [llm('q2', 'b.md', 0)]).find((j) => j.query === 'q2')!.grade, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bad input: one line naming the file, the line and the field', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-judg-'));
  try {
    const p = join(dir, 'j.jsonl');
    const bad = async (lines: string[], re: RegExp) => {
      writeFileSync(p, lines.join('\n') + '\n');
      await assert.rejects(readJudgments(p), re);
    };
    const h = '{"rankgate_judgments":1}';
    await bad(['{"query":"q","doc":"d","grade":1,"source":"chair","reviewer":"x","time":"' + T + '"}'], /j\.jsonl:1: the first line must be the format header/);
    await bad(['{"rankgate_judgments":2}'], /field 'rankgate_judgments': judgments file format version 2 was written by a newer rankgate/);
    await bad([h, '{"query":"q","doc":"d","grade":4,"source":"chair","reviewer":"x","time":"' + T + '"}'], /j\.jsonl:2: field 'grade': expected a whole grade from 0 to 3/);
    await bad([h, '{"query":"q","doc":"d","grade":2,"source":"llm","time":"' + T + '"}'], /j\.jsonl:2: field 'provider': a model's label \(source llm\) says which provider made it/);
    await bad([h, '{"query":"q","doc":"d","grade":2,"source":"human","time":"' + T + '"}'], /field 'source': expected one of chair, bootstrap, llm/);
    await bad([h, 'not json'], /j\.jsonl:2: not JSON/);
    const line = JSON.stringify(llm('q', 'd', 1));
    await bad([h, line, line], /j\.jsonl:3: query 'q' doc 'd' source llm: labelled twice \(also line 2\)/);
    await assert.rejects(readJudgments(join(dir, 'none.jsonl')), /none\.jsonl: cannot read the judgments file \(ENOENT\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
