#!/usr/bin/env bash
# A job runs end to end: real zram swap, real memcg limit, real stress-ng,
# knobs applied per variant, counters and provenance in SQLite. Before its
# first pair the workload runs once, uncounted (doc/statistics.md rule 1): the
# warm-up is recorded like any run, and the report counts it nowhere.
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
check "schedule stored: the warm-up (in A, pair -1), then 4 steps in ABBA order" \
	[ "$(sql "$db" "select group_concat(variant_idx || ':' || pair, ' ') from (select variant_idx, pair from steps where job_id=1 order by seq)")" = "0:-1 0:0 1:0 1:1 0:1" ]
check "4 runs, all ok (expect met: $(sql "$db" "select group_concat(status || coalesce(': ' || nullif(reason, ''), ''), '; ') from runs"))" [ "$(sql "$db" "select count(*) from runs where status='ok'")" = 4 ]
check "the warm-up ran first, recorded warmup with its outcome" \
	[ "$(sql "$db" "select id || ':' || status || ':' || pair || ':' || variant_idx from runs where status <> 'ok'")" = "1:warmup:-1:0" -a \
	  "$(sql "$db" "select reason from runs where id = 1")" = "warm-up before the first pair, not counted (ok)" ]
# the counts over every run below are 5: the 4 and the warm-up, which
# records its counters, metrics and provenance like the others
check "pswpout > 0 in every run" [ "$(sql "$db" "select count(*) from metrics where name='vmstat.pswpout' and value > 0")" = 5 ]
check "pgscan_anon > 0 in every run" [ "$(sql "$db" "select count(*) from metrics where name='vmstat.pgscan_anon' and value > 0")" = 5 ]
check "bogo ops/s recorded for every run" [ "$(sql "$db" "select count(*) from metrics where name='stress-ng.bogo_ops_per_s'")" = 5 ]
# stress-ng restarts a worker the memcg OOM killer took, and loses its bogo
# ops: a run without an OOM kill must show throughput
check "bogo ops/s > 0 in every run without a memcg OOM kill" [ "$(sql "$db" "select count(*) from metrics b join metrics o on o.run_id=b.run_id and o.name='memcg.oom_kills' where b.name='stress-ng.bogo_ops_per_s' and o.value=0 and b.value<=0")" = 0 ]
limit=$((128 << 20))
peaks=$(sql "$db" "select group_concat(cast(value as integer), ' ') from metrics where name='memcg.peak_bytes'")
# memory.max is a hard limit for ordinary charges, but the kernel
# force-charges __GFP_NOFAIL allocations and tasks the OOM killer is
# tearing down, so the recorded peak may pass it by a few pages; more than
# 1% would mean the limit was not in force.
check "memcg peak usage stayed at memory.max ($limit; peaks: $peaks)" [ "$(sql "$db" "select count(*) from metrics where name='memcg.peak_bytes' and value >= $limit * 0.5 and value <= $limit * 1.01")" = 5 ]
check "rusage and wall time recorded" [ "$(sql "$db" "select count(*) from metrics where name in ('time.wall_s','rusage.user_s','rusage.sys_s') and value > 0")" = 15 ]
check "provenance: kernel, boot id, cpus, memory, swap, cgroup version" \
	[ "$(sql "$db" "select count(*) from runs where kernel_release='$(uname -r)' and boot_id='$(cat /proc/sys/kernel/random/boot_id)' and cpus=$(nproc) and mem_total>0 and swap_total>0 and swap_devices like '%zram%' and cgroup_version in (1,2) and kab_version<>'' and schema_version=$(sql "$db" "pragma user_version")")" = 5 ]
check "knob values in force recorded per variant (the warm-up's are A's)" \
	[ "$(sql "$db" "select count(*) from runs where (variant_idx=0 and knobs like '%swappiness=60%') or (variant_idx=1 and knobs like '%swappiness=100%')")" = 5 ]
check "time series stored (samples at 0.2 s)" [ "$(sql "$db" "select min(n) from samples where metric='vmstat.pswpout'")" -ge 10 ]
check "report prints the table" grep -q "vmstat.pswpout" "$IT_TMP/out"
check "report says how many counted runs had OOM kills" grep -q "^oom = tolerate: [0-4] of 4 counted runs had memcg OOM kills$" "$IT_TMP/out"
$KAB report 1 --db "$db" >"$IT_TMP/report" 2>&1
check "kab report 1 prints the same table from the database" grep -q "Delta (abs / %)" "$IT_TMP/report"
check "report header names kernel and memcg limit" grep -q "memory.max: 128M" "$IT_TMP/report"
check "report header counts the warm-up among the runs, and says it was not counted" bash -c \
	"grep -qx 'Runs: swappy-60 2 ok 1 warmup; swappy-100 2 ok' '$IT_TMP/report' &&
	 grep -qx 'Warm-up: 1 uncounted run of swappy-60 before the first pair (not in the pairs or the statistics)' '$IT_TMP/report'"
check "report lists the warm-up under the runs not counted" \
	grep -qx '  run 1 (warm-up, swappy-60, vm): warmup: warm-up before the first pair, not counted (ok)' "$IT_TMP/report"
$KAB report 1 --db "$db" --format json >"$IT_TMP/report.json" 2>&1
check "the statistics have the 2 pairs alone: n = 2 on each side of every metric" \
	/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); w=r["workloads"][0]
sys.exit(0 if w["pairs"] == 2 and w["metrics"] and all(v["n"] <= 2 for m in w["metrics"] for v in m["variants"]) and
	any(v["n"] == 2 for m in w["metrics"] for v in m["variants"]) and w["runs"]["swappy-60"]["warmup"] == 1 else 1)' "$IT_TMP/report.json"
check "journal is empty" [ "$(sql "$db" "select count(*) from journal")" = 0 ]
it_end
