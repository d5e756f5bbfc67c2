#!/usr/bin/env bash
# [job]'s conditioning on the real machine: caches dropped, memory
# compacted and an idle machine waited for before each run (and a run on
# a busy machine recorded as not idle, and counted in the report), the
# workload pinned to cpus; every run's settings (THP, mTHP, swappiness,
# zswap, cpufreq) recorded after its knobs; a variant's own knob is not
# reported as a difference. cpufreq and turbo are refused on a machine
# without them (tests/golden/bad/69-condition-vm covers the words).
. "$(dirname "$0")/lib.sh"
it_begin
trap 'for p in "${IT_PIDS[@]}"; do kill "$p" 2>/dev/null; done; it_cleanup' EXIT
[ "$(nproc)" -ge 2 ] || skip_all "needs two CPUs (the workload on CPU 1, the sampler on CPU 0)"
T=/sys/kernel/mm/transparent_hugepage/enabled
[ -w $T ] || skip_all "no writable $T"
thp_before=$(sed 's/.*\[\(.*\)\].*/\1/' $T)

cat >"$IT_TMP/c.job" <<'JOB'
[job]
name = it-condition
pairs = 1
interval = 0.2s
drop_caches = yes
compact = yes
wait_idle = 100%
wait_idle_max = 3s
cpus = 1
sampler_cpu = 0
[variant A]
sysfs /sys/kernel/mm/transparent_hugepage/enabled = never
[variant B]
sysfs /sys/kernel/mm/transparent_hugepage/enabled = madvise
[workload aff]
type = command
command = sh -c 'grep Cpus_allowed_list /proc/self/status'
JOB
$KAB check "$IT_TMP/c.job" >"$IT_TMP/norm" 2>"$IT_TMP/err"
check "kab check accepts the conditioning keys" [ $? -eq 0 ]
check "and prints them back" bash -c "grep -qx 'drop_caches = yes' '$IT_TMP/norm' && grep -qx 'wait_idle_max = 3s' '$IT_TMP/norm' &&
	grep -qx 'cpus = 1' '$IT_TMP/norm' && grep -qx 'sampler_cpu = 0' '$IT_TMP/norm'"
db=$IT_TMP/c.db
$KAB run --db "$db" "$IT_TMP/c.job" >"$IT_TMP/out" 2>"$IT_TMP/log"
check "the job runs (exit 0)" [ $? -eq 0 ]
check "both runs ok" [ "$(sql "$db" "select count(*) from runs where status = 'ok'")" = 2 ]
# 3 runs: the pair's 2 and, first, the workload's uncounted warm-up (in
# variant A), conditioned and recorded like the others
check "and the warm-up before them" [ "$(sql "$db" "select count(*) from runs where status = 'warmup'")" = 1 ]
check "the workload ran on CPU 1 only" [ "$(sql "$db" "select count(*) from runs where stdout_tail like 'Cpus_allowed_list:%1%' and stdout_tail not like '%0%'")" = 3 ]
check "each run records caches dropped and memory compacted" \
	[ "$(sql "$db" "select count(*) from runs where conditioning like '%drop_caches=done%compact=done%'")" = 3 ]
check "and the idle wait, the cpus and the sampler's CPU" \
	[ "$(sql "$db" "select count(*) from runs where conditioning like '%idle=%busy=%waited=%cpus=1%sampler_cpu=0%'")" = 3 ]
check "the settings are read with the variant's knob in force" \
	[ "$(sql "$db" "select group_concat(variant_idx || ':' || (settings like '%$T=never%') || (settings like '%$T=madvise%'), ' ') from runs order by id")" = "0:10 0:10 1:01" ]
check "the settings record swappiness, zswap and the governor" \
	[ "$(sql "$db" "select count(*) from runs where settings like '%/proc/sys/vm/swappiness=%' and settings like '%cpufreq.governor=%' and settings like '%cpufreq.turbo=%'")" = 3 ]
$KAB report 1 --db "$db" >"$IT_TMP/report" 2>&1
check "a variant's own knob is not reported as a difference" bash -c "! grep -q 'Differs between variants' '$IT_TMP/report'"
check "THP is put back" [ "$(sed 's/.*\[\(.*\)\].*/\1/' $T)" = "$thp_before" ]

# another setting that differed between the variants' runs is named
sql "$db" "update runs set settings = replace(settings, 'swappiness=', 'swappiness=1') where variant_idx = 1"
$KAB report 1 --db "$db" >"$IT_TMP/report2" 2>&1
check "the header names a setting that differed besides the knobs" grep -q "^Differs between variants besides their knobs: vm.swappiness (A: [0-9]*, B: 1[0-9]*)$" "$IT_TMP/report2"

# a busy machine: the bound passes, the run goes on, recorded as not idle
for c in 0 1; do taskset -c $c sh -c 'while :; do :; done' & IT_PIDS+=($!); done
sed 's/^wait_idle = 100%/wait_idle = 5%/; s/^wait_idle_max = 3s/wait_idle_max = 2s/; s/^name = it-condition/name = it-busy/' \
	"$IT_TMP/c.job" >"$IT_TMP/busy.job"
$KAB run --db "$db" "$IT_TMP/busy.job" >"$IT_TMP/out2" 2>"$IT_TMP/log2"
check "a job on a busy machine still runs (exit 0)" [ $? -eq 0 ]
for p in "${IT_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
IT_PIDS=()
check "its runs record that the machine was not idle (the warm-up too)" [ "$(sql "$db" "select count(*) from runs where job_id = 2 and conditioning like '%idle=no busy=%'")" = 3 ]
check "the log says so" grep -q "was not idle within wait_idle_max" "$IT_TMP/log2"
$KAB report 2 --db "$db" >"$IT_TMP/report3" 2>&1
check "the report counts them (the pair's runs: the warm-up is no data)" grep -q "^Not idle at start: 2 of 2 runs" "$IT_TMP/report3"
it_end
