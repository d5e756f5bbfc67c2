#!/usr/bin/env bash
# Seed 002, "mm: zswap: free cold writeback folios promptly", base against
# patched on linux-source-6.12 in a QEMU guest (tests/seeds/lib.sh says
# how; the guest job, 002-zswap-writeback.guest.job, says how and why it
# differs from the lab's).
#
# What it checks: the patched build (its page flag is in page-flags.h, so
# nearly every object is compiled again); in every counted run zswap
# stored pages and its shrinker wrote some back (zswpout, zswpwb > 0);
# pgrotated per zswap writeback is better on the patched kernel (the
# posting: pgrotated -99.4%, zswpwb -0.9%); zswpwb itself is not
# decided better or worse (the same within its interval, or undecided);
# the memcg's own direct-reclaim counters are in the table.
#
# Bad input: the no-writeback workload misses the path (its zswap never
# writes back) in every run, is expect-failed and named in the report.
SEED=002
. "$(dirname "$0")/lib.sh"
seed_begin
seed_build zswap-dropbehind 002-zswap-dropbehind-6.12.mbox 100000
seed_guest tests/seeds/002-zswap-writeback.guest.job 2 1536 7200 "$PWD/build/kab-pageout"
seed_report

for v in 0 1; do
	path_in_every_run writeback $v "zswap stored pages and its shrinker wrote back (zswpout, zswpwb > 0)" \
		'm(vmstat.zswpout) > 0 and m(vmstat.zswpwb) > 0 and m(ratio.pgrotated_per_wb) >= 0'
done
verdict_is writeback ratio.pgrotated_per_wb better
verdict_is writeback vmstat.zswpwb same undecided
check "the table has the memcg's direct reclaim (memcg.pgscan_direct, memcg.pgsteal_direct) and pgrotated, zswpwb" \
	eval 'for m in memcg.pgscan_direct memcg.pgsteal_direct vmstat.pgrotated vmstat.zswpwb; do grep -q "^$m " "$OUT/$SEED.txt" || exit 1; done'

check "no-writeback: every run expect-failed, none counted ($(runs_where no-writeback 0 expect-failed)/$(runs_where no-writeback 1 expect-failed))" \
	[ "$(runs_where no-writeback 0 expect-failed)/$(runs_where no-writeback 1 expect-failed)" = "$BOOTS/$BOOTS" ]
check "no-writeback: the reason names the missed evidence (vmstat.zswpwb > 0)" \
	[ "$(q "select count(*) from runs where pair >= 0 and workload_idx = $(widx no-writeback) and reason like '%vmstat.zswpwb > 0%'")" = $((2 * BOOTS)) ]
check "no-writeback: the report lists its runs under \"Runs not counted\"" \
	eval 'sed -n "/^Runs not counted:/,\$p" "$OUT/$SEED.txt" | grep -q "no-writeback"'
seed_end
