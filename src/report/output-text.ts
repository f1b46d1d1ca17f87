/**
 * The readable output of one row (contract C): what a person sees in a `promptfoo view` cell instead of JSON.
 * The ranked list with rank, document title (or path), chapter/section, a short snippet, a mark on every result
 * that matches a golden reference (with its grade), and the route and flags first. Pure; the structured ranking
 * stays in the row's metadata.harness for assertions and reports.
 *
 *   route search · expected result at #2 (grade 3) · 10 results
 *   (a miss: "MISS (rerank-budget miss): expected ..." when the service reports its first stage: the failure bucket)
 *   #1  The River of Sorrow · ch. 1
 *       "Grief is not an enemy to be defeated; it is a river that …"
 *   #2 ✓ The Lamp Within · ch. 3 · expected, grade 3
 *       "The lamp of calmness burns steadily when the mind …"
 *
 * promptfoo's table truncates a cell at its "max text length" (250 characters by default, Table settings), so
 * the route line and the first results come first.
 */
import type { GoldenQuery, Reference } from '../golden/schema.ts';
import { refMatchesHit, scoreRanking, statedRoute } from '../results/score.ts';
import { bucketLabel, type HarnessHit, type HarnessMetadata, type HarnessOutput } from '../results/types.ts';
import type { ExpansionDiagnostics } from '../search/types.ts';
import { safeTerminal } from '../util/terminal.ts';

export interface OutputTextOptions {
  /** Results listed (default 10). */
  top?: number;
  /** Snippet length in characters (default 90). */
  snippet?: number;
  /** What query expansion did (diagnostics.expansion): one short line under the route line. */
  expansion?: ExpansionDiagnostics | null;
}

/**
 * The expansion line of a cell, short (promptfoo cuts a cell at 250 characters):
 * `expanded: golden rrf + "calmness tranquility …", "how to become …"`, `expanded: rm3 +calm 0.09 +steadi 0.05 …`,
 * `expanded: rewrites by openai:chat:m (cached) + "…"`, `not expanded (golden: no expansion: strings)`.
 */
export function expansionLine(e: ExpansionDiagnostics): string {
  const quoted = (xs: readonly string[] = []) => xs.map((x) => `"${snippet(x, 40)}"`).join(', ');
  if (!e.expanded) return `not expanded (${e.source === 'golden' ? 'golden: no expansion: strings' : e.source === 'rm3' ? 'rm3: no feedback terms' : e.source})`;
  if (e.source === 'golden') return `expanded: golden ${e.mode ?? 'rrf'} + ${quoted(e.queries)}`;
  if (e.source === 'rm3') {
    const terms = (e.terms ?? []).slice(0, 6).map((t) => `${t.term} ${t.weight.toFixed(2)}`).join(', ');
    return `expanded: rm3 over ${e.feedbackDocs ?? 0} feedback chunks: ${terms}${(e.terms?.length ?? 0) > 6 ? ' …' : ''}`;
  }
  const by = `by ${e.provider ?? 'a model'}${e.cached ? ' (cached)' : e.costUsd ? ` ($${e.costUsd.toFixed(4)})` : ''}`;
  return e.kind === 'hyde' ? `expanded: hyde ${by}: ${quoted(e.queries)}` : `expanded: ${e.queries?.length ?? 0} rewrites ${by} + ${quoted(e.queries)}`;
}

/** "the-lamp-within" -> "The Lamp Within"; other ids unchanged. */
function titleFromSlug(s: string): string {
  if (!/^[a-z0-9]+(?:[-_][a-z0-9]+)+$/.test(s)) return s;
  return s
    .split(/[-_]/)
    .map((w) => (w.length > 2 || w === s.split(/[-_]/)[0] ? w[0]!.toUpperCase() + w.slice(1) : w))
    .join(' ');
}

/** Document title or path of a hit. */
export function hitTitle(h: HarnessHit): string {
  if (h.title) return h.title;
  if (h.path) {
    const base = h.path.replace(/\\/g, '/').split('/').pop()!.replace(/\.(md|markdown|txt|json|jsonl|html?)$/i, '');
    return /^[a-z0-9]+(?:[-_][a-z0-9]+)+$/.test(base) && base === h.documentId ? titleFromSlug(base) : h.path;
  }
  return titleFromSlug(h.bookSlug ?? h.documentId);
}

/** Chapter / section of a hit ('' when unknown). */
export function hitSection(h: HarnessHit): string {
  if (h.heading) return h.heading;
  return h.chapterNumber !== undefined ? `ch. ${h.chapterNumber}` : '';
}

/** A short snippet: whitespace collapsed, markdown heading marks dropped, cut at a word boundary. */
export function snippet(content: string, max = 90): string {
  const t = content
    .replace(/^\s*#{1,6}\s+/gm, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max);
  const sp = cut.lastIndexOf(' ');
  return (sp > max * 0.6 ? cut.slice(0, sp) : cut) + ' …';
}

export interface HitMark {
  /** Index of the golden reference matched. */
  ref: number;
  grade: number;
  relevant: boolean;
}

/** The best golden reference a hit matches (relevant first, then the highest grade), or null. */
export function hitMark(h: HarnessHit, refs: readonly Reference[], meta?: HarnessMetadata): HitMark | null {
  let best: HitMark | null = null;
  refs.forEach((r, i) => {
    if (!refMatchesHit(r, h, meta)) return;
    const m = { ref: i, grade: r.grade, relevant: r.relevant };
    if (!best || Number(m.relevant) > Number(best.relevant) || (m.relevant === best.relevant && m.grade > best.grade)) best = m;
  });
  return best;
}

/** What a golden reference names, for a person: "The Lamp Within · ch. 3", a path, a document id, a quoted passage. */
export function refLabel(r: Reference): string {
  if (r.book_slug) return `${titleFromSlug(r.book_slug)}${r.chapter_number !== undefined ? ` · ch. ${r.chapter_number}` : ''}`;
  if (r.path) return r.path;
  if (r.doc_id) return r.doc_id;
  if (r.chunk_id) return `chunk ${r.chunk_id}`;
  return `"${snippet(r.passage_substring ?? '', 40)}"`;
}

/**
 * The expected documents of a query, best grade first, as one phrase ("The Lamp Within · ch. 3 (grade 3)", plus
 * "+N more" for other documents); null when the query has no relevant reference.
 */
export function expectedLabel(golden: GoldenQuery): string | null {
  const rel = golden.expected.filter((r) => r.relevant).sort((a, b) => b.grade - a.grade);
  if (!rel.length) return null;
  const labels = [...new Set(rel.map(refLabel))];
  return `${labels[0]} (grade ${rel[0]!.grade})${labels.length > 1 ? ` +${labels.length - 1} more` : ''}`;
}

function markText(m: HitMark): string {
  return m.relevant ? `expected, grade ${m.grade}` : `partial match, grade ${m.grade}`;
}

/** The readable ranked list of one row (see the file comment). `golden` adds the marks and the summary. */
export function renderOutputText(out: HarnessOutput, golden?: GoldenQuery, meta?: HarnessMetadata, opts: OutputTextOptions = {}): string {
  const top = opts.top ?? 10;
  const hits = [...out.hits].sort((a, b) => a.rank - b.rank);
  const refs = golden?.expected ?? [];
  const marks = hits.map((h) => (refs.length ? hitMark(h, refs, meta) : null));
  const route = out.routing?.route ?? (out.practice_bridge ? 'practice_bridge' : hits.length ? 'search' : 'no_results');
  const head = [`route ${route}`];
  if (out.safety) head.push('SAFETY flag');
  if (out.practice_bridge && route !== 'practice_bridge') head.push('practice bridge');
  if (golden && refs.some((r) => r.relevant)) {
    const i = marks.findIndex((m) => m?.relevant);
    // A miss names what was expected: the cell is cut after the first two results (promptfoo's 250 characters).
    // with the service's diagnostics, a query not in the top 10 names its failure bucket (the stage that lost it)
    const bucket = meta?.diagnostics ? scoreRanking(golden, out, meta)?.bucket : undefined;
    const tag = bucket && bucket !== 'rank1_hit' && bucket !== 'topk_ordering_gap' && bucket !== 'not_diagnosed' ? ` (${bucketLabel(bucket)})` : '';
    if (i >= 0) head.push(`expected result at #${hits[i]!.rank} (grade ${marks[i]!.grade})${tag}${i >= 2 ? `: ${hitTitle(hits[i]!)}${hitSection(hits[i]!) ? ` · ${hitSection(hits[i]!)}` : ''}` : ''}`);
    else head.push(`MISS${tag}: expected ${expectedLabel(golden)}, not in the ${hits.length ? `top ${hits.length}` : 'results (none returned)'}`);
  }
  head.push(`${hits.length} result${hits.length === 1 ? '' : 's'}`);
  const stated = golden ? statedRoute(golden) : null;
  if (stated && stated !== 'search') head.push(`expected route ${stated}${stated === route ? ' ✓' : ' ✗'}`);
  const lines = [head.join(' · ')];
  if (opts.expansion) lines.push(expansionLine(opts.expansion));
  hits.slice(0, top).forEach((h, i) => {
    const m = marks[i];
    const section = hitSection(h);
    lines.push(`#${h.rank} ${m ? (m.relevant ? '✓' : '~') : ' '} ${hitTitle(h)}${section ? ` · ${section}` : ''}${m ? ` · ${markText(m)}` : ''}`);
    const snip = snippet(h.content ?? '', opts.snippet ?? 90);
    if (snip) lines.push(`    "${snip}"`);
  });
  if (hits.length > top) lines.push(`… ${hits.length - top} more`);
  // titles, headings and snippets come from the service: each line stays one line, without terminal escapes
  return lines.map(safeTerminal).join('\n');
}
