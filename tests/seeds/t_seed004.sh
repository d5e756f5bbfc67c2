#!/usr/bin/env bash
# Seed 004 on 6.12, "mm: drop redundant lru_add_drain in anon folio reuse
# paths" v2, patches 1, 3 and 4, base against patched on
# linux-source-6.12 in a QEMU guest (tests/seeds/lib.sh says how; the
# guest job, 004-lru-drain.guest.job, says how and why it differs from the
# lab's, and which swap reaches the drain). t_patch does patches 1 and 3
# on 6.1.
#
# What it checks: the patched build is incremental (mm/memory.c, the
# kernelrelease's few objects, and what the build before it in the shared
# object directory changed: at most 80); in every counted run every page went to
# swap and came back through the swap cache (pageout.swapped_pct, and
# lru_add_drain and folio_free_swap counted in every run); lru_add_drain()
# calls are better on the patched kernel (the posting: -16.8% and -32.6%
# in its kernel builds, where the drains of other paths remain); patch 4's
# own path, the swap cache freed at the write refault, keeps its
# folio_free_swap() count: the same on both kernels.
SEED=004
. "$(dirname "$0")/lib.sh"
seed_begin
seed_build drop-drain 004-lru-drain-6.12.mbox 80
seed_guest tests/seeds/004-lru-drain.guest.job 2 1536 5400 "$PWD/build/kab-pageout"
seed_report

for v in 0 1; do
	path_in_every_run loop $v "every page swapped out and refaulted, lru_add_drain and folio_free_swap counted" \
		'm(pageout.swapped_pct) >= 99 and m(fcount.lru_add_drain) is not null and m(fcount.folio_free_swap) > 0'
done
check "no function count was refused by the kernel" [ "$(q "select count(*) from run_unavailable where metric like 'fcount.%'")" = 0 ]
verdict_is loop fcount.lru_add_drain better
verdict_is loop fcount.folio_free_swap same
check "the text table shows it: fcount.lru_add_drain ... better" grep -qE '^fcount\.lru_add_drain .*better$' "$OUT/$SEED.txt"
seed_end
