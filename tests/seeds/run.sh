#!/usr/bin/env bash
# make check-seeds: the seed postings' base-against-patched QEMU tests on
# linux-source-6.12, one after the other, the cheapest builds first (004
# recompiles mm/memory.c, 000 mm/vmscan.c, 003 the 50 objects that
# include mm/internal.h, 002 nearly everything: its page flag), with
# t_seedpanic (a backport that builds but panics at boot: a boot failure
# in the report) after 003, then doc/seeds.md made again from their
# reports (tests/seeds/mkdoc). SEEDS="003 004" runs some of them. Each test's
# output goes to tests/out/seeds/NNN.log as well; its time is printed.
set -u
cd "$(dirname "$0")/../.." || exit 1
seeds=${SEEDS:-004 000 003 panic 002}
mkdir -p tests/out/seeds
failed=0 summary=""
for s in $seeds; do
	t=tests/seeds/t_seed$s.sh
	[ -x "$t" ] || { echo "check-seeds: no test $t"; failed=1; continue; }
	echo "== seed $s ($t)"
	t0=$SECONDS
	bash "$t" 2>&1 | tee "tests/out/seeds/$s.log"
	rc=${PIPESTATUS[0]}
	dt=$((SECONDS - t0))
	last=$(tail -n 1 "tests/out/seeds/$s.log")
	summary="$summary  seed $s: $last ($((dt / 60)) min $((dt % 60)) s)\n"
	[ "$rc" = 0 ] || failed=1
done
printf "check-seeds:\n%b" "$summary"
/usr/bin/python3 tests/seeds/mkdoc && echo "check-seeds: doc/seeds.md made from tests/out/seeds/*.json"
exit $failed
