#!/usr/bin/env bash
# The eval step of the action: promptfoo over the team's config into rankgate-out/ (JSONL), or one shard of it
# (INPUT_SHARD=i/N: RANKGATE_SHARD, no gate: the merge job gates), or the merge of the matrix jobs' shard results
# (INPUT_MERGE=true: `rankgate merge`). Its exit code never decides: the gate step does (an eval that wrote nothing is
# exit 2 there). Writes `results=`, and for a shard `shard-index=`, to GITHUB_OUTPUT.
# Environment: INPUT_CONFIG, INPUT_FLOORS, INPUT_JUDGE, INPUT_SHARD, INPUT_MERGE, RANKGATE_BASE_REF, GITHUB_OUTPUT.
set -uo pipefail
out_dir=rankgate-out
mkdir -p "$out_dir"
say() { echo "$1=$2" >>"$GITHUB_OUTPUT"; }
if [ "${INPUT_MERGE:-false}" = true ]; then
  shards=()
  for f in rankgate-shards/*.jsonl; do
    case "$f" in *.rankgate.jsonl) continue ;; esac
    [ -f "$f" ] && shards+=("$f")
  done
  if [ ${#shards[@]} -eq 0 ]; then
    echo "::error::rankgate: merge: no shard results in rankgate-shards/ (the matrix jobs upload rankgate-shard-* artifacts with shard: i/N)"
    say results ""
    exit 0
  fi
  npx --no-install rankgate merge "$out_dir/results.jsonl" "${shards[@]}" || echo "::error::rankgate merge failed (see above): the gate will measure nothing"
  say results "$out_dir/results.jsonl"
  exit 0
fi
[ -f "${INPUT_CONFIG:-promptfooconfig.yaml}" ] || { echo "::error::rankgate: no promptfoo config at ${INPUT_CONFIG:-promptfooconfig.yaml} (input config; npx rankgate init writes one)"; say results ""; exit 0; }
[ -n "${INPUT_FLOORS:-}" ] && export RANKGATE_GATE_FLOORS="$INPUT_FLOORS"
[ -n "${INPUT_JUDGE:-}" ] && export RANKGATE_JUDGE="$INPUT_JUDGE"
out="$out_dir/results.jsonl"
if [ -n "${INPUT_SHARD:-}" ]; then
  if ! [[ "$INPUT_SHARD" =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] || [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
    echo "::error::rankgate: input shard '$INPUT_SHARD': expected i/N with 1 <= i <= N (e.g. \${{ matrix.shard }}/4)"
    say results ""
    exit 0
  fi
  export RANKGATE_SHARD="$INPUT_SHARD" RANKGATE_GATE=off
  out="$out_dir/results-shard-${BASH_REMATCH[1]}.jsonl"
  say shard-index "${BASH_REMATCH[1]}"
fi
npx --no-install promptfoo eval -c "${INPUT_CONFIG:-promptfooconfig.yaml}" --no-cache --no-progress-bar --no-table --output "$out"
echo "rankgate: promptfoo eval exit $? (the gate decides)"
say results "$out"
exit 0
