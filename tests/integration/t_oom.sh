#!/usr/bin/env bash
# A workload that exceeds its limit with no swap is recorded oom-killed and
# the job goes on; a failing command is recorded failed with its exit code.
. "$(dirname "$0")/lib.sh"
it_begin

cat >"$IT_TMP/oom.job" <<JOB
[job]
name = it-oom
pairs = 1

[swap]
device = none

[variant A]
name = a

[variant B]
name = b

[workload hog]
type = command
command = dd if=/dev/zero of=/dev/null bs=128M count=1
memory.max = 32M
memory.swap.max = 0

[workload fails]
type = command
command = sh -c "echo kab-metric answer 42 things; echo oops >&2; exit 3"

[workload fine]
type = command
command = sh -c "echo kab-metric answer 42 things"
JOB
db="$IT_TMP/oom.db"
$KAB run --db "$db" "$IT_TMP/oom.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
check "kab run finishes the job (exit 0)" [ $rc -eq 0 ]
check "job is done" [ "$(sql "$db" "select status from jobs")" = done ]
check "both hog runs are oom-killed" [ "$(sql "$db" "select count(*) from runs where workload_idx=0 and status='oom-killed'")" = 2 ]
check "oom kills counted from memcg events" [ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and m.name='memcg.oom_kills' and m.value>=1")" = 2 ]
check "failing command recorded failed with exit code 3" [ "$(sql "$db" "select count(*) from runs where workload_idx=1 and status='failed' and exit_code=3")" = 2 ]
check "its stderr tail is kept" [ "$(sql "$db" "select count(*) from runs where workload_idx=1 and stderr_tail like '%oops%'")" = 2 ]
check "the job went on: later workload ran ok" [ "$(sql "$db" "select count(*) from runs where workload_idx=2 and status='ok'")" = 2 ]
check "command metrics from kab-metric lines (failed runs keep theirs too)" [ "$(sql "$db" "select count(*) from metrics where name='command.answer' and value=42")" = 4 ]
check "report lists the runs not counted" grep -q "oom-killed" "$IT_TMP/out"
it_end
