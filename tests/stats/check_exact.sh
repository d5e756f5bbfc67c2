#!/usr/bin/env bash
# Enumerates again, by brute force, the exact conditional p-values of the
# data sets committed in tests/stats/exact.tsv (exact_ref.py --inputs: the
# inputs are never regenerated) and compares them with the committed ones
# within a relative 1e-9 (tests/numcmp.py --tsv): a change to exact_ref.py
# that answers differently shows up, named by row and column. Needs only
# Python's standard library. build/tests/test_stats_exact compares kab's
# answers with the same file.
# Ends with "N passed, N failed, N skipped" like the other suites.
set -u
cd "$(dirname "$0")/../.."
py=/usr/bin/python3
committed=tests/stats/exact.tsv
tolerance=1e-9

if ! [ -x "$py" ]; then
	echo "check_exact: skipped: no $py"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if ! "$py" tests/stats/exact_ref.py --inputs "$committed" >"$tmp"; then
	echo "check_exact: exact_ref.py --inputs $committed failed"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

rows=$(grep -vc '^#' "$committed")
if "$py" tests/numcmp.py --tsv --rel "$tolerance" "$committed" "$tmp"; then
	echo "check_exact: $committed ($((rows - 1)) data sets) agrees with a fresh enumeration within a relative $tolerance"
	echo "1 passed, 0 failed, 0 skipped"
	exit 0
fi
echo "check_exact: $committed differs from a fresh enumeration of its own data sets"
echo "  (if exact_ref.py changed on purpose: $py tests/stats/exact_ref.py --inputs $committed > NEW && mv NEW $committed, then run build/tests/test_stats_exact)"
echo "0 passed, 1 failed, 0 skipped"
exit 1
