#!/usr/bin/env bash
# `make demo` on a fresh clone: builds what its job runs. From an empty
# build directory, `make demo-build` (the demo target's build, without
# running the job); then every helper program an example job needs must be
# among what it built. Which helpers a job needs is kab's own answer, not
# a list kept here: the kab just built, copied alone into a directory with
# no helper beside it and run with a PATH that has none, says
# `helper program kab-X is not built` for each one `kab check` looks for.
# Ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")/../.."
root=$PWD
passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "  ok   $*"; }
fail() { failed=$((failed + 1)); echo "  FAIL $*"; }
finish() {
	echo "build-demo: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}

tmp=$(mktemp -d /tmp/kab-build-demo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/build # empty: make creates it
bare=$tmp/bare
mkdir -p "$bare"

# a make of its own: not the jobserver or command-line variables of a make
# check this may run under (CI, from the environment, still adds -Werror)
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$root" -j"$(nproc)" demo-build B="$out" >"$tmp/make.log" 2>&1; then
	ok "make demo-build B=<empty directory> builds"
else
	fail "make demo-build B=<empty directory> failed; its output ends:"
	tail -n 15 "$tmp/make.log" | sed 's/^/    /'
	finish
fi
if [ ! -x "$out/kab" ]; then
	fail "make demo-build did not build kab ($out/kab)"
	finish
fi

# PATH without any directory that holds an installed helper (make install
# puts them in PREFIX/bin): kab must find none but those beside it
path=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	[ -n "$d" ] || continue
	compgen -G "$d/kab-*" >/dev/null && continue
	path=${path:+$path:}$d
done
cp "$out/kab" "$bare/kab"

# helper -> the jobs that need it
declare -A needed_by=()
jobs=(examples/*.job examples/seeds/*.job)
for j in "${jobs[@]}"; do
	PATH=$path "$bare/kab" check "$j" >/dev/null 2>"$tmp/check.err"
	for h in $(sed -nE 's/.*helper program "?(kab-[A-Za-z0-9_.-]+)"? is not built.*/\1/p' "$tmp/check.err" | sort -u); do
		needed_by[$h]="${needed_by[$h]:+${needed_by[$h]} }$(basename "$j")"
	done
done
if [ ${#needed_by[@]} -eq 0 ]; then
	# examples/demo.job runs kab-pageout: kab check no longer says so in
	# these words, and this test would check nothing
	fail "kab check named no helper program for ${#jobs[@]} example jobs (did its message change?)"
	finish
fi
echo "  helper programs the example jobs need (kab check): $(printf '%s\n' "${!needed_by[@]}" | sort | paste -sd ' ')"
for h in $(printf '%s\n' "${!needed_by[@]}" | sort); do
	if [ -x "$out/$h" ]; then
		ok "$h built by make demo-build (needed by ${needed_by[$h]})"
	else
		fail "$h not built by make demo-build, needed by ${needed_by[$h]}"
	fi
done
# and the kab that demo-build made finds them all beside it
missing=""
for j in "${jobs[@]}"; do
	PATH=$path "$out/kab" check "$j" >/dev/null 2>"$tmp/check.err"
	grep -q 'helper program' "$tmp/check.err" && missing="$missing $(basename "$j")"
done
if [ -z "$missing" ]; then
	ok "kab check finds every helper beside the kab make demo-build made"
else
	fail "kab check still misses a helper program for:$missing"
fi
finish
