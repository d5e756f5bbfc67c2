#!/usr/bin/env bash
# kab plan without running anything (no root): plans from recorded A/A runs
# (--csv), the same numbers for the same seed, its sentences, its errors on
# bad input, and tests/plan/validate.sh on runs recorded on a real machine
# (tests/plan/data/*.csv). Ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
kab=${KAB:-build/kab}
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$kab" ] || { echo "plan: $kab is not built"; echo "plan: 0 passed, 1 failed"; exit 1; }

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
check() { local d=$1; shift; if "$@"; then ok; else fail "$d"; fi; }

# expect_err DESC WANT_STDERR_SUBSTRING ARGS...: exit 2, that message
expect_err() {
	local d=$1 want=$2; shift 2
	"$kab" plan "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc -ne 2 ]; then fail "$d: exit $rc, expected 2"; return; fi
	if ! grep -qF -- "$want" "$tmp/err"; then fail "$d: stderr lacks \"$want\":"; sed 's/^/    /' "$tmp/err"; return; fi
	ok
}

aa=tests/compare/aa.csv
"$kab" plan --csv $aa --effect 5% --sims 500 >"$tmp/text" 2>&1
check "plan --csv exits 0" [ $? -eq 0 ]
check "a recommendation sentence" grep -qE '^pairs = [0-9]+ decides a 5% change in time.wall_s with 80% power \(simulated: [0-9]+%\)$' "$tmp/text"
check "the table has the pair counts" grep -qE '^Metric +dir +noise +upper +min_chg +N=6 +N=8 +N=10 +N=15 +N=20$' "$tmp/text"
check "says fewer than 6 pairs decide nothing" grep -q "Fewer than 6 pairs decide nothing" "$tmp/text"

"$kab" plan --csv $aa --effect 5% --sims 500 --format json >"$tmp/a.json" 2>&1
"$kab" plan --csv $aa --effect 5% --sims 500 --format json >"$tmp/b.json" 2>&1
check "json parses" python3 -m json.tool "$tmp/a.json" >/dev/null
check "same seed, same plan" cmp -s "$tmp/a.json" "$tmp/b.json"
"$kab" plan --csv $aa --effect 5% --sims 500 --seed 99 --format json >"$tmp/c.json" 2>&1
check "another seed, other draws" bash -c "! cmp -s $tmp/a.json $tmp/c.json"
check "json: pairs and power for the effect, the noise mode" python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["effect_pct"] == 5 and p["noise"] == "upper" and p["min_deciding_pairs"] == 6
m = {x["name"]: x for x in p["metrics"]}
w = m["time.wall_s"]
assert w["planned"] and w["effect"]["pairs"] >= 6 and w["effect"]["power"] >= 0.8
assert w["noise_simulated_pct"] > w["noise_pct"]
assert [c["pairs"] for c in w["min_effect_pct"]] == [6, 8, 10, 15, 20]
e = [c["effect_pct"] for c in w["min_effect_pct"]]
assert all(a >= b for a, b in zip(e, e[1:])), e
assert all(x > w["min_change_pct"] for x in e), e
assert w["min_change_pct"] == 1 and w["equivalence_pct"] == 2, w
' "$tmp/a.json"
"$kab" plan --csv $aa --effect 5% --sims 500 --noise estimate --format json >"$tmp/e.json" 2>&1
# (5% here is decided at the 6-pair floor either way: the smallest change
# each decides at 6 pairs tells them apart)
check "--noise estimate plans no more pairs than the upper bound, and smaller changes" python3 -c '
import json, sys
u = {x["name"]: x for x in json.load(open(sys.argv[1]))["metrics"]}["time.wall_s"]
e = {x["name"]: x for x in json.load(open(sys.argv[2]))["metrics"]}["time.wall_s"]
assert e["effect"]["pairs"] <= u["effect"]["pairs"], (e, u)
assert e["min_effect_pct"][0]["effect_pct"] < u["min_effect_pct"][0]["effect_pct"], (e, u)
' "$tmp/a.json" "$tmp/e.json"

"$kab" plan --csv $aa --effect 0.5% --sims 500 --primary time.wall_s >"$tmp/below" 2>&1
check "below min_change: said, whatever the pairs" grep -qE '^time.wall_s: an effect of 0.5% is not above min_change = 1.0%: kab calls no change that small better or worse, whatever the pairs' "$tmp/below"
check "--primary: only that metric" bash -c "! grep -q bogo '$tmp/below'"

# a counter that was 0, and a metric with too few pairs
cat >"$tmp/odd.csv" <<'CSV'
metric,variant,pair,value,direction
zero,A,0,0,lower
zero,A2,0,3,lower
zero,A,1,2,lower
zero,A2,1,2,lower
zero,A,2,1,lower
zero,A2,2,1,lower
short,A,0,10,higher
short,A2,0,11,higher
short,A,1,10,higher
short,A2,1,10.5,higher
CSV
"$kab" plan --csv "$tmp/odd.csv" --sims 200 >"$tmp/odd" 2>&1
check "a zero counter is not planned, with the reason" grep -q "zero .*not planned: zero in some calibration runs" "$tmp/odd"
check "two pairs are not planned, with the reason" grep -q "short .*not planned: 2 complete pairs in the calibration (at least 3 needed)" "$tmp/odd"

# bad input
expect_err "--effect 0" "--effect 0: expected a percentage above 0 and below 100" --csv $aa --effect 0
expect_err "--effect 100%" "--effect 100%: expected a percentage" --csv $aa --effect 100%
expect_err "--effect -5%" "--effect -5%: expected a percentage" --csv $aa --effect -5%
expect_err "--effect 5%%" "--effect 5%%: expected a percentage" --csv $aa --effect 5%%
expect_err "--effect five" "--effect five: expected a percentage" --csv $aa --effect five
expect_err "--pairs 2" "--pairs 2: the calibration's pairs are a number from 3 to 200" --csv $aa --pairs 2
expect_err "--pairs x" "--pairs x: the calibration's pairs" --csv $aa --pairs x
expect_err "--format xml" "unknown format \"xml\"" --csv $aa --format xml
expect_err "--noise both" "--noise both: upper" --csv $aa --noise both
expect_err "two sources" "usage: kab plan" --csv $aa --from 1
expect_err "no job" "usage: kab plan" 
expect_err "--from in a missing database" "database $tmp/none.db does not exist" --from 1 --db "$tmp/none.db"
cat >"$tmp/nowl.job" <<'JOB'
[job]
name = nowl
[variant A]
name = a
[variant B]
name = b
JOB
expect_err "a job without a workload" "a job needs at least one [workload NAME] section" "$tmp/nowl.job"
expect_err "a missing job file" "$tmp/missing.job" "$tmp/missing.job"
sed -n 1,3p $aa | sed 's/A-again/A/' >"$tmp/one.csv"
expect_err "runs of one variant" "only one variant" --csv "$tmp/one.csv"

printf 'metric,variant,pair,value,direction\n' >"$tmp/neutral.csv"
for p in 0 1 2 3; do printf 'n,A,%s,1%s,neutral\nn,B,%s,1%s,neutral\n' $p $p $p $((p + 1)) >>"$tmp/neutral.csv"; done
expect_err "nothing to plan" "no metric to plan" --csv "$tmp/neutral.csv"
check "a neutral metric named primary is planned" bash -c "'$kab' plan --csv '$tmp/neutral.csv' --primary n --sims 200 | grep -qE '^n +. +[0-9.]+%'"

# the plan against runs recorded on a real machine (tests/plan/data/)
for csv in tests/plan/data/*.csv; do
	[ -f "$csv" ] || continue
	args=()
	[ -f "${csv%.csv}.args" ] && eval "args=($(cat "${csv%.csv}.args"))"
	tests/plan/validate.sh "$csv" "${args[@]+"${args[@]}"}" >"$tmp/validate" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -qE '^validate: [1-9][0-9]* passed, 0 failed' "$tmp/validate"; then
		ok
	else
		fail "validate.sh $csv (exit $rc):"
		sed 's/^/    /' "$tmp/validate"
	fi
done

echo "plan: $passed passed, $failed failed"
[ $failed -eq 0 ]
