/**
 * The blind review end to end in a real browser (Debian's /usr/bin/chromium driven by playwright-core): `rankgate
 * review export` of a two-column results file, the page opened from a file:// URL, a reviewer rates a few queries,
 * reloads (the ratings survive), rates the rest, downloads the JSON; `rankgate review import` unblinds it and
 * `rankgate compare --results --review` shows criterion 4 pass (it was "not evaluated" before). The page makes no
 * network request. A second name starts its own ratings (and switching back shows the first one's). At 390 x 844 the
 * sticky header takes at most 15% of the height. On a real export (the demo's compact rows) every hit has the same
 * markup and the same cut, the expected documents' included, and no golden id is on the page. Skips when Chromium is
 * missing (.ci/setup-chromium.sh installs it).
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defaultEvalRun, rankgate, tempDir } from './helpers.ts';
import { chromiumSkip, launchChromium } from '../helpers/chromium.ts';
import { MARKERS, leaks, realTwoColumnResults, reviewResultsDoc } from '../helpers/review-fixture.ts';
import type { ReviewKey, ReviewResult } from '../../src/review/types.ts';

/** The sticky header's share of a phone's height (390 x 844) it may take. */
const HEADER_SHARE = 0.15;

/** The ceiling of every wait on the page (a loaded 2-core machine is slow; a state that never comes fails). */
const WAIT = 120_000;

describe('the blind review page in Chromium', { skip: chromiumSkip() }, () => {
  const dir = tempDir('review-page');
  let browser: import('playwright-core').Browser | undefined;
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('export -> rate, reload, rate, download -> import -> criterion 4 turns from not evaluated into pass', async () => {
    const results = join(dir, 'results.json');
    writeFileSync(results, JSON.stringify(reviewResultsDoc(6)));
    const page = join(dir, 'review.html');
    const ex = await rankgate(['review', 'export', results, '--baseline', '0', '--candidate', MARKERS.candidateLabel, '--queries', '6', '--seed', '3', '-o', page]);
    assert.equal(ex.code, 0, ex.stderr);
    assert.match(ex.stdout, /review page: .*review\.html \(6 queries of the 6 both columns answered with a ranking; top 5 results per list, every text cut at 300 characters; seed 3\)/);
    const keyPath = join(dir, 'review.key.json');
    assert.ok(existsSync(keyPath), 'the key beside the page');
    const html = readFileSync(page, 'utf8');
    assert.deepEqual(leaks(html), [], 'the page holds nothing of either column (labels, provider id, parameters)');
    const key = JSON.parse(readFileSync(keyPath, 'utf8')) as ReviewKey;
    assert.ok(!html.includes(key.secret));

    // before any review: criterion 4 not evaluated, and says how to run the review
    const before = await rankgate(['compare', '--results', results]);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /- human blind review \+0\.5 \(1-5 scale\): not evaluated: run rankgate review export '[^']*results\.json' --baseline 'zqBaselineLabel hybrid rrf6161' --candidate 'zqCandidateLabel rm3 fb7717'/);

    browser ??= await launchChromium();
    const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    const requests: string[] = [];
    const errors: string[] = [];
    context.on('request', (r) => requests.push(r.url()));
    try {
      const tab = await context.newPage();
      tab.on('pageerror', (e) => errors.push(String(e)));
      tab.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      const url = pathToFileURL(page).href;
      await tab.goto(url, { timeout: WAIT });
      // nothing can be rated before a name is entered
      await tab.locator('#progress').getByText('enter your name to start').waitFor({ timeout: WAIT });
      assert.equal(await tab.getByTestId('rate-0-X-5').isDisabled(), true);
      // the candidate gets 5, the baseline 3 (the test knows the key; the page does not tell)
      const rate = async (i: number) => {
        const cand = key.assignment[i]!.candidate;
        const base = cand === 'X' ? 'Y' : 'X';
        await tab.getByTestId(`rate-${i}-${cand}-5`).check();
        await tab.getByTestId(`rate-${i}-${base}-3`).check();
      };
      await tab.locator('#reviewer').fill('Ann Reviewer');
      await tab.locator('#progress').getByText('0 of 6 queries rated').waitFor({ timeout: WAIT });
      for (const i of [0, 1, 2]) await rate(i);
      await tab.getByTestId('note-0').fill('X had the answer first');
      await tab.locator('#progress').getByText('3 of 6 queries rated').waitFor({ timeout: WAIT });
      // an incomplete review is not downloadable
      await tab.locator('#download').click();
      await tab.locator('#status').getByText(/Rate both lists of every query first: 3 left \(query 4, 5, 6\)/).waitFor({ timeout: WAIT });

      // a reload (a closed tab) loses nothing
      await tab.reload({ timeout: WAIT });
      await tab.locator('#progress').getByText('3 of 6 queries rated').waitFor({ timeout: WAIT });
      assert.equal(await tab.locator('#reviewer').inputValue(), 'Ann Reviewer');
      assert.equal(await tab.getByTestId(`rate-1-${key.assignment[1]!.candidate}-5`).isChecked(), true);
      assert.equal(await tab.getByTestId('note-0').inputValue(), 'X had the answer first');

      for (const i of [3, 4, 5]) await rate(i);
      await tab.locator('#progress').getByText('6 of 6 queries rated').waitFor({ timeout: WAIT });
      const [download] = await Promise.all([tab.waitForEvent('download', { timeout: WAIT }), tab.locator('#download').click()]);
      assert.match(download.suggestedFilename(), /^ratings-Ann-Reviewer-[0-9a-f]{8}\.json$/);
      const ratings = join(dir, 'ratings-ann.json');
      await download.saveAs(ratings);
      const doc = JSON.parse(readFileSync(ratings, 'utf8')) as { exportId: string; reviewer: string; ratings: { item: number; x: number; y: number; note?: string }[] };
      assert.equal(doc.exportId, key.exportId);
      assert.equal(doc.reviewer, 'Ann Reviewer');
      assert.equal(doc.ratings.length, 6);
      assert.deepEqual(doc.ratings.map((r) => r.item), [1, 2, 3, 4, 5, 6], 'items by number, never a query id');
      assert.equal(doc.ratings[0]!.note, 'X had the answer first');
      for (const a of key.assignment) assert.ok(!readFileSync(ratings, 'utf8').includes(`"${a.id}"`), 'no query id in the ratings');

      // a second reviewer in the same browser starts empty; switching back shows the first one's ratings
      await tab.locator('#reviewer').fill('Bob');
      await tab.locator('#progress').getByText('0 of 6 queries rated').waitFor({ timeout: WAIT });
      assert.equal(await tab.getByTestId(`rate-1-${key.assignment[1]!.candidate}-5`).isChecked(), false, "Bob does not see Ann's ratings");
      assert.equal(await tab.getByTestId('note-0').inputValue(), '', "nor her notes");
      await tab.getByTestId('rate-0-X-2').check();
      await tab.locator('#progress').getByText('0 of 6 queries rated').waitFor({ timeout: WAIT });
      await tab.locator('#reviewer').fill('ann reviewer\u200b');
      await tab.locator('#progress').getByText('6 of 6 queries rated').waitFor({ timeout: WAIT });
      assert.equal(await tab.getByTestId('note-0').inputValue(), 'X had the answer first', 'the same name, differently typed: her own ratings');
      await tab.reload({ timeout: WAIT });
      await tab.locator('#progress').getByText('6 of 6 queries rated').waitFor({ timeout: WAIT });
      await tab.locator('#reviewer').fill('BOB');
      await tab.locator('#progress').getByText('0 of 6 queries rated').waitFor({ timeout: WAIT });
      assert.equal(await tab.getByTestId('rate-0-X-2').isChecked(), true, "Bob's own rating kept");
      assert.deepEqual(errors, []);
      assert.deepEqual(
        requests.filter((u) => !u.startsWith('file:') && !u.startsWith('blob:') && !u.startsWith('data:')),
        [],
        'the page makes no network request',
      );

      // import: unblinds (candidate 5, baseline 3 on every query: +2 points), writes the result
      const resultPath = join(dir, 'review-result.json');
      const im = await rankgate(['review', 'import', ratings, '--key', keyPath, '-o', resultPath]);
      assert.equal(im.code, 0, im.stderr);
      assert.match(im.stdout, /human blind review: 'zqCandidateLabel rm3 fb7717' \(candidate\) vs 'zqBaselineLabel hybrid rrf6161' \(baseline\), 6 queries/);
      assert.match(im.stdout, /criterion 4 \(human blind review prefers the candidate by >= 0\.5 points\): PASS \(pooled mean \+2\.00\)/);
      const result = JSON.parse(readFileSync(resultPath, 'utf8')) as ReviewResult;
      assert.equal(result.pooled.preference, 2);
      assert.equal(result.perQuery[0]!.notes[0], 'Ann Reviewer: X had the answer first');

      // the shipping verdict: criterion 4 passes now
      const after = await rankgate(['compare', '--results', results, '--review', resultPath]);
      assert.equal(after.code, 0, after.stderr);
      assert.match(after.stdout, /ok {3}human blind review \+0\.5 \(1-5 scale\): human blind review \(.*review-result\.json; re-derived from 1 ratings file\(s\) and its key: an accident check, not proof .*\): candidate preferred by \+2\.00 points/);

      // the same ratings with the key edited: exit 2, one line naming the file and field
      writeFileSync(keyPath, JSON.stringify({ ...key, seed: 4 }, null, 2));
      const edited = await rankgate(['review', 'import', ratings, '--key', keyPath, '-o', join(dir, 'r2.json')]);
      assert.equal(edited.code, 2);
      assert.match(edited.stderr, /^rankgate review: .*review\.key\.json: field 'mac': does not match the key's content \(the blinding key was edited after the export: labels, columns, sample or sides\)\n$/);
      assert.ok(!existsSync(join(dir, 'r2.json')), 'nothing written');
    } finally {
      await context.close();
    }
  });

  test("a real export at 390 x 844: the sticky header takes at most 15% of the height; every hit the same markup and cut, the expected documents' too; no golden id", async () => {
    const { results } = await defaultEvalRun();
    const real = join(dir, 'real');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(real, { recursive: true });
    const { file, expected } = realTwoColumnResults(results, real);
    const page = join(real, 'review.html');
    const ex = await rankgate(['review', 'export', file, '--baseline', '0', '--candidate', '1', '--queries', '20', '-o', page]);
    assert.equal(ex.code, 0, ex.stderr);
    const key = JSON.parse(readFileSync(join(real, 'review.key.json'), 'utf8')) as ReviewKey;
    browser ??= await launchChromium();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
    try {
      const tab = await context.newPage();
      await tab.goto(pathToFileURL(page).href, { timeout: WAIT });
      await tab.locator('#progress').getByText('enter your name to start').waitFor({ timeout: WAIT });
      const header = async () => (await tab.locator('header').boundingBox({ timeout: WAIT }))!.height;
      const h0 = await header();
      assert.ok(h0 <= HEADER_SHARE * 844, `the sticky header is ${h0} px of 844 (at most ${HEADER_SHARE * 844})`);
      await tab.locator('#reviewer').fill('Ann');
      await tab.locator('#download').click();
      await tab.locator('#status').getByText(/Rate both lists of every query first/).waitFor({ timeout: WAIT });
      const h1 = await header();
      assert.ok(h1 <= HEADER_SHARE * 844, `with a message shown the header is ${h1} px`);
      await tab.mouse.wheel(0, 3000);
      assert.equal(Math.round((await tab.locator('header').boundingBox())!.y), 0, 'sticky: still at the top after scrolling');
      // every hit of both lists: the same elements and classes, the same cut; the expected documents among them
      const hits = await tab.evaluate(() =>
        [...document.querySelectorAll('section.item')].flatMap((sec) =>
          [...sec.querySelectorAll('.list')].flatMap((list) =>
            [...list.querySelectorAll('li')].map((li, i) => ({
              item: Number(sec.getAttribute('data-item')),
              side: list.getAttribute('data-side') as 'X' | 'Y',
              rank: i,
              markup: [...li.children].map((c) => `${c.tagName}.${c.className}`).join(' '),
              attrs: [...li.attributes].map((a) => a.name).join(','),
              len: (li.querySelector('.x')?.textContent ?? '').length,
            })),
          ),
        ),
      );
      assert.equal(hits.length, 20 * 2 * 5, 'five hits a list, text at every rank');
      assert.deepEqual([...new Set(hits.map((h) => h.markup))], ['DIV.t DIV.x'], 'one markup for every hit');
      assert.deepEqual([...new Set(hits.map((h) => h.attrs))], [''], 'no attribute on any hit');
      const isExpected = (h: (typeof hits)[number]) => {
        const a = key.assignment[h.item - 1]!;
        const e = expected.get(a.id)!;
        return (h.side === a.candidate ? e.candidate : e.baseline).has(h.rank);
      };
      const exp = hits.filter(isExpected);
      const other = hits.filter((h) => !isExpected(h));
      assert.ok(exp.length >= 5, `expected documents on the page: ${exp.length}`);
      const max = (xs: typeof hits) => Math.max(...xs.map((h) => h.len));
      assert.ok(max(exp) <= 300 && max(other) <= 300, `one cut: ${max(exp)}, ${max(other)}`);
      assert.ok(Math.abs(max(exp) - max(other)) <= 10, `the longest expected text (${max(exp)}) is no longer than the others' (${max(other)})`);
      assert.ok(other.filter((h) => h.len >= max(exp) - 10).length >= 5, 'texts as long as the expected ones are common among the others');
      const text = await tab.evaluate(() => document.documentElement.outerHTML);
      for (const a of key.assignment) assert.ok(!text.includes(a.id), `golden id ${a.id} on the page`);
    } finally {
      await context.close();
    }
  });
});
