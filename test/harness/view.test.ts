/**
 * In a real browser (Debian's /usr/bin/chromium driven by playwright-core): `promptfoo view` on the default eval
 * (the README's first command, shared with the default-config test) and on the quick sweep (promptfooconfig.sweep.ts,
 * 7 columns, three categories of the demo golden set on the demo index), and rankgate's own HTML report of that sweep.
 *
 * DOM checks: each column's headline "% passing" equals the success rate computed from the results JSON; the eval's
 * title (its description) starts with the gate's verdict; an output cell shows a ranked list with titles (not JSON),
 * and a missed query names the expected document; "#1 Recall@3" is visible in the column header and the row without
 * "Show more..."; only the query is a variable column; the metrics dialog shows avg_recall_at_3 as its value, not
 * "0.00%"; the report opens with the verdict block, has exactly one chart per chart section, every chart drawn, no
 * console errors, and no horizontal page overflow at 390 px (a phone).
 * Every wait is on the page's state (a selector, network idle, the report's data-charts-drawn attribute), never a
 * fixed time, with generous ceilings: the checks hold on a loaded 2-core machine.
 * Screenshots go to $RANKGATE_TEST_OUTPUT (.ci/run sets it to test-output/, gitignored, kept as CI artifacts), else to
 * a folder in the system temp dir: `npm test` writes nothing into the repository. Their paths are printed as test
 * diagnostics (`node scripts/run-tests.mjs view --reporter spec`) and listed in view-artifacts.txt beside them.
 * Skips when Chromium is missing (.ci/setup-chromium.sh installs it).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PROMPTFOO_BIN, ROOT, defaultEvalRun, demoIndexInto, rankgate, runNode, tempDir } from './helpers.ts';

const CHROMIUM = process.env.RANKGATE_CHROMIUM ?? '/usr/bin/chromium';
const SHOTS = resolve(process.env.RANKGATE_TEST_OUTPUT ?? join(tmpdir(), 'rankgate-test-output'));
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const ARTIFACTS = join(SHOTS, 'view-artifacts.txt');
/** The ceiling of every wait on the page's state (a loaded 2-core machine takes long; a state that never comes fails). */
const WAIT = 180_000;
/** A path or figure worth seeing: a test diagnostic, and a line in view-artifacts.txt. */
function note(t: { diagnostic(msg: string): void }, msg: string): void {
  t.diagnostic(msg);
  appendFileSync(ARTIFACTS, msg + '\n');
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

interface PfDoc {
  evalId: string;
  results: { prompts: { provider: string }[]; results: { promptIdx: number; success: boolean; response?: { output?: unknown } }[] };
}

/** The success rate per column from the results JSON, as promptfoo prints it ("62.12"). */
function successRates(d: PfDoc): string[] {
  return d.results.prompts.map((_, i) => {
    const rows = d.results.results.filter((r) => r.promptIdx === i);
    return ((100 * rows.filter((r) => r.success).length) / rows.length).toFixed(2);
  });
}

describe('promptfoo view and the HTML report in Chromium', { skip: existsSync(CHROMIUM) ? false : `needs ${CHROMIUM} (apt-get install chromium; .ci/setup-chromium.sh)` }, () => {
  const dir = tempDir('view');
  const cfgDir = join(dir, 'promptfoo');
  const env = {
    PROMPTFOO_CONFIG_DIR: cfgDir,
    RANKGATE_DATA_DIR: join(dir, 'db'),
    DATABASE_URL: undefined,
    RANKGATE_JUDGE: 'off',
    // the sweep on three of the demo's seven categories (28 of 66 queries; technique_boundary has a floor in
    // config/gate.yaml): every view and report check holds on them, at under half the work (7 columns × the queries)
    RANKGATE_CATEGORY: 'technique_boundary,emotional,adversarial',
    PROMPTFOO_DISABLE_TELEMETRY: '1',
    PROMPTFOO_DISABLE_UPDATE: '1',
    PROMPTFOO_DISABLE_SHARING: '1',
    PROMPTFOO_DISABLE_DEBUG_LOG: '1',
    PROMPTFOO_DISABLE_RUNTIME_WARNINGS: '1',
  };
  const defaultOut = join(dir, 'default.json');
  const sweepOut = join(dir, 'sweep.json');
  const reportHtml = join(SHOTS, 'view-sweep-report.html');
  let view: ChildProcess | undefined;
  let port = 0;
  let def: PfDoc;
  let sweep: PfDoc;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(ARTIFACTS, '');
    // The default eval is the README's first command, run once per `npm test` (helpers.ts: defaultEvalRun): its
    // promptfoo history (the .promptfoo its .env names), its results and the index its first use built.
    const run = await defaultEvalRun();
    assert.ok(run.code === 0 || run.code === 1, `default eval exits through the gate (0/1), got ${run.code}\n${run.output.slice(-2000)}`);
    await demoIndexInto(join(dir, 'db'));
    cpSync(join(run.work, '.promptfoo'), cfgDir, { recursive: true });
    copyFileSync(run.results, defaultOut);
    const b = await runNode([PROMPTFOO_BIN, 'eval', '-c', 'promptfooconfig.sweep.ts', '--output', sweepOut, '--no-cache', '--no-table', '--no-progress-bar'], {
      env: { ...env, RANKGATE_SWEEP: 'quick' },
      timeoutMs: 600_000,
    });
    assert.equal(b.code, 0, b.stderr.slice(-2000));
    def = JSON.parse(readFileSync(defaultOut, 'utf8'));
    sweep = JSON.parse(readFileSync(sweepOut, 'utf8'));
    port = await freePort();
    view = spawn(process.execPath, [PROMPTFOO_BIN, 'view', '--port', String(port), '-n'], { cwd: ROOT, env: { ...process.env, ...env } as NodeJS.ProcessEnv, stdio: 'ignore' });
    const t0 = Date.now();
    for (;;) {
      try {
        await fetch(`http://127.0.0.1:${port}/health`);
        break;
      } catch {
        if (Date.now() - t0 > 60_000) throw new Error(`promptfoo view did not listen on 127.0.0.1:${port} within 60 s`);
        await new Promise((r) => setTimeout(r, 300));
      }
    }
  });

  // One Chromium for the file (a start costs seconds of CPU); every page gets its own fresh context (no shared
  // cookies, storage or cache between pages). An eval's page in `promptfoo view` is loaded once (evalPage) and read
  // by every check of that eval: rendering the 7-column sweep costs seconds of CPU on a loaded 2-core machine.
  let browser: import('playwright-core').Browser | undefined;
  after(async () => {
    view?.kill('SIGTERM');
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function launched(): Promise<import('playwright-core').Browser> {
    if (!browser) {
      const { chromium } = await import('playwright-core');
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    }
    return browser;
  }

  /**
   * The eval's page in `promptfoo view`, loaded once in a context of its own (kept until the browser closes) and
   * shared by the checks of that eval: they read it, and one (the sweep's metrics dialog) opens and closes a dialog
   * after the reads. A load that fails is not kept: the next check loads it again.
   */
  const evalPages = new Map<string, Promise<import('playwright-core').Page>>();
  function evalPage(doc: PfDoc): Promise<import('playwright-core').Page> {
    let p = evalPages.get(doc.evalId);
    if (!p) {
      p = (async () => {
        const context = await (await launched()).newContext({ viewport: { width: 1600, height: 1000 } });
        const page = await context.newPage();
        await page.goto(`http://127.0.0.1:${port}/eval/${doc.evalId}`, { waitUntil: 'networkidle', timeout: WAIT });
        return page;
      })();
      evalPages.set(doc.evalId, p);
      p.catch(() => evalPages.delete(doc.evalId));
    }
    return p;
  }

  async function withPage<T>(fn: (page: import('playwright-core').Page, errors: string[]) => Promise<T>, viewport = { width: 1600, height: 1000 }): Promise<T> {
    const context = await (await launched()).newContext({ viewport });
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      return await fn(page, errors);
    } finally {
      await context.close();
    }
  }

  async function checkEval(t: { diagnostic(msg: string): void }, doc: PfDoc, shot: string): Promise<void> {
    const page = await evalPage(doc);
    await page.locator('[data-testid="metric-name-#1 Success@3"]').first().waitFor({ timeout: WAIT });
    await page.getByText(/\d+\.\d\d% passing/).first().waitFor({ timeout: WAIT });
    const body = await page.innerText('body');
    // The eval's title (its description, set by the afterAll hook) starts with the gate's verdict.
    const description = String((JSON.parse(readFileSync(doc === def ? defaultOut : sweepOut, 'utf8')) as { config: { description: string } }).config.description);
    assert.match(description, /^\[gate (PASS|FAIL|ERROR|report only, would be (PASS|FAIL|ERROR)) \(exit [012]\): /);
    assert.ok(body.includes(description), `the verdict is on the page: ${description}`);
    // and every column's header carries its own verdict (the prompt label under the chips)
    for (const p of (JSON.parse(readFileSync(doc === def ? defaultOut : sweepOut, 'utf8')) as { results: { prompts: { label: string }[] } }).results.prompts) {
      assert.match(p.label, /^\[gate (PASS|FAIL|ERROR|report only, would be (PASS|FAIL|ERROR)) \(exit [012]\): /);
      assert.ok(body.includes(p.label), `column verdict on the page: ${p.label}`);
    }
    // The headline of every column is the success rate of the results JSON (query met its golden expectation).
    const shown = [...body.matchAll(/(\d+\.\d\d)% passing/g)].map((m) => m[1]);
    assert.deepEqual(shown, successRates(doc), 'headline % passing per column = rows with success / rows');
    // Column headers name the configurations.
    for (const p of doc.results.prompts) assert.ok(body.includes(p.provider), `column '${p.provider}' on the page`);
    // An output cell shows the ranked list with a title and a route line, not JSON.
    assert.match(body, /route (search|no_results|practice_bridge) · /);
    assert.match(body, /#1 [✓~ ] (The Lamp Within|The River Of Sorrow|The Purposeful Life|Antar Deep|The Wave And The Ocean|La Lampara Interior)/i);
    assert.doesNotMatch(body, /\{"ids":\[/, 'no raw JSON in the cells');
    // Key metrics first: "#1 Recall@3" visible (not behind "Show more...") in the header and in the first row.
    const chips = page.locator('[data-testid="metric-name-#1 Success@3"]');
    assert.ok((await chips.count()) >= doc.results.prompts.length + 1, 'in every column header and in the rows');
    assert.ok(await chips.first().isVisible());
    assert.ok(await page.locator('[data-testid="metric-name-#2 MRR@10"]').first().isVisible());
    assert.ok(await page.locator('[data-testid="metric-name-#3 nDCG@10"]').first().isVisible());
    // Only the query is a variable column (id, category, language are metadata).
    const headers = (await page.locator('thead th').allInnerTexts()).map((t) => t.trim().toLowerCase());
    for (const v of ['category', 'language', 'id']) assert.ok(!headers.includes(v), `no '${v}' column (headers: ${headers.slice(0, 6).join(' | ')})`);
    // the page as it opens, whichever check of this eval scrolled it before
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: shot });
    note(t, `screenshot: ${shot}`);
  }

  it('default eval: headline = success rate, readable cells, Recall@3 first, only the query as a var', async (t) => {
    await checkEval(t, def, join(SHOTS, 'view-default.png'));
  });

  it('default eval: a missed query shows what was expected and that it is not in the top 10', async (t) => {
    const page = await evalPage(def);
    const cell = page.locator('td', { hasText: /MISS(?: \([a-z0-9 -]+\))?: expected/ }).first();
    await cell.waitFor({ timeout: WAIT });
    await cell.scrollIntoViewIfNeeded();
    const text = await cell.innerText();
    // the cell's route line (src/report/output-text.ts) and the rank assertion's reason name the expected document
    assert.match(text, /route \w+ · MISS(?: \([a-z0-9 -]+\))?: expected .+ \(grade \d\)(?: \+\d+ more)?, not in the top \d+/);
    assert.match(text, /no relevant reference returned: expected .+, not in the top \d+/);
    const shot = join(SHOTS, 'view-miss-cell.png');
    await cell.screenshot({ path: shot });
    note(t, `screenshot: ${shot}`);
  });

  it('quick sweep: the same for all 7 columns, and the metrics dialog shows derived means as values', async (t) => {
    assert.equal(sweep.results.prompts.length, 7);
    await checkEval(t, sweep, join(SHOTS, 'view-sweep.png'));
    // the page checkEval read (loaded once): the dialog opens on it as on a fresh load
    const page = await evalPage(sweep);
    await page.locator('[data-testid="toggle-show-more"]').first().click({ timeout: WAIT });
    const dialog = page.locator('[role="dialog"]').first();
    await dialog.waitFor({ timeout: WAIT });
    // The key metrics are the dialog's first rows too (its own sort puts '#1 ...' before letters).
    const firstRows = (await dialog.locator('tbody tr').allInnerTexts()).slice(0, 4).map((t) => t.trim().split(/\s/)[0]);
    assert.deepEqual(firstRows, ['#1', '#2', '#3', '#4'], 'key metrics first in the metrics dialog');
    await dialog.getByPlaceholder('Search...').fill('avg_recall_at_3');
    const row = dialog.locator('tr', { hasText: 'avg_recall_at_3' }).first();
    await row.waitFor({ timeout: WAIT });
    const text = await row.innerText();
    // avg_recall_at_3 of the first column, as a percentage (weight 1 set by the afterAll hook), never "0.00%".
    const shipped = JSON.parse(readFileSync(sweepOut, 'utf8')).results.prompts[0].metrics.namedScores.avg_recall_at_3 as number;
    assert.ok(text.includes(`${(100 * shipped).toFixed(2)}%`), `dialog row shows ${(100 * shipped).toFixed(2)}%: ${text.replace(/\s+/g, ' ')}`);
    const shot = join(SHOTS, 'view-sweep-metrics-dialog.png');
    await page.screenshot({ path: shot });
    note(t, `screenshot: ${shot}`);
    // promptfoo's own charts (Show Charts): documented in docs/view.md (the scatter says "Prompt 1/2 Score").
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden', timeout: WAIT });
    await page.getByText('Show Charts').first().click({ timeout: WAIT });
    // drawn: promptfoo's chart canvases are on the page (not a fixed wait)
    await page.locator('canvas').first().waitFor({ state: 'visible', timeout: WAIT });
    const charts = join(SHOTS, 'view-sweep-charts.png');
    await page.screenshot({ path: charts });
    note(t, `screenshot: ${charts}`);
  });

  it('rankgate report: one self-contained HTML file, one chart per section, no console errors, loads offline', async (t) => {
    const r = await rankgate(['report', sweepOut, '--html', reportHtml]);
    assert.equal(r.code, 0, r.stderr);
    const html = readFileSync(reportHtml, 'utf8');
    assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=|https?:\/\/cdn/i, 'nothing loaded from elsewhere');
    note(t, `report: ${reportHtml} (${(statSync(reportHtml).size / 1024).toFixed(0)} KB)`);
    await withPage(async (page, errors) => {
      await page.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : route.abort()));
      const t0 = Date.now();
      await page.goto(`file://${reportHtml}`, { waitUntil: 'load', timeout: WAIT });
      // the report's own state: every chart drawn (src/report/html/render.ts sets data-charts-drawn)
      await page.locator('html[data-charts-drawn]').waitFor({ state: 'attached', timeout: WAIT });
      note(t, `report load: ${Date.now() - t0} ms`);
      // It opens with the gate's verdict, decided by gateColumn as `rankgate gate` decides it.
      const gate = await rankgate(['gate', sweepOut]);
      const word = { 0: 'PASS', 1: 'FAIL', 2: 'ERROR' }[gate.code as 0 | 1 | 2];
      const verdict = page.locator('#verdict');
      assert.equal(await verdict.getAttribute('data-verdict'), word, `the report says what rankgate gate said (exit ${gate.code})`);
      assert.equal(await page.locator('body > *').nth(1).getAttribute('id'), 'verdict', 'the verdict comes right after the title');
      const vtext = await verdict.innerText();
      assert.match(vtext, /overall Success@3 ≥ 0\.8\s+\d\.\d{4}\s+(pass|fail)/);
      assert.match(vtext, /Regression check: /);
      assert.match(vtext, /The gate (passes|fails)|Nothing trustworthy was measured/);
      const vshot = join(SHOTS, 'view-report-verdict.png');
      await verdict.screenshot({ path: vshot });
      note(t, `screenshot: ${vshot}`);
      assert.match(await page.locator('#significance h2').innerText(), /Success@3, MRR@10, nDCG@10, routing accuracy/);
      const sections = await page.locator('section.chart-section').all();
      assert.ok(sections.length >= 5, 'overall, categories, sweep, latency, significance');
      for (const s of sections) {
        assert.equal(await s.locator('.chart').count(), 1, `one chart in section #${await s.getAttribute('id')}`);
        assert.equal(await s.locator('.chart svg').count(), 1, `the chart of #${await s.getAttribute('id')} is drawn`);
      }
      assert.ok(await page.locator('#sweep').count(), 'the sweep has a heatmap section');
      const text = await page.innerText('body');
      for (const p of sweep.results.prompts) assert.ok(text.includes(p.provider), `column '${p.provider}' in the report`);
      assert.match(text, /held-out nDCG@10 of the chosen column: \d\.\d{4}/);
      assert.deepEqual(errors, [], 'no console errors');
      const shot = join(SHOTS, 'view-sweep-report.png');
      await page.screenshot({ path: shot, fullPage: false });
      note(t, `screenshot: ${shot}`);
    });
    // A phone, 390 px wide: no horizontal page overflow; tables stack their rows (no scrolling inside a table).
    await withPage(
      async (page, errors) => {
        await page.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : route.abort()));
        await page.goto(`file://${reportHtml}`, { waitUntil: 'load', timeout: WAIT });
        await page.locator('html[data-charts-drawn]').waitFor({ state: 'attached', timeout: WAIT });
        const [scrollWidth, clientWidth] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
        assert.equal(clientWidth, 390);
        assert.ok(scrollWidth <= clientWidth, `no horizontal page overflow at 390 px: the page is ${scrollWidth} px wide`);
        const loose = await page.evaluate(() => [...document.querySelectorAll('table')].filter((t) => !t.parentElement?.classList.contains('scroll')).length);
        assert.equal(loose, 0, 'every table in its own box');
        // stacked rows, not inner scrolling: no table box is wider inside than it shows, and the header row is hidden
        const inner = await page.evaluate(() =>
          [...document.querySelectorAll('.scroll')].filter((d) => d.scrollWidth > d.clientWidth + 1).map((d) => `${d.closest('section')?.id}: ${d.scrollWidth} > ${d.clientWidth}`),
        );
        assert.deepEqual(inner, [], 'no table scrolls inside its box at 390 px');
        const stacked = await page.evaluate(() => {
          const td = document.querySelector('#significance table.stack td[data-label]');
          return td ? [getComputedStyle(td).display, getComputedStyle(td.closest('table')!.querySelector('thead')!).display] : null;
        });
        assert.deepEqual(stacked, ['block', 'none'], 'the significance table stacks its rows (result and p-value cells labelled)');
        const floors = await page.locator('#verdict table.floors').boundingBox();
        assert.ok(floors && floors.x >= 0 && floors.x + floors.width <= 390, `the floors table fits the phone: ${JSON.stringify(floors)}`);
        assert.deepEqual(errors, [], 'no console errors');
        const shot = join(SHOTS, 'view-report-verdict-390.png');
        await page.locator('#verdict').screenshot({ path: shot });
        note(t, `screenshot: ${shot}`);
      },
      { width: 390, height: 844 },
    );
  });
});
