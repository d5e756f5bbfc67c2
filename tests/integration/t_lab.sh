#!/usr/bin/env bash
# A lab of three machines (doc/lab.md): a PostgreSQL cluster of the test's
# own (tests/lab/pg.sh) and three kabd, each with its own state directory,
# database, machine.conf, machine id and host name, each in its own mount,
# UTS and cgroup namespace (its own /run/kab, so its own executor lock; its
# own view of the memory cgroups, so job ids that repeat across machines
# never meet) and, where `ip netns` works, its own network namespace with
# a veth on a bridge and an address of its own, reaching PostgreSQL over
# TCP with TLS (sslmode=verify-full against a CA made here) and a password
# from a root-only credentials file. Without network namespaces the three
# share the host's network and reach the server on 127.0.0.1 (said so).
#
# 30 short jobs submitted with kab submit --lab (to the three kabd in
# turn) each run exactly once, on one machine, spread over the three, with
# every run, state and night in PostgreSQL. Then kill -9 of a kabd
# mid-job: restarted within its lease it resumes its own job (one attempt);
# not restarted, another machine runs the job whole after the lease, the
# lab says which attempt counted, and the dead machine, started again,
# cancels its stale copy and uploads its runs under the lost attempt.
#
# Faults, with leases longer than them (the three kabd restarted with
# FAULT_LEASE): PostgreSQL stopped for PG_DOWN s while a job runs on each
# machine (the jobs end done locally meanwhile, their results wait in the
# outboxes, and go up once the server is back: each job done once, in one
# attempt, every local run in PostgreSQL once; the first lab read through
# each kabd answers); one machine's link cut while its job runs (the job
# ends done there, the others go on, its results go up when the link is
# back). Bad input, with a fourth kabd on the host started briefly: a lab
# URL that does not answer (it says so, answers /health and runs a local
# job), a wrong password, a credentials file others can read (refused,
# named), a lab whose schema is newer (refused, both versions named).
. "$(dirname "$0")/lib.sh"
it_begin "PostgreSQL (make deps)"
[ -x "$KABD" ] || skip_all "$KABD is not built"
. tests/lab/pg.sh
why=$(pg_missing)
[ -z "$why" ] || skip_all "$why"
for p in unshare nsenter curl python3 sqlite3; do
	command -v $p >/dev/null || skip_all "$p is not installed"
done
MEMCG=$(memcg_root)
MEMCG_TYPE=$(awk -v m="$MEMCG" '$2 == m {print $3; exit}' /proc/mounts)
unshare --mount --uts --cgroup true 2>/dev/null || skip_all "no mount, UTS or cgroup namespaces here (unshare)"

N=3
HB=2       # [lab] heartbeat, s
LEASE=20   # [lab] lease, s
NET=10.77.0
PIDS=()    # each machine's kabd
USE_NETNS=0
PG_DOWN=60 # s the server stays stopped mid-job (the issue's "a minute")
FAULT_LEASE=$((PG_DOWN + 90)) # [lab] lease for the fault tests, s: longer than any fault (below)
CUT_MIN=15 # s a machine's link stays down at least
CUT=""     # the machine whose link is down, while it is
M4_PID=""  # the fourth kabd (bad input), while it runs

labsql() { "$PG_BIN/psql" -X -q -At -h "$PG_DIR" -p "$PG_PORT" -U "$PG_ADMIN" -d "$PG_DB" -c "$1"; }

lab_cleanup() {
	local i d
	for i in $(seq 1 $N); do
		[ -n "${PIDS[$i]:-}" ] && kill -9 "${PIDS[$i]}" 2>/dev/null
	done
	[ -n "$M4_PID" ] && kill -9 "$M4_PID" 2>/dev/null
	# a link cut when a check failed comes back (its namespace goes below
	# anyway); a server stopped then is removed by pg_stop as it is
	[ -n "$CUT" ] && ip -n "kablab$CUT" link set eth0 up 2>/dev/null
	sleep 0.5
	for i in $(seq 1 $N); do
		d=$MEMCG/kab-it-lab$i
		[ -d "$d" ] || continue
		for c in $(find "$d" -depth -type d); do
			for pid in $(cat "$c/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
		done
		sleep 0.2
		find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
		[ "$USE_NETNS" = 1 ] && ip netns del kablab$i 2>/dev/null
	done
	[ "$USE_NETNS" = 1 ] && ip link del kablab0 2>/dev/null
	pg_stop
}
trap 'lab_cleanup; it_cleanup' EXIT

# ---- the server ----
if ! pg_start >"$IT_TMP/pg.log" 2>&1; then
	cat "$IT_TMP/pg.log"
	fail "the test's PostgreSQL cluster starts"
	lab_cleanup
	it_end
	exit
fi
trap 'lab_cleanup; it_cleanup' EXIT # pg_start set its own

# network namespaces, a bridge and TLS, or the loopback fallback
if ip netns add kablab-probe 2>/dev/null && ip netns del kablab-probe && command -v openssl >/dev/null &&
	ip link add kablab0 type bridge 2>/dev/null; then
	USE_NETNS=1
	ip addr add $NET.1/24 dev kablab0 && ip link set kablab0 up
	for i in $(seq 1 $N); do
		ip netns add kablab$i
		ip link add kl$i type veth peer name eth0 netns kablab$i
		ip link set kl$i master kablab0 up
		ip -n kablab$i addr add $NET.$((10 + i))/24 dev eth0
		ip -n kablab$i link set eth0 up
		ip -n kablab$i link set lo up
	done
	# a CA and the server's certificate for its address
	tls=$PG_DIR/tls
	mkdir -p "$tls"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=kab-it lab CA" -keyout "$tls/ca.key" \
		-out "$tls/ca.pem" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=$NET.1" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
	printf 'subjectAltName = IP:%s.1\n' "$NET" >"$tls/san.ext"
	openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
		-extfile "$tls/san.ext" -out "$tls/server.crt" 2>/dev/null
	chown nobody "$tls/server.key" "$tls/server.crt"
	chmod 600 "$tls/server.key"
	cat >>"$PG_DIR/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1,$NET.1'
ssl = on
ssl_cert_file = '$tls/server.crt'
ssl_key_file = '$tls/server.key'
CONF
	echo "hostssl $PG_DB $PG_USER $NET.0/24 scram-sha-256" >>"$PG_DIR/data/pg_hba.conf"
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 restart >/dev/null ||
		{ cat "$PG_DIR/server.log"; fail "the server restarts with TLS on $NET.1"; }
	PG_HOST=$NET.1
	# the machines' copy of the CA, root's: kab refuses one under the
	# server's directory, which nobody owns (a file that decides what kabd
	# trusts is read only through directories root or kab own)
	install -m 644 "$tls/ca.pem" "$IT_TMP/lab-ca.pem"
	LAB_URL="postgresql://$PG_USER@$PG_HOST:$PG_PORT/$PG_DB?sslmode=verify-full&sslrootcert=$IT_TMP/lab-ca.pem"
	echo "  three machines in network namespaces kablab1..3 ($NET.11-13), the server on $NET.1 over TLS"
else
	ip link del kablab0 2>/dev/null
	PG_HOST=127.0.0.1
	LAB_URL="postgresql://$PG_USER@127.0.0.1:$PG_PORT/$PG_DB"
	echo "  (no network namespaces here (ip netns, a bridge, or openssl missing): the three machines share the"
	echo "   host's network and reach the server on 127.0.0.1; mount, UTS and cgroup namespaces still apart)"
fi

# ---- the machines ----
mkdir -p /run/kab
KABD_BIN=$(realpath "$KABD")
for i in $(seq 1 $N); do
	d=$IT_TMP/m$i
	mkdir -p "$d/state" && chmod 700 "$d/state"
	printf '%032x\n' $((0xa11ce000 + i)) >"$d/machine-id"
	(umask 077; echo "$PG_HOST:$PG_PORT:$PG_DB:$PG_USER:$PG_PASSWORD" >"$d/lab.pgpass")
	cat >"$d/machine.conf" <<CONF
[lab]
url = $LAB_URL
credentials = $d/lab.pgpass
tags = it all m$i
heartbeat = $HB
lease = $LEASE
machine-id = $d/machine-id
CONF
	mkdir -p "$MEMCG/kab-it-lab$i"
	# inside the namespaces: its own /run/kab, memory cgroups rooted at
	# kab-it-lab$i, its host name; then kabd
	cat >"$d/inside.sh" <<SH
mount -t tmpfs -o mode=755 tmpfs /run/kab || exit 1
# the hierarchy mounted afresh in this cgroup namespace (rooted at
# kab-it-lab$i), then bound over the host's mount point: a v1 hierarchy
# mounted there again is refused (EBUSY), elsewhere it is not
mkdir -p "$d/memcg"
if [ "$MEMCG_TYPE" = cgroup ]; then
	mount -t cgroup -o memory kab-it-lab$i "$d/memcg" || exit 1
else
	mount -t cgroup2 kab-it-lab$i "$d/memcg" || exit 1
fi
mount --bind "$d/memcg" "$MEMCG" || exit 1
hostname lab$i
export STATE_DIRECTORY=$d/state KAB_MACHINE_CONF=$d/machine.conf
exec "$KABD_BIN" --socket "$d/kabd.sock" --db "$d/state/kab.db"
SH
done

# start_machine I: its kabd in its namespaces, until it answers /health
start_machine() {
	local i=$1 d=$IT_TMP/m$1 net=()
	[ "$USE_NETNS" = 1 ] && net=(nsenter --net=/run/netns/kablab$i)
	(
		echo $BASHPID >"$MEMCG/kab-it-lab$i/cgroup.procs"
		exec "${net[@]}" unshare --mount --uts --cgroup --propagation private sh "$d/inside.sh"
	) >>"$d/kabd.log" 2>&1 8>&- &
	PIDS[$i]=$!
	IT_PIDS+=("$!")
	wait_for -s "tail -n 20 '$d/kabd.log'" "kabd of lab$i to answer /health" 20 \
		"curl -sf --max-time 3 --unix-socket '$d/kabd.sock' http://localhost/health >/dev/null"
}
for i in $(seq 1 $N); do
	check "kabd of lab$i starts in its namespaces" start_machine $i
done
check "the three machines register and heartbeat" wait_for "three machines in the lab" 30 \
	"[ \"\$(labsql \"select count(*) from machines where hostname like 'lab_' and last_heartbeat > now() - interval '10 s'\")\" = 3 ]"
check "kab lab machines lists the three" eval "$KAB lab machines --format json --socket $IT_TMP/m1/kabd.sock | grep -o '\"hostname\": \"lab[123]\"' | sort -u | wc -l | grep -qx 3"
check "kab lab machines' table shows the three" eval "$KAB lab machines --socket $IT_TMP/m1/kabd.sock | grep -oE '^lab[123] ' | sort -u | wc -l | grep -qx 3"

# ---- 30 short jobs ----
# lab_job FILE NAME PAIRS COMMAND: a job of two running-kernel variants
# and one command workload, ABBA, no swap
lab_job() {
	cat >"$1" <<JOB
[job]
name = $2
pairs = $3
order = abba
[swap]
device = none
[variant A]
name = a
[variant B]
name = b
[workload w]
type = command
command = $4
memory.max = 64M
JOB
}
lab_job "$IT_TMP/short.job" lab-short 2 "true"
ids=()
for k in $(seq 1 30); do
	i=$(((k - 1) % N + 1))
	id=$("$KAB" submit --lab --on "tag=it" --socket "$IT_TMP/m$i/kabd.sock" "$IT_TMP/short.job" 2>>"$IT_TMP/submit.err")
	[ -n "$id" ] && ids+=("$id")
done
check "30 jobs submitted with kab submit --lab" [ ${#ids[@]} = 30 ]
in=$(IFS=,; echo "${ids[*]}")
check "the 30 jobs end done" wait_for -s "labsql \"select state, count(*) from lab_jobs where id in ($in) group by state\"" \
	"30 lab jobs done" 900 "[ \"\$(labsql \"select count(*) from lab_jobs where id in ($in) and state = 'done'\")\" = 30 ]"
check "each ran exactly once (one attempt each, done)" [ "$(labsql "select count(*) from lab_attempts where job in ($in)")" = 30 ]
check "... and on one machine each (one local job each, over the three databases)" [ "$(for i in $(seq 1 $N); do
	sql "$IT_TMP/m$i/state/kab.db" "select count(*) from lab_claims where lab_job in ($in)"; done | awk '{s += $1} END {print s + 0}')" = 30 ]
spread=$(labsql "select count(distinct machine) from lab_attempts where job in ($in)")
check "spread over the three machines ($(labsql "select string_agg(n::text, ' ') from (select count(*) n from lab_attempts where job in ($in) group by machine) c") jobs each)" [ "$spread" = 3 ]
local_runs=$(for i in $(seq 1 $N); do
	sql "$IT_TMP/m$i/state/kab.db" "select count(*) from runs r join lab_claims c on c.job_id = r.job_id where c.lab_job in ($in)"
done | awk '{s += $1} END {print s + 0}')
check "every run in PostgreSQL, none twice ($local_runs)" [ "$(labsql "select count(*) from lab_runs where job in ($in)")" = "$local_runs" ]
check "every job's state and report uploaded" [ "$(labsql "select count(*) from lab_job_states where job in ($in) and status = 'done' and data ? 'report'")" = 30 ]
check "every night uploaded" [ "$(labsql "select count(*) from lab_nights where job in ($in)")" = 30 ]
check "nothing left in an outbox" [ "$(for i in $(seq 1 $N); do
	sql "$IT_TMP/m$i/state/kab.db" "select count(*) from lab_claims where state <> 'done'"; done | awk '{s += $1} END {print s + 0}')" = 0 ]


# ---- lab-wide reads, through a machine that did not run what it reads ----
# lab_get PATH: GET through lab2's kabd into $IT_TMP/read.json, the code printed
lab_get() { curl -s -o "$IT_TMP/read.json" -w '%{http_code}' --max-time 20 --unix-socket "$IT_TMP/m2/kabd.sock" "http://localhost$1"; }
jl1=$(labsql "select a.job from lab_attempts a join machines m on m.id = a.machine where m.hostname = 'lab1' and a.job in ($in) order by a.job limit 1")
code=$(lab_get "/api/v1/lab/jobs/${jl1:-0}/report")
check "GET /api/v1/lab/jobs/$jl1/report through lab2: lab1's uploaded report ($code)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert sys.argv[2] == "200", sys.argv[2]
assert d["lab"]["machine"] == "lab1" and d["lab"]["counted"] is True and d["lab"]["attempt"] == 1, d["lab"]
assert d.get("name") == "lab-short" or d.get("job", {}).get("name") == "lab-short" or "lab-short" in json.dumps(d)[:4000], list(d)
' "$IT_TMP/read.json" "$code"
code=$(lab_get "/api/v1/lab/jobs?machine=lab3&limit=100")
on3=$(labsql "select string_agg(distinct a.job::text, ' ') from lab_attempts a join machines m on m.id = a.machine where m.hostname = 'lab3'")
check "GET /api/v1/lab/jobs?machine=lab3: the jobs lab3 ran, and only those ($code)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert sys.argv[2] == "200", sys.argv[2]
got = sorted(j["id"] for j in d["jobs"])
want = sorted(int(x) for x in sys.argv[3].split())
assert 1 <= len(want) < 30 and got == want, (got, want, [j.get("machine") for j in d["jobs"]])
' "$IT_TMP/read.json" "$code" "$on3"
code=$(lab_get "/api/v1/lab/history?job=lab-short")
check "GET /api/v1/lab/history without machine: 400 naming the field, never one series of three machines ($code: $(head -c 200 "$IT_TMP/read.json"))" \
	sh -c "[ '$code' = 400 ] && grep -q machine '$IT_TMP/read.json'"
n1=$(labsql "select count(*) from lab_nights n join machines m on m.id = n.machine where m.hostname = 'lab1' and n.job in ($in)")
code=$(lab_get "/api/v1/lab/history?job=lab-short&machine=lab1")
check "GET /api/v1/lab/history?machine=lab1: lab1's $n1 nights, and only its ($code)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert sys.argv[2] == "200", sys.argv[2]
assert d["machine"] == "lab1", d.get("machine")
assert d["nights"] == int(sys.argv[3]), (d["nights"], sys.argv[3])
' "$IT_TMP/read.json" "$code" "$n1"
code=$(lab_get "/api/v1/lab/regressions")
check "GET /api/v1/lab/regressions answers a list ($code)" python3 -c '
import json, sys
assert sys.argv[2] == "200", sys.argv[2]
assert isinstance(json.load(open(sys.argv[1]))["regressions"], list)
' "$IT_TMP/read.json" "$code"
code=$(lab_get "/lab.html")
check "the page lab.html is served ($code)" sh -c "[ '$code' = 200 ] && grep -q lab.js '$IT_TMP/read.json'"

# ---- a machine dies mid-job ----
lab_job "$IT_TMP/long.job" lab-long 4 "sleep 2"
local_of() { sql "$IT_TMP/m$1/state/kab.db" "select job_id from lab_claims where lab_job = $2 order by job_id desc limit 1"; }
runs_of() { sql "$IT_TMP/m$1/state/kab.db" "select count(*) from runs where job_id = ${2:-0} and status = 'ok'"; }

# restarted within its lease: it resumes its own job, one attempt
j=$("$KAB" submit --lab --on host=lab1 --socket "$IT_TMP/m1/kabd.sock" "$IT_TMP/long.job")
wait_for "lab1 to have finished a run of lab job $j" 60 '[ "$(runs_of 1 "$(local_of 1 '"$j"')")" -ge 2 ] 2>/dev/null'
kill -9 "${PIDS[1]}"
wait "${PIDS[1]}" 2>/dev/null
sleep 2
check "kabd of lab1 starts again after kill -9" start_machine 1
check "its job ends done" wait_for "lab job $j done" 120 "[ \"\$(labsql \"select state from lab_jobs where id = $j\")\" = done ]"
check "... in its first attempt, on lab1, never re-queued" [ "$(labsql "select count(*) from lab_attempts a join machines m on m.id = a.machine where a.job = $j and a.attempt = 1 and a.outcome = 'done' and m.hostname = 'lab1'")/$(labsql "select attempts from lab_jobs where id = $j")" = 1/1 ]
check "... with every run of its local job in PostgreSQL" [ "$(labsql "select count(*) from lab_runs where job = $j")" = "$(sql "$IT_TMP/m1/state/kab.db" "select count(*) from runs where job_id = $(local_of 1 "$j")")" ]

# not restarted: another machine runs it whole after the lease
j=$("$KAB" submit --lab --on tag=it --socket "$IT_TMP/m2/kabd.sock" "$IT_TMP/long.job")
wait_for "lab job $j to run" 60 "[ \"\$(labsql \"select state from lab_jobs where id = $j\")\" = running ]"
host=$(labsql "select m.hostname from lab_jobs j join machines m on m.id = j.machine where j.id = $j")
dead=${host#lab}
wait_for "$host to have finished a run of lab job $j" 60 '[ "$(runs_of '"$dead"' "$(local_of '"$dead"' '"$j"')")" -ge 2 ] 2>/dev/null'
kill -9 "${PIDS[$dead]}"
wait "${PIDS[$dead]}" 2>/dev/null
PIDS[$dead]=""
check "after $host's lease, another machine runs lab job $j whole" wait_for "lab job $j done in attempt 2" $((LEASE + 120)) \
	"[ \"\$(labsql \"select state || ' ' || attempts from lab_jobs where id = $j\")\" = 'done 2' ]"
check "attempt 1 ($host) is lost, attempt 2 (another machine) done" [ "$(labsql "select string_agg(a.outcome || ':' || (m.hostname = '$host')::text, ' ' order by a.attempt) from lab_attempts a join machines m on m.id = a.machine where a.job = $j")" = "lost:true done:false" ]
alive=$((dead % N + 1))
curl -s --unix-socket "$IT_TMP/m$alive/kabd.sock" "http://localhost/api/v1/lab/jobs/$j" >"$IT_TMP/job.json"
check "GET /api/v1/lab/jobs/$j says attempt 2 counted" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
sys.exit(not (j["counted_attempt"] == 2 and [a["outcome"] for a in j["attempts_list"]] == ["lost", "done"]))' "$IT_TMP/job.json"
check "kab lab job $j prints it" eval "$KAB lab job $j --format json --socket $IT_TMP/m$alive/kabd.sock | grep -q '\"counted_attempt\": 2'"
check "kab lab job $j's text says attempt 2 counted" eval "$KAB lab job $j --socket $IT_TMP/m$alive/kabd.sock | grep -qE '^2 +[^ ]+ +done .* counted( |\$)'"
# the dead machine comes back: its copy is cancelled, its runs go up as the lost attempt
check "kabd of $host starts again" start_machine "$dead"
stale=$(local_of "$dead" "$j")
check "$host cancels its stale copy of lab job $j" wait_for "local job $stale on $host cancelled" 60 \
	"[ \"\$(sql '$IT_TMP/m$dead/state/kab.db' 'select status from jobs where id = $stale')\" = cancelled ]"
check "... and uploads its runs under the lost attempt" wait_for "attempt 1's runs in PostgreSQL" 90 \
	"[ \"\$(labsql \"select count(*) from lab_runs where job = $j and attempt = 1\")\" = \"\$(sql '$IT_TMP/m$dead/state/kab.db' 'select count(*) from runs where job_id = $stale')\" ]"
check "attempt 2's runs stay apart (all from the machine that ran it)" [ "$(labsql "select count(distinct machine) from lab_runs where job = $j and attempt = 2")" = 1 ]

# ---- a selector no machine matches waits, and says why ----
j=$("$KAB" submit --lab --on "cpus>=4096" --socket "$IT_TMP/m2/kabd.sock" "$IT_TMP/short.job" 2>"$IT_TMP/why.err")
check "a job no machine matches is taken (lab job ${j:-none}) and the submit says it waits" grep -q "no machine" "$IT_TMP/why.err"
sleep $((HB * 2))
check "... it stays queued" [ "$(labsql "select state from lab_jobs where id = ${j:-0}")" = queued ]
check "... and GET /api/v1/lab/jobs/$j says why" eval "curl -s --unix-socket $IT_TMP/m2/kabd.sock http://localhost/api/v1/lab/jobs/$j | grep -q 'cpus>=4096: it has'"
check "/metrics shows the lab's queue and machines" eval "curl -s --unix-socket $IT_TMP/m2/kabd.sock http://localhost/metrics | grep -q '^kabd_lab_queue_length 1$'"

# ---- faults: the server stops for a minute, a machine's network is cut ----
# Both with leases longer than the fault (the three kabd restarted with
# [lab] lease = FAULT_LEASE), so that the outcome is one: each job done in
# its first attempt, on its machine. Times are the server's, so a lease
# renewed last just before the server stops has run out when it comes back
# PG_DOWN s later if it is shorter than that; what happens then depends on
# which machine reconnects first. A machine renews its own claims before it
# rescues anyone's (lab_member_heartbeat: renew_claims, then lab_rescue),
# and lab_renew takes a lease past its time that nobody has rescued yet; but
# another machine back first rescues it: the job re-queued whole (attempt 2,
# on any machine), the first machine's renew refused and its runs uploaded
# under the lost attempt, the kill -9 case above. A member reconnects with a
# backoff of 1, 2, 4 ... 30 s (LAB_MEMBER_BACKOFF_MAX_S), so up to ~30 s
# after the server's return plus a heartbeat; FAULT_LEASE leaves a minute
# more than that.
for i in $(seq 1 $N); do
	sed -i "s/^lease = .*/lease = $FAULT_LEASE/" "$IT_TMP/m$i/machine.conf"
	kill -TERM "${PIDS[$i]}" 2>/dev/null
	wait "${PIDS[$i]}" 2>/dev/null
	PIDS[$i]=""
	check "kabd of lab$i starts again with [lab] lease = $FAULT_LEASE" start_machine "$i"
done
check "... and the three join the lab with leases of $FAULT_LEASE s" wait_for -s "tail -n 3 $IT_TMP/m*/kabd.log" \
	"the three to join with leases of $FAULT_LEASE s" 30 \
	"[ \"\$(grep -l 'leases of $FAULT_LEASE s' $IT_TMP/m[1-$N]/kabd.log | wc -l)\" = $N ]"

lab_job "$IT_TMP/fault.job" lab-fault 5 "sleep 2"
# the local job of lab job J on machine I, 0 when it has none
local_or_0() { local l; l=$(local_of "$1" "${2:-0}" 2>/dev/null); echo "${l:-0}"; }
status_on() { sql "$IT_TMP/m$1/state/kab.db" "select status from jobs where id = $(local_or_0 "$1" "$2")"; }
outbox_of() { sql "$IT_TMP/m$1/state/kab.db" "select count(*) from lab_claims where state <> 'done'"; }
pgctl() { pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 "$@" >/dev/null; }

# uploaded_once J I: lab job J is in PostgreSQL as lab$I ran it, once:
# done in one attempt, on lab$I; as many runs as lab$I's local job has,
# each local run once (as many distinct local run ids), all under attempt
# 1; one state (done) and one night
uploaded_once() {
	local j=${1:-0} i=$2 l n got want
	l=$(local_or_0 "$i" "$j")
	n=$(sql "$IT_TMP/m$i/state/kab.db" "select count(*) from runs where job_id = $l")
	got=$(labsql "select j.state || ' ' || j.attempts
		|| ' ' || (select string_agg(a.outcome || '@' || m.hostname, ',' order by a.attempt)
			from lab_attempts a join machines m on m.id = a.machine where a.job = j.id)
		|| ' ' || (select count(*) from lab_runs r where r.job = j.id)
		|| ' ' || (select count(distinct r.data->>'local_run') from lab_runs r where r.job = j.id and r.attempt = 1)
		|| ' ' || (select count(*) from lab_job_states s where s.job = j.id and s.status = 'done')
		|| ' ' || (select count(*) from lab_nights n where n.job = j.id)
		from lab_jobs j where j.id = $j")
	want="done 1 done@lab$i $n $n 1 1"
	[ "${n:-0}" -gt 0 ] && [ "$got" = "$want" ] && return 0
	echo "    lab job $j (local job $l on lab$i, ${n:-no} runs there): state, attempts, outcome@machine, runs, distinct"
	echo "    local runs, states done, nights: '$got', expected '$want'"
	return 1
}

# -- the server stops for PG_DOWN s while a job runs on each machine --
fj=()      # fj[I]: the lab job of machine I
fin=""     # their ids, comma-separated
for i in $(seq 1 $N); do
	fj[$i]=$("$KAB" submit --lab --on "host=lab$i" --socket "$IT_TMP/m$i/kabd.sock" "$IT_TMP/fault.job" 2>>"$IT_TMP/submit.err")
	fin=$fin${fin:+,}${fj[$i]:-0}
done
check "a job of 10 runs of 2 s submitted for each machine (lab jobs $fin)" \
	[ "$(labsql "select count(*) from lab_jobs where id in ($fin)")" = "$N" ]
each_ran() { # every machine has finished a run of its job
	local i
	for i in $(seq 1 $N); do
		[ "$(runs_of "$i" "$(local_or_0 "$i" "${fj[$i]}")")" -ge 1 ] 2>/dev/null ||
			{ echo "lab$i: no run of lab job ${fj[$i]:-none} finished yet"; return 1; }
	done
}
check "each machine runs its job" wait_for "each machine to have finished a run of its job" 90 each_ran
check "the server stops mid-job (pg_ctl stop -m fast)" pgctl -m fast stop
t_stop=$SECONDS
st=$(for i in $(seq 1 $N); do status_on "$i" "${fj[$i]}"; done | tr '\n' ' ')
check "... while the three local jobs run ($st)" [ "$st" = "$(printf 'running %.0s' $(seq 1 $N))" ]
lab_down_each() {
	local i
	for i in $(seq 1 $N); do
		curl -s --max-time 5 --unix-socket "$IT_TMP/m$i/kabd.sock" http://localhost/metrics | grep -qx 'kabd_lab_up 0' ||
			{ echo "lab$i: /metrics has no 'kabd_lab_up 0'"; return 1; }
	done
}
check "each kabd's /metrics says kabd_lab_up 0" wait_for "kabd_lab_up 0 on each machine" 15 lab_down_each
done_each() {
	local i s
	for i in $(seq 1 $N); do
		s=$(status_on "$i" "${fj[$i]}")
		[ "$s" = "done" ] || { echo "lab$i: its local job is ${s:-missing}"; return 1; }
	done
}
check "the three jobs go on without the lab and end done on their machines" \
	wait_for "the three local jobs to end done while the server is stopped" $((PG_DOWN - 5)) done_each
waiting=$(for i in $(seq 1 $N); do outbox_of "$i"; done | awk '{s += $1} END {print s + 0}')
check "... their results wait in the machines' outboxes ($waiting claims not uploaded)" [ "$waiting" = "$N" ]
left=$((PG_DOWN - (SECONDS - t_stop)))
[ "$left" -gt 0 ] && sleep "$left"
check "the server starts again after $((SECONDS - t_stop)) s" pgctl start
t_back=$SECONDS
check "the uploads complete once it is back: the three lab jobs done" \
	wait_for -s "labsql \"select id, state, attempts, reason from lab_jobs where id in ($fin)\"; tail -n 5 $IT_TMP/m*/kabd.log" \
	"lab jobs $fin done" 120 "[ \"\$(labsql \"select count(*) from lab_jobs where id in ($fin) and state = 'done'\")\" = $N ]"
echo "    (done $((SECONDS - t_back)) s after the server's return)"
for i in $(seq 1 $N); do
	check "lab job ${fj[$i]:-none}: done in one attempt on lab$i, every run of its local job in PostgreSQL, none twice" \
		uploaded_once "${fj[$i]:-0}" "$i"
done
check "every machine's outbox empty" wait_for "the outboxes to empty" 10 \
	"[ \"\$(for i in \$(seq 1 $N); do outbox_of \$i; done | awk '{s += \$1} END {print s + 0}')\" = 0 ]"
pending_none() {
	local i
	for i in $(seq 1 $N); do
		curl -s --max-time 5 --unix-socket "$IT_TMP/m$i/kabd.sock" http://localhost/metrics |
			grep -qx 'kabd_lab_uploads_pending 0' || { echo "    lab$i: no 'kabd_lab_uploads_pending 0' in /metrics"; return 1; }
	done
}
check "... and each kabd's /metrics says kabd_lab_uploads_pending 0" pending_none
# one try each: the first lab read after the return, which a connection
# pooled before the stop (kab submit --lab above) would fail
reads_each() {
	local i c
	for i in $(seq 1 $N); do
		c=$(curl -s -o /dev/null -w '%{http_code}' --max-time 15 --unix-socket "$IT_TMP/m$i/kabd.sock" \
			"http://localhost/api/v1/lab/jobs/${fj[$i]:-0}")
		[ "$c" = 200 ] || { echo "    lab$i: GET /api/v1/lab/jobs/${fj[$i]:-0}: HTTP $c"; return 1; }
	done
}
check "each kabd's first lab read after the server's return answers" reads_each

# -- a machine's network is cut while its job runs --
# lab$N's link goes down while its job runs and stays down until the job
# has ended there, CUT_MIN s at least. A link that goes down closes no
# TCP connection: the member's statement waits (its packets retransmitted,
# backing off) and carries on when the link is back (or the member
# reconnects); either way the outbox goes up then. The cut lasts well under
# FAULT_LEASE; one longer than the lease has another machine rescue the job
# (re-queued whole) and lab$N's late renew refused, its runs uploaded under
# the lost attempt: the kill -9 case above.
if [ "$USE_NETNS" = 1 ]; then
	k=$N
	j=$("$KAB" submit --lab --on "host=lab$k" --socket "$IT_TMP/m$k/kabd.sock" "$IT_TMP/long.job" 2>>"$IT_TMP/submit.err")
	check "lab$k runs lab job ${j:-none}" wait_for "lab$k to have finished a run of lab job $j" 60 \
		'[ "$(runs_of '"$k"' "$(local_or_0 '"$k"' '"${j:-0}"')")" -ge 1 ] 2>/dev/null'
	CUT=$k
	t_cut=$SECONDS
	check "lab$k's link goes down (ip -n kablab$k link set eth0 down)" ip -n "kablab$k" link set eth0 down
	check "lab$k's job goes on without the network and ends done there" \
		wait_for "lab$k's local job $(local_or_0 $k "${j:-0}") to end done" 90 "[ \"\$(status_on $k ${j:-0})\" = done ]"
	check "... while the lab still has it running, none of its runs uploaded" \
		[ "$(labsql "select j.state || ' ' || (select count(*) from lab_runs r where r.job = j.id) from lab_jobs j where j.id = ${j:-0}")" = "running 0" ]
	j1=$("$KAB" submit --lab --on host=lab1 --socket "$IT_TMP/m1/kabd.sock" "$IT_TMP/short.job" 2>>"$IT_TMP/submit.err")
	check "the other machines go on meanwhile: lab1 runs lab job ${j1:-none}" wait_for "lab job $j1 done" 60 \
		"[ \"\$(labsql \"select state from lab_jobs where id = ${j1:-0}\")\" = done ]"
	[ $((SECONDS - t_cut)) -lt "$CUT_MIN" ] && sleep $((CUT_MIN - (SECONDS - t_cut)))
	check "lab$k's link comes back after $((SECONDS - t_cut)) s" ip -n "kablab$k" link set eth0 up
	CUT=""
	t_back=$SECONDS
	check "lab$k's uploads complete once its link is back: lab job $j done" \
		wait_for -s "labsql \"select state, attempts, reason from lab_jobs where id = ${j:-0}\"; tail -n 5 $IT_TMP/m$k/kabd.log" \
		"lab job $j done" 120 "[ \"\$(labsql \"select state from lab_jobs where id = ${j:-0}\")\" = done ]"
	echo "    (done $((SECONDS - t_back)) s after the link's return)"
	check "lab job ${j:-none}: done in one attempt on lab$k, every run of its local job in PostgreSQL, none twice" \
		uploaded_once "${j:-0}" "$k"
	check "lab$k's outbox empty" wait_for "lab$k's outbox to empty" 10 "[ \"\$(outbox_of $k)\" = 0 ]"
else
	IT_SKIP=$((IT_SKIP + 1))
	echo "  skip a machine's network cut: the machines share the host's network here (no network namespaces)"
fi

# ---- bad input: a fourth kabd, on the host, with a bad [lab] ----
# Each time it starts, says in its log why it is not in the lab (the URL,
# the credentials file, or both schema versions named), answers /health
# and says kabd_lab_up 0 in /metrics; with a lab that does not answer it
# runs a local job. It never joins: the lab keeps its three machines. It
# reaches the server on 127.0.0.1 (a local host: no TLS needed).
d4=$IT_TMP/m4
mkdir -p "$d4/state" && chmod 700 "$d4/state"
printf '%032x\n' $((0xa11ce000 + N + 1)) >"$d4/machine-id"
# m4_start URL CREDENTIALS: the fourth kabd with that [lab], until it answers /health
m4_start() {
	cat >"$d4/machine.conf" <<CONF
[lab]
url = $1
credentials = $2
heartbeat = $HB
lease = $LEASE
machine-id = $d4/machine-id
CONF
	: >"$d4/kabd.log"
	STATE_DIRECTORY=$d4/state KAB_MACHINE_CONF=$d4/machine.conf \
		"$KABD_BIN" --socket "$d4/kabd.sock" --db "$d4/state/kab.db" >>"$d4/kabd.log" 2>&1 8>&- &
	M4_PID=$!
	IT_PIDS+=("$M4_PID")
	wait_for -s "tail -n 20 '$d4/kabd.log'" "the fourth kabd to answer /health" 20 \
		"curl -sf --max-time 3 --unix-socket '$d4/kabd.sock' http://localhost/health >/dev/null"
}
m4_stop() {
	[ -n "$M4_PID" ] || return 0
	kill -TERM "$M4_PID" 2>/dev/null
	wait_for "the fourth kabd to exit on SIGTERM" 15 pid_gone "$M4_PID" || kill -KILL "$M4_PID" 2>/dev/null
	wait "$M4_PID" 2>/dev/null
	M4_PID=""
}
m4_says() { # TEXT [E]: its log has TEXT (a fixed string; with E, an extended regex), within 20 s
	wait_for -s "echo 'its log ends:'; tail -n 5 '$d4/kabd.log'" "the fourth kabd to log: $1" 20 \
		grep -q"${2:-F}" -- "$1" "$d4/kabd.log"
}
m4_lab_down() { curl -s --max-time 5 --unix-socket "$d4/kabd.sock" http://localhost/metrics | grep -qx 'kabd_lab_up 0'; }
(umask 077; echo "127.0.0.1:*:*:$PG_USER:$PG_PASSWORD" >"$d4/good.pgpass"
	echo "127.0.0.1:*:*:$PG_USER:not-$PG_PASSWORD" >"$d4/wrong.pgpass"
	cp "$d4/good.pgpass" "$d4/open.pgpass")
chmod 644 "$d4/open.pgpass"
url_ok="postgresql://$PG_USER@127.0.0.1:$PG_PORT/$PG_DB"

port0=$(pg_free_port)
url0="postgresql://$PG_USER@127.0.0.1:$port0/$PG_DB"
check "a fourth kabd starts with a lab URL that does not answer (port $port0)" m4_start "$url0" "$d4/good.pgpass"
check "... says so, naming the URL, and that it serves local work meanwhile" \
	m4_says "lab: cannot join $url0: .*kabd serves local work meanwhile" E
check "... /metrics says kabd_lab_up 0" m4_lab_down
lj=$("$KAB" submit --socket "$d4/kabd.sock" "$IT_TMP/short.job" 2>>"$IT_TMP/submit.err")
check "... and it runs a local job (${lj:-none}) to its end" wait_for -s "tail -n 5 '$d4/kabd.log'" "local job $lj done" 120 \
	"[ \"\$(sql '$d4/state/kab.db' 'select status from jobs where id = ${lj:-0}')\" = done ]"
m4_stop

check "a fourth kabd starts with a wrong password in its credentials" m4_start "$url_ok" "$d4/wrong.pgpass"
check "... says the server refused it" m4_says "lab: cannot join $url_ok: .*password authentication failed for user \"$PG_USER\"" E
check "... naming the credentials file, not the descriptor kab gave libpq" m4_says "password retrieved from file \"$d4/wrong.pgpass\""
check "... /metrics says kabd_lab_up 0" m4_lab_down
m4_stop

check "a fourth kabd starts with a credentials file others can read" m4_start "$url_ok" "$d4/open.pgpass"
check "... refuses it, naming it and its mode" m4_says "$d4/open.pgpass: the lab's credentials file has mode 0644"
check "... /metrics says kabd_lab_up 0" m4_lab_down
m4_stop

mkdir -p "$d4/gw" && chmod 770 "$d4/gw" && cp -p "$d4/good.pgpass" "$d4/gw/lab.pgpass"
check "a fourth kabd starts with a credentials file in a directory its group may write" m4_start "$url_ok" "$d4/gw/lab.pgpass"
check "... refuses it, naming the directory, its mode and owner" \
	m4_says "$d4/gw/lab.pgpass: the lab's credentials file is under the directory $d4/gw, which has mode 0770 and owner uid 0"
check "... and the chmod that fixes it" m4_says "(chmod go-w $d4/gw)"
check "... /metrics says kabd_lab_up 0" m4_lab_down
m4_stop

future_lab() { # a database whose lab schema is version 999
	pg_psql -c "CREATE DATABASE kablab_future OWNER $PG_USER" &&
		"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR" -p "$PG_PORT" -U "$PG_USER" -d kablab_future \
			-c "CREATE TABLE lab_schema (one boolean PRIMARY KEY CHECK (one), version integer NOT NULL,
				kab_version text NOT NULL, updated timestamptz NOT NULL DEFAULT now())" \
			-c "INSERT INTO lab_schema (one, version, kab_version) VALUES (true, 999, 'a kab from the future')"
}
check "a lab database with schema version 999 made" future_lab
url_new="postgresql://$PG_USER@127.0.0.1:$PG_PORT/kablab_future"
check "a fourth kabd starts with that lab" m4_start "$url_new" "$d4/good.pgpass"
check "... refuses it, naming both versions" m4_says "lab: cannot join $url_new: .*schema version 999, newer than this kab's [0-9]+" E
check "... /metrics says kabd_lab_up 0" m4_lab_down
m4_stop
check "the fourth kabd never joined: the lab has its $N machines" [ "$(labsql "select count(*) from machines")" = "$N" ]

for i in $(seq 1 $N); do
	[ -n "${PIDS[$i]}" ] && { kill -TERM "${PIDS[$i]}"; wait "${PIDS[$i]}" 2>/dev/null; PIDS[$i]=""; }
done
check "the machines say offline when kabd stops" [ "$(labsql "select count(*) from machines where state = 'offline'")" = 3 ]
lab_cleanup
trap it_cleanup EXIT
it_end
