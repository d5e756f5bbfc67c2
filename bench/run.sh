#!/usr/bin/env bash
# kab's benchmarks. Each benchmark is a section: a function named
# bench_<name> below, listed in SECTIONS. Run them all with `make bench` or
# bench/run.sh; pick some with `bench/run.sh sampler ...`. Targets are
# reported (PASS/MISS), not asserted: the exit code is non-zero only when a
# benchmark could not run at all.
set -u
cd "$(dirname "$0")/.."
B=${B:-build}
SECTIONS=(sampler)
status=0

section() { printf '\n==== %s ====\n' "$1"; }

need() { # binary
	if [ ! -x "$1" ]; then
		echo "missing $1: build it with make $1" >&2
		return 1
	fi
}

# --- sampler: kab's sampler vs a bare pread loop vs the shell loop ---
# BENCH_SECONDS (default 30) sets how long each of the three runs.
bench_sampler() {
	section "sampler (10 Hz, ${BENCH_SECONDS:-30} s each)"
	need "$B/bench/bench_sampler" || return 1
	"$B/bench/bench_sampler"
}

# --- add new sections above this line, and their names to SECTIONS ---

if [ $# -gt 0 ]; then SECTIONS=("$@"); fi
for s in "${SECTIONS[@]}"; do
	if ! declare -F "bench_$s" >/dev/null; then
		echo "bench/run.sh: no benchmark \"$s\" (have: $(declare -F | sed -n 's/^declare -f bench_//p' | tr '\n' ' '))" >&2
		status=2
		continue
	fi
	"bench_$s" || status=1
done
exit $status
