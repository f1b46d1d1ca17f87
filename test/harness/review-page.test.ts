/**
 * The blind review end to end in a real browser (Debian's /usr/bin/chromium driven by playwright-core): `rankgate
 * review export` of a two-column results file, the page opened from a file:// URL, a reviewer rates a few queries,
 * reloads (the ratings survive), rates the rest, downloads the JSON; `rankgate review import` unblinds it and
 * `rankgate compare --results --review` shows criterion 4 pass (it was "not evaluated" before). The page makes no
 * network request. Skips when Chromium is missing (.ci/setup-chromium.sh installs it).
 */
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { rankgate, tempDir } from './helpers.ts';
import { chromiumSkip, launchChromium } from '../helpers/chromium.ts';
import { MARKERS, leaks, reviewResultsDoc } from '../helpers/review-fixture.ts';
import type { ReviewKey, ReviewResult } from '../../src/gate/review.ts';

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
    assert.match(ex.stdout, /review page: .*review\.html \(6 queries of the 6 both columns answered; top 5 results per list; seed 3\)/);
    const keyPath = join(dir, 'review.key.json');
    assert.ok(existsSync(keyPath), 'the key beside the page');
    const html = readFileSync(page, 'utf8');
    assert.deepEqual(leaks(html), [], 'the page holds nothing of either column (labels, provider id, parameters)');
    const key = JSON.parse(readFileSync(keyPath, 'utf8')) as ReviewKey;
    assert.ok(!html.includes(key.secret));

    // before any review: criterion 4 not evaluated, and says how to run the review
    const before = await rankgate(['compare', '--results', results]);
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /- human blind review \+0\.5 \(1-5 scale\): not evaluated: run rankgate review export RESULTS --baseline 'zqBaselineLabel hybrid rrf6161' --candidate 'zqCandidateLabel rm3 fb7717'/);

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
      await tab.locator('#progress').getByText('0 of 6 queries rated').waitFor({ timeout: WAIT });
      // the candidate gets 5, the baseline 3 (the test knows the key; the page does not tell)
      const rate = async (i: number) => {
        const cand = key.assignment[i]!.candidate;
        const base = cand === 'X' ? 'Y' : 'X';
        await tab.getByTestId(`rate-${i}-${cand}-5`).check();
        await tab.getByTestId(`rate-${i}-${base}-3`).check();
      };
      await tab.locator('#reviewer').fill('Ann Reviewer');
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
      const doc = JSON.parse(readFileSync(ratings, 'utf8')) as { exportId: string; reviewer: string; ratings: { query: string; x: number; y: number; note?: string }[] };
      assert.equal(doc.exportId, key.exportId);
      assert.equal(doc.reviewer, 'Ann Reviewer');
      assert.equal(doc.ratings.length, 6);
      assert.equal(doc.ratings[0]!.note, 'X had the answer first');
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
      assert.match(after.stdout, /ok {3}human blind review \+0\.5 \(1-5 scale\): human blind review \(.*review-result\.json\): candidate preferred by \+2\.00 points/);

      // the same ratings with the key edited: exit 2, one line naming the file and field
      writeFileSync(keyPath, JSON.stringify({ ...key, seed: 4 }, null, 2));
      const edited = await rankgate(['review', 'import', ratings, '--key', keyPath, '-o', join(dir, 'r2.json')]);
      assert.equal(edited.code, 2);
      assert.match(edited.stderr, /^rankgate review: .*ratings-ann\.json: field 'keyDigest': .* the blinding key or this file was edited after the export\n$/);
      assert.ok(!existsSync(join(dir, 'r2.json')), 'nothing written');
    } finally {
      await context.close();
    }
  });
});
