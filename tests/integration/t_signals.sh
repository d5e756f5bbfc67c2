#!/usr/bin/env bash
# SIGTERM during a run leaves no residue and a consistent database; after
# kill -9, the next kab start restores the machine and the job resumes.
# kab's stdout and stderr closed halfway (kab run JOB 2>&1 | head -3) stop
# the job as SIGHUP does: restored, the job cancelled with the reason, and
# it resumes. kabd whose log pipe closes goes on with its job.
. "$(dirname "$0")/lib.sh"
it_begin
command -v stress-ng >/dev/null || skip_all "stress-ng is not installed"

# sig.job's runs last 4 s. The SIGTERM and kill -9 parts decide how long
# theirs last, so that a run is in progress when the signal comes however
# slow the machine: term.job's run lasts 300 s (SIGTERM ends it); kill.job's
# as long as $IT_TMP/runtime says (300 s until the kill, 4 s for the resumed
# ones).
sig_job() { # the [workload] lines
	cat <<JOB
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
$1
memory.max = 48M
; stress-ng's vm worker draws memcg OOM kills on cgroup v1 here (see
; examples/demo.job); this test is about signals, t_oom.sh about kills
oom = tolerate
JOB
}
sig_job "type = stress-ng
args = --vm 1 --vm-bytes 64M --vm-keep --timeout 4" >"$IT_TMP/sig.job"
sig_job "type = stress-ng
args = --vm 1 --vm-bytes 64M --vm-keep --timeout 300" >"$IT_TMP/term.job"
sig_job "type = command
command = sh -c \"exec stress-ng --vm 1 --vm-bytes 64M --vm-keep --timeout \$(cat $IT_TMP/runtime)\"" >"$IT_TMP/kill.job"
echo 300 >"$IT_TMP/runtime"

started() { # db: a run is 'started' and its workload is in the cgroup (prints what it sees)
	local n; n=$(sql "$1" "select count(*) from runs where status='started'" 2>/dev/null)
	echo "runs started: ${n:-none}; stress-ng pids: $(pgrep -x stress-ng | tr '\n' ' ')"
	[ "$n" = 1 ] && pgrep -x stress-ng >/dev/null
}
wait_started() { # db: waits until a run is 'started' and its workload is in the cgroup
	wait_for -s "echo 'kab run said:'; tail -n 15 '$IT_TMP/err'" "a run to start, with stress-ng in it" 10 started "$1"
}

db="$IT_TMP/term.db"
$KAB run --db "$db" "$IT_TMP/term.job" >"$IT_TMP/out" 2>"$IT_TMP/err" &
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
$KAB run --db "$db" "$IT_TMP/kill.job" >"$IT_TMP/out" 2>"$IT_TMP/err" &
pid=$!; IT_PIDS+=($pid)
check "second run started" wait_started "$db"
kill -KILL $pid
wait $pid 2>/dev/null
check "kill -9 leaves state behind (journal has entries)" [ "$(sql "$db" "select count(*) from journal")" -ge 2 ]
echo 4 >"$IT_TMP/runtime"
$KAB run --db "$db" --resume 1 >"$IT_TMP/out2" 2>"$IT_TMP/err2"
rc=$?
check "resume after kill -9: exits 0" [ $rc -eq 0 ]
check "resume: killed run marked aborted with a reason" [ "$(sql "$db" "select count(*) from runs where status='aborted' and reason like '%killed%'")" = 1 ]
check "resume: every step finished, 2 ok runs" [ "$(sql "$db" "select count(*) from runs where status='ok'")" = 2 ]
# the run killed was the workload's warm-up (the schedule's first step): a
# warm-up cut short runs again on resume, then the pair
check "resume: the warm-up killed mid-run ran again, then the pair" \
	[ "$(sql "$db" "select group_concat(status || ':' || pair, ',') from (select status, pair from runs order by id)")" = "aborted:-1,warmup:-1,ok:0,ok:0" ]
check "resume: job done" [ "$(sql "$db" "select status from jobs")" = done ]
check "resume: no stress-ng left" bash -c '! pgrep -x stress-ng'

# wait_gone PID SECONDS: until PID has exited; 1 if it still runs then,
# saying what it is doing
wait_gone() {
	wait_for -s "ps -o pid,stat,etime,wchan:20,args -p $1 --ppid $1 | cut -c1-160" "pid $1 to exit" "$2" pid_gone "$1"
}
output_closed="kab's output was closed (standard error: Broken pipe)"

# ---- kab's output closed in the middle of a run: a reader we control takes
# the first lines, waits for the run to be started, then leaves. The run
# lasts until the test ends it (kill.job's, 300 s; 4 s for the resumed) ----
cp "$IT_TMP/kill.job" "$IT_TMP/long.job"
echo 300 >"$IT_TMP/runtime"
db="$IT_TMP/pipe.db"
mkfifo "$IT_TMP/out.fifo" "$IT_TMP/ctl.fifo"
{ head -n 3 >"$IT_TMP/head"; read -r _ <"$IT_TMP/ctl.fifo"; } <"$IT_TMP/out.fifo" &
reader=$!; IT_PIDS+=($reader)
$KAB run --db "$db" "$IT_TMP/long.job" >"$IT_TMP/out.fifo" 2>&1 &
pid=$!; IT_PIDS+=($pid)
check "closed output: run started" wait_started "$db"
check "closed output: the variant's swappiness is in force" [ "$(cat /proc/sys/vm/swappiness)" = 99 ]
check "closed output: the reader had kab's first lines" grep -q '^kab: job 1 "it-signals": 3 runs (1 pairs .*warm-up' "$IT_TMP/head"
timeout 10 bash -c 'echo close >"$1"' _ "$IT_TMP/ctl.fifo"
wait $reader
t0=$(date +%s.%N)
check "closed output: kab exits within 10 s (not killed by SIGPIPE)" wait_gone $pid 10
wait $pid; rc=$?
took=$(echo "$(date +%s.%N) - $t0" | bc)
check "closed output: kab exits 141 (its output closed)" [ $rc -eq 141 ]
check "closed output: stopped in the middle of the run (300 s long; ${took} s)" [ "$(echo "$took < 6" | bc)" = 1 ]
check "closed output: the run is aborted with the reason" \
	[ "$(sql "$db" "select status || '|' || reason from runs")" = "aborted|$output_closed; not counted" ]
check "closed output: the job is cancelled with the reason and how to resume" \
	[ "$(sql "$db" "select status || '|' || reason from jobs")" = "cancelled|$output_closed; its finished runs are kept and kab run --resume 1 continues the job" ]
check "closed output: journal empty" [ "$(sql "$db" "select count(*) from journal")" = 0 ]
check "closed output: no stress-ng left" bash -c '! pgrep -x stress-ng'
check "closed output: no kab cgroup, zram, swap or changed knob" no_residue
$KAB report 1 --db "$db" >"$IT_TMP/report" 2>&1
check "closed output: kab report shows why the job stopped" \
	grep -qF "(cancelled: $output_closed; its finished runs are kept and kab run --resume 1" "$IT_TMP/report"

# ---- the issue's own pipe: the next kab run names the stopped job first,
# and | head -3 stops this one too ----
$KAB run --db "$db" "$IT_TMP/sig.job" 2>&1 | head -n 3 >"$IT_TMP/head2"
rc=${PIPESTATUS[0]}
check "| head -3: kab exits 141" [ $rc -eq 141 ]
check "| head -3: the next kab run says job 1 was stopped by the closed output" \
	grep -qF "kab: warning: job 1 \"it-signals\" was cancelled: $output_closed" "$IT_TMP/head2"
check "| head -3: job 2 is cancelled because the output closed" \
	[ "$(sql "$db" "select count(*) from jobs where id = 2 and status = 'cancelled' and reason like 'kab''s output was closed%'")" = 1 ]
check "| head -3: no run left started" [ "$(sql "$db" "select count(*) from runs where status = 'started'")" = 0 ]
check "| head -3: no stress-ng left" bash -c '! pgrep -x stress-ng'
check "| head -3: nothing left on the machine" no_residue

echo 4 >"$IT_TMP/runtime"
$KAB run --db "$db" --resume 1 >"$IT_TMP/out3" 2>"$IT_TMP/err3"
rc=$?
check "resume after the closed output: exits 0" [ $rc -eq 0 ]
check "resume: says what stopped the job" grep -qF "resuming job 1 \"it-signals\" (cancelled: $output_closed" "$IT_TMP/err3"
# (the aborted run was the warm-up: it ran again before the pair)
check "resume: job 1 done with 2 ok runs, the aborted warm-up and the one that ran" \
	[ "$(sql "$db" "select status from jobs where id = 1"):$(sql "$db" "select group_concat(status, ',') from (select status from runs where job_id = 1 order by id)")" = "done:aborted,warmup,ok,ok" ]
check "resume: the report is printed" grep -q '^kab report: job 1 "it-signals" (done' "$IT_TMP/out3"

# ---- kabd whose stderr is a pipe that closes: the log goes to /dev/null,
# kabd and its job go on, and its workloads get SIGPIPE at its default ----
if [ -x "$KABD" ] && command -v curl >/dev/null; then
	trap 'kabd_stop; it_cleanup' EXIT
	kdb="$IT_TMP/kabd/kab.db"
	mkfifo "$IT_TMP/kabd.fifo"
	{ head -n 1 >/dev/null; read -r _ <"$IT_TMP/ctl.fifo"; } <"$IT_TMP/kabd.fifo" &
	reader=$!; IT_PIDS+=($reader)
	# on its own unix socket only: the log pipe is the point here, not TCP
	ksock=$IT_TMP/kabd-pipe.sock
	"$KABD" --db "$kdb" --socket "$ksock" >"$IT_TMP/kabd.fifo" 2>&1 8>&- &
	KABD_PID=$!; IT_PIDS+=($KABD_PID)
	# its log is in the pipe: what it saw is whether it answers or exited
	up=""
	wait_for "kabd on $ksock to answer /health" 15 kabd_poll "$ksock" && [ "$KABD_SAW" = up ] && up=1
	check "kabd: starts with its stderr on a pipe" [ -n "$up" ]
	timeout 10 bash -c 'echo close >"$1"' _ "$IT_TMP/ctl.fifo"
	wait $reader
	cat >"$IT_TMP/kabd.job" <<'JOB'
[job]
name = it-kabd-pipe
pairs = 1
[variant A]
name = a
[variant B]
name = b
[workload sigpipe]
type = command
command = sh -c '! grep -Eq "^SigIgn:.*[13579bdf][0-9a-f]{3}$" /proc/self/status'
[workload vm]
type = stress-ng
args = --vm 1 --vm-bytes 32M --timeout 2
memory.max = 64M
JOB
	id=$(curl -s -X POST -H "$JOB_CT" --data-binary @"$IT_TMP/kabd.job" --unix-socket "$ksock" http://localhost/api/v1/jobs | tr -dc '0-9')
	check "kabd: the job is accepted after its log pipe closed" [ -n "$id" ]
	pipe_job_done() { # the job is done, or kabd is gone (prints both)
		local st; st=$(sql "$kdb" "select status from jobs where id = ${id:-0}" 2>/dev/null)
		echo "job ${id:-?} is ${st:-not there}: runs $(sql "$kdb" "select group_concat(status, ' ') from runs where job_id = ${id:-0}" 2>/dev/null); kabd $(pid_gone $KABD_PID && echo exited || echo runs)"
		[ "$st" = done ] || pid_gone $KABD_PID
	}
	wait_for "job ${id:-?} to be done under kabd with the closed log pipe" 60 pipe_job_done
	check "kabd: still running after logging to the closed pipe" kill -0 $KABD_PID
	check "kabd: its stderr is /dev/null now" [ "$(readlink /proc/$KABD_PID/fd/2)" = /dev/null ]
	check "kabd: the job is done" [ "$(sql "$kdb" "select status from jobs where id = ${id:-0}")" = done ]
	check "kabd: 4 ok runs (the workload's SIGPIPE is not ignored)" \
		[ "$(sql "$kdb" "select count(*) from runs where job_id = ${id:-0} and status = 'ok'")" = 4 ]
	kabd_stop; rc=$?
	check "kabd: stops cleanly on SIGTERM" [ $rc -eq 0 ]
else
	echo "  skip kabd with a closed log pipe: $KABD or curl missing"
	IT_SKIP=$((IT_SKIP + 1))
fi
it_end
