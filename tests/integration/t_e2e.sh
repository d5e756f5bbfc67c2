#!/usr/bin/env bash
# A job runs end to end: real zram swap, real memcg limit, real stress-ng,
# knobs applied per variant, counters and provenance in SQLite.
. "$(dirname "$0")/lib.sh"
it_begin
command -v stress-ng >/dev/null || skip_all "stress-ng is not installed"

cat >"$IT_TMP/e2e.job" <<JOB
[job]
name = it-e2e
pairs = 2
order = abba
interval = 0.2s

[swap]
device = zram
size = 512M

[variant A]
name = swappy-60
sysctl vm.swappiness = 60

[variant B]
name = swappy-100
sysctl vm.swappiness = 100

[workload vm]
type = stress-ng
args = --vm 1 --vm-bytes 192M --vm-keep --vm-method flip --vm-madvise normal --timeout 4
memory.max = 128M
expect = vmstat.pswpout > 0, vmstat.pgscan_anon > 0
; stress-ng's vm worker draws memcg OOM kills on cgroup v1 here in every
; form tried (examples/demo.job); this test is about the mechanics, t_oom.sh
; about the kills
oom = tolerate
JOB
db="$IT_TMP/e2e.db"
$KAB run --db "$db" "$IT_TMP/e2e.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
check "kab run exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || { cat "$IT_TMP/err"; }
check "job is done" [ "$(sql "$db" "select status from jobs where id=1")" = done ]
check "schedule of 4 steps stored in ABBA order" [ "$(sql "$db" "select group_concat(variant_idx,'') from (select variant_idx from steps where job_id=1 order by seq)")" = 0110 ]
check "4 runs, all ok (expect met: $(sql "$db" "select group_concat(status || coalesce(': ' || nullif(reason, ''), ''), '; ') from runs"))" [ "$(sql "$db" "select count(*) from runs where status='ok'")" = 4 ]
check "pswpout > 0 in every run" [ "$(sql "$db" "select count(*) from metrics where name='vmstat.pswpout' and value > 0")" = 4 ]
check "pgscan_anon > 0 in every run" [ "$(sql "$db" "select count(*) from metrics where name='vmstat.pgscan_anon' and value > 0")" = 4 ]
check "bogo ops/s recorded for every run" [ "$(sql "$db" "select count(*) from metrics where name='stress-ng.bogo_ops_per_s'")" = 4 ]
# stress-ng restarts a worker the memcg OOM killer took, and loses its bogo
# ops: a run without an OOM kill must show throughput
check "bogo ops/s > 0 in every run without a memcg OOM kill" [ "$(sql "$db" "select count(*) from metrics b join metrics o on o.run_id=b.run_id and o.name='memcg.oom_kills' where b.name='stress-ng.bogo_ops_per_s' and o.value=0 and b.value<=0")" = 0 ]
limit=$((128 << 20))
peaks=$(sql "$db" "select group_concat(cast(value as integer), ' ') from metrics where name='memcg.peak_bytes'")
# memory.max is a hard limit for ordinary charges, but the kernel
# force-charges __GFP_NOFAIL allocations and tasks the OOM killer is
# tearing down, so the recorded peak may pass it by a few pages; more than
# 1% would mean the limit was not in force.
check "memcg peak usage stayed at memory.max ($limit; peaks: $peaks)" [ "$(sql "$db" "select count(*) from metrics where name='memcg.peak_bytes' and value >= $limit * 0.5 and value <= $limit * 1.01")" = 4 ]
check "rusage and wall time recorded" [ "$(sql "$db" "select count(*) from metrics where name in ('time.wall_s','rusage.user_s','rusage.sys_s') and value > 0")" = 12 ]
check "provenance: kernel, boot id, cpus, memory, swap, cgroup version" \
	[ "$(sql "$db" "select count(*) from runs where kernel_release='$(uname -r)' and boot_id='$(cat /proc/sys/kernel/random/boot_id)' and cpus=$(nproc) and mem_total>0 and swap_total>0 and swap_devices like '%zram%' and cgroup_version in (1,2) and kab_version<>'' and schema_version=$(sql "$db" "pragma user_version")")" = 4 ]
check "knob values in force recorded per variant" \
	[ "$(sql "$db" "select count(*) from runs where (variant_idx=0 and knobs like '%swappiness=60%') or (variant_idx=1 and knobs like '%swappiness=100%')")" = 4 ]
check "time series stored (samples at 0.2 s)" [ "$(sql "$db" "select min(n) from samples where metric='vmstat.pswpout'")" -ge 10 ]
check "report prints the table" grep -q "vmstat.pswpout" "$IT_TMP/out"
check "report says how many counted runs had OOM kills" grep -q "^oom = tolerate: [0-4] of 4 counted runs had memcg OOM kills$" "$IT_TMP/out"
$KAB report 1 --db "$db" >"$IT_TMP/report" 2>&1
check "kab report 1 prints the same table from the database" grep -q "Delta (abs / %)" "$IT_TMP/report"
check "report header names kernel and memcg limit" grep -q "memory.max: 128M" "$IT_TMP/report"
check "journal is empty" [ "$(sql "$db" "select count(*) from journal")" = 0 ]
it_end
