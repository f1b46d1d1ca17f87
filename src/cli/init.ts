/**
 * rankgate init: a starting point in a team's own repository, for its own golden set and search.
 *
 *   npx rankgate init                                   # on a terminal: asks for what is missing
 *   npx rankgate init --golden eval/golden.yaml --corpus help/ [--dir .] [--yes] [--force]
 *   npx rankgate init --golden eval/golden.jsonl --url http://localhost:8080/api/v1/search
 *   npx rankgate init --golden eval/golden.json --module ./search/service.ts
 *
 * Writes (paths relative to --dir, default the current folder):
 *   promptfooconfig.yaml                 the eval: rankgate's provider, loader, assertions and gate hook from
 *                                        node_modules/rankgate, pointed at the team's golden set and search
 *   config/gate.yaml                     floors chosen from the golden set's size, and the regression check
 *   config/routing.yaml                  only when the golden set states routes (no_results, practice_bridge,
 *                                        safety) and the search is rankgate's own
 *   .github/workflows/search-eval.yml    the PR gate, watching the team's own corpus, golden set and config
 *   .gitignore, .env, .npmrc             lines added when missing (node_modules/, .rankgate/, .promptfoo/, results, reports,
 *                                        the review key; promptfoo
 *                                        offline and quiet; Node's ExperimentalWarning off for npx runs), never rewritten
 * Every written file is validated with the same code that reads it later. Existing files are kept unless
 * --force (on a terminal: asked). Exit 0 written, 2 bad input (one line naming the flag or file).
 */
import { existsSync, readFileSync, realpathSync, statSync, mkdirSync, appendFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline/promises';
import yaml from 'js-yaml';
import { UserError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic.ts';
import { didYouMean } from '../util/suggest.ts';
import { ciNodeFor, resolvePromptfoo } from '../util/toolchain.ts';
import { parseCliArgs } from './args.ts';
import * as gateModule from '../gate/floors.ts';
import { loadFloors } from '../gate/floors.ts';
import { loadGoldenFile, type GoldenQuery } from '../golden/index.ts';
import { loadRoutingConfig } from '../search/routing.ts';
import { actionWorkflow, gateConfig, gitlabJob, promptfooConfig, routingConfig, workflow, corpusGlob, type GoldenFigures, type InitPlan } from './init-templates.ts';
import { RANKGATE_VERSION } from '../version.ts';

const USAGE = `usage: rankgate init [--golden PATH] (--corpus PATH | --url URL | --module PATH) [--dir DIR] [--yes] [--force]
                     [--golden-format FORMAT] [--corpus-format markdown|jsonl|beir|nq] [--chunk-size 300]
                     [--action | --ci github|gitlab|none]

  --golden PATH    your golden set (any format rankgate reads: the portal spec's DES-058 JSON, blind-test YAML, gold-set JSONL,
                   BEIR folder, NQ CSV/JSON, TREC topics + qrels)
  --corpus PATH    evaluate rankgate's own hybrid search over your documents (Markdown folder, JSONL, BEIR, NQ)
  --url URL        evaluate your search service over HTTP
  --module PATH    evaluate your search module in-process (exports createSearchService)
  --dir DIR        your repository (default: the current folder); every path above is relative to where you run
  --ci github      the CI that gates pull requests: github (default: .github/workflows/search-eval.yml, the whole
                   workflow), gitlab (.gitlab/rankgate.gitlab-ci.yml, included from .gitlab-ci.yml), none
  --action         GitHub, with rankgate's published Action (uses: rankgate/rankgate@vN): a few lines instead of the
                   whole workflow, fixed by upgrading rankgate
  --yes            never ask (the default when not on a terminal); --force overwrites existing files`;

const CORPUS_FORMATS = ['markdown', 'jsonl', 'beir', 'nq'];

/** rankgate's own root: the nearest folder above this file with rankgate's package.json (src/ or a build of it). */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  let d = from;
  for (;;) {
    const pj = join(d, 'package.json');
    if (existsSync(pj)) {
      try {
        if ((JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === 'rankgate') return d;
      } catch {
        /* not ours */
      }
    }
    const up = dirname(d);
    if (up === d) throw new Error(`rankgate init: cannot find rankgate's package.json above ${from}`);
    d = up;
  }
}

/** Floor for a mean of n binary outcomes: target less the one-sided 95% sampling margin, rounded down to 0.01 (at least 0.05). */
export function floorFor(n: number, target = 0.8): number {
  if (!(n > 0)) return 0;
  const f = target - 1.645 * Math.sqrt((target * (1 - target)) / n);
  return Math.max(0.05, Math.floor(f * 100 + 1e-9) / 100);
}

export function figuresOf(queries: readonly GoldenQuery[]): GoldenFigures {
  const cats = new Map<string, number>();
  for (const x of queries) cats.set(x.category, (cats.get(x.category) ?? 0) + 1);
  return {
    n: queries.length,
    categories: [...cats].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
    languages: [...new Set(queries.map((x) => x.language))].sort(),
    routes: {
      no_results: queries.filter((x) => x.expected_routing === 'no_results').length,
      practice_bridge: queries.filter((x) => x.expected_routing === 'practice_bridge').length,
    },
    safety: queries.filter((x) => x.expect_safety === true).length,
  };
}

/**
 * gate.yaml's validator, whichever this rankgate has: parseFloors(doc, file) (throws a UserError), or the older
 * zod FloorsSchema (no regression keys). Returns the problem, or undefined when the document is accepted.
 */
function gateProblem(doc: unknown): string | undefined {
  const g = gateModule as unknown as {
    parseFloors?: (doc: unknown, file: string) => unknown;
    FloorsSchema?: { safeParse(d: unknown): { success: boolean; error?: { issues: { message: string }[] } } };
  };
  if (g.parseFloors) {
    try {
      g.parseFloors(doc, 'config/gate.yaml');
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }
  const r = g.FloorsSchema?.safeParse(doc);
  return !r || r.success ? undefined : (r.error?.issues[0]?.message ?? 'rejected');
}

/** Which of the regression gate's keys this rankgate's gate.yaml accepts. */
function gateKeys(): InitPlan['gateKeys'] {
  const base = { overall: { recall_at_3: 0.5 } };
  return {
    regression: !gateProblem({ ...base, regression: { baseline: 'b.json', max_drop: 0.02, alpha: 0.05 } }),
    maxErrorRate: !gateProblem({ ...base, max_error_rate: 0 }),
  };
}

const posix = (p: string) => p.split(sep).join('/');

/** A user path (as typed, relative to where init runs) as a path relative to the repo, POSIX separators. */
function repoPath(dir: string, p: string): string {
  const abs = resolve(p);
  const rel = posix(relative(dir, abs));
  return rel === '' ? '.' : rel;
}

function watchPath(rel: string, isDir: boolean): string | undefined {
  if (rel.startsWith('../') || isAbsolute(rel)) return undefined;
  if (rel === '.') return undefined;
  return isDir ? `${rel.replace(/\/+$/, '')}/**` : rel;
}

export interface InitOptions {
  golden: string;
  /** the Node version init runs on (default this process's): the workflow's Node is chosen from it and promptfoo's engines */
  node?: string;
  corpus?: string;
  url?: string;
  module?: string;
  dir: string;
  goldenFormat?: string;
  corpusFormat?: string;
  chunkSize?: number;
  today?: string;
  /** the CI that gates pull requests: the whole GitHub workflow (default), GitHub with the Action, GitLab, none */
  ci?: 'github' | 'action' | 'gitlab' | 'none';
}

export interface PlannedFile {
  path: string;
  content: string;
  /** append the missing lines instead of writing the file */
  append?: boolean;
}

/** Everything init would write, computed and validated without touching the disk. */
export function planInit(o: InitOptions): { plan: InitPlan; files: PlannedFile[]; notes: string[] } {
  const dir = resolve(o.dir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UserError(`--dir ${o.dir}: no such folder, expected your repository's root`);
  const sources = [o.corpus && '--corpus', o.url && '--url', o.module && '--module'].filter(Boolean);
  if (sources.length !== 1) {
    throw new UserError(
      sources.length
        ? `give one search to evaluate, got ${sources.join(' and ')}: --corpus PATH (rankgate's search over your documents), --url URL or --module PATH`
        : 'missing the search to evaluate: --corpus PATH (rankgate\'s search over your documents), --url URL (your HTTP service) or --module PATH (your module)',
    );
  }
  if (!existsSync(o.golden)) throw new UserError(`--golden ${o.golden}: no such file or folder, expected your golden set`);
  const queries = loadGoldenFile(o.golden, o.goldenFormat ? { format: o.goldenFormat } : {});
  if (!queries.length) throw new UserError(`--golden ${o.golden}: no queries, expected at least one golden query`);
  if (o.corpus && !existsSync(o.corpus)) throw new UserError(`--corpus ${o.corpus}: no such file or folder, expected your documents (Markdown folder, JSONL, BEIR, NQ)`);
  if (o.corpusFormat && !CORPUS_FORMATS.includes(o.corpusFormat)) {
    throw new UserError(`--corpus-format ${o.corpusFormat}: unknown format${didYouMean(o.corpusFormat, CORPUS_FORMATS)}, expected one of ${CORPUS_FORMATS.join(', ')}`);
  }
  if (o.url) {
    let u: URL | undefined;
    try {
      u = new URL(o.url);
    } catch {
      /* below */
    }
    if (!u || !/^https?:$/.test(u.protocol)) throw new UserError(`--url ${o.url}: not an http(s) URL, expected e.g. http://localhost:8080/api/v1/search`);
  }
  if (o.module && !existsSync(o.module)) throw new UserError(`--module ${o.module}: no such file, expected your module exporting createSearchService (.ts, .mts, .js, .mjs)`);
  const chunkSize = o.chunkSize ?? 300;
  if (!Number.isInteger(chunkSize) || chunkSize < 20 || chunkSize > 8000) throw new UserError(`--chunk-size ${o.chunkSize}: expected a whole number of tokens between 20 and 8000 (default 300)`);

  const root = packageRoot();
  const pkgInRepo = join(dir, 'node_modules', 'rankgate');
  // run from npx's cache (`npx rankgate@X init` before installing it): the config names where `npm i -D rankgate` puts it
  const npxRun = !existsSync(join(pkgInRepo, 'package.json')) && /[\\/]_npx[\\/]/.test(realpathSync(root));
  const pkg = existsSync(join(pkgInRepo, 'package.json')) || npxRun ? 'node_modules/rankgate' : posix(relative(realpathSync(dir), realpathSync(root))) || '.';

  const figures = figuresOf(queries);
  const routes = figures.routes.no_results + figures.routes.practice_bridge + figures.safety > 0;
  const catFloors = figures.categories.filter(([, n]) => n >= 10).map(([c, n]) => [c, floorFor(n)] as [string, number]);
  const golden = repoPath(dir, o.golden);
  const corpus = o.corpus ? repoPath(dir, o.corpus) : undefined;
  const module = o.module ? (p => (p.startsWith('.') ? p : `./${p}`))(repoPath(dir, o.module)) : undefined;
  const goldenIsDir = statSync(o.golden).isDirectory();
  const watch = [
    watchPath(golden, goldenIsDir),
    ...(o.corpus ? [watchPath(corpus!, statSync(o.corpus).isDirectory())] : []),
    // the module's folder (it imports its neighbours), or the file itself when it sits at the root
    ...(module ? [dirname(module) === '.' ? watchPath(module.slice(2), false) : watchPath(posix(dirname(module)).replace(/^\.\//, ''), true)] : []),
    'config/**',
    'promptfooconfig.yaml',
    'package.json',
    'package-lock.json',
    '.github/workflows/search-eval.yml',
  ].filter((x): x is string => !!x);
  const plan: InitPlan = {
    pkg,
    golden,
    ...(o.goldenFormat ? { goldenFormat: o.goldenFormat } : {}),
    ...(corpus ? { corpus } : {}),
    ...(o.corpusFormat ? { corpusFormat: o.corpusFormat } : {}),
    ...(o.url ? { url: o.url } : {}),
    ...(module ? { module } : {}),
    figures,
    floors: {
      overall: floorFor(figures.n),
      categories: catFloors,
      ...(routes ? { routing: floorFor(figures.n, 0.95) } : {}),
      // in the metric's 0..1 units like the floors: at least one query's worth of Success@3, never under the gate's 0.02
      // (and at most 0.5: a set of one or two queries has no meaningful regression check anyway)
      maxDrop: Math.min(0.5, Math.max(0.02, Math.ceil(100 / figures.n - 1e-9) / 100)),
    },
    gateKeys: gateKeys(),
    routing: routes,
    chunkSize,
    embedder: 'use-lite',
    watch: [...new Set(watch)],
    baseline: 'config/search-baseline.json',
    today: o.today ?? new Date().toISOString().slice(0, 10),
    // the Node the repository's promptfoo (what `npx promptfoo` runs there) starts on
    node: ciNodeFor(resolvePromptfoo(dir), o.node ?? process.version),
  };

  const files: PlannedFile[] = [
    { path: 'promptfooconfig.yaml', content: promptfooConfig(plan) },
    { path: 'config/gate.yaml', content: gateConfig(plan) },
  ];
  if (routes && corpus) {
    // English stopwords and crisis phrases from the demo's rules (shipped with the package), as a start
    let lists = { stopwordsEn: [] as string[], safetyEn: [] as string[] };
    try {
      const d = loadRoutingConfig();
      lists = { stopwordsEn: d.no_results.stopwords.en ?? [], safetyEn: d.safety.lexicon.en ?? [] };
    } catch {
      /* no demo rules in this build: empty lists, to fill in */
    }
    files.push({ path: 'config/routing.yaml', content: routingConfig(plan, lists) });
  }
  const ci = o.ci ?? 'github';
  if (ci === 'github') files.push({ path: '.github/workflows/search-eval.yml', content: workflow(plan) });
  else if (ci === 'action') files.push({ path: '.github/workflows/search-eval.yml', content: actionWorkflow(plan, RANKGATE_VERSION) });
  else if (ci === 'gitlab') {
    files.push({ path: '.gitlab/rankgate.gitlab-ci.yml', content: gitlabJob(plan) });
    // a repository without a pipeline gets one that includes the job; an existing one is never rewritten (said below)
    if (!existsSync(join(dir, '.gitlab-ci.yml'))) files.push({ path: '.gitlab-ci.yml', content: '# written by rankgate init: the search-quality gate (edit freely; add your own jobs below)\ninclude:\n  - local: .gitlab/rankgate.gitlab-ci.yml\n' });
  }
  // eval outputs: what promptfoo, `rankgate gate --comment`, `rankgate eval` (data/eval/results/), the workflow's sweep
  // (sweep-results/) and `rankgate report --html` (docs' names) write; the blind review's unblinding key (review.html ->
  // review.key.json beside it): a first `git add -A` must not commit it for the reviewers to read
  files.push({
    path: '.gitignore',
    append: true,
    content:
      '# rankgate: installed packages, the local index, promptfoo history, eval outputs, reports, the blind review\'s key\n' +
      'node_modules/\n.rankgate/\n.promptfoo/\nresults.jsonl\nresults.jsonl.rankgate.jsonl\nresults.rankgate.jsonl\nresults.json\ncomment.md\n' +
      'data/eval/results/\nsweep-results/\nreport.html\nsweep.html\n*.key.json\n',
  });
  files.push({
    path: '.env',
    append: true,
    content:
      '# rankgate: promptfoo offline and quiet (read by promptfoo from this folder; the environment wins)\nPROMPTFOO_DISABLE_TELEMETRY=1\nPROMPTFOO_DISABLE_UPDATE=1\nPROMPTFOO_DISABLE_SHARING=1\nPROMPTFOO_DISABLE_RUNTIME_WARNINGS=1\nPROMPTFOO_DISABLE_DEBUG_LOG=1\n# a query failing its own assertions does not fail the run: the gate floors decide\nPROMPTFOO_PASS_RATE_THRESHOLD=0\n' +
      '# promptfoo\'s history (evals, `npx promptfoo view`) in .promptfoo/ here, the folder `rankgate eval` uses: one history\nPROMPTFOO_CONFIG_DIR=.promptfoo\n',
  });
  files.push({ path: '.npmrc', append: true, content: '# rankgate: silence Node\'s ExperimentalWarning (undici\'s DecompressInterceptor, printed by promptfoo on every eval) in npx/npm runs\nnode-options=${NODE_OPTIONS?} --disable-warning=ExperimentalWarning\n' });

  for (const f of files) validate(f);

  const notes: string[] = [];
  if (npxRun) notes.push(`rankgate ran from npx's cache: the config reaches it at node_modules/rankgate; install it in ${o.dir}: npm i -D rankgate@${RANKGATE_VERSION} (and promptfoo, docs/adopting.md#install)`);
  else if (pkg !== 'node_modules/rankgate') notes.push(`rankgate is not in ${o.dir}/node_modules: the config reaches it at ${pkg}; install it as a dev dependency (npm i -D rankgate) and run init again for paths that work on every clone`);
  if (ci === 'gitlab' && existsSync(join(dir, '.gitlab-ci.yml')) && !/rankgate\.gitlab-ci\.yml/.test(readFileSync(join(dir, '.gitlab-ci.yml'), 'utf8')))
    notes.push('add the job to your pipeline: in .gitlab-ci.yml, include:\n    - local: .gitlab/rankgate.gitlab-ci.yml');
  const nonEn = figures.languages.filter((l) => l !== 'en');
  if (corpus && nonEn.length) notes.push(`your golden set has ${nonEn.join(', ')} queries; the default embedder (use-lite) is English-only, so their vector channel is weak: see the embedders in rankgate's docs`);
  if (figures.n < 50) notes.push(`${figures.n} queries: one query moves Success@3 by ${(1 / figures.n).toFixed(2)}; floors stay low until the set grows (50+ queries gives floors near 0.70)`);
  const outside = [golden, corpus].filter((p): p is string => !!p && p.startsWith('../'));
  if (outside.length) notes.push(`${outside.join(', ')} lie outside ${o.dir}: the workflow cannot watch them; move them into the repository`);
  if (module && /\.ts$/.test(module)) notes.push(`${module}: a TypeScript module runs through tsx; if it fails with "Cannot require() ES Module ... in a cycle", rename it to .mts`);
  return { plan, files, notes };
}

function validate(f: PlannedFile): void {
  if (f.append) return;
  const doc = yaml.load(f.content, { schema: yaml.CORE_SCHEMA });
  if (f.path === 'config/gate.yaml') {
    const problem = gateProblem(doc);
    if (problem) throw new Error(`rankgate init wrote a gate.yaml its own gate rejects: ${problem}`);
  }
  if (!doc || typeof doc !== 'object') throw new Error(`rankgate init: ${f.path} is not a YAML mapping`);
}

/** Lines of `add` missing from the existing text (comments are only added with a new line below them). */
function missingLines(existing: string, add: string): string {
  const have = new Set(existing.split(/\r?\n/).map((l) => l.trim()));
  const lines = add.split('\n').filter(Boolean);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.startsWith('#')) continue;
    const key = l.includes('=') ? l.split('=')[0]! + '=' : l;
    if (have.has(l) || [...have].some((h) => key.endsWith('=') && h.startsWith(key))) continue;
    const comment = lines[i - 1]?.startsWith('#') && !out.includes(lines[i - 1]!) ? [lines[i - 1]!] : [];
    out.push(...comment, l);
  }
  return out.length ? out.join('\n') + '\n' : '';
}

async function ask(rl: ReturnType<typeof createInterface>, question: string): Promise<string> {
  return (await rl.question(question)).trim();
}

export async function run(argv: string[]): Promise<number> {
  const { values: v, positionals } = parseCliArgs(
    argv,
    {
      golden: { type: 'string' },
      corpus: { type: 'string' },
      url: { type: 'string' },
      module: { type: 'string' },
      dir: { type: 'string' },
      yes: { type: 'boolean', short: 'y', default: false },
      force: { type: 'boolean', default: false },
      'golden-format': { type: 'string' },
      'corpus-format': { type: 'string' },
      'chunk-size': { type: 'string' },
      ci: { type: 'string' },
      action: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    USAGE,
    false,
  );
  void positionals;
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  const interactive = !v.yes && process.stdin.isTTY === true && process.stderr.isTTY === true;
  const o: InitOptions = {
    golden: v.golden ?? '',
    ...(v.corpus ? { corpus: v.corpus } : {}),
    ...(v.url ? { url: v.url } : {}),
    ...(v.module ? { module: v.module } : {}),
    dir: v.dir ?? '.',
    ...(v['golden-format'] ? { goldenFormat: v['golden-format'] } : {}),
    ...(v['corpus-format'] ? { corpusFormat: v['corpus-format'] } : {}),
  };
  if (v.ci !== undefined && !['github', 'gitlab', 'none'].includes(v.ci)) throw new UserError(`--ci ${v.ci}: expected github, gitlab or none${didYouMean(v.ci, ['github', 'gitlab', 'none'])}`);
  if (v.action && v.ci !== undefined && v.ci !== 'github') throw new UserError(`--action is GitHub's: it cannot go with --ci ${v.ci}`);
  o.ci = v.action ? 'action' : ((v.ci as InitOptions['ci']) ?? 'github');
  if (v['chunk-size'] !== undefined) {
    const n = Number(v['chunk-size']);
    if (!/^\d+$/.test(v['chunk-size'])) throw new UserError(`--chunk-size ${v['chunk-size']}: expected a whole number of tokens (default 300)`);
    o.chunkSize = n;
  }
  const rl = interactive ? createInterface({ input: process.stdin, output: process.stderr }) : undefined;
  try {
    if (rl) {
      process.stderr.write('rankgate init: a search-quality eval and CI gate for your own golden set (Enter keeps [the default]).\n');
      if (!o.golden) o.golden = await ask(rl, 'Golden set (file or folder): ');
      if (!o.corpus && !o.url && !o.module) {
        const kind = (await ask(rl, 'What to evaluate: [c]orpus with rankgate\'s hybrid search, your HTTP [u]rl, or your [m]odule? [c] ')) || 'c';
        if (/^u/i.test(kind)) o.url = await ask(rl, 'Search URL (e.g. http://localhost:8080/api/v1/search): ');
        else if (/^m/i.test(kind)) o.module = await ask(rl, 'Module path (exports createSearchService): ');
        else o.corpus = await ask(rl, 'Corpus (Markdown folder, JSONL, BEIR folder, NQ JSON): ');
      }
    }
    if (!o.golden) throw new UserError(rl ? 'no golden set given: rankgate init needs your golden set (a file or folder)' : `missing --golden PATH: your golden set (not on a terminal, so nothing is asked)\n${USAGE.split('\n')[0]}`);
    const { plan, files, notes } = planInit(o);
    const dir = resolve(o.dir);
    const clash = files.filter((f) => !f.append && existsSync(join(dir, f.path))).map((f) => f.path);
    if (clash.length && !v.force) {
      const ok = rl ? /^y/i.test(await ask(rl, `Overwrite ${clash.join(', ')}? [y/N] `)) : false;
      if (!ok) throw new UserError(`${clash.join(', ')} already exist in ${o.dir}; nothing written (--force overwrites them)`);
    }
    const written: string[] = [];
    for (const f of files) {
      const abs = join(dir, f.path);
      mkdirSync(dirname(abs), { recursive: true });
      if (f.append) {
        const add = missingLines(existsSync(abs) ? readFileSync(abs, 'utf8') : '', f.content);
        if (!add) continue;
        const prev = existsSync(abs) ? readFileSync(abs, 'utf8') : '';
        appendFileSync(abs, (prev && !prev.endsWith('\n') ? '\n' : '') + add);
        written.push(`${f.path} (added ${add.split('\n').filter((l) => l && !l.startsWith('#')).length} line(s))`);
      } else {
        writeFileAtomic(abs, f.content);
        written.push(f.path);
      }
    }
    // read back with the readers that will use them
    loadFloors(join(dir, 'config/gate.yaml'));
    if (files.some((f) => f.path === 'config/routing.yaml')) loadRoutingConfig(join(dir, 'config/routing.yaml'));

    const f = plan.figures;
    const what = plan.corpus ? `rankgate's hybrid search over ${plan.corpus}` : plan.url ? `your service at ${plan.url}` : `your module ${plan.module}`;
    const out = [
      `rankgate init: ${f.n} golden queries in ${plan.golden} (${f.categories.length} categor${f.categories.length === 1 ? 'y' : 'ies'}), evaluating ${what}`,
      ...written.map((w) => `  wrote ${w}`),
      `  workflow Node: ${plan.node.major} (${plan.node.why})`,
      `  floors: overall Success@3 (DES-058 Recall@3) >= ${plan.floors.overall.toFixed(2)}${plan.floors.categories.length ? `, ${plan.floors.categories.length} categor${plan.floors.categories.length === 1 ? 'y' : 'ies'}` : ''}${plan.floors.routing !== undefined ? `, routing accuracy >= ${plan.floors.routing.toFixed(2)}` : ''}`,
      ...notes.map((n) => `  note: ${n}`),
      '',
      'next:',
      ...(o.dir !== '.' ? [`  cd ${o.dir}`] : []),
      '  npx promptfoo eval -o results.jsonl    # exit 0 pass, 1 a floor fails, 2 bad input or broken setup',
      '  npx rankgate gate results.jsonl        # the verdict with the per-category table',
      plan.gateKeys.regression
        ? `  npx rankgate gate results.jsonl --update-baseline   # writes ${plan.baseline}; commit it: PRs are compared with it`
        : `  npx rankgate gate results.jsonl --update-baseline --baseline ${plan.baseline}   # commit it: PRs are compared with it`,
      '  npx promptfoo view -y                  # the matrix in a browser (-n: serve without opening)',
    ];
    console.log(out.join('\n'));
    return 0;
  } finally {
    rl?.close();
  }
}

export { corpusGlob };
