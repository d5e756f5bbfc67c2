#!/usr/bin/env bash
# The paired bisection's accuracy, by simulation (issue 27, doc/bisect.md):
# build/tests/bisect_sim runs kab's bisection (harness/exec/bisect.c and
# the rules of harness/stats/bisect_rule.c) with a simulated runner over
# noise CoV 1, 2, 5 %, effects 2, 5, 10, 20 % and ranges of 8, 64 and 1024
# commits, REPS bisections a cell, the naive rule beside it; real git
# bisect drives a subset in a generated repository, and the in-process
# chooser the rest must agree with it at every step. Checks the floors:
# the right culprit in >= 95 % of a cell's bisections where the effect is
# >= 4x the noise, a wrong culprit in <= 1 %, none named in >= 99 % of
# A/A bisections, a culprit beside skipped commits in the range given, two
# culprits both named. Then the two optional controls of a confirmed
# culprit (N 64, the same noise and effects, REPS a cell and world): forced
# alignment (a real culprit labelled layout-sensitive in <= 1 %, one whose
# step is the code's layout in >= 90 % of each cell where it is >= 4x the
# noise) and the revert on BAD (a real culprit confirmed in >= 99 %, one
# whose revert gives nothing back unconfirmed in >= 99 %, where >= 4x).
# Prints the tables. Ends with "N passed, N failed, N skipped" like the
# other suites. Takes 15-40 s (git's about 10).
set -u
cd "$(dirname "$0")/../.."
sim=build/tests/bisect_sim
reps=${REPS:-400}

if ! make --no-print-directory -s "$sim" >/dev/null; then
	echo "check_bisect: could not build $sim (make $sim)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
git=""
if ! command -v git >/dev/null; then
	echo "check_bisect: no git: the grid runs with the in-process chooser only, unchecked against git"
	git=--no-git
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
t0=$(date +%s.%N)
"$sim" --reps "$reps" $git >"$tmp" 2>&1
rc=$?
# the table and the checks, the time, then the summary line last
sed '$d' "$tmp"
echo "check_bisect: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s ($sim --reps $reps${git:+ $git})"
tail -n 1 "$tmp"
exit $rc
