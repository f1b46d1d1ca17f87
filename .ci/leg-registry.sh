#!/usr/bin/env bash
# CI's third leg (.ci/run runs it after the other two; runnable alone): rankgate installed the way a team installs it,
# from a registry (docs/adopting.md, CONTRIBUTING.md). A verdaccio (pinned: 6.8.0 is the last release that installs on
# Node 20, with node-fetch overridden to 2.7.0; ../shared/notes/stack.md) listens on 127.0.0.1 with its storage in
# .cache/registry (gitignored):
#   1. seed: started with the npm registry as its uplink, it installs this checkout's packed package and the pinned
#      promptfoo into a throwaway directory; verdaccio keeps every package that install fetched (npm's own downloads:
#      the install step of this leg, as npm ci is leg 1's);
#   2. offline: restarted with NO uplink it serves only what it holds; test-dist/ then publishes this checkout's package
#      and the previous release's (.ci/previous-release: "<version> <commit>", packed from that commit with git archive)
#      and takes a team's path with no network: npm i -D promptfoo rankgate@<version>, npx rankgate init, the eval, the
#      gate, and an upgrade from the previous release that keeps its baseline readable.
# Environment: RANKGATE_REGISTRY_PORT (default 48730), RANKGATE_TEST_JOBS.
# Exit status: the test runner's; 2 when the leg cannot be set up.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
cache="$repo/.cache/registry"
VERDACCIO_VERSION=6.8.0
PORT="${RANKGATE_REGISTRY_PORT:-48730}"
url="http://127.0.0.1:$PORT"
pf_version="$(node -p "require('./package-lock.json').packages['node_modules/promptfoo'].version")"
mkdir -p "$cache"

# 1. verdaccio, pinned, in its own install
vbin="$cache/verdaccio/node_modules/.bin/verdaccio"
if [ ! -x "$vbin" ] || [ "$(node -p "require('$cache/verdaccio/node_modules/verdaccio/package.json').version" 2>/dev/null)" != "$VERDACCIO_VERSION" ]; then
  echo "leg-registry: npm install verdaccio@$VERDACCIO_VERSION"
  rm -rf "$cache/verdaccio"
  mkdir -p "$cache/verdaccio"
  printf '{"name":"rankgate-ci-registry","private":true,"overrides":{"node-fetch":"2.7.0"}}\n' >"$cache/verdaccio/package.json"
  (cd "$cache/verdaccio" && npm install --no-audit --no-fund --loglevel=error "verdaccio@$VERDACCIO_VERSION" >/dev/null)
fi

# 2. the packages: this checkout, and the previous release packed from its commit
pkgs="$cache/packages"
rm -rf "$pkgs"
mkdir -p "$pkgs"
npm pack --silent --pack-destination "$pkgs" >/dev/null
read -r prev_version prev_commit <.ci/previous-release
if ! git cat-file -e "$prev_commit^{commit}" 2>/dev/null; then
  echo "leg-registry: the previous release's commit $prev_commit is not in this clone (a shallow clone?): fetch the history (git fetch --unshallow)" >&2
  exit 2
fi
prevtree="$(mktemp -d /tmp/rankgate-prev.XXXXXX)"
git archive "$prev_commit" | tar -x -C "$prevtree"
ln -s "$repo/node_modules" "$prevtree/node_modules"
# that commit was installed from npm pack tarballs (it said "private": the registry had no copy): published as it was
node -e "const f=process.argv[1];const p=JSON.parse(require('fs').readFileSync(f,'utf8'));delete p.private;p.version=process.argv[2];require('fs').writeFileSync(f,JSON.stringify(p,null,2)+'\n')" "$prevtree/package.json" "$prev_version"
(cd "$prevtree" && npm pack --silent --pack-destination "$pkgs" >/dev/null)
rm -rf "$prevtree"
ls -l "$pkgs"

config() { # $1 = file, $2 = with uplink (yes/no)
  {
    echo "storage: $cache/storage"
    echo "auth: { htpasswd: { file: $cache/htpasswd, max_users: -1 } }"
    if [ "$2" = yes ]; then echo "uplinks: { npmjs: { url: https://registry.npmjs.org/, timeout: 120s, maxage: 30m } }"; else echo "uplinks: {}"; fi
    echo "packages:"
    echo "  'rankgate': { access: \$all, publish: \$anonymous \$authenticated, unpublish: \$anonymous \$authenticated }"
    if [ "$2" = yes ]; then echo "  '**': { access: \$all, publish: \$anonymous \$authenticated, proxy: npmjs }"; else echo "  '**': { access: \$all, publish: \$anonymous \$authenticated }"; fi
    echo "server: { keepAliveTimeout: 60 }"
    echo "max_body_size: 200mb"
    echo "log: { type: stdout, format: pretty, level: warn }"
  } >"$1"
}
vpid=""
stop() { if [ -n "$vpid" ]; then kill "$vpid" 2>/dev/null || true; wait "$vpid" 2>/dev/null || true; vpid=""; fi; }
trap stop EXIT
start() { # $1 = config
  if curl -fsS "$url/-/ping" >/dev/null 2>&1; then
    echo "leg-registry: something already answers on $url: stop it, or set RANKGATE_REGISTRY_PORT" >&2
    exit 2
  fi
  "$vbin" --config "$1" --listen "127.0.0.1:$PORT" >"$cache/verdaccio.log" 2>&1 &
  vpid=$!
  for _ in $(seq 1 150); do
    kill -0 "$vpid" 2>/dev/null || break
    curl -fsS "$url/-/ping" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "leg-registry: verdaccio did not answer on $url (see $cache/verdaccio.log)" >&2
  cat "$cache/verdaccio.log" >&2
  exit 2
}

# 3. seed: what a team's install fetches, kept by verdaccio (rankgate is never proxied: only this leg publishes it)
config "$cache/seed.yaml" yes
start "$cache/seed.yaml"
seed="$(mktemp -d /tmp/rankgate-seed.XXXXXX)"
echo '{"name":"seed","private":true}' >"$seed/package.json"
SECONDS=0
for tgz in "$pkgs"/rankgate-*.tgz; do
  (cd "$seed" && npm install --no-audit --no-fund --no-save --loglevel=error --registry "$url" "promptfoo@$pf_version" "$tgz" >/dev/null)
done
rm -rf "$seed"
echo "leg-registry: seeded $cache/storage through verdaccio in ${SECONDS}s ($(du -sh "$cache/storage" | cut -f1))"
stop

# 4. offline: the tests take a team's path against this registry alone
config "$cache/offline.yaml" no
start "$cache/offline.yaml"
export RANKGATE_TEST_REGISTRY="$url" RANKGATE_TEST_PACKAGES="$pkgs" RANKGATE_TEST_PREVIOUS="$prev_version" RANKGATE_TEST_PROMPTFOO="$pf_version"
node scripts/run-tests.mjs --root test-dist --reporter spec
