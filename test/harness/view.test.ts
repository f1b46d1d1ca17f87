/**
 * `promptfoo view` on a fixture sweep's results, opened in headless Chromium (Debian's /usr/bin/chromium,
 * driven by playwright-core): the three column labels and a metric value are on the page; a screenshot
 * goes to test-output/harness-view.png. Skips when /usr/bin/chromium is missing (.ci/setup-chromium.sh installs it).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { FIXTURE, PROMPTFOO_BIN, ROOT, promptfooEval, tempDir } from './helpers.ts';

const CHROMIUM = process.env.RANKGATE_CHROMIUM ?? '/usr/bin/chromium';

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

describe('promptfoo view of a sweep', { skip: existsSync(CHROMIUM) ? false : `needs ${CHROMIUM} (apt-get install chromium; .ci/setup-chromium.sh)` }, () => {
  const cfgDir = tempDir('view-cfg');
  let view: ChildProcess | undefined;
  let port = 0;

  before(async () => {
    const out = join(cfgDir, 'sweep.json');
    const r = await promptfooEval(join(FIXTURE, 'promptfooconfig.sweep.yaml'), out, { PROMPTFOO_CONFIG_DIR: cfgDir });
    assert.equal(r.code, 0, r.stderr.slice(-1500));
    port = await freePort();
    view = spawn(process.execPath, [PROMPTFOO_BIN, 'view', '--port', String(port), '-n'], {
      cwd: ROOT,
      env: { ...process.env, PROMPTFOO_CONFIG_DIR: cfgDir, PROMPTFOO_DISABLE_TELEMETRY: '1', PROMPTFOO_DISABLE_UPDATE: '1', PROMPTFOO_DISABLE_DEBUG_LOG: '1' },
      stdio: 'ignore',
    });
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

  after(() => {
    view?.kill('SIGTERM');
    rmSync(cfgDir, { recursive: true, force: true });
  });

  it('shows every column label and the named-score sums, and saves a screenshot', async () => {
    const { chromium } = await import('playwright-core');
    const userDataDir = tempDir('chromium');
    // A fresh profile (--user-data-dir) per run: playwright takes it as launchPersistentContext's first argument.
    const browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1600, height: 1000 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${port}/eval`, { waitUntil: 'networkidle', timeout: 60_000 });
      await page.getByText('fixture semantic-only').first().waitFor({ timeout: 30_000 });
      const text = await page.innerText('body');
      for (const label of ['fixture hybrid rrf60', 'fixture keyword-only', 'fixture semantic-only']) assert.ok(text.includes(label), `column label '${label}' on the page`);
      // ap_at_10 of the hybrid column: sum 2.9167 over 8 ranked queries (hand-computed in eval.test.ts).
      assert.match(text, /ap_at_10\s+36\.46% \(2\.92\/8\.00\)/);
      assert.match(text, /avg_ap_at_10\s+0\.36/);
      mkdirSync(join(ROOT, 'test-output'), { recursive: true });
      await page.screenshot({ path: join(ROOT, 'test-output', 'harness-view.png') });
      assert.ok(existsSync(join(ROOT, 'test-output', 'harness-view.png')));
    } finally {
      await browser.close();
      rmSync(userDataDir, { recursive: true, force: true });
    }
  });
});
