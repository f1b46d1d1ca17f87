/**
 * `rankgate review export | import`: the blind human review of criterion 4 of the shipping criteria (docs/review.md).
 * Argument parsing and file writing only: the blinding, the checks and the statistics are src/gate/review.ts, the page
 * src/report/html/review.ts.
 */
import { dirname, join, basename } from 'node:path';
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { pickColumn } from '../results/read.ts';
import { readResultsFile, resultRows } from '../results/stream.ts';
import {
  DEFAULT_REVIEW_HITS,
  DEFAULT_REVIEW_QUERIES,
  MIN_PREFERENCE,
  REVIEW_ENV,
  buildReviewExport,
  importReview,
  readRatings,
  readReviewKey,
  type PreferenceStat,
  type RatingsDoc,
  type ReviewPageData,
  type ReviewResult,
} from '../gate/review.ts';
import { parseReviewAnswer, reviewPairPrompt, REVIEW_PROMPT_VERSION } from '../judge/review-prompt.ts';
import { renderReviewPage } from '../report/html/review.ts';
import { parseCliArgs, parseIntFlag } from './args.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { safeTerminal } from '../util/terminal.ts';

const USAGE = `usage: rankgate review export RESULTS --baseline COL --candidate COL [--queries N] [--seed S] [--hits K]
                              -o review.html [--key review.key.json]
       rankgate review import RATINGS.json [MORE.json ...] [--key review.key.json] [-o review-result.json]
                              [--seed S] [--json]
       rankgate review judge review.html --judge PROVIDER_ID [-o ratings-judge.json]
  export: one self-contained page (no server, no network) with, per sampled query, the top K (default ${DEFAULT_REVIEW_HITS}) results
    of the two columns (a label or a 0-based index, as --column elsewhere) as lists "X" and "Y", the side of each
    drawn per query from a secret; --queries N (default ${DEFAULT_REVIEW_QUERIES}, capped at the queries both columns answered
    without an error) sampled with --seed (default 42). The key (the unblinding) goes to --key, default beside the
    page (review.html -> review.key.json): keep it from the reviewers.
  import: checks every ratings file against the key (same export, key unedited, every query rated once, ratings
    1-5), unblinds, and reports the candidate's mean preference (candidate - baseline, points on the 1-5 scale) with
    a bootstrap 95% CI per reviewer and pooled, and Krippendorff's alpha (interval) with two or more reviewers. Writes
    -o (default review-result.json, atomically): pass it to rankgate eval / compare --results as --review FILE (or
    ${REVIEW_ENV}) and criterion 4 becomes pass (pooled mean >= +${MIN_PREFERENCE}) or fail.
  judge: a stand-in: a promptfoo chat provider (e.g. openai:chat:gpt-4.1-mini) rates the page's blinded pairs as a
    reviewer would and writes a ratings file marked "rater": "judge"; import reports it as "judge, not human", on its
    own, and it never counts as criterion 4.`;

/** review.html -> review.key.json (beside the page). */
export function defaultKeyPath(out: string): string {
  return join(dirname(out), `${basename(out).replace(/\.html?$/i, '')}.key.json`);
}

const signed = (x: number, d = 2) => `${x >= 0 ? '+' : ''}${x.toFixed(d)}`;
const statLine = (s: PreferenceStat) =>
  `${signed(s.preference)} points (95% CI [${signed(s.ci95[0])}, ${signed(s.ci95[1])}]) · baseline ${s.baselineMean.toFixed(2)}, candidate ${s.candidateMean.toFixed(2)} · candidate better/same/worse on ${s.wins}/${s.ties}/${s.losses} queries`;

export function reviewText(r: ReviewResult, out: string): string {
  const who = r.rater === 'judge' ? 'judge, not human' : 'human blind review';
  const lines = [
    `${who}: '${r.candidate.label}' (candidate) vs '${r.baseline.label}' (baseline), ${r.queries} queries, export ${r.exportId}`,
    ...r.reviewers.map((x) => `  ${x.name.padEnd(16)} ${statLine(x)}`),
    `  ${'pooled'.padEnd(16)} ${statLine(r.pooled)} · ${r.pooled.reviewers} reviewer(s)`,
    r.agreement
      ? `  agreement: ${r.agreement.statistic}: ${r.agreement.alpha === null ? 'undefined (no variation in the preferences)' : r.agreement.alpha.toFixed(3)} over ${r.agreement.units} queries`
      : '  agreement: one reviewer (needs two or more)',
    r.rater === 'judge'
      ? `criterion 4: not counted (a judge's ratings are a stand-in, never the human review); written ${out}`
      : `criterion 4 (human blind review prefers the candidate by >= ${MIN_PREFERENCE} points): ${r.meetsThreshold ? 'PASS' : 'FAIL'} (pooled mean ${signed(r.pooled.preference)}); written ${out}: pass it as --review ${out}`,
  ];
  // column labels and reviewer names come from the ratings files: each line printed as one (src/util/terminal.ts)
  return lines.map(safeTerminal).join('\n') + '\n';
}

async function runExport(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      baseline: { type: 'string' },
      candidate: { type: 'string' },
      queries: { type: 'string' },
      seed: { type: 'string' },
      hits: { type: 'string' },
      out: { type: 'string', short: 'o' },
      key: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UserError(`review export: expected one results file, got ${positionals.length}\n${USAGE}`);
  if (values.baseline === undefined || values.candidate === undefined) throw new UserError(`review export: --baseline COL and --candidate COL are required (a column label or 0-based index)\n${USAGE}`);
  if (!values.out) throw new UserError(`review export: -o review.html is required\n${USAGE}`);
  const queries = parseIntFlag('queries', values.queries, 1);
  const seed = parseIntFlag('seed', values.seed, 0) ?? 42;
  const hits = parseIntFlag('hits', values.hits, 1, 50);
  const file = positionals[0]!;
  const parsed = readResultsFile(file);
  const baseline = pickColumn(parsed, values.baseline, file);
  const candidate = pickColumn(parsed, values.candidate, file);
  const { page, key } = buildReviewExport(file, parsed, resultRows(file), { baseline, candidate, seed, ...(queries ? { queries } : {}), ...(hits ? { hits } : {}) });
  const keyPath = values.key ?? defaultKeyPath(values.out);
  if (keyPath === values.out) throw new UserError(`review export: --key ${keyPath} is the page itself: the key must be a separate file`);
  // the key first: a page without its key could never be imported
  writeFileAtomic(keyPath, JSON.stringify(key, null, 2) + '\n');
  writeFileAtomic(values.out, renderReviewPage(page));
  const want = queries ?? DEFAULT_REVIEW_QUERIES;
  console.log(
    [
      `review page: ${values.out} (${page.items.length} queries of the ${key.eligible} both columns answered${key.erroredLeftOut ? `; ${key.erroredLeftOut} errored in a column, left out` : ''}${want > key.eligible ? `; --queries ${want} capped` : ''}; top ${key.hits} results per list; seed ${seed})`,
      `key: ${keyPath} (the unblinding: keep it from the reviewers; rankgate review import needs it)`,
      `export ${key.exportId}: '${candidate.label}' (candidate) vs '${baseline.label}' (baseline)`,
      `next: send ${basename(values.out)} to each reviewer (it opens offline in any browser), then rankgate review import ratings-*.json --key ${keyPath}`,
    ].join('\n'),
  );
  return 0;
}

async function runImport(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      key: { type: 'string' },
      out: { type: 'string', short: 'o' },
      seed: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!positionals.length) throw new UserError(`review import: expected one or more ratings files\n${USAGE}`);
  const keyPath = values.key ?? 'review.key.json';
  const seed = parseIntFlag('seed', values.seed, 0) ?? 42;
  const { key, digest } = readReviewKey(keyPath);
  const files = positionals.map((path) => ({ path, doc: readRatings(path, key, digest, keyPath) }));
  const result = importReview(key, digest, files, { seed });
  const out = values.out ?? 'review-result.json';
  writeFileAtomic(out, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(values.json ? JSON.stringify(result, null, 2) + '\n' : reviewText(result, out));
  return 0;
}

/** The data of an exported page (the JSON the page carries). */
export function readReviewPage(path: string): ReviewPageData {
  let html: string;
  try {
    html = readRegularFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the review page (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  const m = /<script type="application\/json" id="review-data">([\s\S]*?)<\/script>/.exec(html);
  let d: ReviewPageData | undefined;
  try {
    d = m ? (JSON.parse(m[1]!) as ReviewPageData) : undefined;
  } catch {
    d = undefined;
  }
  if (!d || d.kind !== 'rankgate-review-page' || !Array.isArray(d.items)) throw new UserError(`${path}: not a page written by rankgate review export (no review data in it)`);
  return d;
}

async function runJudge(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      judge: { type: 'string' },
      out: { type: 'string', short: 'o' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length !== 1) throw new UserError(`review judge: expected one review page, got ${positionals.length}\n${USAGE}`);
  const id = values.judge;
  if (!id || !/^[a-z][\w-]*:[^\s]+$/i.test(id)) throw new UserError(`review judge: --judge: expected a promptfoo chat provider id such as openai:chat:gpt-4.1-mini, got ${JSON.stringify(id ?? '')}`);
  const page = readReviewPage(positionals[0]!);
  const { callChatProvider, chatProviderConfig, loadChatProvider } = await import('../llm/provider.ts');
  const family = id.split(':').slice(0, 2).join(':');
  const provider = await loadChatProvider(id, chatProviderConfig(family, 20));
  const ratings: RatingsDoc['ratings'] = [];
  let cost = 0;
  for (const it of page.items) {
    let answer;
    try {
      answer = await callChatProvider(provider, id, reviewPairPrompt(it.query, it.X, it.Y), 60_000);
    } catch (e) {
      throw new UserError(`${positionals[0]}: query '${it.id}': the judge ${id} failed: ${(e as Error).message.split('\n')[0]}; no ratings written`);
    }
    const r = parseReviewAnswer(answer.text);
    if (!r) throw new UserError(`${positionals[0]}: query '${it.id}': the judge ${id} answered ${JSON.stringify((answer.text ?? '').slice(0, 80))}, not "X=<1-5> Y=<1-5>"; no ratings written`);
    cost += answer.costUsd ?? 0;
    ratings.push({ query: it.id, ...r });
  }
  const doc: RatingsDoc = { kind: 'rankgate-review-ratings', version: 1, exportId: page.exportId, keyDigest: page.keyDigest, reviewer: `judge ${id} (${REVIEW_PROMPT_VERSION})`, rater: 'judge', ratings };
  const out = values.out ?? 'ratings-judge.json';
  writeFileAtomic(out, JSON.stringify(doc, null, 2) + '\n');
  console.log(`judge, not human: ${id} rated ${ratings.length} blinded pairs (~$${cost.toFixed(4)}); written ${out}: rankgate review import ${out} --key KEY -o review-judge.json (reported, never criterion 4)`);
  return 0;
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    console.log(USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'export') return runExport(rest);
  if (sub === 'import') return runImport(rest);
  if (sub === 'judge') return runJudge(rest);
  throw new UserError(`rankgate review: unknown subcommand '${sub}' (valid: export, import, judge)\n${USAGE}`);
}
