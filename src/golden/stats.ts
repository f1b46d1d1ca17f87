/**
 * Golden-set statistics: counts per category, language, tag, routing and slice, expectation counts,
 * and theme balance (each tag's share of the queries; DES-058: "no single theme dominates", flagged
 * above 20%).
 */
import type { GoldenQuery } from './schema.ts';
import { safeTerminal } from '../util/terminal.ts';

export const THEME_SHARE_LIMIT = 0.2;
/** DES-058's major themes ("ensure all major themes are represented; no single theme dominates"). */
export const DES058_THEMES = ['meditation', 'fear', 'love', 'god-realization', 'guru', 'death', 'healing', 'self-discipline'] as const;

export interface GoldenStats {
  queries: number;
  category: Record<string, number>;
  language: Record<string, number>;
  routing: Record<string, number>;
  tag: Record<string, number>;
  slices: Record<string, Record<string, number>>;
  source: Record<string, number>;
  expectations: { with_relevant: number; without_expectations: number; references: number; relevant_references: number; graded_only_references: number };
  safety: number;
  /** tags whose share of queries exceeds THEME_SHARE_LIMIT, with that share */
  dominant_themes: { tag: string; share: number }[];
  /** DES-058 themes with no query, when the set tags any of them */
  missing_themes: string[];
}

function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

function sorted(m: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(m).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

export function goldenStats(qs: readonly GoldenQuery[]): GoldenStats {
  const s: GoldenStats = {
    queries: qs.length,
    category: {},
    language: {},
    routing: {},
    tag: {},
    slices: {},
    source: {},
    expectations: { with_relevant: 0, without_expectations: 0, references: 0, relevant_references: 0, graded_only_references: 0 },
    safety: 0,
    dominant_themes: [],
    missing_themes: [],
  };
  for (const q of qs) {
    bump(s.category, q.category);
    bump(s.language, q.language);
    bump(s.routing, q.expected_routing);
    bump(s.source, q.source ?? 'unspecified');
    for (const t of new Set(q.tags)) bump(s.tag, t);
    for (const [k, v] of Object.entries(q.slices)) bump((s.slices[k] ??= {}), v);
    if (q.expect_safety) s.safety++;
    const rel = q.expected.filter((r) => r.relevant).length;
    if (rel > 0) s.expectations.with_relevant++;
    if (q.expected.length === 0) s.expectations.without_expectations++;
    s.expectations.references += q.expected.length;
    s.expectations.relevant_references += rel;
    s.expectations.graded_only_references += q.expected.length - rel;
  }
  s.category = sorted(s.category);
  s.language = sorted(s.language);
  s.routing = sorted(s.routing);
  s.tag = sorted(s.tag);
  s.source = sorted(s.source);
  for (const k of Object.keys(s.slices)) s.slices[k] = sorted(s.slices[k]!);
  if (qs.length) {
    for (const [tag, n] of Object.entries(s.tag)) if (n / qs.length > THEME_SHARE_LIMIT) s.dominant_themes.push({ tag, share: n / qs.length });
  }
  const tags = Object.keys(s.tag);
  if (DES058_THEMES.some((th) => tags.includes(th))) s.missing_themes = DES058_THEMES.filter((th) => !tags.includes(th));
  return s;
}

function pct(n: number, total: number): string {
  return total ? `${((100 * n) / total).toFixed(1)}%` : '-';
}

export function formatStats(s: GoldenStats, title: string): string {
  const out: string[] = [`${title}: ${s.queries} queries`];
  const table = (name: string, m: Record<string, number>, flag?: (k: string) => boolean) => {
    if (!Object.keys(m).length) return;
    out.push(`  ${name}:`);
    for (const [k, n] of Object.entries(m)) out.push(`    ${k.padEnd(24)} ${String(n).padStart(6)}  ${pct(n, s.queries).padStart(6)}${flag?.(k) ? '  ! above 20%' : ''}`);
  };
  table('category', s.category);
  table('language', s.language);
  table('routing', s.routing);
  table('source', s.source);
  for (const [k, m] of Object.entries(s.slices)) table(`slice ${k}`, m);
  const dom = new Set(s.dominant_themes.map((d) => d.tag));
  table('tag (theme balance)', s.tag, (k) => dom.has(k));
  const e = s.expectations;
  out.push(`  expectations: ${e.with_relevant} queries with a relevant reference, ${e.without_expectations} with none; ${e.references} references (${e.relevant_references} relevant, ${e.graded_only_references} graded only)`);
  if (s.safety) out.push(`  safety interstitial expected: ${s.safety}`);
  out.push(
    s.dominant_themes.length
      ? `  theme balance: ${s.dominant_themes.map((d) => `${d.tag} ${pct(d.share * s.queries, s.queries)}`).join(', ')} above the 20% share (the portal's DES-058 spec: no single theme dominates)`
      : '  theme balance: ok (no tag above 20% of the queries)',
  );
  if (s.missing_themes.length) out.push(`  themes of the portal's DES-058 spec without a query: ${s.missing_themes.join(', ')}`);
  // every line is made safe as a whole: a category or tag holding a newline or an ANSI escape stays on its line
  return out.map(safeTerminal).join('\n');
}
