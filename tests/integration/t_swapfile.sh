#!/usr/bin/env bash
# A swap file made for the job is active during its runs and removed after;
# a workload over its timeout is killed and recorded timed-out.
. "$(dirname "$0")/lib.sh"
it_begin

swapfile=/var/tmp/kab-it-$$.swap
cat >"$IT_TMP/sf.job" <<JOB
[job]
name = it-swapfile
pairs = 1
[swap]
device = file
size = 64M
path = $swapfile
[variant A]
name = a
[variant B]
name = b
[workload swaps]
type = command
command = cat /proc/swaps
memory.max = 64M
[workload sleeper]
type = command
command = sleep 30
timeout = 1s
JOB
db="$IT_TMP/sf.db"
start=$(date +%s)
$KAB run --db "$db" "$IT_TMP/sf.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
elapsed=$(( $(date +%s) - start ))
check "kab run exits 0" [ $rc -eq 0 ]
check "the swap file was active during the runs" [ "$(sql "$db" "select count(*) from runs where workload_idx=0 and status='ok' and stdout_tail like '%$swapfile%'")" = 2 ]
# 6 runs: each workload's 2 and its uncounted warm-up before them
check "provenance lists the swap file (every run, the warm-ups too)" [ "$(sql "$db" "select count(*) from runs where swap_devices like '%$swapfile%'")" = 6 ]
check "the swap file is gone afterwards" [ ! -e "$swapfile" ]
check "sleep 30 with timeout 1s is recorded timed-out" [ "$(sql "$db" "select count(*) from runs where workload_idx=1 and status='timed-out'")" = 2 ]
check "... and its warm-up too, in its reason" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx=1 and status='warmup' and reason = 'warm-up before the first pair, not counted (timed-out: killed after the workload''s timeout)'")" = 1 ]
check "timed-out runs were killed promptly (job took < 20 s)" [ "$elapsed" -lt 20 ]
rm -f "$swapfile"
it_end
