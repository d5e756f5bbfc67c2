#!/usr/bin/env bash
# Runs every test suite: unit binaries, golden job-file errors, the data
# suites, integration tests on the real machine. Ends with "N passed, N
# failed, N skipped". Any user may run it: the integration suites that need
# root, QEMU or a browser say so in one line and are counted as skipped.
# CHECK_SKIPPED (make check's): lines "SUITE: WHY" of suites make check
# could not run, shown and counted as skipped.
#
# tests/run.sh --kernels runs only the integration suites that build
# kernels and boot them in QEMU (make check-kernels); without it they are
# left out, and named at the end. They took 18 of a warm make check's 36
# minutes (t_kernels 363 s, t_kexec 363 s, t_patch 358 s) and about 45 of
# a cold one's 98, against make check's budget of 30 and 60.
set -u
cd "$(dirname "$0")/.."
KERNEL_SUITES="t_kernels t_kexec t_patch"
kernels=0
case ${1:-} in
"") ;;
--kernels) kernels=1 ;;
*)
	echo "usage: tests/run.sh [--kernels]" >&2
	exit 2
	;;
esac
is_kernel_suite() { case " $KERNEL_SUITES " in *" $1 "*) return 0 ;; esac; return 1; }
passed=0 failed=0 skipped=0
failures=()
times=()

tally() { # suite-name, output file, exit code
	local line p f s
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$2" | tail -n 1)
	p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+')
	f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+')
	s=$(grep -oE '[0-9]+ skipped' <<<"$line" | grep -oE '[0-9]+')
	p=${p:-0} f=${f:-0} s=${s:-0}
	if [ "$3" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	[ "$f" -gt 0 ] && failures+=("$1")
	printf '%-28s %s\n' "$1" "${line:-exit $3}"
}

# kabd or another kab executor holding the machine: say so now, not as
# failures of the suites that run jobs at the end (make check asked first)
if ! tests/executor_free.sh; then
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

tmp=$(mktemp -d)
# the unit tests that run git as the build user, as kabd does as root
# (test_bisect_fetch, test_recorded), need kab-build: made for them when
# it is missing (a fresh machine before make install), removed after them
unit_user=0
trap 'rm -rf "$tmp"; [ $unit_user = 0 ] || userdel kab-build' EXIT

if [ "$(id -u)" != 0 ]; then
	echo "not root: unit, golden, stats, compare, plan, docs and build suites run; the integration suites that need root, QEMU or a browser say so and are counted as skipped"
fi
while IFS= read -r line; do
	[ -n "$line" ] || continue
	printf '%-28s skipped: %s\n' "${line%%: *}" "${line#*: }"
	skipped=$((skipped + 1))
done <<<"${CHECK_SKIPPED:-}"

if [ "$(id -u)" = 0 ] && [ $kernels = 0 ] && ! getent passwd kab-build >/dev/null; then
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin kab-build && unit_user=1
fi
for t in build/tests/test_*; do
	[ $kernels = 0 ] || break
	[ -x "$t" ] || continue
	name=$(basename "$t")
	"$t" >"$tmp/$name.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] && cat "$tmp/$name.out"
	tally "unit/$name" "$tmp/$name.out" $rc
done
if [ $unit_user = 1 ]; then
	userdel kab-build || echo "(could not remove the build user kab-build the unit tests were given)"
	unit_user=0
fi

if [ $kernels = 0 ] && [ -x tests/golden/run.sh ]; then
	tests/golden/run.sh >"$tmp/golden.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] && cat "$tmp/golden.out"
	tally golden "$tmp/golden.out" $rc
fi

# data-driven suites: each prints its own "N passed, N failed" line
# tests/lab/run.sh: the lab's database layer against a PostgreSQL cluster
# of its own (a temporary directory, an unprivileged user, seconds)
for t in tests/stats/check_*.sh tests/compare/run.sh tests/plan/run.sh tests/docs/run.sh tests/lab/run.sh tests/build/check_*.sh; do
	[ $kernels = 0 ] || break
	[ -f "$t" ] || continue
	name=$(basename "$(dirname "$t")")
	# tests/stats holds several suites: stats-oracle, stats-changepoint, stats-exact
	case $t in tests/stats/check_*.sh) name=$(basename "$t" .sh); name=stats-${name#check_} ;; esac
	# tests/build: check_demo.sh, make demo-build from an empty build
	# directory; check_deps.sh, make deps and its kin as another user
	case $t in tests/build/check_*.sh) name=$(basename "$t" .sh); name=build-${name#check_} ;; esac
	bash "$t" >"$tmp/$name.out" 2>&1
	rc=$?
	[ $rc -ne 0 ] && cat "$tmp/$name.out"
	tally "$name" "$tmp/$name.out" $rc
done

for t in tests/integration/t_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	if is_kernel_suite "$name"; then
		[ $kernels = 1 ] || continue
	else
		[ $kernels = 0 ] || continue
	fi
	echo "--- integration/$name"
	t0=$SECONDS
	bash "$t" 2>&1 | tee "$tmp/$name.out"
	rc=${PIPESTATUS[0]}
	tally "integration/$name" "$tmp/$name.out" $rc
	times+=("$((SECONDS - t0)) s  $name")
done

# what the time went to (make check's budget: warm under 30 min, cold under 60)
if [ ${#times[@]} -gt 0 ]; then
	echo
	echo "integration suites by time, longest first (all: $SECONDS s since tests/run.sh started):"
	printf '%s\n' "${times[@]}" | sort -rn | head -n 10 | sed 's/^/  /'
fi

echo
[ $kernels = 0 ] && echo "not run here, by design: $KERNEL_SUITES (kernel builds and QEMU boots, over make check's time budget): make check-kernels"
[ ${#failures[@]} -gt 0 ] && echo "failed suites: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
