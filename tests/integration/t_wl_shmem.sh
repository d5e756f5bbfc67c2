#!/usr/bin/env bash
# The shmem-truncate workload end to end: real memcg, memfd teardown with
# shmem_enabled never against always (a sysfs knob per variant), tmpfs
# files on a private mount with huge=never and huge=always. The folio
# evidence must show the folio size each really got, the teardown must
# free what the fill took, no tmpfs mount may leak onto the host, bad keys
# are refused with file:line, and a fill above memory.max without swap is
# a recorded failed run, not a crash.
. "$(dirname "$0")/lib.sh"
it_begin
knob=/sys/kernel/mm/transparent_hugepage/shmem_enabled
[ -x build/kab-shmem-truncate ] || skip_all "build/kab-shmem-truncate is not built (make all)"
[ -w "$knob" ] || skip_all "no $knob on this kernel"
[ -r /proc/kpageflags ] || skip_all "no /proc/kpageflags: no page-level folio evidence"
knob_before=$(cat "$knob")
mounts_before=$(grep -c kab-shmem /proc/mounts)

cat >"$IT_TMP/sh.job" <<JOB
[job]
name = it-shmem
pairs = 1
; no warm-up: this test checks what each run of the adapter records, run
; by run; the warm-up (an uncounted run like these, on by default) is
; tested in t_e2e, t_aa and t_oom
warmup = 0

[swap]
device = none

[variant small]
name = shmem-never
sysfs $knob = never

[variant huge]
name = shmem-always
sysfs $knob = always

[workload memfd-close]
type = shmem-truncate
backing = memfd
op = close
size = 64M
reps = 3
memory.max = 160M
timeout = 60s

[workload tmpfs-ftruncate]
type = shmem-truncate
backing = tmpfs
op = ftruncate
huge = never
size = 64M
reps = 3
memory.max = 160M
timeout = 60s

[workload tmpfs-punch-huge]
type = shmem-truncate
backing = tmpfs
op = punch
huge = always
fill = fallocate
size = 64M
reps = 3
memory.max = 160M
timeout = 60s

[workload tmpfs-unlink]
type = shmem-truncate
backing = tmpfs
op = unlink
size = 64M
reps = 2
memory.max = 160M
timeout = 60s

[workload hog]
type = shmem-truncate
backing = memfd
op = ftruncate
size = 96M
reps = 1
memory.max = 32M
memory.swap.max = 0
timeout = 60s
JOB
db="$IT_TMP/sh.db"
$KAB run --db "$db" "$IT_TMP/sh.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
check "kab run finishes the job (exit 0)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -20 "$IT_TMP/err"
check "job is done" [ "$(sql "$db" "select status from jobs where id=1")" = done ]
check "8 teardown runs ok" [ "$(sql "$db" "select count(*) from runs where workload_idx<4 and status='ok'")" = 8 ]
v() { # workload_idx variant_idx metric
	sql "$db" "select m.value from metrics m join runs r on r.id=m.run_id where r.workload_idx=$1 and r.variant_idx=$2 and m.name='$3'"
}
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 >= b + 0) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; }
for m in shmem-truncate.op_ms_median shmem-truncate.op_ms_mean shmem-truncate.op_ms_min shmem-truncate.fill_ms_mean; do
	check "$m > 0 in every teardown run" [ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx<4 and m.name='$m' and m.value > 0")" = 8 ]
done
check "memfd, shmem_enabled never: 4K folios (folio_kB_mean $(v 0 0 shmem-truncate.folio_kB_mean))" le "$(v 0 0 shmem-truncate.folio_kB_mean)" 4.5
check "memfd, shmem_enabled never: large_folio_pct ~0 ($(v 0 0 shmem-truncate.large_folio_pct))" le "$(v 0 0 shmem-truncate.large_folio_pct)" 5
check "memfd, shmem_enabled always: PMD folios (folio_kB_mean $(v 0 1 shmem-truncate.folio_kB_mean))" ge "$(v 0 1 shmem-truncate.folio_kB_mean)" 2000
check "memfd, shmem_enabled always: 32 2M folios per rep ($(v 0 1 shmem-truncate.folios_2048kB_alloc))" ge "$(v 0 1 shmem-truncate.folios_2048kB_alloc)" 31
check "memfd, shmem_enabled always: ShmemHugePages covers the file ($(v 0 1 shmem-truncate.pmd_folio_pct)%)" ge "$(v 0 1 shmem-truncate.pmd_folio_pct)" 95
check "tmpfs huge=never: 4K folios in both variants" \
	[ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=1 and m.name='shmem-truncate.folio_kB_mean' and m.value <= 4.5")" = 2 ]
check "tmpfs huge=always: 2M folios in both variants" \
	[ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=2 and m.name='shmem-truncate.folio_kB_mean' and m.value >= 2000")" = 2 ]
check "every file resident after the fill (page walk)" \
	[ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx<4 and m.name='shmem-truncate.resident_pct' and m.value >= 99.9")" = 8 ]
check "the teardown freed the file (meminfo Shmem, machine-wide: >= 90%)" \
	[ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx<4 and m.name='shmem-truncate.freed_pct' and m.value >= 90")" = 8 ]
check "knob in force recorded per variant" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx=0 and ((variant_idx=0 and knobs like '%shmem_enabled=never%') or (variant_idx=1 and knobs like '%shmem_enabled=always%'))")" = 2 ]
check "report shows the teardown rows" grep -q "shmem-truncate.op_ms_median" "$IT_TMP/out"
# 96M of memfd in a 32M memcg that may not swap: killed or refused, recorded
check "fill above memory.max without swap: both runs recorded oom-killed or failed ($(sql "$db" "select group_concat(status || ': ' || reason, '; ') from runs where workload_idx=4"))" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx=4 and status in ('oom-killed','failed')")" = 2 ]
check "no tmpfs mount leaked onto the host" [ "$(grep -c kab-shmem /proc/mounts)" = "$mounts_before" ]
check "shmem_enabled restored ($knob_before)" [ "$(cat "$knob")" = "$knob_before" ]

# a killed run leaves no mount either: the mount lives in the program's
# own namespace. Its reps (10000, the most it takes) outlast the test,
# which kills it once its tmpfs is mounted (in the program's namespace:
# /proc/PID/mounts).
mkdir "$IT_TMP/wd"
(cd "$IT_TMP/wd" && exec "$OLDPWD/build/kab-shmem-truncate" --backing tmpfs --op ftruncate --size $((512 << 20)) --reps 10000) >"$IT_TMP/wd.log" 2>&1 &
pid=$!
IT_PIDS+=("$pid")
wait_for -s "echo \"kab-shmem-truncate \$(pid_gone $pid && echo exited || echo runs); it said:\"; tail -n 5 '$IT_TMP/wd.log'" \
	"kab-shmem-truncate (pid $pid) to mount its tmpfs" 20 "grep -q kab-shmem /proc/$pid/mounts"
check "while it runs, its tmpfs is not in the host's mounts" [ "$(grep -c kab-shmem /proc/mounts)" = "$mounts_before" ]
check "while it runs, its mount point is there (it did start)" [ -d "$(ls -d "$IT_TMP"/wd/kab-tmpfs-* 2>/dev/null | head -1)" ]
check "it still runs when killed -9" kill -9 "$pid"
wait "$pid" 2>/dev/null
check "killed: no mount left, the mount point is an empty directory" \
	eval '[ "$(grep -c kab-shmem /proc/mounts)" = "$mounts_before" ] && rmdir "$IT_TMP"/wd/kab-tmpfs-*'

cat >"$IT_TMP/bad.job" <<JOB
[job]
name = it-shmem-bad
pairs = 1
[variant A]
name = a
[variant B]
name = b
[workload t1]
type = shmem-truncate
backing = memfd
op = unlink
size = 3000
reps = many
huge = always
fill = zero
[workload t2]
type = shmem-truncate
backing = tmpfs
op = close
size = 64M
huge = sometimes
JOB
$KAB check "$IT_TMP/bad.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
check "bad keys: kab check exits 2" [ $? -eq 2 ]
for k in '11: .*op unlink needs backing = tmpfs' '12: .*size "3000"' '13: .*reps "many"' \
	'14: .*huge applies to backing = tmpfs only' '15: .*fill "zero"' '19: .*op close needs backing = memfd' \
	'21: .*huge "sometimes"'; do
	check "bad keys: bad.job:$k" grep -qE "bad.job:$k" "$IT_TMP/err"
done
it_end
