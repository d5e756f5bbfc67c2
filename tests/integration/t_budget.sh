#!/usr/bin/env bash
# Budgets at kabd's door (doc/jobs.md, "Budgets"): while a real job runs,
# the issue's 1 MiB jobs (80,000 variants, 300,000 continuation lines,
# 250,000 metrics) are refused at once, with and without a Content-Length;
# the same shapes cut to the size budget are refused at their own budget;
# a body far over it is cut off as it arrives; the largest schedule the
# budgets allow is stored in one short transaction. The running job loses
# no run. A GET shows a job from what was stored at submit, not by parsing
# its text again. Jobs go in over kabd's unix socket, as a local root
# client's do, and the 1 MiB ones over TCP with the token too.
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
command -v curl >/dev/null || skip_all "curl is not installed"
command -v sqlite3 >/dev/null || skip_all "sqlite3 is not installed"
PY=/usr/bin/python3
[ -x $PY ] || skip_all "$PY is not installed (makes the jobs, reads the JSON)"

trap 'kabd_stop; it_cleanup' EXIT

TOKEN=it-budget-$RANDOM$RANDOM$RANDOM
(umask 077; echo "$TOKEN" >"$IT_TMP/token")
DB="$IT_TMP/db/kab.db"
kabd_up --db "$DB" --token-file "$IT_TMP/token"
if [ -z "$PORT" ]; then
	cat "$IT_TMP/kabd.log"
	fail "kabd starts and answers /health"
	it_end; exit
fi
ok "kabd starts on 127.0.0.1:$PORT"

# post FILE [curl args]: POSTs the job over kabd's socket; prints "STATUS
# SECONDS BYTES_SENT"; the body is in $IT_TMP/body. post_tcp: the same over
# TCP with the token.
post() {
	local f=$1; shift
	curl -s -o "$IT_TMP/body" -w '%{http_code} %{time_total} %{size_upload}' -X POST -H "$JOB_CT" \
		"$@" --data-binary @"$f" --unix-socket "$KABD_SOCK" http://localhost/api/v1/jobs
}
post_tcp() {
	local f=$1; shift
	curl -s -o "$IT_TMP/body" -w '%{http_code} %{time_total} %{size_upload}' -X POST -H "$AUTH" -H "$JOB_CT" \
		"$@" --data-binary @"$f" "$URL/api/v1/jobs"
}
# get PATH [curl args]: GET over the socket into $IT_TMP/body; prints the status
get() {
	local p=$1; shift
	curl -s -o "$IT_TMP/body" -w '%{http_code}' "$@" --unix-socket "$KABD_SOCK" "http://localhost$p"
}
jget() {
	$PY -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    d = d[int(k)] if isinstance(d, list) else d[k]
print(d)' "$IT_TMP/body" "$@" 2>/dev/null
}
# all the error text of the reply, one line
errors() { $PY -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["error"], *d.get("errors", []))' "$IT_TMP/body" 2>/dev/null; }
fast() { awk -v t="$1" 'BEGIN { exit !(t + 0 < 1.0) }'; }  # a generous bound: the refusal takes milliseconds
# answered CODE SECONDS WANT [PATTERN]: the reply was WANT, fast, its errors match PATTERN
answered() { [ "$1" = "$3" ] && fast "$2" && { [ -z "${4:-}" ] || errors | grep -qE -- "$4"; }; }

# ---- a real job: 3 pairs of a 2 s command, 6 runs and the warm-up ----
cat >"$IT_TMP/real.job" <<'JOB'
[job]
name = budget-real
pairs = 3
[variant A]
name = a
[variant B]
name = b
[workload nap]
type = command
command = sleep 2
memory.max = 64M
JOB
read -r code _ <<<"$(post "$IT_TMP/real.job")"
real=$(jget id)
check "the real job is accepted: 201" [ "$code" = 201 -a -n "$real" ]
check "over the socket, as root: the job records it" [ "$(sql "$DB" "select submitter from jobs where id = ${real:-0}")" = "uid 0 (root)" ]
running() {
	local i
	for i in $(seq 1 100); do
		get "/api/v1/jobs/$real" >/dev/null
		[ "$(jget progress current workload)" = nap ] && return 0
		sleep 0.1
	done
	return 1
}
check "job $real is running its first run" running

# ---- the issue's 1 MiB jobs and the same shapes cut to 256 KiB ----
$PY - "$IT_TMP" <<'EOF'
import sys
d = sys.argv[1]
b62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
head = "[job]\nname = big\n"
two = "[variant A]\n[variant B]\n"
wl = "[workload w]\ntype = command\ncommand = true\n"
def shapes(limit):
    v = head + wl + "".join("[variant %s%s%s]\n" % (b62[i // 3844 % 62], b62[i // 62 % 62], b62[i % 62]) for i in range(80000))
    c = head + two + wl + " x\n" * 300000
    m = two + wl + head + "metrics =" + "".join("%s m.%s%s" % ("\n" if i % 32 == 31 else "", b62[i // 62 % 62], b62[i % 62]) for i in range(250000)) + "\n"
    if limit:
        v, c, m = (s[:s.rindex("\n", 0, limit) + 1] for s in (v, c, m))
    return v, c, m
for name, text in zip(("variants", "cont", "metrics"), shapes(None)):
    open(d + "/" + name + ".1m.job", "w").write(text)
for name, text in zip(("variants", "cont", "metrics"), shapes(256 * 1024)):
    open(d + "/" + name + ".cut.job", "w").write(text)
# far over the budget: 64 MiB (more than loopback's socket buffers take)
open(d + "/huge.job", "w").write("#" * (64 << 20))
# the largest schedule the budgets allow: 1000 pairs x 2 variants x 25
# workloads (and the workloads' 25 warm-ups, which no budget counts)
open(d + "/steps.job", "w").write(head + "pairs = 1000\n" + two + "".join(
    "[workload w%d]\ntype = command\ncommand = true\n" % i for i in range(25)))
open(d + "/steps-over.job", "w").write(head + "pairs = 1000\n" + two + "".join(
    "[workload w%d]\ntype = command\ncommand = true\n" % i for i in range(26)))
EOF

for shape in variants cont metrics; do
	f=$IT_TMP/$shape.1m.job
	read -r code t sent <<<"$(post "$f")"
	check "1 MiB $shape job ($(wc -c <"$f") bytes): 413 in ${t}s, naming the budget" \
		answered "$code" "$t" 413 'a job file is at most 256 KiB'
	read -r code t sent <<<"$(post "$f" -H 'Transfer-Encoding: chunked')"
	check "1 MiB $shape job, chunked: 413 in ${t}s" answered "$code" "$t" 413 'a job file is at most 256 KiB'
	read -r code t sent <<<"$(post_tcp "$f")"
	check "1 MiB $shape job over TCP with the token: 413 in ${t}s" answered "$code" "$t" 413 'a job file is at most 256 KiB'
done
declare -A want=([variants]='too many \[variant\] sections' [cont]='more than 256 continuation lines for "command"'
	[metrics]='more than 256 continuation lines for "metrics"')
for shape in variants cont metrics; do
	f=$IT_TMP/$shape.cut.job
	read -r code t sent <<<"$(post "$f")"
	check "$shape job cut to $(wc -c <"$f") bytes: 400 in ${t}s, at its budget with its line" \
		answered "$code" "$t" 400 "[0-9]+: ${want[$shape]}"
done
read -r code t sent <<<"$(post "$IT_TMP/steps-over.job")"
check "52000 runs: 400, naming the budget and the pairs line" \
	answered "$code" "$t" 400 ' 3: the job has 52000 runs \(1000 pairs x 2 variants x 26 workloads x 1 per boot\), at most 50000'


# 64 MiB with no Content-Length: dropped as it comes, then cut off
read -r code t sent <<<"$(post "$IT_TMP/huge.job" -H 'Transfer-Encoding: chunked')"
check "64 MiB chunked: cut off (no 201: $code) after ${sent:-?} of 67108864 bytes, in ${t}s" \
	[ "$code" != 201 -a "${sent:-0}" -lt 33554432 ]
read -r code t sent <<<"$(post "$IT_TMP/huge.job")"
check "64 MiB with its Content-Length: 413 before the body is sent (${sent} bytes sent)" \
	[ "$code" = 413 -a "${sent:-0}" -lt 33554432 ]
check "kabd still serves" [ "$(get /health)" = 200 ]
check "... over TCP too" [ "$(curl -s -H "$AUTH" -o /dev/null -w '%{http_code}' "$URL/health")" = 200 ]

# the largest schedule allowed, three times, while the real job runs
big=()
for i in 1 2 3; do
	read -r code t sent <<<"$(post "$IT_TMP/steps.job")"
	id=$(jget id)
	check "50000 runs accepted: 201 in ${t}s" answered "$code" "$t" 201
	big+=("$id")
	code=$(curl -s -o "$IT_TMP/body" -w '%{http_code}' -X POST -H "$JOB_CT" --unix-socket "$KABD_SOCK" "http://localhost/api/v1/jobs/$id/cancel")
	check "and cancelled while queued" [ "$code" = 200 ]
done
check "its schedule is stored whole: 50000 steps and 25 warm-ups" \
	[ "$(sqlite3 -batch -noheader -cmd '.timeout 5000' "$DB" "select count(*) || '/' || sum(pair = -1) from steps where job_id = ${big[0]}")" = 50025/25 ]

# a GET shows what was stored at submit: the text is not parsed again
sqlite3 -batch -cmd '.timeout 5000' "$DB" "update jobs set text = '[nonsense' where id = ${big[0]}"
code=$(get "/api/v1/jobs/${big[0]}")
check "GET a job whose stored text no longer parses: its variants and workloads all the same" \
	[ "$code" = 200 -a "$(jget variants 1 name) $(jget workloads 24 name) $(jget pairs) $(jget progress runs_total)" = "B w24 1000 50025" ]

# ---- the running job lost nothing ----
wait_done() {
	local i
	for i in $(seq 1 600); do
		get "/api/v1/jobs/$real" >/dev/null
		case $(jget status) in done | failed | cancelled) return 0 ;; esac
		sleep 0.2
	done
	return 1
}
check "job $real ends within 120 s" wait_done
check "job $real is done" [ "$(jget status)" = done ]
check "job $real: 7 of 7 runs done (the warm-up and 6)" [ "$(jget progress runs_done)/$(jget progress runs_total)" = 7/7 ]
get "/api/v1/jobs/$real/runs" >/dev/null
check "every run of job $real finished: the warm-up first, then 6 ok" \
	[ "$($PY -c 'import json, sys; print(" ".join(r["status"] for r in json.load(open(sys.argv[1]))["runs"]))' "$IT_TMP/body")" = "warmup ok ok ok ok ok ok" ]
check "each with its metrics stored" \
	[ "$(sqlite3 -batch -noheader -cmd '.timeout 5000' "$DB" "select count(distinct r.id) from runs r join metrics m on m.run_id = r.id where r.job_id = $real")" = 7 ]
check "kabd logged no busy database" bash -c "! grep -qiE 'database is locked|busy' '$IT_TMP/kabd.log'"
kabd_stop
check "SIGTERM: kabd exits 0" [ $? -eq 0 ]
check "database integrity ok" [ "$(sqlite3 -batch -noheader "$DB" "pragma integrity_check")" = ok ]
it_end
