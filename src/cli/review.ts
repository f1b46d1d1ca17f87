/**
 * `rankgate review export | import | judge`: the blind human review of criterion 4 of the shipping criteria
 * (docs/review.md). Argument parsing and file writing only: the blinding, the checks, the statistics and the evidence
 * are src/review, the page src/report/html/review.ts.
 */
import { basename, dirname, join, relative, sep } from 'node:path';
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { pickColumn } from '../results/read.ts';
import { readResultsFile, resultRows } from '../results/stream.ts';
import { buildReviewExport } from '../review/export.ts';
import { deriveReview } from '../review/import.ts';
import { judgeMac, judgeSetDigest, parseReviewKey } from '../review/key.ts';
import { REVIEW_ENV, sealResult } from '../review/evidence.ts';
import { DEFAULT_REVIEW_HITS, DEFAULT_REVIEW_QUERIES, MIN_PREFERENCE, REVIEW_FORMAT, REVIEW_TEXT_CHARS, type PreferenceStat, type RatingsDoc, type ReviewKey, type ReviewPageData, type ReviewResult } from '../review/types.ts';
import { parseReviewAnswer, reviewPairPrompt, REVIEW_PROMPT_VERSION } from '../judge/review-prompt.ts';
import { renderReviewPage } from '../report/html/review.ts';
import { parseCliArgs, parseIntFlag } from './args.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { sealKey, SEAL_KEY_ENV } from '../util/seal.ts';
import { safeTerminal } from '../util/terminal.ts';

const USAGE = `usage: rankgate review export RESULTS --baseline COL --candidate COL [--queries N] [--seed S] [--hits K]
                              [--skip-identical] [--reviewers NAME,NAME...] -o review.html [--key review.key.json]
       rankgate review import RATINGS.json [MORE.json ...] [--key review.key.json] [-o review-result.json]
                              [--seed S] [--json]
       rankgate review judge review.html --judge PROVIDER_ID [--key review.key.json] [-o ratings-judge.json]
  export: one self-contained page (no server, no network) with, per sampled query, the top K (default ${DEFAULT_REVIEW_HITS}) results
    of the two columns (a label or a 0-based index, as --column elsewhere) as lists "X" and "Y", the side of each
    drawn per query from a secret, every result's text cut alike (${REVIEW_TEXT_CHARS} characters); --queries N (default ${DEFAULT_REVIEW_QUERIES},
    capped at the queries both columns answered with a ranking) sampled with --seed (default 42). Pairs whose two
    lists are the same are counted; --skip-identical leaves them off the page (import counts them as no preference).
    --reviewers names who must rate (import refuses other names and says who is missing). The key (the unblinding,
    written 0600) goes to --key, default beside the page (review.html -> review.key.json): keep it from the reviewers.
  import: checks every ratings file against the key (same export, key unedited, every item rated once, ratings 1-5,
    one file per reviewer, a judge's ratings never as human), unblinds, and reports the candidate's mean preference
    (candidate - baseline, points on the 1-5 scale) with a bootstrap 95% CI per reviewer and pooled, and
    Krippendorff's alpha (interval) with two or more reviewers. Writes -o (default review-result.json, atomically)
    naming the key and ratings files it was computed from (sealed with ${SEAL_KEY_ENV} when set): pass it to
    rankgate eval / compare --results as --review FILE (or ${REVIEW_ENV}); criterion 4 re-derives it from those files
    and becomes pass (pooled mean >= +${MIN_PREFERENCE}) or fail.
  judge: a stand-in: a promptfoo chat provider (e.g. openai:chat:gpt-4.1-mini) rates the page's blinded pairs as a
    reviewer would and writes a ratings file marked "rater": "judge" with a MAC of the export's key (the key records
    its digest); import reports it as "judge, not human", on its own, and it never counts as criterion 4.`;

/** review.html -> review.key.json (beside the page). */
export function defaultKeyPath(out: string): string {
  return join(dirname(out), `${basename(out).replace(/\.html?$/i, '')}.key.json`);
}

/** The key is a secret: 0600 whatever the umask. The page and ratings go to people: 0644. */
const KEY_MODE = 0o600;
const SHARED_MODE = 0o644;

const signed = (x: number, d = 2) => `${x >= 0 ? '+' : ''}${x.toFixed(d)}`;
const statLine = (s: PreferenceStat) =>
  `${signed(s.preference)} points (95% CI [${signed(s.ci95[0])}, ${signed(s.ci95[1])}]) · baseline ${s.baselineMean.toFixed(2)}, candidate ${s.candidateMean.toFixed(2)} · candidate better/same/worse on ${s.wins}/${s.ties}/${s.losses} queries${s.identical ? ` (${s.identical} identical pairs as no preference)` : ''}`;

export function reviewText(r: ReviewResult, out: string, sealed: boolean): string {
  const who = r.rater === 'judge' ? 'judge, not human' : 'human blind review';
  const skipped = r.pooled.identical;
  const lines = [
    `${who}: '${r.candidate.label}' (candidate) vs '${r.baseline.label}' (baseline), ${r.queries} queries${skipped ? ` + ${skipped} identical pairs left off the page, counted as no preference (0)` : ''}, export ${r.exportId}`,
    ...r.reviewers.map((x) => `  ${x.name.padEnd(16)} ${statLine(x)}`),
    `  ${'pooled'.padEnd(16)} ${statLine(r.pooled)} · ${r.pooled.reviewers} reviewer(s)`,
    r.agreement
      ? `  agreement: ${r.agreement.statistic}: ${r.agreement.alpha === null ? 'undefined (no variation in the preferences)' : r.agreement.alpha.toFixed(3)} over ${r.agreement.units} queries`
      : '  agreement: one reviewer (needs two or more)',
    r.rater === 'judge'
      ? `criterion 4: not counted (a judge's ratings are a stand-in, never the human review); written ${out}`
      : `criterion 4 (human blind review prefers the candidate by >= ${MIN_PREFERENCE} points): ${r.meetsThreshold ? 'PASS' : 'FAIL'} (pooled mean ${signed(r.pooled.preference)}); written ${out} (${sealed ? `sealed with ${SEAL_KEY_ENV}` : `unkeyed: the verdict re-derives it from the key and ratings files it names, an accident check; set ${SEAL_KEY_ENV} for a keyed seal`}): pass it as --review ${out}`,
  ];
  // column labels and reviewer names come from the ratings files: each line printed as one (src/util/terminal.ts)
  return lines.map(safeTerminal).join('\n') + '\n';
}

function readText(path: string, what: string): string {
  try {
    return readRegularFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the ${what} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** A path relative to the result's folder, with forward slashes (what the result records; the verdict resolves it). */
const relativeTo = (out: string, p: string) => relative(dirname(out), p).split(sep).join('/') || basename(p);

async function runExport(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      baseline: { type: 'string' },
      candidate: { type: 'string' },
      queries: { type: 'string' },
      seed: { type: 'string' },
      hits: { type: 'string' },
      'skip-identical': { type: 'boolean', default: false },
      reviewers: { type: 'string' },
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
  const reviewers = values.reviewers === undefined ? undefined : values.reviewers.split(',').map((s) => s.trim());
  if (reviewers && reviewers.some((n) => !n)) throw new UserError(`review export: --reviewers: expected names separated by commas, got ${JSON.stringify(values.reviewers)}`);
  const file = positionals[0]!;
  const keyPath = values.key ?? defaultKeyPath(values.out);
  if (keyPath === values.out) throw new UserError(`review export: --key ${keyPath} is the page itself: the key must be a separate file`);
  const parsed = readResultsFile(file);
  const baseline = pickColumn(parsed, values.baseline, file);
  const candidate = pickColumn(parsed, values.candidate, file);
  const ex = buildReviewExport(file, parsed, resultRows(file), {
    baseline,
    candidate,
    seed,
    skipIdentical: values['skip-identical'],
    ...(queries ? { queries } : {}),
    ...(hits ? { hits } : {}),
    ...(reviewers ? { reviewers } : {}),
  });
  const { page, key } = ex;
  // the key first: a page without its key could never be imported
  writeFileAtomic(keyPath, JSON.stringify(key, null, 2) + '\n', { mode: KEY_MODE });
  writeFileAtomic(values.out, renderReviewPage(page), { mode: SHARED_MODE });
  const left = key.leftOut;
  const same = ex.identical;
  console.log(
    [
      `review page: ${values.out} (${page.items.length} queries of the ${key.answered} both columns answered with a ranking${queries && queries > key.answered ? `; --queries ${queries} capped` : ''}; top ${key.hits} results per list, every text cut at ${key.chars} characters; seed ${seed})`,
      left.length
        ? `left out, no ranking in a column: ${left.length} (${left.slice(0, 10).map((l) => `${l.id}: ${l.reason}`).join('; ')}${left.length > 10 ? `; ... ${left.length - 10} more in the key` : ''})`
        : 'left out: none (every query both columns have was answered with a ranking)',
      same
        ? `identical: ${same} of ${ex.sampled} pairs are the same list: ${key.skippedIdentical.length ? `left off the page (--skip-identical), counted as no preference at import` : `the review can measure at most ${ex.sampled - same} (--skip-identical leaves them out, counted as no preference)`}`
        : `identical: none of the ${ex.sampled} pairs is the same list`,
      `key: ${keyPath} (the unblinding, written 0600: keep it from the reviewers and out of the repository; rankgate review import needs it)`,
      `export ${key.exportId}: '${candidate.label}' (candidate) vs '${baseline.label}' (baseline)${key.reviewers ? `; reviewers: ${key.reviewers.join(', ')}` : ''}`,
      `next: send ${basename(values.out)} to each reviewer (it opens offline in any browser), then rankgate review import ratings-*.json --key ${keyPath}`,
    ]
      .map(safeTerminal)
      .join('\n'),
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
  const out = values.out ?? 'review-result.json';
  const seal = sealKey();
  const key = { path: keyPath, file: relativeTo(out, keyPath), text: readText(keyPath, 'review key file written by `rankgate review export`') };
  const ratings = positionals.map((path) => ({ path, file: relativeTo(out, path), text: readText(path, 'ratings file downloaded from the review page') }));
  const result = sealResult(deriveReview({ key, ratings, seed }), seal);
  writeFileAtomic(out, JSON.stringify(result, null, 2) + '\n');
  console.log((values.json ? JSON.stringify(result, null, 2) : reviewText(result, out, !!seal)).replace(/\n$/, ''));
  return 0;
}

/** The data of an exported page (the JSON the page carries). */
export function readReviewPage(path: string): ReviewPageData {
  const html = readText(path, 'review page');
  const m = /<script type="application\/json" id="review-data">([\s\S]*?)<\/script>/.exec(html);
  let d: ReviewPageData | undefined;
  try {
    d = m ? (JSON.parse(m[1]!) as ReviewPageData) : undefined;
  } catch {
    d = undefined;
  }
  if (!d || d.kind !== 'rankgate-review-page' || !Array.isArray(d.items)) throw new UserError(`${path}: not a page written by rankgate review export (no review data in it)`);
  if (d.version !== REVIEW_FORMAT) throw new UserError(`${path}: field 'version': ${JSON.stringify(d.version)} is not this rankgate's page format (${REVIEW_FORMAT}): export the review again`);
  return d;
}

async function runJudge(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      judge: { type: 'string' },
      key: { type: 'string' },
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
  const pagePath = positionals[0]!;
  const page = readReviewPage(pagePath);
  // the key: the judge's ratings carry a MAC of its secret, and the key records their digest
  const keyPath = values.key ?? defaultKeyPath(pagePath);
  const { key, digest } = parseReviewKey(readText(keyPath, 'review key file written by `rankgate review export` (the judge signs its ratings with it)'), keyPath);
  if (key.exportId !== page.exportId || digest !== page.keyDigest)
    throw new UserError(`${keyPath}: field 'exportId': this key is not the key of ${pagePath} (export ${page.exportId}): pass the page's own key with --key`);
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
      throw new UserError(`${pagePath}: item ${it.item}: the judge ${id} failed: ${(e as Error).message.split('\n')[0]}; no ratings written`);
    }
    const r = parseReviewAnswer(answer.text);
    if (!r)
      throw new UserError(
        `${pagePath}: item ${it.item}: the judge ${id} answered ${JSON.stringify((answer.text ?? '').slice(0, 120))}, not exactly one "X=<1-5> Y=<1-5>"; no ratings written`,
      );
    cost += answer.costUsd ?? 0;
    ratings.push({ item: it.item, ...r });
  }
  const reviewer = `judge ${id} (${REVIEW_PROMPT_VERSION})`;
  const doc: RatingsDoc = { kind: 'rankgate-review-ratings', version: REVIEW_FORMAT, exportId: page.exportId, keyDigest: page.keyDigest, reviewer, rater: 'judge', ratings, mac: judgeMac(key.secret, { exportId: page.exportId, reviewer, ratings }) };
  const out = values.out ?? 'ratings-judge.json';
  // the key records the set first (re-read: another judge run may have appended since), then the ratings are written
  const now = parseReviewKey(readText(keyPath, 'review key file'), keyPath).key;
  const d = judgeSetDigest(key.exportId, ratings);
  const judged: ReviewKey = { ...now, judged: [...new Set([...(now.judged ?? []), d])] };
  writeFileAtomic(keyPath, JSON.stringify(judged, null, 2) + '\n', { mode: KEY_MODE });
  writeFileAtomic(out, JSON.stringify(doc, null, 2) + '\n', { mode: SHARED_MODE });
  console.log(
    safeTerminal(
      `judge, not human: ${id} rated ${ratings.length} blinded pairs (~$${cost.toFixed(4)}); written ${out} (its set recorded in ${keyPath}): rankgate review import ${out} --key ${keyPath} -o review-judge.json (reported, never criterion 4)`,
    ),
  );
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
