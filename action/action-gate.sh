#!/usr/bin/env bash
# The gate step of the action: `rankgate gate` of the results (on a pull request judged by the base branch: BASE_REF),
# the Markdown comment and the JSON report, the HTML report, the optional sweep, the step summary. Writes exit-code,
# verdict (the verdict's first line), results, report and comment to GITHUB_OUTPUT; always exits 0 (the last step of
# the action fails the job by the exit code, unless fail-on-gate is false).
# Environment: RESULTS, BASE_REF, INPUT_FLOORS, INPUT_BASELINE, INPUT_SWEEP, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY.
set -uo pipefail
out_dir=rankgate-out
mkdir -p "$out_dir"
say() { printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; }
code=0
verdict=""
if [ -z "${RESULTS:-}" ] || [ ! -s "$RESULTS" ]; then
  code=2
  verdict="rankgate gate ERROR (exit 2): the eval wrote no results (see the Eval step's log): a broken setup, not a quality result"
  echo "::error::$verdict"
else
  args=(gate "$RESULTS" --base-ref "${BASE_REF:-none}" --comment "$out_dir/comment.md" --report "$out_dir/report.json")
  # the default floors file may be absent (the built-in floors apply); a floors file the input names must exist
  if [ -n "${INPUT_FLOORS:-}" ] && { [ -e "$INPUT_FLOORS" ] || [ "$INPUT_FLOORS" != config/gate.yaml ]; }; then args+=(--floors "$INPUT_FLOORS"); fi
  [ -n "${INPUT_BASELINE:-}" ] && args+=(--baseline "$INPUT_BASELINE")
  npx --no-install rankgate "${args[@]}" >"$out_dir/gate.log" 2>&1
  code=$?
  cat "$out_dir/gate.log"
  verdict="$(grep -E '^rankgate gate (PASSED|FAILED|ERROR)' "$out_dir/gate.log" | tail -n 1)"
  [ -n "$verdict" ] || verdict="rankgate gate exit $code (see the log)"
  npx --no-install rankgate report "$RESULTS" --html "$out_dir/report.html" >/dev/null 2>&1 || echo "::warning::rankgate report could not write the HTML report"
fi
case "$code" in 0 | 1 | 2) ;; *) code=2 ;; esac
if [ -n "${INPUT_SWEEP:-}" ] && [ "$INPUT_SWEEP" != none ]; then
  npx --no-install rankgate eval --sweep "$INPUT_SWEEP" --out-dir "$out_dir/sweep" || echo "::warning::the sweep did not finish (not gated)"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  if [ -s "$out_dir/comment.md" ]; then cat "$out_dir/comment.md" >>"$GITHUB_STEP_SUMMARY"; else printf '%s\n' "$verdict" >>"$GITHUB_STEP_SUMMARY"; fi
fi
say exit-code "$code"
say verdict "$(printf '%s' "$verdict" | tr -d '\r\n')"
say results "${RESULTS:-}"
say report "$([ -s "$out_dir/report.html" ] && echo "$out_dir/report.html")"
say comment "$([ -s "$out_dir/comment.md" ] && echo "$out_dir/comment.md")"
exit 0
