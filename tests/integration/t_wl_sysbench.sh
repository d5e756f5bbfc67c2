#!/usr/bin/env bash
# sysbench-oltp end to end: a tiny OLTP job on a real MariaDB server in a
# real memcg with zram swap, and its failure cases: the server killed
# mid-run, its socket taken by a stale server, a prepare sysbench rejects,
# and a memcg too small for the server.
. "$(dirname "$0")/lib.sh"
it_begin
for p in sysbench mariadb-install-db; do
	command -v $p >/dev/null || skip_all "$p is not installed (apt-get install mariadb-server sysbench)"
done
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
[ -x "$MARIADBD" ] || skip_all "mariadbd is not installed (apt-get install mariadb-server)"
[ -x build/kab-sysbench-oltp ] || skip_all "build/kab-sysbench-oltp is not built"

# The directory of workload $2 (default 0) of job 1 in database $1, as the
# database names it while the job has one (kab makes it under the state
# directory's jobs/); "" once the job is over.
jobdir_of() {
	local name
	name=$(sql "$1" "select ifnull(jobdir, '') from jobs where id = 1" 2>/dev/null)
	[ -n "$name" ] && printf '%s/jobs/%s/w%d' "$STATE_DIRECTORY" "$name" "${2:-0}"
}
# mariadbd processes of ours (under this test's state directory or tmp)
our_servers() { pgrep -f -- "--datadir=$IT_TMP" ; }

# The jobs that run pass "warmup = 0" as their extra [job] line: they check
# what each sysbench run records and the server's failures run by run (the
# crash test finds its runs by step), and a sysbench run is the slow part;
# the warm-up (an uncounted run like these, on by default) is tested in
# t_e2e, t_aa and t_oom. The bad job keeps its lines as they were.
job() { # name, extra [job] lines, workload lines, extra sections
	cat <<JOB
[job]
name = $1
pairs = 1
interval = 0.5s
$2

[variant A]
name = swappy-60
sysctl vm.swappiness = 60

[variant B]
name = swappy-100
sysctl vm.swappiness = 100
${4:-}

[workload oltp]
type = sysbench-oltp
tables = 2
table_size = 1000
threads = 2
buffer_pool = 64M
report_interval = 1s
$3
JOB
}

# ---- the tiny job: two variants, every run ok, tps as sysbench printed ----
db="$IT_TMP/ok.db"
job it-sysbench "warmup = 0" "duration = 5s
memory.max = 512M" "
[swap]
device = zram
size = 256M" >"$IT_TMP/ok.job"
$KAB run --db "$db" "$IT_TMP/ok.job" >"$IT_TMP/ok.out" 2>"$IT_TMP/ok.err"
rc=$?
check "kab run exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || cat "$IT_TMP/ok.err"
check "2 runs, both ok" [ "$(sql "$db" "select count(*) from runs where status='ok'")" = 2 ]
check "sysbench.tps > 0 in every run" [ "$(sql "$db" "select count(*) from metrics where name='sysbench.tps' and value > 0")" = 2 ]
check "sysbench.lat_p95_ms > 0 in every run" [ "$(sql "$db" "select count(*) from metrics where name='sysbench.lat_p95_ms' and value > 0")" = 2 ]
same_tps=0
for run in $(sql "$db" "select id from runs"); do
	printed=$(sql "$db" "select stdout_tail from runs where id=$run" |
		sed -nE 's/^ *transactions: +[0-9]+ +\(([0-9.]+) per sec\.\)$/\1/p')
	stored=$(sql "$db" "select value from metrics where run_id=$run and name='sysbench.tps'")
	[ -n "$printed" ] && [ "$(echo "$printed == $stored" | bc)" = 1 ] && same_tps=$((same_tps + 1))
	echo "    run $run: sysbench printed $printed tx/s, stored $stored"
done
check "sysbench.tps equals sysbench's printed \"transactions: N (X per sec.)\" in every run" [ $same_tps = 2 ]
check "qps, avg and max latency, errors, reconnects recorded" \
	[ "$(sql "$db" "select count(*) from metrics where name in ('sysbench.qps','sysbench.lat_avg_ms','sysbench.lat_max_ms','sysbench.errors','sysbench.reconnects')")" = 10 ]
check "MariaDB counter deltas recorded (buffer pool read requests > 0)" \
	[ "$(sql "$db" "select count(*) from metrics where name='mariadb.Innodb_buffer_pool_read_requests' and value > 0")" = 2 ]
check "whether InnoDB got io_uring is recorded" [ "$(sql "$db" "select count(*) from metrics where name='mariadb.innodb_io_uring'")" = 2 ]
check "the data was prepared once for both runs" [ "$(grep -c "preparing sysbench data" "$IT_TMP/ok.err")" = 1 ]
check "the server was ready through its READY=1 notification" \
	[ "$(sql "$db" "select count(*) from runs where stderr_tail like '%ready in%'")" = 2 ]
pristine=$(sed -nE 's/.*preparing sysbench data .* in (.*)\/pristine$/\1/p' "$IT_TMP/ok.err")
in_state_dir() { [[ $1 == "$STATE_DIRECTORY"/jobs/job1-??????/w0 ]]; }
check "the job directory is where kab puts it ($pristine)" in_state_dir "$pristine"
check "and the database no longer names one once the job is done" [ -z "$(jobdir_of "$db")" ]
check "the job directory with its datadirs is removed" [ ! -e "$pristine" ]
check "no mariadbd left running" [ -z "$(our_servers)" ]

# ---- the server killed -9 mid-run: a failed run with the reason, quickly ----
db="$IT_TMP/crash.db"
job it-sysbench-crash "warmup = 0" "duration = 30s" >"$IT_TMP/crash.job"
$KAB run --db "$db" "$IT_TMP/crash.job" >"$IT_TMP/crash.out" 2>"$IT_TMP/crash.err" &
kab_pid=$!
IT_PIDS+=("$kab_pid")
killed=0
# in_run STEP: mariadbd and sysbench are in the step's memcg ($server,
# $bench) and sysbench is running its queries: it has printed an interval
# report ("[ 1s ] thds: ...") into the run's stdout (its working directory)
in_run() {
	local p reports=0
	server="" bench=""
	for p in $(cat "$(memcg_root)/kab/job1-step$1/cgroup.procs" 2>/dev/null); do
		case $(cat /proc/$p/comm 2>/dev/null) in
		mariadbd) server=$p ;;
		sysbench) bench=$p ;;
		esac
	done
	[ -n "$bench" ] && reports=$(grep -cE '^\[ *[0-9]+s \]' "/proc/$bench/cwd/stdout" 2>/dev/null)
	echo "step $1's memcg: mariadbd ${server:-none}, sysbench ${bench:-none}; sysbench's interval reports: ${reports:-0}"
	[ -n "$server" ] && [ -n "$bench" ] && [ "${reports:-0}" -ge 1 ]
}
for step in 0 1; do
	if wait_for -s "echo 'kab run said:'; tail -n 10 '$IT_TMP/crash.err'" \
		"mariadbd and sysbench running queries in step $step's memcg" 40 in_run $step; then
		kill -9 "$server" && killed=$((killed + 1))
	fi
done
wait "$kab_pid"
check "mariadbd found in each run's memcg and killed -9 during sysbench" [ $killed = 2 ]
check "both runs are recorded as failed" [ "$(sql "$db" "select group_concat(status) from runs")" = failed,failed ]
check "its stderr says the server was killed, with the error log tail" \
	[ "$(sql "$db" "select count(*) from runs where stderr_tail like '%mariadbd killed by signal 9%' and stderr_tail like '%error log%ready for connections%'")" = 2 ]
check "the runs ended when the server died, not after their 30 s" \
	[ "$(sql "$db" "select count(*) from metrics where name='time.wall_s' and value < 20")" = 2 ]
check "no mariadbd left running" [ -z "$(our_servers)" ]

# ---- a stale server holding the run's socket ----
# The job's directory is private and new, so the only server that can hold
# its socket is one started there after kab made it: a first workload (w0)
# holds the job, once sysbench's (w1) data is prepared, until the test has
# its stale server listening and says go (or 120 s pass).
db="$IT_TMP/sock.db"
mkdir -p "$IT_TMP/stale"
mariadb-install-db --no-defaults --datadir="$IT_TMP/stale" --user=root --auth-root-authentication-method=normal \
	--skip-test-db >"$IT_TMP/stale.log" 2>&1
job it-sysbench-sock "warmup = 0" "duration = 5s" "
[workload pause]
type = command
command = timeout 120 sh -c \"until [ -e $IT_TMP/sock.go ]; do sleep 0.1; done\"" >"$IT_TMP/sock.job"
$KAB run --db "$db" "$IT_TMP/sock.job" >"$IT_TMP/sock.out" 2>"$IT_TMP/sock.err" &
kab_pid=$!
IT_PIDS+=("$kab_pid")
dir=""
prepared() { dir=$(jobdir_of "$db" 1) && [ -f "$dir/pristine.stamp" ]; }
wait_for -s "echo 'kab run said:'; tail -n 10 '$IT_TMP/sock.err'" "the job's sysbench data prepared in its directory" 120 prepared
NOTIFY_SOCKET= "$MARIADBD" --no-defaults --datadir="$IT_TMP/stale" --socket="$dir/mysqld.sock" --skip-networking \
	--user=root --log-error="$IT_TMP/stale.err" --innodb-buffer-pool-size=16M >/dev/null 2>&1 &
stale=$!
IT_PIDS+=("$stale")
wait_for -s "echo 'its error log ends:'; tail -n 10 '$IT_TMP/stale.err'" "the stale server to listen on $dir/mysqld.sock" 30 \
	"[ -S '$dir/mysqld.sock' ]"
check "a stale server listens on the run's socket $dir/mysqld.sock before the first sysbench run" \
	[ -S "$dir/mysqld.sock" -a "$(sql "$db" "select count(*) from runs where workload_idx = 1")" = 0 ]
touch "$IT_TMP/sock.go"
wait "$kab_pid"
check "both runs are recorded as failed" [ "$(sql "$db" "select group_concat(status) from runs where workload_idx = 1")" = failed,failed ]
check "their stderr has the server's error: another process listens on the socket" \
	[ "$(sql "$db" "select count(*) from runs where workload_idx = 1 and stderr_tail like '%Another process is already listening on the socket%'")" = 2 ]
kill "$stale"
wait "$stale" 2>/dev/null
check "no mariadbd left running" [ -z "$(our_servers)" ]

# ---- a prepare that fails: a buffer pool the server cannot map ----
db="$IT_TMP/prep.db"
job it-sysbench-prep "warmup = 0" "duration = 5s" | sed 's/^buffer_pool = 64M$/buffer_pool = 1T/' >"$IT_TMP/prep.job"
$KAB run --db "$db" "$IT_TMP/prep.job" >"$IT_TMP/prep.out" 2>"$IT_TMP/prep.err"
rc=$?
check "kab run fails" [ $rc -ne 0 ]
check "the job is failed before any run" [ "$(sql "$db" "select status || ':' || (select count(*) from runs) from jobs")" = failed:0 ]
check "the message has the helper's verdict and the server's error" \
	grep -q "sysbench prepare failed: mariadbd exited with status 1 while starting.*; server: .*Out of memory" "$IT_TMP/prep.err"
grep "sysbench prepare failed" "$IT_TMP/prep.err" | cut -c1-300 | sed 's/^/    /'
check "no mariadbd left running, the job directory removed" [ -z "$(our_servers)" -a -z "$(jobdir_of "$db")" -a -z "$(ls -A "$STATE_DIRECTORY/jobs")" ]

# ---- bad keys: every one reported with its file:line before anything runs ----
job it-sysbench-bad "" "duration = 2.5s
test = oltp_raed_write" | sed 's/^table_size = 1000$/table_size = 3000000000/' >"$IT_TMP/bad.job"
$KAB check "$IT_TMP/bad.job" >/dev/null 2>"$IT_TMP/bad.err"
check "kab check: table_size above sysbench's int, with its line" grep -q "bad.job:19: .*table_size \"3000000000\" must be a whole number from 1 to 2147483647" "$IT_TMP/bad.err"
check "kab check: a fractional duration" grep -q "bad.job:23: .*duration \"2.5s\" must be whole seconds" "$IT_TMP/bad.err"
check "kab check: a misspelt test, with a hint" grep -q "bad.job:24: .*test \"oltp_raed_write\" is not one of oltp_read_write, .* (did you mean \"oltp_read_write\"?)" "$IT_TMP/bad.err"

# ---- a memcg too small for the server: the OOM killer takes it ----
db="$IT_TMP/oom.db"
job it-sysbench-oom "warmup = 0" "duration = 5s
memory.max = 48M
memory.swap.max = 0" >"$IT_TMP/oom.job"
$KAB run --db "$db" "$IT_TMP/oom.job" >"$IT_TMP/oom.out" 2>"$IT_TMP/oom.err"
check "both runs are recorded as oom-killed" [ "$(sql "$db" "select group_concat(status) from runs")" = oom-killed,oom-killed ]
check "with the memcg's OOM kills counted and the error log tail in stderr" \
	[ "$(sql "$db" "select count(*) from runs r join metrics m on m.run_id=r.id and m.name='memcg.oom_kills' where m.value > 0 and r.stderr_tail like '%mariadbd%error log%'")" = 2 ]
sql "$db" "select '    ' || status || ': ' || reason from runs"
check "no mariadbd left running" [ -z "$(our_servers)" ]
# KEEP=DIR keeps the job files, databases and logs for a look
[ -n "${KEEP:-}" ] && mkdir -p "$KEEP" && cp -r "$IT_TMP/." "$KEEP/"
it_end
