#!/usr/bin/env bash
# SIGTERM during a run leaves no residue and a consistent database; after
# kill -9, the next kab start restores the machine and the job resumes.
. "$(dirname "$0")/lib.sh"
it_begin
command -v stress-ng >/dev/null || skip_all "stress-ng is not installed"

cat >"$IT_TMP/sig.job" <<JOB
[job]
name = it-signals
pairs = 1
[swap]
device = zram
size = 256M
[variant A]
name = a
sysctl vm.swappiness = 99
[variant B]
name = b
sysctl vm.swappiness = 98
[workload vm]
type = stress-ng
args = --vm 1 --vm-bytes 64M --vm-keep --timeout 4
memory.max = 48M
JOB

wait_started() { # db: waits until a run is 'started' and its workload is in the cgroup
	local i
	for i in $(seq 1 100); do
		[ "$(sql "$1" "select count(*) from runs where status='started'" 2>/dev/null)" = 1 ] &&
			pgrep -x stress-ng >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

db="$IT_TMP/term.db"
$KAB run --db "$db" "$IT_TMP/sig.job" >"$IT_TMP/out" 2>"$IT_TMP/err" &
pid=$!; IT_PIDS+=($pid)
check "run started" wait_started "$db"
kill -TERM $pid
wait $pid; rc=$?
check "SIGTERM: kab exits 130" [ $rc -eq 130 ]
check "SIGTERM: the run is aborted" [ "$(sql "$db" "select status from runs")" = aborted ]
check "SIGTERM: the job is cancelled" [ "$(sql "$db" "select status from jobs")" = cancelled ]
check "SIGTERM: journal empty" [ "$(sql "$db" "select count(*) from journal")" = 0 ]
check "SIGTERM: database integrity ok" [ "$(sql "$db" "pragma integrity_check")" = ok ]
check "SIGTERM: no stress-ng left" bash -c '! pgrep -x stress-ng'
check "SIGTERM: nothing left on the machine" no_residue

db="$IT_TMP/kill.db"
$KAB run --db "$db" "$IT_TMP/sig.job" >"$IT_TMP/out" 2>"$IT_TMP/err" &
pid=$!; IT_PIDS+=($pid)
check "second run started" wait_started "$db"
kill -KILL $pid
wait $pid 2>/dev/null
check "kill -9 leaves state behind (journal has entries)" [ "$(sql "$db" "select count(*) from journal")" -ge 2 ]
$KAB run --db "$db" --resume 1 >"$IT_TMP/out2" 2>"$IT_TMP/err2"
rc=$?
check "resume after kill -9: exits 0" [ $rc -eq 0 ]
check "resume: killed run marked aborted with a reason" [ "$(sql "$db" "select count(*) from runs where status='aborted' and reason like '%killed%'")" = 1 ]
check "resume: every step finished, 2 ok runs" [ "$(sql "$db" "select count(*) from runs where status='ok'")" = 2 ]
check "resume: job done" [ "$(sql "$db" "select status from jobs")" = done ]
check "resume: no stress-ng left" bash -c '! pgrep -x stress-ng'
it_end
