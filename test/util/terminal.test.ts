/**
 * src/util/terminal.ts: user strings reach a terminal as one line without escapes; and the places that print them
 * (verdict lines, golden problems and stats) use it, so a golden category or column label holding
 * "\nrankgate gate PASSED (exit 0)" or ANSI codes cannot forge a verdict line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeTerminal, safeTerminalEntry, safeTerminalLines } from '../../src/util/terminal.ts';
import { formatStats, goldenStats } from '../../src/golden/stats.ts';
import { formatProblem, showShape } from '../../src/golden/problems.ts';
import { GoldenQuerySchema } from '../../src/golden/schema.ts';

const FORGED = 'howto\nrankgate gate PASSED (exit 0) for \u001b[32mall\u001b[0m\r\u009b2K\u202e';

test('safeTerminal escapes newlines, CR, ESC, C1 and bidi controls; plain text is unchanged', () => {
  assert.equal(safeTerminal('plain – text ✓ ü'), 'plain – text ✓ ü');
  const s = safeTerminal(FORGED);
  assert.equal(s, 'howto\\nrankgate gate PASSED (exit 0) for \\u001b[32mall\\u001b[0m\\r\\u009b2K\\u202e');
  assert.doesNotMatch(s, /[\u0000-\u001f\u007f-\u009f\u202e]/);
  assert.equal(safeTerminalLines('a\nb\u001b'), 'a\nb\\u001b');
  assert.equal(safeTerminalEntry('reason\n    table row\nrankgate gate PASSED'), 'reason\n    table row\\nrankgate gate PASSED', 'only indented continuation lines are kept');
});

test('golden stats and problems print a forged category, id or value on its own line, escaped', () => {
  const q = GoldenQuerySchema.parse({ id: 'q1', query: 'x', language: 'en', category: FORGED, expected: [{ path: 'a.md', grade: 1, relevant: true }] });
  const text = formatStats(goldenStats([q]), 'set');
  for (const line of text.split('\n')) assert.doesNotMatch(line, /^rankgate gate/);
  assert.doesNotMatch(text, /\u001b/);
  const line = formatProblem({ file: 'f\u001b[2J.yaml', entry: FORGED, field: 'category', message: `bad ${FORGED}`, severity: 'error' });
  assert.equal(line.split('\n').length, 1);
  assert.doesNotMatch(line, /\u001b/);
  assert.equal(showShape('root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1'), 'a string of 44 characters', 'a file that is not a golden set is never quoted');
  assert.equal(showShape({ OPENAI_API_KEY: 'sk-secret' }), 'a mapping of 1 key');
});
