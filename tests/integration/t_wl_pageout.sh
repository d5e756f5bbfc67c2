#!/usr/bin/env bash
# The pageout workload end to end: real zram swap, real memcg, 64K mTHP
# off in one variant and on in the other. The folio evidence must show the
# folio size each variant really got, and the pswpout delta kab records
# must cover every page paged out. Bad keys are refused with file:line; a
# fill larger than memory.max with no swap allowed is a recorded OOM kill.
. "$(dirname "$0")/lib.sh"
it_begin
mthp=/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled
zswap=/sys/module/zswap/parameters/enabled
[ -x build/kab-pageout ] || skip_all "build/kab-pageout is not built (make all)"
[ -w "$mthp" ] || skip_all "no 64K mTHP on this kernel ($mthp)"
[ -r /proc/kpageflags ] || skip_all "no /proc/kpageflags: no page-level folio evidence"
mthp_before=$(cat "$mthp")
zswap_knob=""
[ -w "$zswap" ] && zswap_knob="sysfs $zswap = N"

# 64M per repetition, 3 repetitions: 3 * 16384 pages go out to swap per run
cat >"$IT_TMP/po.job" <<JOB
[job]
name = it-pageout
pairs = 1
interval = 0.2s
; no warm-up: this test checks what each run of the adapter records, run
; by run; the warm-up (an uncounted run like these, on by default) is
; tested in t_e2e, t_aa (this adapter's loop) and t_oom
warmup = 0

[swap]
device = zram
size = 512M

[variant small]
name = mthp-64k-never
sysfs $mthp = never
$zswap_knob

[variant large]
name = mthp-64k-always
sysfs $mthp = always
$zswap_knob

[workload po]
type = pageout
size = 64M
reps = 3
fill = pattern
refault = yes
memory.max = 160M
timeout = 60s

[workload hog]
type = pageout
size = 96M
reps = 1
memory.max = 32M
memory.swap.max = 0
timeout = 60s
JOB
db="$IT_TMP/po.db"
$KAB run --db "$db" "$IT_TMP/po.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
check "kab run finishes the job (exit 0)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$IT_TMP/err"
check "job is done" [ "$(sql "$db" "select status from jobs where id=1")" = done ]
check "both pageout runs ok" [ "$(sql "$db" "select count(*) from runs where workload_idx=0 and status='ok'")" = 2 ]
v() { # variant_idx metric: the value of a pageout run's metric
	sql "$db" "select m.value from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and r.variant_idx=$1 and m.name='$2'"
}
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 >= b + 0) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }
for m in pageout.ns_mean pageout.ns_median pageout.refault_ns_mean pageout.fill_ns_mean; do
	check "$m > 0 in both variants" [ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and m.name='$m' and m.value > 0")" = 2 ]
done
check "stddev % recorded in both" [ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and m.name='pageout.ns_stddev_pct' and m.value >= 0")" = 2 ]
# folio evidence: the page walk and the kernel's per-size counters
check "64K never: pages in 4K folios (large_folio_pct $(v 0 pageout.large_folio_pct))" le "$(v 0 pageout.large_folio_pct)" 5
check "64K never: folio_kB_mean 4 ($(v 0 pageout.folio_kB_mean))" le "$(v 0 pageout.folio_kB_mean)" 4.5
check "64K always: pages in large folios (large_folio_pct $(v 1 pageout.large_folio_pct))" ge "$(v 1 pageout.large_folio_pct)" 95
check "64K always: folio_kB_mean 64 ($(v 1 pageout.folio_kB_mean))" ge "$(v 1 pageout.folio_kB_mean)" 60
check "64K always: ~1024 64K folios allocated per rep ($(v 1 pageout.folios_64kB_alloc))" ge "$(v 1 pageout.folios_64kB_alloc)" 970
check "64K always: 64K folios swapped out whole ($(v 1 pageout.folios_64kB_swpout))" ge "$(v 1 pageout.folios_64kB_swpout)" 970
check "64K always: mthp_alloc_pct ($(v 1 pageout.mthp_alloc_pct))" ge "$(v 1 pageout.mthp_alloc_pct)" 95
check "64K never: mthp_alloc_pct ~0 ($(v 0 pageout.mthp_alloc_pct))" le "$(v 0 pageout.mthp_alloc_pct)" 5
check "every page resident after the fill, swapped after the pageout" \
	[ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and m.name in ('pageout.resident_pct','pageout.swapped_pct') and m.value >= 99.9")" = 4 ]
# the sampler's pswpout delta covers 3 x 64M of 4K pages in each run
need=$((3 * (64 << 20) / 4096))
check "vmstat.pswpout >= $need pages in each run ($(sql "$db" "select group_concat(cast(m.value as integer),' ') from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and m.name='vmstat.pswpout'"))" \
	[ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and m.name='vmstat.pswpout' and m.value >= $need")" = 2 ]
check "knob in force recorded per variant" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx=0 and ((variant_idx=0 and knobs like '%64kB/enabled=never%') or (variant_idx=1 and knobs like '%64kB/enabled=always%'))")" = 2 ]
check "report shows the pageout rows" grep -q "pageout.ns_mean" "$IT_TMP/out"
# 96M in a 32M memcg that may not swap: the kernel kills it, kab records it
check "fill above memory.max without swap: both runs oom-killed" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx=1 and status='oom-killed'")" = 2 ]
check "64K mTHP knob restored ($mthp_before)" [ "$(cat "$mthp")" = "$mthp_before" ]

# bad keys: kab check names file, line and key, and nothing runs
cat >"$IT_TMP/bad.job" <<JOB
[job]
name = it-pageout-bad
pairs = 1
[swap]
device = zram
size = 256M
[variant A]
name = a
[variant B]
name = b
[workload po]
type = pageout
size = 1000
reps = 0
fill = ones
refault = maybe
align = 3M
thp_madvise = 1
JOB
$KAB check "$IT_TMP/bad.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
check "bad keys: kab check exits 2" [ $? -eq 2 ]
for k in "13: .*size \"1000\"" "14: .*reps \"0\"" "15: .*fill \"ones\"" "16: .*refault \"maybe\"" "17: .*align \"3M\"" "18: .*thp_madvise \"1\""; do
	check "bad keys: bad.job:$k" grep -qE "bad.job:$k" "$IT_TMP/err"
done
printf '[job]\nname = x\n[variant A]\n[variant B]\n[workload po]\ntype = pageout\nreps = 3\n' >"$IT_TMP/nosize.job"
$KAB check "$IT_TMP/nosize.job" >/dev/null 2>"$IT_TMP/err"
check "missing size: error at the section line" grep -qE 'nosize.job:5: missing required key "size"' "$IT_TMP/err"
printf '[job]\nname = x\n[variant A]\n[variant B]\n[workload po]\ntype = pageout\nsize = 4M\nrefualt = yes\n' >"$IT_TMP/typo.job"
$KAB check "$IT_TMP/typo.job" >/dev/null 2>"$IT_TMP/err"
check "misspelt key: did you mean" grep -qE 'typo.job:8: unknown key "refualt".*did you mean "refault"' "$IT_TMP/err"

# no swap at all: the program refuses to measure nothing, the run is failed
if [ "$(tail -n +2 /proc/swaps | wc -l)" = 0 ]; then
	sed -e '/^\[swap\]/,/^size/d' -e '/^\[workload hog\]/,$d' "$IT_TMP/po.job" >"$IT_TMP/noswap.job"
	printf '[swap]\ndevice = none\n' >>"$IT_TMP/noswap.job"
	$KAB run --db "$IT_TMP/ns.db" "$IT_TMP/noswap.job" >/dev/null 2>&1
	check "no swap: runs recorded failed with the reason in stderr" \
		[ "$(sql "$IT_TMP/ns.db" "select count(*) from runs where status='failed' and stderr_tail like '%no swap is on%'")" = 2 ]
else
	IT_SKIP=$((IT_SKIP + 1)); echo "  skip no-swap case: the machine has swap on"
fi
it_end
