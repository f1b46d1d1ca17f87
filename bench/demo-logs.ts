/**
 * The demo's logs (datasets/feedback/): a feedback export and a UBI click log over the demo corpus's six books, with
 * queries in the seekers' own words, made by a seeded generator so anyone can reproduce them byte for byte:
 *
 *   npm run demo:logs            # writes datasets/feedback/feedback.csv, ubi_queries.jsonl, ubi_events.jsonl
 *
 * - feedback.csv: the default feedback query's result (src/judgments/feedback.sql: query, doc, score, time) exported
 *   as CSV with the search log's id beside it; scores 0-3, most rows a 3 for the book that answers, some 2s and 1s for
 *   books that help, 0s for books that do not, and a few rows naming a book that left the corpus (refused with --corpus);
 * - ubi_queries.jsonl / ubi_events.jsonl: the two UBI stores exported as JSONL: each search shows five of the six
 *   books (query_response_hit_ids, the answering book more often near the top), and clicks follow a position-times-
 *   relevance model (people examine rank 1 far more than rank 5), so COEC has a position bias to correct.
 *
 * Some searches are typed exactly as queries of the demo's golden sets (normalised): their evidence becomes labels
 * of those golden queries; the others become bootstrap queries of datasets/feedback/gold-set.jsonl.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../src/metrics/significance.ts';

const LAMP = 'the-lamp-within';
const PURPOSE = 'the-purposeful-life';
const RIVER = 'the-river-of-sorrow';
const WAVE = 'the-wave-and-the-ocean';
const LAMPARA = 'la-lampara-interior';
const ANTAR = 'antar-deep';
export const BOOKS = [ANTAR, LAMPARA, LAMP, PURPOSE, RIVER, WAVE] as const;
/** A book that left the corpus: rows naming it are refused when the corpus is known. */
export const GONE = 'the-silent-mountain';

interface Intent {
  /** how people typed it (case, spacing and wording vary; the first is the most common) */
  typed: string[];
  /** the grade of each book for this need (unlisted: 0) */
  grades: Partial<Record<(typeof BOOKS)[number], number>>;
  feedback?: number;
  clicks?: number;
}

/** What seekers asked, in their own words (a few exactly as the golden sets ask it). */
const INTENTS: Intent[] = [
  { typed: ['how to calm an anxious mind', 'How to calm an anxious mind', 'how to calm  an anxious mind'], grades: { [LAMP]: 3, [RIVER]: 1 }, feedback: 14, clicks: 30 },
  { typed: ['How can I find inner peace?', 'how can i find inner peace?', 'How can I find  inner peace?'], grades: { [LAMP]: 3, [PURPOSE]: 2 }, feedback: 12, clicks: 30 },
  { typed: ['my mother died and i cant stop crying', 'My mother died and I cant stop crying'], grades: { [RIVER]: 3, [WAVE]: 1 }, feedback: 10 },
  { typed: ['cant stop crying', "can't stop crying"], grades: { [RIVER]: 3 }, feedback: 8, clicks: 30 },
  { typed: ['I feel empty inside', 'i feel empty inside'], grades: { [WAVE]: 3, [PURPOSE]: 2 }, feedback: 10, clicks: 30 },
  { typed: ['afraid of dying', 'Afraid of dying', 'how do i stop being afraid of death'], grades: { [RIVER]: 3, [PURPOSE]: 2 }, feedback: 12, clicks: 30 },
  { typed: ['my job feels meaningless', 'My job feels meaningless'], grades: { [PURPOSE]: 3 }, feedback: 10, clicks: 30 },
  { typed: ["I've been meditating for years and I feel like I'm getting nowhere", 'meditation isnt working for me'], grades: { [LAMP]: 3, [WAVE]: 1 }, feedback: 8 },
  { typed: ['how to stay consistent with meditation', 'no willpower to meditate every day'], grades: { [LAMP]: 3, [PURPOSE]: 1 }, feedback: 10 },
  { typed: ['how to love people who hurt me', 'How to love people who hurt me'], grades: { [WAVE]: 3 }, feedback: 8, clicks: 30 },
  { typed: ['is it wrong to bargain with god', 'Is it wrong to bargain with God'], grades: { [WAVE]: 3 }, feedback: 8 },
  { typed: ['how to find a real guru', 'How to find a real guru'], grades: { [WAVE]: 3, [LAMP]: 2 }, feedback: 10 },
  { typed: ['my mind never stops racing', 'racing thoughts at night'], grades: { [PURPOSE]: 3, [LAMP]: 2 }, clicks: 30 },
  { typed: ['letting go of grief', 'Letting go of grief'], grades: { [RIVER]: 3 }, feedback: 10 },
  { typed: ['¿Cómo encontrar la paz interior?', '¿cómo encontrar la paz interior?'], grades: { [LAMPARA]: 3 }, feedback: 8, clicks: 30 },
  { typed: ['tengo miedo de noche y no duermo'], grades: { [LAMPARA]: 3 }, feedback: 6 },
  { typed: ['perdí a mi padre y no sé cómo seguir'], grades: { [LAMPARA]: 3 }, feedback: 6 },
  { typed: ['मन को सुकून कैसे मिले?', ' मन को सुकून  कैसे मिले?'], grades: { [ANTAR]: 3 }, feedback: 8, clicks: 30 },
  { typed: ['डर से कैसे छुटकारा पाएं'], grades: { [ANTAR]: 3 }, feedback: 6 },
];

/** How often people look at each rank (1-5), and how often they click what they look at, by its grade. */
const EXAMINE = [0.9, 0.55, 0.4, 0.3, 0.22];
const ATTRACT = [0.04, 0.15, 0.45, 0.85];

const START = Date.parse('2026-05-01T08:00:00Z');

export interface DemoLogs {
  'feedback.csv': string;
  'ubi_queries.jsonl': string;
  'ubi_events.jsonl': string;
}

const csv = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

export function demoLogs(seed = 20260501): DemoLogs {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  // the commonest wording is typed about half the time
  const typed = (it: Intent) => (rnd() < 0.5 ? it.typed[0]! : pick(it.typed));
  let clock = START;
  const tick = () => (clock += 60_000 * (1 + Math.floor(rnd() * 90)));
  const iso = (t: number) => new Date(t).toISOString();

  // explicit feedback: mostly on the book that answers, some on books that help, a few on books that do not
  const fb: string[] = ['search_log_id,query,doc,score,time'];
  let logId = 1000;
  for (const it of INTENTS)
    for (let i = 0; i < (it.feedback ?? 0); i++) {
      const t = iso(tick());
      const q = typed(it);
      const r = rnd();
      const graded = Object.entries(it.grades).sort((a, b) => b[1] - a[1]);
      let doc: string;
      let score: number;
      if (r < 0.62) [doc, score] = [graded[0]![0], graded[0]![1]];
      else if (r < 0.8 && graded[1]) [doc, score] = [graded[1][0], graded[1][1]];
      else if (r < 0.9) {
        doc = pick(BOOKS.filter((b) => !(b in it.grades)));
        score = rnd() < 0.8 ? 0 : 1;
      } else if (r < 0.95) [doc, score] = [GONE, 3];
      else [doc, score] = [graded[0]![0], Math.max(0, graded[0]![1] - 1)];
      fb.push([String(logId++), csv(q), doc, String(score), t].join(','));
    }

  // clicks: five of the six books per search, the answering books nearer the top more often than not
  const queries: string[] = [];
  const events: string[] = [];
  let qn = 0;
  for (const it of INTENTS)
    for (let i = 0; i < (it.clicks ?? 0); i++) {
      const t = tick();
      const queryId = `q-${String(++qn).padStart(4, '0')}`;
      const client = `client-${1 + Math.floor(rnd() * 40)}`;
      const score = (b: string) => (it.grades[b as (typeof BOOKS)[number]] ?? 0) * 0.3 + rnd() * 2.2;
      const shown = [...BOOKS]
        .map((b) => ({ b, s: score(b) }))
        .sort((a, b) => b.s - a.s)
        .slice(0, 5)
        .map((x) => x.b);
      queries.push(JSON.stringify({ application: 'demo-search', query_id: queryId, client_id: client, user_query: typed(it), query_response_hit_ids: shown, timestamp: iso(t) }));
      let after = t;
      shown.forEach((b, i) => {
        const g = it.grades[b as (typeof BOOKS)[number]] ?? 0;
        if (rnd() < EXAMINE[i]! * ATTRACT[g]!) {
          after += 5000 + Math.floor(rnd() * 40_000);
          events.push(
            JSON.stringify({
              application: 'demo-search',
              action_name: 'click',
              query_id: queryId,
              client_id: client,
              timestamp: iso(after),
              message_type: 'CLICK_THROUGH',
              event_attributes: { object: { object_id: b, object_id_field: 'slug' }, position: { ordinal: i + 1 } },
            }),
          );
        }
      });
    }
  return { 'feedback.csv': fb.join('\n') + '\n', 'ubi_queries.jsonl': queries.join('\n') + '\n', 'ubi_events.jsonl': events.join('\n') + '\n' };
}

export const FEEDBACK_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'datasets', 'feedback');

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  mkdirSync(FEEDBACK_DIR, { recursive: true });
  const logs = demoLogs();
  for (const [name, text] of Object.entries(logs)) {
    writeFileSync(join(FEEDBACK_DIR, name), text);
    console.log(`${join('datasets', 'feedback', name)}: ${text.trimEnd().split('\n').length} lines`);
  }
}
