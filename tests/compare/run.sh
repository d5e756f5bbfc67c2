#!/usr/bin/env bash
# Golden tests for `kab compare`, run from anywhere:
#
#   tests/compare/NAME.csv                 an input (NAME.args: extra arguments,
#                                          shell-quoted, optional)
#   tests/compare/expected/NAME.FORMAT.out its exact output in each format
#                                          (text in a UTF-8 locale, ascii = text
#                                          with --ascii, cover-letter, markdown,
#                                          json, csv)
#   tests/compare/bad/NAME.csv             a bad input (NAME.args optional)
#   tests/compare/bad/NAME.err             its exact stderr; exit code 2
#
# Also: the text format falls back to ASCII when the locale is not UTF-8;
# JSON parses (python3 -m json.tool) and has no NaN; the seed 000 table's
# Delta column comes out character for character; usage errors exit 2.
# KAB=path overrides build/kab; COMPARE_UPDATE=1 rewrites the expected files
# from the current output (review the diff before committing).
set -u
cd "$(dirname "$0")/../.."
kab=${KAB:-build/kab}
update=${COMPARE_UPDATE:-0}
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
formats="text ascii cover-letter markdown json csv"

if [ ! -x "$kab" ]; then
	echo "compare: $kab is not built (make build/kab)"
	echo "compare: 0 passed, 1 failed"
	exit 1
fi

pass() { passed=$((passed + 1)); }
fail() {
	failed=$((failed + 1))
	echo "FAIL $1: $2"
}

# same NAME EXPECTED ACTUAL [numbers]: ACTUAL is EXPECTED; with "numbers",
# the expectation was computed on another machine, whose libm can differ
# in a double's last digits: numbers are compared by tests/numcmp.py within
# a relative 1e-9 (json and csv print every number in full), or to one
# unit in the last printed place (the rounded text formats). Error
# messages are compared to the letter.
same() {
	if [ "$update" = 1 ]; then
		mkdir -p "$(dirname "$2")"
		cp "$3" "$2"
	fi
	if diff -u "$2" "$3" >"$tmp/diff" 2>&1; then
		return 0
	fi
	if [ "${4:-}" = numbers ]; then
		local full=
		case $1 in *" json"|*" csv") full=--full ;; esac
		python3 tests/numcmp.py $full --rel 1e-9 "$2" "$3" >"$tmp/numcmp" 2>&1 && return 0
		fail "$1" "output differs from $2 beyond the tolerance:"
		sed 's/^/    /' "$tmp/numcmp" | head -40
		return 1
	fi
	fail "$1" "output differs from $2:"
	sed 's/^/    /' "$tmp/diff" | head -40
	return 1
}

# run_compare CSV FORMAT: kab compare with the CSV's extra arguments.
run_compare() {
	local csv=$1 fmt=$2 args=() extra
	[ -f "${csv%.csv}.args" ] && eval "args=($(cat "${csv%.csv}.args"))"
	case $fmt in
	text) extra=(--format text) ;;
	ascii) extra=(--format text --ascii) ;;
	*) extra=(--format "$fmt") ;;
	esac
	LC_ALL= LC_CTYPE= LANG=C.UTF-8 "$kab" compare "$csv" "${args[@]}" "${extra[@]}"
}

for csv in tests/compare/*.csv; do
	name=$(basename "$csv" .csv)
	for fmt in $formats; do
		exp=tests/compare/expected/$name.$fmt.out
		run_compare "$csv" "$fmt" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ $rc -ne 0 ]; then
			fail "$csv --format $fmt" "exit code $rc, expected 0:"
			sed 's/^/    /' "$tmp/err"
		elif [ -s "$tmp/err" ]; then
			fail "$csv --format $fmt" "printed to stderr:"
			sed 's/^/    /' "$tmp/err"
		elif same "$csv --format $fmt" "$exp" "$tmp/out" numbers; then
			pass
		fi
		if [ "$fmt" = json ]; then
			if grep -qiE '\bnan\b|infinity' "$tmp/out"; then
				fail "$csv --format json" "NaN or Infinity in the output"
			elif command -v python3 >/dev/null && ! python3 -m json.tool "$tmp/out" >/dev/null 2>"$tmp/jerr"; then
				fail "$csv --format json" "not valid JSON: $(cat "$tmp/jerr")"
			else
				pass
			fi
		fi
	done
	# no UTF-8 in the locale: the text format is the ASCII one
	args=()
	[ -f "${csv%.csv}.args" ] && eval "args=($(cat "${csv%.csv}.args"))"
	LC_ALL= LC_CTYPE= LANG=C "$kab" compare "$csv" "${args[@]}" >"$tmp/c.out" 2>&1
	if [ "$update" != 1 ] && same "$csv in LANG=C (text is the ASCII fallback)" "tests/compare/expected/$name.ascii.out" "$tmp/c.out" numbers; then
		pass
	fi
	# the ASCII outputs are ASCII
	for fmt in ascii cover-letter; do
		if LC_ALL=C grep -q '[^ -~]' "tests/compare/expected/$name.$fmt.out"; then
			fail "$csv --format $fmt" "has non-ASCII characters"
		else
			pass
		fi
	done
done

# The acceptance test: the seed 000 table's Delta column (from column 56,
# after Metric, Before and After), character for character as posted.
"$kab" compare tests/compare/seed000.csv --format cover-letter 2>&1 | sed -n '/^bogo ops/,/^pgsteal_anon/p' | cut -c56- >"$tmp/delta"
printf '%s\n' "+7595.34 (+26.9%)" "-37807256 (-68.2%)" "-19574927 (-57.4%)" "7396670 (+14.0%)" "5049791 (+17.4%)" >"$tmp/seed-delta"
if diff -u "$tmp/seed-delta" "$tmp/delta" >"$tmp/diff"; then
	pass
else
	fail "seed000 cover letter" "the Delta column differs from the seed's:"
	sed 's/^/    /' "$tmp/diff"
fi

for csv in tests/compare/bad/*.csv; do
	err=${csv%.csv}.err
	args=()
	[ -f "${csv%.csv}.args" ] && eval "args=($(cat "${csv%.csv}.args"))"
	"$kab" compare "$csv" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 2 ]; then
		fail "$csv" "exit code $rc, expected 2"
		sed 's/^/    /' "$tmp/err"
	elif [ -s "$tmp/out" ]; then
		fail "$csv" "printed to stdout on failure"
	elif same "$csv" "$err" "$tmp/err"; then
		pass
	fi
done

# A/A: two variants drawn from the same distribution (12 pairs, CoV 2%,
# seeded) must give no better/worse verdict on the primary metric in at
# least 19 of 20 repetitions (nor changed: the metric is neutral).
aa_changes=0
for seed in $(seq 1 20); do
	awk -v seed="$seed" 'BEGIN {
		srand(seed); print "metric,variant,pair,value"
		for (p = 1; p <= 12; p++)
			for (v = 0; v < 2; v++) {
				for (m = 0; m < 3; m++) {
					z = sqrt(-2 * log(1 - rand())) * cos(6.283185307179586 * rand())
					printf "x.m%d,%s,%d,%.3f\n", m, v ? "B" : "A", p, 1000 * exp(0.02 * z)
				}
			}
	}' >"$tmp/aa.csv"
	"$kab" compare "$tmp/aa.csv" --primary x.m0 --format csv >"$tmp/aa.out" 2>&1
	if grep -qE '^aa,x\.m0,.*,(better|worse|changed),' "$tmp/aa.out"; then
		aa_changes=$((aa_changes + 1))
	fi
done
if [ "$aa_changes" -le 1 ]; then
	pass
else
	fail "A/A" "$aa_changes of 20 identical-variant data sets gave a better, worse or changed verdict on the primary metric (at most 1 allowed)"
fi
echo "A/A: $aa_changes of 20 repetitions gave a change on the primary metric"

# usage errors
usage_case() { # name expected-stderr-regex args...
	local name=$1 re=$2
	shift 2
	"$kab" compare "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc -ne 2 ]; then
		fail "usage: $name" "exit code $rc, expected 2"
	elif ! grep -qE "$re" "$tmp/err"; then
		fail "usage: $name" "stderr does not match /$re/:"
		sed 's/^/    /' "$tmp/err"
	else
		pass
	fi
}
usage_case "no file" "^usage: kab compare"
usage_case "two files" "^usage: kab compare" a.csv b.csv
usage_case "unknown format" 'unknown format "yaml" \(formats: text, cover-letter, markdown, json, csv\)' \
	tests/compare/seed000.csv --format yaml
usage_case "missing file" "^tests/compare/none.csv: cannot read: No such file or directory$" tests/compare/none.csv
usage_case "unknown option" "unrecognized option|usage" tests/compare/seed000.csv --frmat json

echo "compare: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
