#!/usr/bin/env bash
# What anyone who can reach kabd's port can make it do, with a real kabd
# (--public-read, a token for POST, --header-timeout 3), real sockets on
# loopback and the real user nobody:
#  - slow clients: nobody opens 70 connections that send their headers one
#    byte a second and never end them. From one address kabd keeps 16
#    (the cap per address) and closes the rest at once, while a client
#    from another address is answered; from 70 addresses they fill the 64
#    connections, and kabd closes each within the header timeout of its
#    accept, so a client waiting behind them is answered within it and
#    the unix socket all along;
#  - every response (pages, API, refusals, the socket) carries
#    X-Content-Type-Options: nosniff and the Content-Security-Policy, with
#    frame-ancestors 'none' and nothing inline;
#  - reads do not write: GETs and HEADs from nobody of every kind, one of
#    a job name whose night the history has not made yet, leave the
#    database and its WAL byte for byte as they were; kabd's executor
#    makes that night when kabd starts;
#  - confirmations: 12 nightly jobs seeded into the database, five compared
#    variants whose w1 and w2 move on night 7 (w3 does not), then a real
#    night of the name ends: kabd queues 4 confirmation jobs
#    (NIGHTLY_CONFIRM_MAX_PER_NIGHT), one per variant, of w1 and w2 only,
#    the smallest change waiting with a log line saying so. The
#    confirmations are cancelled rather than run.
# About 40 s.
. "$(dirname "$0")/lib.sh"
it_begin
[ -x "$KABD" ] || skip_all "$KABD is not built"
for t in curl python3 runuser sqlite3 sha256sum; do
	command -v $t >/dev/null || skip_all "$t is not installed"
done
id nobody >/dev/null 2>&1 || skip_all "there is no user nobody"
PY=/usr/bin/python3
T=3 # kabd's --header-timeout

SLOW_PID=""
limits_cleanup() {
	[ -n "$SLOW_PID" ] && kill -9 "$SLOW_PID" 2>/dev/null
	kabd_stop
	it_cleanup
}
trap limits_cleanup EXIT

# nobody reaches the script and its own directory, nothing else of $IT_TMP
chmod 711 "$IT_TMP"
PUB=$IT_TMP/pub
mkdir -m 755 "$PUB" "$PUB/nobody"
chown nobody "$PUB/nobody"
cat >"$PUB/slow.py" <<'EOF'
# slow.py PORT N SRC DRIP BOUND READY: N connections to 127.0.0.1:PORT from
# SRC ("127.0.0.1"), or for SRC "spread" from 127.0.1.1, 127.0.1.2, ...;
# each sends its headers one byte every DRIP s and never ends them. Stops
# once kabd has closed every one or after BOUND s; writes the file READY
# when all are connected, and prints what happened as JSON (seconds from
# the first connect).
import json, selectors, socket, sys, time
port, n, src, drip, bound, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
req = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port + b"a" * 10000
sel = selectors.DefaultSelector()
conns = []
t0 = time.monotonic()
for i in range(n):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.1.%d" % (i + 1) if src == "spread" else src, 0))
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    c = {"s": s, "at": time.monotonic(), "sent": 0, "closed": None}
    conns.append(c)
    sel.register(s, selectors.EVENT_READ, c)
t_ready = time.monotonic()
open(ready, "w").close()
def close(c, now):
    if c["closed"] is None:
        c["closed"] = now
        sel.unregister(c["s"])
        c["s"].close()
next_drip = time.monotonic()
while True:
    now = time.monotonic()
    live = [c for c in conns if c["closed"] is None]
    if not live or now - t0 > bound:
        break
    if now >= next_drip:
        for c in live:
            try:
                c["s"].send(req[c["sent"]:c["sent"] + 1])
                c["sent"] += 1
            except OSError:
                close(c, now)
        next_drip = now + drip
    for key, _ in sel.select(timeout=max(0.0, min(next_drip - now, 0.2))):
        c = key.data
        try:
            data = c["s"].recv(4096)
        except OSError:
            data = b""
        if not data:
            close(c, time.monotonic())
now = time.monotonic()
ends = [c["closed"] if c["closed"] is not None else now for c in conns]
print(json.dumps({
    "n": n,
    "connect_s": round(t_ready - t0, 2),
    "open_at_end": sum(c["closed"] is None for c in conns),
    "closed_soon": sum(e <= t_ready + 1.0 for e in ends),
    "last_closed_s": round(max(ends) - t0, 2),
    "held_max_s": round(max(e - c["at"] for e, c in zip(ends, conns)), 2),
    "bytes_max": max(c["sent"] for c in conns),
}))
EOF
chmod 644 "$PUB/slow.py"

DB=$IT_TMP/kab.db
SOCK=$KABD_SOCK
kabd_up --db "$DB" --public-read --header-timeout $T --web-root web || { fail "kabd starts"; it_end; exit; }
ok "kabd starts on 127.0.0.1:$PORT with --public-read and --header-timeout $T"

# ---- slow clients ----
# slow SRC BOUND: nobody's 70 slow connections in the background; returns
# once they are all connected. SLOW_OUT names its JSON.
slow() {
	rm -f "$PUB/nobody/ready"
	SLOW_OUT=$IT_TMP/slow-$1.json
	runuser -u nobody -- $PY "$PUB/slow.py" "$PORT" 70 "$1" 1 "$2" "$PUB/nobody/ready" >"$SLOW_OUT" 2>&1 8>&- &
	SLOW_PID=$!
	IT_PIDS+=("$SLOW_PID")
	wait_for "nobody's 70 connections" 10 "[ -e '$PUB/nobody/ready' ]"
}
slow_done() {
	wait "$SLOW_PID" 2>/dev/null
	SLOW_PID=""
	echo "    nobody's connections: $(cat "$SLOW_OUT")"
}
sj() { $PY -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$SLOW_OUT" "$1" 2>/dev/null; }
# health ADDR MAX_S: /health's status over TCP from source address ADDR
health() { curl -s -o /dev/null -w '%{http_code}' --interface "$1" --max-time "$2" "$URL/health"; }
sock_health() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 --unix-socket "$SOCK" http://localhost/health; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; } # A <= B, A a number
none_open_by() { [ "$(sj open_at_end)" = 0 ] && le "$(sj "$1")" "$2"; } # FIELD BOUND

slow 127.0.0.1 $((3 * T + 4))
t0=$EPOCHREALTIME
code=$(health 127.0.0.2 2)
took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
check "while nobody holds connections from 127.0.0.1, a client from 127.0.0.2 gets /health: 200 in ${took} s (HTTP $code)" \
	[ "$code" = 200 ]
check "and so does the unix socket" [ "$(sock_health)" = 200 ]
slow_done
check "of nobody's 70 connections from one address kabd closed 54 at once, keeping 16 (closed soon: $(sj closed_soon))" \
	le 54 "$(sj closed_soon)"
check "and closed the 16 within the header timeout ($T s) of connecting (held at most $(sj held_max_s) s)" \
	none_open_by held_max_s $((T + 2))

slow spread $((3 * T + 4))
check "nobody's 70 connections from 70 addresses fill kabd's 64: a client from 127.0.0.3 waits behind them" \
	[ "$(health 127.0.0.3 1)" = 000 ]
check "the unix socket answers meanwhile" [ "$(sock_health)" = 200 ]
code=$(health 127.0.0.3 $((T + 3)))
check "and the waiting client gets /health within the header timeout: HTTP $code" [ "$code" = 200 ]
slow_done
# the last ones waited in the listen backlog for a first round to go
check "kabd closed every one of nobody's 70 (open at the end: $(sj open_at_end)), each within the timeout of its accept: the last $(sj last_closed_s) s after the first connect" \
	none_open_by last_closed_s "$(awk -v c="$(sj connect_s)" -v t=$T 'BEGIN { print c + 2 * t + 2 }')"
check "kabd says so: closed N connections that sent no complete request headers within $T s (at most a line a minute)" \
	grep -qE "closed [0-9]+ connections? that sent no complete request headers within $T s of connecting" "$IT_TMP/kabd.log"
n=$(grep -c "Server reached connection limit" "$IT_TMP/kabd.log")
check "libmicrohttpd's refusals are counted, not logged one by one ($n lines)" [ "$n" -le 10 ]

# ---- the headers of every response ----
CSP="default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
# heads NAME CURL_ARGS...: the response's headers are nosniff and the policy
heads() {
	local name=$1; shift
	curl -s -o /dev/null -D "$IT_TMP/headers" "$@"
	local code; code=$(awk 'NR == 1 { print $2 }' "$IT_TMP/headers")
	tr -d '\r' <"$IT_TMP/headers" >"$IT_TMP/headers.lf"
	check "$name: HTTP $code with X-Content-Type-Options: nosniff and the Content-Security-Policy" bash -c \
		"grep -qix 'X-Content-Type-Options: nosniff' '$IT_TMP/headers.lf' && grep -qFx \"Content-Security-Policy: $CSP\" '$IT_TMP/headers.lf'"
}
heads "GET / (the job list page)" "$URL/"
heads "GET /kab.js" "$URL/kab.js"
heads "GET /history.html" "$URL/history.html?job=x"
heads "HEAD /api/v1/jobs" -I "$URL/api/v1/jobs"
heads "GET /health" "$URL/health"
heads "a 404" "$URL/no-such-page"
heads "a POST without the token (401)" -H "$JOB_CT" --data-binary x "$URL/api/v1/jobs"
heads "a foreign Host (421)" -H "Host: evil.example:$PORT" "$URL/health"
heads "a 405" -H "$AUTH" -X DELETE "$URL/api/v1/jobs"
heads "the unix socket's /health" --unix-socket "$SOCK" http://localhost/health
check "the policy lets nothing inline run: no 'unsafe-inline' or 'unsafe-eval'" bash -c "! grep -qi 'unsafe' '$IT_TMP/headers.lf'"

# ---- reads do not write ----
# a job of a name that ended and has no night in the history yet (as one
# cancelled while queued, or ended before kabd started), put in by hand
sql "$DB" "INSERT INTO jobs (name, text, status, reason, created, started, finished, pairs, kab_version, schema_version)
	VALUES ('unseen', '[job]
name = unseen
[variant A]
name = a
[variant B]
name = b
[workload w]
type = command
command = true', 'cancelled', 'cancelled over the API', 1764547200, 0, 1764547300, 1, '0.1.0', 12)"
UID1=$(sql "$DB" "SELECT id FROM jobs WHERE name = 'unseen'")
dbsum() { cat "$DB" "$DB-wal" 2>/dev/null | sha256sum | cut -c1-16; }
nights() { sql "$DB" "SELECT count(*) FROM history_nights"; }
before=$(dbsum) n0=$(nights)
codes=""
for u in "/api/v1/history?job=unseen" "/api/v1/history?job=unseen&format=text" "/api/v1/jobs" "/api/v1/jobs/$UID1" \
	"/api/v1/jobs/$UID1/runs" "/api/v1/jobs/$UID1/report" "/api/v1/regressions" "/api/v1/regressions.atom" "/metrics" \
	"/health" "/" "/jobs/$UID1"; do
	codes="$codes $(runuser -u nobody -- curl -s -o /dev/null -w '%{http_code}' "$URL$u")"
	codes="$codes $(runuser -u nobody -- curl -s -o /dev/null -w '%{http_code}' -I "$URL$u")"
done
echo "    nobody's GETs and HEADs:$codes"
check "nobody's GETs and HEADs are answered, none with a 500" bash -c "! grep -qE ' (5[0-9][0-9]|000)' <<<'$codes'"
check "and the database and its WAL are byte for byte as they were ($before)" [ "$(dbsum)" = "$before" ]
check "no night was made for the reader: history_nights has $n0 rows" [ "$(nights)" = "$n0" ]
kabd_stop
kabd_start "$PORT" --db "$DB" --public-read --header-timeout $T --web-root web ||
	kabd_up --db "$DB" --public-read --header-timeout $T --web-root web
check "kabd's executor makes the missing night when kabd starts" \
	wait_for "the night of job $UID1" 10 "[ \"\$(sql '$DB' 'SELECT status FROM history_nights WHERE job_id = $UID1')\" = cancelled ]"
check "and says so" grep -q "1 night added to the history of 1 job name" "$IT_TMP/kabd.log"

# ---- confirmations: one per night pair and variant, of the workloads that moved, at most 4 a night ----
CAPJOB='[job]
name = nightly-cap
pairs = 1
primary = cap.score
[swap]
device = none
[variant A]
name = base
[variant B]
name = v1
[variant C]
name = v2
[variant D]
name = v3
[variant E]
name = v4
[variant F]
name = v5
[workload w1]
type = command
command = true
[workload w2]
type = command
command = true
[workload w3]
type = command
command = true'
labels=(A B C D E F) vnames=(base v1 v2 v3 v4 v5)
# the 13th night: the same name, two variants and one workload, two quick runs
printf '[job]\nname = nightly-cap\npairs = 1\n[swap]\ndevice = none\n[variant A]\nname = base\n[variant B]\nname = v1\n[workload w1]\ntype = command\ncommand = true\n' >"$IT_TMP/cap.job"
o=$(sql "$DB" "SELECT coalesce(max(id), 0) FROM jobs")
{
	echo "BEGIN;"
	for d in $(seq 0 11); do
		id=$((o + d + 1)) night=$((1764547200 + d * 86400))
		echo "INSERT INTO jobs (id, name, file, text, status, created, started, finished, pairs, kab_version, schema_version)
			VALUES ($id, 'nightly-cap', 'submitted.job', '$CAPJOB', 'done', $night, $night, $((night + 600)), 1, '0.1.0', 12);"
		for v in 0 1 2 3 4 5; do
			echo "INSERT INTO variants (job_id, idx, label, name, kernel) VALUES ($id, $v, '${labels[v]}', '${vnames[v]}', 'running');"
		done
		echo "INSERT INTO history_nights (job_id, name, night, status, runs, runs_failed, computed, kab_version, schema_version)
			VALUES ($id, 'nightly-cap', $night, 'done', 30, 0, $((night + 700)), '0.1.0', 12);"
		for v in 1 2 3 4 5; do for w in 1 2 3; do
			e=$(awk -v d=$d -v v=$v -v w=$w 'BEGIN { n = 0.1 * ((d * 7 + v * 3 + w) % 5 - 2); printf "%.2f", (w < 3 && d >= 6 ? -2 * v : 0) + n }')
			echo "INSERT INTO history (job_id, name, night, workload, metric, variant_idx, pairs, estimate_pct, ci_lo_pct,
				ci_hi_pct, p, verdict, median_base, median_variant, unit, direction, is_primary, rank, variant_name, base_name)
				VALUES ($id, 'nightly-cap', $night, 'w$w', 'cap.score', $v, 2, $e, $e - 0.5, $e + 0.5, 0.04, 'same', 100,
				100 + $e, 'ops/s', 'higher', 1, 0, 'v$v', 'base');"
		done; done
	done
	echo "COMMIT;"
} | sqlite3 -bail "$DB"
check "12 nights of nightly-cap seeded" [ "$(sql "$DB" "SELECT count(*) FROM history_nights WHERE name = 'nightly-cap'")" = 12 ]
good=$((o + 6)) bad=$((o + 7))
night13=$("$KAB" submit "$IT_TMP/cap.job" --socket "$SOCK" 2>"$IT_TMP/err")
check "a 13th night of nightly-cap is submitted and runs" [ -n "$night13" ]
confirms() { sql "$DB" "SELECT count(*) FROM jobs WHERE name LIKE 'nightly-cap.confirm-%'"; }
check "after it kabd queues 4 confirmation jobs (NIGHTLY_CONFIRM_MAX_PER_NIGHT)" \
	wait_for -s "tail -n 20 '$IT_TMP/kabd.log'" "the confirmations of nightly-cap" 60 \
	"grep -q 'nightly-cap: 10 new change points need 5 confirmation jobs' '$IT_TMP/kabd.log' && [ \"\$(confirms)\" = 4 ]"
sleep 1
check "4 confirmation jobs, no more ($(confirms))" [ "$(confirms)" = 4 ]
check "each runs w1 and w2, the workloads that moved, not w3" [ "$(sql "$DB" "SELECT group_concat(w, ' ') FROM
	(SELECT DISTINCT (SELECT group_concat(name, ',') FROM (SELECT name FROM workloads WHERE job_id = j.id ORDER BY idx)) AS w
	 FROM jobs j WHERE j.name LIKE 'nightly-cap.confirm-%')")" = "w1,w2" ]
check "8 change points (4 variants x w1, w2), each waiting on its variant's one job, all of night $bad after $good" \
	[ "$(sql "$DB" "SELECT count(*) || ' ' || count(DISTINCT confirm_job) || ' ' || group_concat(DISTINCT good_job || '-' || bad_job)
		FROM regressions WHERE name = 'nightly-cap'")" = "8 4 $good-$bad" ]
check "the largest changes first: v2 to v5 queued, v1 (-2%) waits" \
	[ "$(sql "$DB" "SELECT group_concat(DISTINCT variant_idx) FROM (SELECT variant_idx FROM regressions WHERE name = 'nightly-cap' ORDER BY 1)")" = "2,3,4,5" ]
check "kabd's log says which wait for a later night" \
	grep -q "2 changes of 1 night pair wait for a later night: job $good to $bad variant 1" "$IT_TMP/kabd.log"
grep "nightly-cap: 10 new change points" "$IT_TMP/kabd.log" | head -n 1 | cut -c1-400 | sed 's/^/    /'
# nothing of this needs them run
for cj in $(sql "$DB" "SELECT id FROM jobs WHERE name LIKE 'nightly-cap.confirm-%' AND status IN ('queued', 'running')"); do
	"$KAB" cancel "$cj" --socket "$SOCK" >/dev/null 2>&1
done
check "the confirmations are cancelled" wait_for "the confirmations to end" 60 \
	"[ \"\$(sql '$DB' \"SELECT count(*) FROM jobs WHERE name LIKE 'nightly-cap.confirm-%' AND status IN ('queued', 'running')\")\" = 0 ]"
kabd_stop
check "kabd stops on SIGTERM" [ $? = 0 ]
it_end
