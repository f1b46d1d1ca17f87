/**
 * The review queue page end to end in a real browser (Debian's Chromium through playwright-core; RANKGATE_CHROMIUM):
 * `rankgate judge review export` of model and bootstrap labels over the demo corpus, the page opened from a file://
 * URL, a person grades three documents (one as the model did: accept; one otherwise: change; one 0 where the model
 * said relevant: reject), reloads (the grades and the name are kept), downloads the decisions, and `rankgate judge
 * review import` turns them into chair labels and prints the model's kappa. No network request; at 390 x 844 the
 * sticky header keeps to 15% of the height. Skips when Chromium is missing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { run as judge } from '../../src/cli/judge.ts';
import { readJudgments, writeJudgments, type Judgment } from '../../src/judgments/file.ts';
import type { QueuePageData } from '../../src/review/queue.ts';
import { runCli } from '../helpers/capture.ts';
import { chromiumSkip, launchChromium } from '../helpers/chromium.ts';
import { ROOT } from '../harness/helpers.ts';

const WAIT = 120_000;
const T = '2026-11-29T10:00:00.000Z';
const llm = (query: string, doc: string, grade: number): Judgment => ({ query, doc, grade, source: 'llm', provider: 'openai:chat:gpt-4.1-mini', model: 'gpt-4.1-mini', prompt: 'relevance-v1', time: T });

const cli = (...args: string[]) => runCli('judge', judge, args);

describe('the review queue page in Chromium', { skip: chromiumSkip() }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-queue-page-'));
  let browser: import('playwright-core').Browser | undefined;
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('export -> grade (accept, change, reject), reload, download -> import: chair labels and the model kappa', async () => {
    const judgments = join(dir, 'judgments.jsonl');
    const demo = await readJudgments(join(ROOT, 'datasets', 'feedback', 'judgments.jsonl'));
    writeJudgments(judgments, [...demo.filter((j) => j.query.startsWith('en-')), llm('en-conceptual-006', 'the-lamp-within', 3), llm('en-conceptual-006', 'the-purposeful-life', 2), llm('en-direct-004', 'the-river-of-sorrow', 3), llm('en-dark_night-026', 'the-wave-and-the-ocean', 2)]);
    const page = join(dir, 'queue.html');
    const ex = await cli('review', 'export', '--judgments', judgments, '--golden', join(ROOT, 'datasets', 'golden', 'golden-set-en.json'), '--corpus', join(ROOT, 'datasets', 'corpus'), '-o', page);
    assert.equal(ex.code, 0, ex.err);
    const html = readFileSync(page, 'utf8');
    const data = JSON.parse(/<script type="application\/json" id="review-data">([\s\S]*?)<\/script>/.exec(html)![1]!) as QueuePageData;
    assert.ok(!JSON.stringify(data).includes('"grade"') && !JSON.stringify(data).includes('gpt-4.1'), 'blind: no grade, no model');
    const item = (q: string, d: string) => data.items.find((i) => i.query === q && i.doc === d)!.item;
    const n = data.items.length;

    browser ??= await launchChromium();
    const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
    const requests: string[] = [];
    const errors: string[] = [];
    context.on('request', (r) => requests.push(r.url()));
    try {
      const tab = await context.newPage();
      tab.on('pageerror', (e) => errors.push(String(e)));
      await tab.goto(pathToFileURL(page).href, { timeout: WAIT });
      await tab.locator('#progress').getByText('enter your name to start').waitFor({ timeout: WAIT });
      assert.equal(await tab.getByTestId(`grade-1-3`).isDisabled(), true, 'nothing is graded without a name');
      const h = (await tab.locator('header').boundingBox({ timeout: WAIT }))!.height;
      assert.ok(h <= 0.15 * 844, `the sticky header is ${h} px of 844`);
      await tab.locator('#reviewer').fill('Dafna');
      await tab.locator('#progress').getByText(`0 of ${n} documents graded`).waitFor({ timeout: WAIT });
      await tab.getByTestId(`grade-${item('en-conceptual-006', 'the-lamp-within')}-3`).check(); // the model said 3: accept
      await tab.getByTestId(`grade-${item('en-conceptual-006', 'the-purposeful-life')}-1`).check(); // the model said 2: change
      await tab.locator('#progress').getByText(`2 of ${n} documents graded`).waitFor({ timeout: WAIT });

      await tab.reload({ timeout: WAIT });
      await tab.locator('#progress').getByText(`2 of ${n} documents graded`).waitFor({ timeout: WAIT });
      assert.equal(await tab.locator('#reviewer').inputValue(), 'Dafna');
      assert.equal(await tab.getByTestId(`grade-${item('en-conceptual-006', 'the-purposeful-life')}-1`).isChecked(), true, 'kept across a reload');
      await tab.getByTestId(`grade-${item('en-direct-004', 'the-river-of-sorrow')}-0`).check(); // the model said 3: reject
      await tab.locator('#progress').getByText(`3 of ${n} documents graded`).waitFor({ timeout: WAIT });

      const [download] = await Promise.all([tab.waitForEvent('download', { timeout: WAIT }), tab.locator('#download').click()]);
      assert.match(download.suggestedFilename(), /^decisions-Dafna-[0-9a-f]{8}\.json$/);
      const decisions = join(dir, 'decisions.json');
      await download.saveAs(decisions);
      await tab.locator('#status').getByText(/Downloaded decisions-Dafna-.*\(3 of \d+ graded\)/).waitFor({ timeout: WAIT });
      const doc = JSON.parse(readFileSync(decisions, 'utf8')) as { reviewer: string; decisions: { query: string; doc: string; grade: number; time: string }[] };
      assert.equal(doc.reviewer, 'Dafna');
      assert.deepEqual(doc.decisions.map((d) => [d.query, d.doc, d.grade]).sort(), [
        ['en-conceptual-006', 'the-lamp-within', 3],
        ['en-conceptual-006', 'the-purposeful-life', 1],
        ['en-direct-004', 'the-river-of-sorrow', 0],
      ]);
      assert.deepEqual(errors, []);
      assert.deepEqual(requests.filter((u) => !/^(file|blob|data):/.test(u)), [], 'the page makes no network request');

      const im = await cli('review', 'import', decisions, '--judgments', judgments, '--resamples', '200');
      assert.equal(im.code, 0, im.err);
      assert.match(im.out, /judge review import: 3 decisions by Dafna/);
      assert.match(im.out, /3 chair labels \(1 accepted, 1 changed, 1 rejected; each keeps the label it replaced in 'was'\)/);
      assert.match(im.out, /model \(llm\) vs person: weighted kappa \(linear, 0-3\) .* · n 3/);
      const chair = (await readJudgments(judgments)).filter((j) => j.source === 'chair');
      assert.deepEqual(
        chair.map((j) => [j.query, j.doc, j.grade, j.reviewer, j.was?.source, j.was?.grade]),
        [
          ['en-conceptual-006', 'the-lamp-within', 3, 'Dafna', 'bootstrap', 3],
          ['en-conceptual-006', 'the-purposeful-life', 1, 'Dafna', 'bootstrap', 2],
          ['en-direct-004', 'the-river-of-sorrow', 0, 'Dafna', 'llm', 3],
        ],
      );
      console.log(im.out.trim());
    } finally {
      await context.close();
    }
  });
});
