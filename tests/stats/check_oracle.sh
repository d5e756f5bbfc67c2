#!/usr/bin/env bash
# Regenerates the scipy oracle and diffs it against the committed
# tests/stats/oracle.tsv, so a change to gen_cases.py or a scipy that
# answers differently shows up. Skips (with the reason) when Debian's
# python3 has no scipy: `apt-get install python3-scipy`.
# Ends with "N passed, N failed, N skipped" like the other suites.
set -u
cd "$(dirname "$0")/../.."
py=/usr/bin/python3
committed=tests/stats/oracle.tsv

if ! "$py" -c 'import scipy, numpy' 2>/dev/null; then
	echo "check_oracle: skipped: $py cannot import scipy and numpy (install python3-scipy)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if ! "$py" tests/stats/gen_cases.py >"$tmp"; then
	echo "check_oracle: gen_cases.py failed"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

# The comment line names the scipy and numpy versions; data lines must match.
if diff -u <(grep -v '^#' "$committed") <(grep -v '^#' "$tmp"); then
	echo "check_oracle: $committed matches scipy ($(grep -m1 '^#' "$tmp" | sed 's/.*with //; s/;.*//'))"
	echo "1 passed, 0 failed, 0 skipped"
	exit 0
fi
echo "check_oracle: $committed differs from a fresh run"
echo "  committed: $(grep -m1 '^#' "$committed")"
echo "  fresh:     $(grep -m1 '^#' "$tmp")"
echo "  (regenerate with: $py tests/stats/gen_cases.py > $committed, then run build/tests/test_stats_oracle)"
echo "0 passed, 1 failed, 0 skipped"
exit 1
