/**
 * Escaping of user-supplied strings (golden ids, categories, tags, column labels, error texts) for the contexts of the
 * PR comment and the Markdown summaries: a golden id with a backtick, `<!--`, a line break, a pipe or an @mention
 * must never rewrite the comment's table, open an HTML comment that hides the rest, end a code block, or notify
 * someone. Pure.
 *
 * - mdText: inline text (paragraph, list item, heading, table cell): one line, no code, link, HTML, math or cell
 *   break, no mention.
 * - mdCode: a code span (ids): one line, a backtick fence longer than any run inside; in a table, pipes escaped.
 * - mdFence: a fenced code block whose fence no line can close.
 * - mermaidLabel: a double-quoted Mermaid label: no quote, no directive (%%), no entity (#), no line break.
 */

/** Line breaks and other control characters become one space (a new line could start a block: `<!--`, `|`, ```). */
export function oneLine(s: unknown): string {
  return String(s ?? '').replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ');
}

/** U+200B after '@' keeps GitHub from reading `@user` / `@org/team` as a mention (it renders as '@'). */
const noMention = (s: string) => s.replace(/@/g, '@\u200b');

/** Inline Markdown text: the characters that open code, HTML, an entity, a link, math or a table cell are
 *  backslash-escaped (CommonMark allows any ASCII punctuation to be), so the text is also safe in a table cell. Emphasis
 *  characters (`_`, `*`) stay: they cannot change the structure, and `technique_boundary` stays readable in a terminal. */
export function mdText(s: unknown): string {
  return noMention(oneLine(s).replace(/[\\`[\]<>|&$]/g, (c) => `\\${c}`));
}

/** A code span showing `s` literally (mentions and HTML are not processed inside one). `table`: inside a GFM table
 *  cell, where a pipe splits the row even in a code span unless escaped. */
export function mdCode(s: unknown, opts: { table?: boolean } = {}): string {
  let t = oneLine(s);
  if (opts.table) t = t.replace(/\|/g, '\\|');
  const longest = Math.max(0, ...(t.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = t.startsWith('`') || t.endsWith('`') || (t.startsWith(' ') && t.endsWith(' ') && t.trim() !== '') ? ' ' : '';
  return `${fence}${pad}${t || ' '}${pad}${fence}`;
}

/** A fenced code block of `lines` (each made one line) with a fence longer than any backtick run in them. */
export function mdFence(lines: readonly string[], info = ''): string[] {
  const body = lines.map(oneLine);
  const longest = Math.max(0, ...body.flatMap((l) => l.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [fence + info, ...body, fence];
}

const MERMAID_SUBST: Record<string, string> = {
  '"': "'",
  '`': "'",
  '%': '％',
  '#': '＃',
  ';': '；',
  '<': '‹',
  '>': '›',
  '{': '(',
  '}': ')',
  '[': '(',
  ']': ')',
  '\\': '/',
};

/** A double-quoted Mermaid label showing `s`: the characters Mermaid or GitHub would read as syntax are replaced
 *  by look-alikes, line breaks by spaces. */
export function mermaidLabel(s: unknown): string {
  return `"${oneLine(s).replace(/["`%#;<>{}[\]\\]/g, (c) => MERMAID_SUBST[c]!)}"`;
}
