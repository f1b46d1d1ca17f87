/**
 * The click model: clicks over expected clicks (COEC), as OpenSearch's Search Relevance Workbench computes implicit
 * judgments from a UBI log (docs/judgments.md "Clicks"). A click at rank 1 says less than a click at rank 8: people
 * click the top more whatever it holds. COEC divides a document's clicks by the clicks an average document would have
 * had in the positions it was shown at:
 *
 *   ctr(p)      = C_p / I_p                          the log's own click-through rate at position p (all queries)
 *   E(q, d)     = sum over the impressions of d for q of ctr(position of that impression)
 *   COEC(q, d)  = clicks(q, d) / E(q, d)             1: clicked as often as its positions predict; 2: twice as often
 *
 * A pair is kept when its impressions >= the minimum (`--min-impressions`, default 10: fewer say little), its clicks
 * >= the minimum (`--min-clicks`, default 3: one click on a rank nobody clicks gives a large COEC from an anecdote) and
 * COEC >= the threshold (`--min-coec`, default 1.0); its grade is COEC rounded down, from 1 to 3 (1: clicked as
 * expected, 2: twice, 3: three times or more). Pure: the caller streams the log twice (the prior first, then the
 * pairs) and keeps these maps only.
 */

/** Clicks and impressions per position over the whole log: the expected click-through rate of each position. */
export class PositionPrior {
  readonly clicks = new Map<number, number>();
  readonly impressions = new Map<number, number>();
  click(p: number): void {
    this.clicks.set(p, (this.clicks.get(p) ?? 0) + 1);
  }
  impression(p: number): void {
    this.impressions.set(p, (this.impressions.get(p) ?? 0) + 1);
  }
  /** ctr(p) = C_p / I_p; 0 for a position never shown. */
  ctr(p: number): number {
    const i = this.impressions.get(p) ?? 0;
    return i > 0 ? (this.clicks.get(p) ?? 0) / i : 0;
  }
  /** The positions with their figures, in order (for the report and the tests). */
  table(): { position: number; clicks: number; impressions: number; ctr: number }[] {
    const ps = [...new Set([...this.clicks.keys(), ...this.impressions.keys()])].sort((a, b) => a - b);
    return ps.map((p) => ({ position: p, clicks: this.clicks.get(p) ?? 0, impressions: this.impressions.get(p) ?? 0, ctr: this.ctr(p) }));
  }
}

/** One (query, document) pair's click evidence. */
export interface ClickStat {
  clicks: number;
  impressions: number;
  /** expected clicks E(q, d) */
  expected: number;
  /** the latest event's time (epoch ms) */
  time: number;
}

export const newClickStat = (): ClickStat => ({ clicks: 0, impressions: 0, expected: 0, time: 0 });

/** COEC(q, d), or null when no impression predicts a click (E = 0). */
export function coec(s: Pick<ClickStat, 'clicks' | 'expected'>): number | null {
  return s.expected > 0 ? s.clicks / s.expected : null;
}

/** The grade of a kept pair: COEC rounded down, at least 1, at most 3. */
export function clickGrade(c: number): number {
  return Math.min(3, Math.max(1, Math.floor(c)));
}

export interface ClickModelOptions {
  minCoec: number;
  minImpressions: number;
  minClicks: number;
}

/** Whether a pair is kept, and its grade. */
export function clickVerdict(s: ClickStat, o: ClickModelOptions): { keep: boolean; coec: number | null; grade: number } {
  const c = coec(s);
  const keep = c !== null && s.impressions >= o.minImpressions && s.clicks >= Math.max(1, o.minClicks) && c >= o.minCoec;
  return { keep, coec: c, grade: keep ? clickGrade(c!) : 0 };
}
