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

labsql() { "$PG_BIN/psql" -X -q -At -h "$PG_DIR" -p "$PG_PORT" -U "$PG_ADMIN" -d "$PG_DB" -c "$1"; }

lab_cleanup() {
	local i d
	for i in $(seq 1 $N); do
		[ -n "${PIDS[$i]:-}" ] && kill -9 "${PIDS[$i]}" 2>/dev/null
	done
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
	LAB_URL="postgresql://$PG_USER@$PG_HOST:$PG_PORT/$PG_DB?sslmode=verify-full&sslrootcert=$tls/ca.pem"
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
check "kab lab machines lists the three" eval "$KAB lab machines --socket $IT_TMP/m1/kabd.sock | grep -o '\"hostname\": \"lab[123]\"' | sort -u | wc -l | grep -qx 3"

# ---- 30 short jobs ----
cat >"$IT_TMP/short.job" <<'JOB'
[job]
name = lab-short
pairs = 2
order = abba
[swap]
device = none
[variant A]
name = a
[variant B]
name = b
[workload w]
type = command
command = true
memory.max = 64M
JOB
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

# ---- a machine dies mid-job ----
cat >"$IT_TMP/long.job" <<'JOB'
[job]
name = lab-long
pairs = 4
order = abba
[swap]
device = none
[variant A]
name = a
[variant B]
name = b
[workload w]
type = command
command = sleep 2
memory.max = 64M
JOB
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
check "kab lab job $j prints it" eval "$KAB lab job $j --socket $IT_TMP/m$alive/kabd.sock | grep -q '\"counted_attempt\": 2'"
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

for i in $(seq 1 $N); do
	[ -n "${PIDS[$i]}" ] && { kill -TERM "${PIDS[$i]}"; wait "${PIDS[$i]}" 2>/dev/null; PIDS[$i]=""; }
done
check "the machines say offline when kabd stops" [ "$(labsql "select count(*) from machines where state = 'offline'")" = 3 ]
lab_cleanup
trap it_cleanup EXIT
it_end
