# shellcheck shell=bash
# Sourced by .ci/run (set -euo pipefail, as root): installs Debian's Chromium for the `promptfoo view`
# browser test (test/harness/view.test.ts drives it with playwright-core; never `npx playwright install`,
# which downloads from the internet). Exports RANKGATE_CHROMIUM for the tests. Safe to re-run.

rankgate_chromium_setup() {
  export DEBIAN_FRONTEND=noninteractive
  if [ ! -x /usr/bin/chromium ]; then
    echo "setup-chromium: apt-get install chromium"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium fonts-liberation >/dev/null
  fi
  if [ -x /usr/bin/chromium ]; then
    export RANKGATE_CHROMIUM=/usr/bin/chromium
    echo "setup-chromium: $(/usr/bin/chromium --version 2>/dev/null || echo 'chromium installed')"
  else
    echo "setup-chromium: /usr/bin/chromium is still missing; the browser test will skip" >&2
  fi
}

rankgate_chromium_setup
