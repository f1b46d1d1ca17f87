/**
 * Feedback rows straight from the team's Postgres: one SELECT (feedback.sql beside this file, or the team's own with
 * --sql FILE) returning `query, doc, score, time`, run in a READ ONLY transaction through a server-side cursor, a
 * batch of rows at a time: a million rows never sit in memory at once, and nothing the role could write is written.
 */
import pg from 'pg';
import { UserError } from '../errors.ts';
import { loadSql } from '../db/index.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { feedbackRow, type FeedbackRow } from './logs.ts';

export const DEFAULT_FEEDBACK_SQL = 'src/judgments/feedback.sql';
/** Rows fetched from the cursor per round trip. */
export const FETCH_ROWS = 5000;
const COLUMNS = ['query', 'doc', 'score', 'time'] as const;

/** The SQL text: the file given, or the default beside this module. Whole-line comments and a trailing semicolon removed. */
export function feedbackSql(file?: string): { text: string; name: string } {
  let raw: string;
  if (file) {
    try {
      raw = readRegularFileSync(file, 'utf8');
    } catch (e) {
      throw new UserError(`${file}: cannot read the SQL file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  } else raw = loadSql(import.meta.url, 'feedback.sql');
  const text = raw
    .split('\n')
    .filter((l) => !/^\s*--/.test(l))
    .join('\n')
    .trim()
    .replace(/;\s*$/, '');
  if (!/^(select|with)\b/i.test(text)) throw new UserError(`${file ?? DEFAULT_FEEDBACK_SQL}: expected one SELECT (or WITH ... SELECT) returning query, doc, score, time`);
  if (text.includes(';')) throw new UserError(`${file ?? DEFAULT_FEEDBACK_SQL}: expected exactly one statement (a ';' inside it)`);
  return { text, name: file ?? DEFAULT_FEEDBACK_SQL };
}

/** The rows of the feedback query, checked as a file's are (`sql row N`), read through a cursor. */
export async function* readFeedbackSql(url: string, sql: { text: string; name: string }): AsyncGenerator<FeedbackRow> {
  const client = new pg.Client({ connectionString: url, application_name: 'rankgate golden bootstrap' });
  client.on('error', () => {}); // a dropped connection surfaces on the next query
  try {
    await client.connect();
  } catch (e) {
    throw new UserError(`--database-url: cannot connect to the feedback database (${oneLine(e)})`);
  }
  let n = 0;
  try {
    await client.query('BEGIN TRANSACTION READ ONLY');
    try {
      await client.query(`DECLARE rankgate_feedback NO SCROLL CURSOR FOR ${sql.text}`);
    } catch (e) {
      throw new UserError(`${sql.name}: the feedback query failed (${oneLine(e)})${(e as { code?: string }).code === '42501' ? ': the role needs SELECT on the feedback and search-log tables (docs/judgments.md)' : ''}`);
    }
    for (;;) {
      const r = await client.query(`FETCH FORWARD ${FETCH_ROWS} FROM rankgate_feedback`);
      if (n === 0) {
        const have = r.fields.map((f) => f.name);
        const missing = COLUMNS.filter((c) => !have.includes(c));
        if (missing.length) throw new UserError(`${sql.name}: the query returns no column ${missing.map((c) => `'${c}'`).join(', ')} (it returns ${have.join(', ') || 'none'}), expected query, doc, score, time (alias yours: AS doc)`);
      }
      if (!r.rows.length) break;
      for (const row of r.rows as Record<string, unknown>[]) {
        n++;
        yield feedbackRow(row, `${sql.name}: sql row ${n}`);
      }
    }
    await client.query('COMMIT');
  } catch (e) {
    if (e instanceof UserError) throw e;
    throw new UserError(`${sql.name}: reading the feedback failed after ${n} rows (${oneLine(e)})`);
  } finally {
    await client.end().catch(() => {});
  }
}

const oneLine = (e: unknown) => String((e as Error)?.message ?? e).split('\n')[0];
