#!/usr/bin/env bash
# The change-point detector, measured (issue 17, "Detection, measured"):
# 376 seeded histories of 30-200 nights (tests/stats/cp_histories.py: steps
# of 2-20 % in 1-5 % noise, two steps, steps beside spikes, single spikes,
# slow drifts, flat noise, integer counters) run through the C detector
# (build/tests/cp_driver) and the independent Python implementation
# (changepoint_ref.py), every one through both.
# Checks:
#   1. C and Python find the same change points (indices exactly; means, %,
#      p and t within a relative 1e-6), with the default parameters;
#   2. the same with --min-segment 2 --window 5 --alpha 0.05 (thousands of
#      points, and the ties of integer counters);
#   3. the floors on the truth: recall >= 0.9 where the step is >= 4 x the
#      noise, precision >= 0.9, no point in a spike history, <= 1 false
#      point per 1000 flat nights; the per-cell table is printed.
# Skips (with the reason) when Debian's python3 has no numpy and scipy:
# `apt-get install python3-scipy`. Ends with "N passed, N failed, N skipped"
# like the other suites. Takes a few seconds.
set -u
cd "$(dirname "$0")/../.."
py=/usr/bin/python3
driver=build/tests/cp_driver

if ! "$py" -c 'import scipy, numpy' 2>/dev/null; then
	echo "check_changepoint: skipped: $py cannot import scipy and numpy (install python3-scipy)"
	echo "0 passed, 0 failed, 3 skipped"
	exit 0
fi
if ! make --no-print-directory -s "$driver" >/dev/null; then
	echo "check_changepoint: could not build $driver (make $driver)"
	echo "0 passed, 3 failed, 0 skipped"
	exit 1
fi

tmp=$(mktemp -d /tmp/kab-check-cp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
if ! count=$("$py" tests/stats/cp_histories.py gen "$tmp/h"); then
	echo "check_changepoint: cp_histories.py gen failed"
	echo "0 passed, 3 failed, 0 skipped"
	exit 1
fi
files=("$tmp"/h/*.txt)
t0=$(date +%s.%N)
"$driver" "${files[@]}" >"$tmp/c.out" || { echo "check_changepoint: $driver failed"; echo "0 passed, 2 failed, 0 skipped"; exit 1; }
t1=$(date +%s.%N)
"$py" tests/stats/changepoint_ref.py "${files[@]}" >"$tmp/ref.out" || { echo "check_changepoint: changepoint_ref.py failed"; echo "0 passed, 2 failed, 0 skipped"; exit 1; }
t2=$(date +%s.%N)
echo "check_changepoint: $count histories; C $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s, Python $(awk -v a="$t1" -v b="$t2" 'BEGIN { printf "%.2f", b - a }') s"

# 1. agreement with the defaults (the scorer's first lines)
if "$py" tests/stats/cp_histories.py score "$tmp/h" "$tmp/c.out" "$tmp/ref.out" >"$tmp/agree.txt"; then
	sed -n '/^C against Python/,/largest relative/p' "$tmp/agree.txt"
	passed=$((passed + 1))
else
	sed -n '1,/largest relative/p' "$tmp/agree.txt" | head -40
	echo "check_changepoint: FAIL: the C detector and changepoint_ref.py disagree"
	failed=$((failed + 1))
fi
# 3. agreement again with small segments and windows and a loose level:
# many more points, and the integer counters' ties at every turn
loose=(--min-segment 2 --window 5 --alpha 0.05)
if "$driver" "${loose[@]}" "${files[@]}" >"$tmp/c2.out" &&
	"$py" tests/stats/changepoint_ref.py "${loose[@]}" "${files[@]}" >"$tmp/ref2.out" &&
	"$py" tests/stats/cp_histories.py score "$tmp/h" "$tmp/c2.out" "$tmp/ref2.out" >"$tmp/agree2.txt"; then
	echo "with ${loose[*]}:"
	sed -n '/^C against Python/,/largest relative/p' "$tmp/agree2.txt"
	passed=$((passed + 1))
else
	sed -n '1,/largest relative/p' "$tmp/agree2.txt" | head -40
	echo "check_changepoint: FAIL: with ${loose[*]}, the C detector and changepoint_ref.py disagree"
	failed=$((failed + 1))
fi
if "$py" tests/stats/cp_histories.py score "$tmp/h" "$tmp/c.out" --floors >"$tmp/score.txt"; then
	passed=$((passed + 1))
else
	echo "check_changepoint: FAIL: a floor is missed"
	failed=$((failed + 1))
fi
cat "$tmp/score.txt"
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
