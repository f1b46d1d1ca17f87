/**
 * Debian's /usr/bin/chromium driven by playwright-core, launched as test/harness/view.test.ts launches it (the flags of
 * /work/shared/notes/stack.md, "Browser checks"). Tests skip when it is absent: .ci/setup-chromium.sh installs it.
 */
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.RANKGATE_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** The `skip` option of a browser test: false when Chromium is there, else the reason naming it. */
export const chromiumSkip = (): false | string => (existsSync(CHROMIUM) ? false : `needs ${CHROMIUM} (apt-get install chromium; .ci/setup-chromium.sh)`);

export async function launchChromium(): Promise<import('playwright-core').Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}
