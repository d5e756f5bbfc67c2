#!/usr/bin/env bash
# The CLI as a client of kabd: kab submit --wait, status, report --url,
# cancel, their errors, over TCP with the token and over kabd's unix
# socket; and kill -9 of kabd mid-run: after a restart the job completes,
# the interrupted run recorded aborted, no run duplicated.
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
command -v curl >/dev/null || skip_all "curl is not installed"

DB="$IT_TMP/client.db"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$IT_TMP/token"
chmod 600 "$IT_TMP/token"
trap 'kabd_stop; it_cleanup' EXIT
start_kabd() { kabd_start "$1" --db "$DB" --token-file "$IT_TMP/token"; }
kabd_up --db "$DB" --token-file "$IT_TMP/token" || { cat "$IT_TMP/kabd.log"; fail "kabd starts"; it_end; exit; }
C=(--url "$URL" --token-file "$IT_TMP/token")

# a short real job: stress-ng in a 128M memcg with zram swap behind it
cat >"$IT_TMP/quick.job" <<'JOB'
[job]
name = client-quick
pairs = 2
interval = 0.2s
[swap]
device = zram
size = 512M
[variant A]
name = a
sysctl vm.swappiness = 60
[variant B]
name = b
sysctl vm.swappiness = 100
[workload vm]
type = stress-ng
args = --vm 1 --vm-bytes 192M --vm-keep --vm-method flip --vm-madvise normal --timeout 3
memory.max = 128M
; stress-ng's vm worker draws memcg OOM kills on cgroup v1 here (see
; examples/demo.job); this test is about the client, t_oom.sh about kills
oom = tolerate
JOB
id=$($KAB submit "$IT_TMP/quick.job" "${C[@]}" --wait 2>"$IT_TMP/progress")
rc=$?
check "kab submit --wait exits 0 when the job is done" [ $rc -eq 0 ]
check "it prints the job id" [ "$id" = 1 ]
# 5 runs: the 4 of 2 pairs and the workload's uncounted warm-up before them
check "it shows progress (run i of n)" grep -q "run [0-9]* of 5" "$IT_TMP/progress"
$KAB status 1 "${C[@]}" >"$IT_TMP/status"
check "kab status ID shows the job done" grep -q '"status": *"done"' "$IT_TMP/status"
$KAB status "${C[@]}" >"$IT_TMP/list"
check "kab status lists jobs" grep -q client-quick "$IT_TMP/list"
for f in text cover-letter markdown json csv; do
	$KAB report 1 "${C[@]}" --format $f >"$IT_TMP/report.$f"
	check "kab report --url --format $f" [ $? -eq 0 -a -s "$IT_TMP/report.$f" ]
done
check "the text report has stress-ng's bogo ops" grep -q "stress-ng.bogo_ops" "$IT_TMP/report.text"
check "every run ok, and the memcg swapped to zram (pswpout > 0 in each run)" [ "$(sql "$DB" \
	"select count(*) from runs r join metrics m on m.run_id = r.id and m.name = 'vmstat.pswpout'
	 where r.job_id = 1 and r.status = 'ok' and m.value > 0 and r.swap_devices like '%zram%'")" = 4 ]
check "the JSON report parses" /usr/bin/python3 -m json.tool "$IT_TMP/report.json" >/dev/null

$KAB submit "$IT_TMP/quick.job" --server "$URL" >/dev/null 2>"$IT_TMP/err"
check "submit without the token: exit 1, the server's 401 said" bash -c "[ $? -eq 1 ] && grep -q 'HTTP 401' '$IT_TMP/err'"
printf '[job]\npairs = lots\n' >"$IT_TMP/bad.job"
$KAB submit "$IT_TMP/bad.job" "${C[@]}" >/dev/null 2>"$IT_TMP/err"
check "submit of a bad job: exit 2 with its line numbers" bash -c "[ $? -eq 2 ] && grep -q '2: ' '$IT_TMP/err'"
$KAB cancel 1 "${C[@]}" >/dev/null 2>"$IT_TMP/err"
check "cancel of a finished job: exit 1 (409)" bash -c "[ $? -eq 1 ] && grep -q 'HTTP 409' '$IT_TMP/err'"
$KAB status 999 "${C[@]}" >/dev/null 2>&1
check "status of an unknown job: exit 2" [ $? -eq 2 ]
for v in "status" "status 1" "cancel 1" "report 1 --format text" "submit $IT_TMP/quick.job"; do
	$KAB $v --server http://127.0.0.1:1 >/dev/null 2>"$IT_TMP/err"
	rc=$?
	check "kab $v with no kabd there: exit 3, one line naming the URL" \
		bash -c "[ $rc -eq 3 ] && [ \$(wc -l <'$IT_TMP/err') = 1 ] && grep -q 'http://127.0.0.1:1/api/v1/.*is kabd running' '$IT_TMP/err'"
done

$KAB status 1 --server "$URL" >/dev/null 2>"$IT_TMP/err"
check "status over TCP without the token: exit 1, the server's 401 said" bash -c "[ $? -eq 1 ] && grep -q 'HTTP 401' '$IT_TMP/err'"
$KAB submit "$IT_TMP/quick.job" --url http://192.0.2.1:8469 --token-file "$IT_TMP/token" >/dev/null 2>"$IT_TMP/err"
check "no token over plain http to an address that is not loopback: exit 2, says why and what to do" \
	bash -c "[ $? -eq 2 ] && grep -q 'will not send the token to http://192.0.2.1:8469.*use https://' '$IT_TMP/err'"

# ---- over kabd's unix socket: no token, the kernel says who calls ----
S=(--socket "$KABD_SOCK")
$KAB status 1 "${S[@]}" >"$IT_TMP/status"
check "kab status --socket: the job, no token needed" grep -q '"status": *"done"' "$IT_TMP/status"
check "job 1 was submitted with the token" grep -q '"submitter": *"token"' "$IT_TMP/status"
$KAB report 1 --socket "$KABD_SOCK" --format csv >"$IT_TMP/report.sock.csv"
check "kab report --socket" cmp -s "$IT_TMP/report.sock.csv" "$IT_TMP/report.csv"
printf '[job]\nname = client-sock\npairs = 1\n[variant A]\nname = a\n[variant B]\nname = b\n[workload w]\ntype = command\ncommand = true\n' >"$IT_TMP/sock.job"
sid=$(KAB_SOCKET=$KABD_SOCK $KAB submit "$IT_TMP/sock.job" --wait 2>/dev/null)
check "kab submit over \$KAB_SOCKET --wait: done" [ $? -eq 0 -a -n "$sid" ]
check "the job records root as its submitter, from SO_PEERCRED" [ "$(sql "$DB" "select submitter from jobs where id = ${sid:-0}")" = "uid 0 (root)" ]
$KAB status --socket "$IT_TMP/no-such.sock" >/dev/null 2>"$IT_TMP/err"
check "kab status with no kabd on the socket: exit 3, one line naming the socket" \
	bash -c "[ $? -eq 3 ] && [ \$(wc -l <'$IT_TMP/err') = 1 ] && grep -q 'socket $IT_TMP/no-such.sock: No such file or directory (is kabd running' '$IT_TMP/err'"
if [ ! -e /run/kab/kabd.sock ]; then
	env -u KAB_URL -u KAB_SERVER -u KAB_SOCKET $KAB status >/dev/null 2>"$IT_TMP/err"
	check "kab status without options tries /run/kab/kabd.sock" grep -q 'socket /run/kab/kabd.sock' "$IT_TMP/err"
fi

# ---- kill -9 mid-run, restart: completes, nothing lost or counted twice ----
# The test holds the runs: the first one (the workload's warm-up) ends at
# once, every later one waits for $IT_TMP/go, which the test makes after
# kabd's restart; so a run is in progress when kabd is killed, however
# slow the machine, and the warm-up is done by then.
cat >"$IT_TMP/slow.job" <<JOB
[job]
name = client-restart
pairs = 2
[variant A]
name = a
[variant B]
name = b
[workload w]
type = command
command = sh -c "mkdir $IT_TMP/first 2>/dev/null || while [ ! -e $IT_TMP/go ]; do sleep 0.05; done; echo kab-metric answer 42 things"
memory.max = 64M
JOB
id2=$($KAB submit "$IT_TMP/slow.job" "${C[@]}")
runs2() { # the job's status and its runs' (printed)
	echo "job $id2: $(sql "$DB" "select status from jobs where id=${id2:-0}"); runs: $(sql "$DB" "select group_concat(status, ' ') from (select status from runs where job_id=${id2:-0} order by id)")"
}
held() { # a run of the job finished (the warm-up), and the next one started (held at the gate)
	runs2
	[ "$(sql "$DB" "select count(*) from runs where job_id=${id2:-0} and status in ('ok', 'warmup')")" -ge 1 ] &&
		[ "$(sql "$DB" "select count(*) from runs where job_id=${id2:-0} and status='started'")" = 1 ]
}
log_tail="echo 'kabd.log ends:'; tail -n 15 '$IT_TMP/kabd.log'"
wait_for -s "$log_tail" "a run of job $id2 to be finished and the next one started" 20 held
check "job $id2 has a run in progress" [ "$(sql "$DB" "select count(*) from runs where job_id=$id2 and status='started'")" = 1 ]
kill -9 "$KABD_PID"; wait "$KABD_PID" 2>/dev/null; KABD_PID=""
start_kabd "$PORT" || start_kabd "$PORT"
check "kabd starts again on the same database" [ -n "$KABD_PID" ]
: >"$IT_TMP/go"
job2_done() { runs2; [ "$(sql "$DB" "select status from jobs where id=${id2:-0}")" = done ]; }
wait_for -s "$log_tail" "job $id2 to be done after the restart" 30 job2_done
check "the job completes after the restart" [ "$(sql "$DB" "select status from jobs where id=$id2")" = done ]
check "the interrupted run is recorded aborted" [ "$(sql "$DB" "select count(*) from runs where job_id=$id2 and status='aborted'")" = 1 ]
check "every step has exactly one ok run (none lost, none twice)" \
	[ "$(sql "$DB" "select count(*) from (select step_id, count(*) c from runs where job_id=$id2 and status='ok' group by step_id having c = 1)")" = 4 ]
check "the warm-up, finished before the kill, was not run again after it" \
	[ "$(sql "$DB" "select count(*) || ':' || min(pair) from runs where job_id=$id2 and status = 'warmup'")" = "1:-1" ]
kabd_stop
it_end
