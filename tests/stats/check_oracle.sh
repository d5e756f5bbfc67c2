#!/usr/bin/env bash
# Asks scipy again about the data sets committed in tests/stats/oracle.tsv
# (gen_cases.py --inputs: the inputs are never regenerated, since numpy's
# draws go through libm, whose last digits differ between CPUs) and
# compares its answers with the committed ones, number by number, within a
# relative 1e-9 (tests/numcmp.py --tsv): a change to gen_cases.py or a scipy
# that answers differently shows up, a last-ulp difference of this CPU's
# libm does not. Each differing value is named with its row and column.
# Skips (with the reason) when Debian's python3 has no scipy:
# `apt-get install python3-scipy`.
# Ends with "N passed, N failed, N skipped" like the other suites.
set -u
cd "$(dirname "$0")/../.."
py=/usr/bin/python3
committed=tests/stats/oracle.tsv
tolerance=1e-9

if ! "$py" -c 'import scipy, numpy' 2>/dev/null; then
	echo "check_oracle: skipped: $py cannot import scipy and numpy (install python3-scipy)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if ! "$py" tests/stats/gen_cases.py --inputs "$committed" >"$tmp"; then
	echo "check_oracle: gen_cases.py --inputs $committed failed"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

if "$py" tests/numcmp.py --tsv --rel "$tolerance" "$committed" "$tmp"; then
	echo "check_oracle: $committed agrees with scipy ($(grep -m1 '^#' "$tmp" | sed 's/.*with //; s/;.*//')) within a relative $tolerance"
	echo "1 passed, 0 failed, 0 skipped"
	exit 0
fi
echo "check_oracle: $committed differs from scipy's answers on its own data sets"
echo "  committed: $(grep -m1 '^#' "$committed")"
echo "  fresh:     $(grep -m1 '^#' "$tmp")"
echo "  (if scipy changed on purpose: $py tests/stats/gen_cases.py --inputs $committed > NEW && mv NEW $committed, then run build/tests/test_stats_oracle)"
echo "0 passed, 1 failed, 0 skipped"
exit 1
