/**
 * A golden set as another commit has it (the base branch of a pull request: src/util/git.ts), and which fields of a
 * golden entry judge it. Used by the gate (src/gate/base-ref.ts: a pull request is judged by the base's expectations)
 * and by the tests loader (src/golden/promptfoo.ts: a test whose expectations the pull request changed carries the
 * base's entry too, so its row keeps the hit text and passage resolutions the base's expectations need).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../errors.ts';
import type { RefReader } from '../util/git.ts';
import { canonicalJson } from '../util/seal.ts';
import { loadGolden } from './index.ts';
import { routingStated, type GoldenQuery, type Reference } from './schema.ts';

const show = (x: unknown) => (x === undefined ? '(unset)' : typeof x === 'string' ? x : JSON.stringify(x));

/** What judges a query: the fields of a golden entry that decide its scores (not its notes, intent, tags or origin). */
function refKey(r: Reference): string {
  if (r.chunk_id !== undefined) return `chunk ${r.chunk_id}`;
  if (r.doc_id !== undefined) return `doc ${r.doc_id}`;
  if (r.path !== undefined) return r.path;
  return `passage "${(r.passage_substring ?? '').slice(0, 40)}${(r.passage_substring ?? '').length > 40 ? '…' : ''}"${r.book_slug ? ` (${r.book_slug})` : ''}`;
}
const refJudged = (r: Reference) => ({ c: r.chunk_id, d: r.doc_id, p: r.path, s: r.passage_substring, b: r.book_slug, n: r.chapter_number, g: r.grade, r: r.relevant, a: r.answer_contains });

/** The judging fields of a golden query that differ between the base's and the pull request's, one phrase each. */
export function expectationChanges(base: GoldenQuery, pr: GoldenQuery): string[] {
  const out: string[] = [];
  const bk = new Map(base.expected.map((r) => [refKey(r), r]));
  const pk = new Map(pr.expected.map((r) => [refKey(r), r]));
  const added = [...pk.keys()].filter((k) => !bk.has(k));
  const removed = [...bk.keys()].filter((k) => !pk.has(k));
  if (added.length || removed.length) out.push(`expected ${[...removed.map((k) => `-${k}`), ...added.map((k) => `+${k}`)].join(', ')}`);
  for (const [k, b] of bk) {
    const p = pk.get(k);
    if (!p) continue;
    if (b.grade !== p.grade) out.push(`grade of ${k} ${b.grade} -> ${p.grade}`);
    if (b.relevant !== p.relevant) out.push(`${k} relevant ${b.relevant} -> ${p.relevant}`);
    if (canonicalJson(refJudged(b)) !== canonicalJson(refJudged(p)) && b.grade === p.grade && b.relevant === p.relevant) out.push(`reference ${k} changed`);
  }
  const routeOf = (q: GoldenQuery) => (routingStated(q) ? q.expected_routing : '(not stated)');
  if (routeOf(base) !== routeOf(pr)) out.push(`expected_routing ${routeOf(base)} -> ${routeOf(pr)}`);
  for (const f of ['expect_safety', 'category', 'language', 'filters', 'expansion', 'source'] as const)
    if (canonicalJson(base[f] ?? null) !== canonicalJson(pr[f] ?? null)) out.push(`${f} ${show(base[f])} -> ${show(pr[f])}`);
  return out;
}


/**
 * The queries of golden files (paths as a selection names them) at a ref, by id; `missing`: files the ref does not
 * have. A file that does not read there is exit 2 (fix it on that branch first).
 */
export function goldenAtRef(base: RefReader, files: readonly string[]): { byId: Map<string, GoldenQuery>; missing: string[] } {
  const byId = new Map<string, GoldenQuery>();
  const missing: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'rankgate-base-golden-'));
  try {
    files.forEach((f, i) => {
      // a folder per file: the copy keeps the file's own name (formats are told by it)
      const sub = join(dir, String(i));
      mkdirSync(sub);
      const copy = base.materialize(f, sub);
      if (copy === null) {
        missing.push(f);
        return;
      }
      let qs: GoldenQuery[];
      try {
        qs = loadGolden(copy).queries;
      } catch (e) {
        throw new UserError(`${f} at ${base.name}: the golden set does not read there (${(e as Error).message.split('\n')[0]!.split(copy).join(f)}); fix it on that branch first`, 2);
      }
      for (const q of qs) if (!byId.has(q.id)) byId.set(q.id, q);
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { byId, missing };
}
