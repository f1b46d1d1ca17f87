#!/usr/bin/env bash
# The action's last step: the gate's exit code is the step's (0 pass; 1 a floor or a significant regression; 2, or no
# code at all, nothing trustworthy measured).
set -u
# the history step's code, when it ran, counts too: the worse of the two (2 over 1 over 0; anything else is 2)
rank() { case "$1" in 0) echo 0 ;; 1) echo 1 ;; *) echo 2 ;; esac; }
if [ -n "${HISTORY_CODE:-}" ] && [ "$(rank "$HISTORY_CODE")" -gt "$(rank "${CODE:-}")" ]; then CODE="$HISTORY_CODE"; fi
case "${CODE:-}" in
  0) echo "rankgate: the gate passed"; exit 0 ;;
  1) echo "::error::rankgate: the gate failed: a floor or a significant regression (exit 1; see the step summary and the rankgate-results artifact)"; exit 1 ;;
  *) echo "::error::rankgate: nothing trustworthy was measured: bad input or a broken setup (exit 2; see the Eval and Gate steps)"; exit 2 ;;
esac
