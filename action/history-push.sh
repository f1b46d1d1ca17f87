#!/usr/bin/env bash
# The scheduled run's history step (docs/history.md): gate the results against the baseline (never updating it) and
# append one line to history.jsonl on the branch rankgate-history with `rankgate history append`, then push that branch
# with the workflow's own token, as github-action-benchmark keeps its data on a branch of the same repository.
#
# The branch holds the history file (and whatever else its tree has); each run adds one commit on top of it, made
# without touching the checkout (git hash-object / mktree / commit-tree). A push that loses a race with another run is
# retried on the new tip (3 attempts). A push that cannot happen (a fork, a read-only token, a protected branch, a
# remote that rejects it) is a notice, never a failure: the run's verdict stands without it.
#
# Environment: RESULTS (the results file), INPUT_FLOORS, INPUT_BASELINE (as the gate step), HISTORY_BRANCH
# (rankgate-history), HISTORY_FILE (history.jsonl), HISTORY_REMOTE (origin), RANKGATE (the command, default
# `npx --no-install rankgate`), GITHUB_OUTPUT (exit-code, pushed). Exit 0 when GITHUB_OUTPUT is set (the next
# step decides by exit-code), else the append's exit code.
set -uo pipefail
branch="${HISTORY_BRANCH:-rankgate-history}"
file="${HISTORY_FILE:-history.jsonl}"
remote="${HISTORY_REMOTE:-origin}"
read -r -a rg <<<"${RANKGATE:-npx --no-install rankgate}"
say() { [ -n "${GITHUB_OUTPUT:-}" ] && printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; return 0; }
notice() { echo "::notice::rankgate history: $1"; }
finish() { say exit-code "$1"; say pushed "$2"; if [ -n "${GITHUB_OUTPUT:-}" ]; then exit 0; fi; exit "$1"; }
# the commit's author: the workflow's bot unless the job set one
export GIT_AUTHOR_NAME="${GIT_AUTHOR_NAME:-github-actions[bot]}" GIT_AUTHOR_EMAIL="${GIT_AUTHOR_EMAIL:-41898282+github-actions[bot]@users.noreply.github.com}"
export GIT_COMMITTER_NAME="${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME}" GIT_COMMITTER_EMAIL="${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}"

if [ -z "${RESULTS:-}" ] || [ ! -s "$RESULTS" ]; then
  echo "::error::rankgate history: the eval wrote no results (${RESULTS:-none}): nothing to append (a broken setup, exit 2)"
  finish 2 false
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
args=(history append "$RESULTS" --file "$work/$file" --as "$branch:$file")
if [ -n "${INPUT_FLOORS:-}" ] && { [ -e "$INPUT_FLOORS" ] || [ "$INPUT_FLOORS" != config/gate.yaml ]; }; then args+=(--floors "$INPUT_FLOORS"); fi
[ -n "${INPUT_BASELINE:-}" ] && args+=(--baseline "$INPUT_BASELINE")

code=2
pushed=false
for attempt in 1 2 3; do
  parent=""
  : >"$work/$file"
  # the branch as the remote has it now (absent on the first run: a new branch)
  if git fetch --no-tags --quiet "$remote" "+refs/heads/$branch:refs/remotes/$remote/$branch" 2>"$work/fetch.err"; then
    parent="$(git rev-parse --verify --quiet "refs/remotes/$remote/$branch^{commit}")"
    git cat-file blob "$parent:$file" >"$work/$file" 2>/dev/null || : >"$work/$file"
  elif grep -qiE "couldn't find remote ref|not our ref|no such ref" "$work/fetch.err"; then
    [ "$attempt" = 1 ] && echo "rankgate history: the branch $branch does not exist yet on $remote: this run starts it"
  else
    # without the branch's tip nothing can be pushed on top of it: gate and append to a fresh file (the verdict and
    # the drift over the baseline's history still stand), and say so
    "${rg[@]}" "${args[@]}"
    code=$?
    notice "cannot read the branch $branch from $remote ($(head -n 1 "$work/fetch.err")): this run's line is not pushed"
    finish "$code" false
  fi
  before="$(wc -c <"$work/$file")"
  if [ "$attempt" = 1 ]; then
    "${rg[@]}" "${args[@]}"
    code=$?
  else
    # a retry on the new tip: the same gate, quietly (its output was printed above)
    "${rg[@]}" "${args[@]}" >/dev/null 2>&1
    code=$?
  fi
  if [ "$(wc -c <"$work/$file")" = "$before" ]; then
    echo "rankgate history: nothing appended (exit $code): nothing to push"
    finish "$code" false
  fi
  # one commit on top of the branch: its tree with the history file replaced, the checkout left as it is
  blob="$(git hash-object -w "$work/$file")"
  tree="$({ [ -n "$parent" ] && git ls-tree "$parent" | awk -F '\t' -v f="$file" '$2 != f'; printf '100644 blob %s\t%s\n' "$blob" "$file"; } | git mktree)"
  run_id="${GITHUB_RUN_ID:-${CI_PIPELINE_ID:-}}"
  measured="${GITHUB_SHA:-${CI_COMMIT_SHA:-}}"
  commit="$(git commit-tree "$tree" ${parent:+-p "$parent"} -m "rankgate history: ${run_id:+run $run_id, }exit $code${measured:+, measured $measured}")"
  out="$(git push --porcelain "$remote" "$commit:refs/heads/$branch" 2>&1)"
  rc=$?
  if [ $rc -eq 0 ]; then
    pushed=true
    n="$(wc -l <"$work/$file" | tr -d ' ')"
    echo "rankgate history: pushed $(git rev-parse --short "$commit") to $remote $branch ($n line$([ "$n" = 1 ] || echo s))"
    finish "$code" true
  fi
  # another run pushed first: fetch its tip and append again on top of it
  if printf '%s' "$out" | grep -qE '\[rejected\].*(fetch first|non-fast-forward)'; then
    echo "rankgate history: $branch moved on $remote meanwhile: appending again on its new tip (attempt $attempt of 3)"
    continue
  fi
  notice "not pushed to $branch on $remote: $(printf '%s' "$out" | grep -E 'rejected|denied|error|fatal|403' | head -n 1 | sed 's/^[[:space:]]*//') (a fork or a read-only token: give the job permissions: contents: write); the verdict stands, the history keeps its lines"
  finish "$code" false
done
notice "not pushed to $branch on $remote: it kept moving (3 attempts); the next run appends again"
finish "$code" "$pushed"
