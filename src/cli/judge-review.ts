/**
 * `rankgate judge review export | import`: the review queue for people (docs/judgments.md "The review queue").
 * Argument parsing, reading and writing only: what is pending, what the page shows, and what a decision does are
 * src/review/queue.ts; the page src/report/html/queue.ts.
 */
import { existsSync } from 'node:fs';
import { UserError } from '../errors.ts';
import { detectFormat, loadGolden } from '../golden/index.ts';
import { readCorpus } from '../ingest/readers.ts';
import { readJudgments, writeJudgments, type Judgment } from '../judgments/file.ts';
import { readGoldLines, type GoldLines } from '../judgments/goldlines.ts';
import type { AgreementSummary } from '../metrics/agreement.ts';
import { resultRows } from '../results/stream.ts';
import { applyDecisions, buildQueue, parseDecisions, QUEUE_TEXT_CHARS, type ImportResult } from '../review/queue.ts';
import { renderQueuePage } from '../report/html/queue.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { readRegularFileSync } from '../util/regular-file.ts';
import { safeTerminal } from '../util/terminal.ts';
import { parseCliArgs, parseIntFlag } from './args.ts';

export const USAGE = `usage: rankgate judge review export [--judgments FILE] [--golden FILE...] [--results FILE...] [--corpus PATH]
                                   [--limit N] [--seed S] [--chars N] -o queue.html
       rankgate judge review import DECISIONS.json... [--judgments FILE] [--golden FILE...] [--seed S] [--resamples N]
  export: one self-contained page (no server, no network) listing, query by query, the (query, document) pairs nobody
    reviewed: the model's (llm) and the logs' (bootstrap) labels of the judgments file without a chair label, and the
    documents of the source: bootstrap entries of the gold-set JSONL files named by --golden. A person grades each 0-3;
    the grade the label gives is never shown (blind assessment). Texts: the chunk a label names, from --corpus; else
    the hit in --results; else the document's opening in --corpus; cut at --chars (default ${QUEUE_TEXT_CHARS}). --limit N: a
    seeded sample (--seed, default 42). The query texts come from --golden (or --results).
  import: each grade becomes a source: chair label in --judgments (was: the label it replaces; reviewer; time), and a
    bootstrap entry whose documents are all graded is promoted to source: chair in its gold-set JSONL file (its id kept,
    no other line rewritten). Prints what was accepted (the person's grade = the label's), changed, rejected (0 where
    the label said relevant), and the agreement of the model's labels with the person: Cohen's weighted kappa (linear,
    0-3) with a bootstrap 95% CI (src/metrics/agreement.ts, as rankgate judge agreement).`;

function readText(path: string, what: string): string {
  try {
    return readRegularFileSync(path, 'utf8');
  } catch (e) {
    throw new UserError(`${path}: cannot read the ${what} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

async function runExport(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      judgments: { type: 'string' },
      golden: { type: 'string', multiple: true },
      results: { type: 'string', multiple: true },
      corpus: { type: 'string' },
      limit: { type: 'string' },
      seed: { type: 'string' },
      chars: { type: 'string' },
      out: { type: 'string', short: 'o' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (positionals.length) throw new UserError(`judge review export: unexpected argument ${positionals[0]}\n${USAGE}`);
  if (!values.out) throw new UserError(`judge review export: -o queue.html is required\n${USAGE}`);
  if (!values.judgments && !values.golden?.length) throw new UserError(`judge review export: nothing to review: give --judgments FILE and/or --golden FILE\n${USAGE}`);
  const labels: Judgment[] = values.judgments ? await readJudgments(values.judgments) : [];
  const golden = (values.golden ?? []).map((g) => {
    const f = loadGolden(g);
    return { path: g, format: f.format, queries: f.queries };
  });
  const corpus = values.corpus ? await readCorpus(values.corpus) : undefined;
  const files = values.results ?? [];
  const rows = (function* () {
    for (const f of files) yield* resultRows(f);
  })();
  const limit = parseIntFlag('limit', values.limit, 1);
  const q = buildQueue({
    labels,
    golden,
    rows,
    ...(corpus ? { corpus } : {}),
    ...(limit !== undefined ? { limit } : {}),
    seed: parseIntFlag('seed', values.seed, 0) ?? 42,
    chars: parseIntFlag('chars', values.chars, 100, 20000) ?? QUEUE_TEXT_CHARS,
  });
  writeFileAtomic(values.out, renderQueuePage(q.page), { mode: 0o644 });
  const items = q.page.items;
  const lines = [
    `review queue: ${values.out} (${items.length} documents for ${new Set(items.map((i) => i.query)).size} queries; export ${q.page.exportId})`,
    `  pending: ${q.pending} pairs (${q.fromLabels} from labels of ${values.judgments ?? 'no judgments file'}, ${q.fromEntries} from bootstrap entries of ${values.golden?.join(', ') ?? 'no golden set'})${limit !== undefined && limit < q.pending ? `; a sample of ${limit} (seed ${parseIntFlag('seed', values.seed, 0) ?? 42})` : ''}`,
  ];
  if (q.notJsonl) lines.push(`  ${q.notJsonl} bootstrap entries of golden sets in other formats are not in the queue (promotion writes gold-set JSONL): convert them with rankgate golden convert --to jsonl`);
  if (q.leftOut.length) lines.push(`  left out: ${q.leftOut.length} (${q.leftOut.slice(0, 3).map((l) => `${l.query} ${l.doc}: ${l.why}`).join('; ')}${q.leftOut.length > 3 ? '; ...' : ''})`);
  lines.push(`next: send ${values.out} to the reviewer (it opens offline in any browser), then rankgate judge review import decisions-*.json${values.judgments ? ` --judgments ${values.judgments}` : ''}${values.golden ? values.golden.map((g) => ` --golden ${g}`).join('') : ''}`);
  console.log(lines.map(safeTerminal).join('\n'));
  return 0;
}

const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const f3 = (x: number | null | undefined) => (x === null || x === undefined ? '–' : x.toFixed(3));

function agreementLine(who: string, a: AgreementSummary | null): string | undefined {
  if (!a) return undefined;
  const kappa = a.kappa === null ? 'undefined (every grade the same on one side)' : `${f3(a.kappa)}${a.ci95 ? ` (95% CI [${f3(a.ci95[0])}, ${f3(a.ci95[1])}])` : ''}`;
  return `  ${who} vs person: weighted kappa (linear, 0-3) ${kappa} · accuracy ${f3(a.accuracy)} · n ${a.n}`;
}

export function importText(r: ImportResult, judgments: string | undefined): string[] {
  const o = r.outcomes;
  const lines = [`judge review import: ${count(r.decisions, 'decision')} by ${r.reviewers.join(', ')}`];
  if (r.chair.length)
    lines.push(
      `  ${judgments}: ${count(r.chair.length, 'chair label')} (${o.labels.accepted} accepted, ${o.labels.changed} changed, ${o.labels.rejected} rejected; each keeps the label it replaced in 'was')`,
    );
  for (const l of [agreementLine('model (llm)', r.agreement.llm), agreementLine('bootstrap', r.agreement.bootstrap)]) if (l) lines.push(l);
  for (const g of r.golden)
    lines.push(
      `  ${g.path}: ${count(g.promoted.length, 'entry', 'entries')} promoted to chair (ids kept, no other line rewritten)${g.promoted.length ? `: ${g.promoted.slice(0, 5).join(', ')}${g.promoted.length > 5 ? ', ...' : ''}` : ''}` +
        `${g.partial.length ? `; ${g.partial.length} left bootstrap until every document is graded (${g.partial.slice(0, 3).map((p) => `${p.id} ${p.decided}/${p.of}`).join(', ')})` : ''}` +
        `${g.noneRelevant.length ? `; ${g.noneRelevant.length} left bootstrap: no document graded 2 or 3 (${g.noneRelevant.slice(0, 3).join(', ')}): fix or remove by hand` : ''}`,
    );
  if (o.entries.accepted + o.entries.changed + o.entries.rejected)
    lines.push(`  bootstrap entries' documents: ${o.entries.accepted} accepted, ${o.entries.changed} changed, ${o.entries.rejected} rejected`);
  if (r.unmatched.length)
    lines.push(`  ${r.unmatched.length} decisions matched nothing pending in the files given (${r.unmatched.slice(0, 3).map((u) => `${u.query} ${u.doc}`).join(', ')}): pass the --judgments / --golden files the queue was exported from`);
  return lines;
}

async function runImport(argv: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(
    argv,
    {
      judgments: { type: 'string' },
      golden: { type: 'string', multiple: true },
      seed: { type: 'string' },
      resamples: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!positionals.length) throw new UserError(`judge review import: expected one or more decisions files downloaded from the review queue page\n${USAGE}`);
  if (!values.judgments && !values.golden?.length) throw new UserError(`judge review import: give --judgments FILE and/or --golden FILE: where the decisions go\n${USAGE}`);
  const decisions = positionals.map((path) => ({ path, doc: parseDecisions(readText(path, 'decisions file downloaded from the review queue page'), path) }));
  const labels = values.judgments && existsSync(values.judgments) ? await readJudgments(values.judgments) : [];
  // only gold-set JSONL files hold entries an import can promote; the others gave the export its query texts
  const golden: GoldLines[] = (values.golden ?? []).filter((g) => detectFormat(g) === 'jsonl').map((g) => readGoldLines(g));
  const r = applyDecisions({ decisions, labels, golden, seed: parseIntFlag('seed', values.seed, 0) ?? 42, resamples: parseIntFlag('resamples', values.resamples, 0) ?? 2000 });
  if (!r.chair.length && !r.golden.some((g) => g.changed) && r.unmatched.length === r.decisions)
    throw new UserError(`${positionals[0]}: none of the ${r.decisions} decisions matches a pending label or bootstrap entry of ${[values.judgments, ...(values.golden ?? [])].filter(Boolean).join(', ')}: nothing written`);
  // every output computed and checked: write each atomically
  if (r.chair.length) writeJudgments(values.judgments!, r.labels);
  for (const g of r.golden) if (g.changed) writeFileAtomic(g.path, g.text);
  console.log(importText(r, values.judgments).map(safeTerminal).join('\n'));
  return 0;
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'export') return runExport(rest);
  if (sub === 'import') return runImport(rest);
  if (sub === undefined || sub === '--help' || sub === '-h') {
    console.log(USAGE);
    return sub === undefined ? 2 : 0;
  }
  throw new UserError(`review: unknown subcommand '${sub}' (valid: export, import)\n${USAGE}`);
}
