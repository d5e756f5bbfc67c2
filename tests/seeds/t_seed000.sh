#!/usr/bin/env bash
# Seed 000, "mm: batch TLB flushing for dirty folios in vmscan" v6, base
# against patched on linux-source-6.12 in a QEMU guest with 4 vCPUs
# (tests/seeds/lib.sh says how; the guest job, 000-batch-tlb.guest.job,
# says how and why it differs from the lab's).
#
# What it checks: the patched build is incremental (mm/vmscan.c, the
# kernelrelease's few objects, and what the build before it in the shared
# object directory changed: at most 80); in every counted run of the stress-ng
# workload anon reclaim wrote to swap and sent TLB shootdowns (its
# expect), and no counted run had an OOM kill; TLB shootdowns per page
# swapped out are better on the patched kernel (the posting: -68.2% in
# raw counts over 60 s); function-call IPIs per page are in the table with
# their verdict, as are the raw counts, pgscan/pgsteal and pswpout.
# stress-ng's bogo ops/s decides nothing under TCG (the job's header).
#
# Bad input: the no-reclaim workload misses the path in every run and is
# expect-failed, named in the report; and the posting's own patch 2/5,
# unmodified, after the backported 1/5, does not apply to 6.12: kab build
# fails naming the patch, the file and the hunk.
SEED=000
. "$(dirname "$0")/lib.sh"
seed_begin
seed_build batch-tlb 000-batch-tlb-flush-6.12.mbox 80
seed_guest tests/seeds/000-batch-tlb.guest.job 4 1536 5400 "$(command -v stress-ng)"
seed_report

oomruns=$(q "select count(*) from runs where pair >= 0 and status like 'oom%'")
echo "    runs with OOM kills (not counted): $oomruns; every stress-vm run's status: $(q "select group_concat(status, ' ') from (select status from runs where pair >= 0 and workload_idx = $(widx stress-vm) order by id)")"
check "no counted run had an OOM kill" [ "$(q "select count(*) from runs r join metrics m on m.run_id = r.id where r.pair >= 0 and r.status = 'ok' and m.name = 'memcg.oom_kills' and m.value > 0")" = 0 ]
for v in 0 1; do
	path_in_every_run stress-vm $v "anon reclaim swapped out and sent TLB shootdowns (pswpout, TLB, and their ratio > 0)" \
		'm(vmstat.pswpout) > 0 and m(interrupts.TLB) > 0 and m(ratio.tlb_per_page) > 0 and m(vmstat.pgsteal_anon) > 0'
done
verdict_is stress-vm ratio.tlb_per_page better
verdict_is stress-vm ratio.cal_per_page better worse undecided same
check "the table has the posting's rows: TLB shootdowns, function-call IPIs, pgscan_anon, pgsteal_anon, pswpout" \
	eval 'for m in interrupts.TLB interrupts.CAL vmstat.pgscan_anon vmstat.pgsteal_anon vmstat.pswpout; do grep -q "^$m " "$OUT/$SEED.txt" || exit 1; done'

# the workload that misses its path: expect-failed in every run, named
check "no-reclaim: every run expect-failed, none counted ($(runs_where no-reclaim 0 expect-failed)/$(runs_where no-reclaim 1 expect-failed))" \
	[ "$(runs_where no-reclaim 0 expect-failed)/$(runs_where no-reclaim 1 expect-failed)" = "$BOOTS/$BOOTS" ]
check "no-reclaim: the reason names the missed evidence (vmstat.pswpout > 0: it was 0)" \
	[ "$(q "select count(*) from runs where pair >= 0 and workload_idx = $(widx no-reclaim) and reason like '%vmstat.pswpout > 0%'")" = $((2 * BOOTS)) ]
check "no-reclaim: the report lists its runs under \"Runs not counted\"" \
	eval 'sed -n "/^Runs not counted:/,\$p" "$OUT/$SEED.txt" | grep -q "no-reclaim"'

# the posting's own patch 2/5 does not apply to 6.12
{
	printf '[job]\nname = seed-000-posting\n\n'
	build_variant A base
	build_variant B posting "$PWD/tests/data/kernels/000-posting-patch2-6.12.mbox"
	printf '[workload none]\ntype = command\ncommand = true\n'
} >"$tmp/posting.job"
# the builds' cache: the baseline is reused, the series fails before any compile
nice -n "$NICE" "$KAB" build --db "$BUILDS_DB" --kernels-dir "$LAB/kernels" --work-dir "$KT_WORK" "$tmp/posting.job" >"$tmp/posting.out" 2>&1
rc=$?
reason=$(grep -m1 'does not apply' "$tmp/posting.out")
echo "    $reason" | cut -c1-400
check "the posting's patch 2/5 unmodified: kab build fails (exit $rc)" [ $rc -ne 0 ]
check "it names the patch, the file and the hunk" \
	eval '[[ "$reason" =~ patch\ 2\ of\ 2\ \"\[PATCH\ 2/2\]\ mm/vmscan:\ extract\ folio\ reclaim\ freeing.*does\ not\ apply:\ mm/vmscan.c,\ hunk\ @@\ -[0-9]+ ]]'
check "no build of it is recorded ok" [ "$(bq "select count(*) from builds where status = 'ok' and series like '%000-posting-patch2-6.12.mbox%'")" = 0 ]
seed_end
