/**
 * The trend page in a real browser (Debian's Chromium through playwright-core; RANKGATE_CHROMIUM), at 1280 and 390 px:
 * `rankgate history --html` over the generated 12-commit repository and two scheduled runs that record a provisional
 * share and a review backlog. Checks the lines (overall and per category, per gated metric), a marker's hover text
 * (the corpus change), the second axis, the drift line on top, no network request, no sideways scroll on a phone.
 * Screenshots go to $RANKGATE_TEST_OUTPUT when set. Skips when Chromium is missing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { run as history } from '../../src/cli/history.ts';
import { readBaseline } from '../../src/gate/baseline.ts';
import { historyLine, perQueryOf, pointConfig, type PointMeta } from '../../src/history/line.ts';
import { runCli } from '../helpers/capture.ts';
import { chromiumSkip, launchChromium } from '../helpers/chromium.ts';
import { issueRepo, miss } from './helpers.ts';

const WAIT = 60_000;

describe('the trend page in Chromium', { skip: chromiumSkip() }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-trend-'));
  const home = process.cwd();
  let browser: import('playwright-core').Browser | undefined;
  after(async () => {
    await browser?.close();
    process.chdir(home);
    rmSync(dir, { recursive: true, force: true });
  });

  test('lines per metric and category, a marker says what changed, the second axis, the drift on top: 1280 and 390 px', async () => {
    const repo = join(dir, 'team');
    const { commits } = issueRepo(repo);
    const c12 = readBaseline(join(repo, 'config', 'search-baseline.json'));
    const meta = (date: string, extra: Partial<PointMeta>): PointMeta => ({
      repo: 'acme/search', run: date.slice(0, 10), commit: commits[11]!, date, code: 0, column: 'hybrid', corpus: { id: 'c2c2c2c2c2c2c2c2', path: 'help' }, golden: c12.identity!.selection, config: pointConfig(c12), judge: 'judge: off', latency: { p50: 12, p95: 30 }, cost: null, provisional: null, backlog: null, ...extra,
    });
    const run2 = perQueryOf({ ...c12.queries, a08: miss('a') });
    writeFileSync(
      join(repo, 'history.jsonl'),
      [historyLine(meta('2026-10-26T04:17:00.000Z', { provisional: 0.2, backlog: 40 }), perQueryOf(c12.queries), true), historyLine(meta('2026-11-02T04:17:00.000Z', { provisional: 0.25, backlog: 55, code: 1 }), run2, false)].join('\n') + '\n',
    );
    process.chdir(repo);
    const page = join(dir, 'trend.html');
    const r = await runCli('history', history, ['--html', page, '--file', 'history.jsonl']);
    assert.equal(r.code, 0, r.err);
    const headline = /; (drift: .*)$/m.exec(r.err)![1]!;
    // the last 8 points: c7..c12 and the two runs; the best is c7 (39/50); the second run lost a08 too: 33/50, six
    // queries changed alike (p 2/64)
    assert.equal(headline, `drift: Success@3 \u221212.0 pts over 7 points since 2026-09-14 (p 0.031), spread over 6 steps (largest \u22122.0 at ${commits[7]!.slice(0, 7)})`);

    browser ??= await launchChromium();
    const shots = process.env.RANKGATE_TEST_OUTPUT ? resolve(process.env.RANKGATE_TEST_OUTPUT) : null;
    if (shots) mkdirSync(shots, { recursive: true });
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 900 }, deviceScaleFactor: 1 });
      const requests: string[] = [];
      const errors: string[] = [];
      context.on('request', (q) => requests.push(q.url()));
      try {
        const tab = await context.newPage();
        tab.on('pageerror', (e) => errors.push(String(e)));
        await tab.goto(pathToFileURL(page).href, { timeout: WAIT });
        await tab.waitForFunction(() => document.documentElement.dataset.chartsDrawn === '2', undefined, { timeout: WAIT });
        // the drift finding on top
        assert.equal((await tab.locator('#drift .headline').textContent())!.trim(), headline);
        const top = await tab.locator('#drift').boundingBox();
        const chart = await tab.locator('#chart-recall_at_3').boundingBox();
        assert.ok(top!.y < chart!.y, 'the drift line is above the charts');
        // the lines: overall and each category per gated metric; the markers; the second axis (first chart only)
        const names = await tab.evaluate(() => (window as unknown as { __trendCharts: { getOption(): { series: { name: string; data: unknown[] }[] } }[] }).__trendCharts.map((c) => c.getOption().series.map((s) => `${s.name}:${s.data.length}`)));
        assert.deepEqual(names, [
          ['overall:14', 'a:14', 'b:14', 'changes:3', 'provisional share:2', 'review backlog:2'],
          ['overall:14', 'a:14', 'b:14', 'changes:3'],
        ]);
        assert.ok((await tab.locator('#chart-recall_at_3 svg path').count()) > 10, 'lines drawn as SVG paths');
        // hover the corpus change's marker: the tooltip says what changed
        const at = await tab.evaluate(() => {
          const c = (window as unknown as { __trendCharts: { getOption(): { series: { name: string; data: number[][] }[] }; convertToPixel(f: object, v: number[]): number[] }[] }).__trendCharts[0]!;
          const m = c.getOption().series.find((s) => s.name === 'changes')!.data[0]!;
          return c.convertToPixel({ seriesName: 'changes' }, [m[0]!, m[1]!]);
        });
        await tab.mouse.move(chart!.x + at[0]!, chart!.y + at[1]!);
        const tip = tab.locator('#chart-recall_at_3').getByText('changed: corpus help c1c1c1c1c1c1 -> c2c2c2c2c2c2');
        await tip.waitFor({ timeout: WAIT });
        assert.match((await tip.locator('xpath=..').textContent())!, /^2026-08-10 · [0-9a-f]{7} \(baseline commit\)/);
        // a phone: nothing scrolls sideways
        if (width === 390) assert.ok(await tab.evaluate(() => document.documentElement.scrollWidth <= 390), 'no sideways scroll at 390 px');
        if (shots) await tab.screenshot({ path: join(shots, `history-trend-${width}.png`), fullPage: true });
        assert.deepEqual(errors, []);
        assert.deepEqual(requests.filter((u) => !/^(file|data|blob):/.test(u)), [], 'the page makes no network request');
      } finally {
        await context.close();
      }
    }
  });
});
