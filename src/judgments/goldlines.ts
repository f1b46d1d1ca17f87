/**
 * A gold-set JSONL file edited line by line: the lines rankgate generates (bootstrap entries) or promotes (a reviewed
 * entry) are replaced or appended, and every other line keeps its exact bytes. A person's `source: chair` row is never
 * parsed and written back: it is the same text after any number of bootstraps and imports.
 */
import { UserError } from '../errors.ts';
import { Collector } from '../golden/problems.ts';
import { loadGolden } from '../golden/index.ts';
import { readGoldJsonl, writeGoldJsonl } from '../golden/goldjsonl.ts';
import type { GoldenQuery } from '../golden/schema.ts';
import { readRegularFileSync } from '../util/regular-file.ts';

export interface GoldLine {
  /** the line as it is in the file (without its '\n') */
  text: string;
  /** the entry's id and raw `source` (undefined for a blank line) */
  id?: string;
  source?: string;
  obj?: Record<string, unknown>;
}

export interface GoldLines {
  path: string;
  lines: GoldLine[];
  /** the entries as the golden readers see them (validated) */
  queries: GoldenQuery[];
}

/** Read a gold-set JSONL file for editing: validated as the golden readers validate it (one line per problem, exit 2). */
export function readGoldLines(path: string): GoldLines {
  const g = loadGolden(path, { format: 'jsonl' });
  let text: string;
  try {
    text = readRegularFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the golden set (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const raw = text.replace(/^\uFEFF/, '').split('\n');
  if (raw.length && raw[raw.length - 1] === '') raw.pop();
  const lines: GoldLine[] = raw.map((t) => {
    if (!t.trim()) return { text: t };
    const obj = JSON.parse(t) as Record<string, unknown>; // validated above
    return { text: t, id: String(obj.id), source: typeof obj.source === 'string' ? obj.source : undefined, obj };
  });
  return { path, lines, queries: g.queries };
}

/** The file's text: the lines, each ended by '\n'. */
export function goldLinesText(lines: readonly GoldLine[]): string {
  return lines.length ? lines.map((l) => l.text).join('\n') + '\n' : '';
}

/** One gold-set JSONL line of an entry (the golden writer's canonical form). */
export function goldLineOf(q: GoldenQuery): GoldLine {
  const text = writeGoldJsonl([q]).replace(/\n$/, '');
  const obj = JSON.parse(text) as Record<string, unknown>;
  return { text, id: q.id, source: typeof obj.source === 'string' ? obj.source : undefined, obj };
}

/** The edited file read back as the golden readers would: an edit that breaks the set is a bug, never a write. */
export function checkGoldText(path: string, text: string): void {
  const c = new Collector(path);
  readGoldJsonl(text, c);
  const errors = c.problems.filter((p) => p.severity === 'error');
  if (errors.length) throw new Error(`internal: the edited gold set ${path} would not read back (${errors[0]!.field}: ${errors[0]!.message})`);
}
