#!/usr/bin/env bash
# Golden tests for `kab check`, run from anywhere (works from the repo root).
#
#   tests/golden/bad/NN-name.job   a bad job file
#   tests/golden/bad/NN-name.err   the exact stderr of `kab check` on it (the
#                                  .job may be missing: a file that cannot be read)
#   tests/golden/good/NAME.job     a good job file
#   tests/golden/good/NAME.out     its exact normalized form on stdout
#
# Bad files must exit 2 with exactly the expected stderr and nothing on
# stdout; good ones must exit 0 with exactly the expected stdout and nothing
# on stderr, and each .out must parse again to itself. examples/*.job must
# pass too, and their normalized form must also print back unchanged.
# A good file whose first line is "# requires: PATH..." is skipped when a
# PATH is missing on this machine; a bad one whose first line is
# "# requires-absent: PATH..." when a PATH exists (an error about what
# this machine lacks, e.g. cpufreq on a VM).
#   tests/golden/*/NAME.machine.conf   the machine's settings (knobs.allow)
#                                  while NAME.job is checked; without one,
#                                  tests/golden/machine.conf (nothing set), so
#                                  this machine's /etc/kab/machine.conf never
#                                  changes what the goldens expect
# KAB=path overrides build/kab. Set GOLDEN_UPDATE=1 to rewrite the expected
# files from the current output (then review the diff before committing).
set -u
cd "$(dirname "$0")/../.."
kab=${KAB:-build/kab}
update=${GOLDEN_UPDATE:-0}
passed=0 failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$kab" ]; then
	echo "golden: $kab is not built (make build/kab)"
	echo "golden: 0 passed, 1 failed"
	exit 1
fi

pass() { passed=$((passed + 1)); }

# kab check JOB, with JOB's machine.conf (see above)
check_job() {
	local conf=${1%.job}.machine.conf
	[ -e "$conf" ] || conf=tests/golden/machine.conf
	KAB_MACHINE_CONF=$conf "$kab" check "$1"
}
fail() {
	failed=$((failed + 1))
	echo "FAIL $1: $2"
}

# check NAME EXPECTED-FILE ACTUAL-FILE: diff, print it on mismatch.
same() {
	if diff -u "$2" "$3" >"$tmp/diff"; then
		return 0
	fi
	fail "$1" "output differs from $2:"
	sed 's/^/    /' "$tmp/diff"
	return 1
}

missing_requirement() {
	local line p
	line=$(head -n 1 "$1")
	case $line in
	"# requires:"*) ;;
	*) return 1 ;;
	esac
	for p in ${line#"# requires:"}; do
		if [ ! -e "$p" ]; then
			echo "skip $1: needs $p"
			return 0
		fi
	done
	return 1
}

present_exclusion() {
	local line p
	line=$(head -n 1 "$1" 2>/dev/null)
	case $line in
	"# requires-absent:"*) ;;
	*) return 1 ;;
	esac
	for p in ${line#"# requires-absent:"}; do
		if [ -e "$p" ]; then
			echo "skip $1: this machine has $p"
			return 0
		fi
	done
	return 1
}

for err in tests/golden/bad/*.err; do
	job=${err%.err}.job
	if present_exclusion "$job"; then
		continue
	fi
	check_job "$job" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$update" = 1 ]; then
		cp "$tmp/err" "$err"
	fi
	if [ $rc -ne 2 ]; then
		fail "$job" "exit code $rc, expected 2"
		sed 's/^/    /' "$tmp/err"
	elif [ -s "$tmp/out" ]; then
		fail "$job" "printed to stdout on failure"
	elif same "$job" "$err" "$tmp/err"; then
		pass
	fi
done

# round_trip NAME FILE: FILE (a normalized job) prints back unchanged.
round_trip() {
	local conf=${1%.job}.machine.conf
	[ -e "$conf" ] || conf=tests/golden/machine.conf
	KAB_MACHINE_CONF=$conf "$kab" check "$2" >"$tmp/again" 2>"$tmp/again.err"
	local rc=$?
	if [ $rc -ne 0 ]; then
		fail "$1" "its normalized form does not parse again (exit $rc):"
		sed 's/^/    /' "$tmp/again.err"
		return 1
	fi
	same "$1 (normalized, parsed again)" "$2" "$tmp/again"
}

for out in tests/golden/good/*.out; do
	job=${out%.out}.job
	if missing_requirement "$job"; then
		continue
	fi
	check_job "$job" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$update" = 1 ] && [ $rc -eq 0 ]; then
		cp "$tmp/out" "$out"
	fi
	if [ $rc -ne 0 ]; then
		fail "$job" "exit code $rc, expected 0:"
		sed 's/^/    /' "$tmp/err"
	elif [ -s "$tmp/err" ]; then
		fail "$job" "printed to stderr on success:"
		sed 's/^/    /' "$tmp/err"
	elif same "$job" "$out" "$tmp/out" && round_trip "$job" "$out"; then
		pass
	fi
done

for job in examples/*.job; do
	[ -e "$job" ] || continue
	if grep -qE '^kernel *= *build' "$job"; then
		# a job of kernels kab builds (the nightly) names the operator's
		# kernel tree (/src/linux), boots kernels and builds as kab-build:
		# here the only complaints may be those, each at its line
		check_job "$job" >/dev/null 2>"$tmp/err"
		rc=$?
		local_only="^$job:[0-9]+: (tree /src/linux does not exist|the variants boot kernels of their own|kernel = build: the build user kab-build does not exist)"
		other=$(grep -vE "$local_only" "$tmp/err")
		if [ $rc -ne 2 ] || [ -n "$other" ] || ! grep -qE 'tree /src/linux does not exist|the build user kab-build does not exist' "$tmp/err"; then
			fail "$job" "exit code $rc; expected 2, naming only the missing tree and kexec:"
			sed 's/^/    /' "$tmp/err"
		else
			pass
		fi
		continue
	fi
	check_job "$job" >"$tmp/example.out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$job" "exit code $rc, expected 0:"
		sed 's/^/    /' "$tmp/err"
	elif round_trip "$job" "$tmp/example.out"; then
		pass
	fi
done

echo "golden: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
