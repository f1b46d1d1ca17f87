/**
 * Text from input rankgate did not write (golden ids, categories, tags, queries, file names, a service's messages) as
 * it may reach a terminal or a CI log: every control character is escaped, so such text can neither start a new line
 * (a forged "rankgate gate PASSED (exit 0)" after the real verdict) nor move the cursor, recolour or erase (ANSI escape
 * sequences), nor reorder what is shown (bidirectional overrides). The one helper for it; the PR comment and HTML have
 * their own escaping (src/report/escape.ts).
 */

/** C0 controls (newline, carriage return, tab, ESC …), DEL, C1 controls, line/paragraph separators, bidi controls. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `s` with every control character as a visible escape (`\n`, `\u001b`): one line, printed as it is. */
export function safeTerminal(s: string): string {
  return String(s).replace(UNSAFE, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** Several lines, each made safe (the line breaks between them are kept). */
export function safeTerminalLines(text: string): string {
  return text.split('\n').map(safeTerminal).join('\n');
}

/**
 * One printed entry that may run over indented continuation lines (a verdict reason with its table): a newline
 * followed by two spaces is kept, every other newline and control character is escaped, so input can add no line
 * that starts at the margin (where "rankgate gate PASSED (exit 0)" is read).
 */
export function safeTerminalEntry(text: string): string {
  return text.split(/\n(?= {2})/).map(safeTerminal).join('\n');
}

/**
 * Tab-separated output (`rankgate trec-eval`, byte-compatible with trec_eval): tabs and line breaks are the format and
 * stay; every other control character in a field (an id holding ESC, C1 or bidi controls) is escaped. Bytes are
 * returned unchanged when there is nothing to escape, so ordinary output stays byte-identical to trec_eval's.
 */
export function safeTerminalTsv(out: Buffer): Buffer {
  const hostile = out.some((b) => (b < 0x20 && b !== 0x09 && b !== 0x0a) || b === 0x7f) || /[\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(out.toString('utf8'));
  if (!hostile) return out;
  return Buffer.from(
    out
      .toString('utf8')
      .split('\n')
      .map((line) => line.split('\t').map(safeTerminal).join('\t'))
      .join('\n'),
    'utf8',
  );
}
