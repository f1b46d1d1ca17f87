#!/usr/bin/env bash
# The rankgate this action runs is the one of its own version (the package.json beside action.yml): the team's
# node_modules/rankgate when it is that version, else `npm install --no-save rankgate@<version>` from the registry.
# Installs the team's dependencies first when node_modules is missing (npm ci with a lockfile, else npm install).
# Environment: GITHUB_ACTION_PATH (set by the runner). Exit 2 when Node or npm is missing.
set -euo pipefail
command -v node >/dev/null && command -v npm >/dev/null || { echo "::error::rankgate: Node and npm are needed: add actions/setup-node before this action"; exit 2; }
want="$(node -p "require(process.argv[1]).version" "$GITHUB_ACTION_PATH/package.json")"
if [ ! -d node_modules ]; then
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi
fi
have="$(node -p "try { require(require('path').resolve('node_modules/rankgate/package.json')).version } catch { '' }")"
if [ "$have" != "$want" ]; then
  echo "rankgate: node_modules holds rankgate ${have:-(none)}; installing rankgate@$want, this action's version"
  npm install --no-save --no-audit --no-fund "rankgate@$want"
fi
v="$(npx --no-install rankgate --version)"
echo "rankgate $v (Node $(node --version))"
