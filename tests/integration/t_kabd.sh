#!/usr/bin/env bash
# kabd end to end over HTTP: a job submitted with curl runs and reports in
# every format, a second one is cancelled mid-run, and bad requests get the
# right status (never a 500, never a crash). Over TCP every request carries
# the token. kabd is stopped with SIGTERM at the end, and killed if it will
# not stop.
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
command -v curl >/dev/null || skip_all "curl is not installed"
command -v stress-ng >/dev/null || skip_all "stress-ng is not installed"
PY=/usr/bin/python3
[ -x $PY ] || skip_all "$PY is not installed (for json.tool)"

trap 'kabd_stop; it_cleanup' EXIT

TOKEN=it-kabd-$RANDOM$RANDOM$RANDOM
echo "$TOKEN" >"$IT_TMP/token"
chmod 600 "$IT_TMP/token"
DB="$IT_TMP/db/kab.db"

start_kabd() { kabd_start "$1" --db "$DB" --token-file "$IT_TMP/token"; }
kabd_up --db "$DB" --token-file "$IT_TMP/token"
if [ -z "$PORT" ]; then
	cat "$IT_TMP/kabd.log"
	fail "kabd starts and answers /health"
	it_end; exit
fi
ok "kabd starts on 127.0.0.1:$PORT and answers /health"

# req METHOD PATH [curl args...]: prints the status; the body is in
# $IT_TMP/body. With the token unless NOAUTH=1; a POST as the job content
# type unless CT says another one (CT= none).
req() {
	local m=$1 p=$2 h=(); shift 2
	[ -n "${NOAUTH:-}" ] || h+=(-H "$AUTH")
	[ "$m" = POST ] && [ -n "${CT-application/x-kab-job}" ] && h+=(-H "Content-Type: ${CT-application/x-kab-job}")
	curl -s --path-as-is -o "$IT_TMP/body" -w '%{http_code}' -X "$m" "${h[@]}" "$@" "$URL$p"
}
# jget KEY...: a field of the JSON in $IT_TMP/body (list indexes as numbers)
jget() {
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    d = d[int(k)] if isinstance(d, list) else d[k]
print(d)' "$IT_TMP/body" "$@" 2>/dev/null
}
json_ok() { $PY -m json.tool "$IT_TMP/body" >/dev/null 2>&1; }
is_error_json() { [ -n "$(jget error)" ]; }
expect() { # description, expected status, METHOD PATH [curl args]
	local d=$1 want=$2; shift 2
	local got; got=$(req "$@")
	if [ "$got" = "$want" ] && is_error_json; then ok "$d: $want"; else
		fail "$d: want $want with a JSON error, got $got: $(head -c 300 "$IT_TMP/body")"; fi
}
log_tail="echo 'kabd.log ends:'; tail -n 15 '$IT_TMP/kabd.log'"
# status_in ID STATUS...: GET /jobs/ID (the body in $IT_TMP/body); its status is one of them
status_in() {
	local id=$1 s want; shift
	req GET "/api/v1/jobs/$id" >/dev/null
	s=$(jget status)
	echo "job $id is \"$s\""
	for want in "$@"; do [ "$s" = "$want" ] && return 0; done
	return 1
}
# wait_status ID SECONDS STATUS...: polls /jobs/ID until its status is one of them
wait_status() {
	local id=$1 t=$2; shift 2
	wait_for -s "$log_tail" "job $id to be $*" "$t" status_in "$id" "$@"
}

write_job() { # name, stress-ng timeout (300: a run that lasts until the test ends it)
	cat <<JOB
[job]
name = $1
pairs = 1
[variant A]
name = a
[variant B]
name = b
[workload vm]
type = stress-ng
args = --vm 1 --vm-bytes 32M --timeout $2
memory.max = 64M
JOB
}

# ---- health ----
check "GET /health: 200" [ "$(req GET /health)" = 200 ]
[ "$(req GET /api/v1/health)" = 200 ] && [ "$(jget status)" = ok ] && ok "/api/v1/health: status ok" ||
	fail "/api/v1/health: $(cat "$IT_TMP/body")"

# ---- a short real job, start to report ----
write_job kabd-short 2 >"$IT_TMP/short.job"
code=$(req POST /api/v1/jobs --data-binary @"$IT_TMP/short.job")
id1=$(jget id)
check "POST /jobs: 201 with an id" [ "$code" = 201 -a -n "$id1" ]
check "job $id1 ends done within 90 s" wait_status "$id1" 90 done failed cancelled
check "job $id1 is done" [ "$(jget status)" = done ]
# 3 runs: the pair's 2 and, before them, the workload's uncounted warm-up
check "job $id1 progress: 3 of 3 runs (the warm-up and 2)" [ "$(jget progress runs_done)/$(jget progress runs_total)" = 3/3 ]
check "job $id1 lists its variants and workload" [ "$(jget variants 1 name) $(jget workloads 0 type)" = "b stress-ng" ]
code=$(req GET "/api/v1/jobs/$id1/runs")
check "GET /jobs/$id1/runs: 200" [ "$code" = 200 ]
check "GET /jobs/$id1/runs: JSON" json_ok
check "the warm-up (pair 0, status warmup), then both runs ok, with provenance" \
	[ "$(jget runs 0 pair) $(jget runs 0 status) $(jget runs 1 status) $(jget runs 2 status) $(jget runs 1 provenance kernel_release)" \
	= "0 warmup ok ok $(uname -r)" ]
for f in json text cover-letter markdown csv; do
	code=$(req GET "/api/v1/jobs/$id1/report?format=$f")
	check "report format=$f: 200, not empty" [ "$code" = 200 -a -s "$IT_TMP/body" ]
done
req GET "/api/v1/jobs/$id1/report?format=json" >/dev/null
check "report format=json parses (json.tool)" json_ok
req GET "/api/v1/jobs/$id1/report" >/dev/null
check "report without format is JSON" json_ok
check "the text report has the bogo ops row" bash -c "curl -s -H '$AUTH' '$URL/api/v1/jobs/$id1/report?format=text' | grep -q bogo"
check "job $id1 records who submitted it: the token" [ "$(sql "$DB" "select submitter from jobs where id = $id1")" = token ]

# ---- a longer job, cancelled mid-run ----
write_job kabd-long 300 >"$IT_TMP/long.job"
code=$(req POST /api/v1/jobs --data-binary @"$IT_TMP/long.job")
id2=$(jget id)
check "POST the long job: 201" [ "$code" = 201 -a -n "$id2" ]
workload_going() { # ID: a run of the job has its workload going
	req GET "/api/v1/jobs/$1" >/dev/null
	local w; w=$(jget progress current workload)
	echo "job $1: status $(jget status), current workload ${w:-none}; stress-ng pids: $(pgrep -x stress-ng | tr '\n' ' ')"
	[ "$w" = vm ] && pgrep -x stress-ng >/dev/null
}
running() { wait_for -s "$log_tail" "a run of job $1 to have its workload going" 10 workload_going "$1"; }
check "job $id2 is running a run" running "$id2"
executor_running() { # prints /metrics' executor lines; the state is running
	local m; m=$(curl -s -H "$AUTH" "$URL/metrics" | grep '^kabd_executor_state')
	echo "${m:-no kabd_executor_state in /metrics}"
	grep -qx 'kabd_executor_state{state="running"} 1' <<<"$m"
}
wait_for "/metrics to say the executor is running" 10 executor_running
check "GET /metrics: executor running" bash -c "curl -s -H '$AUTH' '$URL/metrics' | grep -qx 'kabd_executor_state{state=\"running\"} 1'"
code=$(req POST "/api/v1/jobs/$id2/cancel")
check "POST /jobs/$id2/cancel: 202" [ "$code" = 202 ]
check "job $id2 ends cancelled within 20 s" wait_status "$id2" 20 cancelled done failed
check "job $id2 is cancelled" [ "$(jget status)" = cancelled ]
req GET "/api/v1/jobs/$id2/runs" >/dev/null
check "its run (the warm-up) is aborted" [ "$(jget runs 0 status) $(jget runs 0 pair)" = "aborted 0" ]
check "only one run was started" [ -z "$(jget runs 1 status)" ]
check "no stress-ng left" bash -c '! pgrep -x stress-ng'
expect "cancel a finished job" 409 POST "/api/v1/jobs/$id2/cancel"
check "a cancelled job still reports" [ "$(req GET "/api/v1/jobs/$id2/report?format=text")" = 200 ]

# a queued job cancelled before it runs: submitted behind a running one
write_job kabd-q1 300 >"$IT_TMP/q1.job"
write_job kabd-q2 2 >"$IT_TMP/q2.job"
req POST /api/v1/jobs --data-binary @"$IT_TMP/q1.job" >/dev/null; idq1=$(jget id)
req POST /api/v1/jobs --data-binary @"$IT_TMP/q2.job" >/dev/null; idq2=$(jget id)
check "job $idq1 starts" wait_status "$idq1" 20 running
req GET /metrics >/dev/null
check "/metrics: queue length 1 behind the running job" grep -qx 'kabd_queue_length 1' "$IT_TMP/body"
code=$(req POST "/api/v1/jobs/$idq2/cancel")
check "cancel a queued job: 200, cancelled at once" [ "$code" = 200 -a "$(jget status)" = cancelled ]
req POST "/api/v1/jobs/$idq1/cancel" >/dev/null
check "job $idq1 (running) ends cancelled" wait_status "$idq1" 20 cancelled
req GET "/api/v1/jobs/$idq2/runs" >/dev/null
check "the queued job never ran" [ -z "$(jget runs 0 status)" ]

# ---- bad input ----
printf '[job]\nname = bad\npairs = many\n[variant A]\n[workload w]\ntype = nosuch\n' >"$IT_TMP/bad.job"
code=$(req POST /api/v1/jobs --data-binary @"$IT_TMP/bad.job")
check "malformed job: 400" [ "$code" = 400 ]
check "malformed job: the errors name line 3 (pairs) and line 6 (type)" bash -c "$PY -c 'import json,sys; print(chr(10).join(json.load(open(sys.argv[1]))[\"errors\"]))' '$IT_TMP/body' | grep -q '^3: ' &&
	$PY -c 'import json,sys; print(chr(10).join(json.load(open(sys.argv[1]))[\"errors\"]))' '$IT_TMP/body' | grep -q '^6: '"
expect "empty body" 400 POST /api/v1/jobs --data-binary ''
# the body limit is the job text budget, 256 KiB (t_budget.sh has the rest)
head -c $((256 * 1024 + 1)) /dev/zero | tr '\0' x >"$IT_TMP/big"
expect "body over 256 KiB" 413 POST /api/v1/jobs --data-binary @"$IT_TMP/big"
expect "body over 256 KiB, chunked" 413 POST /api/v1/jobs -H 'Transfer-Encoding: chunked' --data-binary @"$IT_TMP/big"
head -c $((256 * 1024)) /dev/zero | tr '\0' '#' >"$IT_TMP/justfits"
expect "body of exactly 256 KiB is read (and is not a job)" 400 POST /api/v1/jobs --data-binary @"$IT_TMP/justfits"
expect "unknown id" 404 GET /api/v1/jobs/999999
expect "unknown id, runs" 404 GET /api/v1/jobs/999999/runs
expect "unknown id, report" 404 GET /api/v1/jobs/999999/report
expect "unknown id, cancel" 404 POST /api/v1/jobs/999999/cancel
expect "non-numeric id" 404 GET /api/v1/jobs/abc
expect "negative id" 404 GET /api/v1/jobs/-1
expect "huge id" 404 GET /api/v1/jobs/99999999999999999999999
expect "path traversal /../" 404 GET /api/v1/jobs/../../etc/passwd
expect "path traversal %2e%2e" 404 GET /api/v1/%2e%2e/%2e%2e/etc/passwd
expect "path traversal %2E%2E in an id" 404 GET "/api/v1/jobs/$id1/%2E%2E"
expect "unknown path" 404 GET /api/v1/nope
expect "outside the API" 404 GET /etc/passwd
code=$(req GET "/api/v1/jobs/%22%5C%0a%01%7f%ff%c3%28%e2%82")
check "quotes, control bytes and broken UTF-8 in the path: 404 that parses" [ "$code" = 404 ] && check "... JSON" json_ok
printf '[job]\nname = \xff\xfe"\\\x01\n\xc3\n' >"$IT_TMP/bytes.job"
code=$(req POST /api/v1/jobs --data-binary @"$IT_TMP/bytes.job")
check "broken UTF-8 in a job: 400" [ "$code" = 400 ]
check "... JSON" json_ok
expect "unknown report format" 400 GET "/api/v1/jobs/$id1/report?format=pdf"
NOAUTH=1 expect "POST without a token" 401 POST /api/v1/jobs --data-binary @"$IT_TMP/short.job"
NOAUTH=1 expect "POST with a wrong token" 401 POST /api/v1/jobs -H "Authorization: Bearer wrong-$TOKEN" --data-binary @"$IT_TMP/short.job"
NOAUTH=1 expect "token without Bearer" 401 POST /api/v1/jobs -H "Authorization: $TOKEN" --data-binary @"$IT_TMP/short.job"
NOAUTH=1 expect "cancel without a token" 401 POST "/api/v1/jobs/$id1/cancel"
NOAUTH=1 expect "GET without a token: reads need it too" 401 GET "/api/v1/jobs/$id1"
NOAUTH=1 expect "GET /health without a token" 401 GET /health
NOAUTH=1 expect "a page without a token" 401 GET /
check "401 says WWW-Authenticate: Bearer" bash -c "curl -s -i '$URL/api/v1/jobs' | grep -qi '^WWW-Authenticate: Bearer'"
CT=text/plain expect "POST as text/plain (a form or a no-cors fetch could send it)" 415 POST /api/v1/jobs --data-binary @"$IT_TMP/short.job"
CT= expect "POST with no content type" 415 POST /api/v1/jobs --data-binary @"$IT_TMP/short.job"
CT=application/x-www-form-urlencoded expect "cancel as a form" 415 POST "/api/v1/jobs/$id1/cancel"
expect "POST from another origin" 403 POST /api/v1/jobs -H "Origin: http://evil.example" --data-binary @"$IT_TMP/short.job"
expect "GET from another origin" 403 GET /api/v1/jobs -H "Origin: http://evil.example"
expect "a foreign Host (DNS rebinding)" 421 GET /api/v1/jobs -H "Host: evil.example:$PORT"
expect "POST to a foreign Host" 421 POST /api/v1/jobs -H "Host: evil.example:$PORT" --data-binary @"$IT_TMP/short.job"
check "a request with kabd's own Origin (http://127.0.0.1:$PORT) is served" \
	[ "$(req GET /api/v1/jobs -H "Origin: http://127.0.0.1:$PORT")" = 200 ]
expect "DELETE a job" 405 DELETE "/api/v1/jobs/$id1"
check "405 says Allow: GET, HEAD" bash -c "curl -s -i -H '$AUTH' -X PUT '$URL/api/v1/jobs/$id1' | grep -qi '^Allow: GET, HEAD'"
expect "GET /cancel" 405 GET "/api/v1/jobs/$id1/cancel"
expect "POST /health" 405 POST /health
expect "SQL in ?limit" 400 GET "/api/v1/jobs?limit=1;DROP%20TABLE%20jobs"
expect "SQL in ?limit, quoted" 400 GET "/api/v1/jobs?limit=1%27%20OR%20%271%27=%271"
expect "SQL in ?after" 400 GET "/api/v1/jobs?after=0%20OR%201=1"
expect "SQL in an id" 404 GET "/api/v1/jobs/1%20OR%201=1"
expect "SQL in ?format" 400 GET "/api/v1/jobs/$id1/report?format=json%27;DROP%20TABLE%20runs;--"
printf '[job]\nname = x\x27); DROP TABLE jobs; --\n' >"$IT_TMP/sqlname.job"
expect "SQL in a job name is a parse error, not SQL" 400 POST /api/v1/jobs --data-binary @"$IT_TMP/sqlname.job"
check "the jobs table is intact" [ "$(sql "$DB" "select count(*) from jobs")" = 4 ]

# ---- listing and metrics ----
code=$(req GET "/api/v1/jobs")
check "GET /jobs: 200, 4 jobs, newest first" [ "$code" = 200 -a "$(jget jobs 0 id)" = "$idq2" -a -z "$(jget jobs 4 id)" ]
code=$(req GET "/api/v1/jobs?limit=1")
check "GET /jobs?limit=1: one job and a next_after" [ "$code" = 200 -a "$(jget jobs 0 id)" = "$idq2" -a "$(jget next_after)" = "$idq2" -a -z "$(jget jobs 1 id)" ]
code=$(req GET "/api/v1/jobs?limit=2&after=$idq1")
check "GET /jobs?after=$idq1: the older ones" [ "$code" = 200 -a "$(jget jobs 0 id)" = "$id2" -a "$(jget jobs 1 id)" = "$id1" ]
check "GET /jobs?limit=100000 is capped, not an error" [ "$(req GET '/api/v1/jobs?limit=100000')" = 200 ]
code=$(req GET /metrics)
for series in 'kabd_up 1' 'kabd_executor_state{state="idle"} 1' 'kabd_queue_length 0' \
	'kabd_runs{status="ok"} 2' 'kabd_runs{status="warmup"} 1' 'kabd_runs{status="aborted"} 2' \
	'kabd_jobs{status="done"} 1' 'kabd_jobs{status="cancelled"} 3'; do
	check "/metrics: $series" grep -qxF "$series" "$IT_TMP/body"
done
lat=$(grep -E '^kab_sampler_lateness_p99_seconds\{run="[0-9]+"\} [0-9.e+-]+$' "$IT_TMP/body")
lrun=$(grep -oE 'run="[0-9]+"' <<<"$lat" | grep -oE '[0-9]+')
# a finished run: one whose status RUN_STATUS_LIST (db/store.h) marks finished
finished="'ok','failed','oom-killed','oom-contaminated','expect-failed','timed-out'"
check "/metrics: the sampler's p99 lateness of the newest finished run ($lat)" \
	[ -n "$lat" -a "$lrun" = "$(sql "$DB" "select max(r.id) from runs r join metrics m on m.run_id = r.id and m.name = 'sampler.lateness_p99_ms' where r.status in ($finished)")" ]
check "/metrics: and its sample count" grep -qE '^kab_sampler_samples\{run="'"$lrun"'"\} [1-9][0-9]*$' "$IT_TMP/body"
check "/metrics is text/plain" bash -c "curl -s -H '$AUTH' -o /dev/null -w '%{content_type}' '$URL/metrics' | grep -q '^text/plain'"

# ---- slow and half-open clients do not block the others ----
slow_pids=()
# (each holds its connection until the test kills it; a file says it has sent its part)
for i in 1 2 3 4; do
	# headers that never end, and a body that never comes
	(exec 3<>"/dev/tcp/127.0.0.1/$PORT"; printf 'GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n' "$PORT" >&3
		: >"$IT_TMP/stalled.h$i"; exec sleep 300) &
	slow_pids+=($!)
	(exec 3<>"/dev/tcp/127.0.0.1/$PORT"; printf 'POST /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n%s\r\n%s\r\nContent-Length: 1000\r\n\r\nab' \
		"$PORT" "$AUTH" "$JOB_CT" >&3; : >"$IT_TMP/stalled.b$i"; exec sleep 300) &
	slow_pids+=($!)
done
IT_PIDS+=("${slow_pids[@]}")
stalled_open() { # how many stalled clients have sent their part, and are connected to kabd (8 each)
	local sent open
	sent=$(ls "$IT_TMP"/stalled.* 2>/dev/null | wc -l)
	open=$(ss -tnH state established "( dport = :$PORT )" | wc -l)
	echo "    $sent of 8 stalled clients have sent their part; $open connections to port $PORT established"
	[ "$sent" = 8 ] && [ "$open" = 8 ]
}
wait_for "8 stalled connections to kabd" 10 stalled_open
t0=$(date +%s%N)
check "with 8 stalled connections, /health answers" [ "$(req GET /health)" = 200 ]
check "... and /jobs too, within a second" [ "$(req GET /api/v1/jobs)" = 200 -a $(( ($(date +%s%N) - t0) / 1000000 )) -lt 1000 ]
check "... while all 8 stalled connections are still open (kabd did not have to time them out first)" stalled_open
kill "${slow_pids[@]}" 2>/dev/null; wait "${slow_pids[@]}" 2>/dev/null

# ---- SIGTERM mid-run: the job is interrupted, and resumes at the next start ----
write_job kabd-resume 300 >"$IT_TMP/resume.job"
req POST /api/v1/jobs --data-binary @"$IT_TMP/resume.job" >/dev/null; idr=$(jget id)
check "job $idr is running a run" running "$idr"
kabd_stop
check "SIGTERM mid-run: kabd exits 0" [ $? -eq 0 ]
check "SIGTERM mid-run: the job is interrupted, not cancelled" [ "$(sql "$DB" "select status from jobs where id = $idr")" = interrupted ]
check "SIGTERM mid-run: its run is aborted" [ "$(sql "$DB" "select group_concat(status) from runs where job_id = $idr")" = aborted ]
check "SIGTERM mid-run: no stress-ng left" bash -c '! pgrep -x stress-ng'
check "SIGTERM mid-run: journal empty" [ "$(sql "$DB" "select count(*) from journal")" = 0 ]
check "kabd starts again on the same database" start_kabd "$PORT"
check "job $idr resumes with its next run" running "$idr"
req GET "/api/v1/jobs/$idr/runs" >/dev/null
# the run cut short was the warm-up: it is run again (it counts for nothing either way)
check "resumed: the aborted warm-up kept, the warm-up started again" \
	[ "$(jget runs 0 status) $(jget runs 1 status) $(jget runs 1 pair)" = "aborted started 0" -a "$(jget runs 0 step)" = "$(jget runs 1 step)" ]
req POST "/api/v1/jobs/$idr/cancel" >/dev/null
check "job $idr ends cancelled" wait_status "$idr" 20 cancelled

# ---- stop ----
check "kabd still serves after all that" [ "$(req GET /health)" = 200 ]
kabd_stop
check "SIGTERM: kabd exits 0" [ $? -eq 0 ]
check "kabd logged no crash" bash -c "! grep -qiE 'sanitizer|segmentation|assert' '$IT_TMP/kabd.log'"
check "database integrity ok" [ "$(sql "$DB" "pragma integrity_check")" = ok ]
check "journal empty" [ "$(sql "$DB" "select count(*) from journal")" = 0 ]

# ---- IPv6 ----
"$KABD" --db "$IT_TMP/v6.db" --listen "[::1]" >/dev/null 2>"$IT_TMP/err"
check "--listen [::1] without a port: exit 2, says what to give" bash -c "[ $? -eq 2 ] && grep -q 'IPv6' '$IT_TMP/err'"
"$KABD" --db "$IT_TMP/v6.db" --listen "[2001:db8::1]:$PORT" >/dev/null 2>"$IT_TMP/err"
check "--listen on a non-loopback IPv6 address without a token file or TLS: refused" \
	bash -c "[ $? -ne 0 ] && grep -q 'not a loopback address' '$IT_TMP/err'"
if ip -6 addr show dev lo 2>/dev/null | grep -q '::1/128'; then
	"$KABD" --db "$IT_TMP/v6.db" --listen "[::1]:$PORT" --token-file "$IT_TMP/token" --socket "$IT_TMP/v6.sock" \
		>>"$IT_TMP/kabd.log" 2>&1 &
	v6pid=$!
	IT_PIDS+=("$v6pid")
	v6_health() {
		curl -sfg -H "$AUTH" -o /dev/null --max-time 5 "http://[::1]:$PORT/health" && return 0
		echo "no answer on [::1]:$PORT/health; kabd (pid $v6pid) $(pid_gone "$v6pid" && echo exited || echo is running)"
		return 1
	}
	wait_for -s "$log_tail" "kabd on [::1]:$PORT to answer /health" 15 v6_health
	check "--listen [::1]:$PORT serves over IPv6" [ "$(curl -sg -H "$AUTH" -o /dev/null -w '%{http_code}' "http://[::1]:$PORT/api/v1/jobs")" = 200 ]
	check "... and Host [::1]:$PORT is its own" [ "$(curl -sg -H "$AUTH" -H "Origin: http://[::1]:$PORT" -o /dev/null -w '%{http_code}' "http://[::1]:$PORT/api/v1/jobs")" = 200 ]
	kill -TERM "$v6pid"; wait "$v6pid"
	check "and stops on SIGTERM with exit 0" [ $? -eq 0 ]
else
	echo "  skip IPv6 serving: the loopback device has no ::1 here"
fi
it_end
