#!/usr/bin/env bash
# A workload that exceeds its limit with no swap is recorded oom-killed and
# the job goes on; a failing command is recorded failed with its exit code.
# A workload that exits 0 although the memcg OOM killer fired during it is
# oom-contaminated and not counted (the report's first lines warn), unless
# it says oom = tolerate; a run whose metrics miss its expect is
# expect-failed.
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

[workload survivor]
type = command
command = sh -c "dd if=/dev/zero of=/dev/null bs=128M count=1; echo kab-metric answer 42 things; exit 0"
memory.max = 32M
memory.swap.max = 0

[workload tolerant]
type = command
command = sh -c "dd if=/dev/zero of=/dev/null bs=128M count=1; echo kab-metric answer 42 things; exit 0"
memory.max = 32M
memory.swap.max = 0
oom = tolerate

[workload expecting]
type = command
command = sh -c "echo kab-metric answer 42 things"
expect = command.answer >= 42
expect.a = command.answer > 50
expect.b = command.missing > 0
JOB
db="$IT_TMP/oom.db"
$KAB run --db "$db" "$IT_TMP/oom.job" >"$IT_TMP/out" 2>"$IT_TMP/err"
rc=$?
check "kab run finishes the job (exit 0)" [ $rc -eq 0 ]
check "job is done" [ "$(sql "$db" "select status from jobs")" = done ]
# Each workload also ran its uncounted warm-up first (in variant a): its
# status is warmup whatever happened, which its reason says, and its
# metrics, stderr and kills are recorded like any run's; so the counts
# over all runs below are 3 a workload, those of a status 2.
check "both hog runs are oom-killed" [ "$(sql "$db" "select count(*) from runs where workload_idx=0 and status='oom-killed'")" = 2 ]
check "and its warm-up was, as its reason says" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx=0 and status='warmup' and reason like 'warm-up before the first pair, not counted (oom-killed: memcg OOM killer killed %)'")" = 1 ]
check "oom kills counted from memcg events (the warm-up's too)" [ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=0 and m.name='memcg.oom_kills' and m.value>=1")" = 3 ]
check "failing command recorded failed with exit code 3" [ "$(sql "$db" "select count(*) from runs where workload_idx=1 and status='failed' and exit_code=3")" = 2 ]
check "its stderr tail is kept (the warm-up's too)" [ "$(sql "$db" "select count(*) from runs where workload_idx=1 and stderr_tail like '%oops%'")" = 3 ]
check "the job went on: later workload ran ok" [ "$(sql "$db" "select count(*) from runs where workload_idx=2 and status='ok'")" = 2 ]
check "command metrics from kab-metric lines (failed runs and warm-ups keep theirs too)" [ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx in (1,2) and m.name='command.answer' and m.value=42")" = 6 ]
check "report lists the runs not counted" grep -q "oom-killed" "$IT_TMP/out"
status() { sql "$db" "select group_concat(status || ': ' || reason, ' | ') from runs where workload_idx=$1"; }
check "a run that exits 0 after a memcg OOM kill is oom-contaminated ($(status 3))" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx=3 and status='oom-contaminated' and exit_code=0 and reason like 'memcg OOM killer killed % process(es) during the run; oom = tolerate counts such runs'")" = 2 ]
check "oom = tolerate counts it ok ($(status 4))" [ "$(sql "$db" "select count(*) from runs where workload_idx=4 and status='ok'")" = 2 ]
check "... with its kills recorded (the warm-up's too)" [ "$(sql "$db" "select count(*) from metrics m join runs r on r.id=m.run_id where r.workload_idx=4 and m.name='memcg.oom_kills' and m.value>=1")" = 3 ]
check "expect.a missed: expect-failed with metric, value and comparison ($(status 5))" \
	[ "$(sql "$db" "select reason from runs where workload_idx=5 and variant_idx=0 and status='expect-failed'")" = "expect command.answer > 50: it was 42" ]
check "expect.b on an absent metric: expect-failed, saying so" \
	[ "$(sql "$db" "select reason from runs where workload_idx=5 and variant_idx=1 and status='expect-failed'")" = "expect command.missing > 0: the run recorded no command.missing" ]
check "the report warns first: most runs of a variant had OOM kills" \
	grep -qx "WARNING: workload survivor: 1 of 1 runs of a had memcg OOM kills and are not counted: lower the workload's footprint or raise memory.max" "$IT_TMP/out"
check "... for each variant" grep -q "^WARNING: workload survivor: 1 of 1 runs of b had" "$IT_TMP/out"
check "... before any table" [ "$(grep -n -m1 '^WARNING: workload survivor' "$IT_TMP/out" | cut -d: -f1)" -lt "$(grep -n -m1 '^== workload' "$IT_TMP/out" | cut -d: -f1)" ]
check "no warning for the tolerant workload" bash -c "! grep -q 'WARNING: workload tolerant' '$IT_TMP/out'"
check "oom = tolerate says so in its header" grep -q "^oom = tolerate: 2 of 2 counted runs had memcg OOM kills$" "$IT_TMP/out"
check "the contaminated runs are listed with their kill count" \
	grep -q "(pair 1, a, survivor): oom-contaminated: memcg OOM killer killed [0-9]* process(es) during the run" "$IT_TMP/out"
check "and the warm-up, named so, with what happened to it" \
	grep -q "(warm-up, a, survivor): warmup: warm-up before the first pair, not counted (oom-contaminated: memcg OOM killer killed" "$IT_TMP/out"
check "cover letter opens with the warning" bash -c "$KAB report 1 --db '$db' --format cover-letter | head -1 | grep -q '^WARNING: workload survivor'"
check "JSON carries it" bash -c "$KAB report 1 --db '$db' --format json | grep -q '\"warnings\": \[\"WARNING: workload survivor'"
it_end
