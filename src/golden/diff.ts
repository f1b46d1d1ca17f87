/**
 * Compare two versions of a golden set. Old queries are regression tests and are never removed
 * (DES-058), and an id is never reused for a different query: both fail the diff.
 * "Different query" = different query text after trimming and collapsing whitespace; other field
 * changes (expectations, tags, notes...) are listed as changed.
 */
import { isDeepStrictEqual } from 'node:util';
import type { GoldenQuery } from './schema.ts';

export interface GoldenDiff {
  added: string[];
  removed: string[];
  /** same id, different query text */
  reused: { id: string; old: string; new: string }[];
  /** same id and query, other fields changed (names of the changed fields) */
  changed: { id: string; fields: string[] }[];
  unchanged: number;
}

const norm = (s: string) => s.trim().replace(/\s+/g, ' ');

export function diffGolden(oldQs: readonly GoldenQuery[], newQs: readonly GoldenQuery[]): GoldenDiff {
  const d: GoldenDiff = { added: [], removed: [], reused: [], changed: [], unchanged: 0 };
  const oldById = new Map(oldQs.map((q) => [q.id, q]));
  const newById = new Map(newQs.map((q) => [q.id, q]));
  for (const q of oldQs) if (!newById.has(q.id)) d.removed.push(q.id);
  for (const q of newQs) {
    const o = oldById.get(q.id);
    if (!o) {
      d.added.push(q.id);
      continue;
    }
    if (norm(o.query) !== norm(q.query)) {
      d.reused.push({ id: q.id, old: o.query, new: q.query });
      continue;
    }
    const keys = new Set([...Object.keys(o), ...Object.keys(q)].filter((k) => k !== 'origin'));
    const fields = [...keys].filter((k) => !isDeepStrictEqual((o as Record<string, unknown>)[k], (q as Record<string, unknown>)[k])).sort();
    if (fields.length) d.changed.push({ id: q.id, fields });
    else d.unchanged++;
  }
  return d;
}

export function diffFails(d: GoldenDiff): boolean {
  return d.removed.length > 0 || d.reused.length > 0;
}
